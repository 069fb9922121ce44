/*  test_msg_compile.c - the compile result's decoder and encoder
 *  (proto/kf_msg_compile.c): every field of a swept build read into the
 *  struct, each missing or mistyped field refused with its name, and what
 *  the encoder writes decoded back to the same struct. */
#include "../kf_test.h"
#include "kf_msg_compile.h"
#include <string.h>

static const char *s_full =
    "{\"compiled\": true, \"artifact_hash\": \"ab12\", \"toolchain\": \"cc 12.2\","
    " \"log\": \"warning: unused\", \"wall_s\": 0.5, \"cached\": false,"
    " \"coords\": [1, 2, 0], \"coords_why\": \"mem: vector loads\","
    " \"configs\": [{\"params\": {\"BLOCK\": 64}, \"compiled\": true,"
    "   \"artifact_hash\": \"ab12\", \"frame\": 0},"
    "  {\"params\": {\"BLOCK\": 128}, \"compiled\": false, \"artifact_hash\": null,"
    "   \"log\": \"error: too big\"}],"
    " \"tune\": {\"space\": 2, \"configs\": 2, \"compiled\": 1, \"skipped\": 0}}";

static void
s_refused (const char *field, const char *value, const char *want)
{
    json_t *j = json_loads (s_full, 0, NULL);
    if (value)
        json_object_set_new (j, field, json_loads (value, JSON_DECODE_ANY, NULL));
    else
        json_object_del (j, field);
    kf_compile_result_t r;
    char why[300] = "";
    int rc = kf_compile_result_decode (j, &r, why, sizeof why);
    if (rc != -1 || !strstr (why, want))
        fprintf (stderr, "field %s = %s: rc %d, why \"%s\" (wanted \"%s\")\n", field,
                 value ? value : "(deleted)", rc, why, want);
    CHECK (rc == -1 && strstr (why, want));
    CHECK (r.json == NULL && r.configs == NULL);
    json_decref (j);
}

int
main (void)
{
    json_t *j = json_loads (s_full, 0, NULL);
    kf_compile_result_t r;
    char why[300];
    CHECK (kf_compile_result_decode (j, &r, why, sizeof why) == 0);
    CHECK (r.compiled && !strcmp (r.artifact_hash, "ab12") && !strcmp (r.toolchain, "cc 12.2"));
    CHECK (!strcmp (r.log, "warning: unused") && r.wall_s == 0.5 && !r.cached);
    CHECK (r.has_coords && r.coords[0] == 1 && r.coords[1] == 2 && r.coords[2] == 0);
    CHECK (!strcmp (r.coords_why, "mem: vector loads") && !strcmp (r.coords_error, ""));
    CHECK (r.n_configs == 2 && r.configs[0].compiled && r.configs[0].frame == 0);
    CHECK (json_integer_value (json_object_get (r.configs[0].params, "BLOCK")) == 64);
    CHECK (!r.configs[1].compiled && r.configs[1].frame == -1);
    CHECK (!strcmp (r.configs[1].artifact_hash, "") && !strcmp (r.configs[1].log, "error: too big"));
    CHECK (json_integer_value (json_object_get (r.tune, "space")) == 2);

    json_t *enc = kf_compile_result_encode (&r);
    kf_compile_result_t back;
    CHECK (kf_compile_result_decode (enc, &back, why, sizeof why) == 0);
    CHECK (back.compiled && !strcmp (back.artifact_hash, "ab12") && back.wall_s == 0.5);
    CHECK (back.has_coords && back.coords[1] == 2 && back.n_configs == 2);
    CHECK (!strcmp (back.configs[1].log, "error: too big") && back.tune);
    kf_compile_result_free (&back);
    json_decref (enc);
    kf_compile_result_free (&r);
    kf_compile_result_free (&r);   /* idempotent */
    json_decref (j);

    /* A build that failed, from a struct with no JSON. */
    kf_compile_result_t v;
    memset (&v, 0, sizeof v);
    v.toolchain = "cc";
    v.log = "error: x";
    enc = kf_compile_result_encode (&v);
    CHECK (json_is_false (json_object_get (enc, "compiled")));
    CHECK (json_is_null (json_object_get (enc, "artifact_hash")));
    CHECK (kf_compile_result_decode (enc, &r, why, sizeof why) == 0 && !r.compiled);
    CHECK (!r.has_coords && r.n_configs == 0 && !r.tune);
    kf_compile_result_free (&r);
    json_decref (enc);

    CHECK (kf_compile_result_decode (NULL, &r, why, sizeof why) == -1);
    s_refused ("compiled", NULL, "result.compiled: missing");
    s_refused ("compiled", "\"yes\"", "result.compiled: must be a boolean");
    s_refused ("artifact_hash", "12", "result.artifact_hash: must be a string");
    s_refused ("toolchain", "[]", "result.toolchain: must be a string");
    s_refused ("log", "{}", "result.log: must be a string");
    s_refused ("wall_s", "-1", "result.wall_s: must be a number >= 0");
    s_refused ("wall_s", "\"1\"", "result.wall_s");
    s_refused ("cached", "0", "result.cached: must be a boolean");
    s_refused ("coords", "[1, 2]", "result.coords: must be [mem, algo, sync]");
    s_refused ("coords", "[1, 2, 4]", "result.coords: each level must be an integer 0..3");
    s_refused ("coords", "[1, \"2\", 0]", "result.coords: each level");
    s_refused ("coords_why", "1", "result.coords_why: must be a string");
    s_refused ("coords_error", "true", "result.coords_error: must be a string");
    s_refused ("tune", "[]", "result.tune: must be an object");
    s_refused ("configs", "{}", "result.configs: must be an array");
    s_refused ("configs", "[{\"compiled\": true}]", "result.configs[0]: must be an object");
    s_refused ("configs", "[{\"params\": {}, \"compiled\": 1}]",
               "result.configs[0].compiled: must be a boolean");
    s_refused ("configs", "[{\"params\": {}}, {\"params\": {}, \"frame\": -1}]",
               "result.configs[1].frame: must be an integer >= 0");
    s_refused ("configs", "[{\"params\": {}, \"artifact_hash\": 5}]",
               "result.configs[0].artifact_hash");
    s_refused ("configs", "[{\"params\": {}, \"log\": []}]", "result.configs[0].log");
    return kf_test_done ("test_msg_compile");
}
