/*  kf_lease.h - who holds which lease, and with what token.
 *
 *  A JOB carries its lease number (sequential, in the database) and a
 *  lease token: 128 bits from getrandom(2) as 32 hex digits, known only to
 *  the coordinator and the worker the JOB went to. A RESULT counts only
 *  when it comes from the worker (routing id of a worker that said HELLO)
 *  whose lease book holds that job with that lease number and token; the
 *  sequential number alone is guessable. Tokens live in memory only: after
 *  a coordinator restart every lease of the previous incarnation is
 *  requeued anyway.
 *
 *  A worker's credits are what it claims in HELLO; how many jobs it is
 *  given at once is capped by what it has finished (kf_lease_allowance),
 *  so a peer that claims thousands of credits and returns nothing holds a
 *  handful of jobs, not the queue.
 */
#ifndef KF_LEASE_H
#define KF_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KF_LEASE_TOKEN_LEN 32        /* hex digits of 128 bits */
/* Jobs a worker may hold at once before it has finished any. */
#define KF_LEASE_CREDIT_START 8
#define KF_LEASE_KIND_MAX 15

typedef struct kf_lease_book_t kf_lease_book_t;

kf_lease_book_t *kf_lease_book_new (void);
void kf_lease_book_destroy (kf_lease_book_t **self_p);

/* Fills OUT (KF_LEASE_TOKEN_LEN + 1 bytes) with a fresh token. Returns 0,
 * or -1 when the kernel gives no randomness (then no lease is made). */
int kf_lease_token (char *out);

/* Records that the book's worker holds JOB_ID under LEASE with TOKEN
 * (copied) and what its RESULT is to hold, KIND (the job's kind, or
 * "probe"; cut to KF_LEASE_KIND_MAX characters, may be NULL); replaces an
 * older record of the same job. Returns 0 or -1. */
int kf_lease_book_add (kf_lease_book_t *self, int64_t job_id, int64_t lease,
                       const char *token, const char *kind);
/* The KIND recorded with JOB_ID, borrowed; "" when the book holds no such job. */
const char *kf_lease_book_kind (kf_lease_book_t *self, int64_t job_id);
/* Whether the book holds JOB_ID under LEASE with TOKEN (compared in
 * constant time; NULL never matches). */
bool kf_lease_book_holds (kf_lease_book_t *self, int64_t job_id, int64_t lease,
                          const char *token);
/* Whether the book holds JOB_ID at all. */
bool kf_lease_book_has (kf_lease_book_t *self, int64_t job_id);
void kf_lease_book_remove (kf_lease_book_t *self, int64_t job_id);
size_t kf_lease_book_size (kf_lease_book_t *self);
/* Job ids held, in no order: writes up to MAX into IDS, returns the count
 * held (which may be more than MAX). */
size_t kf_lease_book_jobs (kf_lease_book_t *self, int64_t *ids, size_t max);

/* Jobs a worker that claims CLAIMED credits and has finished FINISHED
 * jobs may hold at once. */
int kf_lease_allowance (int claimed, long finished);

/* Self test (the unit test calls it). Returns 0 when it passes. */
int kf_lease_test (bool verbose);

#endif
