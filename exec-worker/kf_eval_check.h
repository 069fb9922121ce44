/*  kf_eval_check.h - what every evaluation backend does the same way.
 *
 *  The host, CUDA and (later) Level Zero harnesses differ in where tensors
 *  live and how a call is timed; they must not differ in what counts as a
 *  right answer, which inputs they draw, or how a crash is reported. So
 *  input generation, poisoning, the comparison with the reference, the
 *  timing statistics (and, beside them, the child's phase byte and fault
 *  handler) live once, and each backend works on host copies of its
 *  tensors.
 *
 *  One interface, a file per idea behind it: inputs, tensors, comparison
 *  and shape cases in kf_eval_check.c; timing statistics, phases, the
 *  harness's split and the warm-up in kf_eval_stats.c; degenerate outputs
 *  in kf_eval_degen.c; ceilings and the roofline in kf_eval_roofline.c;
 *  a kernel's reason for refusing (kf_refusal) in kf_eval_refusal.c;
 *  exported PyTorch data in kf_eval_refdata.c; the phase byte and the
 *  fault handler in kf_eval_channel.c (kf_eval_channel.h).
 */
#ifndef KF_EVAL_CHECK_H
#define KF_EVAL_CHECK_H

#include "kf_eval_channel.h"
#include "kf_eval_elem.h"
#include "kf_kernel.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --- kf_eval_refusal.c: a kernel's reason for refusing (kf_refusal) */

/* The words that open a refusal's detail: "reference refused on set 0: why". */
#define KF_EVAL_REFUSED "reference refused on"

/* The reason FN gives into OUT (CAP bytes): at most KF_REFUSAL_MAX bytes,
 * up to the first NUL or line break, bytes outside printable ASCII as '?'.
 * Returns its length, 0 when FN is NULL or gave none. */
size_t kf_eval_refusal_read (kf_refusal_fn *fn, char *out, size_t cap);

/* kf_refusal of the loaded library that holds FORWARD (its kf_forward), or
 * NULL when it exports none. */
kf_refusal_fn *kf_eval_refusal_beside (const void *forward);

/* DETAIL for a reference whose kf_forward (FORWARD) returned RC on WHEN
 * ("set 0"): "reference refused on WHEN: REASON" when it gives a reason
 * (read in the reference's phase), else the return code. */
void kf_eval_ref_failed (char *detail, size_t cap, int rc, const char *when,
                         const void *forward);

/* DETAIL for a candidate whose kf_forward returned RC on WHEN, SAID the
 * reason its process sent (kf_runner.c; untrusted, cleaned here as
 * above): "WHEN: candidate refused (kf_forward returned RC): REASON", or
 * "WHEN: candidate kf_forward returned RC" without one. */
void kf_eval_cand_returned (char *detail, size_t cap, const char *when, int rc,
                            const char *said);

/* Whether DETAIL (a reference_failed detail, with or without the fault
 * handler's "reference: ") is a refusal: deterministic, not retried. */
bool kf_eval_is_refusal (const char *detail);

/* One tensor of the task, parsed. SPEC is borrowed from the task. */
typedef struct {
    const char *name;
    int dtype;
    size_t numel, bytes;
    json_t *spec;
} kf_eval_spec_t;

/* The task's tolerance ("tolerance" object), defaults filled in. ATOL is
 * the f32 bound (kept for reports); the test uses ATOL_DTYPE, the bound of
 * the output's own dtype (kf_task_atol). */
typedef struct {
    double rtol, atol, min_match, min_cosine;
    double atol_dtype[6];
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
 * constant, heavy_tail; signed defaults) seeded with SEED. Element I's
 * value depends only on SEED and I (each draws from its own point of
 * the generator's sequence), so large tensors are drawn by several
 * threads with the same result as one. */
void kf_eval_fill (json_t *dist, int dtype, void *p, size_t n, uint64_t seed);

/* DIST's JSON (as kf_eval_fill reads it) as plain numbers, for a fill
 * elsewhere (a device). */
void kf_eval_dist (json_t *dist, kf_elem_dist_t *d);

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
 * check, -1 with DETAIL ("WHEN: output 'y': ...") when not. One pass
 * over the elements, in fixed blocks that several threads may share;
 * the sums are added block by block in order, so the figures do not
 * depend on the number of threads. */
int kf_eval_compare_output (const kf_eval_tol_t *tol, kf_eval_worst_t *w,
                            const kf_eval_spec_t *s, const void *cand,
                            const void *ref, const char *when,
                            char *detail, size_t detail_size);

/* The verdict on one output from the merged figures of its elements
 * (kf_elem_check over all of them, wherever they were computed: the host
 * or a device), folded into W; 0, or -1 with DETAIL as above. */
int kf_eval_judge_output (const kf_eval_tol_t *tol, kf_eval_worst_t *w,
                          const kf_eval_spec_t *s, const kf_elem_part_t *sum,
                          const char *when, char *detail, size_t detail_size);

/* The absolute tolerance for outputs of DTYPE. */
double kf_eval_atol (const kf_eval_tol_t *tol, int dtype);

/* {sets, match_fraction, max_abs_err, max_rel_err, cosine,
 * nonfinite_mismatch}. Caller owns it. */
json_t *kf_eval_correctness_json (const kf_eval_worst_t *w);

/* --- Timing statistics (kf_eval_stats.c). */

/* {median_ns, p10_ns, p90_ns, samples, calls_per_sample}. Caller owns it. */
json_t *kf_eval_timing_json (const double *ns, int n, int calls);

/* Median over the N samples of REF[i] / CAND[i]; -1 when out of memory. */
double kf_eval_paired_speedup (const double *ref, const double *cand, int n);

/* The median of N values (not changed). */
double kf_eval_median (const double *v, int n);

/* {child_start, load, correctness, timing, report, exit} in seconds from
 * the parent's SPAWN time, the child's stamps and the parent's END time;
 * a phase the child never reached is 0, one it died in runs to END.
 * report: from the end of the timing to the result written (the
 * ceilings measured for the roofline); exit: from then until the parent
 * saw the child end (the runtime's teardown). */
json_t *kf_eval_phases_json (double spawn, const double stamps[KF_EVAL_T_N], double end);

/* --- Where the harness's own time goes inside load and correctness, for
 * the evaluator's benchmark (result "split_s"): seconds added up per
 * step over the child's life (kf_eval_stats.c). */
enum { KF_EVAL_S_CONTEXT,    /* the device runtime and its context */
       KF_EVAL_S_MODULES,    /* the reference's and candidate's libraries */
       KF_EVAL_S_DEVICE,     /* device properties, stream, events, buffers */
       KF_EVAL_S_CEILINGS,   /* copy bandwidth and FMA peak measured */
       KF_EVAL_S_INPUTS,     /* inputs drawn (or copied from the data) */
       KF_EVAL_S_COPIES,     /* staging, poisoning, reading back, input checks */
       KF_EVAL_S_CALLS,      /* the correctness pass's kernel calls */
       KF_EVAL_S_COMPARE,    /* outputs read back and compared with the right ones */
       KF_EVAL_S_N };
void kf_eval_split_add (int which, double seconds);
/* {context, modules, device, ceilings, inputs, copies, calls, compare}.
 * Caller owns it. */
json_t *kf_eval_split_json (void);

/* --- A timing object's floors (kf_eval_stats.c): min_time_s,
 * min_samples (at least 3), warmup_s and warmup_calls, each the worker's
 * default (1 s, 10, 1 s, 10) where TIMING leaves it out; the same
 * defaults the coordinator's kf_fidelity.c names. */
typedef struct {
    double min_time_s, warmup_s;
    int min_samples, warmup_calls;
} kf_eval_floors_t;

void kf_eval_floors (json_t *timing, kf_eval_floors_t *f);
/* Calls for a sample of about TARGET_NS when one takes PER_CALL_NS
 * (1000 when that is unknown), between 1 and MAX. */
int kf_eval_calls_for (double per_call_ns, double target_ns, int max);

/* --- The warm-up floor (kf_eval_stats.c). The floor (warmup_s,
 * warmup_calls) counts the correctness pass's calls of the main shape:
 * they are real calls of the same kernels on the same device, each
 * waited for, so the warm-up after them only tops up what is missing.
 * The time counts from the start of the first of them. */
typedef struct {
    double since;            /* start of the first counted call; 0: none */
    int ref_calls, cand_calls;
} kf_eval_warm_t;

/* Counts one call of the reference (REF) or the candidate that started
 * at STARTED. */
void kf_eval_warm_count (kf_eval_warm_t *w, bool ref, double started);
/* Whether the warm-up must go on at NOW after TOPUP rounds (a call of
 * each side; of the candidate alone unless PAIRED): always for the first
 * round, which measures the cost of a call; then until each side has
 * WARMUP_CALLS calls counted with the top-up's and WARMUP_S seconds have
 * passed since W->since. */
bool kf_eval_warm_more (const kf_eval_warm_t *w, bool paired, int topup, double now,
                        double warmup_s, int warmup_calls);
/* The calls counted per side before the top-up (the smaller side's when
 * PAIRED). */
int kf_eval_warm_counted (const kf_eval_warm_t *w, bool paired);

/* --- Shape cases (kf_eval_check.c): case 0 is the task as declared,
 * case k >= 1 the task with shapes[k-1]'s tensors reshaped. */
int kf_eval_n_cases (json_t *task);
/* A task object for case K (caller's), or NULL when K is out of range. */
json_t *kf_eval_case_task (json_t *task, int k);
/* "shape case K (x [64, 1000], y [64, 1000])" into BUF. */
void kf_eval_case_label (json_t *task, int k, char *buf, size_t size);

/* --- Degenerate reference outputs (kf_eval_degen.c): the rules the
 * PyTorch runner applies (docs/pytorch-references.md), for a native
 * reference probe. */
#define KF_EVAL_MAX_OUT 32
typedef struct {
    int n_out, sets;
    uint64_t in_hash;
    bool in_differs;
    struct {
        const char *name;
        uint64_t hash;
        bool differs, all_constant, any_finite;
        double max_mag, atol, value;
    } out[KF_EVAL_MAX_OUT];
} kf_eval_degen_t;

uint64_t kf_eval_hash (const void *p, size_t n, uint64_t h);
void kf_eval_degen_init (kf_eval_degen_t *d, int n_out);
/* Folds one set: INPUTS_HASH of its inputs, then each output O. */
void kf_eval_degen_inputs (kf_eval_degen_t *d, uint64_t inputs_hash);
void kf_eval_degen_output (kf_eval_degen_t *d, int o, const kf_eval_spec_t *s,
                           const void *data, double atol);
/* Closes a set (after its inputs and outputs were folded). */
void kf_eval_degen_end_set (kf_eval_degen_t *d);
/* The reasons, one string each (empty array when none). Caller owns it. */
json_t *kf_eval_degen_json (const kf_eval_degen_t *d);

/* --- Ceilings and the roofline (kf_eval_roofline.c). */
typedef struct {
    double copy_gbs;         /* measured copy bandwidth, read + write */
    double read_gbs;         /* measured cold read of every core at once (0: none) */
    double stream_gbs;       /* measured copy with streaming stores, the faster of one
                                core's and every core's (0: none; kf_plausible.h) */
    double write_gbs;        /* measured streaming write of every core at once, nothing
                                read (0: none; kf_plausible_mix_gbs) */
    double peak_gflops;      /* measured f32 FMA rate of the whole device */
    const char *peak_source; /* how PEAK_GFLOPS was found */
    bool busy;               /* measured while other work ran (kf_plausible.h's
                                KF_PLAUSIBLE_MARGIN_BUSY) */
} kf_eval_ceilings_t;

/* The host's ceilings (threads on every core: memcpy of 64 MiB slices,
 * and an FMA loop of independent vector chains in the widest instruction
 * set the CPU has), measured once per boot (kf_host_figures.h). */
void kf_eval_host_ceilings (kf_eval_ceilings_t *c);

/* The copy ceiling above, measured now: every core copying at once,
 * bytes read and written per second over 1e9; 0 when no thread starts. */
double kf_eval_measure_copy_gbs (void);

/* Adds "bandwidth", "compute", "audit" and "audit_reason" to RESULT:
 * BYTES (inputs read + outputs written), of them READ_BYTES read, FLOPS (0: not declared) per
 * call, the medians CAND_NS and REF_NS (0: no paired reference),
 * BW_APPLIES when the data is too large to stay in cache between calls,
 * SPEEDUP (not judged: beating a slow reference is no sign of anything).
 * An achieved rate above a ceiling by more than KF_PLAUSIBLE_MARGIN
 * (kf_plausible_ceiling, the rule the coordinator decides by) sets audit
 * with the reason, which is appended to RESULT's detail ("...; flagged
 * for audit: REASON"). */
void kf_eval_roofline (json_t *result, double bytes, double read_bytes, double flops,
                       double cand_ns,
                       double ref_ns, const kf_eval_ceilings_t *c, bool bw_applies,
                       double speedup);

/* --- Exported PyTorch data (kf_eval_refdata.c): a reference job's
 * manifest and frame as the reference: per set, where each of the
 * task's inputs and outputs lies in the frame, and the set's numeric
 * scalars. */
typedef struct {
    int n_sets, n_in, n_out, n_scalars;
    size_t *in_off, *out_off;        /* [set * n_in + i], [set * n_out + o] */
    char (*names)[24];               /* scalar names: in<index>, init<index> */
    const char **name_ptrs;
    double *values;                  /* [set * n_scalars + k] */
    double eager_ns, compiled_ns;    /* compiled_ns < 0: none */
} kf_eval_refdata_t;

/* Reads REFDATA (the payload's "reference_data") against TASK's inputs
 * and outputs and a frame of DATA_SIZE bytes: in[] is a set's `input`
 * tensors in index order, then every `param`, then every `buffer`; out[]
 * its `output` tensors. Returns 0, or -1 with WHY (one line) when the
 * manifest and the task disagree or a tensor lies outside the frame. */
int kf_eval_refdata_parse (kf_eval_refdata_t *r, json_t *task, json_t *refdata,
                           size_t data_size, char *why, size_t why_size);
void kf_eval_refdata_free (kf_eval_refdata_t *r);

#endif
