/*  kf_gateway.c - generate jobs become calls to a backend (kf_gateway.h).
 *
 *  Everything runs on the worker loop's thread. A call is queued when its
 *  job arrives and started by s_pump as soon as its model's rate limit and
 *  its backend's concurrency allow; the pump runs after every poll and
 *  after every change, and the earliest moment a waiting call could go is
 *  the loop's timeout, so no timer object needs freeing. An attempt's
 *  reply comes back through s_on_reply, which either finishes the job or
 *  puts the call back in the queue with a not-before time (backoff or
 *  Retry-After). Backends may reply before their start returns (the
 *  offline one always does), so a call is off the queue before it starts.
 */
#include "kf_gateway.h"
#include "kf_take.h"
#include "kf_gateway_models.h"
#include "kf_backend.h"
#include "kf_extract.h"
#include "kf_gen_offline.h"
#include "kf_log.h"
#include "kf_meta_offline.h"
#include "kf_msg_generate.h"
#include "kf_pricing.h"
#include "kf_ratelimit.h"
#include "kf_str.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The paper's settings (Table 6), used when a payload does not say.
#define KF_GW_TEMPERATURE 0.3
#define KF_GW_TOP_P 1.0
#define KF_GW_MAX_TOKENS 8000

enum { KF_BK_OFFLINE, KF_BK_OPENAI, KF_BK_ANTHROPIC, KF_BK_COMMAND, KF_BK_N };
static const char *const s_backend_names[KF_BK_N] = { "offline", "openai", "anthropic",
                                                      "command" };

typedef struct s_call_t s_call_t;

struct s_call_t {
    kf_gateway_t *gw;
    kf_worker_t *worker;
    int64_t job_id;
    int backend;                 /* KF_BK_* */
    bool meta;                   /* a meta job: the completion is returned
                                    as text, nothing extracted */
    char *model;                 /* "openai:gpt-4.1" as the job gave it */
    const char *model_name;      /* into model, after the colon */
    char *system;
    kf_gen_request_t req;
    json_t *payload;             /* held for the offline backend */
    int attempts;
    int64_t started_ms;
    int64_t not_before_ms;
    int64_t estimate;            /* tokens booked with the rate limiter */
    s_call_t *next;              /* in the queue, or in flight */
    s_call_t *prev;
};

struct kf_gateway_t {
    kf_gateway_config_t cfg;
    kf_http_t *http;
    kf_backend_t *backends[KF_BK_N];
    kf_backend_t *meta_offline;  /* the rule-based meta-prompter */
    int concurrency[KF_BK_N];
    int in_flight[KF_BK_N];
    kf_ratelimit_t *limits;
    kf_pricing_t *prices;
    char *secrets[2];            /* API keys, for redaction */
    s_call_t *queue_head, *queue_tail;
    s_call_t *flying;            /* attempts in flight */
    int n_calls;
    int n_http_items;            /* how prepare split the items */
    int n_cmd_items;
    char **command_names;
    int n_commands;
    bool closing;                /* destroy under way: complete nothing */
};

static const char *s_meta_system =
    "You review the instructions another model follows when it writes kernels, and improve "
    "them from the measured outcomes. Reply with a short diagnosis, then SEARCH/REPLACE edits "
    "in exactly the format the prompt gives.";

static const char *s_default_system =
    "You are an expert performance engineer who writes GPU and CPU kernels. Reply with the "
    "complete source file of one kernel in a single fenced code block tagged with its "
    "language, exporting kf_forward exactly as the kernel contract in the prompt declares it.";

//  ---------------------------------------------------------------------
//  Secrets

char *
kf_gateway_redact (const kf_gateway_t *self, const char *text)
{
    char *out = strdup (text ? text : "");
    for (int k = 0; out && self && k < 2; k++) {
        const char *key = self->secrets[k];
        size_t klen = key ? strlen (key) : 0;
        if (klen < 8)
            continue;
        //  The whole key, and the ends vendors echo when they mask a key
        //  in an error ("sk-proj-****abcd"): its first 12 and last 8.
        char head[13], tail[9];
        snprintf (head, sizeof head, "%s", key);
        snprintf (tail, sizeof tail, "%s", key + klen - 8);
        const char *needles[] = { key, head, tail };
        for (int n = 0; n < 3 && out; n++) {
            size_t nlen = strlen (needles[n]);
            char *hit;
            while (out && (hit = strstr (out, needles[n]))) {
                char *fixed = kf_strdupf ("%.*s[REDACTED]%s", (int) (hit - out), out, hit + nlen);
                free (out);
                out = fixed;
            }
        }
    }
    return out;
}

//  ---------------------------------------------------------------------
//  Set-up

kf_gateway_t *
kf_gateway_new (const kf_gateway_config_t *config, char **err)
{
    kf_gateway_t *self = calloc (1, sizeof *self);
    if (!self) {
        kf_fail (err, "out of memory");
        return NULL;
    }
    self->cfg = *config;
    kf_gateway_config_t *c = &self->cfg;
    c->max_attempts = c->max_attempts > 0 ? c->max_attempts : 5;
    c->backoff_base_ms = c->backoff_base_ms > 0 ? c->backoff_base_ms : 1000;
    c->backoff_max_ms = c->backoff_max_ms > 0 ? c->backoff_max_ms : 60000;
    c->retry_after_max_ms = c->retry_after_max_ms > 0 ? c->retry_after_max_ms : 300000;
    self->concurrency[KF_BK_OFFLINE] = 1 << 30;
    self->concurrency[KF_BK_OPENAI] = c->concurrency_openai > 0 ? c->concurrency_openai : 64;
    self->concurrency[KF_BK_ANTHROPIC] = c->concurrency_anthropic > 0 ? c->concurrency_anthropic
                                                                      : 16;
    self->concurrency[KF_BK_COMMAND] = c->concurrency_command > 0 ? c->concurrency_command : 2;
    kf_gateway_pair_t *commands = NULL;
    int n_commands = 0;
    self->limits = kf_ratelimit_new ();
    if (!self->limits)
        goto fail_oom;
    if (c->models_file && kf_gateway_load_models (self->limits, c->models_file, &commands, &n_commands, err))
        goto fail;
    if (c->prices_file && !(self->prices = kf_pricing_load (c->prices_file, err)))
        goto fail;
    self->secrets[0] = kf_gateway_read_key (c->openai_key_file, "OPENAI_API_KEY", err);
    if (c->openai_key_file && !self->secrets[0])
        goto fail;
    self->secrets[1] = kf_gateway_read_key (c->anthropic_key_file, "ANTHROPIC_API_KEY", err);
    if (c->anthropic_key_file && !self->secrets[1])
        goto fail;
    kf_http_options_t hopt = c->http;
    if (!hopt.max_connections)
        hopt.max_connections = self->concurrency[KF_BK_OPENAI]
                               + self->concurrency[KF_BK_ANTHROPIC] + 8;
    self->http = kf_http_new (&hopt);
    if (!self->http) {
        kf_fail (err, "cannot set up libcurl");
        goto fail;
    }
    const char *obase = c->openai_base_url ? c->openai_base_url : getenv ("OPENAI_BASE_URL");
    const char *abase = c->anthropic_base_url ? c->anthropic_base_url
                                              : getenv ("ANTHROPIC_BASE_URL");
    kf_http_backend_config_t oc = { self->http, obase && *obase ? obase : NULL,
                                    self->secrets[0], NULL };
    kf_http_backend_config_t ac = { self->http, abase && *abase ? abase : NULL,
                                    self->secrets[1], c->anthropic_version };
    const char **names = calloc ((size_t) n_commands + 1, sizeof *names);
    const char **lines = calloc ((size_t) n_commands + 1, sizeof *lines);
    for (int i = 0; names && lines && i < n_commands; i++) {
        names[i] = commands[i].name;
        lines[i] = commands[i].value;
    }
    kf_command_backend_config_t cc = { names && lines ? n_commands : 0, names, lines,
                                       c->command_timeout_s, 0 };
    self->backends[KF_BK_OFFLINE] = kf_backend_offline_new ();
    self->backends[KF_BK_OPENAI] = kf_backend_openai_new (&oc);
    self->backends[KF_BK_ANTHROPIC] = kf_backend_anthropic_new (&ac);
    self->backends[KF_BK_COMMAND] = kf_backend_command_new (&cc);
    self->meta_offline = kf_backend_meta_offline_new ();
    free (names);
    free (lines);
    self->command_names = calloc ((size_t) n_commands + 1, sizeof (char *));
    for (int i = 0; i < n_commands; i++) {
        if (self->command_names)
            self->command_names[self->n_commands++] = commands[i].name;
        else
            free (commands[i].name);
        free (commands[i].value);
    }
    free (commands);
    commands = NULL;
    n_commands = 0;
    for (int b = 0; b < KF_BK_N; b++)
        if (!self->backends[b])
            goto fail_oom;
    if (!self->meta_offline)
        goto fail_oom;
    return self;
fail_oom:
    kf_fail (err, "out of memory");
fail:
    for (int i = 0; i < n_commands; i++) {
        free (commands[i].name);
        free (commands[i].value);
    }
    free (commands);
    kf_gateway_destroy (&self);
    return NULL;
}

static void
s_call_free (s_call_t *call)
{
    if (!call)
        return;
    free (call->model);
    free (call->system);
    json_decref (call->payload);
    free (call);
}

void
kf_gateway_destroy (kf_gateway_t **self_p)
{
    kf_gateway_t *self = KF_TAKE (self_p);
    if (self) {
        //  Replies that arrive while the engines shut down free their calls
        //  without completing them: the loop that would send them is gone.
        self->closing = true;
        kf_http_destroy (&self->http);
        for (int b = 0; b < KF_BK_N; b++)
            if (self->backends[b])
                self->backends[b]->destroy (self->backends[b]);
        if (self->meta_offline)
            self->meta_offline->destroy (self->meta_offline);
        while (self->queue_head) {
            s_call_t *call = self->queue_head;
            self->queue_head = call->next;
            s_call_free (call);
        }
        while (self->flying) {
            s_call_t *call = self->flying;
            self->flying = call->next;
            s_call_free (call);
        }
        kf_ratelimit_destroy (&self->limits);
        kf_pricing_destroy (&self->prices);
        for (int k = 0; k < 2; k++)
            if (self->secrets[k]) {
                memset (self->secrets[k], 0, strlen (self->secrets[k]));
                free (self->secrets[k]);
            }
        for (int i = 0; i < self->n_commands; i++)
            free (self->command_names[i]);
        free (self->command_names);
        free (self);
    }
}

json_t *
kf_gateway_caps (kf_gateway_t *self)
{
    json_t *commands = json_array ();
    for (int i = 0; i < self->n_commands; i++)
        json_array_append_new (commands, json_sprintf ("command:%s", self->command_names[i]));
    /* "ready": what this gateway can serve now, so the coordinator can
     * refuse a run whose model no gateway could answer (a vendor endpoint
     * without its key; a base URL of the operator's may need none). */
    json_t *ready = json_pack ("[s]", "offline");
    if (self->secrets[0] || self->cfg.openai_base_url || getenv ("OPENAI_BASE_URL"))
        json_array_append_new (ready, json_string ("openai"));
    if (self->secrets[1] || self->cfg.anthropic_base_url || getenv ("ANTHROPIC_BASE_URL"))
        json_array_append_new (ready, json_string ("anthropic"));
    if (self->n_commands > 0)
        json_array_append_new (ready, json_string ("command"));
    return json_pack ("{s:[s,s,s,s], s:o, s:[s,s,s], s:o, s:[s,s]}", "generators", "offline",
                      "openai", "anthropic", "command", "ready", ready, "languages", "c",
                      "cuda", "opencl", "commands", commands, "kinds", "generate", "meta");
}

int
kf_gateway_pending (const kf_gateway_t *self)
{
    return self->n_calls;
}

//  ---------------------------------------------------------------------
//  Queue and completion

/* Puts CALL into the list that starts at *HEAD: at its end when it keeps
 * a *TAIL (the queue: first come, first served), else at its front (the
 * calls in flight, whose order does not matter). */
static void
s_link (s_call_t **head, s_call_t **tail, s_call_t *call)
{
    call->prev = tail ? *tail : NULL;
    call->next = tail ? NULL : *head;
    if (call->prev)
        call->prev->next = call;
    else
        *head = call;
    if (call->next)
        call->next->prev = call;
    if (tail)
        *tail = call;
}

/* Takes CALL out of the list that starts at *HEAD: the queue (whose
 * *TAIL follows) or the calls in flight (TAIL NULL: kept without one). */
static void
s_unlink (s_call_t **head, s_call_t **tail, s_call_t *call)
{
    if (call->prev)
        call->prev->next = call->next;
    else
        *head = call->next;
    if (call->next)
        call->next->prev = call->prev;
    else if (tail)
        *tail = call->prev;
    call->next = call->prev = NULL;
}

static int
s_complete (kf_gateway_t *self, s_call_t *call, kf_job_result_t *res)
{
    if (self->cfg.complete)
        return self->cfg.complete (self->cfg.complete_arg, call->worker, call->job_id, res);
    return kf_worker_complete (call->worker, call->job_id, res);
}

//  Ends the call: RESULT is stolen; ERROR (when not NULL) makes it a
//  failed job and is redacted here, the one place every failure passes.
static void
s_finish (kf_gateway_t *self, s_call_t *call, json_t *result, const char *error)
{
    kf_job_result_t res = { .ok = error == NULL, .result = result };
    if (error) {
        res.error = kf_gateway_redact (self, error);
        kf_info ("job %lld (%s): %s", (long long) call->job_id,
                 call->model ? call->model : "no model", res.error);
    }
    if (!self->closing)
        s_complete (self, call, &res);
    else {
        free (res.error);
        json_decref (res.result);
    }
    self->n_calls--;
    s_call_free (call);
}

//  The result, written by the protocol's encoder (proto/kf_msg_generate.c,
//  whose decoder the coordinator reads it with): R's own fields (source,
//  text, error_kind, detail) and what every result carries, success or
//  not, from REPLY (generator, model, usage, cost: null for a model
//  without a price); FIELDS (taken, or NULL) holds those the codec passes
//  untouched (finish_reason, status, an offline answer's params), beside
//  attempts and latency_ms.
static json_t *
s_result (kf_gateway_t *self, s_call_t *call, const kf_gen_reply_t *reply,
          kf_generate_result_t *r, json_t *fields)
{
    int64_t in = reply ? reply->input_tokens : 0, out = reply ? reply->output_tokens : 0,
            cached = reply ? reply->cached_tokens : 0;
    double cost = kf_pricing_cost (self->prices, call->model, in, out, cached);
    json_t *extra = json_pack ("{s:n, s:i, s:I}", "cost_usd", "attempts", call->attempts,
                               "latency_ms", (json_int_t) (zclock_mono () - call->started_ms));
    if (fields)
        json_object_update (extra, fields);
    json_decref (fields);
    r->json = extra;
    r->generator = s_backend_names[call->backend];
    r->model = call->model;
    r->has_usage = true;
    r->input_tokens = in;
    r->output_tokens = out;
    r->cached_tokens = cached;
    r->has_cost = cost >= 0;
    r->cost_usd = cost;
    json_t *result = kf_generate_result_encode (r);
    r->json = NULL;
    json_decref (extra);
    return result;
}

//  REPLY's finish reason as a field for s_result, or NULL.
static json_t *
s_finish_reason (const kf_gen_reply_t *reply)
{
    return reply && reply->finish_reason
               ? json_pack ("{s:s}", "finish_reason", reply->finish_reason) : NULL;
}

//  A reply that came back but holds no kernel: still ok (the job was
//  done), with error_kind and detail and no source, which the coordinator
//  records as a failed candidate rather than retrying the job.
static void
s_finish_no_source (kf_gateway_t *self, s_call_t *call, const kf_gen_reply_t *reply,
                    const char *kind, const char *detail)
{
    char *clean = kf_gateway_redact (self, detail);
    kf_generate_result_t r = { .error_kind = kind, .detail = clean ? clean : kind };
    json_t *result = s_result (self, call, reply, &r, s_finish_reason (reply));
    kf_info ("job %lld (%s): no source: %s: %s", (long long) call->job_id, call->model, kind,
             clean ? clean : "");
    free (clean);
    s_finish (self, call, result, NULL);
}

static void s_pump (kf_gateway_t *self);

static int64_t
s_backoff_ms (kf_gateway_t *self, int attempts, long retry_after_ms)
{
    if (retry_after_ms >= 0) {
        //  The server said when; a little jitter on top keeps a fleet of
        //  gateways from coming back in the same millisecond.
        int64_t ra = retry_after_ms < self->cfg.retry_after_max_ms ? retry_after_ms
                                                                   : self->cfg.retry_after_max_ms;
        return ra + (int64_t) (random () % (ra / 10 + 50));
    }
    //  Capped exponential, with the upper half jittered ("equal jitter"):
    //  never sooner than half the step, never all at once.
    int64_t step = self->cfg.backoff_base_ms;
    for (int i = 1; i < attempts && step < self->cfg.backoff_max_ms; i++)
        step *= 2;
    if (step > self->cfg.backoff_max_ms)
        step = self->cfg.backoff_max_ms;
    return step / 2 + (int64_t) (random () % (step / 2 + 1));
}

static void
s_on_reply (void *arg, kf_gen_reply_t *reply)
{
    s_call_t *call = arg;
    kf_gateway_t *self = call->gw;
    s_unlink (&self->flying, NULL, call);
    self->in_flight[call->backend]--;
    if (call->backend != KF_BK_OFFLINE)
        kf_ratelimit_settle (self->limits, call->model, call->estimate,
                             reply->outcome == KF_GEN_OK
                                 ? reply->input_tokens + reply->output_tokens
                                 : 0);
    if (self->closing) {
        self->n_calls--;
        s_call_free (call);
        return;
    }
    if (reply->outcome == KF_GEN_RETRY && call->attempts < self->cfg.max_attempts) {
        int64_t wait = s_backoff_ms (self, call->attempts, reply->retry_after_ms);
        char *why = kf_gateway_redact (self, reply->error);
        kf_warn ("job %lld (%s): attempt %d: %s; retrying in %lld ms", (long long) call->job_id,
                 call->model, call->attempts, why ? why : "failed", (long long) wait);
        free (why);
        call->not_before_ms = zclock_mono () + wait;
        s_link (&self->queue_head, &self->queue_tail, call);
        return;
    }
    if (reply->outcome != KF_GEN_OK) {
        char *error = kf_strdupf ("%s: %s%s (after %d attempt%s)", call->model,
                                  reply->error ? reply->error : "failed",
                                  reply->outcome == KF_GEN_RETRY ? ", retries exhausted" : "",
                                  call->attempts, call->attempts == 1 ? "" : "s");
        kf_generate_result_t r = { .error_kind = reply->timed_out ? "timeout"
                                                 : reply->status ? "http" : "transport" };
        json_t *result = s_result (self, call, reply, &r,
                                   reply->status ? json_pack ("{s:i}", "status", reply->status)
                                                 : NULL);
        s_finish (self, call, result, error ? error : "failed");
        free (error);
        return;
    }
    if (reply->result) {
        //  A backend that answers with a finished source (offline), read
        //  through the same codec.
        kf_generate_result_t answer;
        char why[300];
        if (kf_generate_result_decode (reply->result, &answer, why, sizeof why)) {
            s_finish (self, call, NULL, why);
            return;
        }
        kf_generate_result_t r = { .source = answer.source, .text = answer.text };
        json_t *result = s_result (self, call, reply, &r, json_incref (reply->result));
        kf_generate_result_free (&answer);
        s_finish (self, call, result, NULL);
        return;
    }
    if (call->meta) {
        //  A meta-prompter's reply is judged by the coordinator, which
        //  knows the sections; only a cut-off or empty one is said here.
        const char *t = reply->text ? reply->text : "";
        if (reply->truncated || !*t) {
            char *detail = reply->truncated
                               ? kf_strdupf ("the reply was cut off at max_tokens (%d)",
                                             call->req.max_tokens)
                               : strdup ("the reply was empty");
            s_finish_no_source (self, call, reply, reply->truncated ? "truncated" : "empty",
                                detail);
            free (detail);
            return;
        }
        json_t *valid = json_string (t);   /* NULL when T is not UTF-8 */
        kf_generate_result_t r = { .text = valid ? t : "(the reply was not UTF-8)" };
        json_decref (valid);
        json_t *result = s_result (self, call, reply, &r, s_finish_reason (reply));
        s_finish (self, call, result, NULL);
        return;
    }
    if (reply->truncated) {
        char *detail = kf_strdupf ("the reply was cut off at max_tokens (%d) (finish reason "
                                   "'%s') after %lld output tokens",
                                   call->req.max_tokens,
                                   reply->finish_reason ? reply->finish_reason : "?",
                                   (long long) reply->output_tokens);
        s_finish_no_source (self, call, reply, "truncated", detail);
        free (detail);
        return;
    }
    char *code = NULL, *detail = NULL;
    kf_extract_rc_t rc = kf_extract_code (reply->text, call->req.language, &code, &detail);
    if (rc != KF_EXTRACT_OK) {
        s_finish_no_source (self, call, reply, kf_extract_rc_name (rc), detail);
        free (detail);
        return;
    }
    kf_generate_result_t r = { .source = code };
    json_t *result = s_result (self, call, reply, &r, s_finish_reason (reply));
    free (code);
    s_finish (self, call, result, NULL);
}

//  Starts every queued call whose time has come, whose backend has room
//  and whose model's rate limit allows it, oldest first. Returns nothing;
//  s_next_due tells the loop when to look again.
static void
s_pump (kf_gateway_t *self)
{
    int64_t now = zclock_mono ();
    s_call_t *call = self->queue_head;
    while (call) {
        s_call_t *next = call->next;
        if (call->not_before_ms > now || self->in_flight[call->backend]
                                             >= self->concurrency[call->backend]) {
            call = next;
            continue;
        }
        if (call->backend != KF_BK_OFFLINE) {
            int64_t wait = kf_ratelimit_acquire (self->limits, call->model, call->estimate, now);
            if (wait > 0) {
                call->not_before_ms = now + wait;
                call = next;
                continue;
            }
        }
        s_unlink (&self->queue_head, &self->queue_tail, call);
        s_link (&self->flying, NULL, call);
        self->in_flight[call->backend]++;
        call->attempts++;
        char *err = NULL;
        kf_backend_t *b = call->meta && call->backend == KF_BK_OFFLINE
                              ? self->meta_offline : self->backends[call->backend];
        if (b->start (b, &call->req, s_on_reply, call, &err)) {
            s_unlink (&self->flying, NULL, call);
            self->in_flight[call->backend]--;
            kf_generate_result_t none = { 0 };
            s_finish (self, call, s_result (self, call, NULL, &none, NULL),
                      err ? err : "cannot start");
            free (err);
        }
        //  NEXT may have been finished by a reply inside start only if it
        //  were this call; other calls are untouched, so NEXT is valid.
        call = next;
    }
}

static int64_t
s_next_due (kf_gateway_t *self)
{
    int64_t due = -1;
    for (s_call_t *c = self->queue_head; c; c = c->next)
        if (self->in_flight[c->backend] < self->concurrency[c->backend]
            && (due < 0 || c->not_before_ms < due))
            due = c->not_before_ms;
    return due;
}

//  ---------------------------------------------------------------------
//  The job

static int
s_parse_model (kf_gateway_t *self, s_call_t *call, const char *model, char **err)
{
    const char *colon = strchr (model, ':');
    size_t blen = colon ? (size_t) (colon - model) : strlen (model);
    call->backend = -1;
    for (int b = 0; b < KF_BK_N; b++)
        if (strlen (s_backend_names[b]) == blen && !strncmp (model, s_backend_names[b], blen))
            call->backend = b;
    if (call->backend < 0)
        return kf_fail (err, "unknown model '%s': expected openai:MODEL, anthropic:MODEL, "
                             "command:NAME or offline", model);
    call->model = strdup (model);
    if (!call->model)
        return kf_fail (err, "out of memory");
    call->model_name = colon ? call->model + blen + 1 : "";
    if (call->backend != KF_BK_OFFLINE && !*call->model_name)
        return kf_fail (err, "model '%s' names no model after the colon", model);
    kf_backend_t *b = self->backends[call->backend];
    if (b->knows && !b->knows (b, call->model_name))
        return kf_fail (err, "model '%s': this gateway has no command_%s in its models file",
                        model, call->model_name);
    bool default_base = call->backend == KF_BK_OPENAI
                            ? !(self->cfg.openai_base_url || getenv ("OPENAI_BASE_URL"))
                            : !(self->cfg.anthropic_base_url || getenv ("ANTHROPIC_BASE_URL"));
    //  A local server (a base URL of the operator's) may need no key; the
    //  vendors' own endpoints always do, so say it now, not after a 401.
    if (call->backend == KF_BK_OPENAI && !self->secrets[0] && default_base)
        return kf_fail (err, "model '%s': no OpenAI key (OPENAI_API_KEY or openai_key_file)",
                        model);
    if (call->backend == KF_BK_ANTHROPIC && !self->secrets[1] && default_base)
        return kf_fail (err, "model '%s': no Anthropic key (ANTHROPIC_API_KEY or "
                             "anthropic_key_file)", model);
    return 0;
}

static int
s_number (json_t *payload, const char *key, double dflt, double min, double max, double *out,
          char **err)
{
    json_t *v = json_object_get (payload, key);
    if (!v || json_is_null (v)) {
        *out = dflt;
        return 0;
    }
    if (!json_is_number (v) || json_number_value (v) < min || json_number_value (v) > max)
        return kf_fail (err, "%s must be a number in [%g, %g]", key, min, max);
    *out = json_number_value (v);
    return 0;
}

static int
s_setup_call (kf_gateway_t *self, s_call_t *call, json_t *payload, char **err)
{
    if (!json_is_object (payload))
        return kf_fail (err, "the payload is not an object");
    json_t *model = json_object_get (payload, "model");
    if (model && !json_is_null (model) && !json_is_string (model))
        return kf_fail (err, "model must be a string");
    if (s_parse_model (self, call, json_is_string (model) ? json_string_value (model) : "offline",
                       err))
        return -1;
    double max_tokens;
    if (s_number (payload, "temperature", KF_GW_TEMPERATURE, 0, 2, &call->req.temperature, err)
        || s_number (payload, "top_p", KF_GW_TOP_P, 0, 1, &call->req.top_p, err)
        || s_number (payload, "max_tokens", KF_GW_MAX_TOKENS, 1, 1000000, &max_tokens, err))
        return -1;
    call->req.max_tokens = (int) max_tokens;
    const char *language = json_string_value (json_object_get (payload, "language"));
    call->req.language = language ? language : "c";
    call->req.prompt = json_string_value (json_object_get (payload, "prompt"));
    if (call->backend != KF_BK_OFFLINE && !call->req.prompt)
        return kf_fail (err, "the payload has no prompt");
    const char *system = json_string_value (json_object_get (payload, "system"));
    call->system = system ? strdup (system)
                   : call->meta ? strdup (s_meta_system)
                                : kf_strdupf ("%s The language is %s.", s_default_system,
                                              call->req.language);
    call->req.system = call->system;
    call->req.model = call->model_name;
    call->req.payload = call->payload;
    call->estimate = (int64_t) (strlen (call->req.prompt ? call->req.prompt : "")
                                + strlen (call->system ? call->system : "")) / 4
                     + call->req.max_tokens;
    return 0;
}

void
kf_gateway_start (void *arg, kf_worker_t *worker, const kf_job_t *job)
{
    kf_gateway_t *self = arg;
    s_call_t *call = calloc (1, sizeof *call);
    if (!call) {
        kf_job_result_t res = { .ok = false, .error = strdup ("gateway out of memory") };
        kf_worker_complete (worker, job->job_id, &res);
        return;
    }
    call->gw = self;
    call->worker = worker;
    call->job_id = job->job_id;
    call->started_ms = zclock_mono ();
    call->payload = json_incref (job->payload);
    self->n_calls++;
    char *err = NULL;
    call->meta = job->kind && !strcmp (job->kind, "meta");
    if (!job->kind || (strcmp (job->kind, "generate") != 0 && !call->meta))
        kf_fail (&err, "the gateway only takes generate and meta jobs");
    else
        s_setup_call (self, call, call->payload, &err);
    if (err) {
        kf_generate_result_t none = { 0 };
        json_t *result = call->model ? s_result (self, call, NULL, &none, NULL) : json_object ();
        s_finish (self, call, result, err);
        free (err);
        return;
    }
    s_link (&self->queue_head, &self->queue_tail, call);
    s_pump (self);
}

//  ---------------------------------------------------------------------
//  Loop hooks

static int
s_prepare (void *arg, zmq_pollitem_t *items, int max, long *timeout_ms)
{
    kf_gateway_t *self = arg;
    int n_http = kf_http_prepare (self->http, items, max, timeout_ms);
    kf_backend_t *cmd = self->backends[KF_BK_COMMAND];
    int room = max - n_http;
    int n_cmd = cmd->prepare (cmd, room > 0 ? items + n_http : NULL, room > 0 ? room : 0);
    self->n_http_items = n_http;
    self->n_cmd_items = n_cmd;
    int64_t due = s_next_due (self);
    if (due >= 0) {
        int64_t wait = due - zclock_mono ();
        wait = wait < 0 ? 0 : wait;
        if (wait < *timeout_ms)
            *timeout_ms = (long) wait;
    }
    return n_http + n_cmd;
}

static void
s_dispatch (void *arg, kf_worker_t *worker, zmq_pollitem_t *items, int n)
{
    (void) worker;
    kf_gateway_t *self = arg;
    int n_http = self->n_http_items < n ? self->n_http_items : n;
    kf_http_dispatch (self->http, items, n_http);
    kf_backend_t *cmd = self->backends[KF_BK_COMMAND];
    if (n - n_http > 0)
        cmd->dispatch (cmd, items + n_http, n - n_http);
    s_pump (self);
}

const kf_worker_hooks_t kf_gateway_hooks = { s_prepare, s_dispatch };

