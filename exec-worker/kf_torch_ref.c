/*  kf_torch_ref.c - the "reference" job (kf_torch_ref.h): a PyTorch
 *  problem run by the embedded runner in a sandboxed Python child.
 *
 *  The parent side is small on purpose: validate the payload, look the
 *  result up in the cache, write runner, problem and job into a private
 *  directory, run the interpreter under kf_subproc's limits, and turn what
 *  came back (manifest.json and its tensor files, error.json, a signal, a
 *  timeout) into a result. Everything PyTorch-specific happens in Python.
 *
 *  The tensors stay on this host: the runner writes them into one file,
 *  in manifest order, each manifest entry carrying its offset, and that
 *  file moves into the worker's reference store (kf_refcache.h) under a
 *  key made of what decides its bytes. The result carries the manifest,
 *  the key, the size and an XXH3-128 hash; an evaluate job that names
 *  the key finds the data there, or has it made again here
 *  (kf_torch_ref_data_link), the same seed giving the same inputs.
 */
#include "kf_torch_ref.h"
#include "kf_take.h"
#include "kf_refcache.h"
#include "kf_hash.h"
#include "kf_log.h"
#include "kf_msg_reference.h"
#include "kf_str.h"
#include "kf_file.h"
#include "kf_subproc.h"
#include "kf_text.h"
#include "kf_torch_probe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

//  The runner's text, generated from kf_torch_ref.py by common/embed.sh.
extern const char kf_torch_ref_py[];

#define KF_TORCH_REF_CACHE_VERSION "kf-torch-ref-v2"
#define KF_TORCH_REF_DATA_VERSION "kf-torch-ref-data-v1"

struct _kf_torch_ref_t {
    char *python;                //  NULL when no interpreter has torch
    char *version;               //  torch.__version__
    bool cuda;                   //  torch.cuda.is_available() in the sandbox
    char *tried;                 //  "A (why), B (why)"
    kf_refcache_t *cache;        //  the data, and results when results_cached
    bool results_cached;         //  a cache folder was configured
    char runner_hash[65];        //  SHA-256 of the runner's text: its version
    char *default_device;
    double time_limit_s;
    size_t memory_bytes;
};

static kf_torch_ref_t *s_shared;

// --------------------------------------------------------------------------
//  Small file helpers

//  Loads DIR/NAME as a JSON object (at most 64 MiB), or NULL.
static json_t *
s_load_json (const char *dir, const char *name)
{
    char path[4200];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    size_t size;
    char *text = kf_file_read (path, (size_t) 64 << 20, &size);
    if (!text)
        return NULL;
    json_error_t jerr;
    json_t *obj = json_loadb (text, size, 0, &jerr);
    free (text);
    if (obj && !json_is_object (obj)) {
        json_decref (obj);
        obj = NULL;
    }
    return obj;
}

//  The last MAX bytes of TEXT at whole lines, those left out counted
//  (kf_text.h). Caller frees.
#define s_tail kf_text_tail

kf_torch_ref_t *
kf_torch_ref_new (const kf_torch_ref_config_t *config)
{
    kf_torch_ref_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    kf_torch_ref_config_t none = { 0 };
    if (!config)
        config = &none;
    //  Without a folder the data still needs a home while the worker
    //  lives: a private one, removed at the end.
    self->cache = kf_refcache_new (config->cache_dir, config->cache_max_bytes);
    self->results_cached = config->cache_dir != NULL;
    if (!self->cache) {
        free (self);
        return NULL;
    }
    kf_sha256_hex (kf_torch_ref_py, strlen (kf_torch_ref_py), self->runner_hash);
    self->default_device = strdup (config->default_device ? config->default_device : "cpu");
    self->time_limit_s = config->time_limit_s > 0 ? config->time_limit_s : 600;
    self->memory_bytes = config->memory_bytes;
    kf_torch_found_t found;
    if (kf_torch_find (config->python, config->found_file, &found) != 0) {
        kf_torch_found_free (&found);
        kf_refcache_destroy (&self->cache);
        free (self->default_device);
        free (self);
        return NULL;
    }
    self->python = found.python;
    self->version = found.version;
    self->cuda = found.cuda;
    self->tried = found.tried;
    if (self->python)
        kf_info ("PyTorch references: %s (torch %s%s%s%s)", self->python, self->version,
                 self->cuda ? ", CUDA" : "", found.kept ? "; as kept in " : "",
                 found.kept ? config->found_file : "");
    else
        kf_info ("PyTorch references: no Python with torch (tried: %s)", self->tried);
    return self;
}

void
kf_torch_ref_destroy (kf_torch_ref_t **self_p)
{
    kf_torch_ref_t *self = KF_TAKE (self_p);
    if (self) {
        if (s_shared == self)
            s_shared = NULL;
        free (self->python);
        free (self->version);
        free (self->tried);
        kf_refcache_destroy (&self->cache);
        free (self->default_device);
        free (self);
    }
}

const char *
kf_torch_ref_python (kf_torch_ref_t *self)
{
    return self ? self->python : NULL;
}

const char *
kf_torch_ref_tried (kf_torch_ref_t *self)
{
    return self && self->tried ? self->tried : "";
}

json_t *
kf_torch_ref_capability (kf_torch_ref_t *self)
{
    if (!self || !self->python)
        return NULL;
    return json_pack ("{s:s, s:s, s:b}", "python", self->python, "version",
                      self->version, "cuda", self->cuda);
}

void
kf_torch_ref_set_shared (kf_torch_ref_t *self)
{
    s_shared = self;
}

kf_torch_ref_t *
kf_torch_ref_shared (void)
{
    return s_shared;
}

// --------------------------------------------------------------------------
//  The job

typedef struct {
    const char *source;
    json_int_t seed;
    json_int_t sets;
    const char *device;
    json_t *timing;              //  borrowed; may be NULL
    bool compile;
    double atol, rtol;           //  the task's tolerance: the degenerate check's
    bool export_data;            //  bound, and how far a tiny output scales it
} s_request_t;

static void
s_fail (kf_job_result_t *res, char *msg)
{
    res->ok = false;
    res->error = msg ? msg : strdup ("out of memory");
}

//  A failure of the problem itself, the same on any worker and any try:
//  not retried (kf_job_result_t.final).
static void
s_fail_final (kf_job_result_t *res, char *msg)
{
    s_fail (res, msg);
    res->final = true;
}

//  "cpu", "cuda" or "cuda:N".
static bool
s_device_valid (const char *device)
{
    if (!strcmp (device, "cpu") || !strcmp (device, "cuda"))
        return true;
    if (strncmp (device, "cuda:", 5) != 0)
        return false;
    const char *p = device + 5;
    if (!*p || strlen (p) > 3)
        return false;
    for (; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

//  Reads the payload into REQ. Returns NULL, or the reason (caller frees).
static char *
s_parse (kf_torch_ref_t *self, json_t *payload, s_request_t *req)
{
    json_t *v;
    memset (req, 0, sizeof *req);
    if (!json_is_object (payload))
        return strdup ("payload: must be an object");
    req->source = json_string_value (json_object_get (payload, "source"));
    if (!req->source || !*req->source)
        return strdup ("payload: source: missing (the problem's Python text)");
    if (strlen (req->source) != json_string_length (json_object_get (payload, "source")))
        return strdup ("payload: source: contains a NUL byte");
    v = json_object_get (payload, "seed");
    if (v && !json_is_integer (v))
        return strdup ("payload: seed: must be an integer");
    req->seed = v ? json_integer_value (v) : 0;
    if (req->seed < 0 || req->seed > ((json_int_t) 1 << 53))
        return kf_strdupf ("payload: seed: must be in 0..2^53 (got %lld)", (long long) req->seed);
    v = json_object_get (payload, "sets");
    if (v && !json_is_integer (v))
        return strdup ("payload: sets: must be an integer");
    req->sets = v ? json_integer_value (v) : 5;
    if (req->sets < 1 || req->sets > 100)
        return kf_strdupf ("payload: sets: must be in 1..100 (got %lld)", (long long) req->sets);
    v = json_object_get (payload, "device");
    if (v && !json_is_string (v))
        return strdup ("payload: device: must be a string");
    req->device = v ? json_string_value (v) : self->default_device;
    if (!s_device_valid (req->device))
        return kf_strdupf ("payload: device: '%s' is not cpu, cuda or cuda:N", req->device);
    if (!strncmp (req->device, "cuda", 4) && !self->cuda)
        return kf_strdupf ("device %s: the torch at %s has no CUDA", req->device,
                           self->python ? self->python : "(none)");
    req->timing = json_object_get (payload, "timing");
    if (req->timing && !json_is_object (req->timing))
        return strdup ("payload: timing: must be an object");
    const char *keys[] = { "min_time_s", "warmup_s", "min_samples", "warmup_calls", NULL };
    for (int i = 0; req->timing && keys[i]; i++) {
        v = json_object_get (req->timing, keys[i]);
        if (v && (!json_is_number (v) || json_number_value (v) < 0
                  || json_number_value (v) > 3600))
            return kf_strdupf ("payload: timing.%s: must be a number in 0..3600", keys[i]);
    }
    v = json_object_get (payload, "compile");
    if (v && !json_is_boolean (v))
        return strdup ("payload: compile: must be true or false");
    req->compile = v ? json_is_true (v) : true;
    v = json_object_get (payload, "atol");
    if (v && (!json_is_number (v) || json_number_value (v) < 0))
        return strdup ("payload: atol: must be a number >= 0");
    req->atol = v ? json_number_value (v) : 1e-5;
    v = json_object_get (payload, "rtol");
    if (v && (!json_is_number (v) || json_number_value (v) <= 0 || json_number_value (v) > 1))
        return strdup ("payload: rtol: must be a number in (0, 1]");
    req->rtol = v ? json_number_value (v) : 1e-2;
    v = json_object_get (payload, "export");
    if (v && !json_is_boolean (v))
        return strdup ("payload: export: must be true or false");
    req->export_data = v ? json_is_true (v) : true;
    return NULL;
}

//  The key of the result cache: everything that decides the result.
//  Timing parameters are not in it: a hit returns the times first
//  measured.
static void
s_result_key (kf_torch_ref_t *self, const s_request_t *req, const char *task_hash,
              char key[65])
{
    char *text = kf_strdupf ("%s\nrunner %s\nsource %s\nseed %lld\ndevice %s\nsets %lld\n"
                             "compile %d\natol %.17g\nrtol %.17g\nexport %d\ntorch %s\n",
                             KF_TORCH_REF_CACHE_VERSION, self->runner_hash, task_hash,
                             (long long) req->seed, req->device, (long long) req->sets,
                             req->compile, req->atol, req->rtol, req->export_data,
                             self->version ? self->version : "");
    kf_sha256_hex (text ? text : "", text ? strlen (text) : 0, key);
    free (text);
}

//  The key of the data: what decides its bytes and nothing else (no
//  device, no torch version), so every exec host computes the same key
//  for a run's data; the hash then says whether its bytes agree.
static void
s_data_key (kf_torch_ref_t *self, const char *task_hash, json_int_t seed, json_int_t sets,
            char key[65])
{
    char *text = kf_strdupf ("%s\nrunner %s\nsource %s\nseed %lld\nsets %lld\n",
                             KF_TORCH_REF_DATA_VERSION, self->runner_hash, task_hash,
                             (long long) seed, (long long) sets);
    kf_sha256_hex (text ? text : "", text ? strlen (text) : 0, key);
    free (text);
}

//  Runs the runner on REQ (DATA_ONLY: the data again, nothing timed or
//  checked). Returns the manifest (caller's) with *DIR, the runner's
//  folder holding data.bin (caller removes and frees it), or NULL with
//  *ERROR (caller frees) and *FINAL set when the failure is the
//  problem's own (it raised, or its data passed the cap or the disk):
//  the same on any worker, so not worth another try.
static json_t *
s_run (kf_torch_ref_t *self, const s_request_t *req, bool data_only, char **dir_out,
       double *wall_s, char **error, bool *final)
{
    *final = false;
    *dir_out = NULL;
    uint64_t cap = kf_refcache_max_bytes (self->cache);
    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = self->time_limit_s;
    limits.output_cap = 64 * 1024;
    limits.memory_bytes = self->memory_bytes;
    //  Threads count against RLIMIT_NPROC: torch starts one per core for
    //  its thread pools, more with CUDA; 64 would fail a big host.
    limits.max_procs = 512;
    //  The runner checks the total against the cap before writing; the
    //  file limit only has to let that much through.
    if (limits.file_bytes < cap + ((size_t) 1 << 20))
        limits.file_bytes = cap + ((size_t) 1 << 20);
#if defined(__SANITIZE_ADDRESS__)
    limits.memory_bytes = 0;
#endif
    //  When the worker is root, kf_subproc_run hands the directory to the
    //  run's sandbox uid, so the child can write its data file; the
    //  files written here are 0644, so it can read them.
    char *dir = kf_subproc_workdir (&limits);
    if (!dir) {
        *error = kf_strdupf ("cannot make a temporary directory: %s", strerror (errno));
        return NULL;
    }

    json_t *job = json_pack ("{s:I, s:I, s:s, s:b, s:f, s:f, s:b, s:I, s:s, s:b}",
                             "seed", req->seed, "sets", req->sets, "device", req->device,
                             "compile", req->compile && !data_only, "atol", req->atol,
                             "rtol", req->rtol,
                             "export", req->export_data || data_only,
                             "max_bytes", (json_int_t) cap, "data_file", "data.bin",
                             "data_only", data_only);
    if (job && req->timing)
        json_object_set (job, "timing", req->timing);
    char *text = job ? json_dumps (job, JSON_COMPACT) : NULL;
    json_decref (job);
    if (!text
        || kf_file_write (dir, "kf_torch_ref.py", kf_torch_ref_py, strlen (kf_torch_ref_py))
        || kf_file_write (dir, "problem.py", req->source, strlen (req->source))
        || kf_file_write (dir, "job.json", text, strlen (text))) {
        *error = kf_strdupf ("cannot write the reference files: %s", strerror (errno));
        free (text);
        kf_subproc_rmtree (dir);
        free (dir);
        return NULL;
    }
    free (text);

    char script[4200];
    snprintf (script, sizeof script, "%s/kf_torch_ref.py", dir);
    char *argv[] = { self->python, "-B", "-s", script, dir, NULL };
    kf_subproc_result_t run;
    if (kf_subproc_run (argv, &limits, &run) != 0) {
        *error = kf_strdupf ("cannot start %s: %s", self->python, strerror (errno));
        kf_subproc_rmtree (dir);
        free (dir);
        return NULL;
    }
    *wall_s = run.wall_s;
    json_t *manifest = run.timed_out || run.exit_code != 0 ? NULL
                     : s_load_json (dir, "manifest.json");
    json_t *failure = manifest || run.timed_out ? NULL : s_load_json (dir, "error.json");
    char *tail = s_tail (run.output, 1500);
    if (manifest && !json_is_array (json_object_get (manifest, "tensors"))) {
        *error = strdup ("runner: manifest without a tensors array");
        json_decref (manifest);
        manifest = NULL;
    }
    else if (manifest)
        ;
    else if (run.timed_out)
        *error = kf_strdupf ("reference run exceeded the %.0f s limit%s%s", self->time_limit_s,
                             tail && *tail ? "; last output:\n" : "", tail ? tail : "");
    else if (failure && json_is_true (json_object_get (failure, "limit"))) {
        *error = kf_strdupf ("reference data: %s",
                             json_string_value (json_object_get (failure, "error")));
        *final = true;
    }
    else if (failure) {
        *final = true;
        //  The traceback's end holds the problem's own frames and the
        //  exception; its start is the runner's.
        const char *tb = json_string_value (json_object_get (failure, "traceback"));
        char *trimmed = s_tail (tb ? tb : "", 3000);
        *error = kf_strdupf ("problem raised in %s: %s\n%s",
                             json_string_value (json_object_get (failure, "stage")),
                             json_string_value (json_object_get (failure, "error")),
                             trimmed ? trimmed : "");
        free (trimmed);
    }
    else if (run.signal == 24)
        //  SIGXCPU: RLIMIT_CPU counts the CPU time of every thread, and
        //  torch keeps one busy per core.
        *error = kf_strdupf ("reference runner reached its CPU-time limit (%.0f s over "
                             "all threads)", self->time_limit_s + 1);
    else if (run.signal == 25)
        //  SIGXFSZ: Python ignores it, so only a child it started gets it.
        *error = kf_strdupf ("reference runner passed the file-size limit (%llu bytes, the "
                             "reference cache cap)", (unsigned long long) cap);
    else
        *error = kf_strdupf ("reference runner ended (%s %d) without a result%s%s",
                             run.signal ? "signal" : "exit code",
                             run.signal ? run.signal : run.exit_code,
                             tail && *tail ? "; last output:\n" : "", tail ? tail : "");
    free (tail);
    json_decref (failure);
    kf_subproc_result_free (&run);
    if (manifest)
        *dir_out = dir;
    else {
        kf_subproc_rmtree (dir);
        free (dir);
    }
    return manifest;
}

//  Hashes DIR/data.bin against MANIFEST's tensors and moves it into the
//  store as KEY; MANIFEST gains data_key, data_bytes, data_hash and
//  inputs_hash. Returns 0, KF_REFCACHE_TOO_BIG or -1, with *ERROR.
static int
s_store (kf_torch_ref_t *self, const char *dir, const char *key, json_t *manifest,
         const char *made, char **error)
{
    char path[4200], why[600], hash[33], inputs_hash[33];
    snprintf (path, sizeof path, "%s/data.bin", dir);
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat (fd, &st) || !S_ISREG (st.st_mode)) {
        *error = kf_strdupf ("runner: data.bin: missing or not a plain file");
        if (fd >= 0)
            close (fd);
        return -1;
    }
    int rc = kf_refcache_hash (fd, (uint64_t) st.st_size, json_object_get (manifest, "tensors"),
                               hash, inputs_hash, why, sizeof why);
    close (fd);
    if (rc) {
        *error = kf_strdupf ("runner: %s", why);
        return -1;
    }
    json_t *meta = json_pack ("{s:s, s:s, s:s, s:O, s:O, s:O, s:O, s:O, s:s}", "key", key,
                              "hash", hash, "inputs_hash", inputs_hash, "tensors",
                              json_object_get (manifest, "tensors"), "seed",
                              json_object_get (manifest, "seed"), "sets",
                              json_object_get (manifest, "sets"), "device",
                              json_object_get (manifest, "device"), "torch_version",
                              json_object_get (manifest, "torch_version"), "made", made);
    kf_refcache_lock (self->cache);
    rc = meta ? kf_refcache_put_data (self->cache, key, path, meta, why, sizeof why) : -1;
    kf_refcache_unlock (self->cache);
    json_decref (meta);
    if (rc) {
        *error = strdup (meta ? why : "out of memory");
        return rc;
    }
    json_object_set_new (manifest, "data_key", json_string (key));
    json_object_set_new (manifest, "data_bytes", json_integer ((json_int_t) st.st_size));
    json_object_set_new (manifest, "data_hash", json_string (hash));
    json_object_set_new (manifest, "inputs_hash", json_string (inputs_hash));
    return 0;
}

//  RESULT (a cached result) still has its data in the store, whole and
//  with the hash it was answered with.
static bool
s_data_present (kf_torch_ref_t *self, json_t *result)
{
    const char *key = json_string_value (json_object_get (result, "data_key"));
    if (!key)
        return false;
    kf_refcache_lock (self->cache);
    json_t *meta = kf_refcache_get_data (self->cache, key);
    kf_refcache_unlock (self->cache);
    bool same = meta && !strcmp (json_string_value (json_object_get (meta, "hash"))
                                 ? json_string_value (json_object_get (meta, "hash")) : "",
                                 json_string_value (json_object_get (result, "data_hash"))
                                 ? json_string_value (json_object_get (result, "data_hash")) : "-");
    json_decref (meta);
    return same;
}

void
kf_torch_ref_handle (void *arg, const kf_job_t *job, kf_job_result_t *res)
{
    kf_torch_ref_t *self = arg;
    memset (res, 0, sizeof *res);
    if (!self) {
        s_fail (res, strdup ("this worker has no PyTorch reference runner"));
        return;
    }
    if (!self->python) {
        s_fail (res, kf_strdupf ("no Python with torch found (tried: %s)", self->tried));
        return;
    }
    s_request_t req;
    char *why = s_parse (self, job->payload, &req);
    if (why) {
        s_fail (res, why);
        return;
    }
    char task_hash[65], key[65], data_key[65];
    kf_sha256_hex (req.source, strlen (req.source), task_hash);
    s_result_key (self, &req, task_hash, key);
    s_data_key (self, task_hash, req.seed, req.sets, data_key);

    double wall_s = 0;
    json_t *result = self->results_cached ? kf_refcache_get_result (self->cache, key) : NULL;
    if (result && req.export_data && !s_data_present (self, result)) {
        json_decref (result);     //  the data was evicted: run again
        result = NULL;
    }
    bool cached = result != NULL;
    if (!cached) {
        char *error = NULL, *dir = NULL;
        bool final = false;
        result = s_run (self, &req, false, &dir, &wall_s, &error, &final);
        if (result && req.export_data) {
            int rc = s_store (self, dir, data_key, result, "reference", &error);
            if (rc) {
                //  Past the cap or the disk: the problem's own size.
                final = rc == KF_REFCACHE_TOO_BIG;
                json_decref (result);
                result = NULL;
            }
        }
        if (dir) {
            kf_subproc_rmtree (dir);
            free (dir);
        }
        if (!result) {
            (final ? s_fail_final : s_fail) (res, error);
            return;
        }
        json_object_set_new (result, "task_hash", json_string (task_hash));
        if (self->results_cached)
            kf_refcache_put_result (self->cache, key, result);
    }
    //  Out through the codec (proto/kf_msg_reference.c), checked as the coordinator will.
    char bad[300];
    res->ok = !kf_reference_result_seal (&result, cached, key, wall_s, bad, sizeof bad);
    res->result = result;
    res->error = res->ok ? NULL : kf_strdupf ("the reference result breaks the protocol: %s", bad);
}

// --------------------------------------------------------------------------
//  Evaluations: the data by its key, made again when this worker lacks it

//  "the run's X" or "none" for a message.
static const char *
s_or (json_t *o, const char *key)
{
    const char *s = json_string_value (json_object_get (o, key));
    return s ? s : "none";
}

int
kf_torch_ref_data_link (kf_torch_ref_t *self, json_t *refdata, const char *source,
                        const char *dest, json_t **note, char **error)
{
    *note = NULL;
    *error = NULL;
    if (!self) {
        *error = strdup ("this worker has no PyTorch reference runner, which keeps the "
                         "reference data");
        return -1;
    }
    json_t *want = json_object_get (refdata, "data");
    json_t *seed = json_object_get (want, "seed");
    json_t *sets = json_object_get (refdata, "sets");
    if (!source || !*source || !json_is_object (want) || !json_is_integer (seed)
        || !json_is_integer (sets) || !json_is_string (json_object_get (want, "hash"))
        || !json_is_string (json_object_get (want, "inputs_hash"))) {
        *error = strdup ("reference_data: needs data {key, hash, inputs_hash, bytes, seed} and "
                         "sets, and the task's reference.source");
        return -1;
    }
    char task_hash[65], key[65], why[600];
    kf_sha256_hex (source, strlen (source), task_hash);
    s_data_key (self, task_hash, json_integer_value (seed), json_integer_value (sets), key);
    //  Looked up and linked under the lock, so no trim comes in between.
    kf_refcache_lock (self->cache);
    json_t *meta = kf_refcache_get_data (self->cache, key);
    int rc = meta ? kf_refcache_link_data (self->cache, key, dest, why, sizeof why) : -1;
    kf_refcache_unlock (self->cache);
    const char *from = "cache";
    double wall_s = 0;
    if (rc) {
        json_decref (meta);
        meta = NULL;
        if (!self->python) {
            *error = kf_strdupf ("this worker lacks the reference data %s and has no Python "
                                 "with torch to make it (tried: %s)", key, self->tried);
            return -1;
        }
        kf_info ("reference data %s: not on this worker; making it (seed %lld, %lld sets)",
                 key, (long long) json_integer_value (seed), (long long) json_integer_value (sets));
        s_request_t req = { .source = source, .seed = json_integer_value (seed),
                            .sets = json_integer_value (sets), .device = self->default_device,
                            .atol = 1e-5, .rtol = 1e-2, .export_data = true };
        char *dir = NULL;
        bool final = false;
        json_t *manifest = s_run (self, &req, true, &dir, &wall_s, error, &final);
        if (manifest && s_store (self, dir, key, manifest, "regenerated", error) != 0) {
            json_decref (manifest);
            manifest = NULL;
        }
        if (dir) {
            kf_subproc_rmtree (dir);
            free (dir);
        }
        if (!manifest) {
            char *e = kf_strdupf ("reference data %s: making it on this worker failed: %s", key,
                                  *error ? *error : "?");
            free (*error);
            *error = e;
            return -1;
        }
        json_decref (manifest);
        kf_refcache_lock (self->cache);
        meta = kf_refcache_get_data (self->cache, key);
        rc = meta ? kf_refcache_link_data (self->cache, key, dest, why, sizeof why) : -1;
        kf_refcache_unlock (self->cache);
        if (rc) {
            json_decref (meta);
            *error = kf_strdupf ("reference data %s: made, then gone: %s", key,
                                 meta ? why : "evicted at once (is the cache cap too small?)");
            return -1;
        }
        from = "regenerated";
    }
    //  The hash decides whether these are the run's bytes. Inputs must be
    //  the same bytes on every host (same seed, same draws); outputs may
    //  differ in their last bits on another device or BLAS, and are then
    //  this host's own reference computation of the same inputs, which
    //  the candidate is judged against, said in the result and the log.
    bool same = !strcmp (s_or (meta, "hash"), s_or (want, "hash"));
    bool same_inputs = !strcmp (s_or (meta, "inputs_hash"), s_or (want, "inputs_hash"));
    *note = json_pack ("{s:s, s:s, s:O, s:s, s:b, s:b, s:f}", "key", key, "from", from,
                       "bytes", json_object_get (meta, "bytes"), "hash", s_or (meta, "hash"),
                       "matches", same, "inputs_match", same_inputs, "wall_s", wall_s);
    if (strcmp (key, s_or (want, "key")))
        json_object_set_new (*note, "run_key", json_string (s_or (want, "key")));
    if (!same_inputs) {
        *error = kf_strdupf ("reference data %s (%s on this worker) differs in its inputs from "
                             "the run's: inputs hash %s, the run's %s (a problem whose "
                             "get_inputs draws differ between hosts or torch versions)",
                             key, from, s_or (meta, "inputs_hash"), s_or (want, "inputs_hash"));
        json_decref (*note);
        *note = NULL;
        unlink (dest);
        rc = -1;
    }
    else if (!same) {
        char *warning = kf_strdupf ("reference data %s (%s on this worker): same inputs, "
                                    "outputs differ bit-wise from the run's (hash %s, the "
                                    "run's %s; device %s); judged against this worker's "
                                    "outputs", key, from, s_or (meta, "hash"),
                                    s_or (want, "hash"), s_or (meta, "device"));
        kf_warn ("%s", warning ? warning : "reference data differs");
        json_object_set_new (*note, "warning", json_string (warning ? warning : ""));
        free (warning);
    }
    json_decref (meta);
    return rc ? -1 : 0;
}
