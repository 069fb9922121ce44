/*  test_round49.c - what round 49 of the model in the loop (issue 15,
 *  docs/search.md "Forty-ninth round, a check") found:
 *
 *  1. no erf_lerp kernel's block had an Accuracy line: its evaluation's
 *     relative error was infinite (a reference exactly 0), written as
 *     1e308, which jsonb stores as a 309-digit integer that no C integer
 *     holds, so the whole correctness object failed to parse
 *     (kf_db_json_parse), and the line says an infinite error in words;
 *  2. every linear_rowcenter kernel took a row's mean as one more dot
 *     product (x_i . mean of W's rows + the bias's mean), which the
 *     fusion idea did not name (kf_prompt_epilogue_idea);
 *  3. "threads look to have bought about 3%" after "its threads hardly
 *     ran side by side ... not measured" (kf_prompt_thread_cost).
 *
 *  The other round-49 fixes are checked where their texts were before:
 *  test_plan_round15 (a best of generation 0 "leads by rank"),
 *  test_figures_round15 and test_plan_round11 ("a gap of two kernels"),
 *  test_round48 (the output's spread over several exported sets).
 */
#include "../../coordinator/kf_db.h"
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_epilogue.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_threads.h"
#include "../../common/kf_json.h"
#include "../kf_test.h"
#include "../kf_test_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void
test_huge_number (void)
{
    //  1e308 as PostgreSQL's jsonb writes it back.
    char text[512];
    int n = snprintf (text, sizeof text, "{\"sets\": 5, \"max_abs_err\": 2.8e-05, "
                      "\"max_rel_err\": 1");
    for (int i = 0; i < 308; i++)
        text[n++] = '0';
    snprintf (text + n, sizeof text - (size_t) n, ", \"match_fraction\": 0.999996}");
    json_t *c = kf_db_json_parse (text);
    CHECK (json_is_object (c));
    CHECK (kf_jnum (c, "max_rel_err", 0) > 1e307);
    CHECK (json_is_integer (json_object_get (c, "sets")) && kf_jint (c, "sets") == 5);
    json_decref (c);
    //  Ordinary values keep their kinds; what is no JSON is null.
    c = kf_db_json_parse ("{\"id\": 9007199254740993}");
    CHECK (json_is_integer (json_object_get (c, "id")));
    json_decref (c);
    //  A long digit run in a string stays text; a negative huge one a
    //  real.
    c = kf_db_json_parse ("{\"h\": \"12345678901234567890123\", \"x\": "
                          "-12345678901234567890123, \"e\": 1.5e-300}");
    CHECK (!strcmp (kf_jstr (c, "h"), "12345678901234567890123"));
    CHECK (kf_jnum (c, "x", 0) < -1.2e22 && kf_jnum (c, "e", 1) == 1.5e-300);
    json_decref (c);
    c = kf_db_json_parse ("{\"id\": ");
    CHECK (json_is_null (c));
    json_decref (c);
}

static json_t *
s_spec (void)
{
    return json_pack ("{s:s, s:[{s:s, s:[i], s:s}], s:[{s:s, s:[i], s:s}], s:{s:s, s:s},"
                      " s:{s:f, s:f}}", "name", "ew", "inputs", "name", "in0", "shape", 1 << 20,
                      "dtype", "f32", "outputs", "name", "out0", "shape", 1 << 20, "dtype",
                      "f32", "reference", "language", "pytorch", "source",
                      "    def forward(self, a):\n        return torch.erf(a) + a\n",
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

static void
test_infinite_rel (void)
{
    json_t *spec = s_spec ();
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f, s:{s:i, s:f, s:f, s:f, s:f}}", "id", 1,
                              "source", "int kf_forward (void) { return 0; }", "status",
                              "correct", "speedup", 30.0, "correctness", "sets", 5,
                              "match_fraction", 0.999996, "max_abs_err", 2.8e-5, "max_rel_err",
                              1e308, "cosine", 0.999999);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .best = base, .generation = 1, .slot = 0, .population = 3 };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "max rel error infinite (the reference is exactly 0 where this output "
                           "is not: those elements pass on the absolute limit);"));
    CHECK (p && !strstr (p, "1e+308"));
    free (p);
    json_decref (base);
    json_decref (spec);
}

static json_t *
s_product (const char *forward)
{
    return json_pack ("{s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}", "name", "p",
                      "inputs", "name", "in0", "shape", 1536, 384, "dtype", "f32", "name",
                      "weight", "shape", 2048, 384, "dtype", "f32", "outputs", "name", "out0",
                      "shape", 1536, 2048, "dtype", "f32", "reference", "language", "pytorch",
                      "source", forward, "tolerance", "rtol", 0.01, "atol", 1e-5);
}

static void
test_mean_identity (void)
{
    json_t *spec = s_product ("    def forward(self, x):\n"
                              "        z = F.linear(x, self.weight)\n"
                              "        return z - z.mean(dim=1, keepdim=True)\n");
    char *idea = kf_prompt_epilogue_idea (spec);
    printf ("%s\n", idea ? idea : "(none)");
    CHECK (kf_test_has (idea, "a row's mean of the product is linear in it, the first operand's "
                              "row dotted with the mean of the 2048 vectors of the second "
                              "operand that make the output's columns"));
    free (idea);
    json_decref (spec);
    //  A mean of squares (an RMS norm) is no linear mean.
    spec = s_product ("    def forward(self, x):\n"
                      "        y = F.linear(x, self.weight)\n"
                      "        return y * torch.rsqrt(y.pow(2).mean(dim=-1, keepdim=True) + 1e-6)\n");
    idea = kf_prompt_epilogue_idea (spec);
    CHECK (idea && !kf_test_has (idea, "is linear in it"));
    free (idea);
    json_decref (spec);
}

//  test_round22_open's loaded threaded kernel (candidate 9, its one-thread
//  twin candidate 3), its threads now hardly side by side.
static void
test_apart_no_gain (void)
{
    json_t *spec = json_pack ("{s:s, s:[{s:s, s:[i, i], s:s}, {s:s, s:[i, i], s:s}],"
                              " s:[{s:s, s:[i, i], s:s}], s:{s:f, s:f}}", "name", "t", "inputs",
                              "name", "in0", "shape", 2048, 4096, "dtype", "f32", "name", "in1",
                              "shape", 2048, 4096, "dtype", "f32", "outputs", "name", "out0",
                              "shape", 2048, 4096, "dtype", "f32", "tolerance", "rtol", 0.01,
                              "atol", 1e-5);
    json_t *hw = json_pack ("{s:s, s:[{s:s, s:i, s:i, s:f, s:f, s:f, s:f, s:s}]}", "backend",
                            "host", "devices", "name", "AMD EPYC", "cores", 2, "physical_cores",
                            2, "clock_mhz_measured", 3243.0, "read_cold_one_core_gbs", 20.0,
                            "read_cold_all_cores_gbs", 39.4, "thread_start_join_us", 25.3, "isa",
                            "sse4.2 avx2");
    json_t *busy = json_pack ("{s:i, s:i, s:f, s:f, s:f}", "cpus", 2, "cpus_allowed", 2,
                              "runnable_others", 1.2, "others_cpu_share", 0.6, "wall_s", 2.0);
    const char *threaded = "#include <pthread.h>\n#define NTHREADS 2\n"
                           "static void *work (void *a) { return a; }\n"
                           "int kf_forward (void) { pthread_t t; pthread_create (&t, 0, work, 0);"
                           " pthread_join (t, 0); return 0; }\n";
    json_t *history = json_pack ("[{s:i, s:s, s:s, s:f, s:i, s:O},"
                                 " {s:i, s:s, s:s, s:f, s:i}]",
                                 "id", 9, "status", "correct", "fidelity", "full",
                                 "candidate_ns", 6.5e6, "features",
                                 (int) (1u << KF_IDEA_THREADS), "host_load", busy,
                                 "id", 3, "status", "correct", "fidelity", "full",
                                 "candidate_ns", 6.7e6, "features", 0);
    json_t *base = json_pack ("{s:i, s:i, s:s, s:s, s:f, s:f, s:O, s:{s:f, s:f}}", "id", 9,
                              "parent_id", 3, "source", threaded, "status", "correct",
                              "candidate_ns", 6.5e6, "speedup", 34.5, "host_load", busy,
                              "one_core", "median_ns", 7.0e6, "cpu_per_wall", 0.89);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .hardware = hw,
                          .base = base, .history = history };
    char *text;
    KF_TEST_CAPTURE (text, f, kf_prompt_thread_cost (f, &in, NULL));
    printf ("%s\n", text ? text : "(none)");
    CHECK (kf_test_has (text, "its threads hardly ran side by side there"));
    CHECK (text && !strstr (text, "threads look to have bought"));
    CHECK (text && !strstr (text, "Its full time instead"));
    free (text);
    //  Threads that ran side by side: the like-design comparison follows.
    json_object_set_new (json_object_get (base, "one_core"), "cpu_per_wall", json_real (1.8));
    KF_TEST_CAPTURE (text, f, kf_prompt_thread_cost (f, &in, NULL));
    CHECK (kf_test_has (text, "Its full time instead"));
    free (text);
    json_decref (base);
    json_decref (history);
    json_decref (busy);
    json_decref (hw);
    json_decref (spec);
}

int
main (void)
{
    test_huge_number ();
    test_infinite_rel ();
    test_mean_identity ();
    test_apart_no_gain ();
    return kf_test_done ("test_round49");
}
