/*  test_offline.c - the offline generator proposes real, correct kernels.
 *
 *  Proves: the same payload gives the same source and different seeds give
 *  different ones; a child differs from its parent in one or two
 *  parameters; bad requests get clear errors; the gateway handler shapes
 *  its result; and, for every op class, a sample of parameter points that
 *  covers every value of every parameter compiles warning-free with the
 *  system compiler and matches the example task's own C reference on
 *  random signed inputs (odd row lengths, rows shorter than the lanes)
 *  within the task's tolerance. Run from the repository root (or set
 *  KF_ROOT). KF_TEST_VERBOSE=1 also times each variant at the task's
 *  full shape, to show the spread a search has to find.
 */
#include "../../llm-gateway/kf_gateway.h"
#include "../../llm-gateway/kf_gen_offline.h"
#include "kf_kernel.h"
#include "kf_task.h"
#include "../kf_test.h"

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (kf_forward_fn) (const kf_tensor_t *, int, kf_tensor_t *, int, const kf_ctx_t *);

#define N_OPS 6
static const char *s_ops[N_OPS] = { "softmax", "rmsnorm", "layernorm", "gelu", "row_sum",
                                    "row_max" };
#define MAX_POINTS 40

static char s_tmp[64];
static char s_include[PATH_MAX];
static bool s_verbose;

static json_t *
s_task (const char *op)
{
    char path[128];
    snprintf (path, sizeof path, "examples/tasks/%s/task.json", op);
    char *err = NULL;
    json_t *task = kf_task_load (path, &err);
    if (!task)
        fprintf (stderr, "  %s\n", err);
    free (err);
    return task;
}

static char *
s_generate (json_t *task, int64_t seed, const char *parent, char **err)
{
    json_t *payload = json_pack ("{s:O, s:s, s:I, s:s}", "task", task, "language", "c", "seed",
                                 (json_int_t) seed, "prompt", "ignored");
    if (parent)
        json_object_set_new (payload, "parent",
                             json_pack ("{s:s, s:f}", "source", parent, "speedup", 1.5));
    char *source = kf_offline_generate (payload, err);
    json_decref (payload);
    return source;
}

//  Number of NAME=VALUE pairs in which two kf-params strings differ.
static int
s_param_diff (const char *a, const char *b)
{
    char *ca = strdup (a), *cb = strdup (b);
    char *sa = NULL, *sb = NULL;
    int diff = 0;
    char *ta = strtok_r (ca, " ", &sa), *tb = strtok_r (cb, " ", &sb);
    while (ta && tb) {
        diff += strcmp (ta, tb) != 0;
        ta = strtok_r (NULL, " ", &sa);
        tb = strtok_r (NULL, " ", &sb);
    }
    if (ta || tb)
        diff += 100;    //  different parameter lists: never expected
    free (ca);
    free (cb);
    return diff;
}

static void
s_test_determinism (void)
{
    for (int o = 0; o < N_OPS; o++) {
        json_t *task = s_task (s_ops[o]);
        CHECK (task != NULL);
        if (!task)
            continue;
        char *sources[8];
        int distinct = 0;
        for (int s = 0; s < 8; s++) {
            sources[s] = s_generate (task, 100 + s, NULL, NULL);
            char *again = s_generate (task, 100 + s, NULL, NULL);
            CHECK (sources[s] && again && strcmp (sources[s], again) == 0);
            free (again);
            bool seen = false;
            for (int t = 0; t < s && !seen; t++)
                seen = sources[t] && sources[s] && strcmp (sources[t], sources[s]) == 0;
            distinct += !seen;
            CHECK (sources[s] && strstr (sources[s], "/* kf-params: "));
            CHECK (sources[s] && strstr (sources[s], "/* kf-tune: "));
        }
        //  The smallest space (row max, 5 points) still gives 3 of 8.
        CHECK (distinct >= 3);

        //  Seeds 0 and 8 both give the plain baseline: the first value of
        //  every parameter.
        char *b0 = s_generate (task, 0, NULL, NULL);
        char *b8 = s_generate (task, 8, NULL, NULL);
        CHECK (b0 && b8 && strcmp (b0, b8) == 0);
        char *p0 = kf_offline_params (b0);
        CHECK (p0
               && (strncmp (p0, "LANES=1 ", 8) == 0 || strcmp (p0, "LANES=1") == 0
                   || strcmp (p0, "IMPL=libm_tanh UNROLL=1") == 0));
        free (p0);
        free (b0);
        free (b8);

        //  Children of one parent: deterministic, 1 or 2 parameters changed.
        char *parent = sources[3];
        char *pp = kf_offline_params (parent);
        int changed_two = 0;
        for (int s = 0; s < 12; s++) {
            char *child = s_generate (task, s, parent, NULL);
            char *again = s_generate (task, s, parent, NULL);
            CHECK (child && again && strcmp (child, again) == 0);
            char *cp = kf_offline_params (child);
            int d = cp && pp ? s_param_diff (pp, cp) : -1;
            if (d < 1 || d > 2)
                fprintf (stderr, "  %s: parent %s, child %s\n", s_ops[o], pp, cp);
            CHECK (d >= 1 && d <= 2);
            changed_two += d == 2;
            free (cp);
            free (child);
            free (again);
        }
        //  Row max has a single parameter, so only there can none change two.
        if (strcmp (s_ops[o], "row_max") != 0)
            CHECK (changed_two > 0);

        //  A parent without kf-params (say, written by an LLM) is not an
        //  error: the generator proposes a fresh seeded point.
        char *fresh = s_generate (task, 5, "int kf_forward (void) { return 0; }", NULL);
        char *plain = s_generate (task, 5, NULL, NULL);
        CHECK (fresh && plain && strcmp (fresh, plain) == 0);
        free (fresh);
        free (plain);
        free (pp);
        for (int s = 0; s < 8; s++)
            free (sources[s]);
        json_decref (task);
    }
}

//  "baseline": true gives the plainest point whatever the seed or parent.
static void
s_test_baseline (void)
{
    json_t *task = s_task ("softmax");
    if (!task) {
        CHECK (false);
        return;
    }
    char *plain = s_generate (task, 0, NULL, NULL);    //  seed 0: the baseline
    char *other = s_generate (task, 3, NULL, NULL);
    json_t *payload = json_pack ("{s:O, s:s, s:i, s:b, s:{s:s, s:f}}", "task", task,
                                 "language", "c", "seed", 3, "baseline", 1, "parent",
                                 "source", other ? other : "", "speedup", 2.0);
    char *err = NULL;
    char *asked = kf_offline_generate (payload, &err);
    CHECK (plain && asked && strcmp (plain, asked) == 0);
    CHECK (other && asked && strcmp (other, asked) != 0);
    free (plain);
    free (other);
    free (asked);
    free (err);
    json_decref (payload);
    json_decref (task);
}

static void
s_test_errors (void)
{
    json_t *task = s_task ("softmax");
    if (!task) {
        CHECK (false);
        return;
    }
    char *err = NULL;
    json_t *other = json_deep_copy (task);
    json_object_set_new (other, "op", json_string ("conv2d"));
    CHECK (s_generate (other, 1, NULL, &err) == NULL);
    CHECK (err && strcmp (err, "offline generator has no starter kernel for op 'conv2d'") == 0);
    free (err);
    CHECK (kf_offline_space_size (other) == -1);
    json_decref (other);

    other = json_deep_copy (task);
    json_object_set_new (json_array_get (json_object_get (other, "inputs"), 0), "dtype",
                         json_string ("f16"));
    CHECK (s_generate (other, 1, NULL, &err) == NULL);
    CHECK (err && strstr (err, "f32 only"));
    free (err);
    json_decref (other);

    json_t *payload = json_pack ("{s:O, s:s, s:i}", "task", task, "language", "sycl", "seed", 1);
    CHECK (kf_offline_generate (payload, &err) == NULL);
    CHECK (err && strstr (err, "'sycl'"));
    free (err);
    json_object_set_new (payload, "language", json_string ("c"));
    json_object_set_new (payload, "seed", json_string ("one"));
    CHECK (kf_offline_generate (payload, &err) == NULL);
    CHECK (err && strstr (err, "seed"));
    free (err);
    json_decref (payload);
    CHECK (kf_offline_generate (NULL, &err) == NULL);
    free (err);
    CHECK (kf_offline_space_size (task) == 5 * 3 * 2 * 2);
    CHECK (kf_offline_params ("no params here") == NULL);
    json_decref (task);
}

static void
s_test_gateway (void)
{
    json_t *task = s_task ("gelu");
    json_t *payload = json_pack ("{s:O, s:s, s:i, s:s}", "task", task, "language", "c", "seed",
                                 7, "prompt", "");
    kf_job_t job = { .job_id = 1, .lease = 1, .kind = "generate", .payload = payload };
    kf_job_result_t res;
    kf_gateway_handle (NULL, &job, &res);
    CHECK (res.ok);
    CHECK (res.error == NULL);
    const char *src = json_string_value (json_object_get (res.result, "source"));
    CHECK (src && strstr (src, "kf_forward"));
    CHECK (strcmp (json_string_value (json_object_get (res.result, "generator")), "offline") == 0);
    const char *params = json_string_value (json_object_get (res.result, "params"));
    CHECK (params && strstr (params, "IMPL="));
    json_decref (res.result);

    json_object_set_new (task, "op", json_string ("matmul"));
    json_object_set (payload, "task", task);
    kf_gateway_handle (NULL, &job, &res);
    CHECK (!res.ok);
    CHECK (res.error && strstr (res.error, "op 'matmul'"));
    free (res.error);
    json_decref (res.result);

    job.kind = "compile";
    kf_gateway_handle (NULL, &job, &res);
    CHECK (!res.ok && res.error);
    free (res.error);

    json_t *caps = kf_gateway_capabilities ();
    CHECK (strcmp (json_string_value (json_array_get (json_object_get (caps, "generators"), 0)),
                   "offline") == 0);
    json_decref (caps);
    json_decref (payload);
    json_decref (task);
}

//  Writes SOURCE to DIR/NAME.c; the caller compiles the whole batch.
static int
s_write (const char *name, const char *source)
{
    char path[256];
    snprintf (path, sizeof path, "%s/%s.c", s_tmp, name);
    FILE *f = fopen (path, "w");
    if (!f)
        return -1;
    fputs (source, f);
    return fclose (f);
}

//  Compiles every .c in the temp dir, two at a time (the CI box has two
//  cores), the way the exec worker's host backend would.
static int
s_compile_all (void)
{
    const char *cc = getenv ("CC") ? getenv ("CC") : "cc";
    char *cmd = NULL;
    if (asprintf (&cmd,
              "cd '%s' && ls *.c | sed 's/\\.c$//' | xargs -P 2 -I{} "
              "%s -std=c11 -O2 -shared -fPIC -Wall -Wextra -Werror -I '%s' {}.c -o {}.so -lm",
              s_tmp, cc, s_include) < 0)
        return -1;
    int rc = system (cmd);
    free (cmd);
    return rc == 0 ? 0 : -1;
}

static kf_forward_fn *
s_load (const char *name, void **handle)
{
    char path[256];
    snprintf (path, sizeof path, "%s/%s.so", s_tmp, name);
    *handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);
    if (!*handle) {
        fprintf (stderr, "  dlopen %s: %s\n", path, dlerror ());
        return NULL;
    }
    return (kf_forward_fn *) dlsym (*handle, "kf_forward");
}

static uint64_t s_rng_state = 42;

static double
s_uniform (void)
{
    s_rng_state = s_rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((s_rng_state >> 11) + 0.5) / 9007199254740992.0;
}

//  Box-Muller: signed normal samples, the inputs the evaluator uses.
static double
s_normal (double mean, double std)
{
    double u = s_uniform (), v = s_uniform ();
    return mean + std * sqrt (-2.0 * log (u)) * cos (6.283185307179586 * v);
}

typedef struct {
    kf_tensor_t in[3], out[1];
    int n_in;
    float *bufs[4];
} s_io_t;

static void
s_set (kf_tensor_t *t, float *data, int rank, int64_t d0, int64_t d1)
{
    memset (t, 0, sizeof *t);
    t->data = data;
    t->dtype = KF_F32;
    t->rank = rank;
    t->shape[0] = d0;
    t->shape[1] = d1;
    t->strides[rank - 1] = 1;
    if (rank == 2)
        t->strides[0] = d1;
}

//  Tensors for OP at ROWS x N, inputs filled with signed random values.
static void
s_io_new (s_io_t *io, const char *op, json_t *task, int64_t rows, int64_t n)
{
    memset (io, 0, sizeof *io);
    io->n_in = (int) json_array_size (json_object_get (task, "inputs"));
    double mean = strcmp (op, "layernorm") == 0 ? 2.0 : 0.0;
    io->bufs[0] = malloc (sizeof (float) * rows * n);
    for (int64_t i = 0; i < rows * n; i++)
        io->bufs[0][i] = (float) s_normal (mean, 3.0);
    s_set (&io->in[0], io->bufs[0], 2, rows, n);
    for (int k = 1; k < io->n_in; k++) {
        io->bufs[k] = malloc (sizeof (float) * n);
        for (int64_t i = 0; i < n; i++)
            io->bufs[k][i] = (float) s_normal (0.0, 1.0);
        s_set (&io->in[k], io->bufs[k], 1, n, 0);
    }
    bool reduce = strncmp (op, "row_", 4) == 0;
    io->bufs[3] = malloc (sizeof (float) * rows * n);
    if (reduce)
        s_set (&io->out[0], io->bufs[3], 1, rows, 0);
    else
        s_set (&io->out[0], io->bufs[3], 2, rows, n);
}

static void
s_io_destroy (s_io_t *io)
{
    for (int k = 0; k < 4; k++)
        free (io->bufs[k]);
}

//  Runs FN on IO with the outputs poisoned first, so an unwritten element
//  shows as NaN. Returns the kernel's status.
static int
s_run (kf_forward_fn *fn, s_io_t *io, const kf_ctx_t *ctx, float *result)
{
    int64_t m = kf_numel (&io->out[0]);
    for (int64_t i = 0; i < m; i++)
        io->bufs[3][i] = NAN;
    int rc = fn (io->in, io->n_in, io->out, 1, ctx);
    memcpy (result, io->bufs[3], sizeof (float) * m);
    return rc;
}

//  The evaluator's rule: |a - b| <= atol + rtol |b| for at least
//  min_match of the elements, and cosine similarity >= min_cosine.
static bool
s_matches (const float *got, const float *want, int64_t m, json_t *tol, const char *what)
{
    double rtol = json_real_value (json_object_get (tol, "rtol"));
    //  atol is one number, or (as kf_task fills it in) one per dtype.
    json_t *atol_v = json_object_get (tol, "atol");
    double atol = json_is_object (atol_v) ? json_number_value (json_object_get (atol_v, "f32"))
                                          : json_number_value (atol_v);
    double min_match = json_real_value (json_object_get (tol, "min_match"));
    double min_cos = json_real_value (json_object_get (tol, "min_cosine"));
    int64_t good = 0;
    double dot = 0, ng = 0, nw = 0;
    for (int64_t i = 0; i < m; i++) {
        if (isfinite (got[i]) && fabs ((double) got[i] - want[i]) <= atol + rtol * fabs (want[i]))
            good++;
        dot += (double) got[i] * want[i];
        ng += (double) got[i] * got[i];
        nw += (double) want[i] * want[i];
    }
    double cosine = ng > 0 && nw > 0 ? dot / sqrt (ng * nw) : (ng == nw ? 1.0 : 0.0);
    bool ok = (double) good >= min_match * (double) m && cosine >= min_cos;
    if (!ok)
        fprintf (stderr, "  %s: %lld/%lld elements match, cosine %.7f\n", what, (long long) good,
                 (long long) m, cosine);
    return ok;
}

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

//  Best of 5 at the task's own shape; for the verbose report only.
static double
s_time (kf_forward_fn *fn, const char *op, json_t *task, const kf_ctx_t *ctx)
{
    json_t *shape = json_object_get (json_array_get (json_object_get (task, "inputs"), 0), "shape");
    int64_t n = json_integer_value (json_array_get (shape, json_array_size (shape) - 1));
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < json_array_size (shape); i++)
        rows *= json_integer_value (json_array_get (shape, i));
    s_io_t io;
    s_io_new (&io, op, task, rows, n);
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        double t0 = s_now ();
        fn (io.in, io.n_in, io.out, 1, ctx);
        double t = s_now () - t0;
        best = t < best ? t : best;
    }
    s_io_destroy (&io);
    return best;
}

static void
s_test_candidates (void)
{
    char *sources[N_OPS][MAX_POINTS] = { { 0 } };
    int n_points[N_OPS] = { 0 };
    json_t *tasks[N_OPS];

    //  Seeds from 0 up until every value of every parameter has been
    //  proposed at least once; distinct sources only.
    for (int o = 0; o < N_OPS; o++) {
        tasks[o] = s_task (s_ops[o]);
        CHECK (tasks[o] != NULL);
        if (!tasks[o])
            continue;
        char *tune = NULL;
        for (int64_t seed = 0; seed < 200 && n_points[o] < MAX_POINTS; seed++) {
            char *src = s_generate (tasks[o], seed, NULL, NULL);
            if (!src)
                break;
            bool dup = false;
            for (int k = 0; k < n_points[o] && !dup; k++)
                dup = strcmp (sources[o][k], src) == 0;
            if (dup) {
                free (src);
                continue;
            }
            sources[o][n_points[o]++] = src;
            if (!tune) {
                const char *t = strstr (src, "kf-tune: ") + strlen ("kf-tune: ");
                tune = strndup (t, strstr (t, " */") - t);
            }
            //  Covered when each NAME=v1,v2,... value appears in some params.
            bool covered = true;
            char *copy = strdup (tune), *save = NULL;
            for (char *tok = strtok_r (copy, " ", &save); tok && covered;
                 tok = strtok_r (NULL, " ", &save)) {
                char *eq = strchr (tok, '=');
                *eq = 0;
                char *vsave = NULL;
                for (char *v = strtok_r (eq + 1, ",", &vsave); v && covered;
                     v = strtok_r (NULL, ",", &vsave)) {
                    char want[64];
                    snprintf (want, sizeof want, "%s=%s ", tok, v);
                    bool found = false;
                    for (int k = 0; k < n_points[o] && !found; k++)
                        found = strstr (sources[o][k], want) != NULL;
                    covered = found;
                }
            }
            free (copy);
            if (covered)
                break;
        }
        free (tune);
        CHECK (n_points[o] >= 5);
        for (int k = 0; k < n_points[o]; k++) {
            char name[64];
            snprintf (name, sizeof name, "%s_%02d", s_ops[o], k);
            CHECK (s_write (name, sources[o][k]) == 0);
        }
        char name[64];
        snprintf (name, sizeof name, "%s_ref", s_ops[o]);
        const char *ref = json_string_value (
            json_object_get (json_object_get (tasks[o], "reference"), "source"));
        CHECK (s_write (name, ref) == 0);
    }
    CHECK (s_compile_all () == 0);

    const int64_t shapes[][2] = { { 7, 301 }, { 3, 5 }, { 2, 64 } };
    for (int o = 0; o < N_OPS; o++) {
        if (!tasks[o])
            continue;
        json_t *tol = json_object_get (tasks[o], "tolerance");
        const char *names[] = { "eps" };
        const double values[] = { 1e-5 };
        kf_ctx_t ctx = { .backend = KF_BACKEND_HOST, .n_scalars = 1, .scalar_names = names,
                         .scalars = values };
        char name[64];
        snprintf (name, sizeof name, "%s_ref", s_ops[o]);
        void *ref_handle = NULL;
        kf_forward_fn *ref = s_load (name, &ref_handle);
        CHECK (ref != NULL);
        double ref_time = ref && s_verbose ? s_time (ref, s_ops[o], tasks[o], &ctx) : 0;
        if (s_verbose)
            printf ("%-10s reference %8.3f ms\n", s_ops[o], ref_time * 1e3);
        for (int k = 0; k < n_points[o] && ref; k++) {
            snprintf (name, sizeof name, "%s_%02d", s_ops[o], k);
            void *handle = NULL;
            kf_forward_fn *fn = s_load (name, &handle);
            CHECK (fn != NULL);
            char *params = kf_offline_params (sources[o][k]);
            for (size_t s = 0; fn && s < sizeof shapes / sizeof shapes[0]; s++) {
                s_io_t io;
                s_io_new (&io, s_ops[o], tasks[o], shapes[s][0], shapes[s][1]);
                int64_t m = kf_numel (&io.out[0]);
                float *want = malloc (sizeof (float) * m);
                float *got = malloc (sizeof (float) * m);
                CHECK (s_run (ref, &io, &ctx, want) == 0);
                CHECK (s_run (fn, &io, &ctx, got) == 0);
                char what[160];
                snprintf (what, sizeof what, "%s [%s] at %lldx%lld", s_ops[o], params,
                          (long long) shapes[s][0], (long long) shapes[s][1]);
                CHECK (s_matches (got, want, m, tol, what));
                free (want);
                free (got);
                s_io_destroy (&io);
            }
            if (fn && s_verbose) {
                double t = s_time (fn, s_ops[o], tasks[o], &ctx);
                printf ("%-10s %-44s %8.3f ms  speedup %.2f\n", s_ops[o], params, t * 1e3,
                        ref_time / t);
            }
            free (params);
            if (handle)
                dlclose (handle);
        }
        if (ref_handle)
            dlclose (ref_handle);
        for (int k = 0; k < n_points[o]; k++)
            free (sources[o][k]);
        json_decref (tasks[o]);
    }
}

int
main (void)
{
    const char *root = getenv ("KF_ROOT");
    if (root && chdir (root) != 0) {
        fprintf (stderr, "test_offline: cannot enter KF_ROOT %s\n", root);
        return 1;
    }
    s_verbose = getenv ("KF_TEST_VERBOSE") != NULL;
    if (!realpath ("common", s_include)) {
        fprintf (stderr, "test_offline: run from the repository root (or set KF_ROOT)\n");
        return 1;
    }
    snprintf (s_tmp, sizeof s_tmp, "/tmp/kf-test-offline-XXXXXX");
    if (!mkdtemp (s_tmp)) {
        perror ("mkdtemp");
        return 1;
    }
    s_test_determinism ();
    s_test_baseline ();
    s_test_errors ();
    s_test_gateway ();
    s_test_candidates ();
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_tmp);
    if (system (cmd) != 0)
        fprintf (stderr, "test_offline: could not remove %s\n", s_tmp);
    return kf_test_done ("test_offline");
}
