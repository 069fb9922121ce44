/*  kf_backend_cuda.c - the CUDA evaluation harness.
 *
 *  Runs inside the sandboxed evaluation child, like the host harness, and
 *  judges by the same rules (kf_eval_elem.h, kf_eval_judge_output), but
 *  on the device (kf_cuda_judge). As on the host, judge and candidate
 *  are two processes: this one holds the reference, the right outputs,
 *  the clock and the verdict; the candidate runs in the runner
 *  (kf_runner.h, `--eval-runner ... cuda:N`), a context of its own that
 *  maps only the kernels' inputs and the candidate's outputs, shared
 *  through a file descriptor (kf_cuda_share.h). Only a profile puts the
 *  candidate in this process (its verdict is never reported). Inputs
 *  are drawn on the device (or exported
 *  PyTorch data copied up once a set) into a staging buffer that each
 *  side's inputs are copied from on the device, and compared with it
 *  after every candidate call to prove they did not change; outputs are
 *  poisoned before every call (from a poison image kept on the device)
 *  and compared with the reference's on the device. Only figures cross
 *  the bus. The device is synchronised after the staging copies, so a
 *  kernel on a stream of the candidate's own cannot start before them.
 *  GPU memory has no guard pages, so every device buffer sits between two
 *  canary regions that are read back after each call; a write far outside
 *  faults on the device ("illegal memory access"), which the runtime
 *  reports at the next synchronisation and we turn into "crashed".
 *
 *  The files: this one (the child's main line: loading, the correctness
 *  pass - its sets run by kf_eval_set.c, the host's too, through this
 *  file's steps on the device - and the result), kf_cuda_tensors.c (buffers, staging and the checks
 *  on the device), kf_cuda_timing.c (its samples under the judges' one
 *  timing protocol, kf_eval_protocol.c), kf_cuda_probe.c
 *  (the device, its ceilings, the worker's probe); their shared state is
 *  kf_cuda_eval.h.
 *
 *  CUDA is reached only through kf_cuda_api (dlopen), so this file builds
 *  and links without a toolkit.
 */
#include "kf_backend.h"
#include "kf_cuda_eval.h"
#include "kf_eval_set.h"
#include "kf_refdata.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

kf_cuda_api_t *kf_cuda_eval_api;

const char *
kf_cuda_err (int rc)
{
    static char buf[256];
    return kf_cuda_api_error (kf_cuda_eval_api, rc, buf, sizeof buf);
}

//  Waits for all work on the device and collects any error, sticky
//  (illegal address, launch failure) or not (a bad launch configuration).
int
kf_cuda_settle (void)
{
    int rc = kf_cuda_eval_api->DeviceSynchronize ();
    int last = kf_cuda_eval_api->GetLastError ();
    return rc ? rc : last;
}

// --------------------------------------------------------------------------
//  The evaluation

//  A harness CUDA call that failed: the device, not a kernel, is at fault.
int
kf_cuda_harness (kf_cuda_eval_t *e, int rc, const char *what)
{
    if (rc == 0)
        return KF_CUDA_OK;
    snprintf (e->detail, sizeof e->detail, "harness: %s: %s", what, kf_cuda_err (rc));
    return KF_CUDA_HARNESS;
}

//  Calls FN once and waits for the device, all under PHASE, so a hang in
//  the kernel is blamed on the side that launched it.
static int
s_call (kf_cuda_eval_t *e, kf_cuda_forward_fn *fn, kf_tensor_t *out_t, char phase, int *cuda_rc)
{
    kf_eval_set_phase (phase);
    e->scratch.used = 0;
    int rc = fn (e->in_t, e->n_in, out_t, e->n_out, &e->ctx);
    *cuda_rc = kf_cuda_settle ();
    kf_eval_set_phase ('H');
    return rc;
}

//  What the runner said went wrong, as a verdict step.
static int
s_runner_failed (kf_cuda_eval_t *e, const kf_run_reply_t *reply, const char *when)
{
    if (reply->status == KF_RUN_RETURNED) {
        kf_eval_cand_returned (e->detail, sizeof e->detail, when, reply->rc, reply->detail);
        return KF_CUDA_INCORRECT;
    }
    snprintf (e->detail, sizeof e->detail, "%s: %s", when, reply->detail);
    return reply->status == KF_RUN_FAILED && strncmp (reply->detail, "harness: ", 9) == 0
           ? KF_CUDA_HARNESS : KF_CUDA_CRASHED;
}

int
kf_cuda_runner_calls (kf_cuda_eval_t *e, int calls, const char *when, double *ns)
{
    kf_run_reply_t reply;
    double wall_s, excess_ns;
    kf_eval_set_phase ('C');
    int rc = kf_runner_call (e->runner, (uint32_t) calls, e->ctx.scalars, e->ctx.n_scalars,
                             &wall_s, &reply);
    kf_eval_set_phase ('H');
    *ns = wall_s * 1e9;
    if (rc != 0)
        return s_runner_failed (e, &reply, when);
    int st = kf_cuda_after_answer (e, wall_s * 1e9, when, &excess_ns);
    *ns += excess_ns;
    return st;
}

int
kf_cuda_cand_call (kf_cuda_eval_t *e, const char *when)
{
    if (!e->runner) {
        int cuda_rc;
        int r = s_call (e, e->cand_fn, e->cand_t, 'C', &cuda_rc);
        if (cuda_rc) {
            snprintf (e->detail, sizeof e->detail, "%s: CUDA error in the candidate: %s",
                      when, kf_cuda_err (cuda_rc));
            return KF_CUDA_CRASHED;
        }
        if (r) {
            snprintf (e->detail, sizeof e->detail, "%s: candidate kf_forward returned %d", when, r);
            return KF_CUDA_INCORRECT;
        }
        return KF_CUDA_OK;
    }
    double ns;
    return kf_cuda_runner_calls (e, 1, when, &ns);
}

//  The CUDA judge's steps of a correctness set (kf_eval_set.h), on the
//  case's device buffers: inputs staged once, copied to each side's.
typedef struct {
    kf_cuda_eval_t *e;
    uint64_t seed;
} s_set_arg_t;

static int
s_set_inputs (void *arg, int set)
{
    s_set_arg_t *a = arg;
    kf_cuda_eval_t *e = a->e;
    const kf_eval_refdata_t *rd = e->rd;
    int st;
    if ((st = kf_cuda_draw_inputs (e, a->seed, set)))
        return st;
    if (rd) {
        e->ctx.n_scalars = rd->n_scalars;
        e->ctx.scalar_names = rd->name_ptrs;
        e->ctx.scalars = rd->values + (size_t) set * (size_t) rd->n_scalars;
        for (int o = 0; o < e->n_out; o++) {
            int rc = kf_cuda_eval_api->Memcpy (e->ref_d[o].data, e->data + rd->out_off[set * rd->n_out + o],
                                    e->out[o].bytes, KF_CUDA_H2D);
            if (rc)
                return kf_cuda_harness (e, rc, "copying the right outputs to the device");
        }
    }
    return KF_CUDA_OK;
}

static int
s_set_ref_stage (void *arg)
{
    kf_cuda_eval_t *e = ((s_set_arg_t *) arg)->e;
    return kf_cuda_stage (e, e->ref_d, true);
}

static int
s_set_ref_call (void *arg, const char *when)
{
    kf_cuda_eval_t *e = ((s_set_arg_t *) arg)->e;
    int cuda_rc;
    int r = s_call (e, e->ref_fn, e->ref_t, 'R', &cuda_rc);
    if (!cuda_rc && !r)
        return KF_CUDA_OK;
    if (cuda_rc)
        snprintf (e->detail, sizeof e->detail, "reference: CUDA error on %s: %s",
                  when, kf_cuda_err (cuda_rc));
    else
        kf_eval_ref_failed (e->detail, sizeof e->detail, r, when, (const void *) e->ref_fn);
    return KF_CUDA_REF_FAILED;
}

static int
s_set_fingerprint (void *arg)
{
    return kf_cuda_fingerprint (((s_set_arg_t *) arg)->e);
}

static int
s_set_cand_stage (void *arg)
{
    kf_cuda_eval_t *e = ((s_set_arg_t *) arg)->e;
    return kf_cuda_stage (e, e->cand_d, true);
}

static int
s_set_cand_call (void *arg, const char *when)
{
    return kf_cuda_cand_call (((s_set_arg_t *) arg)->e, when);
}

static int
s_set_check_memory (void *arg, const char *when)
{
    return kf_cuda_check_memory (((s_set_arg_t *) arg)->e, when);
}

static int
s_set_compare (void *arg, const char *when)
{
    return kf_cuda_compare (((s_set_arg_t *) arg)->e, when);
}

//  One correctness set: inputs (drawn, or the exported ones), the right
//  outputs (the reference's, or the exported ones), then the candidate on
//  the same inputs and every check. WHEN names the set in a detail.
static int
s_run_set (kf_cuda_eval_t *e, uint64_t seed, int set, const char *when)
{
    s_set_arg_t arg = { e, seed };
    const kf_eval_set_ops_t ops = {
        .arg = &arg, .inputs = s_set_inputs, .ref_stage = s_set_ref_stage,
        .ref_call = s_set_ref_call, .ref_keep = NULL, .fingerprint = s_set_fingerprint,
        .cand_stage = s_set_cand_stage, .cand_call = s_set_cand_call,
        .check_memory = s_set_check_memory, .compare = s_set_compare
    };
    const kf_eval_set_t s = {
        .ops = &ops, .exported = e->rd != NULL, .fingerprint = e->degen != NULL,
        .candidate = e->cand_fn || e->runner, .count_warm = e->count_warm, .warm = &e->warm,
        .ref_s = &e->ref_s, .ref_calls = &e->ref_calls, .worst = &e->worst
    };
    return kf_eval_set_run (&s, set, when);
}

//  Bandwidth and FLOP rate against the measured ceilings, and the audit
//  flag (kf_eval_roofline). CAND_NS and REF_NS are medians (REF_NS 0:
//  no paired reference).
static void
s_roofline (kf_cuda_eval_t *e, json_t *result, json_t *task, double cand_ns, double ref_ns,
            double speedup, const kf_eval_ceilings_t *ceil, size_t l2_bytes, double overhead_ns)
{
    double bytes = 0;
    for (int i = 0; i < e->n_in; i++)
        bytes += (double) e->in[i].bytes;
    double read_bytes = bytes;
    for (int o = 0; o < e->n_out; o++)
        bytes += (double) e->out[o].bytes;
    json_t *fl = json_object_get (task, "flops");
    double flops = json_is_array (fl) ? json_number_value (json_array_get (fl, 0))
                                      : json_number_value (fl);
    //  Calls inside a sample find the data left in L2 by the call before,
    //  so the DRAM ceiling binds only when the data cannot stay there.
    bool applies = bytes > (double) l2_bytes;
    kf_eval_roofline (result, bytes, read_bytes, flops, cand_ns, ref_ns, ceil, applies, speedup);
    json_object_set_new (result, "sync_overhead_ns", json_real (overhead_ns));
}

//  Loads the reference (unless the right answers are exported data) and,
//  IN_PROCESS (a profile), the candidate into this process. Returns
//  KF_CUDA_OK, KF_CUDA_REF_FAILED, or -1 when the candidate does not load.
static int
s_load (kf_cuda_eval_t *e, const char *dir, bool data, bool in_process)
{
    char path[4200];
    if (!data) {
        snprintf (path, sizeof path, "%s/reference.so", dir);
        void *ref_lib = dlopen (path, RTLD_NOW | RTLD_LOCAL);
        e->ref_fn = ref_lib ? (kf_cuda_forward_fn *) dlsym (ref_lib, "kf_forward") : NULL;
        if (!e->ref_fn) {
            snprintf (e->detail, sizeof e->detail, "reference does not load: %s", dlerror ());
            return KF_CUDA_REF_FAILED;
        }
    }
    if (!in_process)
        return KF_CUDA_OK;
    snprintf (path, sizeof path, "%s/candidate.so", dir);
    kf_eval_set_phase ('C');    // constructors of the candidate run in dlopen
    void *cand_lib = dlopen (path, RTLD_NOW | RTLD_LOCAL);
    e->cand_fn = cand_lib ? (kf_cuda_forward_fn *) dlsym (cand_lib, "kf_forward") : NULL;
    kf_eval_set_phase ('H');
    if (!e->cand_fn) {
        const char *err = dlerror ();
        snprintf (e->detail, sizeof e->detail, "candidate does not load: %s",
                  err ? err : "no kf_forward");
        return -1;              // load_failed
    }
    //  Libraries stay loaded: the process ends right after the verdict.
    return KF_CUDA_OK;
}

//  Before each timed round trip to the runner: the device as a timed
//  call finds it, L2 flushed and the judge's work done.
static void
s_before_ping (void *arg)
{
    kf_cuda_eval_t *e = arg;
    kf_cuda_eval_api->MemsetAsync (e->flush, 0, e->flush_bytes, e->stream);
    kf_cuda_eval_api->DeviceSynchronize ();
}

static int
s_cuda_child_main (const char *dir, json_t *job)
{
    if (kf_eval_child_begin (dir) != 0)
        return 2;
    char why[400];
    int device = (int) json_integer_value (json_object_get (job, "device"));
    bool probe = json_is_true (json_object_get (job, "probe"));
    //  A profile puts the candidate in both seats of this process, where
    //  the profiler sees its launches; its verdict is never reported.
    bool in_process = !probe && json_is_true (json_object_get (job, "candidate_in_process"));
    //  The candidate's process starts first when the worker handed over
    //  its ceilings: it makes its own context while the judge makes its
    //  own and sets up (only the harness's code runs there until the
    //  candidate is loaded, once the job is hidden). A judge that measures
    //  the ceilings itself starts it after, so nothing shares the device
    //  while they are measured.
    json_t *given = json_object_get (job, "ceilings");
    bool measure_ceilings = !json_is_object (given) || kf_eval_num (given, "copy_gbs", 0) <= 0;
    double t = kf_eval_now ();
    kf_run_start_t spawn_opts = { .cuda_device = device };
    kf_runner_t *runner = NULL;
    if (!probe && !in_process && !measure_ceilings
        && !(runner = kf_runner_spawn_for_job (dir, job, &spawn_opts)))
        return 0;
    if (kf_cuda_load_api (device, why, sizeof why)) {
        kf_runner_destroy (&runner);
        kf_eval_write_verdict (dir, "harness_failed", why);
        return 0;
    }
    kf_eval_split_add (KF_EVAL_S_CONTEXT, kf_eval_now () - t);
    kf_cuda_eval_t *e = calloc (1, sizeof *e);
    if (!e) {
        kf_runner_destroy (&runner);
        return 2;
    }
    json_t *task = json_object_get (job, "task");
    json_t *timing = json_object_get (job, "timing");
    json_t *refdata = json_object_get (job, "reference_data");
    e->runner = runner;
    e->device = device;
    uint64_t seed = (uint64_t) json_integer_value (json_object_get (job, "seed"));
    kf_eval_tol_from_task (task, &e->tol, &e->worst);
    kf_eval_worst_t total = e->worst;
    kf_eval_refdata_t rd;
    memset (&rd, 0, sizeof rd);
    kf_eval_degen_t degen;
    kf_eval_degen_init (&degen, (int) json_array_size (json_object_get (task, "outputs")));
    const char *data = NULL;
    size_t data_size = 0;
    kf_eval_timing_t tm = { 0 };
    json_t *result = NULL;
    kf_cuda_devinfo_t info;
    memset (&info, 0, sizeof info);
    //  The worker's own ceilings when it passes them (measured once, at
    //  its start, for its capabilities), so every evaluation is judged
    //  against the same figures; otherwise (a standalone --eval) measured
    //  here.
    kf_eval_ceilings_t ceil = { 0 };
    if (!measure_ceilings) {
        ceil.copy_gbs = kf_eval_num (given, "copy_gbs", 0);
        ceil.peak_gflops = kf_eval_num (given, "peak_gflops", 0);
        ceil.peak_source = json_string_value (json_object_get (given, "peak_source"));
    }
    const char *verdict = "correct";
    int n_cases = 1;

    int st = KF_CUDA_OK;
    if (json_is_object (refdata)) {
        data = kf_refdata_map (dir, job, &data_size);
        if (!data || kf_eval_refdata_parse (&rd, task, refdata, data_size, e->detail,
                                            sizeof e->detail)) {
            if (!data)
                snprintf (e->detail, sizeof e->detail, "reference data does not load");
            st = KF_CUDA_REF_FAILED;
        }
        e->rd = &rd;
        e->data = data;
    }
    t = kf_eval_now ();
    if (st == KF_CUDA_OK)
        st = s_load (e, dir, e->rd != NULL, in_process);
    if (st < 0) {
        kf_eval_write_verdict (dir, "load_failed", e->detail);
        goto done;
    }
    kf_eval_split_add (KF_EVAL_S_MODULES, kf_eval_now () - t);
    t = kf_eval_now ();
    if (!st && kf_cuda_devinfo (device, &info, why, sizeof why)) {
        snprintf (e->detail, sizeof e->detail, "harness: %s", why);
        st = KF_CUDA_HARNESS;
    }
    kf_eval_split_add (KF_EVAL_S_DEVICE, kf_eval_now () - t);
    t = kf_eval_now ();
    if (!st && measure_ceilings && !probe
        && kf_cuda_copy_bandwidth (&ceil.copy_gbs, why, sizeof why)) {
        snprintf (e->detail, sizeof e->detail, "harness: %s", why);
        st = KF_CUDA_HARNESS;
    }
    kf_eval_split_add (KF_EVAL_S_CEILINGS, kf_eval_now () - t);
    t = kf_eval_now ();
    int rc;
    if (!st && ((rc = kf_cuda_eval_api->StreamCreateWithFlags (&e->stream, 0))
                || (rc = kf_cuda_eval_api->EventCreate (&e->ev0))
                || (rc = kf_cuda_eval_api->EventCreate (&e->ev1))))
        st = kf_cuda_harness (e, rc, "creating the stream and events");
    if (!st && !(e->judge = kf_cuda_judge_new (kf_cuda_eval_api, why, sizeof why))) {
        snprintf (e->detail, sizeof e->detail, "harness: %s", why);
        st = KF_CUDA_HARNESS;
    }
    //  The flush buffer: twice the L2, so nothing of the last sample
    //  survives in it.
    size_t flush_bytes = 2 * (size_t) (info.l2_bytes > 0 ? info.l2_bytes : 64 << 20);
    if (!st && (st = kf_cuda_harness (e, kf_cuda_eval_api->Malloc (&e->flush, flush_bytes),
                                "allocating the L2 flush buffer")) == KF_CUDA_OK)
        e->flush_bytes = flush_bytes;
    kf_eval_split_add (KF_EVAL_S_DEVICE, kf_eval_now () - t);
    //  The candidate's own process, given the device once the judge's
    //  context, stream and flush buffer exist (its round trip is timed
    //  after a flush, as a timed call finds the device).
    kf_runner_hide_job (dir, job);
    if (!st && !probe && !in_process) {
        t = kf_eval_now ();
        kf_run_start_t opts = { .cuda_device = device, .before_ping = s_before_ping,
                                .after_ping = kf_cuda_idle_after_ping, .arg = e };
        if (!e->runner && !(e->runner = kf_runner_spawn_for_job (dir, job, &opts)))
            goto done;
        if (kf_runner_ready_for_job (dir, &e->runner, &opts) != 0)
            goto done;
        st = kf_cuda_idle_baseline (e);
        kf_eval_split_add (KF_EVAL_S_MODULES, kf_eval_now () - t);
    }
    kf_eval_stamp (KF_EVAL_T_LOADED);

    //  Correctness: the main shape (5 fresh input sets, or every exported
    //  set), then 2 sets of each extra shape case in buffers of its own;
    //  the main case's stay for the timing.
    n_cases = e->rd ? 1 : kf_eval_n_cases (task);
    for (int c = 0; c < n_cases && st == KF_CUDA_OK; c++) {
        kf_cuda_eval_t *ce = e;
        if (c > 0) {
            ce = calloc (1, sizeof *ce);
            if (!ce) {
                snprintf (e->detail, sizeof e->detail, "harness: out of memory for a shape case");
                st = KF_CUDA_HARNESS;
                break;
            }
            ce->ref_fn = e->ref_fn;
            ce->cand_fn = e->cand_fn;
            ce->tol = e->tol;
            ce->worst.match_fraction = ce->worst.cosine = 1;
            ce->stream = e->stream;
            ce->judge = e->judge;
            ce->runner = e->runner;
            ce->device = e->device;
            ce->idle_ns = e->idle_ns;
            ce->flush = e->flush;
            ce->flush_bytes = e->flush_bytes;
        }
        ce->degen = probe && c == 0 ? &degen : NULL;
        ce->count_warm = !probe && c == 0;
        json_t *case_task = kf_eval_case_task (task, c);
        char label[256] = "";
        if (c > 0)
            kf_eval_case_label (task, c, label, sizeof label);
        st = kf_cuda_setup (ce, case_task);
        //  The timing sets' memory, taken before the candidate's first
        //  call can take the device's (kf_cuda_variants.c).
        if (st == KF_CUDA_OK && c == 0 && !probe)
            st = kf_cuda_variants_reserve (e, info.memory_bytes);
        int n_sets = c > 0 ? 2 : e->rd ? e->rd->n_sets : 5;
        for (int set = 0; set < n_sets && st == KF_CUDA_OK; set++) {
            char when[320];
            snprintf (when, sizeof when, "%s%sset %d", label, c > 0 ? ", " : "", set);
            st = s_run_set (ce, seed, c * 100 + set, when);
        }
        json_decref (case_task);
        kf_eval_worst_merge (&total, &ce->worst);
        if (ce != e) {
            snprintf (e->detail, sizeof e->detail, "%s", ce->detail);
            kf_cuda_free_tensors (ce, true);
            free (ce);
        }
    }
    kf_eval_stamp (KF_EVAL_T_CHECKED);

    if (probe && st == KF_CUDA_OK) {
        result = json_pack ("{s:s, s:b, s:o, s:f, s:i, s:i}", "verdict", "probed", "ok", 1,
                            "degenerate", kf_eval_degen_json (&degen), "reference_ms",
                            e->ref_calls ? e->ref_s * 1e3 / e->ref_calls : 0.0,
                            "sets", degen.sets, "cases", n_cases);
        kf_eval_write_result (dir, result);
        goto done;
    }

    //  Timing. In the runner the timed calls cycle through sets of their
    //  own, each checked after every sample (kf_cuda_variants.c); where
    //  they do not fit (and in a profile), on the main shape's last set,
    //  whose outputs are checked after the timing loop.
    if (st == KF_CUDA_OK)
        st = kf_cuda_variants_setup (e, seed);
    if (st == KF_CUDA_OK && e->runner && !e->var && n_cases > 1)
        st = kf_cuda_share_with_runner (e);
    if (st == KF_CUDA_OK && (st = kf_cuda_poison_outputs (e, e->cand_d)) == KF_CUDA_OK
        && (st = kf_cuda_time (e, timing, &tm)) == KF_CUDA_OK && !e->var
        && (st = kf_cuda_check_memory (e, "timing")) == KF_CUDA_OK)
        st = kf_cuda_compare (e, "timing");
    kf_eval_stamp (KF_EVAL_T_TIMED);

    if (st == KF_CUDA_REF_FAILED || st == KF_CUDA_HARNESS) {
        kf_eval_write_verdict (dir, st == KF_CUDA_REF_FAILED ? "reference_failed" : "harness_failed",
                               e->detail);
        goto done;
    }
    verdict = st == KF_CUDA_OK ? "correct" : st == KF_CUDA_CRASHED ? "crashed" : "incorrect";
    result = json_object ();
    json_object_set_new (result, "verdict", json_string (verdict));
    json_object_set_new (result, "detail", json_string (st == KF_CUDA_OK ? "all checks passed" : e->detail));
    json_object_set_new (result, "correctness", kf_eval_correctness_json (&total));
    json_object_set_new (json_object_get (result, "correctness"), "cases", json_integer (n_cases));
    json_object_set_new (result, "device", json_pack ("{s:s, s:i}", "name", info.name,
                                                      "index", device));
    if (e->runner)
        json_object_set_new (result, "isolation", json_pack (
            "{s:s, s:s, s:f, s:f, s:f, s:i}", "candidate", "own process",
            "confinement", kf_runner_confinement (e->runner),
            "round_trip_us", kf_runner_round_trip_s (e->runner) * 1e6,
            "idle_probe_us", e->idle_ns * 1e-3, "max_probe_excess_us",
            e->max_excess_ns * 1e-3, "samples_retaken", e->hidden_retries));
    if (st == KF_CUDA_OK && tm.samples > 0) {
        double cand_med = kf_eval_median (tm.cand_ns, tm.samples), ref_med, speedup;
        json_object_set_new (result, "candidate", kf_eval_timing_json (tm.cand_ns, tm.samples, tm.cand_calls));
        if (e->rd) {
            //  Not a paired ratio: eager PyTorch was timed in its own job.
            speedup = cand_med > 0 ? e->rd->eager_ns / cand_med : 0;
            ref_med = e->rd->eager_ns;
            json_object_set_new (result, "reference", json_pack ("{s:f, s:s}", "median_ns",
                                 e->rd->eager_ns, "kind", "pytorch-eager"));
            json_object_set_new (result, "speedup_compiled",
                                 e->rd->compiled_ns > 0 && cand_med > 0
                                 ? json_real (e->rd->compiled_ns / cand_med) : json_null ());
        }
        else {
            speedup = kf_eval_paired_speedup (tm.ref_ns, tm.cand_ns, tm.samples);
            ref_med = kf_eval_median (tm.ref_ns, tm.samples);
            json_object_set_new (result, "reference", kf_eval_timing_json (tm.ref_ns, tm.samples, tm.ref_calls));
        }
        json_object_set_new (result, "speedup", speedup >= 0 ? json_real (speedup) : json_null ());
        json_t *protocol = kf_eval_protocol_json (&tm);
        json_object_set_new (protocol, "input_sets", json_integer (kf_cuda_variants_count (e)));
        json_object_set_new (result, "protocol", protocol);
        //  The compute ceiling, measured here like the copy bandwidth (when
        //  the worker did not pass both), only for a result that will be
        //  reported against it.
        if (measure_ceilings) {
            char peak_why[200];
            t = kf_eval_now ();
            kf_cuda_fma_peak (info.sms, &ceil.peak_gflops, &ceil.peak_source, peak_why, sizeof peak_why);
            kf_eval_split_add (KF_EVAL_S_CEILINGS, kf_eval_now () - t);
        }
        s_roofline (e, result, task, cand_med, ref_med, speedup, &ceil, (size_t) info.l2_bytes,
                    tm.overhead_ns);
    }
    else
        json_object_set_new (result, "speedup", json_null ());
    json_object_set_new (result, "split_s", kf_eval_split_json ());
    //  The verdict is our last word: the worker, hearing it, kills this
    //  process and the runner and reads it without waiting for the two
    //  contexts' teardown (kf_eval_channel.h). The clean-up below runs
    //  only where the worker does not listen (under a profiler).
    kf_eval_write_result (dir, result);

done:
    kf_runner_destroy (&e->runner);
    kf_cuda_variants_free (e);
    json_decref (result);
    kf_eval_timing_free (&tm);
    kf_cuda_free_tensors (e, false);
    kf_cuda_judge_destroy (&e->judge);
    free (e);
    kf_refdata_unmap (data, data_size);
    kf_eval_refdata_free (&rd);
    return 0;
}

const kf_exec_backend_t kf_exec_backend_cuda = {
    .name = "cuda",
    .child_main = s_cuda_child_main,
    .devices = NULL,
    .probe = kf_cuda_probe,
    .unlimited_address_space = 1,
};
