/*  kf_runner_ocl.c - the candidate's process for the opencl backend
 *  (kf_runner_ocl.h): a context of its own on the judge's device, the
 *  candidate's program built there after the confinement, its launches
 *  run on the judge's shared tensors when told to.
 *
 *  Nothing here is believed by the judge beyond "done" or "this went
 *  wrong": the judge checks inputs, canaries and outputs in the shared
 *  file itself, and times the calls with its own clock.
 */
#include "kf_runner_ocl.h"
#include "kf_confine.h"
#include "kf_dev_share.h"
#include "kf_ocl_eval.h"
#include "kf_runner.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


typedef struct {
    kf_ocl_eval_t *e;                  // in_d, cand_d: the variant a launch runs on
    kf_dev_runner_t shared;
    kf_ocl_dbuf_t buf[KF_DEV_MAX_VARIANTS][KF_OCL_MAX_TENSORS * 2];   // inputs, then outputs
    void *mapped[KF_DEV_MAX_VARIANTS][KF_OCL_MAX_TENSORS * 2];
    kf_cl_handle ping;
} s_run_t;

//  Variant V's buffers made the ones the launches get.
static void
s_use (s_run_t *run, int v)
{
    kf_ocl_eval_t *e = run->e;
    memcpy (e->in_d, run->buf[v], (size_t) e->n_in * sizeof e->in_d[0]);
    memcpy (e->cand_d, run->buf[v] + e->n_in, (size_t) e->n_out * sizeof e->cand_d[0]);
}

static const char *
s_err (long rc)
{
    return kf_ocl_err ((kf_cl_int) rc);
}

//  Hands every tensor to the device (ON_HOST false) or to the host. An
//  OpenCL error here is the device's, after the candidate's launches.
static long
s_hand (void *arg, kf_dev_runner_t *r, bool to_host)
{
    s_run_t *run = arg;
    kf_ocl_api_t *api = kf_ocl_dev.api;
    kf_cl_int rc = KF_CL_SUCCESS;
    for (int k = 0; k < r->variants * r->n && !rc; k++) {
        int v = k / r->n, t = k % r->n;
        kf_ocl_dbuf_t *b = &run->buf[v][t];
        if (to_host) {
            run->mapped[v][t] = api->EnqueueMapBuffer (kf_ocl_dev.queue, b->base, KF_CL_TRUE,
                                                       KF_CL_MAP_READ | KF_CL_MAP_WRITE, 0,
                                                       b->alloc, 0, NULL, NULL, &rc);
            //  The judge reads the file: a platform that maps elsewhere
            //  than the memory the buffer was made over is of no use.
            if (!rc && run->mapped[v][t] != r->map + v * r->variant_bytes + r->offset[t])
                rc = KF_CL_INVALID_OPERATION;
        }
        else
            rc = api->EnqueueUnmapMemObject (kf_ocl_dev.queue, b->base, run->mapped[v][t], 0,
                                             NULL, NULL);
    }
    if (!rc)
        rc = api->Finish (kf_ocl_dev.queue);
    return rc;
}

//  A buffer over each tensor's region of each variant of the file
//  (canaries included) and a sub-buffer over its data, which the kernels
//  get; the device holds them until the serve maps them.
static int
s_buffers (void *arg, kf_dev_runner_t *r, const kf_run_layout_t *l, char *why, size_t why_size)
{
    s_run_t *run = arg;
    kf_ocl_api_t *api = kf_ocl_dev.api;
    kf_cl_int rc = KF_CL_SUCCESS;
    for (int k = 0; k < r->variants * r->n && !rc; k++) {
        int v = k / r->n, t = k % r->n;
        const kf_run_tensor_t *rt = &l->t[t];
        kf_ocl_dbuf_t *b = &run->buf[v][t];
        unsigned char *at = r->map + v * r->variant_bytes + rt->offset;
        b->alloc = (size_t) rt->region;
        b->bytes = (size_t) rt->bytes;
        b->base = api->CreateBuffer (kf_ocl_dev.context,
                                     KF_CL_MEM_READ_WRITE | KF_CL_MEM_USE_HOST_PTR, b->alloc,
                                     at, &rc);
        kf_cl_buffer_region_t region = { r->pad, b->bytes ? b->bytes : 1 };
        if (!rc)
            b->data = api->CreateSubBuffer (b->base, KF_CL_MEM_READ_WRITE,
                                            KF_CL_BUFFER_CREATE_TYPE_REGION, &region, &rc);
        run->mapped[v][t] = at;
    }
    if (rc) {
        snprintf (why, why_size, "harness: setup: buffers over the shared tensors: %s",
                  kf_ocl_err (rc));
        return -1;
    }
    r->on_host = false;
    return 0;
}

static int
s_bind (void *arg)
{
    s_run_t *run = arg;
    s_use (run, 0);
    return kf_ocl_bind (run->e, &run->e->cand, run->e->cand_d) == KF_OCL_OK ? 0 : -1;
}

//  One call's launches on variant V, enqueued (the arguments are taken
//  at each enqueue).
static int
s_launch (void *arg, int v)
{
    s_run_t *run = arg;
    s_use (run, v);
    return kf_ocl_enqueue_call (run->e, &run->e->cand, run->e->cand_d, NULL, NULL) == KF_OCL_OK
           ? 0 : -1;
}

static long
s_wait (void *arg)
{
    (void) arg;
    return kf_ocl_dev.api->Finish (kf_ocl_dev.queue);
}

//  The candidate's program: its bundle (taken) planned against the task,
//  built by the platform, its kernels and scratch made.
static int
s_build (void *arg, void *bytes, size_t size, json_t *task)
{
    s_run_t *run = arg;
    run->e->cand.bytes = bytes;
    return kf_ocl_side_build (run->e, &run->e->cand, size, task) == KF_OCL_OK ? 0 : -1;
}

//  The round trip's work, as a timed call's: a tiny fill and the wait.
static void
s_ping (void *arg)
{
    s_run_t *r = arg;
    unsigned char zero = 0;
    if (kf_ocl_dev.api->EnqueueFillBuffer (kf_ocl_dev.queue, r->ping, &zero, 1, 0, 256, 0, NULL,
                                           NULL) == 0)
        kf_ocl_dev.api->Finish (kf_ocl_dev.queue);
}

static const kf_dev_runner_ops_t s_ops = {
    .api = "OpenCL", .err = s_err, .ping = s_ping, .build = s_build, .buffers = s_buffers,
    .bind = s_bind, .hand = s_hand, .launch = s_launch, .wait = s_wait
};

//  What must be done before the confinement: the loader and the task.
static int
s_prepare (s_run_t *r, char *why, size_t why_size)
{
    char reason[300];
    if (kf_ocl_preload (reason, sizeof reason) != 0) {
        snprintf (why, why_size, "harness: %s", reason);
        return -1;
    }
    r->e = calloc (1, sizeof *r->e);
    if (!r->e)
        return -1;
    if (kf_dev_runner_task (&r->shared, &r->e->n_in, r->e->in, &r->e->n_out, r->e->out, why,
                            why_size))
        return -1;
    r->shared.detail = r->e->detail;
    r->e->cand.what = "candidate";
    return 0;
}

//  The device, opened under the confinement; the thread check; the
//  ping's buffer.
static int
s_open (s_run_t *r, const char *select, char *why, size_t why_size)
{
    char reason[300];
    if (kf_ocl_open (select, reason, sizeof reason) != 0) {
        snprintf (why, why_size, "harness: %s", reason);
        return -1;
    }
    kf_cl_ulong type = 0;
    kf_ocl_dev.api->GetDeviceInfo (kf_ocl_dev.device, KF_CL_DEVICE_TYPE, sizeof type, &type,
                                   NULL);
    //  On a CPU platform the kernels run on the platform's threads.
    if ((type & KF_CL_DEVICE_TYPE_CPU)
        && kf_dev_runner_threads_confined ("the OpenCL platform", why, why_size) != 0)
        return -1;
    r->shared.pad = kf_ocl_dev.pad;
    kf_cl_int rc = kf_ocl_alloc (&r->ping, 256);
    if (rc) {
        snprintf (why, why_size, "harness: the candidate's context: %s", kf_ocl_err (rc));
        return -1;
    }
    return 0;
}

int
kf_runner_ocl_main (int argc, char **argv)
{
    char cwd[PATH_MAX];
    if (kf_dev_runner_begin (argc, argv, "opencl:", cwd, sizeof cwd) != 0)
        return 2;
    const char *candidate = argv[2];
    static s_run_t run;
    s_run_t *r = &run;
    //  A CPU platform reads what the machine is when its device opens
    //  (PoCL: the processor's model and the memory, through hwloc).
    const char *files[] = { candidate, "/proc/cpuinfo", "/proc/meminfo", NULL };
    const char *dirs[] = { cwd, argv[3][0] ? argv[3] : NULL, NULL };
    char report[240], why[400];
    if (s_prepare (r, why, sizeof why) != 0) {
        kf_dev_runner_reply (KF_RUN_FAILED, 0, 0, why);
        return 2;
    }
    if (kf_confine_self (files, dirs, report, sizeof report) != 0) {
        kf_dev_runner_reply (KF_RUN_FAILED, 0, 0, report);
        return 2;
    }
    if (s_open (r, argv[4] + 7, why, sizeof why) != 0) {
        kf_dev_runner_reply (KF_RUN_FAILED, 0, 0, why);
        return 2;
    }
    kf_dev_runner_ready (report);
    return kf_dev_runner_serve (&s_ops, r, &r->shared, candidate);
}
