/*  test_msg_reference.c - the reference result's decoder and encoder
 *  (proto/kf_msg_reference.c): a manifest read into the struct (tensors,
 *  scalars, timings, the data's description), each mistyped or
 *  out-of-range field refused with its name, the bounds (entries, rank,
 *  element counts, a tensor inside the data) at and past their limits,
 *  and what the encoder writes decoded back to the same struct. */
#include "../kf_test.h"
#include "kf_msg_reference.h"
#include <stdlib.h>
#include <string.h>

#define S_KEY "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define S_HASH "00112233445566778899aabbccddeeff"

/* Two sets of one f32 input [4, 8] and one output, a parameter: 4 + 8 +
 * 4 + 8 ... laid out one after another. */
static const char *s_full =
    "{\"tensors\": ["
    " {\"role\": \"param\", \"set\": null, \"index\": 0, \"name\": \"w\", \"dtype\": \"f32\","
    "  \"shape\": [8], \"offset\": 0, \"bytes\": 32},"
    " {\"role\": \"input\", \"set\": 0, \"index\": 0, \"name\": \"in0\", \"dtype\": \"f32\","
    "  \"shape\": [4, 8], \"offset\": 32, \"bytes\": 128, \"stats\": {\"min\": 0}},"
    " {\"role\": \"output\", \"set\": 0, \"index\": 0, \"name\": \"out0\", \"dtype\": \"f64\","
    "  \"shape\": [4], \"offset\": 160, \"bytes\": 32}],"
    " \"scalars\": [{\"role\": \"init\", \"set\": null, \"index\": 0, \"name\": \"init0\","
    "  \"value\": 768}, {\"role\": \"input\", \"set\": 0, \"index\": 1, \"name\": \"in1\","
    "  \"value\": \"relu\"}],"
    " \"sets\": 1, \"degenerate\": [\"output 0 ('out0'): constant\"], \"atol_scaled\": 2.5e-8,"
    " \"timing\": {\"eager\": {\"median_ns\": 1500.5, \"samples\": 9},"
    "  \"compiled\": {\"error\": \"no compiler\"}},"
    " \"data_key\": \"" S_KEY "\", \"data_bytes\": 192, \"data_hash\": \"" S_HASH "\","
    " \"inputs_hash\": \"" S_HASH "\", \"seed\": 3, \"torch_version\": \"2.1.0\","
    " \"python\": \"/usr/bin/python3\"}";

static json_t *
s_load (void)
{
    json_t *j = json_loads (s_full, 0, NULL);
    CHECK (j != NULL);
    return j;
}

static void
s_expect (json_t *j, const char *want, const char *what)
{
    kf_reference_result_t r;
    char why[300] = "";
    int rc = kf_reference_result_decode (j, &r, why, sizeof why);
    if (rc != -1 || !strstr (why, want))
        fprintf (stderr, "%s: rc %d, why \"%s\" (wanted \"%s\")\n", what, rc, why, want);
    CHECK (rc == -1 && strstr (why, want));
    CHECK (r.json == NULL && r.tensors == NULL);
    json_decref (j);
}

/* The full result with FIELD set to VALUE (JSON text). */
static void
s_refused (const char *field, const char *value, const char *want)
{
    json_t *j = s_load ();
    json_object_set_new (j, field, json_loads (value, JSON_DECODE_ANY, NULL));
    s_expect (j, want, field);
}

/* The full result with tensor I's FIELD set to VALUE. */
static void
s_tensor_refused (size_t i, const char *field, const char *value, const char *want)
{
    json_t *j = s_load ();
    json_object_set_new (json_array_get (json_object_get (j, "tensors"), i), field,
                         json_loads (value, JSON_DECODE_ANY, NULL));
    s_expect (j, want, field);
}

static void
s_round_trip (void)
{
    json_t *j = s_load ();
    kf_reference_result_t r;
    char why[300];
    CHECK (kf_reference_result_decode (j, &r, why, sizeof why) == 0);
    CHECK (r.n_tensors == 3 && r.n_scalars == 2 && r.sets == 1);
    const kf_reference_tensor_t *in0 = &r.tensors[1];
    CHECK (!strcmp (in0->role, "input") && in0->set == 0 && !strcmp (in0->name, "in0"));
    CHECK (in0->rank == 2 && in0->shape[0] == 4 && in0->shape[1] == 8 && in0->numel == 32);
    CHECK (in0->placed && in0->offset == 32 && in0->bytes == 128);
    CHECK (r.tensors[0].set == -1 && !strcmp (r.tensors[2].dtype, "f64"));
    CHECK (r.scalars[0].set == -1 && json_integer_value (r.scalars[0].value) == 768);
    CHECK (!strcmp (json_string_value (r.scalars[1].value), "relu"));
    CHECK (json_array_size (r.degenerate) == 1);
    CHECK (r.has_atol_scaled && r.atol_scaled == 2.5e-8);
    CHECK (r.eager.present && r.eager.has_median && r.eager.median_ns == 1500.5);
    CHECK (r.eager.matches_eager && !r.eager.failed);
    CHECK (r.compiled.present && r.compiled.failed && !r.compiled.has_median);
    CHECK (r.has_data && !strcmp (r.data_key, S_KEY) && r.data_bytes == 192 && r.seed == 3);
    CHECK (!strcmp (r.torch_version, "2.1.0") && !r.cached && !r.has_wall);

    /* What the worker adds after its run, written by the encoder. */
    r.cached = true;
    r.cache_key = S_KEY;
    r.task_hash = S_KEY;
    r.has_wall = true;
    r.wall_s = 2.5;
    json_t *enc = kf_reference_result_encode (&r);
    kf_reference_result_t back;
    CHECK (kf_reference_result_decode (enc, &back, why, sizeof why) == 0);
    CHECK (back.n_tensors == 3 && back.tensors[2].bytes == 32 && back.cached);
    CHECK (!strcmp (back.cache_key, S_KEY) && back.has_wall && back.wall_s == 2.5);
    CHECK (!strcmp (back.data_hash, S_HASH) && back.seed == 3 && back.has_data);
    /* Fields not named pass untouched, entries' too. */
    CHECK (!strcmp (json_string_value (json_object_get (enc, "python")), "/usr/bin/python3"));
    CHECK (json_object_get (json_array_get (back.tensor_list, 1), "stats") != NULL);
    kf_reference_result_free (&back);
    json_decref (enc);
    kf_reference_result_free (&r);
    kf_reference_result_free (&r);   /* idempotent */
    json_decref (j);

    /* The smallest result: an empty manifest, nothing else. */
    j = json_loads ("{\"tensors\": []}", 0, NULL);
    CHECK (kf_reference_result_decode (j, &r, why, sizeof why) == 0);
    CHECK (r.n_tensors == 0 && !r.has_data && !r.degenerate && !r.eager.present);
    CHECK (r.eager.matches_eager && r.sets == 0);
    kf_reference_result_free (&r);
    json_decref (j);

    /* A compiled time that differs from eager says so. */
    j = json_loads ("{\"tensors\": [], \"timing\": {\"compiled\": {\"median_ns\": 5,"
                    " \"matches_eager\": false}}}", 0, NULL);
    CHECK (kf_reference_result_decode (j, &r, why, sizeof why) == 0);
    CHECK (r.compiled.has_median && !r.compiled.matches_eager);
    kf_reference_result_free (&r);
    json_decref (j);
}

static void
s_malformed (void)
{
    kf_reference_result_t r;
    char why[300];
    CHECK (kf_reference_result_decode (NULL, &r, why, sizeof why) == -1);
    CHECK (strstr (why, "result: must be an object") != NULL);
    json_t *j = s_load ();
    json_object_del (j, "tensors");
    s_expect (j, "result.tensors: must be an array", "no tensors");
    s_refused ("tensors", "{}", "result.tensors: must be an array");
    s_refused ("scalars", "7", "result.scalars: must be an array");
    s_refused ("sets", "-1", "result.sets: must be an integer >= 0");
    s_refused ("degenerate", "\"constant\"", "result.degenerate: must be an array");
    s_refused ("degenerate", "[3]", "result.degenerate: entry 0 must be a string");
    s_refused ("atol_scaled", "\"tiny\"", "result.atol_scaled: must be a number");
    s_refused ("timing", "[]", "result.timing: must be an object");
    s_refused ("timing", "{\"eager\": {\"median_ns\": -4}}", "result.timing.eager.median_ns");
    s_refused ("timing", "{\"compiled\": {\"matches_eager\": \"yes\"}}",
               "result.timing.compiled.matches_eager: must be a boolean");
    s_refused ("timing", "{\"eager\": 12}", "result.timing.eager: must be an object");
    s_refused ("data_key", "\"../../etc/passwd\"", "result.data_key: must be 64 lower-case hex");
    s_refused ("data_hash", "\"00112233\"", "result.data_hash: must be 32 lower-case hex");
    s_refused ("inputs_hash", "17", "result.inputs_hash: must be a string");
    s_refused ("data_bytes", "-192", "result.data_bytes: must be an integer >= 0");
    s_refused ("seed", "\"3\"", "result.seed: must be an integer");
    s_refused ("torch_version", "2.1", "result.torch_version: must be a string");
    s_refused ("cached", "\"no\"", "result.cached: must be a boolean");
    s_refused ("wall_s", "-1", "result.wall_s: -1 is outside");

    s_tensor_refused (0, "role", "\"weight\"", "result.tensors[0].role: 'weight' is no role");
    s_tensor_refused (1, "set", "-2", "result.tensors[1].set: must be an integer >= 0 or null");
    s_tensor_refused (1, "index", "1.5", "result.tensors[1].index: must be an integer >= 0");
    s_tensor_refused (1, "name", "[]", "result.tensors[1].name: must be a string");
    s_tensor_refused (1, "dtype", "\"complex128\"", "result.tensors[1].dtype: 'complex128' is no");
    s_tensor_refused (1, "shape", "[4, -8]", "result.tensors[1].shape: must be an array of");
    s_tensor_refused (1, "shape", "\"4x8\"", "result.tensors[1].shape: must be an array of");
    s_tensor_refused (2, "offset", "null", "result.tensors[2]: offset and bytes go together");
    s_tensor_refused (1, "bytes", "127", "result.tensors[1].bytes: 127 bytes, not what 32");
    s_tensor_refused (1, "offset", "\"32\"", "result.tensors[1].offset: must be an integer");
    j = s_load ();
    json_array_append_new (json_object_get (j, "tensors"), json_string ("in1"));
    s_expect (j, "result.tensors[3]: must be an object", "a string entry");
    j = s_load ();
    json_object_set_new (json_array_get (json_object_get (j, "scalars"), 1), "role",
                         json_string ("param"));
    s_expect (j, "result.scalars[1].role: 'param' is no role", "scalar role");
    j = s_load ();
    json_array_append_new (json_object_get (j, "scalars"), json_integer (5));
    s_expect (j, "result.scalars[2]: must be an object", "a number entry");
    /* With the data described, every tensor lies in it. */
    s_tensor_refused (2, "offset", "161", "result.tensors[2]: 32 bytes at 161 do not lie in");
    j = s_load ();
    json_object_del (json_array_get (json_object_get (j, "tensors"), 0), "offset");
    json_object_del (json_array_get (json_object_get (j, "tensors"), 0), "bytes");
    s_expect (j, "result.tensors[0]: has no offset and bytes", "unplaced with data");
}

static void
s_bounds (void)
{
    kf_reference_result_t r;
    char why[300];
    /* Ranks: 16 dimensions at most. */
    json_t *j = s_load ();
    json_t *shape = json_array ();
    for (int k = 0; k < 16; k++)
        json_array_append_new (shape, json_integer (1));
    json_t *t = json_array_get (json_object_get (j, "tensors"), 2);
    json_object_set_new (t, "shape", shape);
    json_object_set_new (t, "bytes", json_integer (8));
    CHECK (kf_reference_result_decode (j, &r, why, sizeof why) == 0);
    CHECK (r.tensors[2].rank == 16 && r.tensors[2].numel == 1);
    kf_reference_result_free (&r);
    json_array_append_new (shape, json_integer (1));
    s_expect (j, "result.tensors[2].shape: 17 dimensions, more than 16", "rank 17");

    /* Elements: 2^62 at most, so no product overflows past the edge. */
    j = json_loads ("{\"tensors\": [{\"role\": \"input\", \"set\": 0, \"index\": 0,"
                    " \"dtype\": \"f32\", \"shape\": [4611686018427387904]}]}", 0, NULL);
    CHECK (kf_reference_result_decode (j, &r, why, sizeof why) == 0);
    CHECK (r.tensors[0].numel == (int64_t) 1 << 62);
    kf_reference_result_free (&r);
    json_decref (j);
    j = json_loads ("{\"tensors\": [{\"role\": \"input\", \"set\": 0, \"index\": 0,"
                    " \"dtype\": \"f32\", \"shape\": [4294967296, 4294967296]}]}", 0, NULL);
    s_expect (j, "result.tensors[0].shape: more than 2^62 elements", "2^64 elements");
    j = json_loads ("{\"tensors\": [{\"role\": \"input\", \"set\": 0, \"index\": 0,"
                    " \"dtype\": \"f64\", \"shape\": [2305843009213693952], \"offset\": 0,"
                    " \"bytes\": 0}]}", 0, NULL);
    s_expect (j, "result.tensors[0].bytes: 0 bytes, not what", "bytes past 2^63");

    /* Offsets: 2^62 at most; names: 1024 bytes at most. */
    s_tensor_refused (2, "offset", "4611686018427387905", "result.tensors[2].offset: past 2^62");
    char name[1026];
    memset (name, 'n', 1025);
    name[1025] = 0;
    j = s_load ();
    json_object_set_new (json_array_get (json_object_get (j, "scalars"), 0), "name",
                         json_string (name));
    s_expect (j, "result.scalars[0].name: more than 1024 bytes", "a long name");
    name[1024] = 0;
    j = s_load ();
    json_object_set_new (json_array_get (json_object_get (j, "tensors"), 1), "name",
                         json_string (name));
    CHECK (kf_reference_result_decode (j, &r, why, sizeof why) == 0);
    kf_reference_result_free (&r);
    json_decref (j);

    /* Entries: KF_REFERENCE_MAX_ENTRIES at most. */
    json_t *list = json_array ();
    for (int k = 0; k < KF_REFERENCE_MAX_ENTRIES; k++)
        json_array_append_new (list, json_pack ("{s:s, s:i, s:i, s:s, s:[]}", "role", "output",
                                                "set", 0, "index", k, "dtype", "i32", "shape"));
    j = json_pack ("{s:o}", "tensors", list);
    CHECK (kf_reference_result_decode (j, &r, why, sizeof why) == 0);
    CHECK (r.n_tensors == KF_REFERENCE_MAX_ENTRIES);
    kf_reference_result_free (&r);
    json_array_append_new (list, json_pack ("{s:s, s:i, s:i, s:s, s:[]}", "role", "output",
                                            "set", 0, "index", 0, "dtype", "i32", "shape"));
    s_expect (j, "result.tensors: 65537 entries, more than 65536", "too many entries");

    /* Findings: 256 of at most 4096 bytes. */
    char *text = malloc (KF_REFERENCE_MAX_FINDING + 2);
    CHECK (text != NULL);
    if (!text)
        return;
    memset (text, 'x', KF_REFERENCE_MAX_FINDING);
    text[KF_REFERENCE_MAX_FINDING] = 0;
    list = json_array ();
    for (int k = 0; k < KF_REFERENCE_MAX_FINDINGS; k++)
        json_array_append_new (list, json_string (text));
    j = json_pack ("{s:[], s:o}", "tensors", "degenerate", list);
    CHECK (kf_reference_result_decode (j, &r, why, sizeof why) == 0);
    kf_reference_result_free (&r);
    json_array_append_new (list, json_string ("one more"));
    s_expect (j, "result.degenerate: must be an array of at most 256", "257 findings");
    text[KF_REFERENCE_MAX_FINDING] = 'x';
    text[KF_REFERENCE_MAX_FINDING + 1] = 0;
    j = json_pack ("{s:[], s:[s]}", "tensors", "degenerate", text);
    s_expect (j, "result.degenerate: entry 0 must be a string of at most 4096", "long finding");
    free (text);
}

int
main (void)
{
    s_round_trip ();
    s_malformed ();
    s_bounds ();
    return kf_test_done ("test_msg_reference");
}
