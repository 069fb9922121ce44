/*  kf_pgarray.h - PostgreSQL text[] values built safely.
 *
 *  Statements take arrays as one text parameter ($2::text[]). The literal
 *  is built here and nowhere else: every element double-quoted, with
 *  backslash and double quote escaped, separators only between elements
 *  written. So no element a peer names (a backend, a worker id) can make
 *  the literal malformed (issue 13: a HELLO whose first backend was
 *  skipped gave "{,host}" and stopped every dispatch).
 */
#ifndef KF_PGARRAY_H
#define KF_PGARRAY_H

#include <stdbool.h>
#include <stddef.h>

typedef struct kf_pgarray_t kf_pgarray_t;

kf_pgarray_t *kf_pgarray_new (void);
void kf_pgarray_destroy (kf_pgarray_t **self_p);

/* Appends ITEM (copied; any bytes but NUL). Returns 0 or -1. */
int kf_pgarray_add (kf_pgarray_t *self, const char *item);
size_t kf_pgarray_size (const kf_pgarray_t *self);
/* The literal, "{}" when empty; borrowed until the next add or destroy. */
const char *kf_pgarray_text (kf_pgarray_t *self);

/* Self test (the unit test calls it). Returns 0 when it passes. */
int kf_pgarray_test (bool verbose);

#endif
