/*  kf_msg_generate.h - the generate job's result as a typed struct,
 *  decoded once at the edge (STYLE.md, rule 11), as kf_msg_eval.h and
 *  kf_msg_compile.h are for the evaluate and compile results.
 *
 *  PROTOCOL.md's job-kinds table (the generate and meta rows: a model's
 *  answer, with its code as `source` or its edits as `text`) is the
 *  specification. The gateway sends it; the coordinator decodes a RESULT
 *  of a generate job as it arrives (a malformed one is refused there, its
 *  job requeued) and the search takes the struct.
 */
#ifndef KF_MSG_GENERATE_H
#define KF_MSG_GENERATE_H

#include "kf_msg_field.h"
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    json_t *json;                  /* the result as received (a reference) */
    const char *source;            /* a generate job's: "" when the model gave none */
    const char *text;              /* a meta job's completion: "" when none */
    const char *generator, *model; /* "" when absent */
    bool has_usage;                /* usage: the three counts below */
    int64_t input_tokens, output_tokens, cached_tokens;
    json_t *usage;                 /* borrowed object, or NULL */
    bool has_cost;
    double cost_usd;               /* >= 0 */
    const char *error_kind;        /* why there is no source (truncated, ...), else "" */
    const char *detail;            /* "" */
} kf_generate_result_t;

/* Decodes JSON (borrowed; the struct takes a reference of its own) into
 * *SELF, each field's type and range checked once. Returns 0, or -1
 * when the result is malformed: WHY (SIZE bytes) names the field and
 * says how, and *SELF holds nothing to free. */
int kf_generate_result_decode (json_t *json, kf_generate_result_t *self, char *why,
                               size_t size);

/* The result's JSON: SELF's json (copied; may be NULL) with the typed
 * fields written from the struct. The caller's. */
json_t *kf_generate_result_encode (const kf_generate_result_t *self);

/* Frees what SELF holds; idempotent. */
void kf_generate_result_free (kf_generate_result_t *self);
/* Frees what SELF (a kf_generate_result_t on the heap) holds, and SELF. */
void kf_generate_result_release (void *self);

/* The codec's frame (kf_msg_field.h), for tables of typed results. */
extern const kf_field_codec_t kf_generate_result_codec;

#endif
