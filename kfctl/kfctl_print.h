/*  kfctl_print.h - human-readable views of the coordinator's reply objects
 *  (run, candidate, worker, status snapshot) for kfctl. The --json output
 *  does not come through here: it prints the reply bodies as they are.
 *  The archive and prompts of `kfctl show` are kfctl_archive.h; the report
 *  files kfctl_report.h.
 */
#ifndef KFCTL_PRINT_H
#define KFCTL_PRINT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* Progress of one run, from SHOW replies and events. */
typedef struct {
    long long run_id;
    long long done, total;
    long long generation, generations;   /* generation is 0-based */
    double best;                         /* valid when has_best */
    bool has_best;
    char status[16];                     /* running, done, ... */
} kf_ctl_progress_t;

/* Updates PROGRESS from a run object (borrowed). */
void kf_ctl_progress_from_run (kf_ctl_progress_t *progress, json_t *run);
/* Updates PROGRESS from an EVENT body (borrowed). */
void kf_ctl_progress_from_event (kf_ctl_progress_t *progress, json_t *event);
/* One line, no newline: "[#####-----] 24/320  gen 4/40  best 1.85x". */
void kf_ctl_progress_line (const kf_ctl_progress_t *progress, char *buf,
                           size_t size);

/* "1.85x" or "-" for null / missing. BUF gets the text; returns BUF. */
const char *kf_ctl_speedup_text (json_t *value, char *buf, size_t size);

void kf_ctl_print_run (FILE *out, json_t *run);
void kf_ctl_print_candidates (FILE *out, json_t *candidates);
void kf_ctl_print_runs (FILE *out, json_t *runs);
void kf_ctl_print_workers (FILE *out, json_t *workers);
void kf_ctl_print_status (FILE *out, json_t *snapshot);

#endif
