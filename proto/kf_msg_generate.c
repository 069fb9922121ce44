/*  kf_msg_generate.c - the generate result's one decoder and one encoder
 *  (kf_msg_generate.h).
 *
 *  Every field is optional, as PROTOCOL.md's generate row has it: a
 *  result with no source is an answer of its own (the candidate's
 *  verdict says why), but when a field is there it must have its type
 *  and range: a source (or a meta answer's text) string of at most KF_GENERATE_MAX_SOURCE bytes,
 *  token counts integers >= 0, a cost a finite number >= 0, an
 *  error_kind a short lower-case word (the gateway's:
 *  truncated, empty, no_code, timeout, http, transport). Fields not named pass untouched.
 */
#include "kf_msg_generate.h"
#include "kf_msg_field.h"
#include <stdlib.h>
#include <string.h>

/* The most source a candidate may hold: far above any kernel, well below
 * what the gateway's frames allow. */
#define S_MAX_SOURCE (4u << 20)

static int
s_usage (json_t *json, kf_generate_result_t *r, char *why, size_t size)
{
    bool bad = false;
    r->usage = kf_field_object (json, "usage", &bad);
    if (bad)
        return kf_field_bad (why, size, "usage", "must be an object");
    if (!r->usage)
        return 0;
    r->has_usage = true;
    KF_FIELD_TRY (kf_field_count (r->usage, "input_tokens", "usage.input_tokens", &r->input_tokens,
                              why, size));
    KF_FIELD_TRY (kf_field_count (r->usage, "output_tokens", "usage.output_tokens",
                              &r->output_tokens, why, size));
    KF_FIELD_TRY (kf_field_count (r->usage, "cached_tokens", "usage.cached_tokens",
                              &r->cached_tokens, why, size));
    return 0;
}

static int
s_decode (json_t *json, void *self, char *why, size_t size)
{
    kf_generate_result_t *r = self;
    KF_FIELD_TRY (kf_field_str (json, "source", "source", &r->source, why, size));
    if (strlen (r->source) > S_MAX_SOURCE)
        return kf_field_bad (why, size, "source", "%zu bytes, more than %u",
                           strlen (r->source), S_MAX_SOURCE);
    KF_FIELD_TRY (kf_field_str (json, "text", "text", &r->text, why, size));
    if (strlen (r->text) > S_MAX_SOURCE)
        return kf_field_bad (why, size, "text", "%zu bytes, more than %u", strlen (r->text),
                             S_MAX_SOURCE);
    KF_FIELD_TRY (kf_field_str (json, "generator", "generator", &r->generator, why, size));
    KF_FIELD_TRY (kf_field_str (json, "model", "model", &r->model, why, size));
    KF_FIELD_TRY (s_usage (json, r, why, size));
    int has = kf_field_num (json, "cost_usd", "cost_usd", 0, 1e9, 0, &r->cost_usd, why, size);
    KF_FIELD_TRY (has);
    r->has_cost = has > 0;
    KF_FIELD_TRY (kf_field_str (json, "error_kind", "error_kind", &r->error_kind, why, size));
    size_t n = strlen (r->error_kind);
    if (n > 32 || strspn (r->error_kind, "abcdefghijklmnopqrstuvwxyz_") != n)
        return kf_field_bad (why, size, "error_kind", "must be a short lower-case word");
    KF_FIELD_TRY (kf_field_str (json, "detail", "detail", &r->detail, why, size));
    return 0;
}

KF_FIELD_CODEC (kf_generate_result, kf_generate_result_t, s_decode, NULL)

json_t *
kf_generate_result_encode (const kf_generate_result_t *self)
{
    json_t *out = self->json ? json_deep_copy (self->json) : json_object ();
    if (self->source && *self->source)
        json_object_set_new (out, "source", json_string (self->source));
    else
        json_object_del (out, "source");
    if (self->text && *self->text)
        json_object_set_new (out, "text", json_string (self->text));
    json_object_set_new (out, "generator", json_string (self->generator ? self->generator : ""));
    if (self->model && *self->model)
        json_object_set_new (out, "model", json_string (self->model));
    if (self->has_usage)
        json_object_set_new (out, "usage", json_pack ("{s:I, s:I, s:I}", "input_tokens",
                                                      (json_int_t) self->input_tokens,
                                                      "output_tokens",
                                                      (json_int_t) self->output_tokens,
                                                      "cached_tokens",
                                                      (json_int_t) self->cached_tokens));
    if (self->has_cost)
        json_object_set_new (out, "cost_usd", json_real (self->cost_usd));
    if (self->error_kind && *self->error_kind) {
        json_object_set_new (out, "error_kind", json_string (self->error_kind));
        json_object_set_new (out, "detail", json_string (self->detail ? self->detail : ""));
    }
    return out;
}
