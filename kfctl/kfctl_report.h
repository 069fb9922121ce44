/*  kfctl_report.h - the files of `kfctl report`: a run's limited-budget
 *  curve and per-generation progress, from one SHOW reply.
 */
#ifndef KFCTL_REPORT_H
#define KFCTL_REPORT_H

#include <jansson.h>

/* Writes PREFIX.csv (limited-budget curve), PREFIX-generations.csv
 * (per-generation progress) and PREFIX.svg (the curve as a plot) from a
 * SHOW reply BODY (borrowed). PATHS gets the three file names (caller
 * frees each). Returns 0, or -1 with *ERR set (caller frees). */
int kf_ctl_report_write (json_t *body, const char *prefix, char *paths[3],
                         char **err);

#endif
