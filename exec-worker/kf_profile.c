/*  kf_profile.c - the "profile" job: a candidate under its target's
 *  profiler, condensed for the next prompt. This file finds the profiler
 *  (Nsight Compute for CUDA; perf stat's hardware counters on the host,
 *  kf_profile_perf.c) and runs ncu; kf_profile_ncu.c condenses ncu's
 *  report.
 *
 *  ncu launches the evaluation child (`kf-exec-worker --eval-child DIR`)
 *  exactly as an evaluation would, in the same sandbox (time limit, the
 *  unprivileged user, its own directory), so a profile needs no second
 *  harness and a kernel that crashes under the profiler ends only that
 *  child. The candidate is put in both seats of that child (candidate and
 *  reference), so every kernel launch it makes is the candidate's and ncu
 *  can simply profile the first N launches; the verdict of that run means
 *  nothing and is not reported (profiles are for candidates already judged
 *  correct). Only those N launches are replayed; the rest of the child runs
 *  at full speed, with the shortest timing protocol.
 */
#include "kf_profile.h"
#include "kf_take.h"
#include "kf_eval_channel.h"
#include "kf_file.h"
#include "kf_log.h"
#include "kf_msg_profile.h"
#include "kf_str.h"
#include "kf_subproc.h"
#include "kf_text.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct _kf_profile_t {
    char *ncu;               /* ncu found (cuda), or NULL */
    char *perf;              /* perf found and allowed to count (host), or NULL */
    char *events;            /* perf's events, comma-separated */
    int paranoid;            /* kernel.perf_event_paranoid; -99 unread */
    char *version;           /* the profiler's version line */
    char *unavailable;       /* why not, or NULL */
    char *backend;
    int launches;
    double time_limit_s;
};

static kf_profile_t *s_shared;

void
kf_profile_set_shared (kf_profile_t *self)
{
    s_shared = self;
}

kf_profile_t *
kf_profile_shared (void)
{
    return s_shared;
}

//  The version line of PROGRAM ("Version 2025.3.1.0 (build ...)"), or NULL
//  when it does not run as ncu.
static char *
s_ncu_version (const char *program)
{
    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = 30;
    limits.memory_bytes = 0;     /* ncu maps far more than it uses */
    limits.drop_privileges = false;
    char *argv[] = { (char *) program, "--version", NULL };
    kf_subproc_result_t run;
    if (kf_subproc_run (argv, &limits, &run) != 0)
        return NULL;
    char *version = NULL;
    if (run.exit_code == 0 && run.output) {
        char *line = strstr (run.output, "Version");
        if (line)
            version = strndup (line, strcspn (line, "\r\n"));
    }
    kf_subproc_result_free (&run);
    return version;
}

char *
kf_profile_on_path (const char *name)
{
    const char *path = getenv ("PATH");
    char *copy = path ? strdup (path) : NULL;
    char *save = NULL;
    for (char *dir = copy ? strtok_r (copy, ":", &save) : NULL; dir;
         dir = strtok_r (NULL, ":", &save)) {
        char *candidate = kf_strdupf ("%s/%s", *dir ? dir : ".", name);
        if (candidate && access (candidate, X_OK) == 0) {
            free (copy);
            return candidate;
        }
        free (candidate);
    }
    free (copy);
    return NULL;
}

//  ncu on PATH, then where CUDA and Nsight Compute install it.
static char *
s_find_ncu (void)
{
    char *on_path = kf_profile_on_path ("ncu");
    if (on_path)
        return on_path;
    if (access ("/usr/local/cuda/bin/ncu", X_OK) == 0)
        return strdup ("/usr/local/cuda/bin/ncu");
    glob_t g;
    char *found = NULL;
    if (glob ("/opt/nvidia/nsight-compute/*/ncu", 0, NULL, &g) == 0 && g.gl_pathc > 0)
        found = strdup (g.gl_pathv[g.gl_pathc - 1]);   /* sorted: the newest last */
    globfree (&g);
    return found;
}

kf_profile_t *
kf_profile_new (const kf_profile_config_t *config)
{
    kf_profile_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->backend = strdup (config && config->backend ? config->backend : "host");
    self->launches = config && config->launches > 0 ? config->launches : 4;
    self->time_limit_s = config && config->time_limit_s > 0 ? config->time_limit_s : 300;
    self->paranoid = -99;
    const char *want = config ? config->ncu : NULL;
    if (!strcmp (self->backend, "host"))
        self->unavailable = kf_profile_perf_probe (config ? config->perf : NULL,
                                                   config ? config->perf_events : NULL,
                                                   &self->perf, &self->version, &self->events,
                                                   &self->paranoid);
    else if (strcmp (self->backend, "cuda") != 0)
        self->unavailable = kf_strdupf ("the %s backend has no profiler (ncu profiles CUDA "
                                        "kernels, perf stat the host's)", self->backend);
    else if (want && !strcmp (want, "off"))
        self->unavailable = strdup ("ncu is turned off (ncu = off)");
    else {
        char *program = want && *want ? strdup (want) : s_find_ncu ();
        char *version = program ? s_ncu_version (program) : NULL;
        if (!program)
            self->unavailable = strdup ("no ncu found (PATH, /usr/local/cuda/bin, "
                                        "/opt/nvidia/nsight-compute/*)");
        else if (!version)
            self->unavailable = kf_strdupf ("%s does not run as ncu (ncu --version failed)",
                                            program);
        if (self->unavailable)
            free (program);
        else {
            self->ncu = program;
            self->version = version;
            version = NULL;
        }
        free (version);
    }
    return self;
}

void
kf_profile_destroy (kf_profile_t **self_p)
{
    kf_profile_t *self = KF_TAKE (self_p);
    if (self) {
        free (self->ncu);
        free (self->perf);
        free (self->events);
        free (self->version);
        free (self->unavailable);
        free (self->backend);
        free (self);
    }
}

const char *
kf_profile_unavailable (kf_profile_t *self)
{
    if (!self)
        return "this worker has no profiler set up";
    return self->unavailable;
}

json_t *
kf_profile_capability (kf_profile_t *self)
{
    if (!self || self->unavailable)
        return NULL;
    if (self->perf)
        return json_pack ("{s:s, s:s, s:s, s:s, s:i}", "profiler", "perf", "perf", self->perf,
                          "version", self->version, "events", self->events,
                          "perf_event_paranoid", self->paranoid);
    return json_pack ("{s:s, s:s, s:s, s:i}", "profiler", "ncu", "ncu", self->ncu, "version",
                      self->version, "launches", self->launches);
}

// --------------------------------------------------------------------------
//  The job

static void
s_fail (kf_job_result_t *res, const char *fmt, const char *arg)
{
    res->ok = false;
    res->error = kf_strdupf (fmt, arg);
}

//  The lines of ncu's output that say what went wrong ("==ERROR== ..."),
//  else its last line. Caller frees.
static char *
s_ncu_error (const char *out)
{
    const char *e = out ? strstr (out, "==ERROR==") : NULL;
    if (e)
        return strndup (e, strcspn (e, "\r\n"));
    const char *last;
    size_t len = kf_text_last_line (out, &last);
    return len ? strndup (last, len) : strdup ("no output");
}

//  A profile's result checked as the coordinator will check it
//  (proto/kf_msg_profile.c): one it would refuse fails the job here.
static void
s_checked (kf_job_result_t *res)
{
    kf_profile_result_t typed;
    char why[300];
    if (!res->ok || !res->result)
        return;
    if (kf_profile_result_decode (res->result, &typed, why, sizeof why) == 0) {
        kf_profile_result_free (&typed);
        return;
    }
    json_decref (res->result);
    res->result = NULL;
    s_fail (res, "the profile's result breaks the protocol: %s", why);
}

void
kf_profile_handle (const kf_exec_config_t *cfg, const kf_job_t *job, kf_job_result_t *res)
{
    memset (res, 0, sizeof *res);
    kf_profile_t *self = kf_profile_shared ();
    const char *why = kf_profile_unavailable (self);
    if (why) {
        s_fail (res, "profiling unavailable: %s", why);
        return;
    }
    if (!json_is_object (json_object_get (job->payload, "task"))) {
        s_fail (res, "payload: task missing%s", "");
        return;
    }
    if (self->perf) {
        kf_profile_perf_run (cfg, job, self->perf, self->version, self->events, res);
        s_checked (res);
        return;
    }
    zframe_t *cand = job->frames ? zmsg_first (job->frames) : NULL;
    if (!cand || zframe_size (cand) == 0) {
        s_fail (res, "need the candidate's artifact as frame 0%s", "");
        return;
    }
    char resolved[PATH_MAX];
    const char *worker = kf_exec_worker_binary (cfg, resolved, sizeof resolved);
    if (!worker) {
        s_fail (res, "cannot resolve the worker binary: %s", strerror (errno));
        return;
    }

    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = self->time_limit_s;
    limits.output_cap = 64 * 1024;
    limits.memory_bytes = 0;     //  the GPU runtime maps device memory
    //  ncu and the CUDA runtime start dozens of threads, and threads count
    //  against the process limit of the sandbox user.
    limits.max_procs = 1024;
    char *dir = kf_subproc_workdir (&limits);
    if (!dir) {
        s_fail (res, "cannot make a temporary directory: %s", strerror (errno));
        return;
    }
    //  The shortest protocol: the profiled launches come first, and the
    //  rest of the child only has to end.
    json_t *payload = json_deep_copy (job->payload);
    json_object_del (payload, "configs");
    json_object_set_new (payload, "backend", json_string (cfg && cfg->backend ? cfg->backend : "cuda"));
    json_object_set_new (payload, "device", json_integer (cfg ? cfg->device : 0));
    json_object_set_new (payload, "candidate_in_process", json_true ());
    json_object_set_new (payload, "timing",
                         json_pack ("{s:f, s:i, s:f, s:i}", "min_time_s", 0.0, "min_samples", 3,
                                    "warmup_s", 0.0, "warmup_calls", 1));
    char *text = json_dumps (payload, JSON_COMPACT);
    json_decref (payload);
    if (!text || kf_file_write (dir, "candidate.so", zframe_data (cand), zframe_size (cand))
        || kf_file_write (dir, "reference.so", zframe_data (cand), zframe_size (cand))
        || kf_file_write (dir, "job.json", text, strlen (text))) {
        s_fail (res, "cannot write the profile's files: %s", strerror (errno));
        free (text);
        kf_subproc_rmtree (dir);
        free (dir);
        return;
    }
    free (text);

    char launches[16], *home = kf_strdupf ("HOME=%s", dir);
    char *csv_path = kf_strdupf ("%s/ncu.csv", dir);
    snprintf (launches, sizeof launches, "%d", self->launches);
    //  HOME in the private directory: ncu keeps settings there, and the
    //  sandbox user may not write root's.
    char *argv[] = { "/usr/bin/env", home, self->ncu, "--clock-control", "none",
                     "--target-processes", "all", "--launch-count", launches,
                     "--section", "SpeedOfLight", "--section", "Occupancy",
                     "--section", "LaunchStats", "--section", "WarpStateStats",
                     "--csv", "--page", "raw", "--log-file", csv_path,
                     (char *) worker, "--eval-child", dir, NULL };
    //  The child reports through a channel (kf_eval_channel.h) even
    //  here, where only its kernel launches matter: ncu hands it down.
    int channel = kf_eval_channel_new ();
    limits.pass_fd = channel;
    kf_subproc_result_t run;
    int started = channel >= 0 ? kf_subproc_run (argv, &limits, &run) : -1;
    if (channel >= 0)
        close (channel);
    if (started != 0) {
        s_fail (res, "cannot start ncu: %s", strerror (errno));
        goto cleanup;
    }
    size_t csv_size = 0;
    char *csv = kf_file_read (csv_path, (size_t) 64 << 20, &csv_size);
    json_t *metrics = NULL;
    char *summary = NULL, *error = NULL;
    if (run.timed_out) {
        res->ok = false;
        res->error = kf_strdupf ("profiling failed: ncu exceeded the %.0f s limit",
                                 self->time_limit_s);
    }
    else if (!csv || kf_profile_condense (csv, csv_size, &metrics, &summary, &error) != 0) {
        //  ncu reports failures in its log file as well as on stderr.
        char *ncu_error = s_ncu_error (csv && strstr (csv, "==ERROR==") ? csv : run.output);
        if (strstr (ncu_error, "ERR_NVGPUCTRPERM"))
            s_fail (res, "profiling unavailable: no permission to read the GPU's performance "
                    "counters (%s)", ncu_error);
        else
            s_fail (res, "profiling failed: %s", error ? error : ncu_error);
        free (ncu_error);
    }
    else {
        //  Written by the protocol's encoder (proto/kf_msg_profile.c).
        kf_profile_result_t r = { .summary = summary, .metrics = metrics, .profiler = "ncu",
                                  .has_launches = true, .launches = self->launches,
                                  .ncu = self->version, .has_wall = true,
                                  .wall_s = run.wall_s };
        res->ok = true;
        res->result = kf_profile_result_encode (&r);
    }
    json_decref (metrics);
    free (summary);
    free (error);
    free (csv);
    kf_subproc_result_free (&run);
cleanup:
    free (home);
    free (csv_path);
    kf_subproc_rmtree (dir);
    free (dir);
    s_checked (res);
}
