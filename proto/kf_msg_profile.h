/*  kf_msg_profile.h - the `profile` job's result as a typed struct,
 *  decoded once at the edge (STYLE.md, rule 11), as kf_msg_generate.h is
 *  for a model's answer.
 *
 *  PROTOCOL.md's job-kinds table (the profile row) and docs/evaluation.md
 *  ("Profiling") are the specification. The exec worker writes the
 *  result through the encoder and checks it with the decoder before it
 *  leaves (exec-worker/kf_profile.c, kf_profile_perf.c); the coordinator
 *  decodes a RESULT of a profile job as it arrives (a malformed one is
 *  refused there, its job requeued), so what the prompts later read of it
 *  (its summary, its profiler) is known good.
 */
#ifndef KF_MSG_PROFILE_H
#define KF_MSG_PROFILE_H

#include "kf_msg_field.h"
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most summary a profile may carry: a few lines for a prompt. */
#define KF_PROFILE_MAX_SUMMARY (64u << 10)

typedef struct {
    json_t *json;              /* the result as received (a reference) */
    const char *summary;       /* required: the lines a prompt shows */
    const char *profiler;      /* "ncu" or "perf" ("ncu" when absent: results
                                * from before the field were Nsight's) */
    json_t *metrics;           /* required object, borrowed: the condensed figures */
    bool has_launches;
    int64_t launches;          /* ncu: kernel launches profiled */
    const char *ncu, *perf;    /* the profiler's version line, or "" */
    const char *events;        /* perf: the events counted, or "" */
    bool has_calls;
    int64_t calls;             /* perf: calls counted, >= 0 */
    bool has_wall;
    double wall_s;             /* >= 0 */
} kf_profile_result_t;

/* Decodes JSON (borrowed; the struct takes a reference of its own) into
 * *SELF, each field's type and range checked once. Returns 0, or -1 when
 * the result is malformed: WHY (SIZE bytes) names the field and says how,
 * and *SELF holds nothing to free. */
int kf_profile_result_decode (json_t *json, kf_profile_result_t *self, char *why, size_t size);

/* The result's JSON: SELF's json (copied; may be NULL) with the typed
 * fields written from the struct. The caller's. */
json_t *kf_profile_result_encode (const kf_profile_result_t *self);

/* Frees what SELF holds; idempotent. */
void kf_profile_result_free (kf_profile_result_t *self);
/* Frees what SELF (a kf_profile_result_t on the heap) holds, and SELF. */
void kf_profile_result_release (void *self);

/* The codec's frame (kf_msg_field.h), for tables of typed results. */
extern const kf_field_codec_t kf_profile_result_codec;

#endif
