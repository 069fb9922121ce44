/*  kf_backend.h - the one small interface every generator backend sits
 *  behind: OpenAI-compatible chat completions, Anthropic messages, an
 *  external command, and the built-in offline generator, one file each.
 *
 *  A backend makes one attempt per start call and reports it through the
 *  done function, on the loop thread, possibly before start returns. It
 *  classifies the attempt (ok, worth retrying, final) but never retries,
 *  waits or limits itself: retries with backoff, Retry-After, rate limits,
 *  concurrency, extraction of the code and pricing are the gateway's
 *  (kf_gateway.c), the same for every backend.
 */
#ifndef KF_BACKEND_H
#define KF_BACKEND_H

#include "kf_http.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    const char *model;           /* the part after "backend:", e.g. gpt-4.1 */
    const char *system;          /* system message */
    const char *prompt;          /* the user message: the coordinator's prompt */
    const char *language;        /* c | cuda | opencl | sycl */
    double temperature;
    double top_p;
    int max_tokens;
    json_t *payload;             /* the whole job payload (borrowed) */
} kf_gen_request_t;

typedef enum {
    KF_GEN_OK,                   /* a completion came back (maybe truncated) */
    KF_GEN_RETRY,                /* 429, 5xx, timeout, connection error */
    KF_GEN_FAIL                  /* anything else: retrying would not help */
} kf_gen_outcome_t;

typedef struct {
    kf_gen_outcome_t outcome;
    long status;                 /* HTTP status; 0 when none */
    long retry_after_ms;         /* the server's Retry-After; -1 none */
    bool timed_out;
    char *text;                  /* the completion (owned); KF_GEN_OK */
    bool truncated;              /* stopped by max_tokens */
    char *finish_reason;         /* as the vendor says it (owned), or NULL */
    int64_t input_tokens;        /* all input tokens, cached ones included */
    int64_t output_tokens;
    int64_t cached_tokens;       /* input tokens read from the vendor's cache */
    char *error;                 /* why not (owned); may hold what a server
                                    sent back, so the gateway redacts it */
    json_t *result;              /* a finished result object (owned) that
                                    skips extraction: the offline generator */
} kf_gen_reply_t;

/* REPLY is borrowed; the callee takes what it wants by stealing fields
 * (setting them to NULL). */
typedef void (kf_gen_done_fn) (void *arg, kf_gen_reply_t *reply);

typedef struct kf_backend_t kf_backend_t;

struct kf_backend_t {
    const char *name;            /* openai | anthropic | command | offline */
    /* One attempt. Returns 0 when started (DONE will be called exactly
     * once), -1 with *ERR (caller frees) when it could not start. */
    int (*start) (kf_backend_t *self, const kf_gen_request_t *req,
                  kf_gen_done_fn *done, void *arg, char **err);
    /* Optional: loop integration for backends with descriptors of their
     * own (the command backend's completion pipe). */
    int (*prepare) (kf_backend_t *self, zmq_pollitem_t *items, int max);
    void (*dispatch) (kf_backend_t *self, zmq_pollitem_t *items, int n);
    /* Ends work in flight (each done called with an error) and frees. */
    void (*destroy) (kf_backend_t *self);
    /* Whether NAME (the part after "backend:") is served; NULL = any. */
    bool (*knows) (kf_backend_t *self, const char *model);
    void *state;
};

/* What the HTTP backends need: where, who, and the engine they share. */
typedef struct {
    kf_http_t *http;             /* borrowed */
    const char *base_url;        /* including /v1 */
    const char *api_key;         /* borrowed; NULL: no key (local servers) */
    const char *version;         /* anthropic-version */
} kf_http_backend_config_t;

kf_backend_t *kf_backend_openai_new (const kf_http_backend_config_t *config);
kf_backend_t *kf_backend_anthropic_new (const kf_http_backend_config_t *config);

/* Named commands: NAMES[i] runs ARGVS[i] (a command line split on
 * whitespace). Copied. */
typedef struct {
    int n;
    const char *const *names;
    const char *const *command_lines;
    double time_limit_s;
    size_t output_cap;
} kf_command_backend_config_t;

kf_backend_t *kf_backend_command_new (const kf_command_backend_config_t *config);
kf_backend_t *kf_backend_offline_new (void);

/* Fills REPLY (outcome, text or result, error) for REQ, at once. */
typedef void (kf_gen_answer_fn) (const kf_gen_request_t *req, kf_gen_reply_t *reply);

/* A backend NAME with no state of its own that answers before start
 * returns, through ANSWER on the loop thread: the offline generator and
 * the offline meta-prompter (microseconds, memory only). NULL when out
 * of memory. */
kf_backend_t *kf_backend_at_once_new (const char *name, kf_gen_answer_fn *answer);

/* Frees what a reply owns and clears it. */
void kf_gen_reply_clear (kf_gen_reply_t *reply);

#endif
