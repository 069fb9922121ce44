/*  kfctl_print.h - human-readable views of the coordinator's reply objects
 *  (run, candidate, worker, status snapshot) for kfctl. The --json output
 *  does not come through here: it prints the reply bodies as they are.
 *  The archive and prompts of `kfctl show` are kfctl_archive.h; the report
 *  files kfctl_report.h.
 */
#ifndef KFCTL_PRINT_H
#define KFCTL_PRINT_H

#include "kfctl_progress.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* "1.85x" or "-" for null / missing. BUF gets the text; returns BUF. */
const char *kf_ctl_speedup_text (json_t *value, char *buf, size_t size);

/* Candidate C's absolute times: "3455.5 us (p10-p90 3400.1-3510.2) against
 * the reference's 16542.8 us (p10-p90 ...)", or "" when it was not timed. */
void kf_ctl_times_text (json_t *c, char *buf, size_t size);

void kf_ctl_print_run (FILE *out, json_t *run);
void kf_ctl_print_candidates (FILE *out, json_t *candidates);
void kf_ctl_print_runs (FILE *out, json_t *runs);
void kf_ctl_print_workers (FILE *out, json_t *workers);
void kf_ctl_print_status (FILE *out, json_t *snapshot);

#endif
