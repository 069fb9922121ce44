/*  kfctl_progress.c - a run's progress as kfctl tells it: read from the
 *  run object of SHOW (and RUNS, STATUS) and from events, kept from going
 *  backwards, and drawn as one line. The coordinator counts (total with
 *  the tuning rounds to come, phase, in flight, elapsed: proto/PROTOCOL.md,
 *  "Objects in client replies"); this file only keeps the display honest
 *  when replies and events arrive out of step.
 */
#include "kfctl_fields.h"
#include "kfctl_progress.h"
#include <stdio.h>
#include <string.h>

void
kf_ctl_progress_init (kf_ctl_progress_t *progress, long long run_id)
{
    memset (progress, 0, sizeof *progress);
    progress->run_id = run_id;
    progress->elapsed_s = -1;
}

/* *COUNT from RUN[KEY], never going back, and *TOTAL from RUN[OF]: a
 * total may shrink (a run that stops early, a tuning round with fewer
 * elites than planned), never below what is counted. */
static void
s_count (json_t *run, const char *key, long long *count, const char *of, long long *total)
{
    long long v = kf_ctl_int (run, key, *count);
    if (v > *count)
        *count = v;
    *total = kf_ctl_int (run, of, *total);
    if (*total < *count)
        *total = *count;
}

void
kf_ctl_progress_from_run (kf_ctl_progress_t *progress, json_t *run)
{
    if (!json_is_object (run))
        return;
    s_count (run, "done", &progress->done, "total", &progress->total);
    progress->in_flight = kf_ctl_int (run, "in_flight", progress->in_flight);
    progress->generation = kf_ctl_int (run, "generation", progress->generation);
    progress->generations = kf_ctl_int (run, "generations", progress->generations);
    s_count (run, "tuning_round", &progress->tuning_round, "tuning_rounds",
             &progress->tuning_rounds);
    json_t *best = json_object_get (run, "best_speedup");
    progress->has_best = json_is_number (best);
    progress->best = progress->has_best ? json_number_value (best) : 0;
    json_t *pending = json_object_get (run, "pending_best");
    progress->has_pending = json_is_number (pending)
                            && (!progress->has_best
                                || json_number_value (pending) > progress->best);
    progress->pending = progress->has_pending ? json_number_value (pending) : 0;
    json_t *elapsed = json_object_get (run, "elapsed_s");
    if (json_is_number (elapsed))
        progress->elapsed_s = json_number_value (elapsed);
    const char *status = json_string_value (json_object_get (run, "status"));
    if (status)
        snprintf (progress->status, sizeof progress->status, "%s", status);
}

void
kf_ctl_progress_from_event (kf_ctl_progress_t *progress, json_t *event)
{
    const char *kind = json_string_value (json_object_get (event, "event"));
    if (!kind)
        return;
    json_t *best = NULL;
    if (!strcmp (kind, "candidate")) {
        /* One held for audit or waiting for its re-verification does
         * not count (kf_verify.c), nor a screen figure (kf_fidelity.c). */
        if (!strcmp (kf_ctl_str (event, "status"), "correct")
            && !json_object_get (event, "audit_reason")
            && !json_object_get (event, "verify_state")
            && (!json_object_get (event, "fidelity")
                || !strcmp (kf_ctl_str (event, "fidelity"), "full")))
            best = json_object_get (event, "speedup");
    }
    else if (!strcmp (kind, "generation") || !strcmp (kind, "finished"))
        best = json_object_get (event, "best_speedup");
    if (!strcmp (kind, "finished")) {
        const char *status = json_string_value (json_object_get (event, "status"));
        if (status)
            snprintf (progress->status, sizeof progress->status, "%s", status);
    }
    if (json_is_number (best)
        && (!progress->has_best || json_number_value (best) > progress->best)) {
        progress->best = json_number_value (best);
        progress->has_best = true;
        if (progress->has_pending && progress->pending <= progress->best)
            progress->has_pending = false;
    }
}

void
kf_ctl_phase_text (const kf_ctl_progress_t *progress, char *buf, size_t size)
{
    if (progress->tuning_round > 0) {
        snprintf (buf, size, "tuning round %lld/%lld", progress->tuning_round,
                  progress->tuning_rounds);
        return;
    }
    long long shown = progress->generation + 1;
    /* A run past its main phase reports the generation after its last. */
    if (progress->generations > 0 && shown > progress->generations)
        shown = progress->generations;
    if (shown < 1)
        shown = 1;
    if (progress->generations > 0)
        snprintf (buf, size, "generation %lld/%lld", shown, progress->generations);
    else
        snprintf (buf, size, "generation %lld/?", shown);
}

double
kf_ctl_progress_estimate (const kf_ctl_progress_t *progress)
{
    if (strcmp (progress->status, "running") || progress->elapsed_s < 0
        || progress->done < KF_CTL_ESTIMATE_MIN || progress->total <= progress->done)
        return -1;
    return progress->elapsed_s / (double) progress->done
           * (double) (progress->total - progress->done);
}

void
kf_ctl_duration_text (double seconds, char *buf, size_t size)
{
    long long s = seconds < 0 ? 0 : (long long) (seconds + 0.5);
    if (s >= 3600)
        snprintf (buf, size, "%lldh%02lldm", s / 3600, s / 60 % 60);
    else if (s >= 60)
        snprintf (buf, size, "%lldm%02llds", s / 60, s % 60);
    else
        snprintf (buf, size, "%llds", s);
}

void
kf_ctl_progress_line (const kf_ctl_progress_t *progress, char *buf, size_t size)
{
    enum { WIDTH = 24 };
    char bar[WIDTH + 1];
    long long filled = 0;
    if (progress->total > 0)
        filled = progress->done * WIDTH / progress->total;
    if (filled > WIDTH)
        filled = WIDTH;
    for (int i = 0; i < WIDTH; i++)
        bar[i] = i < filled ? '#' : '-';
    bar[WIDTH] = '\0';
    char total[32] = "?";
    if (progress->total > 0)
        snprintf (total, sizeof total, "%lld", progress->total);
    char phase[48];
    kf_ctl_phase_text (progress, phase, sizeof phase);
    char best[80] = "-";
    if (progress->has_best && progress->has_pending)
        snprintf (best, sizeof best, "%.2fx (%.2fx pending verification)", progress->best,
                  progress->pending);
    else if (progress->has_best)
        snprintf (best, sizeof best, "%.2fx", progress->best);
    else if (progress->has_pending)
        snprintf (best, sizeof best, "- (%.2fx pending verification)", progress->pending);
    char times[96] = "";
    if (progress->elapsed_s >= 0) {
        char elapsed[24], left[24];
        kf_ctl_duration_text (progress->elapsed_s, elapsed, sizeof elapsed);
        double estimate = kf_ctl_progress_estimate (progress);
        if (estimate >= 0) {
            kf_ctl_duration_text (estimate, left, sizeof left);
            snprintf (times, sizeof times, "  elapsed %s, about %s left (estimate)", elapsed,
                      left);
        }
        else
            snprintf (times, sizeof times, "  elapsed %s", elapsed);
    }
    snprintf (buf, size, "run %lld [%s] %lld/%s done, %lld in flight  %s  best %s%s  %s",
              progress->run_id, bar, progress->done, total, progress->in_flight, phase, best,
              times, progress->status[0] ? progress->status : "-");
}
