/*  test_tune_round14.c - what round 14 of the model in the loop found in
 *  the tuning prompts about threads:
 *
 *  1. a one-thread kernel to template (candidate 16, 3.25 ms a call, a
 *     two-thread kernel of the run 1.5 times faster) got no word of
 *     threads, and the model added NTHREADS=1,2 on its own: on a host of
 *     several cores the prompt says a thread count may be a parameter of
 *     default 1, with what threads cost and what they did in this run
 *     (read from the run's history, a tuning prompt having no planned
 *     idea); where threads are predicted to lose, to leave it out;
 *  2. a threaded kernel's cold-timed bandwidth was set against one core's
 *     warm copy rate ("37.0 GB/s, 91% of the 40.7 GB/s one core copies
 *     alone"): it is set against one core's cold read rate where the host
 *     has one.
 */
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_tune.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>


//  torch.matmul (a [384,1024], b.T [1024,768]).
static json_t *
s_spec (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f, s:f, s:f}}",
                      "name", "mm", "op", "matmul", "description", "a @ b.T", "inputs", "name",
                      "a", "shape", 384, 1024, "dtype", "f32", "name", "b", "shape", 768, 1024,
                      "dtype", "f32", "outputs", "name", "out0", "shape", 384, 768, "dtype",
                      "f32", "reference", "language", "c", "source",
                      "int kf_forward (void) { return 0; }", "tolerance", "rtol", 0.01, "atol",
                      1e-5, "min_match", 0.99, "min_cosine", 0.99985);
}

//  A host of CORES cores whose thread start and join takes 40 us.
static json_t *
s_host (int cores)
{
    return json_pack ("{s:s, s:s, s:[{s:s, s:i, s:f, s:f, s:f, s:f}]}", "worker", "e1",
                      "backend", "host", "devices", "name", "Xeon VM", "cores", cores,
                      "peak_gflops_one_core", 229.0, "peak_gflops", 458.0,
                      "copy_one_core_gbs", 40.7, "thread_start_join_us", 40.0);
}

static const char *s_one_thread = "int kf_forward (void) { return 0; }\n";
static const char *s_threaded =
    "#include <pthread.h>\n#define NTHREADS 2\n"
    "static void *work (void *a) { return a; }\n"
    "int kf_forward (void) { pthread_t t; pthread_create (&t, 0, work, 0);\n"
    "    pthread_join (t, 0); return 0; }\n";

static char *
s_prompt (json_t *spec, json_t *hw, json_t *base, json_t *history)
{
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .hardware = hw,
                          .base = base, .history = history, .templated = true,
                          .tune_points = 8 };
    return kf_prompt_build (&in);
}

static void
s_test_one_thread (void)
{
    json_t *spec = s_spec (), *hw = s_host (2);
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f, s:f}", "id", 16, "source", s_one_thread,
                              "status", "correct", "speedup", 20.0, "candidate_ns", 3.25e6);
    //  The run's history: candidate 16 and a two-thread kernel 1.5 times
    //  faster, both timed in full; a screen figure and a wrong kernel
    //  do not count.
    //  Candidate 12 also holds a register tile: no twin of it (round 17).
    unsigned th = 1u << KF_IDEA_THREADS, micro = 1u << KF_IDEA_MICRO;
    json_t *history = json_pack ("[{s:i, s:s, s:s, s:f, s:i}, {s:i, s:s, s:s, s:f, s:i},"
                                 " {s:i, s:s, s:s, s:f, s:i}, {s:i, s:s, s:s, s:f, s:i}]",
                                 "id", 16, "status", "correct", "fidelity", "full",
                                 "candidate_ns", 3.25e6, "features", 0,
                                 "id", 12, "status", "correct", "fidelity", "full",
                                 "candidate_ns", 2.17e6, "features", (int) (th | micro),
                                 "id", 14, "status", "correct", "fidelity", "screen",
                                 "candidate_ns", 1.0e6, "features", (int) th,
                                 "id", 15, "status", "incorrect", "fidelity", "full",
                                 "candidate_ns", 0.5e6, "features", (int) th);
    char *p = s_prompt (spec, hw, base, history);
    const char *at = p ? strstr (p, "## Tuning parameters") : NULL;
    printf ("%s", at ? at : "(none)\n");
    CHECK (kf_test_has (at, "Candidate 16 starts no threads, and this host has 2 cores: the template "
                      "may make the thread count a parameter, with 1 as its default (#define "
                      "NTHREADS 1) so that the all-defaults point is still candidate 16 on "
                      "one thread, and the counts worth trying after it (NTHREADS=1,2)."));
    //  The cost paragraph, as beside a threads idea (kf_prompt_threads.c).
    CHECK (kf_test_has (at, "What threads cost here: one thread's start and join takes 40.0 us"));
    CHECK (kf_test_has (at, "The kernel to improve takes 3.25 ms a call"));
    //  What threads did in this run, from the history.
    CHECK (kf_test_has (at, "Across designs in this run: the fastest kernel that starts "
                      "threads, candidate 12, takes 2.17 ms a call, 33% less than the fastest "
                      "single-thread kernel (candidate 16, 3.25 ms), timed in full. That sets "
                      "different designs against each other"));
    CHECK (!kf_test_has (at, "Like for like"));
    free (p);
    //  Round 17: a like-for-like pair in the run (candidate 11: candidate
    //  12's code less its threads) is what the paragraph says, not the
    //  designs against each other.
    unsigned simd = 1u << KF_IDEA_SIMD;
    json_object_set_new (json_array_get (history, 1), "features", json_integer ((int) (th | simd)));
    json_array_append_new (history, json_pack ("{s:i, s:s, s:s, s:f, s:i}", "id", 11, "status",
                                               "correct", "fidelity", "full", "candidate_ns",
                                               4.5e6, "features", (int) simd));
    p = s_prompt (spec, hw, base, history);
    CHECK (kf_test_has (p, "Nearest to like for like in this run: candidate 12 starts threads "
                           "and takes 2.17 ms a call; candidate 11, a kernel of like design "
                           "whose code's features read as its less the threads, takes 4.5 ms on "
                           "one thread (both timed in full; the features cannot tell a tile's "
                           "shape): threads look to have bought about 52% of the call."));
    CHECK (!kf_test_has (p, "Across designs"));
    free (p);
    json_array_remove (history, 4);
    json_object_set_new (json_array_get (history, 1), "features",
                         json_integer ((int) (th | micro)));
    //  Where the run's threaded kernels lost, that.
    json_object_set_new (json_array_get (history, 1), "candidate_ns", json_real (4.0e6));
    p = s_prompt (spec, hw, base, history);
    CHECK (kf_test_has (p, "Across designs: the 1 kernel of this run that starts threads"));
    CHECK (!kf_test_has (p, "threads have bought nothing so far"));
    CHECK (p && !strstr (p, "threads have paid"));
    free (p);
    //  16 cores: the counts up to them.
    json_object_set_new (json_array_get (json_object_get (hw, "devices"), 0), "cores",
                         json_integer (16));
    p = s_prompt (spec, hw, base, NULL);
    CHECK (kf_test_has (p, "this host has 16 cores") && kf_test_has (p, "(NTHREADS=1,2,8,16)."));
    free (p);
    //  A call too short for threads: leave the count out.
    json_object_set_new (json_array_get (json_object_get (hw, "devices"), 0), "cores",
                         json_integer (2));
    json_object_set_new (base, "candidate_ns", json_real (50e3));
    p = s_prompt (spec, hw, base, NULL);
    CHECK (kf_test_has (p, "Candidate 16 starts no threads, and threads started in each of its calls "
                     "would lose on this host: leave the thread count out of the template."));
    CHECK (p && !strstr (p, "may make the thread count a parameter"));
    free (p);
    //  One core, or a threaded kernel: no such sentence.
    json_object_set_new (base, "candidate_ns", json_real (3.25e6));
    json_t *one = s_host (1);
    p = s_prompt (spec, one, base, NULL);
    CHECK (p && !strstr (p, "starts no threads"));
    free (p);
    json_decref (one);
    json_object_set_new (base, "source", json_string (s_threaded));
    p = s_prompt (spec, hw, base, NULL);
    CHECK (p && !strstr (p, "starts no threads"));
    free (p);
    json_decref (history);
    json_decref (base);
    json_decref (hw);
    json_decref (spec);
}

static void
s_test_cold_rate (void)
{
    json_t *spec = s_spec (), *hw = s_host (2);
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f, s:{s:f}}", "id", 9, "source", s_threaded,
                              "status", "correct", "speedup", 2.76, "bandwidth",
                              "candidate_gbs", 30.0);
    //  No cold rate measured: the copy rate, as before.
    char *p = s_prompt (spec, hw, base, NULL);
    //  Round 17: its ordinary stores read each line first, so 30.0 GB/s
    //  of N + M is 36.0 of N + 2M, set against the copy's whole traffic
    //  (1.5 x 40.7: its write-allocate read too), not its N + M.
    CHECK (kf_test_has (p, "36.0 GB/s counting N + 2M (each ordinary store reads its line "
                           "first: the code has no streaming (non-temporal) stores), 59% of "
                           "the 61.1 GB/s of one core's copy rate counted as its whole traffic"));
    free (p);
    //  With one: against it, and said so. 36.0 GB/s is above a 30.0 GB/s
    //  cold read: the threads paid, nothing said.
    json_t *d = json_array_get (json_object_get (hw, "devices"), 0);
    json_object_set_new (d, "read_cold_one_core_gbs", json_real (30.0));
    p = s_prompt (spec, hw, base, NULL);
    CHECK (p && !strstr (p, "starts threads, yet"));
    free (p);
    json_object_set_new (d, "read_cold_one_core_gbs", json_real (45.0));
    p = s_prompt (spec, hw, base, NULL);
    CHECK (kf_test_has (p, "Candidate 9 starts threads, yet it measured no more than one core's "
                     "worth: 36.0 GB/s counting N + 2M (each ordinary store reads its line "
                     "first: the code has no streaming (non-temporal) stores), 80% of the "
                     "45.0 GB/s of one core's cold read rate (the kernel's bytes are timed "
                     "cold too)"));
    CHECK (p && !strstr (p, "copy rate"));
    free (p);
    json_decref (base);
    json_decref (hw);
    json_decref (spec);
}

int
main (void)
{
    s_test_one_thread ();
    s_test_cold_rate ();
    return kf_test_done ("test_tune_round14");
}
