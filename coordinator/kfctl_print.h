/*  kfctl_print.h - human-readable views of the coordinator's reply objects
 *  (run, candidate, worker, status snapshot) for kfctl. The --json output
 *  does not come through here: it prints the reply bodies as they are.
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

/* The archive of a SHOW reply BODY (borrowed): a 4x4 grid per pair of
 * dimensions (memory x algorithm, memory x synchronisation, algorithm x
 * synchronisation), each cell the best elite speedup over the third
 * dimension; then the best kernel and its lineage. */
void kf_ctl_print_archive (FILE *out, json_t *body);

/* The prompt versions of a SHOW reply BODY (borrowed): number, parent,
 * generation created, fitness, best speedup, kernels written, whether the
 * prompt archive holds it, and its edits in short; then the rejected
 * meta-prompt edits. Nothing when the run has no versions. */
void kf_ctl_print_prompts (FILE *out, json_t *body);

/* Adds to a SHOW reply BODY what `kfctl show --json` carries beyond the
 * reply: `cells` [{coords [m,a,s], candidate_id (the elite), speedup,
 * fitness}], `best` and `first_correct` ({candidate_id, generation, slot,
 * speedup, coords} or null). */
void kf_ctl_show_extend (json_t *body);

/* Writes PREFIX.csv (limited-budget curve), PREFIX-generations.csv
 * (per-generation progress) and PREFIX.svg (the curve as a plot) from a
 * SHOW reply BODY (borrowed). PATHS gets the three file names (caller
 * frees each). Returns 0, or -1 with *ERR set (caller frees). */
int kf_ctl_report_write (json_t *body, const char *prefix, char *paths[3],
                         char **err);

#endif
