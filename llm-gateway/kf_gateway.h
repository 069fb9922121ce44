/*  kf_gateway.h - the gateway: generate jobs in, candidate sources out.
 *
 *  A job's payload names a model ("openai:gpt-4.1", "anthropic:claude-
 *  sonnet-4-5", "command:NAME", "offline"; absent means offline) and its
 *  sampling settings. The gateway runs in the worker loop's asynchronous
 *  mode: each job becomes a call that waits for its model's rate limit and
 *  its backend's concurrency, makes attempts through the backend (one
 *  file each, kf_backend.h), retries what is worth retrying with capped,
 *  jittered exponential backoff or the server's Retry-After, extracts the
 *  code in the requested language, prices the usage, and completes the
 *  job. API keys come from the environment or a key file and are redacted
 *  from everything the gateway says. See docs/llm-gateway.md.
 */
#ifndef KF_GATEWAY_H
#define KF_GATEWAY_H

#include "kf_http.h"
#include "kf_worker.h"

typedef struct kf_gateway_t kf_gateway_t;

typedef struct {
    const char *openai_base_url;     /* NULL: $OPENAI_BASE_URL, then OpenAI's */
    const char *openai_key_file;     /* NULL: $OPENAI_API_KEY */
    const char *anthropic_base_url;  /* NULL: $ANTHROPIC_BASE_URL, then Anthropic's */
    const char *anthropic_key_file;  /* NULL: $ANTHROPIC_API_KEY */
    const char *anthropic_version;   /* NULL: 2023-06-01 */
    const char *models_file;         /* command_NAME = ..., limits_MODEL = rpm=N tpm=N */
    const char *prices_file;         /* kf_pricing.h; NULL: no prices */
    int concurrency_openai;          /* 0: 64 */
    int concurrency_anthropic;       /* 0: 16 */
    int concurrency_command;         /* 0: 2 */
    int max_attempts;                /* 0: 5 */
    int backoff_base_ms;             /* 0: 1000 */
    int backoff_max_ms;              /* 0: 60000 */
    int retry_after_max_ms;          /* 0: 300000 */
    double command_timeout_s;        /* 0: 300 */
    kf_http_options_t http;
    /* Completes a job; NULL: kf_worker_complete. Tests set their own. */
    int (*complete) (void *arg, kf_worker_t *worker, int64_t job_id, kf_job_result_t *res);
    void *complete_arg;
} kf_gateway_config_t;

/* Returns NULL with *ERR (caller's) on a bad models or price file. */
kf_gateway_t *kf_gateway_new (const kf_gateway_config_t *config, char **err);

/* Frees the gateway; calls in flight end without completing (their
 * leases lapse). */
void kf_gateway_destroy (kf_gateway_t **self_p);

/* The capabilities to advertise in HELLO (caller's). */
json_t *kf_gateway_caps (kf_gateway_t *self);

/* kf_job_start_fn: ARG is the gateway. */
void kf_gateway_start (void *arg, kf_worker_t *worker, const kf_job_t *job);

/* The hooks that put the gateway's sockets and timers into the loop. */
extern const kf_worker_hooks_t kf_gateway_hooks;

/* Calls not finished yet (queued, waiting or in flight). */
int kf_gateway_pending (const kf_gateway_t *self);

/* TEXT with every configured API key (and fragments of one) replaced by
 * "[REDACTED]" (caller's). */
char *kf_gateway_redact (const kf_gateway_t *self, const char *text);

/* The offline generator as a blocking kf_job_fn (kept for tools and
 * tests that run it without the loop). ARG is unused. Thread-safe. */
json_t *kf_gateway_capabilities (void);
void kf_gateway_handle (void *arg, const kf_job_t *job, kf_job_result_t *res);

#endif
