/*  kf_pricing.h - what a completion cost, from a price table file.
 *
 *  One model per line: MODEL INPUT OUTPUT [CACHED], prices in US dollars
 *  per million tokens, MODEL as in a job ("openai:gpt-4.1") or a
 *  backend's wildcard ("command:*"); '#' starts a comment. Cached input
 *  tokens are billed at CACHED (INPUT when absent), the rest of the input
 *  at INPUT. Prices change: the table is the operator's, not ours
 *  (docs/llm-gateway.md, llm-gateway/prices.example).
 */
#ifndef KF_PRICING_H
#define KF_PRICING_H

#include <stdint.h>

typedef struct kf_pricing_t kf_pricing_t;

/* Loads PATH. Returns NULL with *ERR (caller's) naming the file and line. */
kf_pricing_t *kf_pricing_load (const char *path, char **err);
kf_pricing_t *kf_pricing_new (void);
void kf_pricing_destroy (kf_pricing_t **self_p);

/* Adds or replaces MODEL's prices. Returns 0 or -1. */
int kf_pricing_set (kf_pricing_t *self, const char *model, double input, double output,
                    double cached);

/* Cost in USD of one completion; -1 when MODEL has no price. */
double kf_pricing_cost (const kf_pricing_t *self, const char *model, int64_t input_tokens,
                        int64_t output_tokens, int64_t cached_tokens);

#endif
