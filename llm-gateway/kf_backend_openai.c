/*  kf_backend_openai.c - OpenAI-compatible chat completions.
 *
 *  POST {base}/chat/completions, base as the vendors' SDKs take it (with
 *  /v1), so the same code serves OpenAI, vLLM, llama.cpp's server, Ollama
 *  and most routers. One system and one user message; temperature, top_p
 *  and max_tokens; the completion, why it stopped and the usage (cached
 *  prompt tokens included) read back. The POST and its failures are the
 *  shared HTTP plumbing's (kf_backend_http.c).
 */
#include "kf_backend_http.h"
#include "kf_str.h"

#include <stdlib.h>
#include <string.h>

//  OpenAI's reasoning models refuse max_tokens and sampling settings;
//  everything else (and every compatible server) takes them.
static bool
s_reasoning_model (const char *model)
{
    return !strncmp (model, "o1", 2) || !strncmp (model, "o3", 2) || !strncmp (model, "o4", 2)
           || !strncmp (model, "gpt-5", 5);
}

static json_t *
s_body (const kf_gen_request_t *req)
{
    json_t *body = json_pack ("{s:s, s:[{s:s, s:s}, {s:s, s:s}]}", "model", req->model,
                              "messages", "role", "system", "content", req->system ? req->system : "",
                              "role", "user", "content", req->prompt ? req->prompt : "");
    if (!body)
        return NULL;
    if (s_reasoning_model (req->model))
        json_object_set_new (body, "max_completion_tokens", json_integer (req->max_tokens));
    else {
        json_object_set_new (body, "max_tokens", json_integer (req->max_tokens));
        json_object_set_new (body, "temperature", json_real (req->temperature));
        json_object_set_new (body, "top_p", json_real (req->top_p));
    }
    return body;
}

static const char *
s_read (json_t *root, kf_gen_reply_t *reply)
{
    json_t *choice = json_array_get (json_object_get (root, "choices"), 0);
    json_t *content = json_object_get (json_object_get (choice, "message"), "content");
    if (!json_is_object (root) || !choice)
        return "not a chat completion";
    reply->text = strdup (json_is_string (content) ? json_string_value (content) : "");
    const char *finish = json_string_value (json_object_get (choice, "finish_reason"));
    if (finish) {
        reply->finish_reason = strdup (finish);
        reply->truncated = strcmp (finish, "length") == 0;
    }
    json_t *usage = json_object_get (root, "usage");
    reply->input_tokens = json_integer_value (json_object_get (usage, "prompt_tokens"));
    reply->output_tokens = json_integer_value (json_object_get (usage, "completion_tokens"));
    reply->cached_tokens = json_integer_value (json_object_get (
        json_object_get (usage, "prompt_tokens_details"), "cached_tokens"));
    return NULL;
}

static const kf_http_vendor_t s_openai = { "openai", s_body, s_read };

kf_backend_t *
kf_backend_openai_new (const kf_http_backend_config_t *config)
{
    char *headers[] = {
        config->api_key && *config->api_key
            ? kf_strdupf ("Authorization: Bearer %s", config->api_key) : NULL
    };
    return kf_backend_http_new (&s_openai, config->http,
                                kf_http_url (config->base_url, "https://api.openai.com/v1",
                                             "/chat/completions"),
                                headers, 1);
}
