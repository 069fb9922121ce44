/*  kf_profile_perf.c - the host's profile: a candidate's timed calls under
 *  perf stat's hardware counters, condensed for the next prompt
 *  (kf_profile.h).
 *
 *  As ncu does for CUDA, perf runs the evaluation child itself
 *  (`perf stat ... -- kf-exec-worker --eval-child DIR`) in the same
 *  sandbox as an evaluation (kf_exec_evaluate_wrapped: the limits, the
 *  unprivileged uid, the verdict channel), so a kernel that crashes under
 *  the profiler ends only that child. Unlike ncu, perf counts processes,
 *  not kernel launches: the candidate cannot simply take both seats. It
 *  runs as in any evaluation, in its own process against the reference,
 *  and the judge turns the counters on only around its timed batches
 *  (kf_perf_gate.h). The child's result is the judge's, so the rates the
 *  summary states come from no number the candidate could write.
 *
 *  Where perf cannot count (perf_event_paranoid, a VM without a virtual
 *  PMU, a seccomp profile), the start-up trial says so and the worker
 *  offers no profile: a summary of counters that were never counted
 *  would be worse than none.
 */
#include "kf_profile.h"
#include "kf_file.h"
#include "kf_json.h"
#include "kf_msg_profile.h"
#include "kf_rates.h"
#include "kf_str.h"
#include "kf_subproc.h"
#include "kf_text.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// --------------------------------------------------------------------------
//  perf's CSV

#define S_MAX_EVENTS 16

typedef struct {
    char name[64];           //  as asked: "cycles" ("cycles:u" counted)
    double value;            //  NaN when not counted
    char why[32];            //  "<not supported>", "<not counted>", or ""
    double pct;              //  share of the enabled time it ran (multiplexing)
} s_count_t;

//  Reads perf stat -x, output: one line per event, "value,unit,event,
//  run time,pct,metric,metric unit"; "#" lines and others are skipped.
//  Returns the number of events read.
static int
s_parse (const char *text, size_t size, s_count_t *out, int max)
{
    char *copy = strndup (text, size);
    int n = 0;
    char *save = NULL;
    for (char *line = copy ? strtok_r (copy, "\n", &save) : NULL; line && n < max;
         line = strtok_r (NULL, "\n", &save)) {
        if (*line == '#')
            continue;
        char *f[8];
        int k = 0;
        for (char *p = line; k < 8; k++) {
            f[k] = p;
            char *comma = strchr (p, ',');
            if (!comma) {
                k++;
                break;
            }
            *comma = 0;
            p = comma + 1;
        }
        if (k < 5 || !*f[2])
            continue;
        s_count_t *c = &out[n++];
        memset (c, 0, sizeof *c);
        snprintf (c->name, sizeof c->name, "%.*s", (int) strcspn (f[2], ":"), f[2]);
        char *end;
        c->value = strtod (f[0], &end);
        if (end == f[0] || *end) {
            c->value = NAN;
            snprintf (c->why, sizeof c->why, "%s", f[0]);
        }
        c->pct = strtod (f[4], &end);
        if (end == f[4])
            c->pct = NAN;
    }
    free (copy);
    return n;
}

static double
s_value (const s_count_t *c, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp (c[i].name, name))
            return c[i].value;
    return NAN;
}

// --------------------------------------------------------------------------
//  The probe

static int
s_paranoid (void)
{
    //  A /proc file says it is empty until read, so read it as a stream.
    FILE *f = fopen ("/proc/sys/kernel/perf_event_paranoid", "r");
    int v = -99;
    if (f && fscanf (f, "%d", &v) != 1)
        v = -99;
    if (f)
        fclose (f);
    return v;
}

//  "perf version 6.1.187", or NULL.
static char *
s_perf_version (const char *perf)
{
    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = 30;
    limits.drop_privileges = false;
    char *argv[] = { (char *) perf, "--version", NULL };
    kf_subproc_result_t run;
    if (kf_subproc_run (argv, &limits, &run) != 0)
        return NULL;
    char *version = NULL;
    if (run.exit_code == 0 && run.output && !strncmp (run.output, "perf version", 12))
        version = strndup (run.output, strcspn (run.output, "\r\n"));
    kf_subproc_result_free (&run);
    return version;
}

//  EVENTS as asked, with task-clock first (the cores kept busy), or NULL
//  when a name holds anything but what perf's event names hold.
static char *
s_event_list (const char *events)
{
    const char *list = events && *events ? events : KF_PROFILE_PERF_EVENTS;
    if (strspn (list, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,:/=")
        != strlen (list) || *list == '-' || strstr (list, ",-"))
        return NULL;
    bool has_clock = !strncmp (list, "task-clock", 10) || strstr (list, ",task-clock");
    return has_clock ? strdup (list) : kf_strdupf ("task-clock,%s", list);
}

//  The last non-empty line of OUT (perf's error), into BUF.
static void
s_last_line (const char *out, char *buf, size_t size)
{
    const char *last;
    size_t len = kf_text_last_line (out, &last);
    snprintf (buf, size, "%.*s", (int) len, last);
}

char *
kf_profile_perf_probe (const char *want, const char *events, char **perf, char **version,
                       char **events_out, int *paranoid)
{
    *perf = *version = *events_out = NULL;
    *paranoid = s_paranoid ();
    if (want && !strcmp (want, "off"))
        return strdup ("perf is turned off (perf = off)");
    char *list = s_event_list (events);
    if (!list)
        return kf_strdupf ("perf_events: '%s' is not a list of event names", events);
    char *program = want && *want ? strdup (want) : kf_profile_on_path ("perf");
    if (!program) {
        free (list);
        return strdup ("no perf found on PATH (Debian: apt-get install linux-perf)");
    }
    char *ver = s_perf_version (program);
    if (!ver) {
        char *why = kf_strdupf ("%s does not run as perf (perf --version failed)", program);
        free (program);
        free (list);
        return why;
    }
    //  The trial: what a profile will do, in the sandbox a profile runs
    //  in, on a program that does nothing.
    char *why = NULL;
    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = 30;
    char *dir = kf_subproc_mkdtemp (&limits);
    char *out = dir ? kf_strdupf ("%s/trial.csv", dir) : NULL;
    const char *workload = access ("/bin/true", X_OK) == 0 ? "/bin/true" : "/usr/bin/true";
    char *argv[] = { program, "stat", "-x,", "-e", list, "-o", out, "--", (char *) workload,
                     NULL };
    limits.workdir = dir;
    kf_subproc_result_t run = { 0 };
    if (!dir || !out)
        why = kf_strdupf ("cannot make a directory for perf's trial: %s", strerror (errno));
    else if (kf_subproc_run (argv, &limits, &run) != 0)
        why = kf_strdupf ("cannot start perf: %s", strerror (errno));
    else {
        size_t size = 0;
        char *text = kf_file_read (out, 1 << 20, &size);
        s_count_t counts[S_MAX_EVENTS];
        int n = text ? s_parse (text, size, counts, S_MAX_EVENTS) : 0;
        char last[240];
        s_last_line (run.output, last, sizeof last);
        if (run.exit_code != 0 || n == 0)
            why = kf_strdupf ("perf stat failed in the sandbox (exit %d, "
                              "kernel.perf_event_paranoid %d): %s", run.exit_code, *paranoid,
                              *last ? last : "no output");
        else {
            //  Every event must count: names, and why not.
            char missing[400] = "", reason[40] = "";
            size_t used = 0;
            for (int i = 0; i < n; i++)
                if (isnan (counts[i].value)) {
                    used += (size_t) snprintf (missing + used, used < sizeof missing
                                               ? sizeof missing - used : 0, "%s%s",
                                               used ? ", " : "", counts[i].name);
                    snprintf (reason, sizeof reason, "%s", counts[i].why);
                }
            if (*missing)
                why = kf_strdupf ("perf stat cannot count %s here (%s)%s", missing, reason,
                                  strstr (reason, "supported")
                                      ? ": this kernel or CPU offers no such counters (a VM "
                                        "without a virtual PMU?)"
                                      : "");
        }
        free (text);
    }
    kf_subproc_result_free (&run);
    if (dir)
        kf_subproc_rmtree (dir);
    free (dir);
    free (out);
    if (why) {
        free (program);
        free (ver);
        free (list);
        return why;
    }
    *perf = program;
    *version = ver;
    *events_out = list;
    return NULL;
}

// --------------------------------------------------------------------------
//  Condensing

static void
s_set (json_t *o, const char *key, double v, double scale)
{
    if (isfinite (v))
        json_object_set_new (o, key, json_real (round (v * scale) / scale));
}

int
kf_profile_perf_condense (const char *text, size_t size, json_t *eval, json_t **metrics,
                          char **summary, char **error)
{
    *metrics = NULL;
    *summary = NULL;
    *error = NULL;
    s_count_t c[S_MAX_EVENTS];
    int n = text ? s_parse (text, size, c, S_MAX_EVENTS) : 0;
    int counted = 0;
    for (int i = 0; i < n; i++)
        counted += !isnan (c[i].value) && c[i].value > 0;
    if (!counted) {
        *error = strdup (n ? "perf counted nothing (its counters were never on while the "
                             "candidate's timed calls ran)"
                           : "no counts in perf stat's output");
        return -1;
    }
    json_t *cand = json_object_get (eval, "candidate");
    double calls = kf_jnum (cand, "samples", 0) * kf_jnum (cand, "calls_per_sample", 0);
    double median_ns = kf_jnum (cand, "median_ns", 0);
    double cycles = s_value (c, n, "cycles"), instr = s_value (c, n, "instructions");
    double crefs = s_value (c, n, "cache-references"), cmiss = s_value (c, n, "cache-misses");
    double br = s_value (c, n, "branches"), brmiss = s_value (c, n, "branch-misses");
    double clock_ms = s_value (c, n, "task-clock");
    double ipc = cycles > 0 ? instr / cycles : NAN;
    double mpki = instr > 0 ? 1000 * cmiss / instr : NAN;
    double miss_pct = crefs > 0 ? 100 * cmiss / crefs : NAN;
    double br_pct = br > 0 ? 100 * brmiss / br : NAN;
    double br_pki = instr > 0 ? 1000 * brmiss / instr : NAN;
    //  Cores busy: CPU time counted over the calls' own wall time.
    double cpus = calls > 0 && median_ns > 0 && clock_ms > 0 ? clock_ms * 1e6
                                                                   / (calls * median_ns)
                                                             : NAN;
    double per_call = calls > 0 && instr > 0 ? instr / calls : NAN;
    double least_pct = NAN;
    json_t *m = json_object ();
    json_t *events = json_object ();
    for (int i = 0; i < n; i++) {
        json_t *e = json_object ();
        if (isnan (c[i].value))
            json_object_set_new (e, "not_counted", json_string (c[i].why));
        else
            s_set (e, "value", c[i].value, 1000);
        s_set (e, "running_pct", c[i].pct, 100);
        json_object_set_new (events, c[i].name, e);
        if (!isnan (c[i].pct) && (isnan (least_pct) || c[i].pct < least_pct))
            least_pct = c[i].pct;
    }
    json_object_set_new (m, "events", events);
    s_set (m, "ipc", ipc, 1000);
    s_set (m, "cache_misses_per_kilo_instruction", mpki, 1000);
    s_set (m, "cache_miss_pct", miss_pct, 100);
    s_set (m, "branch_miss_pct", br_pct, 1000);
    s_set (m, "branch_misses_per_kilo_instruction", br_pki, 1000);
    s_set (m, "cpus_busy", cpus, 100);
    s_set (m, "instructions_per_call", per_call, 1);
    json_object_set_new (m, "calls", json_integer ((json_int_t) calls));
    //  The rates of the profiled run against the host's ceilings, in the
    //  words the prompt's position line uses (kf_rates.h): the host's
    //  protocol starts every call with its data out of the caches.
    json_t *bw = json_object_get (eval, "bandwidth"), *cp = json_object_get (eval, "compute");
    kf_rates_t r = { .held = 0, .cold = true };
    r.bytes = kf_jnum (bw, "bytes", 0);
    r.gbs = kf_jnum (bw, "candidate_gbs", 0);
    r.copy_gbs = kf_jnum (bw, "copy_gbs", 0);
    r.gflops = kf_jnum (cp, "candidate_gflops", 0);
    r.peak_gflops = kf_jnum (cp, "peak_gflops", 0);
    s_set (m, "gbs", r.gbs > 0 ? r.gbs : NAN, 100);
    s_set (m, "copy_gbs", r.copy_gbs > 0 ? r.copy_gbs : NAN, 10);
    s_set (m, "gflops", r.gflops > 0 ? r.gflops : NAN, 100);
    s_set (m, "peak_gflops", r.peak_gflops > 0 ? r.peak_gflops : NAN, 10);

    char *out = NULL;
    size_t out_len = 0;
    FILE *f = open_memstream (&out, &out_len);
    fprintf (f, "counted over %.0f timed call%s of kf_forward (its process and threads)",
             calls, calls == 1 ? "" : "s");
    if (isfinite (per_call))
        fprintf (f, ", %.3g instructions a call", per_call);
    if (!isnan (least_pct) && least_pct < 99.5)
        fprintf (f, "; counters shared the hardware, so some ran %.0f%% of the time and are "
                 "scaled", least_pct);
    fputs ("\n", f);
    if (isfinite (ipc))
        fprintf (f, "IPC %.2f (instructions per cycle)", ipc);
    if (isfinite (mpki)) {
        fprintf (f, "%scache misses %.2f per 1000 instructions", isfinite (ipc) ? "; " : "",
                 mpki);
        if (isfinite (miss_pct))
            fprintf (f, " (%.1f%% of cache references; the last-level cache on most CPUs)",
                     miss_pct);
    }
    if (isfinite (br_pct))
        fprintf (f, "%sbranch misses %.2f%% of branches (%.2f per 1000 instructions)",
                 isfinite (ipc) || isfinite (mpki) ? "; " : "", br_pct, br_pki);
    if (isfinite (ipc) || isfinite (mpki) || isfinite (br_pct))
        fputs ("\n", f);
    if (isfinite (cpus))
        fprintf (f, "cores busy during the calls: %.1f (CPU time over the calls' wall time)\n",
                 cpus);
    fputs ("rates in the profiled run:", f);
    if (!kf_rates_write (f, &r))
        fputs (" not measured", f);
    fputs ("\n", f);
    fclose (f);
    *metrics = m;
    *summary = out;
    return 0;
}

// --------------------------------------------------------------------------
//  The job

typedef struct {
    const char *perf, *events;
    char ctl[4200], ack[4200], csv[4200];
    char *argv[16];
    char *text;              //  perf's CSV, read before the directory goes
    size_t size;
    char *output;            //  what perf printed (its errors)
} s_wrap_t;

static int
s_prepare (void *arg, const char *dir, json_t *payload, char **argv, int max)
{
    s_wrap_t *w = arg;
    snprintf (w->ctl, sizeof w->ctl, "%s/perf-ctl", dir);
    snprintf (w->ack, sizeof w->ack, "%s/perf-ack", dir);
    snprintf (w->csv, sizeof w->csv, "%s/perf.csv", dir);
    if (mkfifo (w->ctl, 0600) != 0 || mkfifo (w->ack, 0600) != 0)
        return -1;
    char *control = kf_strdupf ("fifo:%s,%s", w->ctl, w->ack);
    if (!control)
        return -1;
    //  Counters off until the judge turns them on (-D -1).
    char *pre[] = { (char *) w->perf, "stat", "-x,", "-D", "-1", "--control", control,
                    "-e", (char *) w->events, "-o", w->csv, "--", NULL };
    int n = 0;
    for (; pre[n] && n < max; n++)
        argv[n] = w->argv[n] = pre[n];
    argv[n] = NULL;
    json_t *timing = json_object_get (payload, "timing");
    json_object_set_new (timing, "perf_control", json_pack ("{s:s, s:s}", "ctl", w->ctl,
                                                           "ack", w->ack));
    return 0;
}

static void
s_finish (void *arg, const char *dir, const char *output)
{
    s_wrap_t *w = arg;
    (void) dir;
    w->text = kf_file_read (w->csv, 1 << 20, &w->size);
    w->output = output ? strdup (output) : NULL;
}

static void
s_fail (kf_job_result_t *res, char *error)
{
    res->ok = false;
    res->error = error;
}

void
kf_profile_perf_run (const kf_exec_config_t *cfg, const kf_job_t *job, const char *perf,
                     const char *version, const char *events, kf_job_result_t *res)
{
    memset (res, 0, sizeof *res);
    //  An evaluation with a short protocol: enough timed batches for the
    //  counts to mean something, no more.
    json_t *payload = json_deep_copy (job->payload);
    json_object_del (payload, "configs");
    json_object_del (payload, "probe");
    json_object_set_new (payload, "fidelity", json_string ("full"));
    json_object_set_new (payload, "timing",
                         json_pack ("{s:f, s:i, s:f, s:i}", "min_time_s", 0.2, "min_samples", 10,
                                    "warmup_s", 0.0, "warmup_calls", 2));
    kf_job_t eval = *job;
    eval.kind = "evaluate";
    eval.payload = payload;
    s_wrap_t w = { .perf = perf, .events = events };
    kf_exec_wrap_t wrap = { .prepare = s_prepare, .finish = s_finish, .arg = &w };
    kf_job_result_t er;
    kf_exec_evaluate_wrapped (cfg, &eval, &wrap, &er);
    json_decref (payload);
    const char *verdict = kf_jstr (er.result, "verdict");
    json_t *metrics = NULL;
    char *summary = NULL, *error = NULL;
    char last[300];
    s_last_line (w.output, last, sizeof last);
    if (!er.ok)
        s_fail (res, kf_strdupf ("profiling failed: %s", er.error ? er.error : "?"));
    else if (strcmp (verdict, "correct"))
        //  Profiles are of candidates judged correct: one that is not
        //  now has nothing to show that timing would not.
        s_fail (res, kf_strdupf ("profiling failed: the profiled run's verdict is %s: %s",
                                 *verdict ? verdict : "none",
                                 kf_jstr (er.result, "detail")));
    else if (kf_profile_perf_condense (w.text, w.size, er.result, &metrics, &summary,
                                       &error) != 0) {
        s_fail (res, kf_strdupf ("profiling failed: %s%s%s", error, *last ? "; perf: " : "",
                                 last));
        free (error);
    }
    else {
        //  Written by the protocol's encoder (proto/kf_msg_profile.c).
        json_t *calls = json_object_get (metrics, "calls");
        json_t *wall = json_object_get (er.result, "wall_s");
        kf_profile_result_t r = { .summary = summary, .metrics = metrics, .profiler = "perf",
                                  .perf = version, .events = events,
                                  .has_calls = json_is_integer (calls),
                                  .calls = json_integer_value (calls),
                                  .has_wall = json_is_number (wall),
                                  .wall_s = json_number_value (wall) };
        res->ok = true;
        res->result = kf_profile_result_encode (&r);
        json_decref (metrics);
        free (summary);
    }
    free (er.error);
    json_decref (er.result);
    zmsg_destroy (&er.frames);
    free (w.text);
    free (w.output);
    free (w.argv[6]);        //  the --control argument
}
