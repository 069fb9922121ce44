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

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>


typedef struct {
    kf_ocl_eval_t *e;                  // in_d: the inputs, cand_d: the outputs
    json_t *task;
    unsigned char *map;
    size_t map_bytes;
    int n;                             // tensors: inputs, then outputs
    void *mapped[KF_OCL_MAX_TENSORS * 2];
    size_t offset[KF_OCL_MAX_TENSORS * 2];   // of each tensor's region in MAP
    bool on_host;
    kf_cl_handle ping;
} s_run_t;

//  Hands every tensor to the device (ON_HOST false) or to the host. An
//  OpenCL error here is the device's, after the candidate's launches.
static kf_cl_int
s_hand_over (s_run_t *r, bool to_host)
{
    if (r->on_host == to_host)
        return KF_CL_SUCCESS;
    kf_ocl_api_t *api = kf_ocl_dev.api;
    kf_cl_int rc = KF_CL_SUCCESS;
    for (int t = 0; t < r->n && !rc; t++) {
        kf_ocl_dbuf_t *b = t < r->e->n_in ? &r->e->in_d[t] : &r->e->cand_d[t - r->e->n_in];
        if (to_host) {
            r->mapped[t] = api->EnqueueMapBuffer (kf_ocl_dev.queue, b->base, KF_CL_TRUE,
                                                  KF_CL_MAP_READ | KF_CL_MAP_WRITE, 0, b->alloc,
                                                  0, NULL, NULL, &rc);
            //  The judge reads the file: a platform that maps elsewhere
            //  than the memory the buffer was made over is of no use.
            if (!rc && r->mapped[t] != r->map + r->offset[t])
                rc = KF_CL_INVALID_OPERATION;
        }
        else
            rc = api->EnqueueUnmapMemObject (kf_ocl_dev.queue, b->base, r->mapped[t], 0, NULL,
                                             NULL);
    }
    if (!rc)
        rc = api->Finish (kf_ocl_dev.queue);
    if (!rc)
        r->on_host = to_host;
    return rc;
}

//  The judge's file FD laid out as L: a buffer over each tensor's
//  region (canaries included) and a sub-buffer over its data, which the
//  kernels get; every buffer then mapped (the host holds them).
static int
s_setup (void *arg, int fd, const kf_run_layout_t *l, char *why, size_t why_size)
{
    s_run_t *r = arg;
    kf_ocl_eval_t *e = r->e;
    size_t pad = kf_ocl_dev.pad;
    int n = (int) (l->n_in + l->n_out);
    if (kf_dev_runner_layout_ok (l, e->n_in, e->in, e->n_out, e->out, pad, why, why_size))
        return -1;
    r->map = mmap (NULL, (size_t) l->file_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (r->map == MAP_FAILED) {
        r->map = NULL;
        snprintf (why, why_size, "harness: setup: cannot map the tensors: %s", strerror (errno));
        return -1;
    }
    r->map_bytes = (size_t) l->file_bytes;
    kf_ocl_api_t *api = kf_ocl_dev.api;
    kf_cl_int rc = KF_CL_SUCCESS;
    for (int t = 0; t < n && !rc; t++) {
        const kf_run_tensor_t *rt = &l->t[t];
        kf_ocl_dbuf_t *b = t < e->n_in ? &e->in_d[t] : &e->cand_d[t - e->n_in];
        b->alloc = (size_t) rt->region;
        b->bytes = (size_t) rt->bytes;
        b->base = api->CreateBuffer (kf_ocl_dev.context,
                                     KF_CL_MEM_READ_WRITE | KF_CL_MEM_USE_HOST_PTR, b->alloc,
                                     r->map + rt->offset, &rc);
        kf_cl_buffer_region_t region = { pad, b->bytes ? b->bytes : 1 };
        if (!rc)
            b->data = api->CreateSubBuffer (b->base, KF_CL_MEM_READ_WRITE,
                                            KF_CL_BUFFER_CREATE_TYPE_REGION, &region, &rc);
        r->offset[t] = (size_t) rt->offset;
        r->mapped[t] = r->map + rt->offset;
    }
    r->n = n;
    r->on_host = false;
    if (!rc)
        rc = s_hand_over (r, true);
    if (rc) {
        snprintf (why, why_size, "harness: setup: buffers over the shared tensors: %s",
                  kf_ocl_err (rc));
        return -1;
    }
    //  Every kernel argument once: a kf-launch line the kernel refuses
    //  is the candidate's load failure, known before any call.
    if (kf_ocl_bind (e, &e->cand, e->cand_d) != KF_OCL_OK) {
        snprintf (why, why_size, "%s", e->detail);
        return 1;
    }
    return 0;
}

//  CALLS calls of the candidate, every launch in order, and the wait for
//  them.
static int
s_calls (void *arg, uint32_t calls, uint32_t *done, char *why, size_t why_size)
{
    s_run_t *r = arg;
    kf_cl_int rc = s_hand_over (r, false);
    for (*done = 0; *done < calls && !rc; ++*done)
        if (kf_ocl_enqueue_call (r->e, &r->e->cand, r->e->cand_d, NULL, NULL) != KF_OCL_OK) {
            //  The platform refused a launch (its sizes, an argument):
            //  the candidate's load failure, said before anything ran.
            snprintf (why, why_size, "%s", r->e->detail);
            return 1;
        }
    if (!rc)
        rc = kf_ocl_dev.api->Finish (kf_ocl_dev.queue);
    if (rc) {
        snprintf (why, why_size, "OpenCL error in the candidate: %s", kf_ocl_err (rc));
        return -1;
    }
    return 0;
}

static int
s_hand (void *arg, bool to_host, char *why, size_t why_size)
{
    kf_cl_int rc = s_hand_over (arg, to_host);
    if (rc)
        snprintf (why, why_size, "OpenCL error in the candidate: %s", kf_ocl_err (rc));
    return rc ? -1 : 0;
}

//  The candidate's program: its bundle (taken) planned against the task,
//  built by the platform, its kernels and scratch made.
static int
s_load (void *arg, void *bytes, size_t size, char *why, size_t why_size)
{
    s_run_t *r = arg;
    r->e->cand.bytes = bytes;
    if (kf_ocl_side_build (r->e, &r->e->cand, size, r->task) != KF_OCL_OK) {
        snprintf (why, why_size, "%s", r->e->detail);
        return -1;
    }
    return 0;
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
    .ping = s_ping, .load = s_load, .setup = s_setup, .calls = s_calls, .hand = s_hand
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
    if (kf_dev_runner_task (&r->task, &r->e->n_in, r->e->in, &r->e->n_out, r->e->out, why,
                            why_size))
        return -1;
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
    return kf_dev_runner_serve (&s_ops, r, candidate);
}
