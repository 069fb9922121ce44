/*  test_compile_cache.c - a compile-cache hit runs no compiler: `cc` is a
 *  wrapper that counts its runs; the same source twice is one build (a
 *  compiler run, a preprocessor run and a run for the vectoriser's report,
 *  both for the coordinates of what it built) and the same artifact; another arch or source is a miss; a
 *  source that does not compile is remembered too (and not preprocessed),
 *  but a compiler that failed without pointing into the source (it could
 *  not fork) is not; a cap trims the folder. */
#include "../../compile-worker/kf_compile.h"
#include "../../compile-worker/kf_compile_cache.h"
#include "../kf_test.h"
#include "kf_str.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char s_dir[64];

static int
s_runs (void)
{
    char path[128];
    snprintf (path, sizeof path, "%s/runs", s_dir);
    FILE *f = fopen (path, "r");
    if (!f)
        return 0;
    int n = 0, c;
    while ((c = fgetc (f)) != EOF)
        n += c == '\n';
    fclose (f);
    return n;
}

static json_t *
s_compile (const kf_compile_config_t *cfg, const char *source, const char *arch,
           char hash[65])
{
    kf_job_t job = { .job_id = 1, .kind = "compile" };
    job.payload = json_pack ("{s:s, s:{s:s, s:s}}", "language", "c", "target",
                             "backend", "host", "arch", arch);
    job.frames = zmsg_new ();
    zmsg_addmem (job.frames, source, strlen (source));
    kf_job_result_t res = { 0 };
    kf_compile_handle ((void *) cfg, &job, &res);
    hash[0] = 0;
    if (res.result && json_is_true (json_object_get (res.result, "compiled")))
        snprintf (hash, 65, "%s", json_string_value (json_object_get (res.result, "artifact_hash")));
    json_decref (job.payload);
    zmsg_destroy (&job.frames);
    zmsg_destroy (&res.frames);
    free (res.error);
    return res.result;
}

static bool
s_cached (json_t *r)
{
    return json_is_true (json_object_get (r, "cached"));
}

int
main (void)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/kf-cache-test-XXXXXX");
    if (!mkdtemp (s_dir))
        return 1;
    chmod (s_dir, 0755);
    /* A cc that logs each run and hands over to the real compiler. */
    char path[256], cache[128];
    snprintf (path, sizeof path, "%s/cc", s_dir);
    FILE *f = fopen (path, "w");
    fprintf (f, "#!/bin/sh\necho run >> %s/runs\n"
                "if grep -qs KF_TEST_NOFORK kernel.c; then\n"
                "    echo 'cc: fatal error: cannot fork: Resource temporarily unavailable' >&2\n"
                "    exit 1\nfi\n"
                "exec /usr/bin/cc \"$@\"\n", s_dir);
    fclose (f);
    chmod (path, 0755);
    chmod (s_dir, 0777);   /* the sandboxed compiler writes its run log here */
    /* Each build runs as a uid of its own: the log must take all of them. */
    snprintf (path, sizeof path, "%s/runs", s_dir);
    f = fopen (path, "w");
    if (f)
        fclose (f);
    chmod (path, 0666);
    /* Sandboxed children see only an allow-list of the host: the log's
     * folder is shared with them, as eval_shared_dir is (kf_sandbox.h). */
    setenv ("KF_SANDBOX_SHARE", s_dir, 1);
    char *old_path = getenv ("PATH") ? strdup (getenv ("PATH")) : strdup ("/usr/bin");
    char *new_path = kf_strdupf ("%s:%s", s_dir, old_path);
    setenv ("PATH", new_path, 1);
    snprintf (cache, sizeof cache, "%s/cache", s_dir);
    kf_compile_config_t cfg = { .time_limit_s = 60, .cache_dir = cache,
                                .cache_max_bytes = 64 << 20 };
    const char *good = "#include \"kf_kernel.h\"\n"
                       "int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out,\n"
                       "                int n_out, const kf_ctx_t *ctx)\n"
                       "{ (void) in; (void) n_in; (void) out; (void) n_out; (void) ctx; return 0; }\n";
    const char *bad = "int kf_forward (void) { return syntax error; }\n";
    char h1[65], h2[65], h3[65];

    json_t *r = s_compile (&cfg, good, "x86_64", h1);
    int after_first = s_runs ();
    CHECK (r && json_is_true (json_object_get (r, "compiled")) && !s_cached (r));
    CHECK (after_first >= 1);
    json_decref (r);
    r = s_compile (&cfg, good, "x86_64", h2);
    CHECK (r && s_cached (r));
    CHECK (s_runs () == after_first);              /* no compiler run at all */
    CHECK (*h1 && !strcmp (h1, h2));               /* the same artifact */
    json_decref (r);
    /* Host builds use -march=native whatever the target names, so another
     * arch is the same command and a hit; another source is a miss. */
    r = s_compile (&cfg, good, "znver3", h3);
    CHECK (r && s_cached (r) && s_runs () == after_first);
    json_decref (r);
    char *other = kf_strdupf ("%s/* another */\n", good);
    r = s_compile (&cfg, other, "x86_64", h3);
    CHECK (r && !s_cached (r) && s_runs () == after_first + 2); /* build, preprocess */
    CHECK (json_array_size (json_object_get (r, "coords")) == 3);
    CHECK (*h3 != 0);
    free (other);
    json_decref (r);
    r = s_compile (&cfg, bad, "x86_64", h3);
    CHECK (r && !json_is_true (json_object_get (r, "compiled")) && !s_cached (r));
    int runs = s_runs ();
    json_decref (r);
    r = s_compile (&cfg, bad, "x86_64", h3);
    CHECK (r && !json_is_true (json_object_get (r, "compiled")) && s_cached (r));
    CHECK (strstr (json_string_value (json_object_get (r, "log")), "error") != NULL);
    CHECK (s_runs () == runs);
    json_decref (r);
    /* A failure that names no place in the source says nothing lasting
     * about it: the next build of the same source runs the compiler again. */
    char *nofork = kf_strdupf ("%s/* KF_TEST_NOFORK */\n", good);
    r = s_compile (&cfg, nofork, "x86_64", h3);
    CHECK (r && !json_is_true (json_object_get (r, "compiled")) && !s_cached (r));
    json_decref (r);
    r = s_compile (&cfg, nofork, "x86_64", h3);
    CHECK (r && !s_cached (r) && s_runs () == runs + 2);
    json_decref (r);
    free (nofork);
    runs = s_runs ();
    /* No cache folder: always a compiler run. */
    kf_compile_config_t none = { .time_limit_s = 60 };
    r = s_compile (&none, good, "x86_64", h3);
    CHECK (r && !s_cached (r) && s_runs () == runs + 2);
    json_decref (r);
    /* A cap smaller than one artifact leaves the folder trimmed. */
    CHECK (kf_compile_cache_put (cache, "0000", "xx", 2, "log", 1) == 0);
    void *so;
    size_t size;
    char *log;
    CHECK (!kf_compile_cache_get (cache, "0000", &so, &size, &log));

    setenv ("PATH", old_path, 1);
    free (old_path);
    free (new_path);
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf %s", s_dir);
    if (system (cmd) != 0)
        return 1;
    return kf_test_done ("test_compile_cache");
}
