/*  kf-exec-worker - judges and times candidate kernels for the coordinator.
 *
 *  The same binary is the evaluation child: "--eval-child DIR" is handled
 *  before anything else (no configuration, no sockets), because the
 *  handler re-executes this program in the sandbox for every evaluation.
 *  Where a Python with torch is found it also runs PyTorch reference jobs
 *  (kf_torch_ref.h) and says so under "torch" in its capabilities; where
 *  ncu works (CUDA) or perf stat can count hardware events (host) it
 *  profiles candidates (kf_profile.h, "profile").
 *
 *  "--eval JOB.json" runs one job without a cluster: the job file names
 *  the kind, the payload and the input frames as files; the job goes
 *  through kf_exec_handle exactly as a JOB from the coordinator would, and
 *  the result is printed as JSON with its binary frames written to files
 *  (docs/evaluation.md, "Standalone use"). "--repeat N" runs an evaluate
 *  job N times in this one process after the start-up probe a running
 *  worker makes, which is how the evaluator's benchmark measures what a
 *  candidate costs a worker that is already up.
 */
#include "kf_config.h"
#include "kf_eval_check.h"
#include "kf_exec.h"
#include "kf_figures_retry.h"
#include "kf_runner.h"
#include "kf_sandbox.h"
#include "kf_file.h"
#include "kf_log.h"
#include "kf_profile.h"
#include "kf_str.h"
#include "kf_task.h"
#include "kf_host_caps.h"
#include "kf_host_figures.h"
#include "kf_torch_ref.h"
#include "kf_worker.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_PROGRAM "kf-exec-worker"

static const kf_cfg_entry_t s_table[] = {
    KF_WORKER_CFG_KEYS ("1", "evaluations at once (1: timings do not disturb each other)"),
    { "backend", KF_CFG_STR, "host", 0, -1, "where kernels run: host, cuda, level-zero or opencl" },
    { "device", KF_CFG_STR, "0", 0, -1, "device this worker serves, 0 to 63 (one worker process "
      "per device); for opencl also a platform or device name (\"pthread\", \"Arc\")" },
    { "eval_time_limit_s", KF_CFG_DOUBLE, "120", 1, 3600,
      "wall-clock limit of one evaluation" },
    { "sweep_time_limit_s", KF_CFG_DOUBLE, "300", 1, 7200,
      "wall-clock limit of a whole tuning sweep, its full timings included (keep it "
      "under the coordinator's lease_execute_ms)" },
    { "sweep_limit_factor", KF_CFG_DOUBLE, "3", 1, 100,
      "a swept config's limit: this many times the time the first correct config took, "
      "plus sweep_limit_floor_s" },
    { "sweep_limit_floor_s", KF_CFG_DOUBLE, "10", 0.1, 3600,
      "added to every swept config's derived limit" },
    { "sweep_full_configs", KF_CFG_INT, "2", 1, 16,
      "configs of a sweep timed again with the full protocol, the best screened first" },
    { "no_isolation", KF_CFG_BOOL, "false", 0, -1,
      "run candidates, compilers and references without namespaces or a private view "
      "(trusted code only: they see the host as the worker does); logged loudly and shown "
      "by 'kfctl workers'. Without it a host that refuses user namespaces (not root) or "
      "mounts gets no evaluation: the worker says how to allow them and does not start" },
    { "eval_shared_dir", KF_CFG_STR, NULL, 0, -1,
      "for tests only: a folder every candidate may read and write, besides its own (it "
      "reaches no other file of this host); never on a fleet" },
    { "python", KF_CFG_STR, NULL, 0, -1,
      "Python with torch for reference jobs (default: the first of $KF_PYTHON, "
      "/opt/torch/.venv/bin/python3, /usr/bin/python3, python3 on PATH that imports torch)" },
    { "python_found", KF_CFG_STR, NULL, 0, -1,
      "file that keeps, for the boot, which Python imports torch (and its version, and "
      "whether CUDA works), so a later start does not import torch to ask again while "
      "the candidates and torch's files are unchanged; 'off': asked at every start "
      "(default: $XDG_CACHE_HOME or ~/.cache, then kernelfoundry/python-found.json)" },
    { "reference_cache_dir", KF_CFG_STR, NULL, 0, -1,
      "where PyTorch reference data and results stay on this host; 'off': a private "
      "folder removed at exit, no result reused (default: $XDG_CACHE_HOME or ~/.cache, "
      "then kernelfoundry/reference)" },
    { "reference_cache_max_mb", KF_CFG_INT, "4096", 1, 16777216,
      "reference cache size cap, least recently used out first; also the cap on one "
      "reference's data" },
    { "reference_time_limit_s", KF_CFG_DOUBLE, "600", 1, 7200,
      "wall-clock limit of one reference job (torch.compile included)" },
    { "ncu", KF_CFG_STR, NULL, 0, -1,
      "Nsight Compute for profile jobs (cuda); 'off' disables them (default: ncu on PATH, "
      "/usr/local/cuda/bin/ncu, /opt/nvidia/nsight-compute/*/ncu)" },
    { "perf", KF_CFG_STR, NULL, 0, -1,
      "perf for profile jobs (host: perf stat's hardware counters); 'off' disables them "
      "(default: perf on PATH, used where a trial run at start-up counts its events)" },
    { "perf_events", KF_CFG_STR, NULL, 0, -1,
      "perf's events, comma-separated; task-clock is always added (default: cycles, "
      "instructions, cache-references, cache-misses, branches, branch-misses)" },
    { "host_figures", KF_CFG_STR, NULL, 0, -1,
      "file that keeps the host's measured FMA peaks, copy bandwidth and clock for the "
      "boot, so a later start does not measure them again (the host backend); 'off': "
      "measured at every start (default: $XDG_CACHE_HOME or ~/.cache, then "
      "kernelfoundry/host-figures.json)" },
    { "remeasure", KF_CFG_BOOL, "false", 0, -1,
      "measure the host's figures now, even where host_figures holds this boot's, and "
      "keep the new ones" },
    { "figures_retry_s", KF_CFG_DOUBLE, "45", 0, 86400,
      "host backend: while the figures were measured beside other work "
      "(figures_measured_busy), seconds between tries to measure them again in a moment "
      "without a job; quiet ones replace them, are kept in host_figures, and a fresh HELLO "
      "tells the coordinator (0: never try)" },
    { "figures_retries", KF_CFG_INT, "40", 1, 1000000,
      "host backend: the most tries figures_retry_s makes" },
    { "profile_launches", KF_CFG_INT, "4", 1, 64, "kernel launches one profile job profiles" },
    { "profile_time_limit_s", KF_CFG_DOUBLE, "300", 1, 3600,
      "wall-clock limit of one profile job (ncu replays each launch many times)" },
    KF_CFG_END
};

//  --device: an index, or (opencl) a platform or device name. A name
//  reaches the probe and every evaluation child as KF_OPENCL_DEVICE, an
//  environment variable the sandbox passes on (kf_subproc_env_kept).
static int
s_device_check (const kf_config_t *config)
{
    const char *d = kf_config_str (config, "device");
    char *end = NULL;
    long n = d && *d ? strtol (d, &end, 10) : -1;
    if (end && !*end)
        unsetenv ("KF_OPENCL_DEVICE");
    if (end && !*end && n >= 0 && n <= 63)
        return 0;
    if (end && !*end) {
        fprintf (stderr, "kf-exec-worker: device: %ld is outside 0 to 63\n", n);
        return -1;
    }
    if (strcmp (kf_config_str (config, "backend"), "opencl") != 0 || !d || !*d) {
        fprintf (stderr, "kf-exec-worker: device: '%s' is not a number (a device name is for "
                 "--backend opencl)\n", d ? d : "");
        return -1;
    }
    setenv ("KF_OPENCL_DEVICE", d, 1);
    return 0;
}

//  The device index s_device_check accepted (0 for an OpenCL name).
static int
s_device (const kf_config_t *config)
{
    const char *d = kf_config_str (config, "device");
    char *end = NULL;
    long n = strtol (d, &end, 10);
    return end && !*end && n >= 0 && n <= 63 ? (int) n : 0;
}

//  The evaluation settings of CONFIG for BACKEND's DEVICE.
static kf_exec_config_t
s_exec_config (const kf_config_t *config, const char *backend, int device)
{
    const char *shared = kf_config_str (config, "eval_shared_dir");
    if (shared && *shared) {
        kf_warn ("eval_shared_dir %s: every candidate may read and write it (for tests only)",
                 shared);
        kf_sandbox_share (shared);   //  in the sandbox's view, writable
    }
    return (kf_exec_config_t) {
        .worker_path = NULL,
        .backend = backend,
        .device = device,
        .time_limit_s = kf_config_double (config, "eval_time_limit_s"),
        .sweep_time_limit_s = kf_config_double (config, "sweep_time_limit_s"),
        .sweep_limit_factor = kf_config_double (config, "sweep_limit_factor"),
        .sweep_limit_floor_s = kf_config_double (config, "sweep_limit_floor_s"),
        .sweep_full_configs = (int) kf_config_int (config, "sweep_full_configs"),
        .shared_dir = shared && *shared ? shared : NULL,
    };
}


#define S_USAGE                                                                     \
    "kf-exec-worker [options]\n"                                                    \
    "       kf-exec-worker [options] --eval JOB.json [--out PREFIX] [--repeat N]\n" \
    "       kf-exec-worker [options] --measure-host\n"                              \
    "\n"                                                                            \
    "--eval runs one job (evaluate, profile or reference) from JOB.json through\n"  \
    "the worker's handler, without a coordinator, and prints the result as JSON;\n" \
    "binary result frames go to PREFIX.N.bin (default: JOB without .json, then\n"   \
    ".out). Exit 0 when the job ran, 1 when it failed, 2 on a bad JOB.json.\n"      \
    "JOB.json: {\"kind\", \"payload\", \"frames\": [files]} or \"candidate\" and\n"     \
    "\"reference\" (a .so, or the JSON that kf-compile-worker --build printed;\n"  \
    "the reference also what --eval printed for a reference job); see\n"          \
    "docs/evaluation.md, \"Standalone use\". --repeat N (evaluate jobs) probes\n"   \
    "the device first, as a running worker does at start-up, then runs the job\n" \
    "N times, printing each result with handler_s, the handler's wall time.\n"   \
    "--measure-host measures the host's figures (FMA peaks, copy and read\n"      \
    "rates, clock, latencies) as a host worker's start does, keeps them in\n"     \
    "host_figures (marked busy where the host was not quiet), prints them as\n"  \
    "JSON with where they came from (\"source\") and exits 0; with remeasure\n"  \
    "it measures anew. It is for the host backend only (exit 2 otherwise)."

//  --measure-host: the figures a host worker's start takes, measured or
//  read from the file, on stdout with their source. A test suite measures
//  them once, alone, before its tests run beside each other: else every
//  worker and --eval of the suite would measure them (seconds of every
//  core each), and beside other work none would be quiet.
static int
s_measure_host (void)
{
    json_t *d = json_object ();
    kf_host_caps_measure (d);
    const char *source = kf_host_figures_source ();
    json_object_set_new (d, "source", json_string (source ? source : "unknown"));
    char *text = json_dumps (d, JSON_SORT_KEYS);
    if (text)
        puts (text);
    free (text);
    json_decref (d);
    return 0;
}

//  PATH as written when absolute, else relative to the folder of the job
//  file BASE. Caller frees.
static char *
s_job_path (const char *base, const char *path)
{
    return path[0] == '/' ? strdup (path) : kf_strdupf ("%s/%s", base, path);
}

//  The standalone job: a JOB.json turned into the kf_job_t the handler
//  gets from the coordinator. Everything a user can get wrong in the file
//  is said in one line naming the file and the key.
typedef struct {
    char *kind;
    json_t *payload;
    zmsg_t *frames;
    char *error;             /* set when the file is wrong */
} s_standalone_t;

static void
s_standalone_free (s_standalone_t *sa)
{
    free (sa->kind);
    json_decref (sa->payload);
    zmsg_destroy (&sa->frames);
    free (sa->error);
}

//  Appends the file PATH (relative to BASE) as a frame. WHAT names the key.
static int
s_add_frame (s_standalone_t *sa, const char *job, const char *base, const char *path,
             const char *what)
{
    char *full = s_job_path (base, path);
    size_t size = 0;
    void *data = full ? kf_file_read (full, (size_t) 1 << 31, &size) : NULL;
    if (!data) {
        sa->error = kf_strdupf ("%s: %s: cannot read %s", job, what, full ? full : path);
        free (full);
        return -1;
    }
    zmsg_addmem (sa->frames, data, size);
    free (data);
    free (full);
    return 0;
}

//  The result of a PyTorch reference job, as --eval printed it (saved as
//  FULL), as the reference: the payload's reference_data is made from its
//  manifest as the coordinator makes it (docs/pytorch-references.md). The
//  data is in the reference cache of whoever ran that job, or is made
//  again here.
static int
s_add_torch_data (s_standalone_t *sa, const char *job, json_t *out, const char *full)
{
    json_t *result = json_object_get (out, "result");
    if (!json_is_true (json_object_get (out, "ok"))
        || !json_is_string (json_object_get (result, "data_key"))) {
        sa->error = kf_strdupf ("%s: reference: %s is not a successful reference job's output "
                                "with its data key", job, full);
        return -1;
    }
    json_t *timing = json_object_get (result, "timing");
    json_t *eager = json_object_get (json_object_get (timing, "eager"), "median_ns");
    json_t *compiled = json_object_get (json_object_get (timing, "compiled"), "median_ns");
    json_object_set_new (sa->payload, "reference_data",
                         json_pack ("{s:O, s:o, s:O, s:O, s:O}", "tensors",
                                    json_object_get (result, "tensors"), "scalars",
                                    json_object_get (result, "scalars")
                                        ? json_incref (json_object_get (result, "scalars"))
                                        : json_array (),
                                    "sets", json_object_get (result, "sets"), "eager_ns",
                                    eager ? eager : json_null (), "compiled_ns",
                                    compiled ? compiled : json_null ()));
    json_object_set_new (json_object_get (sa->payload, "reference_data"), "data",
                         json_pack ("{s:O, s:O, s:O, s:O, s:O}", "key",
                                    json_object_get (result, "data_key"), "bytes",
                                    json_object_get (result, "data_bytes"), "hash",
                                    json_object_get (result, "data_hash"), "inputs_hash",
                                    json_object_get (result, "inputs_hash"), "seed",
                                    json_object_get (result, "seed")));
    return 0;
}

//  A "candidate" or "reference" value: an artifact, or the JSON that
//  kf-compile-worker --build printed (its frames, and for a tuned build
//  its configs, which become the evaluate payload's).
static int
s_add_artifact (s_standalone_t *sa, const char *job, const char *base, json_t *value,
                const char *what, bool candidate)
{
    const char *path = json_string_value (value);
    if (!path) {
        sa->error = kf_strdupf ("%s: %s: must be a file name", job, what);
        return -1;
    }
    size_t len = strlen (path);
    if (len < 5 || strcmp (path + len - 5, ".json") != 0)
        return s_add_frame (sa, job, base, path, what);
    char *full = s_job_path (base, path);
    json_error_t jerr;
    json_t *build = full ? json_load_file (full, 0, &jerr) : NULL;
    json_t *frames = json_object_get (build, "frames");
    int rc = 0;
    json_t *kind = json_object_get (build, "kind");
    if (build && !candidate && json_is_string (kind)
        && !strcmp (json_string_value (kind), "reference")) {
        rc = s_add_torch_data (sa, job, build, full);
        json_decref (build);
        free (full);
        return rc;
    }
    if (!build)
        sa->error = kf_strdupf ("%s: %s: %s: %s", job, what, full ? full : path,
                                full ? jerr.text : "out of memory");
    else if (!json_is_true (json_object_get (json_object_get (build, "result"), "compiled"))
             || json_array_size (frames) == 0)
        sa->error = kf_strdupf ("%s: %s: %s holds no built artifact (did it compile?)", job,
                                what, full);
    if (sa->error)
        rc = -1;
    //  The reference is one artifact; a tuned candidate brings every
    //  config's, and the configs table that names them.
    size_t n = candidate ? json_array_size (frames) : 1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *frame = json_string_value (json_array_get (frames, i));
        rc = s_add_frame (sa, job, base, frame ? frame : "", what);
    }
    json_t *configs = json_object_get (json_object_get (build, "result"), "configs");
    if (rc == 0 && candidate && json_array_size (configs) > 1
        && !json_object_get (sa->payload, "configs")) {
        json_t *rows = json_array ();
        size_t i;
        json_t *row;
        json_array_foreach (configs, i, row)
            if (json_is_integer (json_object_get (row, "frame")))
                json_array_append_new (rows, json_pack ("{s:O, s:O}", "params",
                                                        json_object_get (row, "params"), "frame",
                                                        json_object_get (row, "frame")));
        json_object_set_new (sa->payload, "configs", rows);
    }
    json_decref (build);
    free (full);
    return rc;
}

//  Reads JOB into SA. Returns 0, or -1 with SA->error.
static int
s_standalone_load (const char *job, s_standalone_t *sa)
{
    memset (sa, 0, sizeof *sa);
    json_error_t jerr;
    json_t *root = json_load_file (job, 0, &jerr);
    if (!root) {
        if (jerr.line > 0)
            sa->error = kf_strdupf ("%s: line %d column %d: %s", job, jerr.line, jerr.column,
                                    jerr.text);
        else
            sa->error = kf_strdupf ("%s: %s", job, jerr.text);
        return -1;
    }
    char *copy = strdup (job);
    char *base = copy ? strdup (dirname (copy)) : NULL;
    free (copy);
    sa->frames = zmsg_new ();
    json_t *kind = json_object_get (root, "kind");
    json_t *payload = json_object_get (root, "payload");
    json_t *frames = json_object_get (root, "frames");
    static const char *const known[] = { "kind", "payload", "frames", "candidate", "reference", NULL };
    const char *key;
    json_t *value;
    if (!json_is_object (root))
        sa->error = kf_strdupf ("%s: must be a JSON object {kind, payload, frames}", job);
    else if (kind && (!json_is_string (kind)
                      || (strcmp (json_string_value (kind), "evaluate")
                          && strcmp (json_string_value (kind), "profile")
                          && strcmp (json_string_value (kind), "reference"))))
        sa->error = kf_strdupf ("%s: kind: must be \"evaluate\", \"profile\" or \"reference\"", job);
    else if (!json_is_object (payload))
        sa->error = kf_strdupf ("%s: payload: missing, or not an object", job);
    else if (frames && !json_is_array (frames))
        sa->error = kf_strdupf ("%s: frames: must be a list of file names", job);
    else if (frames && (json_object_get (root, "candidate") || json_object_get (root, "reference")))
        sa->error = kf_strdupf ("%s: give either frames or candidate and reference", job);
    if (!sa->error)
        json_object_foreach (root, key, value) {
            if (!kf_str_in (key, known)) {
                sa->error = kf_strdupf ("%s: %s: unknown key (kind, payload, frames, candidate, "
                                        "reference)", job, key);
                break;
            }
        }
    if (sa->error)
        goto done;
    sa->kind = strdup (kind ? json_string_value (kind) : "evaluate");
    sa->payload = json_deep_copy (payload);

    //  Conveniences: a task or a PyTorch problem by file name.
    json_t *task = json_object_get (sa->payload, "task");
    if (json_is_string (task)) {
        char *path = s_job_path (base, json_string_value (task));
        char *err = NULL;
        json_t *loaded = path ? kf_task_load (path, &err) : NULL;
        if (!loaded)
            sa->error = kf_strdupf ("%s: payload.task: %s", job, err ? err : "out of memory");
        else
            json_object_set_new (sa->payload, "task", loaded);
        free (err);
        free (path);
    }
    json_t *source_file = json_object_get (sa->payload, "source_file");
    if (!sa->error && source_file) {
        char *path = json_is_string (source_file)
                         ? s_job_path (base, json_string_value (source_file)) : NULL;
        size_t size;
        char *text = path ? kf_file_read (path, (size_t) 4 << 20, &size) : NULL;
        if (!text)
            sa->error = kf_strdupf ("%s: payload.source_file: cannot read %s", job,
                                    path ? path : "(not a file name)");
        else {
            json_object_set_new (sa->payload, "source", json_stringn (text, size));
            json_object_del (sa->payload, "source_file");
        }
        free (text);
        free (path);
    }
    if (sa->error)
        goto done;

    size_t i;
    json_array_foreach (frames, i, value) {
        char what[32];
        snprintf (what, sizeof what, "frames[%zu]", i);
        if (!json_is_string (value)) {
            sa->error = kf_strdupf ("%s: %s: must be a file name", job, what);
            goto done;
        }
        if (s_add_frame (sa, job, base, json_string_value (value), what))
            goto done;
    }
    json_t *cand = json_object_get (root, "candidate");
    json_t *ref = json_object_get (root, "reference");
    if (cand && s_add_artifact (sa, job, base, cand, "candidate", true))
        goto done;
    if (ref && s_add_artifact (sa, job, base, ref, "reference", false))
        goto done;
done:
    free (base);
    json_decref (root);
    return sa->error ? -1 : 0;
}

//  Writes RES as {kind, ok, result | error, frames} to stdout, each binary
//  frame to PREFIX.N.bin; with HANDLER_S >= 0 also handler_s, the
//  handler's wall time (--repeat). Returns the exit code.
static int
s_standalone_print (const char *kind, kf_job_result_t *res, const char *prefix,
                    double handler_s)
{
    json_t *out = json_pack ("{s:s, s:b}", "kind", kind, "ok", res->ok);
    if (handler_s >= 0)
        json_object_set_new (out, "handler_s", json_real (handler_s));
    if (res->ok)
        json_object_set_new (out, "result", res->result ? res->result : json_object ());
    else
        json_object_set_new (out, "error", json_string (res->error ? res->error : "job failed"));
    res->result = NULL;
    json_t *files = json_array ();
    int n = 0, rc = res->ok ? 0 : 1;
    for (zframe_t *f = res->frames ? zmsg_first (res->frames) : NULL; f;
         f = zmsg_next (res->frames), n++) {
        char *path = kf_strdupf ("%s.%d.bin", prefix, n);
        FILE *fp = path ? fopen (path, "wb") : NULL;
        if (!fp || fwrite (zframe_data (f), 1, zframe_size (f), fp) != zframe_size (f)) {
            fprintf (stderr, "kf-exec-worker: cannot write %s\n", path ? path : prefix);
            rc = 2;
        }
        if (fp)
            fclose (fp);
        //  Absolute, so a job file elsewhere can name this output.
        char full[PATH_MAX];
        json_array_append_new (files, json_string (path && realpath (path, full) ? full
                                                   : path ? path : ""));
        free (path);
    }
    json_object_set_new (out, "frames", files);
    char *text = json_dumps (out, JSON_INDENT (2));
    if (text)
        printf ("%s\n", text);
    fflush (stdout);
    free (text);
    json_decref (out);
    return rc;
}

//  The reference runner, set up as the daemon does. Returns its instance.
static kf_torch_ref_t *
s_torch_setup (const kf_config_t *config, const char *backend, int device, char **cache_dir,
               char **default_device)
{
    *cache_dir = kf_file_cache_dir (kf_config_str (config, "reference_cache_dir"), "reference");
    char *found = kf_file_cache_dir (kf_config_str (config, "python_found"), "python-found.json");
    *default_device = strcmp (backend, "cuda") == 0 ? kf_strdupf ("cuda:%d", device)
                                                    : strdup ("cpu");
    kf_torch_ref_config_t ref_config = {
        .python = kf_config_str (config, "python"),
        .found_file = found,
        .cache_dir = *cache_dir,
        .cache_max_bytes = (size_t) kf_config_int (config, "reference_cache_max_mb") << 20,
        .default_device = *default_device,
        .time_limit_s = kf_config_double (config, "reference_time_limit_s"),
    };
    kf_torch_ref_t *torch_ref = kf_torch_ref_new (&ref_config);
    free (found);
    kf_torch_ref_set_shared (torch_ref);
    return torch_ref;
}

static kf_profile_t *
s_profile_setup (const kf_config_t *config, const char *backend)
{
    kf_profile_config_t pc = {
        .ncu = kf_config_str (config, "ncu"),
        .perf = kf_config_str (config, "perf"),
        .perf_events = kf_config_str (config, "perf_events"),
        .backend = backend,
        .launches = (int) kf_config_int (config, "profile_launches"),
        .time_limit_s = kf_config_double (config, "profile_time_limit_s"),
    };
    kf_profile_t *profile = kf_profile_new (&pc);
    kf_profile_set_shared (profile);
    return profile;
}

//  --eval: one job through kf_exec_handle, no sockets. Only what the job's
//  kind needs is set up (finding torch takes seconds an evaluation need
//  not wait for).
static int
s_eval_main (const kf_config_t *config, const char *job_path, const char *prefix_arg,
             int repeat)
{
    s_standalone_t sa;
    if (s_standalone_load (job_path, &sa)) {
        fprintf (stderr, "kf-exec-worker: %s\n", sa.error);
        s_standalone_free (&sa);
        return 2;
    }
    if (repeat > 0 && strcmp (sa.kind, "evaluate") != 0) {
        fprintf (stderr, "kf-exec-worker: --repeat is for evaluate jobs, not %s\n", sa.kind);
        s_standalone_free (&sa);
        return 2;
    }
    const char *backend = kf_config_str (config, "backend");
    int device = s_device (config);
    if (repeat > 0) {
        //  As a worker starts: the probe opens the device (which stays
        //  open, so each child finds the driver initialised) and measures
        //  the ceilings the children are then handed.
        char *error = NULL;
        json_t *caps = kf_exec_probe (backend, device, &error);
        if (!caps) {
            fprintf (stderr, "kf-exec-worker: %s\n", error);
            free (error);
            s_standalone_free (&sa);
            return 2;
        }
        json_decref (caps);
    }
    char *cache_dir = NULL, *default_device = NULL;
    kf_torch_ref_t *torch_ref = NULL;
    kf_profile_t *profile = NULL;
    //  The reference store lives in the runner: an evaluation against
    //  PyTorch data needs it too (and torch, when it lacks the data).
    if (!strcmp (sa.kind, "reference") || json_object_get (sa.payload, "reference_data"))
        torch_ref = s_torch_setup (config, backend, device, &cache_dir, &default_device);
    if (!strcmp (sa.kind, "profile"))
        profile = s_profile_setup (config, backend);
    char *prefix = NULL;
    if (prefix_arg)
        prefix = strdup (prefix_arg);
    else {
        size_t len = strlen (job_path);
        if (len > 5 && !strcmp (job_path + len - 5, ".json"))
            len -= 5;
        prefix = kf_strdupf ("%.*s.out", (int) len, job_path);
    }

    kf_exec_config_t exec = s_exec_config (config, backend, device);
    kf_job_t job = { .job_id = 1, .lease = 1, .kind = sa.kind, .payload = sa.payload,
                     .frames = sa.frames };
    int rc = 0;
    for (int k = 0; k < (repeat > 0 ? repeat : 1); k++) {
        kf_job_result_t res = { 0 };
        double t0 = kf_eval_now ();
        kf_exec_handle (&exec, &job, &res);
        double took = kf_eval_now () - t0;
        int one = s_standalone_print (sa.kind, &res, prefix, repeat > 0 ? took : -1);
        rc = one > rc ? one : rc;
        free (res.error);
        json_decref (res.result);
        zmsg_destroy (&res.frames);
    }
    free (prefix);
    kf_torch_ref_set_shared (NULL);
    kf_torch_ref_destroy (&torch_ref);
    kf_profile_set_shared (NULL);
    kf_profile_destroy (&profile);
    free (default_device);
    free (cache_dir);
    s_standalone_free (&sa);
    return rc;
}

int
main (int argc, char **argv)
{
    if (argc >= 3 && strcmp (argv[1], "--eval-runner") == 0)
        return kf_runner_main (argc, argv);
    if (argc >= 3 && strcmp (argv[1], "--eval-child") == 0)
        return kf_exec_child_main (argv[2]);

    bool missing = false;
    const char *eval = kf_worker_take_arg (&argc, argv, "--eval", false, &missing);
    const char *prefix = kf_worker_take_arg (&argc, argv, "--out", false, &missing);
    const char *repeat_arg = kf_worker_take_arg (&argc, argv, "--repeat", false, &missing);
    bool measure = kf_worker_take_arg (&argc, argv, "--measure-host", true, &missing) != NULL;
    if (missing)
        return kf_worker_usage_error (S_PROGRAM, "%s needs a value (see --help)",
                                      "--eval/--out/--repeat");
    if (measure && eval)
        return kf_worker_usage_error (S_PROGRAM, "%s and --eval are two uses: one at a time",
                                      "--measure-host");
    if (prefix && !eval)
        return kf_worker_usage_error (S_PROGRAM, "%s is for --eval only", "--out");
    if (repeat_arg && !eval)
        return kf_worker_usage_error (S_PROGRAM, "%s is for --eval only", "--repeat");
    int repeat = 0;
    if (repeat_arg) {
        char *end = NULL;
        long n = strtol (repeat_arg, &end, 10);
        if (!end || *end || n < 1 || n > 1000)
            return kf_worker_usage_error (S_PROGRAM, "%s: a number of runs from 1 to 1000",
                                          "--repeat");
        repeat = (int) n;
    }
    int code;
    kf_config_t *config = kf_worker_load_config (S_PROGRAM, S_USAGE, s_table, &argc, argv,
                                                 &code);
    if (!config)
        return code;
    if (s_device_check (config) != 0) {
        kf_config_destroy (&config);
        return 2;
    }
    //  The host's measured figures, kept for the boot (kf_host_figures.h).
    char *figures = kf_file_cache_dir (kf_config_str (config, "host_figures"), "host-figures.json");
    kf_host_figures_use_file (figures, kf_config_bool (config, "remeasure"));
    free (figures);
    if (measure) {
        //  Only the host backend judges by these figures: another
        //  backend's worker measures its device at its own start.
        const char *backend = kf_config_str (config, "backend");
        bool host = !strcmp (backend, "host");
        if (!host)
            fprintf (stderr, "kf-exec-worker: --measure-host measures the host backend's figures; "
                     "--backend %s does not use them (it measures its device at start)\n", backend);
        kf_config_destroy (&config);
        return host ? s_measure_host () : 2;
    }
    kf_sandbox_hide (kf_config_str (config, "curve_cert"));
    json_t *caps = NULL;
    if (!eval) {
        //  The device first: a worker without its GPU says so on one
        //  line, whatever the host allows of namespaces (the probe runs no
        //  code but ours).
        char *error = NULL;
        caps = kf_exec_probe (kf_config_str (config, "backend"), s_device (config), &error);
        if (!caps) {
            fprintf (stderr, "kf-exec-worker: %s\n", error);
            free (error);
            kf_config_destroy (&config);
            return 2;
        }
    }
    //  A standalone --eval is not probed: a refused run says why itself.
    if (kf_sandbox_setup (kf_config_bool (config, "no_isolation"), !eval) != 0) {
        json_decref (caps);
        kf_config_destroy (&config);
        return 2;
    }
    if (eval) {
        int rc = s_eval_main (config, eval, prefix, repeat);
        kf_config_destroy (&config);
        return rc;
    }

    const char *backend = kf_config_str (config, "backend");
    int device = s_device (config);
    //  PyTorch references: optional, so a host without torch still
    //  evaluates kernels; the coordinator routes reference jobs by the
    //  "torch" capability.
    char *cache_dir = NULL, *default_device = NULL;
    kf_torch_ref_t *torch_ref = s_torch_setup (config, backend, device, &cache_dir,
                                               &default_device);
    json_object_set_new (caps, "isolation", json_string (kf_sandbox_mode ()));
    json_t *torch_caps = kf_torch_ref_capability (torch_ref);
    if (torch_caps)
        json_object_set_new (caps, "torch", torch_caps);
    //  Profiling: probed once here; "profile": false tells the coordinator
    //  not to send profile jobs to this worker.
    kf_profile_t *profile = s_profile_setup (config, backend);
    json_t *profiler = kf_profile_capability (profile);
    json_object_set_new (caps, "profile", json_boolean (profiler != NULL));
    if (profiler) {
        json_object_set_new (caps, "profiler", profiler);
        const char *tool = json_string_value (json_object_get (profiler, "profiler"));
        kf_info ("profiling: %s (%s)", json_string_value (json_object_get (profiler, tool)),
                 json_string_value (json_object_get (profiler, "version")));
    }
    else
        kf_info ("profiling unavailable: %s", kf_profile_unavailable (profile));

    kf_exec_config_t exec = s_exec_config (config, backend, device);
    //  Figures measured beside other work: again when the host is quiet.
    kf_figures_retry_t retry;
    kf_worker_idle_t idle = { .fn = kf_figures_retry_idle, .arg = &retry };
    idle.first_ms = kf_figures_retry_init (&retry, caps, kf_config_double (config, "figures_retry_s"),
                                           (int) kf_config_int (config, "figures_retries"));
    int rc = kf_worker_main_idle (config, "execute", caps, kf_exec_handle, &exec,
                                  idle.first_ms >= 0 ? &idle : NULL);
    kf_figures_retry_free (&retry);
    kf_profile_set_shared (NULL);
    kf_profile_destroy (&profile);
    kf_torch_ref_set_shared (NULL);
    kf_torch_ref_destroy (&torch_ref);
    free (default_device);
    free (cache_dir);
    json_decref (caps);
    kf_config_destroy (&config);
    return rc;
}
