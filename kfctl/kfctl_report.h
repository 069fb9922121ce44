/*  kfctl_report.h - the files of `kfctl report`: a run's limited-budget
 *  curve and per-generation progress, from one SHOW reply.
 */
#ifndef KFCTL_REPORT_H
#define KFCTL_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* Writes PREFIX.csv (limited-budget curve), PREFIX-generations.csv
 * (per-generation progress) and PREFIX.svg (the curve as a plot) from a
 * SHOW reply BODY (borrowed). PATHS gets the three file names (caller
 * frees each). Returns 0, or -1 with *ERR set (caller frees). */
int kf_ctl_report_write (json_t *body, const char *prefix, char *paths[3],
                         char **err);

/* The candidates of a SHOW reply (borrowed) in (generation, slot) order,
 * the report's budget axis; *N gets their count. The array is the
 * caller's to free, its elements borrowed; NULL when out of memory. */
json_t **kf_ctl_report_order (json_t *candidates, size_t *n);

/* Whether candidate C counts for the curve and the run's best, with its
 * speedup in *SPEEDUP: correct, timed with the full protocol, not held. */
bool kf_ctl_report_counts (json_t *c, double *speedup);

/* One step of a curve's running best: X, when it COUNTS, raises *BEST
 * (*ANY: there is one). OWN and SO_FAR (32 bytes each) get X and the best
 * as "%.PRECg", or "" where there is none. */
void kf_ctl_report_best (bool counts, double x, double *best, bool *any, int prec, char *own,
                         char *so_far);

/* PATH opened for writing, or NULL with *ERR set ("cannot write PATH:
 * why", caller frees). */
FILE *kf_ctl_report_open (const char *path, char **err);

/* Closes F, and returns 0 when every write reached PATH, else -1 with
 * *ERR set (caller frees). */
int kf_ctl_report_close (FILE *f, const char *path, char **err);

#endif
