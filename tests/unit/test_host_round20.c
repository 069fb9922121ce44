/*  test_host_round20.c - what round 20 of the model in the loop (issue
 *  15, docs/search.md "Twentieth round") found missing from the host's
 *  figures in the Target section, given here from fixed figures (the
 *  probe's side is test_host_vec.c's and test_host_caps.c's):
 *
 *  1. no per-unit cost model: nothing said which vector instructions
 *     compete with the FMAs for their execution units
 *     (kf_prompt_host_units_line, from each instruction's mix with two
 *     FMAs against the FMAs alone);
 *  2. no cold streaming-store write rate: the memory figures had cold
 *     reads and copies only, and the floors counted a kernel's writes at
 *     the read rate, an estimate (kf_prompt_host_reads,
 *     kf_prompt_cold_ms: now the reads at the read rate and the writes
 *     at the write rate, the two times added).
 */
#include "../../coordinator/kf_prompt_budget.h"
#include "../../coordinator/kf_prompt_core.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../kf_test.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *
s_target (json_t *hw)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    kf_prompt_target_section (f, "host", "c", hw, NULL);
    fclose (f);
    return text;
}

//  An elementwise task over 4096 x 4096 floats: N = M = 64 MiB.
static json_t *
s_task (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}], s:[{s:s, s:[i,i], s:s}],"
                      " s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "gelu_erf", "op", "gelu_erf", "description", "a task", "inputs",
                      "name", "x", "shape", 4096, 4096, "dtype", "f32", "outputs", "name", "out0",
                      "shape", 4096, 4096, "dtype", "f32", "reference", "language", "pytorch",
                      "source",
                      "class Model(nn.Module):\n    def forward(self, x):\n"
                      "        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))\n",
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

//  This 2-CPU VM's figures (AMD family 25, AVX2), as its worker reports
//  them, with the instructions' mixes and the streaming writes.
static json_t *
s_hw (void)
{
    json_t *hw = json_pack (
        "{s:s, s:s, s:[{s:s, s:i, s:f, s:s, s:f, s:f, s:f, s:f, s:f, s:I, s:f, s:i, s:i,"
        " s:i, s:s, s:f, s:I, s:f, s:I, s:i, s:f, s:f, s:f, s:f}]}",
        "backend", "host", "arch", "x86_64", "devices", "name", "AMD EPYC", "cores", 2,
        "peak_gflops", 200.0, "peak_source", "avx2+fma", "peak_gflops_one_core", 103.0,
        "thread_start_join_us", 60.0, "copy_one_core_gbs", 18.7, "copy_one_core_traffic_gbs",
        28.1, "copy_stream_one_core_gbs", 21.2, "copy_one_core_bytes", (json_int_t) 33554432,
        "clock_mhz_measured", 3240.0, "logical_cpus", 2, "physical_cores", 2,
        "threads_per_core", 1, "isa", "sse4.2 avx avx2 fma", "read_cold_one_core_gbs", 16.7,
        "read_cold_one_core_bytes", (json_int_t) 33554432, "read_cold_all_cores_gbs", 35.5,
        "read_cold_all_cores_bytes", (json_int_t) 33554432, "vec_lanes", 8, "vec_fma_cycles",
        0.5, "vec_fma_latency_cycles", 4.0, "vec_div_cycles", 3.5, "vec_sqrt_cycles", 5.0);
    json_t *d = json_array_get (json_object_get (hw, "devices"), 0);
    //  Alone and with two FMAs: four beside, one partly, two sharing.
    static const struct {
        const char *op;
        double alone, mix;
    } xs[] = { { "perm", 1.34, 2.0 }, { "shuf", 0.5, 1.17 }, { "blend", 0.5, 1.5 },
               { "and", 0.25, 1.08 }, { "cmp", 0.5, 1.08 }, { "cvt", 0.5, 1.08 },
               { "iadd", 0.25, 1.07 } };
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        char key[64];
        snprintf (key, sizeof key, "vec_%s_cycles", xs[i].op);
        json_object_set_new (d, key, json_real (xs[i].alone));
        snprintf (key, sizeof key, "vec_%s_with_fma_cycles", xs[i].op);
        json_object_set_new (d, key, json_real (xs[i].mix));
    }
    json_object_set_new (d, "write_stream_one_core_gbs", json_real (21.3));
    json_object_set_new (d, "write_stream_one_core_bytes", json_integer (33554432));
    json_object_set_new (d, "write_stream_all_cores_gbs", json_real (40.3));
    json_object_set_new (d, "write_stream_all_cores_bytes", json_integer (33554432));
    return hw;
}

static json_t *
s_dev (json_t *hw)
{
    return json_array_get (json_object_get (hw, "devices"), 0);
}

//  1. Which instructions share the FMAs' units.
static void
s_units (void)
{
    json_t *hw = s_hw ();
    char *p = s_target (hw);
    if (getenv ("KF_TEST_SHOW"))
        fputs (p ? p : "", stdout);
    CHECK (kf_test_has (p, "  Other vector instructions beside FMAs, measured at start by the "
                           "exec worker: two independent FMAs and one of these in turn, many "
                           "such groups in flight, in cycles per group against 1.00 for the two "
                           "FMAs alone (in brackets each instruction's own cycles alone and, "
                           "where it takes time on the FMAs' units, the FMAs' time it adds); "));
    //  Near the FMAs' own 1.00: beside them.
    CHECK (kf_test_has (p, "; beside the FMAs: vandps 1.08 (0.25), vpaddd 1.07 (0.25), vcmpps "
                           "1.08 (0.50), vcvtps2dq 1.08 (0.50); "));
    //  A third of an FMA's time more: partly (since round 21 with that
    //  third, for the rule of thumb's sum).
    CHECK (kf_test_has (p, "; partly on the FMAs' units: vshufps 1.17 (0.50; 0.3 FMA); "));
    //  An FMA's time more, or more than that past vpermps' own 1.34:
    //  each costs its FMAs.
    CHECK (kf_test_has (p, "; on the FMAs' units: vblendvps 1.50 (0.50; 1.0 FMA), vpermps 2.00 "
                           "(1.3; 2.0 FMAs). "));
    free (p);
    //  AVX-512's names; an instruction on one of the FMAs' two pipes (1
    //  a cycle alone, as Intel's 512-bit shuffles on port 5): the FMAs'
    //  1.00 and its own 1.00 would make a one-to-one mix 1.00 either way,
    //  two FMAs to one take 1.50.
    json_object_set_new (s_dev (hw), "vec_lanes", json_integer (16));
    json_object_set_new (s_dev (hw), "vec_perm_cycles", json_real (1.0));
    json_object_set_new (s_dev (hw), "vec_perm_with_fma_cycles", json_real (1.5));
    json_object_set_new (s_dev (hw), "vec_cmp_cycles", json_real (1.0));
    json_object_set_new (s_dev (hw), "vec_cmp_with_fma_cycles", json_real (1.52));
    json_object_set_new (s_dev (hw), "vec_blend_with_fma_cycles", json_real (1.02));
    p = s_target (hw);
    CHECK (kf_test_has (p, "; beside the FMAs: vpandd 1.08 (0.25), vpaddd 1.07 (0.25), vcvtps2dq "
                           "1.08 (0.50), vblendmps 1.02 (0.50); "));
    CHECK (kf_test_has (p, "; on the FMAs' units: vcmpps into a mask register 1.52 (1.0; 1.0 "
                           "FMA), vpermps 1.50 (1.0; 1.0 FMA). "));
    CHECK (p && !strstr (p, "vandps") && !strstr (p, "vblendvps"));
    free (p);
    //  None partly: no such group.
    json_object_set_new (s_dev (hw), "vec_shuf_with_fma_cycles", json_real (1.0));
    p = s_target (hw);
    CHECK (p && !strstr (p, "partly on the FMAs' units"));
    free (p);
    //  Without the mixes, or without the FMA's own figure: no line.
    static const char *const ops[] = { "perm", "shuf", "blend", "and", "cmp", "cvt", "iadd" };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        char key[64];
        snprintf (key, sizeof key, "vec_%s_with_fma_cycles", ops[i]);
        json_object_del (s_dev (hw), key);
    }
    p = s_target (hw);
    CHECK (p && !strstr (p, "Other vector instructions beside FMAs"));
    free (p);
    json_decref (hw);
    hw = s_hw ();
    json_object_del (s_dev (hw), "vec_fma_cycles");
    p = s_target (hw);
    CHECK (p && !strstr (p, "Other vector instructions beside FMAs"));
    free (p);
    json_decref (hw);
}

//  2. The streaming-store write rates, and the floors' writes at them.
static void
s_writes (void)
{
    json_t *hw = s_hw (), *task = s_task ();
    json_object_set (hw, "task", task);
    char *p = s_target (hw);
    if (getenv ("KF_TEST_SHOW"))
        fputs (p ? p : "", stdout);
    CHECK (kf_test_has (p, "  Memory written with streaming (non-temporal) stores alone, nothing "
                           "read, into lines no cache holds: 21.3 GB/s by one core (one thread "
                           "writing 32.0 MiB, flushed from the caches first, the best of three), "
                           "40.3 GB/s by all cores at once (each thread writing its share of 32.0 "
                           "MiB, let go together, as the read above); bytes written: the rate a "
                           "kernel's outputs leave at with streaming stores.\n"));
    //  N read at the read rate, M written at the write rate, the two
    //  times added on one core, the longer of them on all cores (round
    //  50); ordinary stores' line reads are reads.
    double n = 4096.0 * 4096 * 4, m = n;
    char want[800];
    snprintf (want, sizeof want, "; with the writes at the streaming-store write rate (21.3 GB/s "
              "on one core, 40.3 GB/s on all cores) and the reads' and the writes' times added "
              "on one core (its line buffers carry both) but overlapping on all cores (the "
              "longer of the two), N + M, the cold "
              "estimate with streaming stores, takes about %.3g ms on one core and %.3g ms on all cores, "
              "and N + 2M = 192.0 MiB, the cold estimate with ordinary stores (each reads its line "
              "first), about %.3g ms on one core and %.3g ms on all cores.",
              n / 16.7e6 + m / 21.3e6, fmax (n / 35.5e6, m / 40.3e6),
              (n + m) / 16.7e6 + m / 21.3e6, fmax ((n + m) / 35.5e6, m / 40.3e6));
    CHECK (kf_test_has (p, want));
    CHECK (p && !strstr (p, "no write rate was measured"));
    CHECK (fabs (kf_prompt_cold_ms (n, m, s_dev (hw), false) - (n / 16.7e6 + m / 21.3e6))
           < 1e-9);
    CHECK (kf_test_has (p, "the cold estimates count bytes alone, the writes at the streaming-store "
                           "write rate, while"));
    CHECK (kf_test_has (p, "at the cold read rates above (the writes at the streaming-store write "
                           "rate) take about"));
    CHECK (kf_test_has (p, "over the measured cold read and write rates give the time memory "
                           "needs"));
    snprintf (want, sizeof want, "against %.3g ms for its memory traffic at one core's cold read "
              "rate and streaming-store write rate: ", n / 16.7e6 + m / 21.3e6);
    CHECK (kf_test_has (p, want));
    free (p);
    //  Without the write rates: the read rate, said to be an estimate, as
    //  before.
    json_object_del (s_dev (hw), "write_stream_one_core_gbs");
    json_object_del (s_dev (hw), "write_stream_all_cores_gbs");
    p = s_target (hw);
    CHECK (p && !strstr (p, "Memory written with streaming"));
    CHECK (kf_test_has (p, "with the writes at that rate too (an estimate: no write rate was "
                           "measured cold)"));
    CHECK (fabs (kf_prompt_cold_ms (n, m, s_dev (hw), false) - (n + m) / 16.7e6) < 1e-9);
    free (p);
    json_decref (task);
    json_decref (hw);
}

int
main (void)
{
    s_units ();
    s_writes ();
    return kf_test_done ("test_host_round20");
}
