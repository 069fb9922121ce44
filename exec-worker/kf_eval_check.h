/*  kf_eval_check.h - what every evaluation backend does the same way.
 *
 *  The host, CUDA and (later) Level Zero harnesses differ in where tensors
 *  live and how a call is timed; they must not differ in what counts as a
 *  right answer, which inputs they draw, or how a crash is reported. So
 *  input generation, poisoning, the comparison with the reference, the
 *  timing statistics and the child's phase byte and fault handler live
 *  here, once, and each backend works on host copies of its tensors.
 */
#ifndef KF_EVAL_CHECK_H
#define KF_EVAL_CHECK_H

#include "kf_kernel.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One tensor of the task, parsed. SPEC is borrowed from the task. */
typedef struct {
    const char *name;
    int dtype;
    size_t numel, bytes;
    json_t *spec;
} kf_eval_spec_t;

/* The task's tolerance ("tolerance" object), defaults filled in. */
typedef struct {
    double rtol, atol, min_match, min_cosine;
} kf_eval_tol_t;

/* Correctness figures, the worst over every comparison made. */
typedef struct {
    int sets;
    double match_fraction, max_abs, max_rel, cosine;
    long nonfinite_mismatch;
} kf_eval_worst_t;

/* A number from OBJ[KEY], or DFLT. */
double kf_eval_num (json_t *obj, const char *key, double dflt);

/* Parses one tensor spec; -1 with WHY on a bad dtype or shape. */
int kf_eval_spec (kf_eval_spec_t *s, json_t *spec, char *why, size_t why_size);

/* A contiguous row-major tensor of S's shape over DATA. */
void kf_eval_tensor (kf_tensor_t *t, const kf_eval_spec_t *s, void *data);

/* Fills N elements at P from the distribution DIST (normal, uniform,
 * constant, heavy_tail; signed defaults) seeded with SEED. */
void kf_eval_fill (json_t *dist, int dtype, void *p, size_t n, uint64_t seed);

/* The seed of input INPUT in set SET of a job seeded with SEED. */
uint64_t kf_eval_input_seed (uint64_t seed, int set, int input);

/* Writes the poison pattern (a NaN with a payload for floats, 0xdeadbeef
 * for integers) over N elements, and tells whether element I holds it. */
void kf_eval_poison (int dtype, void *p, size_t n);
bool kf_eval_is_poison (int dtype, const void *p, size_t i);

/* Tolerances from TASK's "tolerance"; W reset to "all right so far". */
void kf_eval_tol_from_task (json_t *task, kf_eval_tol_t *tol, kf_eval_worst_t *w);

/* Compares one output CAND with REF (both host memory, S's dtype and
 * size), folding the figures into W. Returns 0 when it passes every
 * check, -1 with DETAIL ("WHEN: output 'y': ...") when not. */
int kf_eval_compare_output (const kf_eval_tol_t *tol, kf_eval_worst_t *w,
                            const kf_eval_spec_t *s, const void *cand,
                            const void *ref, const char *when,
                            char *detail, size_t detail_size);

/* {sets, match_fraction, max_abs_err, max_rel_err, cosine,
 * nonfinite_mismatch}. Caller owns it. */
json_t *kf_eval_correctness_json (const kf_eval_worst_t *w);

/* {median_ns, p10_ns, p90_ns, samples, calls_per_sample}. Caller owns it. */
json_t *kf_eval_timing_json (const double *ns, int n, int calls);

/* Median over the N samples of REF[i] / CAND[i]; -1 when out of memory. */
double kf_eval_paired_speedup (const double *ref, const double *cand, int n);

/* The median of N values (not changed). */
double kf_eval_median (const double *v, int n);

/* Writes RESULT to DIR/result.json. */
void kf_eval_write_result (const char *dir, json_t *result);
void kf_eval_write_verdict (const char *dir, const char *verdict, const char *detail);

/* The child's start: maps DIR/phase (a byte the parent reads after a
 * crash or a kill: 'R' reference, 'C' candidate, 'H' harness) and
 * installs the fault handler, which writes DIR/result.json with
 * write(2) only and exits 3. Returns 0 or -1. */
int kf_eval_child_begin (const char *dir);
void kf_eval_set_phase (char phase);

/* A guard page range: a SIGSEGV inside it reads as an out-of-bounds
 * access rather than an invalid one. */
void kf_eval_add_guard (void *lo, size_t len);

#endif
