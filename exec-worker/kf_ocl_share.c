/*  kf_ocl_share.c - the OpenCL judge's hold on the candidate's process
 *  (kf_ocl_eval.h, kf_runner_ocl.h).
 *
 *  The judge keeps the reference, its inputs and outputs, the right
 *  answers, its clock and the verdict channel; the candidate's kernels
 *  run in the runner, a process of their own started with a fresh exec.
 *  What the two share is one memfd holding the candidate's inputs and
 *  outputs and nothing else, each tensor in a page-aligned region:
 *
 *      [pad canary][data, rounded up to pad][pad canary, to the page]
 *
 *  pad is the device's base alignment (at least 256 bytes; the runner
 *  opens the same device and finds the same), so the runner's
 *  sub-buffer over the data is legal; every canary byte is 0xA5 and is
 *  read back after every call.
 */
#include "kf_eval_channel.h"
#include "kf_ocl_eval.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define S_LOG_MAX 2000                  // bytes of the runner's load log read

static int
s_harness (kf_ocl_eval_t *e, const char *what)
{
    snprintf (e->detail, sizeof e->detail, "harness: %s: %s", what, strerror (errno));
    return KF_OCL_HARNESS;
}

//  The layout of the candidate's tensors, inputs then outputs.
static void
s_lay_out (kf_ocl_eval_t *e)
{
    kf_run_layout_t *l = &e->layout;
    memset (l, 0, sizeof *l);
    uint64_t page = (uint64_t) sysconf (_SC_PAGESIZE), pad = kf_ocl_dev.pad, at = 0;
    l->n_in = (uint32_t) e->n_in;
    l->n_out = (uint32_t) e->n_out;
    l->variants = 1;
    for (int t = 0; t < e->n_in + e->n_out; t++) {
        const kf_eval_spec_t *s = t < e->n_in ? &e->in[t] : &e->out[t - e->n_in];
        uint64_t body = ((uint64_t) (s->bytes ? s->bytes : 1) + pad - 1) / pad * pad;
        kf_run_tensor_t *rt = &l->t[t];
        rt->dtype = s->dtype;
        rt->offset = at;
        rt->bytes = s->bytes;
        rt->region = (pad + body + pad + page - 1) / page * page;
        at += rt->region;
    }
    l->file_bytes = l->variant_bytes = at;
}

//  The runner's task: the tensors and scalars its kf-launch lines name,
//  nothing else of the job.
static int
s_write_task (kf_ocl_eval_t *e, const char *run, json_t *task)
{
    json_t *t = json_object ();
    const char *keys[] = { "inputs", "outputs", "scalars" };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        json_t *v = json_object_get (task, keys[k]);
        if (v)
            json_object_set (t, keys[k], v);
    }
    char path[4300];
    snprintf (path, sizeof path, "%s/%s", run, KF_RUN_OCL_TASK);
    int rc = json_dump_file (t, path, JSON_COMPACT);
    json_decref (t);
    if (rc != 0) {
        snprintf (e->detail, sizeof e->detail, "harness: cannot write %.1500s", path);
        return KF_OCL_HARNESS;
    }
    return KF_OCL_OK;
}

//  The runner's account of a load failure in full (a build log): its
//  file when it is a plain one, else the reply's short detail. Bounded,
//  never following a link or waiting on a FIFO, printable only.
static void
s_load_log (kf_ocl_eval_t *e, const char *run, const char *fallback)
{
    char path[4300], text[S_LOG_MAX + 1];
    snprintf (path, sizeof path, "%s/%s", run, KF_RUN_OCL_LOAD_LOG);
    int fd = open (path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    ssize_t n = -1;
    if (fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode))
        n = read (fd, text, S_LOG_MAX);
    if (fd >= 0)
        close (fd);
    if (n <= 0) {
        snprintf (e->detail, sizeof e->detail, "%s", fallback);
        return;
    }
    text[n] = 0;
    for (char *c = text; *c; c++)
        if ((unsigned char) *c > 126 || ((unsigned char) *c < 32 && *c != '\n'))
            *c = '?';
    snprintf (e->detail, sizeof e->detail, "%s", text);
}

//  A reply that is not "done": the candidate's fault, or ours.
static int
s_failed (kf_ocl_eval_t *e, const kf_run_reply_t *reply, const char *when)
{
    if (reply->status == KF_RUN_FAILED && strncmp (reply->detail, "harness: ", 9) == 0) {
        snprintf (e->detail, sizeof e->detail, "%s", reply->detail);
        return KF_OCL_HARNESS;
    }
    if (reply->status == KF_RUN_FAILED && strncmp (reply->detail, "candidate", 9) == 0) {
        snprintf (e->detail, sizeof e->detail, "%s", reply->detail);
        return KF_OCL_LOAD_FAILED;         // a launch the platform refused
    }
    snprintf (e->detail, sizeof e->detail, "%s: %s", when, reply->detail);
    return KF_OCL_CRASHED;
}

int
kf_ocl_share_start (kf_ocl_eval_t *e, const char *dir, json_t *job, json_t *task,
                    void (*before_ping) (void *), void *arg)
{
    s_lay_out (e);
    e->shm_fd = memfd_create ("kf-ocl-tensors", MFD_CLOEXEC);
    if (e->shm_fd < 0 || ftruncate (e->shm_fd, (off_t) e->layout.file_bytes) != 0)
        return s_harness (e, "the shared tensors");
    e->shm_bytes = (size_t) e->layout.file_bytes;
    e->shm = mmap (NULL, e->shm_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, e->shm_fd, 0);
    if (e->shm == MAP_FAILED) {
        e->shm = NULL;
        return s_harness (e, "mapping the shared tensors");
    }
    memset (e->shm, 0xA5, e->shm_bytes);
    for (int t = 0; t < e->n_in + e->n_out; t++) {
        unsigned char *data = e->shm + e->layout.t[t].offset + kf_ocl_dev.pad;
        if (t < e->n_in)
            e->cand_in[t] = data;
        else
            e->cand_out[t - e->n_in] = data;
    }
    char run[4200];
    snprintf (run, sizeof run, "%s/run", dir);
    if (mkdir (run, 0700) != 0 && errno != EEXIST)
        return s_harness (e, "making the runner's directory");
    int st = s_write_task (e, run, task);
    if (st)
        return st;
    //  What the runner must not find once the judge holds it.
    kf_runner_hide_job (dir, job);
    char select[300], buf[32], cand[4300];
    int device = (int) json_integer_value (json_object_get (job, "device"));
    snprintf (select, sizeof select, "%s", kf_ocl_selection (device, buf, sizeof buf));
    snprintf (cand, sizeof cand, "%s/candidate.so", dir);
    kf_run_start_t opts = { .shared = json_string_value (json_object_get (job, "shared_dir")),
                            .cuda_device = -1, .opencl = select,
                            .before_ping = before_ping, .arg = arg };
    kf_run_reply_t reply;
    kf_eval_set_phase ('C');         // the platform builds the candidate's source
    e->runner = kf_runner_start (cand, run, &opts, &reply);
    if (e->runner && kf_runner_setup (e->runner, e->shm_fd, &e->layout, &reply) != 0)
        kf_runner_destroy (&e->runner);
    kf_eval_set_phase ('H');
    if (e->runner)
        return KF_OCL_OK;
    if (reply.status == KF_RUN_CRASHED) {
        snprintf (e->detail, sizeof e->detail, "%s", reply.detail);
        return KF_OCL_CRASHED;
    }
    if (strncmp (reply.detail, "harness: ", 9) == 0 || strncmp (reply.detail, "seccomp", 7) == 0) {
        snprintf (e->detail, sizeof e->detail, "%s", reply.detail);
        return KF_OCL_HARNESS;
    }
    s_load_log (e, run, reply.detail);
    return KF_OCL_LOAD_FAILED;
}

int
kf_ocl_share_call (kf_ocl_eval_t *e, uint32_t calls, double *wall_s, const char *when)
{
    kf_run_reply_t reply;
    kf_eval_set_phase ('C');
    int rc = kf_runner_call (e->runner, calls, NULL, 0, wall_s, &reply);
    kf_eval_set_phase ('H');
    return rc == 0 ? KF_OCL_OK : s_failed (e, &reply, when);
}

int
kf_ocl_share_hand (kf_ocl_eval_t *e, bool to_host, const char *when)
{
    kf_run_reply_t reply;
    double ignored;
    kf_eval_set_phase ('C');
    int rc = kf_runner_op (e->runner, to_host ? KF_RUN_OP_OCL_HOST : KF_RUN_OP_OCL_DEVICE,
                           &ignored, &reply);
    kf_eval_set_phase ('H');
    return rc == 0 ? KF_OCL_OK : s_failed (e, &reply, when);
}

double
kf_ocl_share_round_trip_s (kf_ocl_eval_t *e)
{
    return kf_runner_round_trip_s (e->runner);
}

json_t *
kf_ocl_share_isolation (kf_ocl_eval_t *e)
{
    return json_pack ("{s:s, s:s, s:f, s:f}", "candidate", "own process", "confinement",
                      kf_runner_confinement (e->runner), "round_trip_us",
                      kf_runner_round_trip_s (e->runner) * 1e6, "cpu_after_calls_s",
                      kf_runner_cpu_outside_s (e->runner));
}

void
kf_ocl_share_end (kf_ocl_eval_t *e)
{
    kf_runner_destroy (&e->runner);
    if (e->shm)
        munmap (e->shm, e->shm_bytes);
    if (e->shm_fd >= 0)
        close (e->shm_fd);
    e->shm = NULL;
    e->shm_fd = -1;
}
