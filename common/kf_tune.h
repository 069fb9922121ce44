/*  kf_tune.h - the tuning space a kernel source declares, and the points of
 *  it that get built and timed.
 *
 *  A source declares its parameters on a comment line
 *
 *      kf-tune: BLOCK=64,128,256 VEC=1,2,4
 *
 *  (values are integers or identifiers) and gives each one a default with
 *  an `#ifndef NAME / #define NAME value` guard, so `-DNAME=value` selects
 *  another point. A parameter may be followed by a condition,
 *
 *      kf-tune: PREFETCH=0,1 DIST=8,4,16 when PREFETCH=1
 *
 *  and is then active only while that parameter (itself active) takes one
 *  of the listed values; an inactive parameter is held at its default, so
 *  points differing only there are one point. The space is the set of
 *  distinct points of the value lists' cartesian product.
 *  When it is larger than the cap, the selection is deterministic: the
 *  all-defaults point first, then its one-parameter neighbours, then points
 *  spread over the rest of the space (docs/evaluation.md, "Tuning").
 *  Config 0 is always the all-defaults point: the source as written.
 */
#ifndef KF_TUNE_H
#define KF_TUNE_H

#include <jansson.h>
#include <stddef.h>

#define KF_TUNE_MAX_PARAMS 16
#define KF_TUNE_MAX_VALUES 64
#define KF_TUNE_TOKEN_MAX  64

typedef struct kf_tune_t kf_tune_t;

/* Reads every kf-tune line of SOURCE. Returns NULL when the source declares
 * no usable parameter (no line, or only malformed lines, which are skipped
 * with a log line). Then selects at most MAX_CONFIGS points (at least 1). */
kf_tune_t *kf_tune_new (const char *source, size_t size, int max_configs);

/* Idempotent; nulls the caller's pointer. */
void kf_tune_destroy (kf_tune_t **self_p);

/* Number of parameters. */
int kf_tune_params (const kf_tune_t *self);

/* Number of distinct points in the whole space (saturates at 1e9). */
long kf_tune_space (const kf_tune_t *self);

/* Number of selected points, and how many of the space were left out. */
int kf_tune_configs (const kf_tune_t *self);
long kf_tune_skipped (const kf_tune_t *self);

/* {NAME: value, ...} of selected point I (integers as JSON integers,
 * identifiers as strings). Caller owns it. NULL when I is out of range. */
json_t *kf_tune_config_json (const kf_tune_t *self, int i);

/* "NAME=value NAME2=value" of point I into BUF. Returns BUF. */
char *kf_tune_config_label (const kf_tune_t *self, int i, char *buf, size_t size);

/* "-DNAME=value" of point I's parameter P into BUF (an inactive one at its
 * default). Returns 0, or -1 when I or P is out of range or BUF too small. */
int kf_tune_config_define (const kf_tune_t *self, int i, int p, char *buf, size_t size);

/* The label of a {NAME: value} object as kf_tune_config_json makes, in
 * the object's order, into BUF. Returns BUF. */
char *kf_tune_params_label (json_t *params, char *buf, size_t size);

#endif
