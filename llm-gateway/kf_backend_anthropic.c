/*  kf_backend_anthropic.c - Anthropic's messages API.
 *
 *  POST {base}/messages with x-api-key and anthropic-version; the system
 *  text is a top-level field, not a message. The completion is the text
 *  blocks of the content joined; stop_reason "max_tokens" means it was cut
 *  off. Anthropic counts cache reads and writes apart from input_tokens;
 *  we report all three as input, the reads as cached, like OpenAI does.
 *  The POST and its failures are the shared HTTP plumbing's
 *  (kf_backend_http.c); Anthropic's own "overloaded" is a 529, a 5xx,
 *  retried like the rest.
 */
#include "kf_backend_http.h"
#include "kf_str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static json_t *
s_body (const kf_gen_request_t *req)
{
    json_t *body = json_pack ("{s:s, s:i, s:s, s:[{s:s, s:s}], s:f}", "model",
                              req->model, "max_tokens", req->max_tokens, "system",
                              req->system ? req->system : "", "messages", "role", "user",
                              "content", req->prompt ? req->prompt : "", "temperature",
                              req->temperature);
    //  Recent Claude models refuse temperature and top_p together; top_p
    //  1 is the default anyway, so it is sent only when it says something.
    if (body && req->top_p < 1.0)
        json_object_set_new (body, "top_p", json_real (req->top_p));
    return body;
}

static const char *
s_read (json_t *root, kf_gen_reply_t *reply)
{
    json_t *content = json_object_get (root, "content");
    if (!json_is_object (root) || !json_is_array (content))
        return "not a message";
    reply->text = s_join_text (content);
    const char *stop = json_string_value (json_object_get (root, "stop_reason"));
    if (stop) {
        reply->finish_reason = strdup (stop);
        reply->truncated = strcmp (stop, "max_tokens") == 0;
    }
    json_t *usage = json_object_get (root, "usage");
    int64_t in = json_integer_value (json_object_get (usage, "input_tokens"));
    int64_t read = json_integer_value (json_object_get (usage, "cache_read_input_tokens"));
    int64_t write = json_integer_value (json_object_get (usage, "cache_creation_input_tokens"));
    reply->input_tokens = in + read + write;
    reply->cached_tokens = read;
    reply->output_tokens = json_integer_value (json_object_get (usage, "output_tokens"));
    return NULL;
}

static const kf_http_vendor_t s_anthropic = { "anthropic", s_body, s_read };

kf_backend_t *
kf_backend_anthropic_new (const kf_http_backend_config_t *config)
{
    char *headers[] = {
        kf_strdupf ("anthropic-version: %s", config->version ? config->version : "2023-06-01"),
        config->api_key && *config->api_key ? kf_strdupf ("x-api-key: %s", config->api_key)
                                            : NULL,
    };
    return kf_backend_http_new (&s_anthropic, config->http,
                                kf_http_url (config->base_url, "https://api.anthropic.com/v1",
                                             "/messages"),
                                headers, 2);
}
