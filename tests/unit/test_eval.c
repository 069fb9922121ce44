/*  test_eval.c - the host evaluator end to end: fixtures from
 *  tests/fixtures/kernels are built with the real compile handler and
 *  judged by kf_exec_handle, whose sandboxed child is this very program
 *  (run with --eval-child DIR). Each bad kernel must get its own verdict
 *  and a detail that says why; the good one must be correct and timed. */
#include "../../compile-worker/kf_compile.h"
#include "../../exec-worker/kf_exec.h"
#include "../kf_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *s_fixtures = "tests/fixtures/kernels";

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

//  Evaluates CAND against REF; returns the result (caller's) or NULL
//  when the job failed, with *ERROR set to the reason (caller frees).
static json_t *
s_eval (zframe_t *cand, zframe_t *ref, double limit_s, char **error)
{
    kf_exec_config_t cfg = { .worker_path = NULL, .time_limit_s = limit_s };
    kf_job_t job = { .job_id = 2, .kind = "evaluate" };
    job.payload = json_pack (
        "{s:{s:[{s:s, s:[i,i], s:s, s:{s:s, s:f, s:f}}], s:[{s:s, s:[i,i], s:s}],"
        " s:{}, s:{s:f, s:f, s:f, s:f}},"
        " s:i, s:{s:f, s:i, s:f, s:i}}",
        "task",
          "inputs", "name", "x", "shape", 64, 256, "dtype", "f32",
                    "dist", "kind", "normal", "mean", 0.0, "std", 3.0,
          "outputs", "name", "y", "shape", 64, 256, "dtype", "f32",
          "scalars",
          "tolerance", "rtol", 1e-2, "atol", 1e-5, "min_match", 0.99, "min_cosine", 0.99985,
        "seed", 42,
        "timing", "min_time_s", 0.05, "min_samples", 5, "warmup_s", 0.01, "warmup_calls", 2);
    job.frames = zmsg_new ();
    if (cand)
        zmsg_addmem (job.frames, zframe_data (cand), zframe_size (cand));
    if (ref)
        zmsg_addmem (job.frames, zframe_data (ref), zframe_size (ref));
    kf_job_result_t res;
    kf_exec_handle (&cfg, &job, &res);
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

static const char *
s_str (json_t *r, const char *key)
{
    const char *s = json_string_value (json_object_get (r, key));
    return s ? s : "";
}

static void
s_expect (const char *fixture, zframe_t *ref, double limit_s,
          const char *verdict, const char *detail_part)
{
    zframe_t *cand = s_build (fixture);
    CHECK (cand != NULL);
    char *error = NULL;
    json_t *r = s_eval (cand, ref, limit_s, &error);
    CHECK (r != NULL);
    if (r) {
        printf ("  %-20s %-10s %s\n", fixture, s_str (r, "verdict"), s_str (r, "detail"));
        CHECK (strcmp (s_str (r, "verdict"), verdict) == 0);
        CHECK (strstr (s_str (r, "detail"), detail_part) != NULL);
        CHECK (json_is_null (json_object_get (r, "speedup")));
    }
    else
        fprintf (stderr, "  %s: job failed: %s\n", fixture, error);
    json_decref (r);
    free (error);
    zframe_destroy (&cand);
}

int
main (int argc, char **argv)
{
    //  The evaluation child re-executes this program.
    if (argc >= 3 && strcmp (argv[1], "--eval-child") == 0)
        return kf_exec_child_main (argv[2]);
    if (getenv ("KF_FIXTURES"))
        s_fixtures = getenv ("KF_FIXTURES");

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

    //  The reference against itself is correct too (exact match).
    r = s_eval (ref, ref, 60, &error);
    CHECK (r && strcmp (s_str (r, "verdict"), "correct") == 0);
    json_decref (r);
    free (error);

    s_expect ("wrong_softmax.c", ref, 60, "incorrect", "within tolerance");
    s_expect ("oob_write.c", ref, 60, "crashed", "out-of-bounds access (SIGSEGV)");
    s_expect ("segfault.c", ref, 60, "crashed", "SIGSEGV");
    s_expect ("spin.c", ref, 1.0, "timeout", "candidate");
    s_expect ("modifies_input.c", ref, 60, "incorrect", "inputs changed");
    s_expect ("unwritten.c", ref, 60, "incorrect", "not written");

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
