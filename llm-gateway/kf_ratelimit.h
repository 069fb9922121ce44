/*  kf_ratelimit.h - requests per minute and tokens per minute, per model,
 *  enforced before a request is sent.
 *
 *  Each limit is a virtual schedule (GCRA): a request may go when the
 *  model's schedule has reached now; sending it moves the schedule on by
 *  60000/rpm ms, and by tokens x 60000/tpm ms. So requests are spaced
 *  evenly instead of bursting at the top of each minute and being
 *  refused by the vendor. Tokens are not known before the reply: a request
 *  books an estimate (prompt bytes / 4 + max_tokens, what vendors also
 *  count against the limit) and settles the difference with the real
 *  usage when it ends.
 */
#ifndef KF_RATELIMIT_H
#define KF_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct kf_ratelimit_t kf_ratelimit_t;

kf_ratelimit_t *kf_ratelimit_new (void);
void kf_ratelimit_destroy (kf_ratelimit_t **self_p);

/* Sets MODEL's limits ("openai:gpt-4.1", or "*" for every model without
 * its own); 0 means no limit. Returns 0 or -1. */
int kf_ratelimit_set (kf_ratelimit_t *self, const char *model, double rpm, double tpm);

/* Asks to send a request of about TOKENS for MODEL at NOW_MS. Returns 0
 * and books it when it may go; otherwise the ms to wait (> 0), booking
 * nothing. */
int64_t kf_ratelimit_acquire (kf_ratelimit_t *self, const char *model, int64_t tokens,
                              int64_t now_ms);

/* Corrects MODEL's token booking by ACTUAL - ESTIMATE after a reply. */
void kf_ratelimit_settle (kf_ratelimit_t *self, const char *model, int64_t estimate,
                          int64_t actual);

#endif
