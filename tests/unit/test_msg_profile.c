/*  test_msg_profile.c - the profile result's decoder and encoder
 *  (proto/kf_msg_profile.c): an ncu and a perf result read into the
 *  struct, each mistyped, missing or out-of-range field refused with its
 *  name, the summary's bound at and past its limit, and what the encoder
 *  writes decoded back to the same struct. */
#include "../kf_test.h"
#include "kf_msg_profile.h"
#include <stdlib.h>
#include <string.h>

static const char *s_ncu =
    "{\"summary\": \"kernel softmax_rows: 34.4 us a launch\", \"metrics\": {\"dram_pct\": 71.5,"
    " \"bound\": \"memory\", \"kernels\": []}, \"launches\": 4, \"profiler\": \"ncu\","
    " \"ncu\": \"2024.1\", \"wall_s\": 3.25}";
static const char *s_perf =
    "{\"summary\": \"ipc 2.1\", \"metrics\": {\"ipc\": 2.1, \"calls\": 300}, \"profiler\": \"perf\","
    " \"perf\": \"perf version 6.1\", \"events\": \"cycles,instructions,task-clock\","
    " \"calls\": 300, \"wall_s\": 1.5, \"extra\": [1]}";

static void
s_refused (const char *base, const char *field, const char *value, const char *want)
{
    json_t *j = json_loads (base, 0, NULL);
    if (value)
        json_object_set_new (j, field, json_loads (value, JSON_DECODE_ANY, NULL));
    else
        json_object_del (j, field);
    kf_profile_result_t r;
    char why[300] = "";
    int rc = kf_profile_result_decode (j, &r, why, sizeof why);
    if (rc != -1 || !strstr (why, want))
        fprintf (stderr, "field %s = %s: rc %d, why \"%s\" (wanted \"%s\")\n", field,
                 value ? value : "(absent)", rc, why, want);
    CHECK (rc == -1 && strstr (why, want));
    CHECK (r.json == NULL);
    json_decref (j);
}

int
main (void)
{
    json_t *j = json_loads (s_ncu, 0, NULL);
    kf_profile_result_t r;
    char why[300];
    CHECK (kf_profile_result_decode (j, &r, why, sizeof why) == 0);
    CHECK (!strcmp (r.summary, "kernel softmax_rows: 34.4 us a launch"));
    CHECK (!strcmp (r.profiler, "ncu") && !strcmp (r.ncu, "2024.1") && !strcmp (r.perf, ""));
    CHECK (r.has_launches && r.launches == 4 && !r.has_calls);
    CHECK (r.has_wall && r.wall_s == 3.25);
    CHECK (json_real_value (json_object_get (r.metrics, "dram_pct")) == 71.5);
    json_t *enc = kf_profile_result_encode (&r);
    kf_profile_result_t back;
    CHECK (kf_profile_result_decode (enc, &back, why, sizeof why) == 0);
    CHECK (!strcmp (back.summary, r.summary) && back.launches == 4 && back.wall_s == 3.25);
    CHECK (json_equal (back.metrics, r.metrics));
    kf_profile_result_free (&back);
    json_decref (enc);
    kf_profile_result_free (&r);
    kf_profile_result_free (&r);   /* idempotent */
    json_decref (j);

    j = json_loads (s_perf, 0, NULL);
    CHECK (kf_profile_result_decode (j, &r, why, sizeof why) == 0);
    CHECK (!strcmp (r.profiler, "perf") && !strcmp (r.perf, "perf version 6.1"));
    CHECK (r.has_calls && r.calls == 300 && !r.has_launches);
    CHECK (!strcmp (r.events, "cycles,instructions,task-clock"));
    enc = kf_profile_result_encode (&r);
    CHECK (json_array_size (json_object_get (enc, "extra")) == 1);   /* passes through */
    CHECK (kf_profile_result_decode (enc, &back, why, sizeof why) == 0);
    CHECK (back.calls == 300 && !strcmp (back.events, r.events));
    CHECK (json_is_integer (json_object_get (enc, "calls")));   /* a count, as it came */
    kf_profile_result_free (&back);
    json_decref (enc);
    kf_profile_result_free (&r);
    json_decref (j);

    /* A result from before "profiler" was written is Nsight's; a perf
     * result without its calls (a run with nothing counted) is one. */
    j = json_loads ("{\"summary\": \"s\", \"metrics\": {}, \"calls\": null}", 0, NULL);
    CHECK (kf_profile_result_decode (j, &r, why, sizeof why) == 0);
    CHECK (!strcmp (r.profiler, "ncu") && !r.has_calls && !r.has_wall);
    enc = kf_profile_result_encode (&r);
    CHECK (!strcmp (json_string_value (json_object_get (enc, "profiler")), "ncu"));
    json_decref (enc);
    kf_profile_result_free (&r);
    json_decref (j);

    s_refused (s_ncu, "summary", NULL, "result.summary: is required");
    s_refused (s_ncu, "summary", "[\"line\"]", "result.summary: must be a string");
    s_refused (s_ncu, "metrics", NULL, "result.metrics: is required");
    s_refused (s_ncu, "metrics", "\"fast\"", "result.metrics: must be an object");
    s_refused (s_ncu, "profiler", "\"gprof\"", "result.profiler: must be \"ncu\" or \"perf\"");
    s_refused (s_ncu, "profiler", "1", "result.profiler: must be a string");
    s_refused (s_ncu, "launches", "-4", "result.launches: must be an integer >= 0");
    s_refused (s_ncu, "ncu", "{}", "result.ncu: must be a string");
    s_refused (s_perf, "perf", "true", "result.perf: must be a string");
    s_refused (s_perf, "events", "[\"cycles\"]", "result.events: must be a string");
    s_refused (s_perf, "calls", "-1", "result.calls: must be an integer >= 0");
    s_refused (s_perf, "calls", "\"300\"", "result.calls: must be an integer >= 0");
    s_refused (s_perf, "calls", "2.5", "result.calls: must be an integer >= 0");
    s_refused (s_perf, "wall_s", "-0.5", "result.wall_s: -0.5 is outside");
    CHECK (kf_profile_result_decode (NULL, &r, why, sizeof why) == -1);
    CHECK (strstr (why, "result: must be an object") != NULL);

    /* The summary's bound: KF_PROFILE_MAX_SUMMARY bytes pass, one more
     * is refused by its size. */
    size_t big = KF_PROFILE_MAX_SUMMARY;
    char *text = malloc (big + 2);
    CHECK (text != NULL);
    if (text) {
        memset (text, 'x', big + 1);
        text[big] = 0;
        j = json_pack ("{s:s, s:{}}", "summary", text, "metrics");
        CHECK (kf_profile_result_decode (j, &r, why, sizeof why) == 0);
        kf_profile_result_free (&r);
        json_decref (j);
        text[big] = 'x';
        text[big + 1] = 0;
        j = json_pack ("{s:s, s:{}}", "summary", text, "metrics");
        CHECK (kf_profile_result_decode (j, &r, why, sizeof why) == -1);
        CHECK (strstr (why, "result.summary: 65537 bytes, more than 65536") != NULL);
        json_decref (j);
        free (text);
    }
    return kf_test_done ("test_msg_profile");
}
