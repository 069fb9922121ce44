/*  kf_exec.c - the exec worker's "evaluate" handler and the entry of the
 *  evaluation child; "reference" jobs go on to kf_torch_ref.c.
 *
 *  The parent side is backend-neutral: write the artifacts and the payload
 *  into a private directory, run `worker --eval-child DIR` in the sandbox,
 *  and turn what came back - result.json, a signal, a timeout, silence -
 *  into a verdict. Which kernel was running when the child died is read
 *  from the phase byte the child keeps in DIR/phase: a candidate's crash
 *  or hang is a verdict (ok), the reference's is a failed job.
 */
#include "kf_exec.h"
#include "kf_model_profile.h"
#include "kf_backend.h"
#include "kf_eval_check.h"
#include "kf_log.h"
#include "kf_msg_eval.h"
#include "kf_plausible.h"
#include "kf_profile.h"
#include "kf_file.h"
#include "kf_str.h"
#include "kf_subproc.h"
#include "kf_text.h"
#include "kf_sweep.h"
#include "kf_torch_ref.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

//  The ceilings a device backend's probe measured (copy bandwidth and
//  FMA peak of one device), kept so that each evaluation child on that
//  device is handed them as the host's are, instead of measuring them
//  again; the worker probes once, at start-up, for its capabilities.
static pthread_mutex_t s_probed_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char backend[32], peak_source[32];
    int device;
    double copy_gbs, peak_gflops, memory_bytes;
} s_probed;

static void
s_probed_keep (const char *backend, int device, json_t *dev)
{
    double copy = json_number_value (json_object_get (dev, "copy_bandwidth_gbs"));
    const char *source = json_string_value (json_object_get (dev, "peak_source"));
    pthread_mutex_lock (&s_probed_lock);
    snprintf (s_probed.backend, sizeof s_probed.backend, "%s", copy > 0 ? backend : "");
    snprintf (s_probed.peak_source, sizeof s_probed.peak_source, "%s", source ? source : "none");
    s_probed.device = device;
    s_probed.copy_gbs = copy;
    s_probed.peak_gflops = json_number_value (json_object_get (dev, "peak_gflops"));
    s_probed.memory_bytes = json_number_value (json_object_get (dev, "memory_bytes"));
    pthread_mutex_unlock (&s_probed_lock);
}

//  {copy_gbs, peak_gflops, peak_source} for BACKEND's DEVICE, or NULL
//  when it was not probed in this process.
static json_t *
s_probed_ceilings (const char *backend, int device)
{
    json_t *c = NULL;
    pthread_mutex_lock (&s_probed_lock);
    if (s_probed.backend[0] && !strcmp (s_probed.backend, backend) && s_probed.device == device)
        c = json_pack ("{s:f, s:f, s:s}", "copy_gbs", s_probed.copy_gbs,
                       "peak_gflops", s_probed.peak_gflops, "peak_source", s_probed.peak_source);
    pthread_mutex_unlock (&s_probed_lock);
    return c;
}

//  The memory of BACKEND's DEVICE as probed in this process, 0 unknown.
static double
s_probed_memory (const char *backend, int device)
{
    pthread_mutex_lock (&s_probed_lock);
    double m = s_probed.backend[0] && !strcmp (s_probed.backend, backend)
               && s_probed.device == device ? s_probed.memory_bytes : 0;
    pthread_mutex_unlock (&s_probed_lock);
    return m;
}

//  A task too big for where it would run fails the same way on every
//  try: the harness holds every input and output at least twice (the
//  tensors the kernels see and the copies it checks them against). 0, or
//  -1 with the reason in WHY.
static int
s_too_big (json_t *task, const char *backend, double budget, int device, char *why,
           size_t why_size)
{
    double bytes = kf_plausible_task_bytes (task);
    if (!(budget > 0) || !(2 * bytes > budget))
        return 0;
    char where[80];
    if (strcmp (backend, "host"))
        snprintf (where, sizeof where, "memory of %s device %d", backend, device);
    else
        snprintf (where, sizeof where, "memory limit of a host evaluation (memory_bytes)");
    snprintf (why, why_size, "the task's tensors take %.2f GiB (inputs read and outputs written"
              " once), which the harness holds at least twice: %.2f GiB, more than the %.2f GiB"
              " %s", bytes / (1 << 30), 2 * bytes / (1 << 30), budget / (1 << 30), where);
    return -1;
}

const kf_exec_backend_t *
kf_exec_backend_find (const char *name)
{
    static const kf_exec_backend_t *const all[] = { &kf_exec_backend_host,
                                                     &kf_exec_backend_cuda, &kf_exec_backend_ze,
                                                     &kf_exec_backend_ocl, NULL };
    for (int i = 0; all[i]; i++)
        if (name && strcmp (all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

const char *
kf_exec_worker_binary (const kf_exec_config_t *cfg, char *buf, size_t size)
{
    const char *worker = cfg && cfg->worker_path ? cfg->worker_path : "/proc/self/exe";
    if (strncmp (worker, "/proc/self/", 11) != 0)
        return worker;
    ssize_t n = readlink (worker, buf, size - 1);
    if (n <= 0)
        return NULL;
    buf[n] = 0;
    return buf;
}

int
kf_exec_child_main (const char *dir)
{
    char path[4200];
    snprintf (path, sizeof path, "%s/job.json", dir);
    json_error_t jerr;
    json_t *job = json_load_file (path, 0, &jerr);
    if (!job)
        return 2;
    const char *name = json_string_value (json_object_get (job, "backend"));
    const kf_exec_backend_t *backend = kf_exec_backend_find (name ? name : "host");
    //  The worker hears our final word on this pipe (kf_eval_channel.h).
    if (json_integer_value (json_object_get (job, "final_fd")) == KF_SUBPROC_FINAL_FD)
        kf_eval_final_fd (KF_SUBPROC_FINAL_FD);
    int rc = backend ? backend->child_main (dir, job) : 2;
    json_decref (job);
    return rc;
}

//  A verdict the worker makes itself (the child timed out or died before
//  its own), written by the protocol's encoder (proto/kf_msg_eval.c).
static void
s_verdict (kf_job_result_t *res, const char *verdict, const char *detail)
{
    kf_eval_result_t v;
    memset (&v, 0, sizeof v);
    snprintf (v.verdict, sizeof v.verdict, "%s", verdict);
    v.detail = detail;
    res->ok = true;
    res->result = kf_eval_result_encode (&v);
}

//  Whether the verdict channel at *ARG holds a whole result: the test
//  of the evaluation child's final word (kf_eval_channel.h).
static bool
s_verdict_whole (void *arg)
{
    return kf_eval_channel_whole (*(int *) arg);
}

//  The last line of the child's output, for a crash report.
static void
s_last_line (const char *out, char *buf, size_t size)
{
    const char *last;
    size_t len = kf_text_last_line (out, &last);
    snprintf (buf, size, "%.*s", (int) len, last);
}

//  One evaluation child: candidate CAND against reference REF with the
//  evaluate payload PAYLOAD, its verdict (or the job's failure) into RES.
//  REF is the reference's shared object; when the payload has
//  reference_data it is NULL and HELD names the exported PyTorch data,
//  which the child gets as DIR/reference.bin, a hard link (HELD is in a
//  folder of the job's own under TMPDIR, as DIR is: one file system).
//  CAND is NULL for a probe. The CPU seconds the child's processes used
//  go into *CPU_S when it is not NULL (as the kernel counted them at the
//  child's end, or, for a child ended at its verdict, as the child
//  counted them with its verdict).
//  WRAP (or NULL) is a command the child runs under, a profiler
//  (kf_exec_evaluate_wrapped).
static void
s_evaluate_one (const kf_exec_config_t *cfg, const char *worker, json_t *payload_in,
                zframe_t *cand, zframe_t *ref, const char *held, double time_limit,
                kf_job_result_t *res, double *cpu_s, const kf_exec_wrap_t *wrap)
{
    char ref_path[4300];
    bool probe = json_is_true (json_object_get (payload_in, "probe"));
    memset (res, 0, sizeof *res);
    const char *backend = cfg && cfg->backend ? cfg->backend : "host";
    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = time_limit;
    limits.output_cap = 64 * 1024;
    limits.memory_bytes = cfg && cfg->memory_bytes ? cfg->memory_bytes : (size_t) 16 << 30;
    if (kf_exec_backend_find (backend)->unlimited_address_space)
        limits.memory_bytes = 0;
#if defined(__SANITIZE_ADDRESS__)
    //  AddressSanitizer reserves terabytes of shadow address space, which
    //  any RLIMIT_AS would refuse; sanitizer builds are for tests only.
    limits.memory_bytes = 0;
#endif
    char too_big[400];
    double budget = strcmp (backend, "host")
                    ? s_probed_memory (backend, cfg ? cfg->device : 0)
                    : (double) (cfg && cfg->memory_bytes ? cfg->memory_bytes : (size_t) 16 << 30);
    if (s_too_big (json_object_get (payload_in, "task"), backend, budget, cfg ? cfg->device : 0,
                   too_big, sizeof too_big)) {
        kf_job_fail (res, "%s", too_big);
        res->final = true;
        return;
    }
    //  The host judge keeps the candidate's tensors in a shared memory
    //  file (with copies for timed batches, at most 64 MiB of them), which
    //  the file-size limit counts; the candidate's own process is held to
    //  the default again (kf_runner.c).
    double tensors = kf_plausible_task_bytes (json_object_get (payload_in, "task"));
    if (tensors > 0)
        limits.file_bytes += (size_t) (2 * tensors) + ((size_t) 64 << 20);
    char *dir = kf_subproc_workdir (&limits);
    if (!dir) {
        kf_job_fail (res, "cannot make a temporary directory: %s", strerror (errno));
        return;
    }
    json_t *payload = json_deep_copy (payload_in);
    json_object_set_new (payload, "backend", json_string (backend));
    //  The child's final word ends it as soon as its verdict is out,
    //  without waiting for its teardown (a GPU context's: a tenth of a
    //  second an evaluation). Not under a profiler, which writes its
    //  report after the child ends.
    if (!wrap)
        json_object_set_new (payload, "final_fd", json_integer (KF_SUBPROC_FINAL_FD));
    json_object_set_new (payload, "device", json_integer (cfg ? cfg->device : 0));
    if (cfg && cfg->shared_dir && *cfg->shared_dir)
        json_object_set_new (payload, "shared_dir", json_string (cfg->shared_dir));
    if (strcmp (backend, "host") == 0 && !json_object_get (payload, "ceilings")) {
        //  Measured once per worker (at start-up, for the capabilities),
        //  so every evaluation is judged against the same ceilings.
        kf_eval_ceilings_t ceil;
        kf_eval_host_ceilings (&ceil);
        json_object_set_new (payload, "ceilings", json_pack ("{s:f, s:f, s:f, s:f, s:f, s:s, s:b}",
                             "copy_gbs", ceil.copy_gbs, "read_gbs", ceil.read_gbs,
                             "stream_gbs", ceil.stream_gbs, "write_gbs", ceil.write_gbs,
                             "peak_gflops", ceil.peak_gflops,
                             "peak_source", ceil.peak_source ? ceil.peak_source : "none",
                             "busy", ceil.busy));
    }
    else if (strcmp (backend, "cuda") == 0 && !json_object_get (payload, "ceilings")) {
        //  Those the start-up probe measured on this device, if it ran
        //  (not for a standalone --eval): the child then skips its own
        //  copy-bandwidth and FMA-peak measurements.
        json_t *probed = s_probed_ceilings (backend, cfg ? cfg->device : 0);
        if (probed)
            json_object_set_new (payload, "ceilings", probed);
    }
    char *pre[KF_EXEC_WRAP_MAX + 4] = { NULL };
    if (wrap && wrap->prepare (wrap->arg, dir, payload, pre, KF_EXEC_WRAP_MAX) != 0) {
        kf_job_fail (res, "cannot prepare the profiler's run: %s", strerror (errno));
        json_decref (payload);
        kf_subproc_rmtree (dir);
        free (dir);
        return;
    }
    char *text = json_dumps (payload, JSON_COMPACT);
    json_decref (payload);
    snprintf (ref_path, sizeof ref_path, "%s/reference.bin", dir);
    if (!text
        || (cand && kf_file_write (dir, "candidate.so", zframe_data (cand), zframe_size (cand)))
        || (held ? link (held, ref_path)
                 : kf_file_write (dir, "reference.so", zframe_data (ref), zframe_size (ref)))
        || kf_file_write (dir, "job.json", text, strlen (text))) {
        kf_job_fail (res, "cannot write the evaluation files: %s", strerror (errno));
        free (text);
        kf_subproc_rmtree (dir);
        free (dir);
        return;
    }
    free (text);

    //  The verdict comes back through a channel only the child holds
    //  (kf_eval_channel.h); no process of the sandbox's uid may open it
    //  through our /proc entry either.
    prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
    int channel = kf_eval_channel_new ();
    if (channel < 0) {
        kf_job_fail (res, "cannot make the verdict channel: %s", strerror (errno));
        kf_subproc_rmtree (dir);
        free (dir);
        return;
    }
    limits.pass_fd = channel;
    if (!wrap) {
        limits.final_whole = s_verdict_whole;
        limits.final_arg = &channel;
    }
    char *argv[KF_EXEC_WRAP_MAX + 4];
    int argc = 0;
    for (int i = 0; i < KF_EXEC_WRAP_MAX && pre[i]; i++)
        argv[argc++] = pre[i];
    argv[argc++] = (char *) worker;
    argv[argc++] = "--eval-child";
    argv[argc++] = dir;
    argv[argc] = NULL;
    kf_subproc_result_t run;
    double spawn = kf_eval_now ();
    int started = kf_subproc_run (argv, &limits, &run);
    double ended = kf_eval_now ();
    double cpu = started != 0 ? 0 : run.ended_final ? kf_eval_channel_cpu (channel) : run.cpu_s;
    if (cpu_s)
        *cpu_s = cpu;
    if (started != 0) {
        kf_job_fail (res, "cannot start the evaluation child: %s", strerror (errno));
        close (channel);
        kf_subproc_rmtree (dir);
        free (dir);
        return;
    }
    double stamps[KF_EVAL_T_N];
    char phase = kf_eval_channel_phase (channel, stamps);
    json_t *result = run.timed_out ? NULL : kf_eval_channel_result (channel);
    close (channel);
    const char *verdict = json_string_value (json_object_get (result, "verdict"));
    char detail[512], last[256];
    s_last_line (run.output, last, sizeof last);

    if (run.timed_out) {
        snprintf (detail, sizeof detail, "evaluation exceeded the %.3g s limit while the %s was running",
                  time_limit, phase == 'R' ? "reference" : phase == 'C' ? "candidate" : "harness");
        if (phase == 'R')
            kf_job_fail (res, "reference: %s", detail);
        else {
            s_verdict (res, "timeout", detail);
        }
    }
    else if (verdict && strcmp (verdict, "reference_failed") == 0) {
        const char *why = json_string_value (json_object_get (result, "detail"));
        kf_job_fail (res, "reference failed: %s", why);
        //  A reference that says why it refuses (kf_refusal) refuses the
        //  same inputs on any worker: the job fails once, not once a try.
        res->final = kf_eval_is_refusal (why);
    }
    else if (verdict && strcmp (verdict, "harness_failed") == 0) {
        //  The device or its runtime failed outside any kernel (no
        //  device in the child, allocation of the tensors): not the
        //  candidate's fault, so not a verdict.
        kf_job_fail (res, "evaluation harness: %s",
                     json_string_value (json_object_get (result, "detail")));
    }
    else if (verdict) {
        //  A verdict followed by a non-zero exit is the harness's own
        //  trouble (a sanitizer report, a failed cleanup): worth a log
        //  line, not a different verdict. The fault handler exits 3.
        if (run.exit_code != 0 && run.exit_code != 3)
            kf_warn ("evaluation child exited with %d after its verdict: %s",
                     run.exit_code, last);
        res->ok = true;
        res->result = json_incref (result);
    }
    else if (phase == 'R') {
        snprintf (detail, sizeof detail, "reference ended the child (signal %d, exit %d): %s",
                  run.signal, run.exit_code, last);
        kf_job_fail (res, "%s", detail);
    }
    else if (run.signal == SIGKILL && cpu >= ceil (time_limit) + 1 - 0.05) {
        //  kf_subproc gives the child a CPU-time limit of its wall limit
        //  plus 1 s (all its threads together); the kernel's SIGKILL at
        //  that limit is a timeout, though the clock had not run out.
        snprintf (detail, sizeof detail, "evaluation child killed after %.2f s: its processes "
                  "used %.2f s of CPU time, past the CPU-time limit of %.0f s that goes with "
                  "the %.3g s limit, while the %s was running", run.wall_s, cpu,
                  ceil (time_limit) + 1, time_limit,
                  phase == 'C' ? "candidate" : "harness");
        s_verdict (res, "timeout", detail);
    }
    else {
        if (run.signal)
            snprintf (detail, sizeof detail, "evaluation child killed by signal %d (%s)%s%s",
                      run.signal, strsignal (run.signal), last[0] ? ": " : "", last);
        else
            snprintf (detail, sizeof detail, "evaluation child exited with code %d without a verdict%s%s",
                      run.exit_code, last[0] ? ": " : "", last);
        s_verdict (res, "crashed", detail);
    }
    if (res->ok && res->result && probe && verdict && !strcmp (verdict, "probed")) {
        //  A probe's result is its findings, not a verdict.
        json_object_del (res->result, "verdict");
    }
    else if (res->ok && res->result && probe) {
        //  Nothing but the reference ran, so whatever ended the child
        //  was the reference's (or the harness's) doing.
        const char *d = json_string_value (json_object_get (res->result, "detail"));
        kf_job_fail (res, "reference probe: %s", d ? d : "no result");
        json_decref (res->result);
        res->result = NULL;
    }
    else if (res->ok && res->result) {
        //  What the child wrote goes out through the protocol's encoder
        //  (proto/kf_msg_eval.c), checked here as the coordinator will
        //  check it: a result it would refuse is the harness's bug, a
        //  failed job here rather than a refusal there. The encoder also
        //  writes the null speedup the fault handler's verdict lacks.
        kf_eval_result_t typed;
        char why[300];
        if (kf_eval_result_decode (res->result, &typed, why, sizeof why)) {
            json_decref (res->result);
            res->result = NULL;
            kf_job_fail (res, "the evaluation's result breaks the protocol: %s", why);
        }
        else {
            json_decref (res->result);
            res->result = kf_eval_result_encode (&typed);
            kf_eval_result_free (&typed);
        }
    }
    if (res->ok && res->result) {
        json_object_set_new (res->result, "wall_s", json_real (run.wall_s));
        json_object_set_new (res->result, "phases_s", kf_eval_phases_json (spawn, stamps, ended));
    }
    if (wrap && wrap->finish)
        wrap->finish (wrap->arg, dir, run.output);
    json_decref (result);
    kf_subproc_result_free (&run);
    kf_subproc_rmtree (dir);
    free (dir);
}


//  What kf_sweep needs of this file: one evaluation child of a config.
typedef struct {
    const kf_exec_config_t *cfg;
    const char *worker, *held;
    zframe_t *frames[KF_EXEC_MAX_FRAMES];
    zframe_t *ref;
} s_sweep_ctx_t;

static void
s_sweep_evaluate (void *arg, json_t *payload, int frame, double limit_s, kf_job_result_t *res,
                  double *cpu_s)
{
    s_sweep_ctx_t *ctx = arg;
    s_evaluate_one (ctx->cfg, ctx->worker, payload, ctx->frames[frame], ctx->ref, ctx->held,
                    limit_s, res, cpu_s, NULL);
}

static double
s_sweep_now (void *arg)
{
    (void) arg;
    return kf_eval_now ();
}

//  An evaluation of several configs of one candidate (payload `configs`,
//  frames: the candidates' artifacts, then the reference): kf_sweep.c
//  plans it, each config in a child of its own.
static void
s_sweep (const kf_exec_config_t *cfg, const char *worker, const kf_job_t *job,
         json_t *configs, const char *held, double time_limit, kf_job_result_t *res)
{
    int n_frames = (int) zmsg_size (job->frames);
    if (n_frames > KF_EXEC_MAX_FRAMES || json_array_size (configs) > KF_EXEC_MAX_FRAMES) {
        kf_job_fail (res, "payload: more than 16 configs or frames");
        return;
    }
    s_sweep_ctx_t ctx = { .cfg = cfg, .worker = worker, .held = held };
    int f = 0;
    for (zframe_t *fr = zmsg_first (job->frames); fr; fr = zmsg_next (job->frames))
        ctx.frames[f++] = fr;
    //  Exported PyTorch data (HELD) is no frame: every frame is a config's.
    ctx.ref = held ? NULL : ctx.frames[n_frames - 1];
    kf_sweep_limits_t limits;
    kf_sweep_limits_default (&limits);
    limits.eval_limit_s = time_limit;
    if (cfg && cfg->sweep_time_limit_s > 0)
        limits.job_limit_s = cfg->sweep_time_limit_s;
    if (cfg && cfg->sweep_limit_factor >= 1)
        limits.limit_factor = cfg->sweep_limit_factor;
    if (cfg && cfg->sweep_limit_floor_s > 0)
        limits.limit_floor_s = cfg->sweep_limit_floor_s;
    if (cfg && cfg->sweep_full_configs > 0)
        limits.full_configs = cfg->sweep_full_configs;
    kf_sweep_ops_t ops = { .evaluate = s_sweep_evaluate, .now = s_sweep_now, .arg = &ctx };
    json_t *base = json_deep_copy (job->payload);
    json_object_del (base, "configs");
    kf_sweep_run (&limits, &ops, base, configs, held ? n_frames : n_frames - 1, res);
    json_decref (base);
}

//  Exported PyTorch data as the reference (PAYLOAD's REFDATA): the data
//  never travels; this worker's store gives it (or makes it again) as
//  HELD, a file in *HOLD_DIR, a private folder under TMPDIR that the
//  caller removes. Its manifest must describe the task's tensors exactly
//  and lie inside it, checked here so that a mismatch is the job's clear
//  failure rather than a child's. Returns 0 with *NOTE (caller's), or -1
//  with the failure in RES.
static int
s_hold_data (json_t *payload, json_t *refdata, char **hold_dir, char *held, size_t held_size,
             json_t **note, kf_job_result_t *res)
{
    json_t *task = json_object_get (payload, "task");
    if (!json_is_object (refdata)) {
        kf_job_fail (res, "reference_data: must be an object");
        return -1;
    }
    *hold_dir = kf_subproc_mkdtemp (NULL);
    if (!*hold_dir) {
        kf_job_fail (res, "cannot make a temporary directory: %s", strerror (errno));
        return -1;
    }
    snprintf (held, held_size, "%s/reference.bin", *hold_dir);
    const char *source = json_string_value (json_object_get (json_object_get (task, "reference"),
                                                             "source"));
    char *error = NULL, why[512];
    struct stat st;
    kf_eval_refdata_t rd;
    int rc = kf_torch_ref_data_link (kf_torch_ref_shared (), refdata, source, held, note, &error);
    if (rc == 0 && stat (held, &st) != 0) {
        error = kf_strdupf ("reference data: %s: %s", held, strerror (errno));
        rc = -1;
    }
    if (rc == 0 && kf_eval_refdata_parse (&rd, task, refdata, (size_t) st.st_size, why,
                                          sizeof why) != 0) {
        error = strdup (why);
        rc = -1;
    }
    else if (rc == 0)
        kf_eval_refdata_free (&rd);
    if (rc) {
        res->ok = false;
        res->error = error ? error : strdup ("out of memory");
        json_decref (*note);
        *note = NULL;
        kf_subproc_rmtree (*hold_dir);
        free (*hold_dir);
        *hold_dir = NULL;
    }
    return rc;
}

static void s_handle (const kf_exec_config_t *cfg, const kf_job_t *job,
                      const kf_exec_wrap_t *wrap, kf_job_result_t *res);

void
kf_exec_evaluate_wrapped (const kf_exec_config_t *cfg, const kf_job_t *job,
                          const kf_exec_wrap_t *wrap, kf_job_result_t *res)
{
    memset (res, 0, sizeof *res);
    if (json_is_true (json_object_get (job->payload, "probe"))
        || json_array_size (json_object_get (job->payload, "configs")) > 0) {
        kf_job_fail (res, "a wrapped evaluation is of one candidate (no probe, no configs)");
        return;
    }
    s_handle (cfg, job, wrap, res);
}

void
kf_exec_handle (void *arg, const kf_job_t *job, kf_job_result_t *res)
{
    s_handle (arg, job, NULL, res);
}

static void
s_handle (const kf_exec_config_t *cfg, const kf_job_t *job, const kf_exec_wrap_t *wrap,
          kf_job_result_t *res)
{
    memset (res, 0, sizeof *res);
    //  PyTorch references (kf_torch_ref.c): the runner the worker's main
    //  set up, or a failed job saying there is none.
    if (!wrap && job->kind && strcmp (job->kind, "reference") == 0) {
        kf_torch_ref_handle (kf_torch_ref_shared (), job, res);
        return;
    }
    if (!wrap && job->kind && strcmp (job->kind, "profile") == 0) {
        kf_profile_handle (cfg, job, res);     /* kf_profile.c: ncu or perf */
        return;
    }
    if (!wrap && job->kind && strcmp (job->kind, "model_profile") == 0) {
        kf_model_profile_handle (job, res);    /* kf_model_profile.c: kfctl profile-model */
        return;
    }
    double time_limit = cfg && cfg->time_limit_s > 0 ? cfg->time_limit_s : 120;
    const char *backend = cfg && cfg->backend ? cfg->backend : "host";
    if (!kf_exec_backend_find (backend)) {
        kf_job_fail (res, "unknown backend '%s'", backend);
        return;
    }
    if (!json_is_object (json_object_get (job->payload, "task"))) {
        kf_job_fail (res, "payload: task missing");
        return;
    }
    bool probe = json_is_true (json_object_get (job->payload, "probe"));
    json_t *refdata = json_object_get (job->payload, "reference_data");
    if (probe && (!job->frames || zmsg_size (job->frames) != 1 || refdata)) {
        kf_job_fail (res, "a reference probe takes one frame, the native reference artifact");
        return;
    }
    if (!probe && (!job->frames || zmsg_size (job->frames) < (refdata ? 1 : 2))) {
        kf_job_fail (res, "%s", refdata ? "need a frame: the candidate's artifact"
                                        : "need two frames: candidate and reference artifacts");
        return;
    }
    //  /proc/self/exe must be resolved here: after the drop to the
    //  sandbox user the child may not read its own /proc entry.
    char resolved[PATH_MAX];
    const char *worker = kf_exec_worker_binary (cfg, resolved, sizeof resolved);
    if (!worker) {
        kf_job_fail (res, "cannot resolve the worker binary: %s", strerror (errno));
        return;
    }
    char *hold_dir = NULL, held[4300] = "";
    json_t *note = NULL;
    if (refdata && s_hold_data (job->payload, refdata, &hold_dir, held, sizeof held, &note, res))
        return;
    json_t *configs = json_object_get (job->payload, "configs");
    if (probe)
        s_evaluate_one (cfg, worker, job->payload, NULL, zmsg_first (job->frames), NULL,
                        time_limit, res, NULL, NULL);
    else if (json_array_size (configs) > 0)
        s_sweep (cfg, worker, job, configs, hold_dir ? held : NULL, time_limit, res);
    else {
        //  One candidate: frame 0, the reference last (frame 1) or HELD.
        zframe_t *cand = zmsg_first (job->frames);
        zframe_t *ref = hold_dir ? NULL : zmsg_last (job->frames);
        s_evaluate_one (cfg, worker, job->payload, cand, ref, hold_dir ? held : NULL,
                        time_limit, res, NULL, wrap);
    }
    //  Where the data came from (this worker's store, or made again here)
    //  and whether its bytes are the run's.
    if (note && res->ok && res->result)
        json_object_set (res->result, "reference_data", note);
    json_decref (note);
    if (hold_dir) {
        kf_subproc_rmtree (hold_dir);
        free (hold_dir);
    }
}

json_t *
kf_exec_probe (const char *backend, int device, char **error)
{
    const kf_exec_backend_t *b = kf_exec_backend_find (backend ? backend : "host");
    char why[512];
    *error = NULL;
    if (!b) {
        snprintf (why, sizeof why, "backend: unknown backend '%s' (host, cuda, level-zero)", backend);
        *error = strdup (why);
        return NULL;
    }
    if (!b->probe)
        return kf_exec_capabilities (b->name);
    why[0] = 0;
    json_t *found = b->probe (device, why, sizeof why);
    if (!found) {
        *error = strdup (why[0] ? why : "no device");
        return NULL;
    }
    s_probed_keep (b->name, device, json_array_get (json_object_get (found, "devices"), 0));
    json_t *caps = json_object ();
    json_object_set_new (caps, "backends", json_pack ("[s]", b->name));
    json_object_set (caps, "arch", json_object_get (found, "arch"));
    json_object_set (caps, "devices", json_object_get (found, "devices"));
    json_decref (found);
    return caps;
}

json_t *
kf_exec_capabilities (const char *backend)
{
    const kf_exec_backend_t *b = kf_exec_backend_find (backend ? backend : "host");
    if (b && b->probe) {
        char *error = NULL;
        json_t *caps = kf_exec_probe (b->name, 0, &error);
        free (error);
        if (caps)
            return caps;
    }
    struct utsname un;
    json_t *caps = json_object ();
    json_t *backends = json_array ();
    if (b)
        json_array_append_new (backends, json_string (b->name));
    json_object_set_new (caps, "backends", backends);
    json_object_set_new (caps, "arch", json_string (uname (&un) == 0 ? un.machine : "unknown"));
    json_object_set_new (caps, "devices", b && b->devices ? b->devices () : json_array ());
    return caps;
}
