/*  test_prompt_round16.c - what round 16 of the model in the loop (issue
 *  15, docs/search.md "Sixteenth round") found in the task's facts:
 *
 *  1. "What counts as correct" said an approximation "with relative error
 *     well below 0.001 is fine", which the model read as its whole budget;
 *     with an absolute bound of 1e-5 every output below 1e-3 in size passes
 *     at an error up to 1e-5, and the prompt now says where the two tests
 *     cross.
 */
#include "../../coordinator/kf_prompt_facts.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

static char *
s_section (json_t *spec)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    kf_prompt_tolerance_section (f, spec, NULL);
    fclose (f);
    return text;
}

static void
test_crossover (void)
{
    json_t *spec = json_pack ("{s:s, s:[{s:s, s:[i, i], s:s}], s:{s:f, s:f}}", "name", "t",
                              "outputs", "name", "y", "shape", 4096, 2048, "dtype", "f32",
                              "tolerance", "rtol", 0.01, "atol", 1e-5);
    char *p = s_section (spec);
    CHECK (kf_test_has (p, "or its absolute error is at most 1e-05 (f32) (either test "
                           "suffices: where |want| is below 0.001, the absolute bound is the "
                           "looser, so an error up to 1e-05 passes there whatever the relative "
                           "error)."));
    free (p);
    //  Two output dtypes have two bounds: no single crossing is said.
    json_array_append_new (json_object_get (spec, "outputs"),
                           json_pack ("{s:s, s:[i], s:s}", "name", "z", "shape", 8, "dtype",
                                      "f16"));
    p = s_section (spec);
    CHECK (!kf_test_has (p, "either test suffices"));
    free (p);
    json_decref (spec);
}

int
main (void)
{
    test_crossover ();
    return kf_test_done ("test_prompt_round16");
}
