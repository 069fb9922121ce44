/*  kf-compile-worker - builds candidate kernels for the coordinator.
 *
 *  Thin by design: load the configuration, describe what this host can
 *  build, and hand compile jobs to kf_compile_handle through the shared
 *  worker loop until SIGINT or SIGTERM.
 *
 *  "--build SOURCE" builds one source through the same handler without a
 *  coordinator, writes the shared object(s) and prints the result as JSON,
 *  which `kf-exec-worker --eval` takes as a candidate or reference
 *  (docs/evaluation.md, "Standalone use").
 */
#include "kf_compile.h"
#include "kf_config.h"
#include "kf_file.h"
#include "kf_hash.h"
#include "kf_log.h"
#include "kf_sandbox.h"
#include "kf_str.h"
#include "kf_worker.h"

#include "kf_sandbox.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_PROGRAM "kf-compile-worker"

static const kf_cfg_entry_t s_table[] = {
    KF_WORKER_CFG_KEYS ("2", "compiles run at once"),
    { "compile_time_limit_s", KF_CFG_DOUBLE, "60", 1, 3600,
      "wall-clock limit of one compiler run" },
    { "cache_dir", KF_CFG_STR, NULL, 0, -1,
      "compile cache folder; 'off' disables it (default: $XDG_CACHE_HOME or ~/.cache, then kernelfoundry/compile)" },
    { "cache_max_mb", KF_CFG_INT, "2048", 1, 1048576, "compile cache size cap" },
    { "tune_max_configs", KF_CFG_INT, "16", 1, 16,
      "most kf-tune points built for one source (a run asks for fewer with its tune setting)" },
    { "tune_parallel", KF_CFG_INT, "2", 1, 64, "kf-tune points built at once within one job" },
    { "no_isolation", KF_CFG_BOOL, "false", 0, -1,
      "run compilers without namespaces or a private view (trusted sources only: a source "
      "can #include any file the worker can read); logged loudly and shown by 'kfctl "
      "workers'. Without it a host that refuses user namespaces (not root) or mounts "
      "builds nothing: the worker says how to allow them and does not start" },
    KF_CFG_END
};

#define S_USAGE                                                                       \
    "kf-compile-worker [options]\n"                                                   \
    "       kf-compile-worker [options] --build SOURCE [--language L]\n"              \
    "                 [--target BACKEND[:ARCH]] [--tune N] [--libraries L,...]\n"     \
    "                 [--reference] [-o OUT.so]\n"                                   \
    "\n"                                                                              \
    "--build compiles SOURCE through the worker's handler, without a coordinator,\n"  \
    "and prints the result as JSON. The language follows the extension (.c c,\n"      \
    ".cu cuda, .cl opencl, .cpp sycl); OUT.so defaults to SOURCE's name with .so\n"   \
    "in the current folder; with --tune N every built config after the first is\n"    \
    "OUT.K.so. Exit 0 when it compiled, 1 when it did not or the job failed, 2 on\n"  \
    "bad arguments. kf-exec-worker --eval takes the printed JSON (saved to a file)\n"  \
    "as its candidate or reference. --libraries allows the vendor libraries a\n"     \
    "task's \"libraries\" would (cublas, cublasLt, cudnn), linked into a CUDA build"

static const char *
s_language_of (const char *source)
{
    const char *dot = strrchr (source, '.');
    static const char *const map[][2] = {
        { ".c", "c" }, { ".cu", "cuda" }, { ".cl", "opencl" }, { ".cpp", "sycl" },
        { ".cc", "sycl" }, { ".sycl", "sycl" }, { NULL, NULL }
    };
    for (int i = 0; dot && map[i][0]; i++)
        if (!strcmp (dot, map[i][0]))
            return map[i][1];
    return NULL;
}

//  OUT with ".K" before its extension: kernel.so, 2 -> kernel.2.so.
static char *
s_frame_path (const char *out, int k)
{
    if (k == 0)
        return strdup (out);
    const char *slash = strrchr (out, '/');
    const char *dot = strrchr (out, '.');
    if (!dot || (slash && dot < slash))
        return kf_strdupf ("%s.%d", out, k);
    return kf_strdupf ("%.*s.%d%s", (int) (dot - out), out, k, dot);
}

typedef struct {
    const char *source;
    const char *language;
    const char *target;
    const char *tune;
    const char *out;
    const char *libraries;   //  "cublas,cudnn"
    bool reference;
} s_build_args_t;

//  --build: one compile job through kf_compile_handle, no sockets.
static int
s_build_main (const kf_compile_config_t *compile, const s_build_args_t *a)
{
    const char *language = a->language ? a->language : s_language_of (a->source);
    if (!language)
        return kf_worker_usage_error (S_PROGRAM, "%s: cannot tell the language from the"
                                      " extension; give --language (c, cuda, opencl, sycl)",
                                      a->source);
    long tune = 1;
    if (a->tune) {
        char *end;
        tune = strtol (a->tune, &end, 10);
        if (*end || tune < 1 || tune > 16)
            return kf_worker_usage_error (S_PROGRAM, "--tune %s: must be 1 to 16", a->tune);
    }
    size_t size = 0;
    char *source = kf_file_read (a->source, (size_t) 4 << 20, &size);
    if (!source)
        return kf_worker_usage_error (S_PROGRAM, "%s: cannot read the source (or larger than"
                                      " 4 MiB)", a->source);

    json_t *payload = json_pack ("{s:s, s:I}", "language", language, "tune_max_configs",
                                 (json_int_t) tune);
    if (a->target) {
        //  "cuda:sm_90" or "cuda"; the backend must be the language's.
        const char *colon = strchr (a->target, ':');
        json_t *target = json_object ();
        json_object_set_new (target, "backend",
                             colon ? json_stringn (a->target, (size_t) (colon - a->target))
                                   : json_string (a->target));
        if (colon && colon[1])
            json_object_set_new (target, "arch", json_string (colon + 1));
        json_object_set_new (payload, "target", target);
    }
    if (a->reference)
        json_object_set_new (payload, "reference", json_true ());
    if (a->libraries) {
        json_t *libs = json_array ();
        char list[200];
        snprintf (list, sizeof list, "%s", a->libraries);
        for (char *save = NULL, *name = strtok_r (list, ",", &save); name;
             name = strtok_r (NULL, ",", &save))
            json_array_append_new (libs, json_string (name));
        json_object_set_new (payload, "libraries", libs);
    }
    char hash[65];
    kf_sha256_hex (source, size, hash);
    json_object_set_new (payload, "source_hash", json_string (hash));

    char *out = NULL;
    if (a->out)
        out = strdup (a->out);
    else {
        const char *base = strrchr (a->source, '/');
        base = base ? base + 1 : a->source;
        const char *dot = strrchr (base, '.');
        out = kf_strdupf ("%.*s.so", (int) (dot && dot > base ? dot - base : (long) strlen (base)),
                          base);
    }
    zmsg_t *frames = zmsg_new ();
    zmsg_addmem (frames, source, size);
    free (source);
    kf_job_t job = { .job_id = 1, .lease = 1, .kind = "compile", .payload = payload,
                     .frames = frames };
    kf_job_result_t res = { 0 };
    kf_compile_handle ((void *) compile, &job, &res);

    json_t *print = json_pack ("{s:s, s:b}", "source", a->source, "ok", res.ok);
    int rc = res.ok && json_is_true (json_object_get (res.result, "compiled")) ? 0 : 1;
    json_t *files = json_array ();
    int k = 0;
    for (zframe_t *f = res.frames ? zmsg_first (res.frames) : NULL; f;
         f = zmsg_next (res.frames), k++) {
        char *path = s_frame_path (out, k);
        if (!path || kf_file_write (path[0] == '/' ? "" : ".", path, zframe_data (f), zframe_size (f)) != 0) {
            fprintf (stderr, "kf-compile-worker: cannot write %s\n", path ? path : out);
            rc = 2;
        }
        //  Absolute, so a job file anywhere can name these artifacts.
        char full[PATH_MAX];
        json_array_append_new (files, json_string (path && realpath (path, full) ? full
                                                   : path ? path : ""));
        free (path);
    }
    json_object_set (print, "artifact", json_array_size (files) ? json_array_get (files, 0)
                                                               : json_null ());
    json_object_set_new (print, "frames", files);
    if (res.ok)
        json_object_set_new (print, "result", res.result ? res.result : json_object ());
    else {
        json_object_set_new (print, "error", json_string (res.error ? res.error : "job failed"));
        json_decref (res.result);
    }
    char *text = json_dumps (print, JSON_INDENT (2));
    if (text)
        printf ("%s\n", text);
    if (!res.ok)
        fprintf (stderr, "kf-compile-worker: %s\n", res.error ? res.error : "job failed");
    free (text);
    free (res.error);
    zmsg_destroy (&res.frames);
    json_decref (print);
    json_decref (payload);
    zmsg_destroy (&frames);
    free (out);
    return rc;
}

int
main (int argc, char **argv)
{
    bool missing = false;
    s_build_args_t b = { 0 };
    b.source = kf_worker_take_arg (&argc, argv, "--build", false, &missing);
    b.language = kf_worker_take_arg (&argc, argv, "--language", false, &missing);
    b.target = kf_worker_take_arg (&argc, argv, "--target", false, &missing);
    b.tune = kf_worker_take_arg (&argc, argv, "--tune", false, &missing);
    b.out = kf_worker_take_arg (&argc, argv, "-o", false, &missing);
    b.libraries = kf_worker_take_arg (&argc, argv, "--libraries", false, &missing);
    b.reference = kf_worker_take_arg (&argc, argv, "--reference", true, &missing) != NULL;
    if (missing)
        return kf_worker_usage_error (S_PROGRAM, "%s needs a value (see --help)",
                                      "--build/--language/--target/--tune/--libraries/-o");
    if (!b.source && (b.language || b.target || b.tune || b.out || b.libraries || b.reference))
        return kf_worker_usage_error (S_PROGRAM, "%s: for --build only",
                                      "--language/--target/--tune/--libraries/--reference/-o");
    int code;
    kf_config_t *config = kf_worker_load_config (S_PROGRAM, S_USAGE, s_table, &argc,
                                                 argv, &code);
    if (!config)
        return code;
    //  A standalone --build is not probed: a refused run says why itself.
    kf_sandbox_hide (kf_config_str (config, "curve_cert"));
    if (kf_sandbox_setup (kf_config_bool (config, "no_isolation"), !b.source) != 0) {
        kf_config_destroy (&config);
        return 2;
    }

    char *cache_dir = kf_file_cache_dir (kf_config_str (config, "cache_dir"), "compile");
    kf_compile_config_t compile = {
        .time_limit_s = kf_config_double (config, "compile_time_limit_s"),
        .output_cap = 64 * 1024,
        .cache_dir = cache_dir,
        .cache_max_bytes = (size_t) kf_config_int (config, "cache_max_mb") << 20,
        .tune_max_configs = (int) kf_config_int (config, "tune_max_configs"),
        .tune_parallel = (int) kf_config_int (config, "tune_parallel"),
    };
    if (b.source) {
        int rc = s_build_main (&compile, &b);
        free (cache_dir);
        kf_config_destroy (&config);
        return rc;
    }
    kf_info ("compile cache: %s", cache_dir ? cache_dir : "off");
    json_t *caps = kf_compile_capabilities ();
    json_object_set_new (caps, "isolation", json_string (kf_sandbox_mode ()));
    kf_info ("capabilities: backends %zu, cc %s, nvcc %s",
             json_array_size (json_object_get (caps, "backends")),
             json_string_value (json_object_get (json_object_get (caps, "toolchains"), "cc"))
                 ? "found" : "missing",
             json_string_value (json_object_get (json_object_get (caps, "toolchains"), "nvcc"))
                 ? "found" : "missing");

    int rc = kf_worker_main (config, "compile", caps, kf_compile_handle, &compile);
    json_decref (caps);
    free (cache_dir);
    kf_config_destroy (&config);
    return rc;
}
