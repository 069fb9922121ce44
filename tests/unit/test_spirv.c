/*  test_spirv.c - OpenCL C to SPIR-V: the compile worker's spirv toolchain
 *  and the offline generator's OpenCL C starters.
 *
 *  With the real clang and llvm-spirv (Debian's clang and llvm-spirv-14):
 *  the toolchain is registered for language "opencl" and backend
 *  "level-zero"; the good fixture compiles into a KF-SPIRV bundle whose
 *  SPIR-V passes spirv-val (or, without spirv-tools, translates back to
 *  LLVM with llvm-spirv -r) and whose kf-launch line resolves against a
 *  task; a source that does not compile is a compile_failed result with
 *  clang's log, one without a kf-launch line is refused with a line that
 *  says so; a cache hit runs no compiler (clang is a wrapper that counts
 *  its runs); a tuning sweep builds each WG with its -D recorded in the
 *  bundle. Then every OpenCL starter of the offline generator, at each
 *  value of every parameter (-DNAME=VALUE, the others at the baseline),
 *  compiles to valid SPIR-V, and its kf-launch line resolves against its
 *  example task. Skipped, saying so, when clang or llvm-spirv is missing.
 *  Run from the repository root (or set KF_ROOT).
 */
#include "../../compile-worker/kf_compile.h"
#include "../../compile-worker/kf_toolchain.h"
#include "../../exec-worker/kf_ze_launch.h"
#include "../../llm-gateway/kf_gen_offline.h"
#include "kf_file.h"
#include "kf_str.h"
#include "kf_task.h"
#include "../kf_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char s_dir[64];
static const char *s_fixtures = "tests/fixtures/kernels/opencl";

static char *
s_fixture (const char *name, size_t *size)
{
    char path[256];
    snprintf (path, sizeof path, "%s/%s", s_fixtures, name);
    char *text = kf_file_read (path, 1 << 20, size);
    if (!text)
        fprintf (stderr, "test_spirv: cannot read %s\n", path);
    return text;
}

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

//  Compiles SOURCE as OpenCL C for level-zero; the result object (caller's)
//  and, when it compiled, the artifacts in *FRAMES (caller's). Not tried
//  again on failure: each sandboxed build has a uid and so a process
//  budget of its own, so another suite's fork bomb cannot make it fail.
static json_t *
s_compile (const kf_compile_config_t *cfg, const char *source, size_t size, int tune,
           zmsg_t **frames)
{
    kf_job_t job = { .job_id = 1, .kind = "compile" };
    job.payload = json_pack ("{s:s, s:{s:s}, s:i}", "language", "opencl", "target",
                             "backend", "level-zero", "tune_max_configs", tune);
    job.frames = zmsg_new ();
    zmsg_addmem (job.frames, source, size);
    kf_job_result_t res = { 0 };
    kf_compile_handle ((void *) cfg, &job, &res);
    if (!res.ok)
        fprintf (stderr, "test_spirv: compile job failed: %s\n", res.error ? res.error : "?");
    json_decref (job.payload);
    zmsg_destroy (&job.frames);
    if (frames)
        *frames = res.frames;
    else
        zmsg_destroy (&res.frames);
    free (res.error);
    return res.result;
}

static bool
s_compiled (json_t *r)
{
    return json_is_true (json_object_get (r, "compiled"));
}

static const char *
s_log (json_t *r)
{
    const char *log = json_string_value (json_object_get (r, "log"));
    return log ? log : "";
}

//  Validates the SPIR-V of bundle B: spirv-val where installed, else a
//  translation back to LLVM bitcode. Returns true when it passes.
static bool
s_valid (const kf_ze_bundle_t *b, const char *name)
{
    char path[256], cmd[1024];
    snprintf (path, sizeof path, "%s/%s.spv", s_dir, name);
    FILE *f = fopen (path, "wb");
    if (!f || fwrite (b->spirv, 1, b->spirv_size, f) != b->spirv_size) {
        if (f)
            fclose (f);
        return false;
    }
    fclose (f);
    if (system ("command -v spirv-val >/dev/null 2>&1") == 0)
        snprintf (cmd, sizeof cmd, "spirv-val %s", path);
    else {
        char *spirv = kf_toolchain_which ("llvm-spirv", NULL);
        if (!spirv)
            spirv = kf_toolchain_which ("llvm-spirv-14", NULL);
        snprintf (cmd, sizeof cmd, "%s -r %s -o %s.bc", spirv ? spirv : "llvm-spirv", path, path);
        free (spirv);
    }
    int rc = system (cmd);
    if (rc != 0)
        fprintf (stderr, "test_spirv: %s: validation failed (%s)\n", name, cmd);
    return rc == 0;
}

static json_t *
s_softmax_task (int rows, int cols)
{
    return json_pack ("{s:[{s:s, s:[i,i], s:s}], s:[{s:s, s:[i,i], s:s}], s:{}}",
                      "inputs", "name", "x", "shape", rows, cols, "dtype", "f32",
                      "outputs", "name", "y", "shape", rows, cols, "dtype", "f32", "scalars");
}

static void
s_fixtures_test (void)
{
    char cache[128];
    snprintf (cache, sizeof cache, "%s/cache", s_dir);
    kf_compile_config_t cfg = { .time_limit_s = 60, .cache_dir = cache,
                                .cache_max_bytes = 64 << 20 };
    size_t size;
    char *good = s_fixture ("good_softmax.cl", &size);
    if (!good)
        return;

    //  The good source: a bundle with valid SPIR-V and a launch plan.
    zmsg_t *frames = NULL;
    json_t *r = s_compile (&cfg, good, size, 1, &frames);
    int after_first = s_runs ();
    CHECK (r && s_compiled (r) && !json_is_true (json_object_get (r, "cached")));
    CHECK (after_first >= 1);
    CHECK (strstr (json_string_value (json_object_get (r, "toolchain")), "clang version"));
    zframe_t *art = frames ? zmsg_first (frames) : NULL;
    kf_ze_bundle_t b;
    char why[400] = "";
    CHECK (art && kf_ze_is_bundle (zframe_data (art), zframe_size (art)));
    CHECK (art && kf_ze_bundle_parse (zframe_data (art), zframe_size (art), &b, why,
                                      sizeof why) == 0);
    if (art && why[0] == 0) {
        CHECK (b.source_size == size && memcmp (b.source, good, size) == 0);
        CHECK (b.n_defines == 0);
        CHECK (s_valid (&b, "good_softmax"));
        json_t *task = s_softmax_task (100, 1000);
        kf_ze_plan_t plan;
        CHECK (kf_ze_plan (&b, task, &plan, why, sizeof why) == 0);
        CHECK (plan.n_launches == 1 && !strcmp (plan.launches[0].kernel, "softmax_rows"));
        CHECK (plan.launches[0].local[0] == 128 && plan.launches[0].groups[0] == 100);
        CHECK (plan.launches[0].n_args == 3 && plan.launches[0].args[2].kind == KF_ZE_ARG_VALUE);
        json_decref (task);
        printf ("  good_softmax.cl: %zu-byte bundle, %zu bytes of SPIR-V, valid\n",
                zframe_size (art), b.spirv_size);
    }
    char hash1[65];
    snprintf (hash1, sizeof hash1, "%s", json_string_value (json_object_get (r, "artifact_hash")));
    json_decref (r);
    zmsg_destroy (&frames);

    //  Again: a cache hit, the same artifact, no compiler run at all.
    r = s_compile (&cfg, good, size, 1, NULL);
    CHECK (r && s_compiled (r) && json_is_true (json_object_get (r, "cached")));
    CHECK (r && !strcmp (json_string_value (json_object_get (r, "artifact_hash")), hash1));
    CHECK (s_runs () == after_first);
    json_decref (r);

    //  A tuning sweep: every WG built, each -D recorded in its bundle.
    r = s_compile (&cfg, good, size, 4, &frames);
    json_t *configs = json_object_get (r, "configs");
    CHECK (r && s_compiled (r) && json_array_size (configs) == 3);
    int with_define = 0;
    for (zframe_t *f = frames ? zmsg_first (frames) : NULL; f; f = zmsg_next (frames)) {
        kf_ze_bundle_t tb;
        if (kf_ze_bundle_parse (zframe_data (f), zframe_size (f), &tb, why, sizeof why) == 0
            && tb.n_defines == 1 && !strcmp (tb.define_name[0], "WG")) {
            with_define++;
            json_t *task = s_softmax_task (8, 300);
            kf_ze_plan_t plan;
            CHECK (kf_ze_plan (&tb, task, &plan, why, sizeof why) == 0
                   && plan.launches[0].local[0] == (uint64_t) atoi (tb.define_value[0]));
            json_decref (task);
        }
    }
    CHECK (with_define == 3);
    printf ("  tuning sweep: %zu configs, %d bundles with their WG\n", json_array_size (configs),
            with_define);
    json_decref (r);
    zmsg_destroy (&frames);
    free (good);

    //  A compile error: compile_failed with clang's own words.
    char *bad = s_fixture ("bad_syntax.cl", &size);
    r = bad ? s_compile (&cfg, bad, size, 1, NULL) : NULL;
    CHECK (r && !s_compiled (r) && json_is_null (json_object_get (r, "artifact_hash")));
    CHECK (strstr (s_log (r), "kernel.cl:") && strstr (s_log (r), "undeclared_factor")
           && strstr (s_log (r), "error"));
    printf ("  bad_syntax.cl: %.*s\n", (int) strcspn (s_log (r), "\n"), s_log (r));
    json_decref (r);
    free (bad);

    //  No kf-launch line: refused before compiling, saying why.
    char *none = s_fixture ("no_launch.cl", &size);
    r = none ? s_compile (&cfg, none, size, 1, NULL) : NULL;
    CHECK (r && !s_compiled (r) && strstr (s_log (r), "no kf-launch: line"));
    printf ("  no_launch.cl: %.*s\n", (int) strcspn (s_log (r), "\n"), s_log (r));
    json_decref (r);
    free (none);

    //  The other fixtures compile (they are judged on hardware).
    static const char *const others[] = { "ref_softmax.cl", "wrong_softmax.cl",
                                          "oob_write.cl", "bad_launch.cl", NULL };
    for (int i = 0; others[i]; i++) {
        char *src = s_fixture (others[i], &size);
        r = src ? s_compile (&cfg, src, size, 1, NULL) : NULL;
        CHECK (r && s_compiled (r));
        if (r && !s_compiled (r))
            fprintf (stderr, "%s: %s\n", others[i], s_log (r));
        json_decref (r);
        free (src);
    }
}

//  Every OpenCL starter, once per value of each parameter.
static void
s_starters_test (void)
{
    static const char *const ops[] = { "softmax", "rmsnorm", "layernorm", "gelu", "row_sum",
                                       "row_max" };
    kf_compile_config_t cfg = { .time_limit_s = 60, .tune_parallel = 2 };
    int built = 0, valid = 0, planned = 0, values = 0, artifacts = 0;
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        char path[128];
        snprintf (path, sizeof path, "examples/tasks/%s/task.json", ops[o]);
        char *err = NULL;
        json_t *task = kf_task_load (path, &err);
        CHECK (task != NULL);
        if (!task) {
            fprintf (stderr, "%s: %s\n", path, err);
            free (err);
            continue;
        }
        json_t *payload = json_pack ("{s:O, s:s, s:i, s:b}", "task", task, "language",
                                     "opencl", "seed", 1, "baseline", 1);
        char *src = kf_offline_generate (payload, &err);
        CHECK (src && strstr (src, "for the Level Zero (OpenCL C) backend"));
        CHECK (src && strstr (src, "__kernel") && strstr (src, "kf-launch: kf_"));
        CHECK (src && strstr (src, "kf-tune: WG=256,64,128,512 VEC=1,2,4"));
        if (!src) {
            fprintf (stderr, "%s: %s\n", ops[o], err);
            free (err);
            json_decref (payload);
            json_decref (task);
            continue;
        }
        //  The same seed, the same source; another seed, another point.
        char *again = kf_offline_generate (payload, &err);
        CHECK (again && !strcmp (again, src));
        free (again);
        json_object_set_new (payload, "baseline", json_false ());
        json_object_set_new (payload, "seed", json_integer (3));
        char *other = kf_offline_generate (payload, &err);
        CHECK (other && strstr (other, "kf-params: WG="));
        free (other);

        //  The compile worker's own tuning sweep: the defaults, then every
        //  one-parameter neighbour (each value of each parameter), then
        //  points spread over the rest, up to 16, two builds at a time.
        zmsg_t *frames = NULL;
        json_t *r = s_compile (&cfg, src, strlen (src), 16, &frames);
        CHECK (r && s_compiled (r));
        json_t *configs = json_object_get (r, "configs");
        char seen[1024] = " ";
        size_t k;
        json_t *row;
        json_array_foreach (configs, k, row) {
            const char *name;
            json_t *value;
            json_object_foreach (json_object_get (row, "params"), name, value) {
                char pair[80];
                if (json_is_integer (value))
                    snprintf (pair, sizeof pair, "%s=%lld ", name,
                              (long long) json_integer_value (value));
                else
                    snprintf (pair, sizeof pair, "%s=%s ", name, json_string_value (value));
                if (!strstr (seen, pair) && strlen (seen) + strlen (pair) < sizeof seen)
                    strcat (seen, pair);
            }
            if (!json_is_true (json_object_get (row, "compiled")))
                fprintf (stderr, "%s config %zu: %s\n", ops[o], k,
                         json_string_value (json_object_get (row, "log")));
            else
                built++;
        }
        //  Every value of every parameter was among them.
        char *tune = strstr (src, "kf-tune:");
        char line[256] = "";
        if (tune)
            sscanf (tune + 8, " %255[^*]", line);
        char *save = NULL;
        for (char *tok = strtok_r (line, " ", &save); tok; tok = strtok_r (NULL, " ", &save)) {
            char *eq = strchr (tok, '=');
            if (!eq)
                continue;
            *eq = 0;
            char *vsave = NULL;
            for (char *v = strtok_r (eq + 1, ",", &vsave); v; v = strtok_r (NULL, ",", &vsave)) {
                char pair[80];
                snprintf (pair, sizeof pair, " %s=%s ", tok, v);
                CHECK (strstr (seen, pair) != NULL);
                values++;
            }
        }
        //  Each artifact: valid SPIR-V and a launch that resolves.
        int n = 0;
        for (zframe_t *art = frames ? zmsg_first (frames) : NULL; art; art = zmsg_next (frames)) {
            kf_ze_bundle_t b;
            kf_ze_plan_t plan;
            char why[400], name[64];
            snprintf (name, sizeof name, "%s-%d", ops[o], n++);
            if (kf_ze_bundle_parse (zframe_data (art), zframe_size (art), &b, why,
                                    sizeof why) == 0) {
                valid += s_valid (&b, name);
                if (kf_ze_plan (&b, task, &plan, why, sizeof why) == 0)
                    planned++;
                else
                    fprintf (stderr, "%s: %s\n", name, why);
            }
        }
        artifacts += n;
        json_decref (r);
        zmsg_destroy (&frames);
        free (src);
        json_decref (payload);
        json_decref (task);
    }
    printf ("  offline OpenCL starters: %d variants built (all %d parameter values among "
            "them), %d artifacts: %d valid SPIR-V, %d launch plans\n", built, values,
            artifacts, valid, planned);
    //  softmax 4+3+3+2 values, rmsnorm 4+3+3, layernorm 4+3+3+2, gelu
    //  4+3+3, row_sum and row_max 4+3+3 each.
    CHECK (values == 12 + 10 + 12 + 10 + 10 + 10);
    CHECK (built >= 6 * 10 && artifacts == built);
    CHECK (valid == artifacts);
    CHECK (planned == artifacts);
}

int
main (void)
{
    const char *root = getenv ("KF_ROOT");
    if (root && chdir (root) != 0)
        return 1;
    const kf_toolchain_t *tc = kf_toolchain_for_language ("opencl");
    CHECK (tc && !strcmp (tc->name, "spirv") && !strcmp (tc->backend, "level-zero"));
    char *program = tc ? tc->find () : NULL;
    if (!program) {
        printf ("clang or llvm-spirv not found: SPIR-V checks skipped\n");
        return kf_test_done ("test_spirv");
    }
    free (program);
    json_t *caps = kf_compile_capabilities ();
    const char *version = json_string_value (json_object_get (
        json_object_get (caps, "toolchains"), "spirv"));
    CHECK (version && strstr (version, "clang version"));
    bool listed = false;
    size_t i;
    json_t *b;
    json_array_foreach (json_object_get (caps, "backends"), i, b)
        listed |= !strcmp (json_string_value (b), "level-zero");
    CHECK (listed);
    printf ("  toolchain spirv: %s\n", version ? version : "?");
    json_decref (caps);

    snprintf (s_dir, sizeof s_dir, "/tmp/kf-spirv-test-XXXXXX");
    if (!mkdtemp (s_dir))
        return 1;
    //  A clang that logs each run and hands over to the real one, first on
    //  PATH, so the cache test can count compiler runs.
    char *real = kf_toolchain_which ("clang", NULL);
    if (!real)
        real = kf_toolchain_which ("clang-14", NULL);
    char path[256];
    snprintf (path, sizeof path, "%s/clang", s_dir);
    FILE *f = fopen (path, "w");
    fprintf (f, "#!/bin/sh\necho run >> %s/runs\nexec %s \"$@\"\n", s_dir, real);
    fclose (f);
    free (real);
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
    char *old_path = getenv ("PATH") ? strdup (getenv ("PATH")) : strdup ("/usr/bin:/bin");
    char *new_path = kf_strdupf ("%s:%s", s_dir, old_path);
    setenv ("PATH", new_path, 1);

    s_fixtures_test ();
    s_starters_test ();

    setenv ("PATH", old_path, 1);
    free (old_path);
    free (new_path);
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf %s", s_dir);
    if (system (cmd) != 0)
        fprintf (stderr, "cannot remove %s\n", s_dir);
    return kf_test_done ("test_spirv");
}
