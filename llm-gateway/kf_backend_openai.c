/*  kf_backend_openai.c - OpenAI-compatible chat completions.
 *
 *  POST {base}/chat/completions, base as the vendors' SDKs take it (with
 *  /v1), so the same code serves OpenAI, vLLM, llama.cpp's server, Ollama
 *  and most routers. One system and one user message; temperature, top_p
 *  and max_tokens; the completion, why it stopped and the usage (cached
 *  prompt tokens included) read back.
 */
#include "kf_backend.h"
#include "kf_str.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    kf_http_t *http;             /* shared with the other HTTP backends */
    char *url;
    char *auth;                  /* "Authorization: Bearer ..." or NULL */
} s_openai_t;

typedef struct {
    kf_gen_done_fn *done;
    void *arg;
} s_attempt_t;

//  OpenAI's reasoning models refuse max_tokens and sampling settings;
//  everything else (and every compatible server) takes them.
static bool
s_reasoning_model (const char *model)
{
    return !strncmp (model, "o1", 2) || !strncmp (model, "o3", 2) || !strncmp (model, "o4", 2)
           || !strncmp (model, "gpt-5", 5);
}

static void
s_on_response (void *arg, const kf_http_response_t *resp)
{
    s_attempt_t *at = arg;
    kf_gen_reply_t reply = { .retry_after_ms = -1 };
    if (!kf_gen_reply_http_failure (resp, &reply)) {
        reply.status = resp->status;
        json_error_t jerr;
        json_t *root = resp->body ? json_loadb (resp->body, resp->body_len, 0, &jerr) : NULL;
        json_t *choice = json_array_get (json_object_get (root, "choices"), 0);
        json_t *content = json_object_get (json_object_get (choice, "message"), "content");
        if (!json_is_object (root) || !choice) {
            //  A 200 that is not a completion comes from a proxy cut
            //  short or confused; another attempt usually gets through.
            reply.outcome = KF_GEN_RETRY;
            reply.error = strdup ("malformed response: not a chat completion");
        }
        else {
            reply.outcome = KF_GEN_OK;
            reply.text = strdup (json_is_string (content) ? json_string_value (content) : "");
            const char *finish = json_string_value (json_object_get (choice, "finish_reason"));
            if (finish) {
                reply.finish_reason = strdup (finish);
                reply.truncated = strcmp (finish, "length") == 0;
            }
            json_t *usage = json_object_get (root, "usage");
            reply.input_tokens = json_integer_value (json_object_get (usage, "prompt_tokens"));
            reply.output_tokens = json_integer_value (json_object_get (usage, "completion_tokens"));
            reply.cached_tokens = json_integer_value (json_object_get (
                json_object_get (usage, "prompt_tokens_details"), "cached_tokens"));
        }
        json_decref (root);
    }
    at->done (at->arg, &reply);
    kf_gen_reply_clear (&reply);
    free (at);
}

static int
s_start (kf_backend_t *self, const kf_gen_request_t *req, kf_gen_done_fn *done, void *arg,
         char **err)
{
    s_openai_t *st = self->state;
    json_t *body = json_pack ("{s:s, s:[{s:s, s:s}, {s:s, s:s}]}", "model", req->model,
                              "messages", "role", "system", "content", req->system ? req->system : "",
                              "role", "user", "content", req->prompt ? req->prompt : "");
    if (!body)
        return kf_fail (err, "openai: cannot build the request (is the prompt valid UTF-8?)");
    if (s_reasoning_model (req->model))
        json_object_set_new (body, "max_completion_tokens", json_integer (req->max_tokens));
    else {
        json_object_set_new (body, "max_tokens", json_integer (req->max_tokens));
        json_object_set_new (body, "temperature", json_real (req->temperature));
        json_object_set_new (body, "top_p", json_real (req->top_p));
    }
    char *text = json_dumps (body, JSON_COMPACT);
    json_decref (body);
    s_attempt_t *at = calloc (1, sizeof *at);
    if (!text || !at) {
        free (text);
        free (at);
        return kf_fail (err, "openai: out of memory");
    }
    at->done = done;
    at->arg = arg;
    const char *headers[] = { st->auth, NULL };
    int rc = kf_http_post (st->http, st->url, st->auth ? headers : NULL, text, strlen (text),
                           s_on_response, at);
    free (text);
    if (rc) {
        free (at);
        return kf_fail (err, "openai: cannot queue the request");
    }
    return 0;
}

static void
s_destroy (kf_backend_t *self)
{
    s_openai_t *st = self->state;
    free (st->url);
    kf_http_secret_free (st->auth);
    free (st);
    free (self);
}

kf_backend_t *
kf_backend_openai_new (const kf_http_backend_config_t *config)
{
    kf_backend_t *self = calloc (1, sizeof *self);
    s_openai_t *st = calloc (1, sizeof *st);
    if (!self || !st) {
        free (self);
        free (st);
        return NULL;
    }
    st->http = config->http;
    st->url = kf_http_url (config->base_url, "https://api.openai.com/v1", "/chat/completions");
    st->auth = config->api_key && *config->api_key
                   ? kf_strdupf ("Authorization: Bearer %s", config->api_key)
                   : NULL;
    self->name = "openai";
    self->start = s_start;
    self->destroy = s_destroy;
    self->state = st;
    return self;
}
