/*  kf_lineage.h - what a run remembers of a parent's children, and of the
 *  sources it has already judged.
 *
 *  A model asked to improve a kernel needs to know what was already tried
 *  from it and how each try ended, or it proposes the same change again;
 *  and a source the run has already judged (the same code with other
 *  comments or spacing) need not be compiled and timed a second time. The
 *  readers here fill the prompt's "last kernel tried" and "recent
 *  attempts" sections (kf_prompt.h) and the generate step's duplicate
 *  check (kf_search.c); the best-kernel reader gives the prompt the
 *  fastest kernel the search actually holds, whatever its standing.
 */
#ifndef KF_LINEAGE_H
#define KF_LINEAGE_H

#include "kf_db.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Within this ratio of its parent a child neither improved nor
 * regressed, whatever spread its timings report. */
#define KF_LINEAGE_SAME_BAND 0.03

/* Past this band (the two figures' noise in quadrature) a comparison with
 * the parent tells nothing: round 9 of issue 15 printed "within noise of
 * +/-101%" under the heaviest load. Such a try is named, not counted. */
#define KF_LINEAGE_UNTOLD 0.5

/* Children of a parent listed in a prompt, newest first. */
#define KF_LINEAGE_CHILDREN 6

/* The last N finished children of PARENT_ID, newest first, as an array of
 * {id, generation, slot, status, speedup (correct only), reason} where
 * REASON is one line: why it failed (its verdict's first line), how it
 * compared with the parent (PARENT_SPEEDUP; a correct child "regressed"
 * only when slower beyond the timing noise of both, "within noise"
 * otherwise, "too spread to tell" past KF_LINEAGE_UNTOLD; a screen-only
 * figure is not set against a full one), or that its source repeated an
 * earlier one. Caller's; NULL on a database error, an empty array when there are none. */
json_t *kf_lineage_children (kf_db_t *db, int64_t parent_id, double parent_speedup, int n);

/* The one-line reason of child C (a row as above, without "reason") next
 * to a parent at PARENT_SPEEDUP (0: unknown), written into BUF. C may
 * carry "noise" (the relative spread of the difference, kf_lineage_noise
 * of both), "repeat" and "repeat_median" (kf_lineage_repeat of the run), "fidelity" and "parent_fidelity" (candidates.fidelity),
 * "screen_gap" (the largest ratio of one kernel's screen and full figures
 * in the run) and "loaded" (true: it or its parent was timed beside other
 * work, kf_prompt_load_busy; then no verdict but "too spread"). Pure, so the rule is tested without a database. */
const char *kf_lineage_reason (json_t *c, double parent_speedup, char *buf, size_t size);

/* A tuning candidate's screen figure is the best of the points its sweep
 * screened, so it reads high (round 17: candidate 20 screened 154.72x
 * as the best of 8 points and timed 95.18x in full). How many points
 * stand behind C's screen figure: C's "screen_points" (the sweep's
 * figures.tuning.screened) when its "phase" is "tuning" and more than
 * one point ran; 0 otherwise. Pure. */
int kf_lineage_screen_points (json_t *c);

/* The words for that, with %d the points: said wherever a tuning
 * candidate's screen-only figure is printed. */
#define KF_LINEAGE_BEST_OF "the best of %d points its tuning sweep screened, so it reads high"

/* How SPEEDUP compares with PARENT_SPEEDUP within BAND
 * (kf_lineage_band): 1 faster by more than the ratio 1 + BAND, -1 slower
 * by more than that same ratio, 0 within it, 2 when BAND is past
 * KF_LINEAGE_UNTOLD (nothing told). The one rule for the children's
 * lines, the ideas' tries (kf_search_idea_verdict) and the gradients
 * (kf_gradient.c), so a "within noise" child counts as neither a win
 * nor a loss anywhere. Round 16: a child its parent outran 1.20 times
 * was "regressed" where one kernel timed twice in the run came out a
 * median 17% apart, and up to 24%. Pure. */
int kf_lineage_verdict (double speedup, double parent_speedup, double band);

/* Round 24: a try timed beside other work was "inconclusive, timed beside
 * other work (12.41x vs parent 1.18x)". The verdict V of SPEEDUP against
 * PARENT_SPEEDUP (kf_lineage_verdict within BAND) where the child or its
 * parent was timed beside other work (LOADED), their timings' host loads
 * TL and PL (figures.host_load; either may be NULL): a win or a loss
 * still holds when its ratio is past 1 + BAND times what the load could
 * account for (kf_lineage_load_factor); else 3 (not told: the load). Not
 * LOADED: kf_lineage_verdict's answer. Pure. */
int kf_lineage_verdict_loaded (double speedup, double parent_speedup, double band, bool loaded,
                               json_t *tl, json_t *pl);

/* The most the load could stretch the ratio of verdict V (1: the child
 * faster, -1: slower): the share of the CPUs' time the faster one's
 * timing had over the slower one's (1 - others_cpu_share of each), at
 * least 1; 0 where V is neither or a share is unknown or past 0.95. A
 * timing whose figures are over undisturbed samples only counts as having
 * had all of it (kf_prompt_load_undisturbed). */
double kf_lineage_load_factor (int v, json_t *tl, json_t *pl);

/* How far a speedup may lie from its kernel's figure, relative to it,
 * from its evaluation's candidate and reference timings
 * (figures.candidate, figures.reference): twice the standard error of
 * each median (from its samples' p10-p90 width and count), in
 * quadrature; half the p10-p90 width over the median where no sample
 * count is given; 0 when unknown. */
double kf_lineage_noise (json_t *timing_candidate, json_t *timing_reference);

/* Candidates of a run timed both on the screen and in full before the
 * two figures' typical difference counts as its repeat noise. */
#define KF_LINEAGE_REPEATS 3

/* How far apart the same kernel's figures came when RUN_ID timed it
 * twice (each candidate's screen and full speedup): the ratio that 9 in
 * 10 of them stayed within, less 1 (0.24: within 24%), 0 before
 * KF_LINEAGE_REPEATS such candidates; in *MEDIAN (when not NULL) the
 * median ratio less 1 on the same terms, in *LARGEST (when not NULL)
 * the largest ratio (0 with none) and in *COUNT (when not NULL) how many
 * candidates there are. Each pair is two timings of one kernel, so its
 * ratio is what a child's ratio to an unchanged parent would be: a band
 * at the median would call half of such pairs changed (round 16: 17%
 * at the median called a child its parent outran 1.20 times
 * "regressed", where pairs of one kernel had come 24% apart).
 * This covers what one evaluation's samples cannot: the host's state
 * between one evaluation and the next (round 11: one kernel measured
 * 897 and 1304 us on a host of the same load). */
double kf_lineage_repeat_all (kf_db_t *db, int64_t run_id, double *largest, long *count,
                              double *median);

/* Round 31: before KF_LINEAGE_REPEATS pairs the band is 0, and one try
 * of an idea timed under 50-70% load was called lost, and its idea set
 * aside, by its samples' few per cent, while the prompt said two timings
 * of one kernel had differed by up to 1.74x. The band to judge an idea's
 * tries by: WIDE (kf_lineage_repeat_all's) once COUNT pairs make it,
 * before that the LARGEST ratio less 1 (0 with no pair). Pure. */
double kf_lineage_repeat_early (double wide, double largest, long count);

/* The share of a run's repeats whose gap sets the band (the rest may
 * still read as a change: 1 in 10 of unchanged kernels). */
#define KF_LINEAGE_REPEAT_SHARE 0.9

/* Repeats below which the KF_LINEAGE_REPEAT_SHARE quantile rests on the
 * largest one alone (1 / (1 - 0.9)). */
#define KF_LINEAGE_REPEAT_TAIL 10

/* A half-normal spread's 9-in-10 point over its median (1.645 / 0.674). */
#define KF_LINEAGE_REPEAT_TAIL_FROM_MEDIAN 2.44

/* The rule of kf_lineage_repeat_all from the N repeats' GAPS (each
 * |ln(screen / full)|; sorted in place): the KF_LINEAGE_REPEAT_SHARE
 * quantile as a ratio less 1, and in *MEDIAN (when not NULL) the median
 * so; 0 for both below KF_LINEAGE_REPEATS. Below KF_LINEAGE_REPEAT_TAIL
 * repeats the quantile goes no wider than the larger of the same
 * quantile without the largest repeat and
 * KF_LINEAGE_REPEAT_TAIL_FROM_MEDIAN times the median gap, so that one
 * outlying pair does not set the band. Pure. */
double kf_lineage_repeat_gaps (double *gaps, size_t n, double *median);

/* The gaps |ln(screen / full)| of ROWS ({screen_speedup, speedup, phase,
 * screen_points}) into GAPS (room for all of them), a tuning candidate's
 * left out unless its screen timed one point (kf_lineage_screen_points):
 * the best of N screened points is biased upward, not a repeat of one
 * kernel's timing. Returns how many. Pure. */
size_t kf_lineage_repeat_rows (json_t *rows, double *gaps);

/* Round 39: a +25% win of a new tile was set aside as "within noise of
 * +/-29%", a band the screen-against-full pairs made (screens up to 35%
 * off their full figures beside other work), while a kernel's full
 * figure and its confirmation came 2% and 5% apart in that run. The
 * band the search's verdicts take, which set two full figures against each other: from
 * the run's confirmations (each new best's first full figure against
 * its second timing), as kf_lineage_repeat_all from its pairs, once
 * there are KF_LINEAGE_REPEATS of them (*FULL their count); before that
 * 0 (*FULL 0, *MEDIAN untouched). *MEDIAN (when not NULL) as there. */
double kf_lineage_repeat_verdicts (kf_db_t *db, int64_t run_id, double *median, long *full);

/* The band the verdicts take: kf_lineage_repeat_verdicts' where the
 * confirmations make one, with *LARGEST 1 + that band and *COUNT their
 * pairs; else kf_lineage_repeat_all's, with its largest ratio and count.
 * *MEDIAN (when not NULL) the median of the same pairs. */
double kf_lineage_repeat (kf_db_t *db, int64_t run_id, double *largest, long *count,
                          double *median);

/* The band within which two speedups are not told apart: the larger of
 * their NOISE (kf_lineage_noise of both, in quadrature) and the run's
 * REPEAT (kf_lineage_repeat), and never below KF_LINEAGE_SAME_BAND. */
double kf_lineage_band (double noise, double repeat);

/* The id of PARENT_ID's most recently finished child, or 0. */
int64_t kf_lineage_last_child (kf_db_t *db, int64_t parent_id);

/* The fastest correct candidate of RUN_ID that no person has rejected,
 * counted or not, as a prompt kernel (kf_prompt_kernel) with "standing":
 * "counted", "held for audit", "being re-verified", "full timing pending"
 * or "screen figure" (caller's), or NULL when the run has none. */
json_t *kf_lineage_best (kf_db_t *db, int64_t run_id);

/* The standing of a correct candidate from its columns (fidelity,
 * verify_state, audit_reason, audit_verdict; NULL or "" when unset). */
const char *kf_lineage_standing (const char *fidelity, const char *verify_state,
                                 const char *audit_reason, const char *audit_verdict);

/* SHA-256 (hex) of SOURCE with its comments removed and every run of
 * white space made one space (none at the ends), string and character
 * literals kept as they are, and comments that carry a directive
 * (kf-tune:, kf-launch:, kf-scratch:) kept like code: two sources with
 * the same hash build the same kernels. */
void kf_lineage_norm_hash (const char *source, size_t size, char out[65]);

/* Round 20: the same hash with every numeric literal (and a directive's
 * values) made one mark: two sources with the same shape differ in their
 * numbers only (KC = 128 against 256, one template's two winning points),
 * so one template could expose what tells them apart. */
void kf_lineage_shape_hash (const char *source, size_t size, char out[65]);

/* The earliest other candidate of RUN_ID than CAND_ID, of the same phase
 * (search or tuning: one is swept, the other not), whose normalised hash
 * is NORM_HASH, an original before a repeat: {id, status, speedup,
 * detail, fidelity, finished} (caller's), or NULL when there is none (or
 * on a database error, with *FAILED set when FAILED is not NULL). */
json_t *kf_lineage_duplicate (kf_db_t *db, int64_t run_id, int64_t cand_id,
                              const char *norm_hash, bool *failed);

/* How RUN_ID ends once nothing is open: when none of its candidates came
 * back from the generator with a source, or none that did was judged (a
 * verdict on the kernel: correct, incorrect, crashed, timeout,
 * compile_failed) because its compile or evaluation failed for good,
 * STATUS becomes "failed" and REASON (which holds the reason it would
 * have ended done with) says so with the last error; otherwise both stay.
 * Returns 0, or -1 on a database error. */
/* The rule of kf_lineage_run_end from the run's counts (TOTAL
 * candidates, GENERATED with a source, JUDGED with a verdict on the
 * kernel) and the last failure's text LAST: 1 with STATUS and REASON
 * written when the run failed, 0 when it stands. Pure. */
int kf_lineage_end_rule (int64_t total, int64_t generated, int64_t judged, const char *last,
                         char *status, size_t status_size, char *reason, size_t reason_size);

int kf_lineage_run_end (kf_db_t *db, int64_t run_id, char *status, size_t status_size,
                        char *reason, size_t reason_size);

#endif
