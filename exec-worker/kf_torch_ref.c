/*  kf_torch_ref.c - the "reference" job (kf_torch_ref.h): a PyTorch
 *  problem run by the embedded runner in a sandboxed Python child.
 *
 *  The parent side is small on purpose: validate the payload, look the
 *  result up in the cache, write runner, problem and job into a private
 *  directory, run the interpreter under kf_subproc's limits, and turn what
 *  came back (manifest.json and its tensor files, error.json, a signal, a
 *  timeout) into a result. Everything PyTorch-specific happens in Python.
 *
 *  The tensor files travel as one binary frame, their concatenation in
 *  manifest order, each manifest entry carrying its offset: the protocol
 *  allows at most 16 binary frames, and five input sets with their
 *  outputs and a model's parameters pass that.
 */
#include "kf_torch_ref.h"
#include "kf_hash.h"
#include "kf_log.h"
#include "kf_str.h"
#include "kf_file.h"
#include "kf_subproc.h"

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

#define KF_TORCH_REF_CACHE_VERSION "kf-torch-ref-v1"

struct _kf_torch_ref_t {
    char *python;                //  NULL when no interpreter has torch
    char *version;               //  torch.__version__
    bool cuda;                   //  torch.cuda.is_available() in the sandbox
    char *tried;                 //  "A (why), B (why)"
    char *cache_dir;
    size_t cache_max_bytes;
    char *default_device;
    double time_limit_s;
    size_t memory_bytes;
    size_t max_result_bytes;
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

//  The last MAX bytes of TEXT, starting at a line, trailing space gone.
//  Caller frees.
static char *
s_tail (const char *text, size_t max)
{
    size_t len = strlen (text);
    while (len && (text[len - 1] == '\n' || text[len - 1] == ' ' || text[len - 1] == '\r'))
        len--;
    size_t start = len > max ? len - max : 0;
    if (start) {
        const char *nl = memchr (text + start, '\n', len - start);
        if (nl && nl + 1 < text + len)
            start = (size_t) (nl + 1 - text);
    }
    return kf_strdupf ("%s%.*s", start ? "...\n" : "", (int) (len - start), text + start);
}

// --------------------------------------------------------------------------
//  Finding the interpreter

//  Runs PYTHON in the sandbox the jobs use and asks torch for its version
//  and whether CUDA works. Returns 0 with *VERSION, *EXE (sys.executable)
//  and *CUDA, or -1 with WHY.
static int
s_probe (const char *python, char **version, char **exe, bool *cuda,
         char *why, size_t why_size)
{
    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = 120;   //  a cold import of torch and CUDA takes seconds
    limits.memory_bytes = 0;
    limits.max_procs = 512;
    char *dir = kf_subproc_mkdtemp (&limits);
    if (!dir) {
        snprintf (why, why_size, "no temporary directory: %s", strerror (errno));
        return -1;
    }
    limits.workdir = dir;
    char *argv[] = { (char *) python, "-B", "-s", "-c",
                     "import sys, torch\n"
                     "print('KF-TORCH', torch.__version__, int(torch.cuda.is_available()),"
                     " sys.executable)\n", NULL };
    kf_subproc_result_t run;
    int rc = -1;
    if (kf_subproc_run (argv, &limits, &run) != 0) {
        snprintf (why, why_size, "%s", errno == ENOENT ? "not found" : strerror (errno));
        kf_subproc_rmtree (dir);
        free (dir);
        return -1;
    }
    const char *line = strstr (run.output, "KF-TORCH ");
    char v[128], e[4096];
    int c;
    if (!run.timed_out && run.exit_code == 0 && line
        && sscanf (line, "KF-TORCH %127s %d %4095[^\n]", v, &c, e) == 3) {
        *version = strdup (v);
        *exe = strdup (e);
        *cuda = c != 0;
        rc = 0;
    }
    else if (run.timed_out)
        snprintf (why, why_size, "import torch took over %.0f s", limits.time_limit_s);
    else {
        //  The last line says it: "ModuleNotFoundError: No module named 'torch'".
        char *tail = s_tail (run.output, 200);
        const char *last = tail ? strrchr (tail, '\n') : NULL;
        snprintf (why, why_size, "%s", last ? last + 1 : tail && *tail ? tail
                                       : "exited without a word");
        free (tail);
    }
    kf_subproc_result_free (&run);
    kf_subproc_rmtree (dir);
    free (dir);
    return rc;
}

static void
s_discover (kf_torch_ref_t *self, const char *configured)
{
    const char *candidates[5];
    int n = 0;
    if (configured && *configured)
        //  A named interpreter is an order: a silent fall-back to another
        //  torch would time references with a version nobody chose.
        candidates[n++] = configured;
    else {
        const char *env = getenv ("KF_PYTHON");
        if (env && *env)
            candidates[n++] = env;
        candidates[n++] = "/opt/torch/.venv/bin/python3";
        candidates[n++] = "/usr/bin/python3";
        candidates[n++] = "python3";
    }
    char *tried = NULL;
    size_t tried_size = 0;
    FILE *f = open_memstream (&tried, &tried_size);
    for (int i = 0; i < n && !self->python; i++) {
        char why[256] = "";
        char *version = NULL, *exe = NULL;
        bool cuda = false;
        if (s_probe (candidates[i], &version, &exe, &cuda, why, sizeof why) == 0) {
            //  sys.executable names what PATH found; a venv's path stays
            //  a venv's path, so its packages stay in use.
            self->python = strdup (candidates[i][0] == '/' || !exe[0] ? candidates[i] : exe);
            self->version = version;
            self->cuda = cuda;
            free (exe);
        }
        else if (f)
            fprintf (f, "%s%s (%s)", ftell (f) ? ", " : "", candidates[i], why);
    }
    if (f)
        fclose (f);
    self->tried = tried ? tried : strdup ("");
}

kf_torch_ref_t *
kf_torch_ref_new (const kf_torch_ref_config_t *config)
{
    kf_torch_ref_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    kf_torch_ref_config_t none = { 0 };
    if (!config)
        config = &none;
    self->cache_dir = config->cache_dir ? strdup (config->cache_dir) : NULL;
    self->cache_max_bytes = config->cache_max_bytes ? config->cache_max_bytes
                                                    : (size_t) 4 << 30;
    self->default_device = strdup (config->default_device ? config->default_device : "cpu");
    self->time_limit_s = config->time_limit_s > 0 ? config->time_limit_s : 600;
    self->memory_bytes = config->memory_bytes;
    self->max_result_bytes = config->max_result_bytes ? config->max_result_bytes
                                                      : (size_t) 48 << 20;
    s_discover (self, config->python);
    if (self->python)
        kf_info ("PyTorch references: %s (torch %s%s)", self->python, self->version,
                 self->cuda ? ", CUDA" : "");
    else
        kf_info ("PyTorch references: no Python with torch (tried: %s)", self->tried);
    return self;
}

void
kf_torch_ref_destroy (kf_torch_ref_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    kf_torch_ref_t *self = *self_p;
    if (s_shared == self)
        s_shared = NULL;
    free (self->python);
    free (self->version);
    free (self->tried);
    free (self->cache_dir);
    free (self->default_device);
    free (self);
    *self_p = NULL;
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
//  The cache: DIR/KEY.json (the result) and DIR/KEY.bin (the tensor data).
//  The .json is written last, each through a rename, so its presence means
//  the entry is whole, and concurrent writers of one key cannot tear it.

//  A hit: *RESULT (caller's) and *BLOB (caller frees) of KEY.
static bool
s_cache_get (const char *dir, const char *key, json_t **result, char **blob,
             size_t *blob_size)
{
    *result = NULL;
    *blob = NULL;
    *blob_size = 0;
    if (!dir)
        return false;
    char name[80], path[4200];
    snprintf (name, sizeof name, "%s.json", key);
    json_t *r = s_load_json (dir, name);
    if (!r)
        return false;
    snprintf (path, sizeof path, "%s/%s.bin", dir, key);
    size_t size = 0;
    char *data = kf_file_read (path, SIZE_MAX / 2, &size);
    json_int_t want = json_integer_value (json_object_get (r, "data_bytes"));
    if (!data || (json_int_t) size != want) {
        //  A .bin from another writer's half-finished entry, or none:
        //  a miss, and the next put repairs it.
        free (data);
        json_decref (r);
        return false;
    }
    //  Touch it: trimming removes the least recently used first.
    snprintf (path, sizeof path, "%s/%s.json", dir, key);
    utimensat (AT_FDCWD, path, NULL, 0);
    *result = r;
    *blob = data;
    *blob_size = size;
    return true;
}

static void
s_cache_put (const char *dir, const char *key, json_t *result, const char *blob,
             size_t blob_size, size_t max_bytes)
{
    if (!dir)
        return;
    if (mkdir (dir, 0700) && errno != EEXIST)
        return;
    char name[80];
    char *text = json_dumps (result, JSON_COMPACT);
    snprintf (name, sizeof name, "%s.bin", key);
    int rc = text ? kf_file_replace (dir, name, blob ? blob : "", blob_size) : -1;
    snprintf (name, sizeof name, "%s.json", key);
    if (rc == 0)
        rc = kf_file_replace (dir, name, text, strlen (text));
    if (rc)
        kf_warn ("reference cache: cannot store %s in %s: %s", key, dir, strerror (errno));
    free (text);
    kf_file_trim (dir, max_bytes, (const char *const[]) { "json", NULL },
                  (const char *const[]) { "json", "bin", NULL });
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
    double atol;
    bool export_data;
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
    v = json_object_get (payload, "export");
    if (v && !json_is_boolean (v))
        return strdup ("payload: export: must be true or false");
    req->export_data = v ? json_is_true (v) : true;
    return NULL;
}

//  The cache key: everything that decides the result's data. Timing
//  parameters are not in it: a hit returns the times first measured.
static void
s_cache_key (kf_torch_ref_t *self, const s_request_t *req, const char *task_hash,
             char key[65])
{
    char *text = kf_strdupf ("%s\nsource %s\nseed %lld\ndevice %s\nsets %lld\ncompile %d\n"
                             "atol %.17g\nexport %d\ntorch %s\n",
                             KF_TORCH_REF_CACHE_VERSION, task_hash, (long long) req->seed,
                             req->device, (long long) req->sets, req->compile, req->atol,
                             req->export_data, self->version ? self->version : "");
    kf_sha256_hex (text ? text : "", text ? strlen (text) : 0, key);
    free (text);
}

//  A tensor file name the runner may give: "t" then four or more digits,
//  then ".bin". Anything else is refused rather than opened.
static bool
s_file_name_valid (const char *name)
{
    size_t len = strlen (name);
    if (len < 9 || len > 16 || name[0] != 't' || strcmp (name + len - 4, ".bin"))
        return false;
    for (size_t i = 1; i < len - 4; i++)
        if (name[i] < '0' || name[i] > '9')
            return false;
    return true;
}

//  Joins the tensor files of MANIFEST (in DIR) into *BLOB in manifest
//  order, setting each entry's offset. Returns NULL or the reason.
static char *
s_collect (kf_torch_ref_t *self, const char *dir, json_t *manifest, char **blob,
           size_t *blob_size)
{
    *blob = NULL;
    *blob_size = 0;
    json_t *tensors = json_object_get (manifest, "tensors");
    if (!json_is_array (tensors))
        return strdup ("runner: manifest without a tensors array");
    size_t total = 0, i;
    json_t *t;
    json_array_foreach (tensors, i, t) {
        json_int_t bytes = json_integer_value (json_object_get (t, "bytes"));
        if (!json_is_integer (json_object_get (t, "bytes")) || bytes < 0)
            return kf_strdupf ("runner: manifest tensor %zu: bad bytes", i);
        total += (size_t) bytes;
    }
    if (total > self->max_result_bytes)
        return kf_strdupf ("reference data is %zu bytes, over the worker's limit of %zu "
                           "(fewer sets, smaller shapes, or export: false)",
                           total, self->max_result_bytes);
    char *data = malloc (total ? total : 1);
    if (!data)
        return strdup ("out of memory for the reference data");
    size_t offset = 0;
    json_array_foreach (tensors, i, t) {
        const char *file = json_string_value (json_object_get (t, "file"));
        size_t want = (size_t) json_integer_value (json_object_get (t, "bytes"));
        if (!file || !s_file_name_valid (file)) {
            free (data);
            return kf_strdupf ("runner: manifest tensor %zu: bad file name", i);
        }
        char path[4200];
        snprintf (path, sizeof path, "%s/%s", dir, file);
        size_t got = 0;
        char *part = kf_file_read (path, want, &got);
        if (!part || got != want) {
            free (part);
            free (data);
            return kf_strdupf ("runner: %s: missing or not %zu bytes", file, want);
        }
        memcpy (data + offset, part, got);
        free (part);
        json_object_set_new (t, "offset", json_integer ((json_int_t) offset));
        offset += got;
    }
    *blob = data;
    *blob_size = total;
    return NULL;
}

//  Runs the runner on REQ. Returns the result (caller's) with *BLOB, or
//  NULL with *ERROR (caller frees) and *FINAL set when the failure is the
//  problem's own (it raised, or its data passed a size limit): the same on
//  any worker, so not worth another try.
static json_t *
s_run (kf_torch_ref_t *self, const s_request_t *req, char **blob, size_t *blob_size,
       double *wall_s, char **error, bool *final)
{
    *final = false;
    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = self->time_limit_s;
    limits.output_cap = 64 * 1024;
    limits.memory_bytes = self->memory_bytes;
    //  Threads count against RLIMIT_NPROC: torch starts one per core for
    //  its thread pools, more with CUDA; 64 would fail a big host.
    limits.max_procs = 512;
    //  The runner checks the total against max_bytes before writing; the
    //  file limit only has to let that much through.
    if (limits.file_bytes < self->max_result_bytes + ((size_t) 1 << 20))
        limits.file_bytes = self->max_result_bytes + ((size_t) 1 << 20);
#if defined(__SANITIZE_ADDRESS__)
    limits.memory_bytes = 0;
#endif
    //  When the worker is root, kf_subproc_run hands the directory to the
    //  run's sandbox uid, so the child can write its tensor files; the
    //  files written here are 0644, so it can read them.
    char *dir = kf_subproc_mkdtemp (&limits);
    if (!dir) {
        *error = kf_strdupf ("cannot make a temporary directory: %s", strerror (errno));
        return NULL;
    }
    limits.workdir = dir;

    json_t *job = json_pack ("{s:I, s:I, s:s, s:b, s:f, s:b, s:I}",
                             "seed", req->seed, "sets", req->sets, "device", req->device,
                             "compile", req->compile, "atol", req->atol,
                             "export", req->export_data,
                             "max_bytes", (json_int_t) self->max_result_bytes);
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
    if (manifest) {
        char *why = s_collect (self, dir, manifest, blob, blob_size);
        if (why) {
            *error = why;
            json_decref (manifest);
            manifest = NULL;
        }
    }
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
    else
        *error = kf_strdupf ("reference runner ended (%s %d) without a result%s%s",
                             run.signal ? "signal" : "exit code",
                             run.signal ? run.signal : run.exit_code,
                             tail && *tail ? "; last output:\n" : "", tail ? tail : "");
    free (tail);
    json_decref (failure);
    kf_subproc_result_free (&run);
    kf_subproc_rmtree (dir);
    free (dir);
    return manifest;
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
    char task_hash[65], key[65];
    kf_sha256_hex (req.source, strlen (req.source), task_hash);
    s_cache_key (self, &req, task_hash, key);

    char *blob = NULL;
    size_t blob_size = 0;
    double wall_s = 0;
    json_t *result = NULL;
    bool cached = s_cache_get (self->cache_dir, key, &result, &blob, &blob_size);
    if (!cached) {
        char *error = NULL;
        bool final = false;
        result = s_run (self, &req, &blob, &blob_size, &wall_s, &error, &final);
        if (!result) {
            (final ? s_fail_final : s_fail) (res, error);
            return;
        }
        json_object_set_new (result, "task_hash", json_string (task_hash));
        json_object_set_new (result, "data_bytes", json_integer ((json_int_t) blob_size));
        s_cache_put (self->cache_dir, key, result, blob, blob_size, self->cache_max_bytes);
    }
    if (blob_size > self->max_result_bytes) {
        //  Only a cache filled under a larger limit gets here.
        s_fail (res, kf_strdupf ("reference data is %zu bytes, over the worker's limit of %zu",
                                 blob_size, self->max_result_bytes));
        json_decref (result);
        free (blob);
        return;
    }
    json_object_set_new (result, "cached", json_boolean (cached));
    json_object_set_new (result, "cache_key", json_string (key));
    json_object_set_new (result, "wall_s", json_real (wall_s));
    res->ok = true;
    res->result = result;
    if (req.export_data) {
        res->frames = zmsg_new ();
        zmsg_addmem (res->frames, blob, blob_size);
    }
    free (blob);
}
