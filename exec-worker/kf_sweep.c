/*  kf_sweep.c - a tuning sweep's plan: which configs run, under what
 *  limit, which are timed with the full protocol, and why the rest were
 *  not (docs/evaluation.md, "Tuning").
 *
 *  Limits follow from measurement, not from a share of the job: at real
 *  sizes one evaluation child (device context, tensors of hundreds of
 *  MiB, a correctness pass, the timing) can take longer than the job's
 *  limit divided by the number of configs, and a child's CPU-time limit
 *  goes with its wall limit (kf_subproc: the wall limit plus 1 s, all
 *  threads together), so a harness that fills tensors on eight threads
 *  was killed long before its wall limit. Config 0 therefore runs under a
 *  generous limit; the first config judged correct (its figures include
 *  the timing) sets the others' limit from its wall and CPU time; each
 *  full-protocol run's limit follows from its config's own screen. The
 *  trade-off: a config much slower than the one measured ends as a
 *  timeout, which is what a tuning sweep should say about it anyway.
 */
#include "kf_sweep.h"
#include "kf_floors.h"
#include "kf_json.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_CONFIGS  16
#define S_SCREEN_SAMPLES 5     /* pairs of samples a screen takes at least */
#define S_SCREEN_CALLS   3     /* warm-up calls a screen takes at least */
#define S_SLACK_S      0.5     /* kept back from every child's limit */

typedef struct {
    json_t *params;          /* borrowed from the configs */
    int frame;
    bool ran;
    double limit_s;          /* the screen's (or the only run's) limit */
    char limit_why[320];
    json_t *screen;          /* its results, owned; NULL: not run */
    json_t *full;
    double took_s, cpu_s;    /* what the screen took, wall and CPU */
    double full_limit_s;
    char skipped[400];       /* why it did not run, or not fully */
} s_config_t;

typedef struct {
    const kf_sweep_limits_t *lim;
    const kf_sweep_ops_t *ops;
    double start;
    double overhead;         /* most an evaluation took past its child */
    int n;
    s_config_t c[S_MAX_CONFIGS];
    int measured;            /* the config whose figures set the limit */
    double first_limit_s;
    char first_why[200];
    double limit_s;          /* the derived limit of a screen */
    char limit_why[320];
    json_t *screen_timing;   /* owned */
    json_t *full_timing;     /* owned */
    char stopped[400];
    int screened, fully_timed;
    int full_configs;        /* 0 when the job itself is a screen */
} s_sweep_t;

void
kf_sweep_limits_default (kf_sweep_limits_t *limits)
{
    *limits = (kf_sweep_limits_t) { .job_limit_s = 300, .eval_limit_s = 120,
                                    .limit_factor = 3, .limit_floor_s = 10,
                                    .full_configs = 2 };
}

//  The screen: the job's warm-up and sampling time divided among the
//  configs (never below 0.05 s, nor above what was asked), and at most
//  S_SCREEN_SAMPLES pairs of samples and S_SCREEN_CALLS warm-up calls, so
//  a sweep of sixteen costs about what one full evaluation does.
json_t *
kf_sweep_screen_timing (json_t *timing, int n)
{
    json_t *t = json_is_object (timing) ? json_deep_copy (timing) : json_object ();
    static const char *const times[] = { "min_time_s", "warmup_s" };
    for (int k = 0; k < 2; k++) {
        json_t *v = json_object_get (t, times[k]);
        double asked = json_is_number (v) ? json_number_value (v) : 1;
        double share = asked / (n > 0 ? n : 1);
        if (share < 0.05)
            share = asked < 0.05 ? asked : 0.05;
        json_object_set_new (t, times[k], json_real (share));
    }
    static const char *const counts[] = { "min_samples", "warmup_calls" };
    static const int most[] = { S_SCREEN_SAMPLES, S_SCREEN_CALLS };
    for (int k = 0; k < 2; k++) {
        json_t *v = json_object_get (t, counts[k]);
        json_int_t asked = json_is_number (v) ? (json_int_t) json_number_value (v) : 10;
        json_object_set_new (t, counts[k], json_integer (asked < most[k] ? asked : most[k]));
    }
    return t;
}

static const char *
s_verdict (json_t *r)
{
    const char *v = json_string_value (json_object_get (r, "verdict"));
    return v ? v : "crashed";
}

static bool
s_correct (json_t *r)
{
    return r && !strcmp (s_verdict (r), "correct")
           && json_is_number (json_object_get (r, "speedup"));
}

static double
s_speedup (json_t *r)
{
    return kf_jnum (r, "speedup", 0);
}

//  Seconds the job may still spend on a child, what each evaluation
//  costs outside its child (files, the clean-up) kept back.
static double
s_left (s_sweep_t *self)
{
    double used = self->ops->now (self->ops->arg) - self->start;
    return self->lim->job_limit_s - used - S_SLACK_S - self->overhead;
}

//  A limit of K times the expected wall time plus the floor, and never
//  below the expected CPU time plus the floor: the child's CPU-time limit
//  goes with its wall limit, and a harness on several threads spends CPU
//  faster than the clock runs. The extra time a slower config takes is
//  counted at one CPU (the candidate's own calls).
static double
s_limit_for (s_sweep_t *self, double wall, double cpu, bool *by_cpu)
{
    double k = self->lim->limit_factor;
    double by_wall = k * wall, by_cpu_s = cpu + (k - 1) * wall;
    *by_cpu = by_cpu_s > by_wall;
    return (*by_cpu ? by_cpu_s : by_wall) + self->lim->limit_floor_s;
}

//  The screens' limit, from config M's figures.
static void
s_derive (s_sweep_t *self, int m)
{
    s_config_t *c = &self->c[m];
    bool by_cpu;
    double limit = s_limit_for (self, c->took_s, c->cpu_s, &by_cpu);
    int len;
    if (by_cpu)
        len = snprintf (self->limit_why, sizeof self->limit_why,
                        "config %d's %.2f s of CPU time (all threads; the CPU-time limit "
                        "follows the wall limit) + %g x its %.2f s + a %g s floor",
                        m, c->cpu_s, self->lim->limit_factor - 1, c->took_s,
                        self->lim->limit_floor_s);
    else
        len = snprintf (self->limit_why, sizeof self->limit_why,
                        "%g x the %.2f s config %d took + a %g s floor",
                        self->lim->limit_factor, c->took_s, m, self->lim->limit_floor_s);
    if (limit > self->first_limit_s) {
        if (len > 0 && (size_t) len < sizeof self->limit_why)
            snprintf (self->limit_why + len, sizeof self->limit_why - (size_t) len,
                      " = %.3g s, capped at config 0's %.3g s", limit, self->first_limit_s);
        limit = self->first_limit_s;
    }
    self->limit_s = limit;
    self->measured = m;
}

//  Config I's full run: what its screen took, with the timing phase
//  scaled from the screen's protocol to the full one (the extra time
//  counted at one CPU); the limit as for a screen, capped at one
//  evaluation's. The expected time into *EXPECT when not NULL.
static double
s_full_limit (s_sweep_t *self, int i, double *expect)
{
    s_config_t *c = &self->c[i];
    double timing = kf_jnum (json_object_get (c->screen, "phases_s"), "timing", 0);
    double full = kf_jnum (self->full_timing, "min_time_s", KF_FULL_MIN_TIME_S)
                  + kf_jnum (self->full_timing, "warmup_s", KF_FULL_WARMUP_S);
    double screen = kf_jnum (self->screen_timing, "min_time_s", KF_FULL_MIN_TIME_S)
                    + kf_jnum (self->screen_timing, "warmup_s", KF_FULL_WARMUP_S);
    double ratio = screen > 0 ? full / screen : 1;
    double extra = timing * (ratio > 1 ? ratio - 1 : 0);
    bool by_cpu;
    double limit = s_limit_for (self, c->took_s + extra, c->cpu_s + extra, &by_cpu);
    if (expect)
        *expect = c->took_s + extra;
    return limit < self->lim->eval_limit_s ? limit : self->lim->eval_limit_s;
}

//  One evaluation of config I under LIMIT: its result (owned) into *OUT,
//  or -1 with the job's failure in RES.
static int
s_evaluate (s_sweep_t *self, int i, json_t *payload, double limit, const char *why,
            json_t **out, kf_job_result_t *res)
{
    s_config_t *c = &self->c[i];
    kf_job_result_t one = { 0 };
    double cpu = 0, t0 = self->ops->now (self->ops->arg);
    self->ops->evaluate (self->ops->arg, payload, c->frame, limit, &one, &cpu);
    double took = self->ops->now (self->ops->arg) - t0;
    if (!one.ok) {
        //  The reference or the harness failed: the same for every
        //  config, so the job itself failed.
        json_decref (one.result);
        one.result = NULL;
        zmsg_destroy (&one.frames);
        *res = one;
        return -1;
    }
    zmsg_destroy (&one.frames);
    json_t *r = one.result ? one.result : json_object ();
    double child = kf_jnum (r, "wall_s", took);
    if (took - child > self->overhead)
        self->overhead = took - child;
    if (!strcmp (s_verdict (r), "timeout")) {
        //  Say which limit it was and where it came from.
        const char *d = json_string_value (json_object_get (r, "detail"));
        char detail[900];
        snprintf (detail, sizeof detail, "%s (config %d's limit %.3g s: %s)", d ? d : "timed out",
                  i, limit, why);
        json_object_set_new (r, "detail", json_string (detail));
    }
    if (!*out) {
        c->took_s = took;
        c->cpu_s = cpu;
    }
    json_decref (*out);
    *out = r;
    return 0;
}

static void
s_skip_rest (s_sweep_t *self, int from, const char *why)
{
    snprintf (self->stopped, sizeof self->stopped, "%s", why);
    for (int i = from; i < self->n; i++)
        snprintf (self->c[i].skipped, sizeof self->c[i].skipped, "%s", why);
}

//  Screens every config that the time allows. Returns 0 or -1 (RES).
static int
s_screen (s_sweep_t *self, json_t *payload, kf_job_result_t *res)
{
    const kf_sweep_limits_t *lim = self->lim;
    for (int i = 0; i < self->n; i++) {
        s_config_t *c = &self->c[i];
        double left = s_left (self), limit, reserve = 0;
        if (i == 0) {
            limit = self->first_limit_s;
            snprintf (c->limit_why, sizeof c->limit_why, "%s", self->first_why);
        }
        else if (self->measured >= 0) {
            //  Keep what the full run of the measured config needs, so
            //  the best config found is timed as an untuned one is.
            if (self->full_configs > 0)
                reserve = s_full_limit (self, self->measured, NULL);
            limit = self->limit_s;
            snprintf (c->limit_why, sizeof c->limit_why, "%s", self->limit_why);
            if (left - reserve < limit) {
                char why[400];
                snprintf (why, sizeof why,
                          "not run: the sweep's time ran out after config %d: %.1f s left of "
                          "its %.0f s, %.1f s of it kept for the full timing, and a config's "
                          "limit is %.1f s (config %d took %.2f s)",
                          i - 1, left > 0 ? left : 0, lim->job_limit_s, reserve, limit,
                          self->measured, self->c[self->measured].took_s);
                s_skip_rest (self, i, why);
                break;
            }
        }
        else {
            //  No config has been timed yet, so nothing to derive from:
            //  config 0's limit, or what is left of the job.
            limit = self->first_limit_s < left ? self->first_limit_s : left;
            if (limit < self->first_limit_s)
                snprintf (c->limit_why, sizeof c->limit_why,
                          "what was left of the sweep's %.0f s; no config was correct before "
                          "it, so there was no time to derive a limit from", lim->job_limit_s);
            else
                snprintf (c->limit_why, sizeof c->limit_why,
                          "%s; no config was correct before it, so there was no time to "
                          "derive a limit from", self->first_why);
            if (limit < lim->limit_floor_s || limit < 1) {
                char why[400];
                snprintf (why, sizeof why,
                          "not run: the sweep's time ran out after config %d: %.1f s left of "
                          "its %.0f s, under the %g s floor of a config's limit",
                          i - 1, left > 0 ? left : 0, lim->job_limit_s, lim->limit_floor_s);
                s_skip_rest (self, i, why);
                break;
            }
        }
        c->ran = true;
        c->limit_s = limit;
        if (s_evaluate (self, i, payload, limit, c->limit_why, &c->screen, res))
            return -1;
        self->screened++;
        if (self->measured < 0 && s_correct (c->screen))
            s_derive (self, i);
    }
    return 0;
}

//  The best FULL_CONFIGS screened configs, timed with the job's own
//  protocol where the time left holds their limit. Returns 0 or -1 (RES).
static int
s_full (s_sweep_t *self, json_t *payload, kf_job_result_t *res)
{
    int order[S_MAX_CONFIGS], n = 0;
    for (int i = 0; i < self->n; i++) {
        if (!s_correct (self->c[i].screen))
            continue;
        int at = n++;
        double speedup = s_speedup (self->c[i].screen);
        while (at > 0 && s_speedup (self->c[order[at - 1]].screen) < speedup) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = i;
    }
    if (n > self->full_configs)
        n = self->full_configs;
    double need[S_MAX_CONFIGS], expect[S_MAX_CONFIGS];
    for (int j = 0; j < n; j++)
        need[j] = s_full_limit (self, order[j], &expect[j]);
    for (int j = 0; j < n; j++) {
        s_config_t *c = &self->c[order[j]];
        double limit = need[j], left = s_left (self), later = 0;
        if (left < limit) {
            snprintf (c->skipped, sizeof c->skipped,
                      "not timed with the full protocol: %.1f s left of the sweep's %.0f s, "
                      "its full run's limit is %.1f s (%g x the %.2f s expected + a %g s floor)",
                      left > 0 ? left : 0, self->lim->job_limit_s, limit,
                      self->lim->limit_factor, expect[j], self->lim->limit_floor_s);
            continue;
        }
        //  At least what it needs; more where the time allows, since an
        //  estimate is no measurement and this run decides: what is left,
        //  less what the later full runs need, at most one evaluation's.
        for (int l = j + 1; l < n; l++)
            later += need[l];
        if (left - later > limit)
            limit = left - later;
        if (limit > self->lim->eval_limit_s)    /* need[j] is within it */
            limit = self->lim->eval_limit_s;
        c->full_limit_s = limit;
        char why[320];
        snprintf (why, sizeof why, "the full run of a config whose screen took %.2f s: what was "
                  "left of the sweep's time, less the later full runs' needs, at most one "
                  "evaluation's %.3g s and at least %g x the %.2f s expected + a %g s floor",
                  c->took_s, self->lim->eval_limit_s, self->lim->limit_factor, expect[j],
                  self->lim->limit_floor_s);
        if (s_evaluate (self, order[j], payload, limit, why, &c->full, res))
            return -1;
        self->fully_timed++;
    }
    return 0;
}

static json_t *
s_row (s_sweep_t *self, int i)
{
    s_config_t *c = &self->c[i];
    json_t *r = c->full ? c->full : c->screen;
    json_t *row = json_pack ("{s:O, s:i, s:b}", "params", c->params, "frame", c->frame,
                             "ran", c->ran);
    if (!r) {
        json_object_set_new (row, "verdict", json_string ("not_run"));
        json_object_set_new (row, "fidelity", json_null ());
        json_object_set_new (row, "speedup", json_null ());
        json_object_set_new (row, "detail", json_null ());
    }
    else {
        json_t *speedup = json_object_get (r, "speedup");
        json_t *detail = json_object_get (r, "detail");
        json_object_set_new (row, "verdict", json_string (s_verdict (r)));
        json_object_set_new (row, "fidelity", json_string (c->full ? "full" : "screen"));
        json_object_set (row, "speedup", json_is_number (speedup) ? speedup : json_null ());
        json_object_set (row, "detail", detail ? detail : json_null ());
        json_t *cand = json_object_get (r, "candidate");
        if (cand) {
            json_object_set (row, "median_ns", json_object_get (cand, "median_ns"));
            json_object_set (row, "reference_ns",
                             json_object_get (json_object_get (r, "reference"), "median_ns"));
        }
        //  Round 25: points at 5.9x and 6.7x beside 20.6x for the defaults
        //  read as lost, with nothing to tell the host's load from theirs.
        if (json_is_object (json_object_get (r, "host_load")))
            json_object_set (row, "host_load", json_object_get (r, "host_load"));
        json_object_set_new (row, "limit_s", json_real (c->full ? c->full_limit_s : c->limit_s));
        json_object_set_new (row, "wall_s", json_real (kf_jnum (r, "wall_s", 0)));
        if (c->full && c->screen)
            json_object_set (row, "screen_speedup",
                             json_is_number (json_object_get (c->screen, "speedup"))
                             ? json_object_get (c->screen, "speedup") : json_null ());
    }
    if (c->skipped[0])
        json_object_set_new (row, "skipped_reason", json_string (c->skipped));
    return row;
}

//  The top level: the correct full run with the highest speedup; when no
//  full run was made (time), the best screen, marked so; when none was
//  correct, the first full run (it decides: a config that passed its
//  screen but not this run is not the best of anything), else config 0.
static json_t *
s_top (s_sweep_t *self)
{
    int best = -1, first_full = -1, best_screen = -1;
    for (int i = 0; i < self->n; i++) {
        s_config_t *c = &self->c[i];
        if (c->full && s_correct (c->full)
            && (best < 0 || s_speedup (c->full) > s_speedup (self->c[best].full)))
            best = i;
        if (c->full && (first_full < 0
                        || s_speedup (c->screen) > s_speedup (self->c[first_full].screen)))
            first_full = i;
        if (s_correct (c->screen)
            && (best_screen < 0 || s_speedup (c->screen) > s_speedup (self->c[best_screen].screen)))
            best_screen = i;
    }
    json_t *top, *best_config = json_null ();
    const char *fidelity = "full";
    if (best >= 0) {
        top = json_deep_copy (self->c[best].full);
        best_config = json_incref (self->c[best].params);
    }
    else if (first_full >= 0)
        top = json_deep_copy (self->c[first_full].full);
    else if (best_screen >= 0) {
        top = json_deep_copy (self->c[best_screen].screen);
        best_config = json_incref (self->c[best_screen].params);
        fidelity = "screen";
    }
    else {
        top = json_deep_copy (self->c[0].screen);
        fidelity = "screen";
    }
    json_object_set_new (top, "best_config", best_config);
    json_object_set_new (top, "fidelity", json_string (fidelity));
    return top;
}

static json_t *
s_tuning (s_sweep_t *self)
{
    double elapsed = self->ops->now (self->ops->arg) - self->start;
    json_t *t = json_pack ("{s:i, s:i, s:i, s:i, s:i, s:O, s:O, s:f, s:f, s:s, s:f}",
                           "configs", self->n, "screened", self->screened,
                           "fully_timed", self->fully_timed, "full_configs",
                           self->full_configs, "not_run", self->n - self->screened,
                           "sweep_timing", self->screen_timing, "full_timing",
                           self->full_timing, "job_limit_s", self->lim->job_limit_s,
                           "first_limit_s", self->first_limit_s, "first_limit_why",
                           self->first_why, "elapsed_s", elapsed);
    if (self->measured >= 0) {
        json_object_set_new (t, "sweep_time_limit_s", json_real (self->limit_s));
        json_object_set_new (t, "limit_why", json_string (self->limit_why));
        json_object_set_new (t, "measured_by", json_integer (self->measured));
    }
    else {
        json_object_set_new (t, "sweep_time_limit_s", json_real (self->first_limit_s));
        json_object_set_new (t, "limit_why", json_string ("no config was correct, so every "
                                                          "config had config 0's limit"));
        json_object_set_new (t, "measured_by", json_null ());
    }
    json_object_set_new (t, "stopped", self->stopped[0] ? json_string (self->stopped)
                                                        : json_null ());
    return t;
}

void
kf_sweep_run (const kf_sweep_limits_t *limits, const kf_sweep_ops_t *ops, json_t *payload,
              json_t *configs, int n_cands, kf_job_result_t *res)
{
    memset (res, 0, sizeof *res);
    int n = (int) json_array_size (configs);
    if (n < 1 || n > S_MAX_CONFIGS) {
        res->error = strdup ("payload: configs must hold 1 to 16 configs");
        return;
    }
    s_sweep_t *self = calloc (1, sizeof *self);
    if (!self) {
        res->error = strdup ("out of memory");
        return;
    }
    self->lim = limits;
    self->ops = ops;
    self->n = n;
    self->measured = -1;
    for (int i = 0; i < n; i++) {
        json_t *c = json_array_get (configs, (size_t) i);
        json_t *fr = json_object_get (c, "frame");
        if (!json_is_object (json_object_get (c, "params")) || !json_is_integer (fr)
            || json_integer_value (fr) < 0 || json_integer_value (fr) >= n_cands) {
            char msg[96];
            snprintf (msg, sizeof msg, "payload: configs[%d] needs params and a candidate frame",
                      i);
            res->error = strdup (msg);
            free (self);
            return;
        }
        self->c[i].params = json_object_get (c, "params");
        self->c[i].frame = (int) json_integer_value (fr);
    }
    //  A job the coordinator marked as a screen (payload fidelity, its
    //  multi-fidelity timing) already carries a short protocol and is
    //  followed by a full evaluation of the config it picks: each config
    //  is screened with the job's own timing, and none is timed in full
    //  here.
    json_t *timing = json_object_get (payload, "timing");
    const char *fidelity = json_string_value (json_object_get (payload, "fidelity"));
    bool job_screens = fidelity && !strcmp (fidelity, "screen");
    self->full_configs = job_screens ? 0 : limits->full_configs;
    self->full_timing = json_is_object (timing) ? json_deep_copy (timing) : json_object ();
    self->screen_timing = n > 1 && !job_screens ? kf_sweep_screen_timing (timing, n)
                                                : json_deep_copy (self->full_timing);
    json_t *screen_payload = json_deep_copy (payload);
    json_object_set (screen_payload, "timing", self->screen_timing);
    //  Its child knows a screen by it (no one-core timing, kf_host_eval.h).
    if (n > 1)
        json_object_set_new (screen_payload, "fidelity", json_string ("screen"));
    self->start = ops->now (ops->arg);

    //  Config 0's limit: one evaluation's, less a quarter of the job kept
    //  for the others and the full timing.
    double job = limits->job_limit_s - S_SLACK_S, rest = n > 1 ? 0.75 * job : job;
    if (limits->eval_limit_s <= rest) {
        self->first_limit_s = limits->eval_limit_s;
        snprintf (self->first_why, sizeof self->first_why,
                  "one evaluation's limit (eval_time_limit_s)");
    }
    else {
        self->first_limit_s = rest;
        snprintf (self->first_why, sizeof self->first_why, "%s the sweep's %.0f s "
                  "(sweep_time_limit_s)", n > 1 ? "three quarters of" : "all of",
                  limits->job_limit_s);
    }
    int rc;
    if (n == 1) {
        //  One config: timed with the full protocol at once.
        s_config_t *c = &self->c[0];
        c->ran = true;
        c->limit_s = c->full_limit_s = self->first_limit_s;
        rc = s_evaluate (self, 0, payload, c->limit_s, self->first_why,
                         job_screens ? &c->screen : &c->full, res);
        self->screened = rc == 0;
        self->fully_timed = rc == 0 && !job_screens;
    }
    else
        rc = s_screen (self, screen_payload, res) ? -1 : s_full (self, payload, res);
    if (rc == 0) {
        json_t *top = s_top (self);
        json_t *rows = json_array ();
        for (int i = 0; i < n; i++)
            json_array_append_new (rows, s_row (self, i));
        json_object_set_new (top, "configs", rows);
        json_object_set_new (top, "tuning", s_tuning (self));
        res->ok = true;
        res->result = top;
    }
    for (int i = 0; i < n; i++) {
        json_decref (self->c[i].screen);
        json_decref (self->c[i].full);
    }
    json_decref (screen_payload);
    json_decref (self->screen_timing);
    json_decref (self->full_timing);
    free (self);
}
