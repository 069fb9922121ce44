/*  kf_msg_reference.h - the `reference` job's result (a PyTorch problem's
 *  manifest) as a typed struct, decoded once at the edge (STYLE.md, rule
 *  11), as kf_msg_generate.h is for a model's answer.
 *
 *  PROTOCOL.md's job-kinds table (the reference row) and
 *  docs/pytorch-references.md are the specification. The exec worker
 *  writes the result through the encoder and checks it with the decoder
 *  before it leaves (exec-worker/kf_torch_ref.c); the coordinator decodes
 *  a RESULT of a reference job as it arrives (a malformed one is refused
 *  there, its job requeued) and the reference stage (coordinator/
 *  kf_reference.c) takes the struct.
 */
#ifndef KF_MSG_REFERENCE_H
#define KF_MSG_REFERENCE_H

#include "kf_msg_field.h"
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most manifest entries (tensors, and scalars) a result may list:
 * far above any problem (5 sets of a few arguments, a model's hundreds of
 * parameters), well below what would make the coordinator's work long. */
#define KF_REFERENCE_MAX_ENTRIES 65536
/* The most dimensions a tensor of the manifest may have. The kernel
 * contract takes fewer (kf_task_validate says so, with the rank); this
 * bound only keeps the decoder's arrays fixed. */
#define KF_REFERENCE_MAX_RANK 16
/* The most degenerate-output findings, and the most bytes of one. */
#define KF_REFERENCE_MAX_FINDINGS 256
#define KF_REFERENCE_MAX_FINDING 4096

/* One tensor of the manifest. */
typedef struct {
    const char *role;        /* "input", "output", "param" or "buffer" */
    int64_t set;             /* its input set; -1 (null) for a param or buffer */
    int64_t index;           /* its place among the role's (>= 0) */
    const char *name;        /* "" when absent */
    const char *dtype;       /* a kf dtype name: f32, f64, f16, bf16, i32, i64 */
    int dtype_id;            /* kf_dtype_from_name (dtype) */
    int rank;
    int64_t shape[KF_REFERENCE_MAX_RANK];
    int64_t numel;           /* the product of the shape (fits in 62 bits) */
    bool placed;             /* offset and bytes given: exported to the data */
    int64_t offset, bytes;   /* where it lies in the data */
} kf_reference_tensor_t;

/* One scalar (a number or other value that is not a tensor). */
typedef struct {
    const char *role;        /* "init", "input" or "output" */
    int64_t set;             /* -1 (null) for init values */
    int64_t index;
    const char *name;
    json_t *value;           /* borrowed, any JSON (NULL when absent) */
} kf_reference_scalar_t;

/* One of the timings (eager, torch.compile's). */
typedef struct {
    bool present;            /* the object is there */
    bool has_median;
    double median_ns;        /* >= 0 */
    bool failed;             /* it says "error": no time to use */
    bool matches_eager;      /* false only when it says so */
} kf_reference_timing_t;

typedef struct {
    json_t *json;                    /* the result as received (a reference) */
    kf_reference_tensor_t *tensors;  /* n_tensors of them, the manifest's order */
    size_t n_tensors;
    kf_reference_scalar_t *scalars;
    size_t n_scalars;
    json_t *tensor_list, *scalar_list; /* the same as received, borrowed (stored as
                                        * they are: entries keep fields not named) */
    int64_t sets;                    /* input sets drawn (0 when absent) */
    json_t *degenerate;              /* borrowed array of strings, or NULL: none */
    bool has_atol_scaled;
    double atol_scaled;              /* > 0 */
    kf_reference_timing_t eager, compiled;
    bool has_data;                   /* data_key, data_bytes, data_hash,
                                      * inputs_hash and seed all given */
    const char *data_key;            /* 64 hex digits, or "" */
    const char *data_hash, *inputs_hash; /* 32 hex digits (XXH3-128), or "" */
    int64_t data_bytes;              /* every placed tensor lies inside it */
    bool has_seed;
    int64_t seed;
    const char *torch_version, *task_hash, *cache_key; /* "" when absent */
    bool cached;
    bool has_wall;
    double wall_s;
} kf_reference_result_t;

/* Decodes JSON (borrowed; the struct takes a reference of its own) into
 * *SELF, each field's type and range checked once: `tensors` is required,
 * every other field optional. Returns 0, or -1 when the result is
 * malformed: WHY (SIZE bytes) names the field ("result.tensors[3].shape:
 * ...") and says how, and *SELF holds nothing to free. */
int kf_reference_result_decode (json_t *json, kf_reference_result_t *self, char *why,
                                size_t size);

/* The result's JSON: SELF's json (copied; may be NULL) with the fields the
 * worker sets after its run written from the struct (data_key,
 * data_bytes, data_hash, inputs_hash, seed, task_hash, cached,
 * cache_key, wall_s). The caller's. */
json_t *kf_reference_result_encode (const kf_reference_result_t *self);

/* The exec worker's last step on a result it answers with: decodes
 * *RESULT (taken) as the coordinator will, sets what the worker adds
 * after its run (CACHED, CACHE_KEY, WALL_S) and puts the encoder's JSON
 * in *RESULT. Returns 0, or -1 when the result breaks the protocol: WHY
 * (SIZE bytes) says how, and *RESULT is NULL. */
int kf_reference_result_seal (json_t **result, bool cached, const char *cache_key,
                              double wall_s, char *why, size_t size);

/* Frees what SELF holds; idempotent. */
void kf_reference_result_free (kf_reference_result_t *self);
/* Frees what SELF (a kf_reference_result_t on the heap) holds, and SELF. */
void kf_reference_result_release (void *self);

/* The codec's frame (kf_msg_field.h), for tables of typed results. */
extern const kf_field_codec_t kf_reference_result_codec;

#endif
