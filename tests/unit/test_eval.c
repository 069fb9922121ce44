/*  test_eval.c - the host evaluator end to end: fixtures from
 *  tests/fixtures/kernels are built with the real compile handler and
 *  judged by kf_exec_handle, whose sandboxed child is this very program
 *  (run with --eval-child DIR). Each bad kernel must get its own verdict
 *  and a detail that says why; the good one must be correct and timed.
 *  Then the rules beyond the first checks: several shape cases, the
 *  per-dtype absolute bound, the roofline and its audit flag, the rest of
 *  the hostile suite (fork bomb, network, all memory, a cached result,
 *  lower precision), the reference probe, and evaluation against data
 *  exported by a real PyTorch reference job. */
#include "../../compile-worker/kf_compile.h"
#include "../../exec-worker/kf_exec.h"
#include "../../exec-worker/kf_eval_channel.h"
#include "../../exec-worker/kf_runner.h"
#include "../../exec-worker/kf_torch_ref.h"
#include "../kf_test.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

static const char *s_fixtures = "tests/fixtures/kernels";

//  The time limit for the candidates that never finish (spin, fork bomb):
//  what runs before the candidate in the same child (exec of this
//  sanitizer build, loading, the inputs, the reference's first call)
//  takes well under a second even on a loaded two-core machine, so a
//  limit this many times larger always fires while the candidate runs.
#define S_HANG_LIMIT_S 8.0

//  Builds fixture NAME; returns the shared object as a frame or NULL.
static zframe_t *
s_build (const char *name)
{
    char path[512];
    snprintf (path, sizeof path, "%s/%s", s_fixtures, name);
    FILE *f = fopen (path, "rb");
    if (!f) {
        fprintf (stderr, "test_eval: cannot open %s\n", path);
        return NULL;
    }
    char source[16384];
    size_t n = fread (source, 1, sizeof source, f);
    fclose (f);

    kf_job_t job = { .job_id = 1, .kind = "compile" };
    job.payload = json_pack ("{s:s, s:{s:s}}", "language", "c", "target", "backend", "host");
    job.frames = zmsg_new ();
    zmsg_addmem (job.frames, source, n);
    kf_job_result_t res;
    kf_compile_handle (NULL, &job, &res);
    zframe_t *so = NULL;
    if (res.ok && res.frames)
        so = zmsg_pop (res.frames);
    else
        fprintf (stderr, "test_eval: %s does not compile: %s\n", name,
                 json_string_value (json_object_get (res.result, "log")));
    json_decref (job.payload);
    zmsg_destroy (&job.frames);
    json_decref (res.result);
    zmsg_destroy (&res.frames);
    free (res.error);
    return so;
}

//  The softmax task the fixtures are written for: ROWS x COLS f32.
static json_t *
s_task (int rows, int cols)
{
    return json_pack (
        "{s:[{s:s, s:[i,i], s:s, s:{s:s, s:f, s:f}}], s:[{s:s, s:[i,i], s:s}],"
        " s:{}, s:{s:f, s:f, s:f, s:f}}",
        "inputs", "name", "x", "shape", rows, cols, "dtype", "f32",
                  "dist", "kind", "normal", "mean", 0.0, "std", 3.0,
        "outputs", "name", "y", "shape", rows, cols, "dtype", "f32",
        "scalars",
        "tolerance", "rtol", 1e-2, "atol", 1e-5, "min_match", 0.99, "min_cosine", 0.99985);
}

//  Evaluates the FRAMES (the last one the reference or its data) under
//  PAYLOAD (task, and whatever else; seed and timing added) with config
//  CFG; returns the result (caller's) or NULL when the job failed, with
//  *ERROR set to the reason (caller frees). Takes PAYLOAD.
static json_t *
s_run (json_t *payload, zframe_t **frames, int n, const kf_exec_config_t *cfg, char **error)
{
    kf_job_t job = { .job_id = 2, .kind = "evaluate" };
    job.payload = payload;
    if (!json_object_get (payload, "seed"))
        json_object_set_new (payload, "seed", json_integer (42));
    if (!json_object_get (payload, "timing"))
        json_object_set_new (payload, "timing", json_pack ("{s:f, s:i, s:f, s:i}",
                             "min_time_s", 0.05, "min_samples", 5, "warmup_s", 0.01,
                             "warmup_calls", 2));
    job.frames = zmsg_new ();
    for (int i = 0; i < n; i++)
        if (frames[i])
            zmsg_addmem (job.frames, zframe_data (frames[i]), zframe_size (frames[i]));
    kf_job_result_t res;
    kf_exec_handle ((void *) cfg, &job, &res);
    json_decref (job.payload);
    zmsg_destroy (&job.frames);
    zmsg_destroy (&res.frames);
    *error = res.error;
    if (!res.ok) {
        json_decref (res.result);
        return NULL;
    }
    return res.result;
}

//  CAND against REF on TASK (taken; NULL: the 64 x 256 softmax).
static json_t *
s_eval_task (zframe_t *cand, zframe_t *ref, json_t *task, double limit_s, char **error)
{
    kf_exec_config_t cfg = { .worker_path = NULL, .time_limit_s = limit_s };
    zframe_t *frames[2] = { cand, ref };
    return s_run (json_pack ("{s:o}", "task", task ? task : s_task (64, 256)), frames, 2,
                  &cfg, error);
}

static json_t *
s_eval (zframe_t *cand, zframe_t *ref, double limit_s, char **error)
{
    return s_eval_task (cand, ref, NULL, limit_s, error);
}

static const char *
s_str (json_t *r, const char *key)
{
    const char *s = json_string_value (json_object_get (r, key));
    return s ? s : "";
}

static double
s_num (json_t *r, const char *a, const char *b)
{
    json_t *o = json_object_get (r, a);
    return json_number_value (b ? json_object_get (o, b) : o);
}

//  FIXTURE on TASK (taken; NULL: the default) must get VERDICT with
//  DETAIL_PART in its detail.
static void
s_expect_task (const char *fixture, zframe_t *ref, json_t *task, double limit_s,
               const char *verdict, const char *detail_part)
{
    zframe_t *cand = s_build (fixture);
    CHECK (cand != NULL);
    char *error = NULL;
    json_t *r = s_eval_task (cand, ref, task, limit_s, &error);
    CHECK (r != NULL);
    if (r) {
        printf ("  %-20s %-10s %s\n", fixture, s_str (r, "verdict"), s_str (r, "detail"));
        CHECK (strcmp (s_str (r, "verdict"), verdict) == 0);
        CHECK (strstr (s_str (r, "detail"), detail_part) != NULL);
        if (strcmp (verdict, "correct") != 0)
            CHECK (json_is_null (json_object_get (r, "speedup")));
        CHECK (json_is_object (json_object_get (r, "phases_s")));
    }
    else
        fprintf (stderr, "  %s: job failed: %s\n", fixture, error);
    json_decref (r);
    free (error);
    zframe_destroy (&cand);
}

static void
s_expect (const char *fixture, zframe_t *ref, double limit_s,
          const char *verdict, const char *detail_part)
{
    s_expect_task (fixture, ref, NULL, limit_s, verdict, detail_part);
}

//  How many live processes are called NAME (the fork bomb's).
static int
s_count_named (const char *name)
{
    int n = 0;
    DIR *d = opendir ("/proc");
    struct dirent *ent;
    while (d && (ent = readdir (d))) {
        if (ent->d_name[0] < '0' || ent->d_name[0] > '9')
            continue;
        char path[300], comm[64] = "";
        snprintf (path, sizeof path, "/proc/%s/comm", ent->d_name);
        FILE *f = fopen (path, "r");
        if (f) {
            if (fgets (comm, sizeof comm, f))
                comm[strcspn (comm, "\n")] = 0;
            fclose (f);
        }
        if (strcmp (comm, name) == 0)
            n++;
    }
    if (d)
        closedir (d);
    return n;
}

//  Several shapes: a kernel that hard-codes the main row length is wrong
//  on a second shape, and the detail names the case.
static void
s_test_shapes (zframe_t *ref, zframe_t *good)
{
    printf (" shape cases\n");
    json_t *task = s_task (64, 256);
    json_object_set_new (task, "shapes", json_pack ("[{s:[i,i], s:[i,i]}]", "x", 16, 100,
                                                    "y", 16, 100));
    s_expect_task ("fixed_row.c", ref, json_incref (task), 60, "incorrect",
                   "shape case 1 (x [16,100], y [16,100]), set 0");
    //  The same kernel on the main shape alone is right.
    s_expect ("fixed_row.c", ref, 60, "correct", "all checks passed");
    char *error = NULL;
    json_t *r = s_eval_task (good, ref, task, 60, &error);
    CHECK (r && !strcmp (s_str (r, "verdict"), "correct"));
    //  5 sets on the main shape, 2 on the extra one.
    CHECK (r && s_num (r, "correctness", "sets") == 7 && s_num (r, "correctness", "cases") == 2);
    json_decref (r);
    free (error);
}

//  The per-dtype bound: f64 off by 1e-6 on inputs below 1e-4 passes with
//  f32's bound and fails with f64's default.
static void
s_test_atol (void)
{
    printf (" per-dtype absolute bound\n");
    zframe_t *ref = s_build ("ref_copy_f64.c");
    CHECK (ref != NULL);
    for (int k = 0; k < 2; k++) {
        json_t *task = json_pack (
            "{s:[{s:s, s:[i], s:s, s:{s:s, s:f, s:f}}], s:[{s:s, s:[i], s:s}], s:{}, s:{s:f, s:f}}",
            "inputs", "name", "x", "shape", 4096, "dtype", "f64",
                      "dist", "kind", "uniform", "low", -1e-4, "high", 1e-4,
            "outputs", "name", "y", "shape", 4096, "dtype", "f64", "scalars",
            "tolerance", "rtol", 1e-2, "min_cosine", 0.999);
        if (k == 0)
            json_object_set_new (json_object_get (task, "tolerance"), "atol",
                                 json_pack ("{s:f}", "f64", 1e-5));
        //  k == 1: no atol, so f64's default of 1e-8.
        s_expect_task ("off_by_1e6_f64.c", ref, task, 60, k == 0 ? "correct" : "incorrect",
                       k == 0 ? "all checks passed" : "atol 1e-08");
    }
    zframe_destroy (&ref);
}

//  A task past the sandbox's file-size limit (256 MiB): 8192 x 4096 f32,
//  128 MiB an input, 256 MiB with the output, and their pages. The candidate's tensors live
//  in a shared memory file the limit counts, so the worker raises it for
//  the judge by the task's size (and the candidate's process drops it back).
static void
s_test_large (zframe_t *ref)
{
    printf (" large tensors\n");
    char *error = NULL;
    double t0 = kf_eval_now ();
    json_t *r = s_eval_task (ref, ref, s_task (8192, 4096), 300, &error);
    printf ("  8192 x 4096 f32       %s %s (%.1f s)\n", r ? s_str (r, "verdict") : "failed",
            r ? s_str (r, "detail") : error, kf_eval_now () - t0);
    CHECK (r && !strcmp (s_str (r, "verdict"), "correct"));
    json_decref (r);
    free (error);

    //  Too big for where it would run: fails at once, marked final (it
    //  would fail the same way on every try), naming the sizes. 2048 x
    //  4096 f32 in and out is 64 MiB held twice; the limit here 96 MiB.
    kf_exec_config_t cfg = { .time_limit_s = 60, .memory_bytes = (size_t) 96 << 20 };
    kf_job_t job = { .job_id = 3, .kind = "evaluate" };
    job.payload = json_pack ("{s:o, s:i}", "task", s_task (2048, 4096), "seed", 1);
    job.frames = zmsg_new ();
    zmsg_addmem (job.frames, zframe_data (ref), zframe_size (ref));
    zmsg_addmem (job.frames, zframe_data (ref), zframe_size (ref));
    kf_job_result_t res;
    kf_exec_handle (&cfg, &job, &res);
    printf ("  2048 x 4096 f32 in 96 MiB: %s%s\n", res.final ? "final: " : "", res.error ? res.error : "ok");
    CHECK (!res.ok && res.final && res.error && strstr (res.error, "0.12 GiB"));
    free (res.error);
    json_decref (res.result);
    zmsg_destroy (&res.frames);
    json_decref (job.payload);
    zmsg_destroy (&job.frames);
}

//  FLOP rate and bandwidth in every correct evaluation; above the
//  measured ceiling is flagged for audit.
static void
s_test_roofline (zframe_t *ref, zframe_t *good)
{
    printf (" roofline\n");
    for (int k = 0; k < 2; k++) {
        json_t *task = s_task (64, 256);
        //  About 6 flops an element (max, subtract, exp, sum, scale); the
        //  second declares an absurd count, which no CPU reaches.
        json_object_set_new (task, "flops", json_real (k ? 1e15 : 6.0 * 64 * 256));
        //  The first is judged against given ceilings far above any CPU
        //  (and against itself, a speedup near 1): the honest figure is
        //  not flagged whatever the machine's load did to the ceilings the
        //  worker measured, or to the candidate's time. The second against
        //  the measured ones, which a rate of 1e15 flops a call exceeds
        //  unless a call takes over a second.
        kf_exec_config_t cfg = { .time_limit_s = 60 };
        zframe_t *frames[2] = { good, k ? ref : good };
        json_t *payload = json_pack ("{s:o}", "task", task);
        if (k == 0)
            json_object_set_new (payload, "ceilings", json_pack ("{s:f, s:f, s:s}", "copy_gbs", 1e6,
                                                                  "peak_gflops", 1e6, "peak_source", "given"));
        char *error = NULL;
        json_t *r = s_run (payload, frames, 2, &cfg, &error);
        CHECK (r && !strcmp (s_str (r, "verdict"), "correct"));
        if (r && strcmp (s_str (r, "verdict"), "correct"))
            printf ("  roofline %d: %s: %s\n", k, s_str (r, "verdict"), s_str (r, "detail"));
        if (!r) {
            printf ("  roofline %d: %s\n", k, error ? error : "no result");
            free (error);
            continue;
        }
        json_t *bw = json_object_get (r, "bandwidth"), *cp = json_object_get (r, "compute");
        printf ("  flops %-8g %.2f GB/s (%.2f%% of copy %.1f GB/s), %.2f GFLOP/s (%.3g%% of peak %.1f GFLOP/s, %s), audit %s %s\n",
                s_num (cp, "flops", NULL), s_num (bw, "candidate_gbs", NULL),
                100 * s_num (bw, "candidate_fraction_of_copy", NULL), s_num (bw, "copy_gbs", NULL),
                s_num (cp, "candidate_gflops", NULL), 100 * s_num (cp, "candidate_fraction_of_peak", NULL),
                s_num (cp, "peak_gflops", NULL), s_str (cp, "peak_source"),
                json_is_true (json_object_get (r, "audit")) ? "yes:" : "no", s_str (r, "audit_reason"));
        CHECK (s_num (bw, "bytes", NULL) == 2.0 * 64 * 256 * 4);
        CHECK (s_num (bw, "candidate_gbs", NULL) > 0 && s_num (bw, "copy_gbs", NULL) > 0);
        CHECK (s_num (cp, "candidate_gflops", NULL) > 0 && s_num (cp, "peak_gflops", NULL) > 0);
        if (k == 0)
            CHECK (json_is_false (json_object_get (r, "audit"))
                   && s_num (cp, "peak_gflops", NULL) == 1e6 && s_num (bw, "copy_gbs", NULL) == 1e6
                   && !strcmp (s_str (cp, "peak_source"), "given"));
        else
            CHECK (json_is_true (json_object_get (r, "audit"))
                   && strstr (s_str (r, "audit_reason"), "above the measured FMA peak")
                   && strstr (s_str (r, "detail"), "all checks passed; flagged for audit: computes at"));
        json_t *ph = json_object_get (r, "phases_s");
        CHECK (s_num (ph, "child_start", NULL) > 0 && s_num (ph, "load", NULL) > 0
               && s_num (ph, "correctness", NULL) > 0 && s_num (ph, "timing", NULL) > 0);
        if (k == 0)
            printf ("  phases: child_start %.3f s, load %.3f s, correctness %.3f s, timing %.3f s (wall %.3f s)\n",
                    s_num (ph, "child_start", NULL), s_num (ph, "load", NULL),
                    s_num (ph, "correctness", NULL), s_num (ph, "timing", NULL),
                    s_num (r, "wall_s", NULL));
        json_decref (r);
    }
    json_t *caps = kf_exec_capabilities ("host");
    json_t *dev = json_array_get (json_object_get (caps, "devices"), 0);
    CHECK (s_num (dev, "copy_bandwidth_gbs", NULL) > 0 && s_num (dev, "peak_gflops", NULL) > 0);
    json_decref (caps);
}

//  The hostile suite beyond the first checks: each contained, reported,
//  and the worker still serving after it.
static void
s_test_hostile (zframe_t *ref, zframe_t *good)
{
    printf (" hostile kernels\n");
    char *error = NULL;
    //  Fork bomb: bounded by RLIMIT_NPROC (as a sandbox uid of its own
    //  when we are root),
    //  ended with its process group at the time limit. The limit is
    //  S_HANG_LIMIT_S, far above the honest part of the run (child start,
    //  load, the reference's first call), so the candidate is running
    //  when it fires however busy the machine is.
    s_expect ("fork_bomb.c", ref, S_HANG_LIMIT_S, "timeout", "candidate");
    //  Killed processes are gone once init has reaped them: wait for that
    //  state (up to a minute, so a busy machine's slow reaping is not a
    //  failure; bomb processes that live on are).
    int left = s_count_named ("kf_forkbomb");
    for (int k = 0; k < 600 && left > 0; k++) {
        usleep (100 * 1000);
        left = s_count_named ("kf_forkbomb");
    }
    printf ("  fork bomb processes left after the evaluation: %d\n", left);
    CHECK (left == 0);
    json_t *r = s_eval (good, ref, 60, &error);
    CHECK (r && !strcmp (s_str (r, "verdict"), "correct"));
    json_decref (r);
    free (error);

    //  A network socket: the listener here must never see a connection.
    int lfd = socket (AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = { .sin_family = AF_INET };
    a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    CHECK (lfd >= 0 && bind (lfd, (struct sockaddr *) &a, sizeof a) == 0 && listen (lfd, 4) == 0
           && getsockname (lfd, (struct sockaddr *) &a, &alen) == 0);
    json_t *task = s_task (64, 256);
    json_object_set_new (json_object_get (task, "scalars"), "port",
                         json_real (ntohs (a.sin_port)));
    s_expect_task ("net_socket.c", ref, task, 60, "correct", "all checks passed");
    int conn = accept (lfd, NULL, NULL);
    printf ("  listener on 127.0.0.1:%d: %s\n", ntohs (a.sin_port),
            conn >= 0 ? "CONNECTED (network not contained)" : "no connection");
    CHECK (conn < 0);
    if (conn >= 0)
        close (conn);
    close (lfd);

    //  All the memory: a 1 GiB address-space limit turns it into a NULL
    //  that the kernel uses. AddressSanitizer builds set no RLIMIT_AS (its
    //  shadow needs terabytes of address space), so there its RSS limit
    //  ends the child instead. That limit is checked by a thread of the
    //  sanitizer a few times a second, racing the kernel towards the
    //  4 GiB where it gives up (and returns 1, which is not a crash): at
    //  512 MB the checker has the 3.5 GiB between to catch it, seconds of
    //  page faults, not a margin a busy machine can eat.
    kf_exec_config_t cfg = { .time_limit_s = 60, .memory_bytes = (size_t) 1 << 30 };
    zframe_t *hog = s_build ("alloc_all.c");
    zframe_t *frames[2] = { hog, ref };
    const char *asan = getenv ("ASAN_OPTIONS");
    char *saved = asan ? strdup (asan) : NULL;
    char opts[512];
    snprintf (opts, sizeof opts, "%s%shard_rss_limit_mb=512", asan ? asan : "", asan ? ":" : "");
    setenv ("ASAN_OPTIONS", opts, 1);
    r = hog ? s_run (json_pack ("{s:o}", "task", s_task (64, 256)), frames, 2, &cfg, &error) : NULL;
    if (saved)
        setenv ("ASAN_OPTIONS", saved, 1);
    else
        unsetenv ("ASAN_OPTIONS");
    free (saved);
    CHECK (r != NULL);
    if (r) {
        printf ("  %-20s %-10s %s\n", "alloc_all.c", s_str (r, "verdict"), s_str (r, "detail"));
        CHECK (!strcmp (s_str (r, "verdict"), "crashed"));
    }
    json_decref (r);
    free (error);
    zframe_destroy (&hog);
    r = s_eval (good, ref, 60, &error);
    CHECK (r && !strcmp (s_str (r, "verdict"), "correct"));
    json_decref (r);
    free (error);

    //  A result cached from the first call: the second set differs.
    s_expect ("cached_result.c", ref, 60, "incorrect", "set 1: output 'y'");
    //  Lower precision (f16 rounding): fine for rtol 1e-2, rejected by a
    //  task that asks for 1e-4 (and an absolute bound that does not hide
    //  it); the right kernel passes that task.
    s_expect ("low_precision.c", ref, 60, "correct", "all checks passed");
    task = s_task (64, 256);
    json_t *tol = json_object_get (task, "tolerance");
    json_object_set_new (tol, "rtol", json_real (1e-4));
    json_object_set_new (tol, "atol", json_real (1e-9));
    s_expect_task ("low_precision.c", ref, json_incref (task), 60, "incorrect", "rtol 0.0001");
    r = s_eval_task (good, ref, task, 60, &error);
    CHECK (r && !strcmp (s_str (r, "verdict"), "correct"));
    json_decref (r);
    free (error);
}

//  A reference probe: the reference alone on every set and shape case,
//  with the degenerate-output rules.
static void
s_test_probe (zframe_t *ref)
{
    printf (" reference probe\n");
    zframe_t *bad = s_build ("ignores_input.c");
    CHECK (bad != NULL);
    for (int k = 0; k < 2; k++) {
        kf_exec_config_t cfg = { .time_limit_s = 60 };
        json_t *task = s_task (64, 256);
        json_object_set_new (task, "shapes", json_pack ("[{s:[i,i], s:[i,i]}]", "x", 8, 32, "y", 8, 32));
        zframe_t *frames[1] = { k ? bad : ref };
        char *error = NULL;
        json_t *r = s_run (json_pack ("{s:o, s:b}", "task", task, "probe", 1), frames, 1, &cfg, &error);
        CHECK (r != NULL);
        if (!r) {
            fprintf (stderr, "  probe failed: %s\n", error);
            free (error);
            continue;
        }
        char *text = json_dumps (json_object_get (r, "degenerate"), JSON_COMPACT);
        printf ("  %-20s degenerate %s, reference %.3f ms a call, %d sets, %d cases\n",
                k ? "ignores_input.c" : "ref_softmax.c", text, s_num (r, "reference_ms", NULL),
                (int) s_num (r, "sets", NULL), (int) s_num (r, "cases", NULL));
        free (text);
        CHECK (json_is_true (json_object_get (r, "ok")));
        CHECK (json_object_get (r, "verdict") == NULL);
        CHECK (s_num (r, "reference_ms", NULL) > 0);
        CHECK (s_num (r, "cases", NULL) == 2);
        json_t *deg = json_object_get (r, "degenerate");
        if (k == 0)
            CHECK (json_array_size (deg) == 0);
        else {
            CHECK (json_array_size (deg) == 2);
            CHECK (strstr (json_string_value (json_array_get (deg, 0)), "constant (every element is 1)"));
            CHECK (strstr (json_string_value (json_array_get (deg, 1)), "the same in every input set"));
        }
        json_decref (r);
    }
    //  A probe takes exactly one frame.
    kf_exec_config_t cfg = { .time_limit_s = 60 };
    zframe_t *two[2] = { ref, bad };
    char *error = NULL;
    json_t *r = s_run (json_pack ("{s:o, s:b}", "task", s_task (64, 256), "probe", 1), two, 2, &cfg, &error);
    CHECK (r == NULL && error && strstr (error, "one frame"));
    free (error);
    zframe_destroy (&bad);
}

static char *
s_slurp (const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    char *text = calloc (1, 1 << 16);
    size_t n = text ? fread (text, 1, (1 << 16) - 1, f) : 0;
    (void) n;
    fclose (f);
    return text;
}

//  Evaluation against exported PyTorch data: the real reference job on
//  examples/pytorch/softmax.py, then a right and a wrong C softmax
//  against its data, which stays in the runner's store: the evaluate job
//  names it by key and hash and has no reference frame.
static void
s_test_pytorch (void)
{
    printf (" against exported PyTorch data\n");
    kf_torch_ref_config_t tcfg = { .cache_dir = NULL };
    kf_torch_ref_t *runner = kf_torch_ref_new (&tcfg);
    if (!kf_torch_ref_python (runner)) {
        printf ("  skipped: no python with torch (tried: %s)\n", kf_torch_ref_tried (runner));
        kf_torch_ref_destroy (&runner);
        return;
    }
    char *source = s_slurp ("examples/pytorch/softmax.py");
    CHECK (source != NULL);
    kf_job_t job = { .job_id = 1, .lease = 1, .kind = "reference" };
    job.payload = json_pack ("{s:s, s:i, s:i, s:s, s:b, s:{s:f, s:f, s:i}}",
                             "source", source ? source : "", "seed", 7, "sets", 5,
                             "device", "cpu", "compile", 0,
                             "timing", "min_time_s", 0.05, "warmup_s", 0.01, "min_samples", 5);
    kf_job_result_t ref;
    kf_torch_ref_handle (runner, &job, &ref);
    json_decref (job.payload);
    CHECK (ref.ok && ref.frames == NULL);
    if (!ref.ok) {
        fprintf (stderr, "  reference job failed: %s\n", ref.error ? ref.error : "?");
        free (ref.error);
        json_decref (ref.result);
        zmsg_destroy (&ref.frames);
        free (source);
        kf_torch_ref_destroy (&runner);
        return;
    }
    kf_torch_ref_set_shared (runner);
    double eager = s_num (json_object_get (ref.result, "timing"), "eager", "median_ns");
    printf ("  reference job: %zu tensors, %lld bytes, eager median %.1f us\n",
            json_array_size (json_object_get (ref.result, "tensors")),
            (long long) json_integer_value (json_object_get (ref.result, "data_bytes")), eager / 1e3);
    //  The task as the coordinator derives it: in0 in, out0 out, the
    //  reference in PyTorch.
    json_t *task = json_pack ("{s:[{s:s, s:[i,i], s:s}], s:[{s:s, s:[i,i], s:s}], s:{},"
                              " s:{s:s, s:s}, s:{s:f, s:f, s:f, s:f}}",
                              "inputs", "name", "in0", "shape", 64, 1000, "dtype", "f32",
                              "outputs", "name", "out0", "shape", 64, 1000, "dtype", "f32",
                              "scalars", "reference", "language", "pytorch", "source", source,
                              "tolerance", "rtol", 1e-2, "atol", 1e-5, "min_match", 0.99,
                              "min_cosine", 0.99985);
    json_t *refdata = json_pack ("{s:O, s:O, s:i, s:f, s:n, s:{s:O, s:O, s:O, s:O, s:O}}",
                                 "tensors", json_object_get (ref.result, "tensors"),
                                 "scalars", json_object_get (ref.result, "scalars"),
                                 "sets", 5, "eager_ns", eager, "compiled_ns", "data",
                                 "key", json_object_get (ref.result, "data_key"),
                                 "bytes", json_object_get (ref.result, "data_bytes"),
                                 "hash", json_object_get (ref.result, "data_hash"),
                                 "inputs_hash", json_object_get (ref.result, "inputs_hash"),
                                 "seed", json_object_get (ref.result, "seed"));
    const char *names[] = { "good_softmax.c", "wrong_softmax.c" };
    for (int k = 0; k < 2; k++) {
        zframe_t *cand = s_build (names[k]);
        zframe_t *frames[1] = { cand };
        kf_exec_config_t cfg = { .time_limit_s = 60 };
        char *error = NULL;
        json_t *r = s_run (json_pack ("{s:O, s:O}", "task", task, "reference_data", refdata),
                           frames, 1, &cfg, &error);
        CHECK (r != NULL);
        if (r) {
            printf ("  %-20s %-10s %s; speedup over eager %.2f (candidate %.1f us)\n", names[k],
                    s_str (r, "verdict"), s_str (r, "detail"), s_num (r, "speedup", NULL),
                    s_num (r, "candidate", "median_ns") / 1e3);
            CHECK (!strcmp (s_str (r, "verdict"), k ? "incorrect" : "correct"));
            CHECK (s_num (r, "correctness", "sets") == (k ? 1 : 5));
            if (k == 0) {
                CHECK (!strcmp (s_str (json_object_get (r, "reference"), "kind"), "pytorch-eager"));
                CHECK (s_num (r, "reference", "median_ns") == eager);
                double expect = eager / s_num (r, "candidate", "median_ns");
                CHECK (fabs (s_num (r, "speedup", NULL) - expect) < 1e-6 * expect);
                CHECK (json_is_null (json_object_get (r, "speedup_compiled")));
                //  No reference kernel: the candidate's 5 calls count.
                CHECK (s_num (r, "protocol", "correctness_calls") == 5);
                CHECK (json_is_object (json_object_get (r, "bandwidth")));
                //  The data came from this worker's store, its hash the run's.
                json_t *note = json_object_get (r, "reference_data");
                CHECK (!strcmp (s_str (note, "from"), "cache"));
                CHECK (json_is_true (json_object_get (note, "matches")));
            }
        }
        else
            fprintf (stderr, "  %s: job failed: %s\n", names[k], error);
        json_decref (r);
        free (error);
        zframe_destroy (&cand);
    }
    //  A task that does not match the data fails the job, saying where.
    json_t *wrong = json_deep_copy (task);
    json_array_set_new (json_object_get (json_array_get (json_object_get (wrong, "inputs"), 0), "shape"),
                        1, json_integer (999));
    zframe_t *good = s_build ("good_softmax.c");
    zframe_t *frames[1] = { good };
    kf_exec_config_t cfg = { .time_limit_s = 60 };
    char *error = NULL;
    json_t *r = s_run (json_pack ("{s:o, s:O}", "task", wrong, "reference_data", refdata),
                       frames, 1, &cfg, &error);
    printf ("  mismatched task: %s\n", error ? error : "(no error)");
    CHECK (r == NULL && error && strstr (error, "task input 0 ('in0') is f32 [64,999] but the data has f32 [64,1000]"));
    json_decref (r);
    free (error);
    zframe_destroy (&good);
    json_decref (task);
    json_decref (refdata);
    kf_torch_ref_set_shared (NULL);
    free (ref.error);
    json_decref (ref.result);
    zmsg_destroy (&ref.frames);
    free (source);
    kf_torch_ref_destroy (&runner);
}

int
main (int argc, char **argv)
{
    //  The evaluation child re-executes this program.
    if (argc >= 3 && strcmp (argv[1], "--eval-runner") == 0)
        return kf_runner_main (argc, argv);
    if (argc >= 3 && strcmp (argv[1], "--eval-child") == 0)
        return kf_exec_child_main (argv[2]);
    if (getenv ("KF_FIXTURES"))
        s_fixtures = getenv ("KF_FIXTURES");
    const char *root = getenv ("KF_ROOT");
    if (root && chdir (root) != 0)
        return 1;

    zframe_t *ref = s_build ("ref_softmax.c");
    CHECK (ref != NULL);
    if (!ref)
        return kf_test_done ("test_eval");

    //  Correct and timed.
    zframe_t *good = s_build ("good_softmax.c");
    char *error = NULL;
    json_t *r = s_eval (good, ref, 60, &error);
    CHECK (r != NULL);
    if (r) {
        printf ("  %-20s %-10s speedup %.2f, candidate median %.0f ns, reference median %.0f ns\n",
                "good_softmax.c", s_str (r, "verdict"),
                json_number_value (json_object_get (r, "speedup")),
                json_number_value (json_object_get (json_object_get (r, "candidate"), "median_ns")),
                json_number_value (json_object_get (json_object_get (r, "reference"), "median_ns")));
        if (strcmp (s_str (r, "verdict"), "correct"))
            printf ("  good_softmax.c: %s\n", s_str (r, "detail"));
        CHECK (strcmp (s_str (r, "verdict"), "correct") == 0);
        CHECK (json_number_value (json_object_get (r, "speedup")) > 0);
        json_t *c = json_object_get (r, "correctness");
        CHECK (json_integer_value (json_object_get (c, "sets")) == 5);
        CHECK (json_number_value (json_object_get (c, "match_fraction")) >= 0.99);
        CHECK (json_number_value (json_object_get (c, "cosine")) >= 0.99985);
        json_t *cand = json_object_get (r, "candidate");
        CHECK (json_integer_value (json_object_get (cand, "samples")) >= 5);
        CHECK (json_integer_value (json_object_get (cand, "calls_per_sample")) >= 1);
        CHECK (json_number_value (json_object_get (cand, "p10_ns"))
               <= json_number_value (json_object_get (cand, "p90_ns")));
        CHECK (json_number_value (json_object_get (json_object_get (r, "reference"), "median_ns")) > 0);
    }
    else
        fprintf (stderr, "good: job failed: %s\n", error);
    json_decref (r);
    free (error);

    //  The warm-up floor counts the correctness pass's calls: 5 sets, so a
    //  floor of 12 calls is 7 more rounds, and a floor of 0.2 s counts
    //  from the first set's reference call.
    char *errw = NULL;
    kf_exec_config_t wcfg = { .time_limit_s = 60 };
    zframe_t *wframes[2] = { good, ref };
    for (int k = 0; k < 2; k++) {
        json_t *payload = json_pack ("{s:o, s:{s:f, s:i, s:f, s:i}}", "task", s_task (64, 256),
                                     "timing", "min_time_s", 0.02, "min_samples", 3,
                                     "warmup_s", k ? 0.2 : 0.0, "warmup_calls", k ? 1 : 12);
        r = s_run (payload, wframes, 2, &wcfg, &errw);
        json_t *p = json_object_get (r, "protocol");
        printf ("  warm-up floor %s: %d calls a side (%d from the correctness pass, %d topped up), %.4f s (%.4f s topped up)\n",
                k ? "0.2 s" : "12 calls", (int) s_num (p, "warmup_calls", NULL),
                (int) s_num (p, "correctness_calls", NULL), (int) s_num (p, "topup_calls", NULL),
                s_num (p, "warmup_s", NULL), s_num (p, "topup_s", NULL));
        CHECK (r && !strcmp (s_str (r, "verdict"), "correct"));
        CHECK (s_num (p, "correctness_calls", NULL) == 5);
        CHECK (s_num (p, "warmup_calls", NULL)
               == s_num (p, "correctness_calls", NULL) + s_num (p, "topup_calls", NULL));
        if (k == 0)
            CHECK (s_num (p, "topup_calls", NULL) == 7);
        else {
            CHECK (s_num (p, "topup_calls", NULL) >= 1 && s_num (p, "warmup_s", NULL) >= 0.2);
            //  The span began at the first set's reference call, not with
            //  the top-up: the five sets' calls and checks are inside it.
            CHECK (s_num (p, "warmup_s", NULL) - s_num (p, "topup_s", NULL) > 1e-4);
        }
        CHECK (s_num (p, "measured_s", NULL) >= 0.02 && s_num (p, "sampling_s", NULL) > 0);
        CHECK (json_is_object (json_object_get (r, "split_s")));
        json_decref (r);
        free (errw);
        errw = NULL;
    }

    //  The reference against itself is correct too (exact match).
    r = s_eval (ref, ref, 60, &error);
    CHECK (r && strcmp (s_str (r, "verdict"), "correct") == 0);
    json_decref (r);
    free (error);

    s_expect ("wrong_softmax.c", ref, 60, "incorrect", "within tolerance");
    s_expect ("oob_write.c", ref, 60, "crashed", "out-of-bounds access (SIGSEGV)");
    s_expect ("segfault.c", ref, 60, "crashed", "SIGSEGV");
    //  A hang: the time limit must fire while the candidate runs (not
    //  the reference or the harness), so it is generous to them.
    s_expect ("spin.c", ref, S_HANG_LIMIT_S, "timeout", "candidate");
    s_expect ("modifies_input.c", ref, 60, "incorrect", "inputs changed");
    s_expect ("unwritten.c", ref, 60, "incorrect", "not written");
    s_test_hostile (ref, good);
    s_test_shapes (ref, good);
    s_test_atol ();
    s_test_roofline (ref, good);
    s_test_large (ref);
    s_test_probe (ref);
    s_test_pytorch ();

    //  A candidate that is not a shared object does not load.
    zframe_t *junk = zframe_new ("not an ELF file", 15);
    r = s_eval (junk, ref, 60, &error);
    CHECK (r && strcmp (s_str (r, "verdict"), "load_failed") == 0);
    json_decref (r);
    free (error);

    //  A broken reference is the job's failure, not the candidate's.
    r = s_eval (good, junk, 60, &error);
    CHECK (r == NULL && error && strstr (error, "reference"));
    json_decref (r);
    free (error);
    zframe_destroy (&junk);

    //  Missing artifacts.
    r = s_eval (good, NULL, 60, &error);
    CHECK (r == NULL && error != NULL);
    free (error);

    json_t *caps = kf_exec_capabilities ("host");
    json_t *dev = json_array_get (json_object_get (caps, "devices"), 0);
    CHECK (json_string_value (json_object_get (dev, "name")) != NULL);
    CHECK (json_integer_value (json_object_get (dev, "cores")) >= 1);
    CHECK (json_integer_value (json_object_get (dev, "memory_bytes")) > 0);
    json_decref (caps);

    zframe_destroy (&good);
    zframe_destroy (&ref);
    return kf_test_done ("test_eval");
}
