/*  test_msg_eval.c - the evaluate result's decoder and encoder
 *  (proto/kf_msg_eval.c): every field of a full result read into the
 *  struct, each missing or mistyped field refused with its name, ranges
 *  refused, and what the encoder writes decoded back to the same struct. */
#include "../kf_test.h"
#include "kf_msg_eval.h"
#include <math.h>
#include <string.h>

static const char *s_full =
    "{\"verdict\": \"correct\", \"detail\": \"all 5 sets within tolerance\","
    " \"correctness\": {\"sets\": 5, \"cases\": 2, \"match_fraction\": 1.0,"
    "  \"max_abs_err\": 1e-7, \"max_rel_err\": 2e-6, \"cosine\": 0.99999,"
    "  \"nonfinite_mismatch\": 0},"
    " \"candidate\": {\"median_ns\": 1000.5, \"p10_ns\": 990, \"p90_ns\": 1100,"
    "  \"samples\": 12, \"calls_per_sample\": 64, \"minor_faults_per_call\": 2563.5},"
    " \"reference\": {\"median_ns\": 3000, \"kind\": \"pytorch-eager\"},"
    " \"speedup\": 2.998, \"speedup_compiled\": 1.5,"
    " \"bandwidth\": {\"bytes\": 4096, \"copy_gbs\": 20.5, \"roofline_applies\": true,"
    "  \"candidate_gbs\": 4.1},"
    " \"compute\": {\"flops\": null, \"peak_gflops\": 300},"
    " \"audit\": true, \"audit_reason\": \"past the copy bandwidth\","
    " \"wall_s\": 1.25, \"fidelity\": \"screen\","
    " \"configs\": [{\"params\": {\"BLOCK\": 64}, \"frame\": 0},"
    "  {\"params\": {\"BLOCK\": 128}, \"frame\": 1}],"
    " \"best_config\": {\"BLOCK\": 128}, \"tuning\": {\"configs\": 2},"
    " \"phases_s\": {\"load\": 0.1},"
    " \"host_load\": {\"cpus\": 2, \"runnable_others\": 1.6, \"runnable_others_max\": 3,"
    "  \"others_cpu_share\": 0.45, \"others_cpu_s\": 0.9, \"wall_s\": 1.0,"
    "  \"cpus_allowed\": 2, \"undisturbed_only\": true, \"cand_wait_share\": 0.3},"
    " \"one_core\": {\"median_ns\": 1900.0, \"cpu_per_wall\": 1.9, \"samples\": 5}}";

/* Decodes TEXT; returns the rc and leaves WHY. */
static int
s_decode (const char *text, kf_eval_result_t *r, char *why, size_t size)
{
    json_t *j = json_loads (text, 0, NULL);
    int rc = kf_eval_result_decode (j, r, why, size);
    json_decref (j);
    return rc;
}

/* The full result with FIELD (top level) replaced by VALUE (JSON text,
 * or NULL: deleted); expects a refusal naming WANT. */
static void
s_refused (const char *field, const char *value, const char *want)
{
    json_t *j = json_loads (s_full, 0, NULL);
    if (value)
        json_object_set_new (j, field, json_loads (value, JSON_DECODE_ANY, NULL));
    else
        json_object_del (j, field);
    kf_eval_result_t r;
    char why[300] = "";
    int rc = kf_eval_result_decode (j, &r, why, sizeof why);
    if (rc != -1 || !strstr (why, want))
        fprintf (stderr, "field %s = %s: rc %d, why \"%s\" (wanted \"%s\")\n", field,
                 value ? value : "(deleted)", rc, why, want);
    CHECK (rc == -1 && strstr (why, want));
    CHECK (r.json == NULL);
    json_decref (j);
}

static void
s_every_field (void)
{
    kf_eval_result_t r;
    char why[300] = "";
    CHECK (s_decode (s_full, &r, why, sizeof why) == 0);
    CHECK (why[0] == 0);
    CHECK (!strcmp (r.verdict, "correct"));
    CHECK (!strcmp (r.detail, "all 5 sets within tolerance"));
    CHECK (r.has_speedup && fabs (r.speedup - 2.998) < 1e-12);
    CHECK (r.has_speedup_compiled && r.speedup_compiled == 1.5);
    CHECK (r.has_correctness && r.correctness.sets == 5 && r.correctness.cases == 2);
    CHECK (r.correctness.match_fraction == 1.0 && r.correctness.max_abs_err == 1e-7);
    CHECK (r.correctness.max_rel_err == 2e-6 && r.correctness.cosine == 0.99999);
    CHECK (r.correctness.nonfinite_mismatch == 0);
    CHECK (r.has_candidate && r.candidate.median_ns == 1000.5 && r.candidate.p10_ns == 990);
    CHECK (r.candidate.p90_ns == 1100 && r.candidate.samples == 12);
    CHECK (r.candidate.calls_per_sample == 64 && !strcmp (r.candidate.kind, ""));
    CHECK (r.has_reference && r.reference.median_ns == 3000);
    CHECK (!strcmp (r.reference.kind, "pytorch-eager"));
    CHECK (r.has_bandwidth && r.bytes == 4096 && r.copy_gbs == 20.5 && r.roofline_applies);
    CHECK (r.has_compute && r.flops == 0 && r.peak_gflops == 300);
    CHECK (r.audit && !strcmp (r.audit_reason, "past the copy bandwidth"));
    CHECK (r.wall_s == 1.25 && !strcmp (r.fidelity, "screen"));
    CHECK (r.n_configs == 2 && json_is_array (r.configs));
    CHECK (json_integer_value (json_object_get (r.best_config, "BLOCK")) == 128);
    /* The host's load over the timing (round 5: outcomes timed beside a
     * CI suite said nothing of it). */
    CHECK (r.has_load && r.load_cpus == 2 && r.load_runnable == 1.6);
    CHECK (r.load_others_share == 0.45);
    /* Round 16: the CPUs the candidate could run on travel with the load. */
    CHECK (r.load_cpus_allowed == 2 && r.load_undisturbed);
    CHECK (r.load_wait_share == 0.3);
    /* What the spec does not name stays in the JSON, for storage. */
    CHECK (json_is_object (json_object_get (r.json, "tuning")));

    /* The encoder's output decodes to the same struct. */
    json_t *enc = kf_eval_result_encode (&r);
    kf_eval_result_t back;
    CHECK (kf_eval_result_decode (enc, &back, why, sizeof why) == 0);
    CHECK (!strcmp (back.verdict, r.verdict) && !strcmp (back.detail, r.detail));
    CHECK (back.speedup == r.speedup && back.has_speedup_compiled);
    CHECK (back.candidate.median_ns == r.candidate.median_ns);
    CHECK (back.candidate.samples == 12 && back.reference.median_ns == 3000);
    CHECK (back.candidate.minor_faults_per_call == 2563.5
           && back.reference.minor_faults_per_call == -1);
    CHECK (!strcmp (back.reference.kind, "pytorch-eager"));
    CHECK (back.correctness.sets == 5 && back.correctness.cosine == r.correctness.cosine);
    CHECK (back.bytes == 4096 && back.roofline_applies && back.peak_gflops == 300);
    CHECK (back.audit && !strcmp (back.audit_reason, r.audit_reason));
    CHECK (back.wall_s == 1.25 && !strcmp (back.fidelity, "screen") && back.n_configs == 2);
    CHECK (json_equal (back.best_config, r.best_config));
    CHECK (back.has_load && back.load_runnable == 1.6 && back.load_cpus == 2);
    CHECK (back.load_cpus_allowed == 2);
    CHECK (json_is_object (json_object_get (enc, "phases_s")));
    kf_eval_result_free (&back);
    json_decref (enc);
    kf_eval_result_free (&r);
    kf_eval_result_free (&r);   /* idempotent */
    CHECK (r.json == NULL);
}

/* A verdict made by the worker itself (timeout, crash): the encoder from
 * a struct with no JSON writes verdict, detail and a null speedup. */
static void
s_worker_verdict (void)
{
    kf_eval_result_t v;
    memset (&v, 0, sizeof v);
    snprintf (v.verdict, sizeof v.verdict, "timeout");
    v.detail = "evaluation exceeded the 10 s limit";
    json_t *enc = kf_eval_result_encode (&v);
    CHECK (!strcmp (json_string_value (json_object_get (enc, "verdict")), "timeout"));
    CHECK (json_is_null (json_object_get (enc, "speedup")));
    CHECK (json_object_size (enc) == 3);
    kf_eval_result_t r;
    char why[300];
    CHECK (kf_eval_result_decode (enc, &r, why, sizeof why) == 0);
    CHECK (!r.has_speedup && !r.has_candidate && !r.has_correctness && r.n_configs == 0);
    CHECK (!r.best_config && r.fidelity[0] == 0 && r.audit_reason[0] == 0);
    kf_eval_result_free (&r);
    json_decref (enc);
    /* The fault handler's result, verdict and detail only, is whole. */
    CHECK (s_decode ("{\"verdict\": \"crashed\", \"detail\": \"SIGSEGV\"}", &r, why,
                     sizeof why) == 0);
    kf_eval_result_free (&r);
}

static void
s_refusals (void)
{
    kf_eval_result_t r;
    char why[300];
    CHECK (kf_eval_result_decode (NULL, &r, why, sizeof why) == -1 && strstr (why, "object"));
    CHECK (s_decode ("[1]", &r, why, sizeof why) == -1);
    s_refused ("verdict", NULL, "result.verdict: missing");
    s_refused ("verdict", "5", "result.verdict: must be a string");
    s_refused ("verdict", "\"probed\"", "result.verdict: \"probed\" is not a verdict");
    s_refused ("detail", "[]", "result.detail: must be a string");
    s_refused ("speedup", "\"fast\"", "result.speedup: must be a number");
    s_refused ("speedup", "-1", "result.speedup: -1 is outside");
    s_refused ("speedup_compiled", "true", "result.speedup_compiled: must be a number");
    s_refused ("candidate", "3", "result.candidate: must be an object");
    s_refused ("candidate", "{\"median_ns\": \"1\"}", "result.candidate.median_ns: must be");
    s_refused ("candidate", "{\"median_ns\": -5}", "result.candidate.median_ns: -5 is outside");
    s_refused ("candidate", "{\"median_ns\": 5, \"minor_faults_per_call\": -1}",
               "result.candidate.minor_faults_per_call: -1 is outside");
    s_refused ("candidate", "{\"samples\": 1.5}", "result.candidate.samples: must be an integer");
    s_refused ("candidate", "{\"calls_per_sample\": -1}", "result.candidate.calls_per_sample");
    s_refused ("candidate", "{\"p10_ns\": {}}", "result.candidate.p10_ns");
    s_refused ("candidate", "{\"p90_ns\": false}", "result.candidate.p90_ns");
    s_refused ("reference", "\"x\"", "result.reference: must be an object");
    s_refused ("reference", "{\"kind\": 1}", "result.reference.kind: must be a string");
    s_refused ("correctness", "[]", "result.correctness: must be an object");
    s_refused ("correctness", "{\"match_fraction\": 1.5}", "result.correctness.match_fraction");
    s_refused ("correctness", "{\"sets\": \"5\"}", "result.correctness.sets");
    s_refused ("correctness", "{\"cases\": -2}", "result.correctness.cases");
    s_refused ("correctness", "{\"cosine\": 2}", "result.correctness.cosine");
    s_refused ("correctness", "{\"max_abs_err\": -1}", "result.correctness.max_abs_err");
    s_refused ("correctness", "{\"max_rel_err\": \"big\"}", "result.correctness.max_rel_err");
    s_refused ("correctness", "{\"nonfinite_mismatch\": true}",
               "result.correctness.nonfinite_mismatch");
    s_refused ("bandwidth", "1", "result.bandwidth: must be an object");
    s_refused ("bandwidth", "{\"bytes\": \"4096\"}", "result.bandwidth.bytes");
    s_refused ("bandwidth", "{\"copy_gbs\": -3}", "result.bandwidth.copy_gbs");
    s_refused ("bandwidth", "{\"roofline_applies\": 1}", "result.bandwidth.roofline_applies");
    s_refused ("compute", "true", "result.compute: must be an object");
    s_refused ("compute", "{\"flops\": \"many\"}", "result.compute.flops");
    s_refused ("compute", "{\"peak_gflops\": -1}", "result.compute.peak_gflops");
    s_refused ("audit", "\"yes\"", "result.audit: must be a boolean");
    s_refused ("audit_reason", "7", "result.audit_reason: must be a string");
    s_refused ("wall_s", "-0.5", "result.wall_s");
    s_refused ("fidelity", "\"half\"", "result.fidelity: must be \"screen\" or \"full\"");
    s_refused ("fidelity", "1", "result.fidelity: must be a string");
    s_refused ("configs", "{}", "result.configs: must be an array");
    s_refused ("configs", "[{\"frame\": 0}]", "result.configs[0]: must be an object");
    s_refused ("configs", "[{\"params\": {}}, 3]", "result.configs[1]");
    s_refused ("best_config", "[64]", "result.best_config: must be an object");
    s_refused ("host_load", "[1]", "result.host_load: must be an object");
    s_refused ("host_load", "{\"runnable_others\": -1}", "result.host_load.runnable_others");
    s_refused ("host_load", "{\"others_cpu_share\": 1.5}", "result.host_load.others_cpu_share");
    s_refused ("host_load", "{\"cpus\": \"two\"}", "result.host_load.cpus");
    s_refused ("host_load", "{\"cand_wait_share\": -0.5}", "result.host_load.cand_wait_share");
    s_refused ("host_load", "{\"undisturbed_only\": 1}", "result.host_load.undisturbed_only");
    s_refused ("host_load", "{\"cpus_allowed\": 1.5}", "result.host_load.cpus_allowed");
    s_refused ("one_core", "[1]", "result.one_core: must be an object");
    s_refused ("one_core", "{\"median_ns\": -1}", "result.one_core.median_ns");
    s_refused ("one_core", "{\"cpu_per_wall\": \"two\"}", "result.one_core.cpu_per_wall");
    /* Optional fields may be null or absent. */
    json_t *j = json_loads (s_full, 0, NULL);
    json_object_set_new (j, "speedup", json_null ());
    json_object_set_new (j, "best_config", json_null ());
    json_object_del (j, "configs");
    json_object_del (j, "correctness");
    CHECK (kf_eval_result_decode (j, &r, why, sizeof why) == 0);
    CHECK (!r.has_speedup && r.speedup == 0 && !r.best_config && r.n_configs == 0);
    CHECK (!r.has_correctness);
    json_object_del (j, "host_load");
    kf_eval_result_free (&r);
    CHECK (kf_eval_result_decode (j, &r, why, sizeof why) == 0);
    CHECK (!r.has_load && r.load_runnable == -1);
    CHECK (r.has_one_core && r.one_core_ns == 1900.0 && r.one_core_cpu_per_wall == 1.9);
    kf_eval_result_free (&r);
    json_decref (j);
}

int
main (void)
{
    s_every_field ();
    s_worker_verdict ();
    s_refusals ();
    return kf_test_done ("test_msg_eval");
}
