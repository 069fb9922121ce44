/*  test_round23.c - what round 23 of the model in the loop (issue 15,
 *  docs/search.md "Twenty-third round") found:
 *
 *  1. an exec worker started while other work ran measured every core's
 *     cold read at 22 GB/s (39 on a quiet host) and a copy of 15.5 GB/s;
 *     the Target section gave them as the host's figures, unmarked (the
 *     ceilings' margin is test_plausible's).
 */
#include "../../coordinator/kf_prompt.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

static json_t *
s_spec (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i, i], s:s}, {s:s, s:[i, i], s:s}],"
                      " s:[{s:s, s:[i, i], s:s}], s:{s:f, s:f}}",
                      "name", "silu_sqrt_add", "op", "silu_sqrt_add", "description",
                      "a * sigmoid(a) + sqrt(|b| + 1)", "inputs", "name", "in0", "shape", 2048,
                      4096, "dtype", "f32", "name", "in1", "shape", 2048, 4096, "dtype", "f32",
                      "outputs", "name", "out0", "shape", 2048, 4096, "dtype", "f32",
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

static json_t *
s_host (bool busy)
{
    json_t *hw = json_pack ("{s:s, s:[{s:s, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:s, s:s}]}",
                            "backend", "host", "devices", "name", "AMD EPYC", "cores", 2,
                            "physical_cores", 2, "clock_mhz_measured", 3243.0,
                            "read_cold_one_core_gbs", 17.0, "read_cold_all_cores_gbs", 22.2,
                            "peak_gflops_one_core", 98.0, "peak_gflops_all_threads", 190.0,
                            "isa", "sse4.2 avx2", "peak_source", "avx2+fma");
    if (busy)
        json_object_set_new (json_array_get (json_object_get (hw, "devices"), 0),
                             "figures_measured_busy", json_true ());
    return hw;
}

static void
test_busy_figures (void)
{
    json_t *spec = s_spec ();
    for (int busy = 0; busy < 2; busy++) {
        json_t *hw = s_host (busy);
        kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .hardware = hw,
                              .generation = 0, .slot = 0, .population = 3 };
        char *p = kf_prompt_build (&in);
        bool said = p && strstr (p, "The exec worker measured the figures below at its start "
                                    "while other work ran on the host, so they may read low");
        CHECK (said == (busy == 1));
        free (p);
        json_decref (hw);
    }
    json_decref (spec);
}

int
main (void)
{
    test_busy_figures ();
    return kf_test_done ("test_round23");
}
