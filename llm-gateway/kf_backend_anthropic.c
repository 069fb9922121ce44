/*  kf_backend_anthropic.c - Anthropic's messages API.
 *
 *  POST {base}/messages with x-api-key and anthropic-version; the system
 *  text is a top-level field, not a message. The completion is the text
 *  blocks of the content joined; stop_reason "max_tokens" means it was cut
 *  off. Anthropic counts cache reads and writes apart from input_tokens;
 *  we report all three as input, the reads as cached, like OpenAI does.
 */
#include "kf_backend.h"
#include "kf_str.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    kf_http_t *http;
    char *url;
    char *key_header;            /* "x-api-key: ..." or NULL */
    char *version_header;
} s_anthropic_t;

typedef struct {
    kf_gen_done_fn *done;
    void *arg;
} s_attempt_t;

static char *
s_join_text (json_t *content)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&buf, &size);
    if (!f)
        return NULL;
    size_t i;
    json_t *block;
    json_array_foreach (content, i, block) {
        const char *type = json_string_value (json_object_get (block, "type"));
        const char *text = json_string_value (json_object_get (block, "text"));
        if (type && !strcmp (type, "text") && text)
            fputs (text, f);
    }
    if (fclose (f)) {
        free (buf);
        return NULL;
    }
    return buf;
}

static void
s_on_response (void *arg, const kf_http_response_t *resp)
{
    s_attempt_t *at = arg;
    kf_gen_reply_t reply = { .retry_after_ms = -1 };
    //  Anthropic's own "overloaded" is a 529: a 5xx, retried like the rest.
    if (!kf_gen_reply_http_failure (resp, &reply)) {
        reply.status = resp->status;
        json_error_t jerr;
        json_t *root = resp->body ? json_loadb (resp->body, resp->body_len, 0, &jerr) : NULL;
        json_t *content = json_object_get (root, "content");
        if (!json_is_object (root) || !json_is_array (content)) {
            reply.outcome = KF_GEN_RETRY;
            reply.error = strdup ("malformed response: not a message");
        }
        else {
            reply.outcome = KF_GEN_OK;
            reply.text = s_join_text (content);
            const char *stop = json_string_value (json_object_get (root, "stop_reason"));
            if (stop) {
                reply.finish_reason = strdup (stop);
                reply.truncated = strcmp (stop, "max_tokens") == 0;
            }
            json_t *usage = json_object_get (root, "usage");
            int64_t in = json_integer_value (json_object_get (usage, "input_tokens"));
            int64_t read = json_integer_value (json_object_get (usage, "cache_read_input_tokens"));
            int64_t write = json_integer_value (
                json_object_get (usage, "cache_creation_input_tokens"));
            reply.input_tokens = in + read + write;
            reply.cached_tokens = read;
            reply.output_tokens = json_integer_value (json_object_get (usage, "output_tokens"));
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
    s_anthropic_t *st = self->state;
    json_t *body = json_pack ("{s:s, s:i, s:s, s:[{s:s, s:s}], s:f}", "model",
                              req->model, "max_tokens", req->max_tokens, "system",
                              req->system ? req->system : "", "messages", "role", "user",
                              "content", req->prompt ? req->prompt : "", "temperature",
                              req->temperature);
    if (!body)
        return kf_fail (err, "anthropic: cannot build the request (is the prompt valid UTF-8?)");
    //  Recent Claude models refuse temperature and top_p together; top_p
    //  1 is the default anyway, so it is sent only when it says something.
    if (req->top_p < 1.0)
        json_object_set_new (body, "top_p", json_real (req->top_p));
    char *text = json_dumps (body, JSON_COMPACT);
    json_decref (body);
    s_attempt_t *at = calloc (1, sizeof *at);
    if (!text || !at) {
        free (text);
        free (at);
        return kf_fail (err, "anthropic: out of memory");
    }
    at->done = done;
    at->arg = arg;
    const char *headers[] = { st->version_header, st->key_header, NULL };
    int rc = kf_http_post (st->http, st->url, headers, text, strlen (text), s_on_response, at);
    free (text);
    if (rc) {
        free (at);
        return kf_fail (err, "anthropic: cannot queue the request");
    }
    return 0;
}

static void
s_destroy (kf_backend_t *self)
{
    s_anthropic_t *st = self->state;
    free (st->url);
    kf_http_secret_free (st->key_header);
    free (st->version_header);
    free (st);
    free (self);
}

kf_backend_t *
kf_backend_anthropic_new (const kf_http_backend_config_t *config)
{
    kf_backend_t *self = calloc (1, sizeof *self);
    s_anthropic_t *st = calloc (1, sizeof *st);
    if (!self || !st) {
        free (self);
        free (st);
        return NULL;
    }
    st->http = config->http;
    st->url = kf_http_url (config->base_url, "https://api.anthropic.com/v1", "/messages");
    st->key_header = config->api_key && *config->api_key
                         ? kf_strdupf ("x-api-key: %s", config->api_key)
                         : NULL;
    st->version_header = kf_strdupf ("anthropic-version: %s",
                                     config->version ? config->version : "2023-06-01");
    self->name = "anthropic";
    self->start = s_start;
    self->destroy = s_destroy;
    self->state = st;
    return self;
}
