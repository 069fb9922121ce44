/*  kf_msg_eval.h - the evaluate job's result as a typed struct, decoded
 *  once at the edge (STYLE.md, rule 11).
 *
 *  PROTOCOL.md's job-kinds table and docs/evaluation.md ("Result") are the
 *  specification; this decoder follows them field by field. The exec
 *  worker encodes what it sends through kf_eval_result_encode; the
 *  coordinator decodes a RESULT of an evaluate job as it arrives (a
 *  malformed one is refused there, its job requeued) and its modules take
 *  the struct, never the JSON. The JSON itself stays with the struct for
 *  storage: the database keeps every figure as it came.
 */
#ifndef KF_MSG_EVAL_H
#define KF_MSG_EVAL_H

#include "kf_msg_field.h"
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* JSON has no infinity: an error that is not finite travels as
 * KF_EVAL_ERR_INFINITE, and any figure from KF_EVAL_ERR_INFINITE_AT up reads
 * as infinite (jsonb may give it back a rounding away). */
#define KF_EVAL_ERR_INFINITE 1e308
#define KF_EVAL_ERR_INFINITE_AT 1e300

/* A side's timing ("candidate", "reference"); 0 where a figure is absent. */
typedef struct {
    double median_ns, p10_ns, p90_ns;
    int64_t samples, calls_per_sample;
    const char *kind;              /* reference: e.g. "pytorch-eager"; "" */
    double minor_faults_per_call;  /* the candidate's process (host); -1: not said */
} kf_eval_timing_t;

typedef struct {
    json_t *json;                  /* the result as received (a reference) */
    char verdict[16];              /* correct, incorrect, crashed, timeout, load_failed */
    const char *detail;            /* "" when absent; strings borrow from json */
    bool has_speedup;              /* false: null or absent (not correct) */
    double speedup;
    bool has_speedup_compiled;
    double speedup_compiled;
    bool has_candidate, has_reference;
    kf_eval_timing_t candidate, reference;
    bool has_correctness;
    struct {
        int64_t sets, cases, nonfinite_mismatch;
        double match_fraction, max_abs_err, max_rel_err, cosine;
    } correctness;
    bool has_bandwidth;            /* bandwidth {bytes, copy_gbs, roofline_applies} */
    double bytes, copy_gbs;
    bool roofline_applies;
    bool has_compute;              /* compute {flops, peak_gflops}; 0: null */
    double flops, peak_gflops;
    bool audit;                    /* the worker's roofline flag */
    const char *audit_reason;      /* "" when absent */
    double wall_s;                 /* 0 when absent */
    bool has_load;                 /* host_load: the host's load over the timing */
    double load_cpus, load_runnable, load_others_share;   /* runnable others, -1: absent */
    double load_cpus_allowed;      /* CPUs the candidate could run on, 0: absent */
    bool load_undisturbed;         /* its figures are over undisturbed samples only */
    double load_wait_share;        /* the candidate's waits for a CPU over its timed
                                      calls' time (summed over its threads), -1: absent */
    bool has_one_core;             /* one_core: the kernel timed on one CPU too */
    double one_core_ns;            /* its median per call there, 0: none (why_not) */
    double one_core_cpu_per_wall;  /* the full timing's CPU seconds a second of calls */
    char fidelity[8];              /* "screen", "full", or "" (not a sweep's) */
    size_t n_configs;              /* a sweep's table, 0 otherwise */
    json_t *configs;               /* borrowed array, or NULL */
    json_t *best_config;           /* borrowed params object, or NULL */
} kf_eval_result_t;

/* Decodes JSON (borrowed; the struct takes a reference of its own) into
 * *SELF: every field's type and range checked once. Returns 0, or -1 when
 * the result is malformed: WHY (SIZE bytes) says which field and how, and
 * *SELF holds nothing to free. */
int kf_eval_result_decode (json_t *json, kf_eval_result_t *self, char *why, size_t size);

/* The result's JSON as the protocol specifies it: SELF's json (every
 * figure it carries, copied) with the typed fields written from the
 * struct. SELF->json may be NULL (a verdict made by the worker itself).
 * The returned object is the caller's. */
json_t *kf_eval_result_encode (const kf_eval_result_t *self);

/* Drops the struct's reference to its JSON; idempotent. */
void kf_eval_result_free (kf_eval_result_t *self);

/* For kf_msg_t's typed slot: frees SELF, a kf_eval_result_t from malloc,
 * with what it holds. */
void kf_eval_result_release (void *self);

/* The codec's frame (kf_msg_field.h), for tables of typed results. */
extern const kf_field_codec_t kf_eval_result_codec;

#endif
