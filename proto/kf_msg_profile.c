/*  kf_msg_profile.c - the profile result's one decoder and one encoder
 *  (kf_msg_profile.h).
 *
 *  `summary` (a string of at most KF_PROFILE_MAX_SUMMARY bytes) and
 *  `metrics` (an object) are required: a profile without them says
 *  nothing a prompt could show. `profiler` is `ncu` or `perf`;
 *  `launches` and `calls` integers >= 0; `wall_s` a finite number >= 0;
 *  `ncu`, `perf` and `events` strings. What `metrics` holds is the
 *  profiler's own and passes untouched, as do fields not named.
 */
#include "kf_msg_profile.h"
#include "kf_msg_field.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
s_decode (json_t *json, void *self, char *why, size_t size)
{
    kf_profile_result_t *r = self;
    int has = kf_field_str (json, "summary", "summary", &r->summary, why, size);
    KF_FIELD_TRY (has);
    if (has == 0)
        return kf_field_bad (why, size, "summary", "is required");
    if (strlen (r->summary) > KF_PROFILE_MAX_SUMMARY)
        return kf_field_bad (why, size, "summary", "%zu bytes, more than %u",
                             strlen (r->summary), KF_PROFILE_MAX_SUMMARY);
    bool bad = false;
    r->metrics = kf_field_object (json, "metrics", &bad);
    if (bad || !r->metrics)
        return kf_field_bad (why, size, "metrics", bad ? "must be an object" : "is required");
    KF_FIELD_TRY (has = kf_field_str (json, "profiler", "profiler", &r->profiler, why, size));
    if (has == 0)
        r->profiler = "ncu";
    if (strcmp (r->profiler, "ncu") && strcmp (r->profiler, "perf"))
        return kf_field_bad (why, size, "profiler", "must be \"ncu\" or \"perf\"");
    KF_FIELD_TRY (has = kf_field_count (json, "launches", "launches", &r->launches, why, size));
    r->has_launches = has > 0;
    KF_FIELD_TRY (kf_field_str (json, "ncu", "ncu", &r->ncu, why, size));
    KF_FIELD_TRY (kf_field_str (json, "perf", "perf", &r->perf, why, size));
    KF_FIELD_TRY (kf_field_str (json, "events", "events", &r->events, why, size));
    KF_FIELD_TRY (has = kf_field_count (json, "calls", "calls", &r->calls, why, size));
    r->has_calls = has > 0;
    KF_FIELD_TRY (has = kf_field_num (json, "wall_s", "wall_s", 0, 1e9, 0, &r->wall_s, why,
                                      size));
    r->has_wall = has > 0;
    return 0;
}

KF_FIELD_CODEC (kf_profile_result, kf_profile_result_t, s_decode, NULL)

json_t *
kf_profile_result_encode (const kf_profile_result_t *self)
{
    json_t *out = self->json ? json_deep_copy (self->json) : json_object ();
    json_object_set_new (out, "summary", json_string (self->summary ? self->summary : ""));
    json_object_set_new (out, "profiler",
                         json_string (self->profiler && *self->profiler ? self->profiler : "ncu"));
    json_object_set_new (out, "metrics",
                         self->metrics ? json_deep_copy (self->metrics) : json_object ());
    if (self->has_launches)
        json_object_set_new (out, "launches", json_integer ((json_int_t) self->launches));
    kf_field_put_str (out, "ncu", self->ncu);
    kf_field_put_str (out, "perf", self->perf);
    kf_field_put_str (out, "events", self->events);
    if (self->has_calls)
        json_object_set_new (out, "calls", json_integer ((json_int_t) self->calls));
    if (self->has_wall)
        json_object_set_new (out, "wall_s", json_real (self->wall_s));
    return out;
}
