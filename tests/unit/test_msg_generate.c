/*  test_msg_generate.c - the generate result's decoder and encoder
 *  (proto/kf_msg_generate.c): every field of a model's answer read into
 *  the struct, each mistyped or out-of-range field refused with its name,
 *  an answer without source kept as one, and what the encoder writes
 *  decoded back to the same struct. */
#include "../kf_test.h"
#include "kf_msg_generate.h"
#include <stdlib.h>
#include <string.h>

static const char *s_full =
    "{\"source\": \"int kf_forward(void) { return 0; }\", \"generator\": \"openai\","
    " \"model\": \"gpt-x\", \"usage\": {\"input_tokens\": 1200, \"output_tokens\": 300,"
    " \"cached_tokens\": 64}, \"cost_usd\": 0.0125, \"attempts\": 1, \"latency_ms\": 900}";

static void
s_refused (const char *field, const char *value, const char *want)
{
    json_t *j = json_loads (s_full, 0, NULL);
    json_object_set_new (j, field, json_loads (value, JSON_DECODE_ANY, NULL));
    kf_generate_result_t r;
    char why[300] = "";
    int rc = kf_generate_result_decode (j, &r, why, sizeof why);
    if (rc != -1 || !strstr (why, want))
        fprintf (stderr, "field %s = %s: rc %d, why \"%s\" (wanted \"%s\")\n", field, value, rc,
                 why, want);
    CHECK (rc == -1 && strstr (why, want));
    CHECK (r.json == NULL);
    json_decref (j);
}

int
main (void)
{
    json_t *j = json_loads (s_full, 0, NULL);
    kf_generate_result_t r;
    char why[300];
    CHECK (kf_generate_result_decode (j, &r, why, sizeof why) == 0);
    CHECK (!strcmp (r.source, "int kf_forward(void) { return 0; }"));
    CHECK (!strcmp (r.generator, "openai") && !strcmp (r.model, "gpt-x"));
    CHECK (r.has_usage && r.input_tokens == 1200 && r.output_tokens == 300 && r.cached_tokens == 64);
    CHECK (r.has_cost && r.cost_usd == 0.0125);
    CHECK (!strcmp (r.error_kind, "") && !strcmp (r.detail, ""));

    json_t *enc = kf_generate_result_encode (&r);
    kf_generate_result_t back;
    CHECK (kf_generate_result_decode (enc, &back, why, sizeof why) == 0);
    CHECK (!strcmp (back.source, r.source) && back.output_tokens == 300 && back.cost_usd == 0.0125);
    CHECK (json_integer_value (json_object_get (enc, "latency_ms")) == 900);   /* passes through */
    kf_generate_result_free (&back);
    json_decref (enc);
    kf_generate_result_free (&r);
    kf_generate_result_free (&r);   /* idempotent */
    json_decref (j);

    /* An answer without code: no source, the reason kept; a null cost (a
     * model without a price) is no cost. */
    j = json_loads ("{\"generator\": \"command\", \"usage\": {\"input_tokens\": 5},"
                    " \"cost_usd\": null, \"error_kind\": \"no_code\", \"detail\": \"prose only\"}",
                    0, NULL);
    CHECK (kf_generate_result_decode (j, &r, why, sizeof why) == 0);
    CHECK (!strcmp (r.source, "") && !strcmp (r.error_kind, "no_code"));
    CHECK (!strcmp (r.detail, "prose only") && !r.has_cost && r.input_tokens == 5);
    enc = kf_generate_result_encode (&r);
    CHECK (!json_object_get (enc, "source"));
    CHECK (!strcmp (json_string_value (json_object_get (enc, "error_kind")), "no_code"));
    json_decref (enc);
    kf_generate_result_free (&r);
    json_decref (j);

    /* A meta job's answer: its edits as text. */
    j = json_loads ("{\"text\": \"<<<<<<< SEARCH\", \"generator\": \"offline\"}", 0, NULL);
    CHECK (kf_generate_result_decode (j, &r, why, sizeof why) == 0);
    CHECK (!strcmp (r.text, "<<<<<<< SEARCH") && !strcmp (r.source, ""));
    enc = kf_generate_result_encode (&r);
    CHECK (!strcmp (json_string_value (json_object_get (enc, "text")), "<<<<<<< SEARCH"));
    json_decref (enc);
    kf_generate_result_free (&r);
    json_decref (j);

    s_refused ("source", "42", "result.source: must be a string");
    s_refused ("text", "[\"edit\"]", "result.text: must be a string");
    s_refused ("generator", "[]", "result.generator: must be a string");
    s_refused ("usage", "\"many\"", "result.usage: must be an object");
    s_refused ("usage", "{\"input_tokens\": -3}", "result.usage.input_tokens: must be an integer >= 0");
    s_refused ("usage", "{\"output_tokens\": 1.5}", "result.usage.output_tokens");
    s_refused ("cost_usd", "-1", "result.cost_usd: -1 is outside");
    s_refused ("cost_usd", "\"free\"", "result.cost_usd: must be a number");
    s_refused ("error_kind", "\"DROP TABLE runs; --\"", "result.error_kind: must be a short");
    s_refused ("detail", "{}", "result.detail: must be a string");
    CHECK (kf_generate_result_decode (NULL, &r, why, sizeof why) == -1);
    CHECK (strstr (why, "must be an object") != NULL);

    /* A source past the bound is refused by its size. */
    size_t big = (4u << 20) + 1;
    char *text = malloc (big + 1);
    CHECK (text != NULL);
    if (text) {
        memset (text, 'x', big);
        text[big] = 0;
        j = json_pack ("{s:s}", "source", text);
        CHECK (kf_generate_result_decode (j, &r, why, sizeof why) == -1);
        CHECK (strstr (why, "result.source: 4194305 bytes") != NULL);
        json_decref (j);
        free (text);
    }
    return kf_test_done ("test_msg_generate");
}
