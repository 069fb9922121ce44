/*  kf_inbox.h - RESULT messages waiting to be recorded, bounded by bytes.
 *
 *  While the database is away the coordinator holds the RESULTs that come
 *  in, to record them when it is back instead of letting their leases
 *  lapse. A count of messages is no bound (each may be max_message bytes,
 *  64 MiB by default), so the inbox counts bytes: past its cap the oldest
 *  are dropped (their leases are the backstop) and counted.
 */
#ifndef KF_INBOX_H
#define KF_INBOX_H

#include "kf_proto.h"
#include <stdbool.h>
#include <stddef.h>

typedef struct kf_inbox_t kf_inbox_t;

/* MAX_BYTES: what kf_inbox_trim keeps at most. */
kf_inbox_t *kf_inbox_new (size_t max_bytes);
void kf_inbox_destroy (kf_inbox_t **self_p);

/* The bytes a message stands for: its body as sent plus its frames. */
size_t kf_inbox_msg_bytes (const kf_msg_t *msg);

/* Takes *MSG_P at the end. */
void kf_inbox_add (kf_inbox_t *self, kf_msg_t **msg_p);
/* Moves every message of FROM in front of SELF's, in FROM's order. */
void kf_inbox_prepend (kf_inbox_t *self, kf_inbox_t *from);
/* Moves every message of FROM behind SELF's. */
void kf_inbox_append (kf_inbox_t *self, kf_inbox_t *from);
/* Borrowed iteration in order; NULL at the end. */
kf_msg_t *kf_inbox_first (kf_inbox_t *self);
kf_msg_t *kf_inbox_next (kf_inbox_t *self);
size_t kf_inbox_size (const kf_inbox_t *self);
size_t kf_inbox_bytes (const kf_inbox_t *self);
/* Drops the oldest until at most the cap is held; returns how many. */
size_t kf_inbox_trim (kf_inbox_t *self);
void kf_inbox_clear (kf_inbox_t *self);

int kf_inbox_test (bool verbose);

#endif
