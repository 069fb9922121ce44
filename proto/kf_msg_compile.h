/*  kf_msg_compile.h - the compile job's result as a typed struct, decoded
 *  once at the edge (STYLE.md, rule 11), as kf_msg_eval.h is for the
 *  evaluate result.
 *
 *  PROTOCOL.md's job-kinds table (the compile row) is the specification;
 *  this decoder follows it field by field. The compile worker encodes what
 *  it sends through kf_compile_result_encode; the coordinator decodes a
 *  RESULT of a compile job as it arrives (a malformed one is refused there,
 *  its job requeued) and the search takes the struct. The JSON stays with
 *  the struct for storage.
 */
#ifndef KF_MSG_COMPILE_H
#define KF_MSG_COMPILE_H

#include "kf_msg_field.h"
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Most rows of a sweep's table the decoder takes (kf-tune points are
 * capped well below this by tune_max_configs). */
#define KF_COMPILE_MAX_CONFIGS 256

/* One row of a kf-tune sweep's table. Strings borrow from the JSON. */
typedef struct {
    json_t *params;                /* borrowed object: NAME -> value */
    bool compiled;
    int64_t frame;                 /* index of its artifact frame; -1: none */
    const char *artifact_hash;     /* "" when absent or null */
    const char *log;               /* failures only; "" */
} kf_compile_point_t;

typedef struct {
    json_t *json;                  /* the result as received (a reference) */
    bool compiled;
    const char *artifact_hash, *toolchain, *log;   /* "" when absent or null */
    double wall_s;                 /* 0 when absent */
    bool cached;
    bool has_coords;               /* coords [mem, algo, sync], each 0..3 */
    int coords[3];
    const char *coords_why, *coords_error;
    size_t n_configs;              /* a sweep's table, 0 otherwise */
    kf_compile_point_t *configs;  /* owned array of n_configs */
    json_t *tune;                  /* borrowed object, or NULL */
} kf_compile_result_t;

/* Decodes JSON (borrowed; the struct takes a reference of its own) into
 * *SELF, every field's type and range checked once. Returns 0, or -1 when
 * the result is malformed: WHY (SIZE bytes) says which field and how, and
 * *SELF holds nothing to free. */
int kf_compile_result_decode (json_t *json, kf_compile_result_t *self, char *why,
                              size_t size);

/* The result's JSON: SELF's json (copied; may be NULL) with the typed
 * top-level fields written from the struct. The caller's. */
json_t *kf_compile_result_encode (const kf_compile_result_t *self);

/* Frees what SELF holds; idempotent. */
void kf_compile_result_free (kf_compile_result_t *self);

/* For kf_msg_t's typed slot: frees SELF, a kf_compile_result_t from
 * malloc, with what it holds. */
void kf_compile_result_release (void *self);

/* The codec's frame (kf_msg_field.h), for tables of typed results. */
extern const kf_field_codec_t kf_compile_result_codec;

#endif
