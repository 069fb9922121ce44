/*  kf_dev_check.c - the OpenCL and Level Zero judges' steps of a
 *  correctness set, run by the one per-set loop every judge shares
 *  (kf_eval_set.c), above their device operations (kf_dev_ops.h); the
 *  sets kept for the timing; and the timed part of their result.
 *
 *  Per set: inputs drawn on the host; the reference run (a host C
 *  reference on a copy of them, so whatever it does to its inputs
 *  cannot reach the candidate's; a device reference on its own device
 *  buffers, outputs poisoned first) and its outputs read back; then the
 *  candidate's inputs and poisoned outputs written into variant 0 of
 *  the file shared with its process, one call there, the tensors handed
 *  back, and the first failure deciding: the runner's report, inputs
 *  changed, a canary, the outputs.
 */
#include "kf_dev_ops.h"
#include "kf_eval_channel.h"
#include "kf_eval_set.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
s_harness (kf_dev_judge_t *j, long rc, const char *what)
{
    snprintf (j->detail, j->detail_size, "harness: %s: %s", what, j->ops->err (rc));
    return KF_DEV_HARNESS;
}

int
kf_dev_host_tensors (kf_dev_judge_t *j, json_t *task, kf_eval_spec_t *in, kf_eval_spec_t *out,
                     const char ***names, double **values, kf_ctx_t *ctx)
{
    json_t *ins = json_object_get (task, "inputs");
    json_t *outs = json_object_get (task, "outputs");
    j->n_in = (int) json_array_size (ins);
    j->n_out = (int) json_array_size (outs);
    if (j->n_out < 1 || j->n_in > KF_DEV_MAX_TENSORS || j->n_out > KF_DEV_MAX_TENSORS) {
        snprintf (j->detail, j->detail_size, "task: need 1 to 32 outputs and at most 32 inputs");
        return KF_DEV_REF_FAILED;
    }
    for (int i = 0; i < j->n_in; i++) {
        if (kf_eval_spec (&in[i], json_array_get (ins, (size_t) i), j->detail, j->detail_size))
            return KF_DEV_REF_FAILED;
        size_t n = in[i].bytes ? in[i].bytes : 1;
        if (!(j->in_h[i] = malloc (n)) || !(j->back_h[i] = malloc (n))) {
            snprintf (j->detail, j->detail_size, "harness: out of memory for inputs");
            return KF_DEV_HARNESS;
        }
        kf_eval_tensor (&j->in_t[i], &in[i], j->back_h[i]);
    }
    for (int o = 0; o < j->n_out; o++) {
        if (kf_eval_spec (&out[o], json_array_get (outs, (size_t) o), j->detail, j->detail_size))
            return KF_DEV_REF_FAILED;
        size_t n = out[o].bytes ? out[o].bytes : 1;
        if (!(j->ref_h[o] = malloc (n)) || !(j->cand_h[o] = malloc (n))
            || !(j->poison_h[o] = malloc (n))) {
            snprintf (j->detail, j->detail_size, "harness: out of memory for outputs");
            return KF_DEV_HARNESS;
        }
        kf_eval_poison (out[o].dtype, j->poison_h[o], out[o].numel);
        kf_eval_tensor (&j->ref_t[o], &out[o], j->ref_h[o]);
    }
    json_t *scalars = json_object_get (task, "scalars");
    size_t n_scalars = json_object_size (scalars);
    *names = calloc (n_scalars + 1, sizeof **names);
    *values = calloc (n_scalars + 1, sizeof **values);
    if (!*names || !*values) {
        snprintf (j->detail, j->detail_size, "harness: out of memory for scalars");
        return KF_DEV_HARNESS;
    }
    const char *key;
    json_t *value;
    json_object_foreach (scalars, key, value) {
        (*names)[ctx->n_scalars] = key;
        (*values)[ctx->n_scalars++] = json_number_value (value);
    }
    ctx->backend = KF_BACKEND_HOST;
    ctx->scalar_names = *names;
    ctx->scalars = *values;
    return KF_DEV_OK;
}

//  The steps of a correctness set (kf_eval_set.h) for kf_eval_set_run.

static int
s_inputs (void *arg, int set)
{
    kf_dev_judge_t *j = arg;
    for (int i = 0; i < j->n_in; i++)
        kf_eval_fill (json_object_get (j->in[i].spec, "dist"), j->in[i].dtype, j->in_h[i],
                      j->in[i].numel, kf_eval_input_seed (j->seed, set, i));
    return KF_DEV_OK;
}

//  A host reference gets a copy of the inputs, so whatever it does to
//  them cannot reach the candidate's; a device reference its own device
//  buffers, outputs poisoned.
static int
s_ref_stage (void *arg)
{
    kf_dev_judge_t *j = arg;
    long rc;
    if (j->ref_fn) {
        for (int i = 0; i < j->n_in; i++)
            memcpy (j->back_h[i], j->in_h[i], j->in[i].bytes);
        for (int o = 0; o < j->n_out; o++)
            kf_eval_poison (j->out[o].dtype, j->ref_h[o], j->out[o].numel);
        return KF_DEV_OK;
    }
    for (int i = 0; i < j->n_in; i++)
        if ((rc = j->ops->copy_in (j->dev, i, j->in_h[i], j->in[i].bytes)))
            return s_harness (j, rc, "copying inputs to the device");
    for (int o = 0; o < j->n_out; o++)
        if ((rc = j->ops->copy_in (j->dev, j->n_in + o, j->poison_h[o], j->out[o].bytes)))
            return s_harness (j, rc, "poisoning outputs");
    return KF_DEV_OK;
}

static int
s_ref_call (void *arg, const char *when)
{
    kf_dev_judge_t *j = arg;
    long rc = 0;
    int st;
    if (j->ref_fn) {
        kf_eval_set_phase ('R');
        st = j->ref_fn (j->in_t, j->n_in, j->ref_t, j->n_out, j->host_ctx) ? KF_DEV_INCORRECT
                                                                          : KF_DEV_OK;
        kf_eval_set_phase ('H');
    }
    else
        st = j->ops->launch_ref (j->dev, 1, &rc);
    if (!st)
        return KF_DEV_OK;
    if (st != KF_DEV_REF_FAILED)
        snprintf (j->detail, j->detail_size, "reference failed on %s%s%s", when, rc ? ": " : "",
                  rc ? j->ops->err (rc) : " (kf_forward returned non-zero)");
    return KF_DEV_REF_FAILED;
}

//  A device reference's outputs read back.
static int
s_ref_keep (void *arg)
{
    kf_dev_judge_t *j = arg;
    long rc;
    for (int o = 0; !j->ref_fn && o < j->n_out; o++)
        if ((rc = j->ops->copy_out (j->dev, j->n_in + o, j->ref_h[o], j->out[o].bytes)))
            return s_harness (j, rc, "reading reference outputs");
    return KF_DEV_OK;
}

//  A probe's look at the reference alone: are its outputs degenerate
//  (docs/evaluation.md)?
static int
s_fingerprint (void *arg)
{
    kf_dev_judge_t *j = arg;
    uint64_t h = 0;
    for (int i = 0; i < j->n_in; i++)
        h = kf_eval_hash (j->in_h[i], j->in[i].bytes, h);
    kf_eval_degen_inputs (j->degen, h);
    for (int o = 0; o < j->n_out; o++)
        kf_eval_degen_output (j->degen, o, &j->out[o], j->ref_h[o],
                              j->tol->atol_dtype[j->out[o].dtype]);
    kf_eval_degen_end_set (j->degen);
    return KF_DEV_OK;
}

static int
s_cand_stage (void *arg)
{
    kf_dev_judge_t *j = arg;
    kf_dev_share_fill (j->share, 0, j->in_h, j->poison_h);
    return KF_DEV_OK;
}

//  One call in the candidate's process, the tensors handed back.
static int
s_cand_call (void *arg, const char *when)
{
    kf_dev_judge_t *j = arg;
    double wall;
    int st = kf_dev_share_call (j->share, 1, &wall, when);
    return st ? st : kf_dev_share_hand (j->share, true, when);
}

static int
s_check_memory (void *arg, const char *when)
{
    kf_dev_judge_t *j = arg;
    return kf_dev_share_check (j->share, 0, j->in_h, when);
}

static int
s_compare_variant (kf_dev_judge_t *j, int v, void *const *ref, const char *when)
{
    int bad = 0;
    char ignored[512];
    kf_dev_share_outputs (j->share, v, j->cand_h);
    for (int o = 0; o < j->n_out; o++)
        if (kf_eval_compare_output (j->tol, j->worst, &j->out[o], j->cand_h[o], ref[o], when,
                                    bad ? ignored : j->detail,
                                    bad ? sizeof ignored : j->detail_size))
            bad = 1;
    return bad ? KF_DEV_INCORRECT : KF_DEV_OK;
}

static int
s_compare (void *arg, const char *when)
{
    kf_dev_judge_t *j = arg;
    return s_compare_variant (j, 0, j->ref_h, when);
}

int
kf_dev_candidate_checks (kf_dev_judge_t *j, int v, void *const *in, void *const *ref,
                         const char *when)
{
    int st = kf_dev_share_check (j->share, v, in, when);
    return st ? st : s_compare_variant (j, v, ref, when);
}

//  Set SET (just judged) kept for the timing when a variant waits for it.
static int
s_keep (kf_dev_judge_t *j, int set)
{
    if (set >= j->variants)
        return KF_DEV_OK;
    for (int t = 0; t < j->n_in + j->n_out; t++) {
        bool is_in = t < j->n_in;
        size_t bytes = is_in ? j->in[t].bytes : j->out[t - j->n_in].bytes;
        void **slot = is_in ? &j->var_in[set][t] : &j->var_ref[set][t - j->n_in];
        if (!*slot && !(*slot = malloc (bytes ? bytes : 1))) {
            snprintf (j->detail, j->detail_size, "harness: out of memory for the timing sets");
            return KF_DEV_HARNESS;
        }
        memcpy (*slot, is_in ? j->in_h[t] : j->ref_h[t - j->n_in], bytes);
    }
    return KF_DEV_OK;
}

int
kf_dev_correctness (kf_dev_judge_t *j, int sets)
{
    const kf_eval_set_ops_t ops = {
        .arg = j, .inputs = s_inputs, .ref_stage = s_ref_stage, .ref_call = s_ref_call,
        .ref_keep = s_ref_keep, .fingerprint = s_fingerprint, .cand_stage = s_cand_stage,
        .cand_call = s_cand_call, .check_memory = s_check_memory, .compare = s_compare
    };
    const kf_eval_set_t s = {
        .ops = &ops, .exported = false, .fingerprint = j->degen != NULL, .candidate = !j->probe,
        .count_warm = false, .ref_s = &j->ref_s, .ref_calls = &j->ref_calls, .worst = j->worst
    };
    j->variants = j->probe ? 0 : (int) j->share->layout.variants;
    int st = KF_DEV_OK;
    for (int set = 0; set < sets && !st; set++) {
        char when[32];
        snprintf (when, sizeof when, "set %d", set);
        if (!(st = kf_eval_set_run (&s, set, when)))
            st = s_keep (j, set);
    }
    return st;
}

void
kf_dev_judge_free (kf_dev_judge_t *j)
{
    for (int v = 0; v < KF_DEV_MAX_VARIANTS; v++)
        for (int t = 0; t < KF_DEV_MAX_TENSORS; t++) {
            free (j->var_in[v][t]);
            free (j->var_ref[v][t]);
        }
}

//  The timed part of RESULT from T: speedup (null when there is none),
//  candidate and reference timings, sync_overhead_ns, the protocol as
//  run, bandwidth (against COPY_GBS, the roofline applying above
//  CACHE_BYTES) and the audit.
static void
s_timing_result (const kf_dev_judge_t *j, const kf_eval_timing_t *t, double copy_gbs,
                 uint64_t cache_bytes, json_t *result)
{
    const double *ref_ns = t->ref_ns, *cand_ns = t->cand_ns;
    int samples = t->samples;
    double speedup = samples > 0 ? kf_eval_paired_speedup (ref_ns, cand_ns, samples) : -1;
    if (speedup < 0) {
        json_object_set_new (result, "speedup", json_null ());
        return;
    }
    json_object_set_new (result, "speedup", json_real (speedup));
    json_object_set_new (result, "candidate", kf_eval_timing_json (cand_ns, samples,
                                                                   t->cand_calls));
    json_object_set_new (result, "reference", kf_eval_timing_json (ref_ns, samples,
                                                                   t->ref_calls));
    json_object_set_new (result, "sync_overhead_ns", json_real (t->overhead_ns));
    json_t *protocol = kf_eval_protocol_json (t);
    json_object_set_new (protocol, "input_sets", json_integer (j->variants));
    json_object_set_new (result, "protocol", protocol);
    double bytes = 0;
    for (int i = 0; i < j->n_in; i++)
        bytes += (double) j->in[i].bytes;
    for (int o = 0; o < j->n_out; o++)
        bytes += (double) j->out[o].bytes;
    double cand_med = kf_eval_median (cand_ns, samples);
    double cand_gbs = cand_med > 0 ? bytes / cand_med : 0;
    bool applies = bytes > (double) cache_bytes;
    json_object_set_new (result, "bandwidth", json_pack (
        "{s:f, s:f, s:f, s:b}", "bytes", bytes, "candidate_gbs", cand_gbs,
        "copy_gbs", copy_gbs, "roofline_applies", applies));
    char audit[200] = "";
    if (applies && copy_gbs > 0 && cand_gbs > copy_gbs)
        snprintf (audit, sizeof audit, "moves its inputs and outputs at %.0f GB/s, above the "
                  "measured copy bandwidth of %.0f GB/s", cand_gbs, copy_gbs);
    else if (speedup > 10)
        snprintf (audit, sizeof audit, "%.1fx faster than the reference (over 10x)", speedup);
    json_object_set_new (result, "audit", json_boolean (audit[0] != 0));
    if (audit[0])
        json_object_set_new (result, "audit_reason", json_string (audit));
}

json_t *
kf_dev_result (kf_dev_judge_t *j, int st, const kf_eval_timing_t *t, double copy_gbs,
               uint64_t cache_bytes, json_t *device, const char *dir)
{
    if (st == KF_DEV_LOAD_FAILED || st == KF_DEV_REF_FAILED || st == KF_DEV_HARNESS) {
        kf_eval_write_verdict (dir, st == KF_DEV_LOAD_FAILED ? "load_failed"
                                    : st == KF_DEV_REF_FAILED ? "reference_failed"
                                                              : "harness_failed", j->detail);
        json_decref (device);
        return NULL;
    }
    const char *verdict = st == KF_DEV_OK ? "correct" : st == KF_DEV_CRASHED ? "crashed"
                                                                             : "incorrect";
    json_t *result = json_object ();
    json_object_set_new (result, "verdict", json_string (verdict));
    json_object_set_new (result, "detail", json_string (st == KF_DEV_OK ? "all checks passed"
                                                                        : j->detail));
    json_object_set_new (result, "correctness", kf_eval_correctness_json (j->worst));
    json_object_set_new (result, "device", device);
    json_object_set_new (result, "reference_on", json_string (j->ref_fn ? "host" : "device"));
    json_object_set_new (result, "isolation", kf_dev_share_isolation (j->share));
    if (st == KF_DEV_OK)
        s_timing_result (j, t, copy_gbs, cache_bytes, result);
    else
        json_object_set_new (result, "speedup", json_null ());
    return result;
}
