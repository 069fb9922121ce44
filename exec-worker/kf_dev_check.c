/*  kf_dev_check.c - the correctness pass of the OpenCL and Level Zero
 *  judges, written once above their device operations (kf_dev_ops.h),
 *  and the timed part of their result.
 *
 *  Per set: inputs drawn on the host; the reference run (a host C
 *  reference on a copy of them, so whatever it does to its inputs
 *  cannot reach the candidate's; a device reference on its own device
 *  buffers, outputs poisoned first) and its outputs read back; then the
 *  candidate's inputs and poisoned outputs written into the file shared
 *  with its process, one call there, the tensors handed back, and the
 *  first failure deciding: the runner's report, inputs changed, a
 *  canary, the outputs.
 */
#include "kf_dev_ops.h"
#include "kf_eval_channel.h"

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

int
kf_dev_reference_set (kf_dev_judge_t *j, uint64_t seed, int set)
{
    long rc = 0;
    for (int i = 0; i < j->n_in; i++)
        kf_eval_fill (json_object_get (j->in[i].spec, "dist"), j->in[i].dtype, j->in_h[i],
                      j->in[i].numel, kf_eval_input_seed (seed, set, i));
    if (j->ref_fn) {
        for (int i = 0; i < j->n_in; i++)
            memcpy (j->back_h[i], j->in_h[i], j->in[i].bytes);
        for (int o = 0; o < j->n_out; o++)
            kf_eval_poison (j->out[o].dtype, j->ref_h[o], j->out[o].numel);
    }
    else {
        for (int i = 0; i < j->n_in; i++)
            if ((rc = j->ops->copy_in (j->dev, i, j->in_h[i], j->in[i].bytes)))
                return s_harness (j, rc, "copying inputs to the device");
        for (int o = 0; o < j->n_out; o++)
            if ((rc = j->ops->copy_in (j->dev, j->n_in + o, j->poison_h[o], j->out[o].bytes)))
                return s_harness (j, rc, "poisoning outputs");
    }
    int st;
    double t0 = kf_eval_now ();
    if (j->ref_fn) {
        kf_eval_set_phase ('R');
        st = j->ref_fn (j->in_t, j->n_in, j->ref_t, j->n_out, j->host_ctx) ? KF_DEV_INCORRECT
                                                                          : KF_DEV_OK;
        kf_eval_set_phase ('H');
    }
    else
        st = j->ops->launch_ref (j->dev, 1, &rc);
    j->ref_s += kf_eval_now () - t0;
    j->ref_calls++;
    if (st) {
        if (st != KF_DEV_REF_FAILED)
            snprintf (j->detail, j->detail_size, "reference failed on set %d%s%s", set,
                      rc ? ": " : "", rc ? j->ops->err (rc) : " (kf_forward returned non-zero)");
        return KF_DEV_REF_FAILED;
    }
    if (!j->ref_fn)
        for (int o = 0; o < j->n_out; o++)
            if ((rc = j->ops->copy_out (j->dev, j->n_in + o, j->ref_h[o], j->out[o].bytes)))
                return s_harness (j, rc, "reading reference outputs");
    return KF_DEV_OK;
}

int
kf_dev_candidate_checks (kf_dev_judge_t *j, const char *when)
{
    int st = kf_dev_share_check (j->share, j->in_h, when);
    if (st)
        return st;
    int bad = 0;
    char ignored[512];
    kf_dev_share_outputs (j->share, j->cand_h);
    for (int o = 0; o < j->n_out; o++)
        if (kf_eval_compare_output (j->tol, j->worst, &j->out[o], j->cand_h[o], j->ref_h[o],
                                    when, bad ? ignored : j->detail,
                                    bad ? sizeof ignored : j->detail_size))
            bad = 1;
    return bad ? KF_DEV_INCORRECT : KF_DEV_OK;
}

int
kf_dev_candidate_set (kf_dev_judge_t *j, int set)
{
    char when[32];
    snprintf (when, sizeof when, "set %d", set);
    kf_dev_share_fill (j->share, j->in_h, j->poison_h);
    double wall;
    int st = kf_dev_share_call (j->share, 1, &wall, when);
    if (!st)
        st = kf_dev_share_hand (j->share, true, when);
    j->worst->sets = set + 1;
    return st ? st : kf_dev_candidate_checks (j, when);
}

void
kf_dev_timing_result (const kf_dev_judge_t *j, const kf_eval_timing_t *t, double copy_gbs,
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
    json_object_set_new (result, "protocol", kf_eval_protocol_json (t));
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
