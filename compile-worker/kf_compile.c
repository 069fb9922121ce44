/*  kf_compile.c - the compile worker's job handler.
 *
 *  Each job gets a private directory holding the source and a copy of
 *  kf_kernel.h (built into this binary, so a deployed worker needs no
 *  repository), and the compiler runs in a sandboxed child with a time
 *  limit and an output cap: a compiler can be made to loop or to print
 *  without end by a hostile source. The compiler's log goes back into
 *  the next prompt, so it is trimmed to what helps a model fix the code:
 *  error lines first, temporary paths stripped, 4 KiB at most.
 *
 *  The archive coordinates of a kernel are computed here too, from the
 *  code the compiler really built: the source preprocessed with the
 *  build's own -D flags, reduced to the lines of the candidate's file. A
 *  template whose variants sit behind #if branches (the offline
 *  generator's, a kf-tune source) is otherwise classified by every branch
 *  at once, and every variant lands in one cell.
 */
#include "kf_compile.h"
#include "kf_task.h"
#include "kf_compile_cache.h"
#include "kf_hash.h"
#include "kf_log.h"
#include "kf_msg_compile.h"
#include "kf_file.h"
#include "kf_subproc.h"
#include "kf_toolchain.h"
#include "kf_take.h"
#include "kf_tune.h"
#include "kf_descriptor.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

//  The kernel contract header, embedded by the build (common/embed.sh),
//  so a deployed worker needs no repository and the generator, the
//  compiler and the evaluator can never disagree about the ABI.
extern const char kf_contract_text[];

const char *
kf_compile_kernel_header (size_t *size)
{
    if (size)
        *size = strlen (kf_contract_text);
    return kf_contract_text;
}

int
kf_compile_uses_managed (const char *source, size_t size, const char **what)
{
    //  Managed memory can be over-subscribed into host memory and stall
    //  a GPU other jobs share; no legitimate kernel under this contract
    //  needs it (tensors arrive already on the device).
    static const char *const banned[] = {
        "cudaMallocManaged", "__managed__", "cudaMemAdvise",
        "cudaMemPrefetchAsync", NULL
    };
    for (int i = 0; banned[i]; i++)
        if (memmem (source, size, banned[i], strlen (banned[i]))) {
            if (what)
                *what = banned[i];
            return 1;
        }
    return 0;
}

//  A JSON string of TEXT even when the compiler printed bytes that are not
//  UTF-8 (jansson refuses those): such bytes become '?'.
static json_t *
s_json_text (const char *text)
{
    json_t *s = json_string (text);
    if (s)
        return s;
    char *copy = strdup (text);
    if (!copy)
        return json_string ("");
    for (char *p = copy; *p; p++)
        if ((unsigned char) *p >= 0x80)
            *p = '?';
    s = json_string (copy);
    free (copy);
    return s ? s : json_string ("");
}

//  Fills RES with the verdict "did not compile" and LOG as the reason.
static void
s_not_compiled (kf_job_result_t *res, const char *toolchain, const char *log,
                double wall_s)
{
    json_t *r = json_object ();
    json_object_set_new (r, "compiled", json_false ());
    json_object_set_new (r, "artifact_hash", json_null ());
    json_object_set_new (r, "toolchain", json_string (toolchain ? toolchain : ""));
    json_object_set_new (r, "log", s_json_text (log));
    json_object_set_new (r, "wall_s", json_real (wall_s));
    res->ok = true;
    res->result = r;
}

static void
s_compiled (kf_job_result_t *res, const char *toolchain, const void *so, size_t so_size,
            const char *log, double wall_s, bool cached)
{
    char hash[65];
    kf_sha256_hex (so, so_size, hash);
    json_t *r = json_object ();
    json_object_set_new (r, "compiled", json_true ());
    json_object_set_new (r, "artifact_hash", json_string (hash));
    json_object_set_new (r, "toolchain", json_string (toolchain));
    json_object_set_new (r, "log", s_json_text (log));
    json_object_set_new (r, "wall_s", json_real (wall_s));
    json_object_set_new (r, "cached", json_boolean (cached));
    res->ok = true;
    res->result = r;
    res->frames = zmsg_new ();
    zmsg_addmem (res->frames, so, so_size);
}

//  What every build of one job shares; read-only while builds run, so the
//  tuning threads need no lock for it.
typedef struct {
    const kf_compile_config_t *cfg;
    const kf_toolchain_t *tc;
    const char *program;
    const char *toolchain;   //  version line, or the toolchain's name
    const char *arch;
    const char *source;
    size_t source_size;
    double time_limit;
    size_t output_cap;
    bool reference;          //  the run's reference: no coordinates
    const char *libraries[4];  //  the task's vendor libraries, NULL-terminated
} s_ctx_t;

//  One build: the -D flags in, the outcome out. ERROR set means the build
//  could not be attempted (no temporary directory, no fork): the worker's
//  trouble, not the source's.
typedef struct {
    char defines[KF_TUNE_MAX_PARAMS][2 * KF_TUNE_TOKEN_MAX + 4];
    int n_defines;
    bool want_coords;        //  classify what this build compiled
    json_t *coords;          //  {coords, coords_why} or {coords_error}
    char *error;
    bool compiled;
    bool cached;
    void *so;
    size_t so_size;
    char *log;
    double wall_s;
} s_build_t;

static void
s_build_error (s_build_t *b, const char *what, int err)
{
    char msg[300];
    snprintf (msg, sizeof msg, "%s: %s", what, strerror (err));
    b->error = strdup (msg);
}

//  Classifies the source B built, preprocessed in DIR (which holds the
//  source and the header) with B's -D flags; VECTORISED is the number of
//  loops the build's own vectoriser report says it vectorised (-1: no
//  report). The answer is cached under
//  the preprocessing command's own key, so a build that was a cache hit
//  costs no compiler run for its coordinates either. Sets B->coords.
static void
s_classify_built (const s_ctx_t *ctx, s_build_t *b, const char *dir,
                  const kf_subproc_limits_t *limits_in, int vectorised)
{
    const kf_toolchain_t *tc = ctx->tc;
    if (!tc->preprocess)
        return;   //  a toolchain that cannot say: the coordinator keeps its own
    char *argv[32 + KF_TUNE_MAX_PARAMS], buf[256];
    kf_toolchain_args_t args = {
        .source = tc->source_name, .output = "kernel.i",
        .include_dir = ".", .arch = ctx->arch
    };
    if (tc->preprocess (ctx->program, &args, argv, 32, buf, sizeof buf) != 0) {
        b->coords = json_pack ("{s:s}", "coords_error", "cannot build the preprocessor command");
        return;
    }
    int argc = 0;
    while (argv[argc])
        argc++;
    for (int i = 0; i < b->n_defines; i++)
        argv[argc++] = b->defines[i];
    argv[argc] = NULL;
    size_t header_size;
    const char *header = kf_compile_kernel_header (&header_size);
    const char *cache_dir = ctx->cfg ? ctx->cfg->cache_dir : NULL;
    char key[65];
    kf_compile_cache_key (ctx->toolchain, argv, header, header_size, ctx->source,
                          ctx->source_size, key);
    void *unused = NULL;
    size_t unused_size = 0;
    char *stored = NULL;
    if (kf_compile_cache_get (cache_dir, key, &unused, &unused_size, &stored)) {
        free (unused);
        b->coords = stored ? json_loads (stored, 0, NULL) : NULL;
        free (stored);
        json_t *rules = json_object_get (b->coords, "rules");
        if (json_is_array (json_object_get (b->coords, "coords"))
            && json_integer_value (rules) == KF_DESCRIPTOR_RULES) {
            json_object_del (b->coords, "rules");
            return;
        }
        json_decref (b->coords);
        b->coords = NULL;
    }
    kf_subproc_limits_t limits = *limits_in;
    limits.workdir = dir;
    kf_subproc_result_t run;
    if (kf_subproc_run (argv, &limits, &run) != 0) {
        b->coords = json_pack ("{s:s}", "coords_error", "cannot run the preprocessor");
        return;
    }
    char path[4200];
    snprintf (path, sizeof path, "%s/kernel.i", dir);
    size_t size = 0;
    char *text = run.exit_code == 0 && !run.timed_out
                     ? kf_file_read (path, (size_t) 256 << 20, &size) : NULL;
    kf_subproc_result_free (&run);
    if (!text) {
        b->coords = json_pack ("{s:s}", "coords_error", "the preprocessor failed");
        return;
    }
    char *own = kf_compile_own_lines (text, size, tc->source_name);
    free (text);
    if (own && !strcmp (tc->language, "cuda"))
        kf_compile_cuda_keywords (own);
    kf_coords_t c;
    char *why = NULL;
    if (!own
        || kf_descriptor_classify_built (own, strlen (own), tc->language, vectorised, &c, &why) != 0)
        b->coords = json_pack ("{s:s}", "coords_error", "cannot classify the preprocessed source");
    else
        b->coords = json_pack ("{s:[i,i,i], s:s}", "coords", c.mem, c.algo, c.sync,
                               "coords_why", why ? why : "");
    free (own);
    free (why);
    if (json_is_array (json_object_get (b->coords, "coords"))) {
        json_object_set_new (b->coords, "rules", json_integer (KF_DESCRIPTOR_RULES));
        char *entry = json_dumps (b->coords, JSON_COMPACT);
        json_object_del (b->coords, "rules");
        if (entry)
            kf_compile_cache_put (cache_dir, key, NULL, 0, entry,
                                  ctx->cfg ? ctx->cfg->cache_max_bytes : 0);
        free (entry);
    }
}

//  Adds TEXT (taken; NULL adds nothing) to B's log on a line of its own.
static void
s_log_add (s_build_t *b, char *text)
{
    if (!text)
        return;
    size_t len = strlen (b->log) + strlen (text) + 2;
    char *log = malloc (len);
    if (log) {
        snprintf (log, len, "%s%s%s", b->log, *b->log && b->log[strlen (b->log) - 1] != '\n'
                                                  ? "\n" : "", text);
        free (b->log);
        b->log = log;
    }
    free (text);
}

//  The vectoriser's report the build wrote to DIR/vec.txt, summarised
//  (kf_compile_vec_summary) and added to B's log, so the compile cache
//  keeps it with the artifact; *VECTORISED gets its count of loops.
static void
s_add_report (s_build_t *b, const char *dir, const s_ctx_t *ctx, const char *source_name,
              int *vectorised)
{
    if (*vectorised < 0)
        return;
    char path[4200];
    snprintf (path, sizeof path, "%s/vec.txt", dir);
    size_t size = 0;
    char *report = kf_file_read (path, (size_t) 16 << 20, &size);
    //  The source too: intrinsics the report does not name still get
    //  the explicit-SIMD note (kf_compile_vec_summary_src).
    char *summary = report ? kf_compile_vec_summary_src (report, source_name, ctx->source,
                                                         ctx->source_size, vectorised)
                           : NULL;
    free (report);
    s_log_add (b, summary);
}

//  The loops vectorised by a cached build, from its log's summary: 0 when
//  the build asked for a report and it said nothing, -1 without one.
static int
s_logged_loops (const char *log, bool report)
{
    const char *mark = report && log ? strstr (log, KF_COMPILE_VEC_MARK) : NULL;
    int loops = 0;
    if (mark)
        sscanf (mark + strlen (KF_COMPILE_VEC_MARK), " %d", &loops);
    return report ? loops : -1;
}

//  Builds the context's source with B's -D flags, through the cache.
static void
s_build (const s_ctx_t *ctx, s_build_t *b)
{
    const kf_toolchain_t *tc = ctx->tc;
    const kf_compile_config_t *cfg = ctx->cfg;
    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = ctx->time_limit;
    limits.output_cap = ctx->output_cap;
    char *dir = kf_subproc_mkdtemp (&limits);
    if (!dir) {
        s_build_error (b, "cannot make a temporary directory", errno);
        return;
    }
    size_t header_size;
    const char *header = kf_compile_kernel_header (&header_size);
    if (kf_file_write (dir, tc->source_name, ctx->source, ctx->source_size) != 0
        || kf_file_write (dir, "kf_kernel.h", header, header_size) != 0) {
        s_build_error (b, "cannot write the source", errno);
        goto done;
    }
    limits.workdir = dir;

    //  The -D flags go last: both cc and nvcc take options anywhere, and
    //  being part of argv they are part of the cache key.
    char *argv[32 + KF_TUNE_MAX_PARAMS], buf[256];
    //  GCC writes its vectoriser's report as it builds (clang has no such
    //  option): the summary rides on the log to the prompts of the
    //  kernel's children, and the count to the memory coordinate.
    bool report = !strcmp (tc->name, "cc") && !strstr (ctx->toolchain ? ctx->toolchain : "",
                                                        "clang");
    kf_toolchain_args_t args = {
        .source = tc->source_name, .output = "kernel.so",
        .include_dir = ".", .arch = ctx->arch, .libraries = ctx->libraries,
        .opt_report = report ? "vec.txt" : NULL
    };
    if (tc->command (ctx->program, &args, argv, 32, buf, sizeof buf) != 0) {
        s_build_error (b, "cannot build the compiler command line", EINVAL);
        goto done;
    }
    int argc = 0;
    while (argv[argc])
        argc++;
    for (int i = 0; i < b->n_defines; i++)
        argv[argc++] = b->defines[i];
    argv[argc] = NULL;

    const char *cache_dir = cfg ? cfg->cache_dir : NULL;
    char key[65];
    kf_compile_cache_key (ctx->toolchain, argv, header, header_size, ctx->source,
                          ctx->source_size, key);
    if (kf_compile_cache_get (cache_dir, key, &b->so, &b->so_size, &b->log)) {
        b->compiled = b->so != NULL;
        b->cached = true;
        if (!b->log)
            b->log = strdup ("");
        if (b->compiled && b->want_coords)
            s_classify_built (ctx, b, dir, &limits, s_logged_loops (b->log, report));
        goto done;
    }
    kf_subproc_result_t run;
    if (kf_subproc_run (argv, &limits, &run) != 0) {
        s_build_error (b, "cannot run the compiler", errno);
        goto done;
    }
    int vectorised = report ? 0 : -1;
    char *log = kf_compile_trim_log (run.output, dir, KF_COMPILE_LOG_MAX);
    char so_path[4200];
    snprintf (so_path, sizeof so_path, "%s/kernel.so", dir);
    b->wall_s = run.wall_s;
    if (run.exit_code == 0 && !run.timed_out)
        b->so = kf_file_read (so_path, (size_t) 1 << 30, &b->so_size);
    if (!b->so) {
        char head[160] = "";
        if (run.timed_out)
            snprintf (head, sizeof head, "compile timed out after %.0f s\n", ctx->time_limit);
        else if (run.signal)
            snprintf (head, sizeof head, "compiler killed by signal %d\n", run.signal);
        else if (run.exit_code == 0)
            snprintf (head, sizeof head, "compiler reported success but wrote no shared object\n");
        size_t len = strlen (head) + strlen (log ? log : "") + 1;
        b->log = malloc (len);
        if (b->log)
            snprintf (b->log, len, "%s%s", head, log ? log : "");
        else
            b->log = strdup (head);
        /* A timeout, a killed compiler or one that could not fork its
         * passes (a host out of processes; with KF_SANDBOX_USER, another
         * job's fork bomb holding that user's process budget) says nothing
         * lasting about the source: only a real compile error, one that
         * points into the source, is remembered. */
        if (!run.timed_out && !run.signal
            && kf_compile_points_into_source (log, tc->source_name))
            kf_compile_cache_put (cache_dir, key, NULL, 0, b->log ? b->log : head,
                                  cfg ? cfg->cache_max_bytes : 0);
        free (log);
    }
    else {
        b->compiled = true;
        b->log = log ? log : strdup ("");
        s_add_report (b, dir, ctx, tc->source_name, &vectorised);
        //  Vector registers spilled to the stack, after the vectoriser's
        //  summary and kept in the cache with it (kf_compile_spill.c).
        if (!strcmp (tc->language, "c"))
            s_log_add (b, kf_compile_spill_report (dir, "kernel.so", tc->source_name, &limits));
        kf_compile_cache_put (cache_dir, key, b->so, b->so_size, b->log ? b->log : "",
                              cfg ? cfg->cache_max_bytes : 0);
    }
    kf_subproc_result_free (&run);
    if (b->compiled && b->want_coords)
        s_classify_built (ctx, b, dir, &limits, vectorised);
done:
    kf_subproc_rmtree (dir);
    free (dir);
}

static void
s_build_free (s_build_t *b)
{
    json_decref (b->coords);
    KF_CLEAR (b, b->error, b->so, b->log);
}

//  The tuning sweep's shared queue: each thread takes the next build.
typedef struct {
    const s_ctx_t *ctx;
    s_build_t *builds;
    int n, next;
    pthread_mutex_t lock;
} s_sweep_t;

static void *
s_sweep_thread (void *arg)
{
    s_sweep_t *sweep = arg;
    while (true) {
        pthread_mutex_lock (&sweep->lock);
        int i = sweep->next < sweep->n ? sweep->next++ : -1;
        pthread_mutex_unlock (&sweep->lock);
        if (i < 0)
            break;
        s_build (sweep->ctx, &sweep->builds[i]);
    }
    return NULL;
}

//  Builds every selected point of TUNE, PARALLEL at a time (this thread
//  is one of them), and turns the builds into the result: the default
//  point's figures at the top level as for an untuned source, plus the
//  `configs` table and one frame per distinct artifact.
static void
s_sweep (const s_ctx_t *ctx, kf_tune_t *tune, kf_job_result_t *res)
{
    int n = kf_tune_configs (tune);
    s_build_t *builds = calloc ((size_t) n, sizeof *builds);
    if (!builds) {
        kf_job_fail (res, "out of memory for the tuning builds");
        return;
    }
    for (int i = 0; i < n; i++) {
        builds[i].n_defines = kf_tune_params (tune);
        for (int p = 0; p < builds[i].n_defines; p++)
            if (kf_tune_config_define (tune, i, p, builds[i].defines[p],
                                       sizeof builds[i].defines[p]))
                builds[i].n_defines = p;
    }
    /* Every point is classified as built: the sweep's winner, not the
     * default point, is the kernel whose coordinates the archive takes. */
    for (int i = 0; i < n; i++)
        builds[i].want_coords = !ctx->reference;
    s_sweep_t sweep = { .ctx = ctx, .builds = builds, .n = n, .next = 0 };
    pthread_mutex_init (&sweep.lock, NULL);
    int parallel = ctx->cfg && ctx->cfg->tune_parallel > 0 ? ctx->cfg->tune_parallel : 2;
    if (parallel > n)
        parallel = n;
    pthread_t threads[KF_COMPILE_TUNE_MAX];
    int started = 0;
    for (int t = 1; t < parallel && t < KF_COMPILE_TUNE_MAX; t++)
        if (pthread_create (&threads[started], NULL, s_sweep_thread, &sweep) == 0)
            started++;
    s_sweep_thread (&sweep);
    for (int t = 0; t < started; t++)
        pthread_join (threads[t], NULL);
    pthread_mutex_destroy (&sweep.lock);

    double wall_s = 0;
    bool all_cached = true;
    int built = 0;
    for (int i = 0; i < n; i++) {
        wall_s += builds[i].wall_s;
        all_cached &= builds[i].cached;
        built += builds[i].compiled;
    }
    s_build_t *dflt = &builds[0];
    if (dflt->error) {
        kf_job_fail (res, "%s", dflt->error);
        goto done;
    }
    if (dflt->compiled) {
        s_compiled (res, ctx->toolchain, dflt->so, dflt->so_size, dflt->log, wall_s, all_cached);
        json_object_update (res->result, dflt->coords);
    }
    else {
        s_not_compiled (res, ctx->toolchain, dflt->log ? dflt->log : "", wall_s);
        json_object_set_new (res->result, "cached", json_boolean (all_cached));
    }
    //  Identical artifacts (a parameter the code ignores) share a frame,
    //  so the evaluation times each distinct kernel once per config.
    char hashes[KF_COMPILE_TUNE_MAX][65];
    int frames = res->frames ? 1 : 0;
    if (frames)
        kf_sha256_hex (dflt->so, dflt->so_size, hashes[0]);
    json_t *configs = json_array ();
    for (int i = 0; i < n; i++) {
        s_build_t *b = &builds[i];
        json_t *row = json_object ();
        json_object_set_new (row, "params", kf_tune_config_json (tune, i));
        json_object_set_new (row, "compiled", json_boolean (b->compiled));
        if (json_is_array (json_object_get (b->coords, "coords"))) {
            json_object_set (row, "coords", json_object_get (b->coords, "coords"));
            json_object_set (row, "coords_why", json_object_get (b->coords, "coords_why"));
        }
        if (b->compiled && dflt->compiled) {
            char hash[65];
            kf_sha256_hex (b->so, b->so_size, hash);
            int frame = -1;
            for (int f = 0; f < frames && frame < 0; f++)
                if (!strcmp (hashes[f], hash))
                    frame = f;
            if (frame < 0 && frames < KF_COMPILE_TUNE_MAX) {
                zmsg_addmem (res->frames, b->so, b->so_size);
                memcpy (hashes[frames], hash, sizeof hash);
                frame = frames++;
            }
            json_object_set_new (row, "artifact_hash", json_string (hash));
            if (frame >= 0)
                json_object_set_new (row, "frame", json_integer (frame));
        }
        else if (b->compiled)
            json_object_set_new (row, "artifact_hash", json_null ());
        else {
            //  Failures only, and shorter than the top-level log: the
            //  table can hold sixteen of them.
            char *log = kf_compile_trim_log (b->error ? b->error : b->log, NULL, 1024);
            json_object_set_new (row, "artifact_hash", json_null ());
            json_object_set_new (row, "log", s_json_text (log ? log : ""));
            free (log);
        }
        json_array_append_new (configs, row);
    }
    json_object_set_new (res->result, "configs", configs);
    json_object_set_new (res->result, "tune",
                         json_pack ("{s:I, s:i, s:i, s:I}", "space",
                                    (json_int_t) kf_tune_space (tune), "configs", n,
                                    "compiled", built, "skipped",
                                    (json_int_t) kf_tune_skipped (tune)));
done:
    for (int i = 0; i < n; i++)
        s_build_free (&builds[i]);
    free (builds);
}

static void s_handle (void *arg, const kf_job_t *job, kf_job_result_t *res);

//  The result goes out through the protocol's encoder (proto/
//  kf_msg_compile.c), checked first as the coordinator will check it: a
//  result it would refuse is this worker's bug, a failed job here rather
//  than a refusal there.
void
kf_compile_handle (void *arg, const kf_job_t *job, kf_job_result_t *res)
{
    s_handle (arg, job, res);
    if (!res->ok || !res->result)
        return;
    kf_compile_result_t typed;
    char why[300];
    if (kf_compile_result_decode (res->result, &typed, why, sizeof why)) {
        json_decref (res->result);
        res->result = NULL;
        zmsg_destroy (&res->frames);
        kf_job_fail (res, "the compile result breaks the protocol: %s", why);
        return;
    }
    json_decref (res->result);
    res->result = kf_compile_result_encode (&typed);
    kf_compile_result_free (&typed);
}

static void
s_handle (void *arg, const kf_job_t *job, kf_job_result_t *res)
{
    const kf_compile_config_t *cfg = arg;
    memset (res, 0, sizeof *res);
    s_ctx_t ctx = {
        .cfg = cfg,
        .time_limit = cfg && cfg->time_limit_s > 0 ? cfg->time_limit_s : 60,
        .output_cap = cfg && cfg->output_cap ? cfg->output_cap : 64 * 1024,
    };

    const char *language = json_string_value (json_object_get (job->payload, "language"));
    if (!language) {
        kf_job_fail (res, "payload: language missing");
        return;
    }
    const kf_toolchain_t *tc = kf_toolchain_for_language (language);
    if (!tc) {
        kf_job_fail (res, "no toolchain for language '%s'", language);
        return;
    }
    ctx.tc = tc;
    json_t *target = json_object_get (job->payload, "target");
    const char *backend = json_string_value (json_object_get (target, "backend"));
    ctx.arch = json_string_value (json_object_get (target, "arch"));
    //  One OpenCL C artifact (the KF-SPIRV bundle) serves both the
    //  level-zero and the opencl exec backends.
    if (backend && strcmp (backend, tc->backend) != 0
        && !(strcmp (backend, "opencl") == 0 && strcmp (tc->language, "opencl") == 0)) {
        kf_job_fail (res, "target backend '%s' does not match the language", backend);
        return;
    }
    //  The vendor libraries the task allows (kf_task.c checked them at
    //  submission; a payload is checked again, it names linker inputs).
    json_t *libs = json_object_get (job->payload, "libraries");
    size_t n_libs = json_array_size (libs);
    if (n_libs >= sizeof ctx.libraries / sizeof ctx.libraries[0]) {
        kf_job_fail (res, "payload: libraries: more than three");
        return;
    }
    for (size_t i = 0; i < n_libs; i++) {
        const char *name = json_string_value (json_array_get (libs, i));
        if (!kf_task_library_known (name)) {
            kf_job_fail (res, "payload: libraries: unknown library '%s'",
                         name ? name : "(not a string)");
            return;
        }
        ctx.libraries[i] = name;
    }
    zframe_t *frame = job->frames ? zmsg_first (job->frames) : NULL;
    if (!frame) {
        kf_job_fail (res, "no source frame");
        return;
    }
    ctx.source = (const char *) zframe_data (frame);
    ctx.source_size = zframe_size (frame);
    const char *want_hash = json_string_value (json_object_get (job->payload, "source_hash"));
    if (want_hash) {
        char have[65];
        kf_sha256_hex (ctx.source, ctx.source_size, have);
        if (strcmp (have, want_hash) != 0) {
            kf_job_fail (res, "source_hash does not match the source frame");
            return;
        }
    }
    char *program = tc->find ();
    if (!program) {
        kf_job_fail (res, "toolchain '%s' is not installed", tc->name);
        return;
    }
    ctx.program = program;
    char *version = kf_toolchain_version (tc);
    ctx.toolchain = version ? version : tc->name;

    const char *managed = NULL;
    if (strcmp (tc->language, "cuda") == 0
        && kf_compile_uses_managed (ctx.source, ctx.source_size, &managed)) {
        char log[256];
        snprintf (log, sizeof log,
                  "refused before compiling: the source uses managed memory (%s); "
                  "allocate with cudaMalloc or use ctx->scratch_alloc instead\n",
                  managed);
        s_not_compiled (res, ctx.toolchain, log, 0);
        free (program);
        free (version);
        return;
    }

    //  A source that declares tuning parameters is built at each selected
    //  point; a reference never is (it is the yardstick, not a search).
    int cap = cfg && cfg->tune_max_configs > 0 ? cfg->tune_max_configs : 16;
    /* The run decides how wide a candidate's sweep is (its `tune`); the
     * worker's own cap bounds it. Absent means no sweep. */
    json_t *asked = json_object_get (job->payload, "tune_max_configs");
    int want = json_is_integer (asked) ? (int) json_integer_value (asked) : 1;
    if (want < cap)
        cap = want;
    if (cap > KF_COMPILE_TUNE_MAX)
        cap = KF_COMPILE_TUNE_MAX;
    bool reference = json_is_true (json_object_get (job->payload, "reference"));
    ctx.reference = reference;
    kf_tune_t *tune = reference || cap < 2 ? NULL
                      : kf_tune_new (ctx.source, ctx.source_size, cap);
    if (tune) {
        s_sweep (&ctx, tune, res);
        kf_tune_destroy (&tune);
    }
    else {
        s_build_t *b = calloc (1, sizeof *b);
        if (!b)
            kf_job_fail (res, "out of memory");
        else {
            b->want_coords = !reference;
            s_build (&ctx, b);
            if (b->error)
                kf_job_fail (res, "%s", b->error);
            else if (b->compiled) {
                s_compiled (res, ctx.toolchain, b->so, b->so_size, b->log, b->wall_s, b->cached);
                json_object_update (res->result, b->coords);
            }
            else {
                s_not_compiled (res, ctx.toolchain, b->log ? b->log : "", b->wall_s);
                if (b->cached)
                    json_object_set_new (res->result, "cached", json_true ());
            }
            s_build_free (b);
            free (b);
        }
    }
    free (program);
    free (version);
}

json_t *
kf_compile_capabilities (void)
{
    json_t *caps = json_object ();
    json_t *backends = json_array ();
    json_t *toolchains = json_object ();
    //  A backend is offered only when a toolchain for it answers.
    const kf_toolchain_t *const *all = kf_toolchain_all ();
    for (int i = 0; all[i]; i++) {
        char *version = kf_toolchain_version (all[i]);
        if (!version)
            continue;
        json_object_set_new (toolchains, all[i]->name, s_json_text (version));
        free (version);
        bool listed = false;
        size_t k;
        json_t *b;
        json_array_foreach (backends, k, b)
            listed |= strcmp (json_string_value (b), all[i]->backend) == 0;
        if (!listed)
            json_array_append_new (backends, json_string (all[i]->backend));
        if (!listed && !strcmp (all[i]->language, "opencl"))
            json_array_append_new (backends, json_string ("opencl"));
    }
    struct utsname un;
    json_object_set_new (caps, "backends", backends);
    json_object_set_new (caps, "arch", json_string (uname (&un) == 0 ? un.machine : "unknown"));
    json_object_set_new (caps, "toolchains", toolchains);
    return caps;
}
