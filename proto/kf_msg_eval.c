/*  kf_msg_eval.c - the evaluate result's one decoder and one encoder
 *  (kf_msg_eval.h), beside the codec of the frames (kf_proto.c).
 *
 *  The decoder follows docs/evaluation.md ("Result") and PROTOCOL.md's
 *  job-kinds table: a required field missing, any field of the wrong JSON
 *  type, or a figure out of its range (a negative time, a speedup that is
 *  not finite, a match fraction past 1) makes the whole result malformed,
 *  with the field named. Optional fields may be absent or null; fields the
 *  specification does not name are kept in the JSON and never read.
 */
#include "kf_msg_eval.h"
#include "kf_msg_field.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *s_verdicts[] = { "correct", "incorrect", "crashed", "timeout",
                                    "load_failed" };


static int
s_timing (json_t *result, const char *side, bool *has, kf_eval_timing_t *t, char *why,
          size_t size)
{
    bool bad = false;
    json_t *o = kf_field_object (result, side, &bad);
    memset (t, 0, sizeof *t);
    t->kind = "";
    t->minor_faults_per_call = -1;
    if (bad)
        return kf_field_bad (why, size, side, "must be an object");
    *has = o != NULL;
    if (!o)
        return 0;
    char path[64];
#define S_PATH(f) (snprintf (path, sizeof path, "%s.%s", side, (f)), path)
    KF_FIELD_TRY (kf_field_num (o, "median_ns", S_PATH ("median_ns"), 0, HUGE_VAL, 0, &t->median_ns, why,
                  size));
    KF_FIELD_TRY (kf_field_num (o, "p10_ns", S_PATH ("p10_ns"), 0, HUGE_VAL, 0, &t->p10_ns, why, size));
    KF_FIELD_TRY (kf_field_num (o, "p90_ns", S_PATH ("p90_ns"), 0, HUGE_VAL, 0, &t->p90_ns, why, size));
    KF_FIELD_TRY (kf_field_count (o, "samples", S_PATH ("samples"), &t->samples, why, size));
    KF_FIELD_TRY (kf_field_count (o, "calls_per_sample", S_PATH ("calls_per_sample"), &t->calls_per_sample,
                    why, size));
    KF_FIELD_TRY (kf_field_str (o, "kind", S_PATH ("kind"), &t->kind, why, size));
    KF_FIELD_TRY (kf_field_num (o, "minor_faults_per_call", S_PATH ("minor_faults_per_call"), 0,
                  HUGE_VAL, -1, &t->minor_faults_per_call, why, size));
#undef S_PATH
    return 0;
}

static int
s_correctness (json_t *result, kf_eval_result_t *r, char *why, size_t size)
{
    bool bad = false;
    json_t *o = kf_field_object (result, "correctness", &bad);
    if (bad)
        return kf_field_bad (why, size, "correctness", "must be an object");
    r->has_correctness = o != NULL;
    if (!o)
        return 0;
    KF_FIELD_TRY (kf_field_count (o, "sets", "correctness.sets", &r->correctness.sets, why, size));
    KF_FIELD_TRY (kf_field_count (o, "cases", "correctness.cases", &r->correctness.cases, why, size));
    KF_FIELD_TRY (kf_field_count (o, "nonfinite_mismatch", "correctness.nonfinite_mismatch",
                    &r->correctness.nonfinite_mismatch, why, size));
    KF_FIELD_TRY (kf_field_num (o, "match_fraction", "correctness.match_fraction", 0, 1, 0,
                  &r->correctness.match_fraction, why, size));
    /* The worker writes KF_EVAL_ERR_INFINITE for an error that is not finite. */
    KF_FIELD_TRY (kf_field_num (o, "max_abs_err", "correctness.max_abs_err", 0, HUGE_VAL, 0,
                  &r->correctness.max_abs_err, why, size));
    KF_FIELD_TRY (kf_field_num (o, "max_rel_err", "correctness.max_rel_err", 0, HUGE_VAL, 0,
                  &r->correctness.max_rel_err, why, size));
    /* Rounding may carry a cosine a hair past 1. */
    KF_FIELD_TRY (kf_field_num (o, "cosine", "correctness.cosine", -1.0001, 1.0001, 0,
                  &r->correctness.cosine, why, size));
    return 0;
}

static int
s_roofline (json_t *result, kf_eval_result_t *r, char *why, size_t size)
{
    bool bad = false;
    json_t *bw = kf_field_object (result, "bandwidth", &bad);
    if (bad)
        return kf_field_bad (why, size, "bandwidth", "must be an object");
    json_t *cp = kf_field_object (result, "compute", &bad);
    if (bad)
        return kf_field_bad (why, size, "compute", "must be an object");
    r->has_bandwidth = bw != NULL;
    r->has_compute = cp != NULL;
    KF_FIELD_TRY (kf_field_num (bw, "bytes", "bandwidth.bytes", 0, HUGE_VAL, 0, &r->bytes, why, size));
    KF_FIELD_TRY (kf_field_num (bw, "copy_gbs", "bandwidth.copy_gbs", 0, HUGE_VAL, 0, &r->copy_gbs, why,
                  size));
    KF_FIELD_TRY (kf_field_bool (bw, "roofline_applies", "bandwidth.roofline_applies", &r->roofline_applies,
                   why, size));
    KF_FIELD_TRY (kf_field_num (cp, "flops", "compute.flops", 0, HUGE_VAL, 0, &r->flops, why, size));
    KF_FIELD_TRY (kf_field_num (cp, "peak_gflops", "compute.peak_gflops", 0, HUGE_VAL, 0, &r->peak_gflops,
                  why, size));
    KF_FIELD_TRY (kf_field_bool (result, "audit", "audit", &r->audit, why, size));
    KF_FIELD_TRY (kf_field_str (result, "audit_reason", "audit_reason", &r->audit_reason, why, size));
    return 0;
}

/* host_load (docs/evaluation.md): the host's load while it was timed. */
static int
s_load (json_t *result, kf_eval_result_t *r, char *why, size_t size)
{
    bool bad = false;
    json_t *o = kf_field_object (result, "host_load", &bad);
    if (bad)
        return kf_field_bad (why, size, "host_load", "must be an object");
    r->has_load = o != NULL;
    r->load_runnable = r->load_others_share = r->load_wait_share = -1;
    if (!o)
        return 0;
    int64_t cpus = 0;
    KF_FIELD_TRY (kf_field_count (o, "cpus", "host_load.cpus", &cpus, why, size));
    r->load_cpus = (double) cpus;
    KF_FIELD_TRY (kf_field_num (o, "runnable_others", "host_load.runnable_others", 0, HUGE_VAL,
                  -1, &r->load_runnable, why, size));
    KF_FIELD_TRY (kf_field_num (o, "others_cpu_share", "host_load.others_cpu_share", 0, 1, -1,
                  &r->load_others_share, why, size));
    int64_t allowed = 0;
    KF_FIELD_TRY (kf_field_count (o, "cpus_allowed", "host_load.cpus_allowed", &allowed, why,
                                  size));
    r->load_cpus_allowed = (double) allowed;
    KF_FIELD_TRY (kf_field_bool (o, "undisturbed_only", "host_load.undisturbed_only",
                                 &r->load_undisturbed, why, size));
    KF_FIELD_TRY (kf_field_num (o, "cand_wait_share", "host_load.cand_wait_share", 0, HUGE_VAL,
                                -1, &r->load_wait_share, why, size));
    return 0;
}

/* one_core (docs/evaluation.md): a threaded kernel's own time with its
 * process held to one CPU. */
static int
s_one_core (json_t *result, kf_eval_result_t *r, char *why, size_t size)
{
    bool bad = false;
    json_t *o = kf_field_object (result, "one_core", &bad);
    if (bad)
        return kf_field_bad (why, size, "one_core", "must be an object");
    r->has_one_core = o != NULL;
    if (!o)
        return 0;
    KF_FIELD_TRY (kf_field_num (o, "median_ns", "one_core.median_ns", 0, HUGE_VAL, 0,
                                &r->one_core_ns, why, size));
    KF_FIELD_TRY (kf_field_num (o, "cpu_per_wall", "one_core.cpu_per_wall", 0, HUGE_VAL, 0,
                                &r->one_core_cpu_per_wall, why, size));
    return 0;
}

/* A sweep's table: an array of objects, each with its params object. */
static int
s_sweep (json_t *result, kf_eval_result_t *r, char *why, size_t size)
{
    json_t *configs = json_object_get (result, "configs");
    if (configs && !json_is_null (configs)) {
        if (!json_is_array (configs))
            return kf_field_bad (why, size, "configs", "must be an array");
        size_t i;
        json_t *c;
        json_array_foreach (configs, i, c) {
            char path[48];
            snprintf (path, sizeof path, "configs[%zu]", i);
            if (!json_is_object (c) || !json_is_object (json_object_get (c, "params")))
                return kf_field_bad (why, size, path, "must be an object with a params object");
        }
        r->configs = configs;
        r->n_configs = json_array_size (configs);
    }
    bool bad = false;
    r->best_config = kf_field_object (result, "best_config", &bad);
    if (bad)
        return kf_field_bad (why, size, "best_config", "must be an object (the params) or null");
    const char *fidelity;
    KF_FIELD_TRY (kf_field_str (result, "fidelity", "fidelity", &fidelity, why, size));
    if (*fidelity && strcmp (fidelity, "screen") && strcmp (fidelity, "full"))
        return kf_field_bad (why, size, "fidelity", "must be \"screen\" or \"full\"");
    snprintf (r->fidelity, sizeof r->fidelity, "%s", fidelity);
    return 0;
}

static int
s_decode (json_t *json, void *self, char *why, size_t size)
{
    kf_eval_result_t *r = self;
    const char *verdict;
    if (kf_field_str (json, "verdict", "verdict", &verdict, why, size) <= 0)
        return *why ? -1 : kf_field_bad (why, size, "verdict", "missing");
    size_t known = 0;
    while (known < sizeof s_verdicts / sizeof s_verdicts[0]
           && strcmp (verdict, s_verdicts[known]))
        known++;
    if (known == sizeof s_verdicts / sizeof s_verdicts[0])
        return kf_field_bad (why, size, "verdict", "\"%.40s\" is not a verdict", verdict);
    snprintf (r->verdict, sizeof r->verdict, "%s", verdict);
    KF_FIELD_TRY (kf_field_str (json, "detail", "detail", &r->detail, why, size));
    int has = kf_field_num (json, "speedup", "speedup", 0, HUGE_VAL, 0, &r->speedup, why, size);
    KF_FIELD_TRY (has);
    r->has_speedup = has == 1;
    has = kf_field_num (json, "speedup_compiled", "speedup_compiled", 0, HUGE_VAL, 0,
                 &r->speedup_compiled, why, size);
    KF_FIELD_TRY (has);
    r->has_speedup_compiled = has == 1;
    KF_FIELD_TRY (s_timing (json, "candidate", &r->has_candidate, &r->candidate, why, size));
    KF_FIELD_TRY (s_timing (json, "reference", &r->has_reference, &r->reference, why, size));
    KF_FIELD_TRY (s_correctness (json, r, why, size));
    KF_FIELD_TRY (s_roofline (json, r, why, size));
    KF_FIELD_TRY (kf_field_num (json, "wall_s", "wall_s", 0, HUGE_VAL, 0, &r->wall_s, why, size));
    KF_FIELD_TRY (s_sweep (json, r, why, size));
    KF_FIELD_TRY (s_load (json, r, why, size));
    KF_FIELD_TRY (s_one_core (json, r, why, size));
    return 0;
}

KF_FIELD_CODEC (kf_eval_result, kf_eval_result_t, s_decode, NULL)

/* Sets OBJ[KEY] to the number X, or null when !HAS. */
static void
s_set_num (json_t *obj, const char *key, bool has, double x)
{
    json_object_set_new (obj, key, has ? json_real (x) : json_null ());
}

/* OBJ[KEY] as a copy of what it holds, an object either way. */
static json_t *
s_sub (json_t *obj, const char *key)
{
    json_t *sub = json_object_get (obj, key);
    sub = json_is_object (sub) ? json_copy (sub) : json_object ();
    json_object_set_new (obj, key, sub);
    return sub;
}

static void
s_encode_timing (json_t *out, const char *side, const kf_eval_timing_t *t)
{
    json_t *o = s_sub (out, side);
    json_object_set_new (o, "median_ns", json_real (t->median_ns));
    if (t->p10_ns > 0 || t->p90_ns > 0) {
        json_object_set_new (o, "p10_ns", json_real (t->p10_ns));
        json_object_set_new (o, "p90_ns", json_real (t->p90_ns));
    }
    if (t->samples > 0 || t->calls_per_sample > 0) {
        json_object_set_new (o, "samples", json_integer (t->samples));
        json_object_set_new (o, "calls_per_sample", json_integer (t->calls_per_sample));
    }
    if (t->kind && *t->kind)
        json_object_set_new (o, "kind", json_string (t->kind));
    if (t->minor_faults_per_call >= 0)
        json_object_set_new (o, "minor_faults_per_call", json_real (t->minor_faults_per_call));
}

json_t *
kf_eval_result_encode (const kf_eval_result_t *self)
{
    json_t *out = json_is_object (self->json) ? json_copy (self->json) : json_object ();
    json_object_set_new (out, "verdict", json_string (self->verdict));
    json_object_set_new (out, "detail", json_string (self->detail ? self->detail : ""));
    s_set_num (out, "speedup", self->has_speedup, self->speedup);
    if (self->has_speedup_compiled)
        json_object_set_new (out, "speedup_compiled", json_real (self->speedup_compiled));
    if (self->has_candidate)
        s_encode_timing (out, "candidate", &self->candidate);
    if (self->has_reference)
        s_encode_timing (out, "reference", &self->reference);
    if (self->has_correctness) {
        json_t *c = s_sub (out, "correctness");
        json_object_set_new (c, "sets", json_integer (self->correctness.sets));
        if (self->correctness.cases > 0)
            json_object_set_new (c, "cases", json_integer (self->correctness.cases));
        json_object_set_new (c, "match_fraction", json_real (self->correctness.match_fraction));
        json_object_set_new (c, "max_abs_err", json_real (self->correctness.max_abs_err));
        json_object_set_new (c, "max_rel_err", json_real (self->correctness.max_rel_err));
        json_object_set_new (c, "cosine", json_real (self->correctness.cosine));
        json_object_set_new (c, "nonfinite_mismatch",
                             json_integer (self->correctness.nonfinite_mismatch));
    }
    if (self->has_bandwidth) {
        json_t *bw = s_sub (out, "bandwidth");
        json_object_set_new (bw, "bytes", json_real (self->bytes));
        json_object_set_new (bw, "copy_gbs", json_real (self->copy_gbs));
        json_object_set_new (bw, "roofline_applies", json_boolean (self->roofline_applies));
    }
    if (self->has_compute) {
        json_t *cp = s_sub (out, "compute");
        s_set_num (cp, "flops", self->flops > 0, self->flops);
        json_object_set_new (cp, "peak_gflops", json_real (self->peak_gflops));
    }
    if (self->audit || json_object_get (out, "audit"))
        json_object_set_new (out, "audit", json_boolean (self->audit));
    if (self->audit_reason && *self->audit_reason)
        json_object_set_new (out, "audit_reason", json_string (self->audit_reason));
    if (self->wall_s > 0)
        json_object_set_new (out, "wall_s", json_real (self->wall_s));
    if (self->has_load) {
        json_t *l = s_sub (out, "host_load");
        json_object_set_new (l, "cpus", json_integer ((json_int_t) self->load_cpus));
        if (self->load_runnable >= 0)
            json_object_set_new (l, "runnable_others", json_real (self->load_runnable));
        if (self->load_others_share >= 0)
            json_object_set_new (l, "others_cpu_share", json_real (self->load_others_share));
        if (self->load_cpus_allowed > 0)
            json_object_set_new (l, "cpus_allowed",
                                 json_integer ((json_int_t) self->load_cpus_allowed));
    }
    if (*self->fidelity)
        json_object_set_new (out, "fidelity", json_string (self->fidelity));
    if (self->configs)
        json_object_set (out, "configs", self->configs);
    if (self->best_config)
        json_object_set (out, "best_config", self->best_config);
    return out;
}
