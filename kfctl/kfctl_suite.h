/*  kfctl_suite.h - suites: many problems submitted together as runs of
 *  one suite, and the KernelBench figures of a suite (fast_p, geometric
 *  mean speedup) against PyTorch eager and torch.compile.
 *
 *  kfctl_suite.c holds the commands (suite submit, show, list) and the
 *  submission other commands reuse (profile-model --submit N);
 *  kfctl_suite_stats.c the arithmetic, kept apart so a unit test can
 *  check it on figures of its own; kfctl_html_suite.c the report page.
 */
#ifndef KFCTL_SUITE_H
#define KFCTL_SUITE_H

#include "kfctl_cmd.h"
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* kfctl suite submit|show|list (docs/kfctl.md, "Suites"). */
kf_ctl_handler_fn kf_ctl_cmd_suite;

/* kfctl report --suite ID -o FILE.html: the suite's page. */
kf_ctl_handler_fn kf_ctl_report_suite;

/* Submits PATHS (N of them) as the runs of one new suite named NAME
 * (NULL: the last part of the first path, as "level1" of "kb/level1/").
 * Each path is a PyTorch problem in the KernelBench format (.py), a task
 * file (.json), a task folder (holding task.json),
 * or a folder of those, scanned in name order; what is not a problem is
 * skipped with its reason on stderr. Every run gets the run config that
 * submit would build from ARGS (--target, --generations, --population,
 * --model, --config, --set, ...; ARGS->task_name is not used: a
 * problem's name is its file's stem). Prints what `kfctl suite submit`
 * prints (the suite id, or with --json the submission object; with
 * ARGS->wait it follows the suite to its end and prints its figures).
 * Returns the exit code (KF_CTL_EXIT_*); *SUITE_ID_P (may be NULL) gets
 * the suite's id, or 0 when none was made. */
int kf_ctl_suite_submit_files (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep,
                               const char *const *paths, size_t n, const char *name,
                               long long *suite_id_p);

/* The baselines a suite's figures are computed against. */
typedef enum {
    KF_CTL_SUITE_EAGER = 0,      /* PyTorch eager (a PyTorch problem's reference) */
    KF_CTL_SUITE_COMPILED = 1,   /* torch.compile */
    KF_CTL_SUITE_N_BASELINES = 2
} kf_ctl_suite_baseline_t;

/* One problem's figures, as the suite's runs report them. */
typedef struct {
    bool correct;            /* its run has a counted best candidate */
    double speedup[KF_CTL_SUITE_N_BASELINES];   /* < 0: no such baseline */
} kf_ctl_suite_problem_t;

/* fast_p against BASELINE over all N problems (KernelBench): the share
 * of problems that are correct and whose speedup is above P; fast_0 is
 * the share correct. A problem with no figure against BASELINE counts
 * as correct for p = 0 only. Returns -1 when N is 0 or no problem has
 * that baseline (then the figure is not applicable). */
double kf_ctl_suite_fast_p (const kf_ctl_suite_problem_t *problems, size_t n,
                            kf_ctl_suite_baseline_t baseline, double p);

/* The geometric mean of the speedups against BASELINE over the correct
 * problems that have one; -1 when there are none. */
double kf_ctl_suite_geomean (const kf_ctl_suite_problem_t *problems, size_t n,
                             kf_ctl_suite_baseline_t baseline);

/* The figures of one run of a suite (a run object of SUITE): correct
 * when it has a counted best candidate (whatever its status); its speedup
 * against eager is its best when it has an eager baseline (ref_eager_ns,
 * a PyTorch problem), against torch.compile that best scaled by
 * ref_compiled_ns / ref_eager_ns. A native task has neither. */
void kf_ctl_suite_problem_of (json_t *run, kf_ctl_suite_problem_t *p);

/* The baseline's name in JSON ("eager", "compiled"). */
const char *kf_ctl_suite_baseline_name (kf_ctl_suite_baseline_t baseline);

/* The figures of a suite's RUNS (borrowed) as JSON: {problems, correct,
 * running, eager: {fast_0, fast_1, fast_1.5, fast_2, geomean,
 * with_baseline}, compiled: {...}}, each figure null where it does not
 * apply. Caller's. */
json_t *kf_ctl_suite_figures (json_t *runs);

/* The HTML page of a suite (kfctl report --suite ID -o FILE.html) at
 * PATH: the fast_p curves and a table of the problems, self-contained.
 * BODY is the SUITE reply's body, FIGURES kf_ctl_suite_figures of its runs
 * (both borrowed). Returns 0, or -1 with *ERR (caller frees). */
int kf_ctl_html_suite (json_t *body, json_t *figures, const char *path, char **err);

#endif
