/*  kf_retune.h - a tuning round reuses a template the run already has.
 *
 *  A kernel that already carries kf-tune parameters (or whose template an
 *  earlier tuning round made) is not sent to a model to be templated
 *  again, which the model in the loop saw happen (issue 15): the next
 *  sweep is made from that template by the coordinator, with the
 *  earlier sweep's winning point made the defaults, so its one-parameter
 *  moves (common/kf_tune.h) explore around the winner. Pure functions;
 *  the tuning stage (kf_search_plan.c) finds the template.
 */
#ifndef KF_RETUNE_H
#define KF_RETUNE_H

#include <jansson.h>
#include <stdbool.h>

/* Whether SOURCE declares kf-tune parameters. */
bool kf_retune_is_template (const char *source);

/* The point of a sweep's table CONFIGS (kf_prompt_kernel's "configs":
 * [{params, verdict, speedup, fidelity, full_speedup}]) that won: the
 * fastest full-protocol figure among correct points, else the fastest
 * correct screen; borrowed, or NULL when no point was correct. */
json_t *kf_retune_winner (json_t *configs);

/* SOURCE with the value of each `#define NAME value` line for a NAME of
 * PARAMS ({NAME: value}) replaced by PARAMS' value, everything else as it
 * was (caller frees; NULL on allocation failure). *CHANGED (when not
 * NULL) says whether any default moved. */
char *kf_retune_source (const char *source, json_t *params, bool *changed);

/* SOURCE (not NULL) re-centred on the winner of CONFIGS (its sweep's
 * table, as for kf_retune_winner): kf_retune_source with the winner's
 * values, or SOURCE as it is when no point was correct (caller frees;
 * NULL on allocation failure). *WINNER (when not NULL) is that winner,
 * borrowed from CONFIGS, or NULL. Round 22: a template whose sweep won at
 * its own defaults, swept again around its winner, is its own source
 * again, and its points the ones timed already (a slot spent on a copy).
 * *CONVERGED (when not NULL) says whether SOURCE is such a one: a
 * template, two or more points were timed, one was correct, and the
 * winner's values are SOURCE's defaults (the copy returned moved none).
 * One reading answers both, so the tuning round that reuses a template
 * parses it once. */
char *kf_retune_recentre (const char *source, json_t *configs, json_t **winner,
                          bool *converged);

/* Round 26 and 30: a sweep timed while other processes took 51-72% of
 * the CPUs read as "none faster than its own defaults". Whether CONFIGS'
 * points (a sweep's table, each row's host_load) were timed beside other
 * work (kf_load_busy on the largest share of the CPUs others took, the
 * points timed over undisturbed samples left out); *LO and *HI (when not
 * NULL) the least and largest such share, -1 where none was read. */
bool kf_retune_sweep_busy (json_t *configs, double *lo, double *hi);

/* Round 22: a sweep's winner moved two parameters from the defaults at
 * once (streaming stores and two threads, 40.8x), each of which moved
 * alone had been neutral, and no prompt said the combination won. Of
 * CONFIGS (the all-defaults point first, as the sweep builds it), where
 * the winner (kf_retune_winner) differs from the defaults in two or more
 * parameters, a sentence into BUF (SIZE) setting its screen figure
 * against the defaults' and each of those moves alone where it was
 * timed; its length, 0 (BUF empty) otherwise. */
size_t kf_retune_combination (json_t *configs, char *buf, size_t size);

#endif
