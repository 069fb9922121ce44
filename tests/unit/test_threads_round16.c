/*  test_threads_round16.c - what round 16 of the model in the loop
 *  (/work/notes/round16-notes.md, docs/search.md "Sixteenth round") found
 *  missing where a threaded kernel's figures are given: threads bought 4%
 *  (1.96 against 2.05 ms for the same design on one thread) where the
 *  Target section measured 1.8 times one core's rate on both, and nothing
 *  said whether the timed kernel had the second CPU to itself.
 *
 *  The exec worker records with each timing the CPU time other processes
 *  took and the CPUs the candidate could use ("host_load": others_cpu_s,
 *  wall_s, cpus_allowed); the threads paragraph and the tuning prompt
 *  say both for the threaded kernel and its one-thread form, and nothing
 *  where no load was recorded (a host without /proc/stat).
 */
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../../coordinator/kf_prompt_threads.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

static json_t *
s_spec (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}], s:[{s:s, s:[i,i], s:s}],"
                      " s:{s:s, s:s}}", "name", "gauss", "op", "gauss", "description", "a task",
                      "inputs", "name", "in0", "shape", 4096, 2048, "dtype", "f32", "outputs",
                      "name", "out0", "shape", 4096, 2048, "dtype", "f32", "reference",
                      "language", "pytorch", "source",
                      "class Model(nn.Module):\n    def forward(self, x):\n"
                      "        return torch.exp(-x * x / 2)\n");
}

static json_t *
s_host (void)
{
    return json_pack ("{s:s, s:s, s:[{s:s, s:i, s:i, s:f, s:f, s:f}]}", "worker", "e1",
                      "backend", "host", "devices", "name", "AMD EPYC", "cores", 2,
                      "physical_cores", 2, "peak_gflops_one_core", 228.0, "peak_gflops", 400.0,
                      "thread_start_join_us", 25.2);
}

static const char *s_threaded_src =
    "#include <pthread.h>\n#define NTHREADS 2\n"
    "static void *work (void *a) { return a; }\n"
    "int kf_forward (void) { pthread_t t; pthread_create (&t, 0, work, 0);\n"
    "    pthread_join (t, 0); return 0; }\n";

//  Candidate 6 starts threads (1.96 ms); candidate 4 is its design on one
//  thread (2.05 ms); both timed in full, each with the load recorded.
static json_t *
s_history (void)
{
    unsigned th = 1u << KF_IDEA_THREADS;
    return json_pack ("[{s:i, s:s, s:s, s:f, s:i, s:{s:i, s:f, s:f, s:i}},"
                      " {s:i, s:s, s:s, s:f, s:i, s:{s:i, s:f, s:f, s:i}}]",
                      "id", 6, "status", "correct", "fidelity", "full", "candidate_ns", 1.96e6,
                      "features", (int) th, "host_load", "cpus", 2, "others_cpu_s", 3.0,
                      "wall_s", 5.0, "cpus_allowed", 2,
                      "id", 4, "status", "correct", "fidelity", "full", "candidate_ns", 2.05e6,
                      "features", 0, "host_load", "cpus", 2, "others_cpu_s", 0.5, "wall_s",
                      5.0, "cpus_allowed", 2);
}

static char *
s_cores (json_t *load)
{
    static char buf[300];
    size_t n = kf_prompt_load_cores (load, true, buf, sizeof buf);
    CHECK (n == strlen (buf));
    printf ("cores: \"%s\"\n", buf);
    return buf;
}

//  The text itself: others' cores from their CPU seconds over the wall
//  seconds, else from the share; the CPUs the kernel could use.
static void
s_test_text (void)
{
    json_t *l = json_pack ("{s:i, s:f, s:f, s:f, s:i}", "cpus", 2, "others_cpu_s", 0.6,
                           "wall_s", 1.0, "others_cpu_share", 0.3, "cpus_allowed", 2);
    CHECK (!strcmp (s_cores (l), "other work took 0.6 of a core on average and the kernel could "
                                 "use 2 CPUs, so at most about 1.4 CPUs' time was left to its "
                                 "threads"));
    //  One CPU allowed: the threads took turns.
    json_object_set_new (l, "cpus_allowed", json_integer (1));
    CHECK (!strcmp (s_cores (l), "other work took 0.6 of a core on average and the kernel could "
                                 "use 1 CPU, so its threads took turns on one"));
    //  Fewer CPUs allowed than the host has: others may have run on the
    //  rest, so nothing is said of what was left.
    json_object_set_new (l, "cpus", json_integer (4));
    json_object_set_new (l, "cpus_allowed", json_integer (2));
    CHECK (!strcmp (s_cores (l), "other work took 0.6 of a core on average and the kernel could "
                                 "use 2 CPUs"));
    //  An older worker's load: the share only, and no CPU count allowed.
    json_object_del (l, "others_cpu_s");
    json_object_del (l, "cpus_allowed");
    CHECK (!strcmp (s_cores (l), "other work took 1.2 of a core on average"));
    json_decref (l);
    //  No load (no /proc/stat on the exec host): nothing.
    char none[4];
    CHECK (!strcmp (s_cores (NULL), "") && kf_prompt_load_cores (NULL, true, none, 4) == 0);
    //  A one-thread kernel: what others took, nothing of its threads.
    char one[200];
    json_t *q = json_pack ("{s:i, s:f, s:f, s:i}", "cpus", 2, "others_cpu_s", 0.5, "wall_s", 5.0,
                           "cpus_allowed", 2);
    kf_prompt_load_cores (q, false, one, sizeof one);
    CHECK (!strcmp (one, "other work took 0.1 of a core on average"));
    json_decref (q);
}

static char *
s_thread_cost (kf_prompt_in_t *in)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    kf_prompt_thread_cost (f, in, NULL);
    fclose (f);
    return text;
}

//  The threads paragraph of a kernel prompt, and the tuning prompt.
static void
s_test_prompts (void)
{
    json_t *spec = s_spec (), *hw = s_host (), *history = s_history ();
    json_t *base = json_pack ("{s:i, s:i, s:s, s:s, s:f, s:f, s:O}", "id", 6, "parent_id", 4,
                              "source", s_threaded_src, "status", "correct", "candidate_ns",
                              1.96e6, "speedup", 400.0, "host_load",
                              json_object_get (json_array_get (history, 0), "host_load"));
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .hardware = hw,
                          .base = base, .history = history };
    char *p = s_thread_cost (&in);
    printf ("%s\n", p ? p : "(none)");
    CHECK (kf_test_has (p, "threads look to have bought about 4% of the call (that kernel takes "
                           "1.05 times as long). While candidate 6 was timed, other work took 0.6 of "
                           "a core on average and the kernel could use 2 CPUs, so at most about "
                           "1.4 CPUs' time was left to its threads; while candidate 4 (one "
                           "thread) was timed, other work took 0.1 of a core on average."));
    free (p);
    kf_prompt_in_t tune = { .spec = spec, .language = "c", .target = "host", .hardware = hw,
                            .base = base, .history = history, .templated = true,
                            .tune_points = 8 };
    p = kf_prompt_build (&tune);
    CHECK (kf_test_has (p, "against candidate 6's 1.96 ms (timed in full). While candidate 6 "
                           "was timed, other work took 0.6 of a core on average"));
    CHECK (kf_test_has (p, "(one thread) was timed, other work took 0.1 of a core on average. So "
                           "threads look to have bought about 4% of the call"));
    free (p);
    //  No load recorded for either: nothing said of it.
    json_object_del (base, "host_load");
    json_object_del (json_array_get (history, 0), "host_load");
    json_object_del (json_array_get (history, 1), "host_load");
    p = s_thread_cost (&in);
    CHECK (kf_test_has (p, "(that kernel takes 1.05 times as long)."));
    CHECK (p && !strstr (p, "While candidate") && !strstr (p, "other work took"));
    free (p);
    json_decref (base);
    json_decref (history);
    json_decref (hw);
    json_decref (spec);
}

int
main (void)
{
    s_test_text ();
    s_test_prompts ();
    return kf_test_done ("test_threads_round16");
}
