/*  kf_runner_ze.c - the candidate's process for the level-zero backend
 *  (kf_runner_ze.h): a context of its own on the judge's GPU, the
 *  candidate's module built there after the confinement, its launches
 *  run on device copies of the judge's shared tensors when told to.
 *
 *  NOT YET RUN ON HARDWARE: test_ze runs it against kf_ze_double.
 *
 *  Nothing here is believed by the judge beyond "done" or "this went
 *  wrong": the judge checks inputs, canaries and outputs in the shared
 *  file itself, and times the calls with its own clock.
 */
#include "kf_runner_ze.h"
#include "kf_confine.h"
#include "kf_dev_share.h"
#include "kf_ze_eval.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


typedef struct {
    kf_ze_eval_t *e;                   // in_d, cand_d: the variant a launch runs on
    kf_dev_runner_t shared;
    kf_ze_dbuf_t buf[KF_DEV_MAX_VARIANTS][KF_ZE_MAX_TENSORS * 2];   // inputs, then outputs
    void *ping;
} s_run_t;

//  Variant V's buffers made the ones the launches get.
static void
s_use (s_run_t *run, int v)
{
    kf_ze_eval_t *e = run->e;
    memcpy (e->in_d, run->buf[v], (size_t) e->n_in * sizeof e->in_d[0]);
    memcpy (e->cand_d, run->buf[v] + e->n_in, (size_t) e->n_out * sizeof e->cand_d[0]);
}

static const char *
s_err (long rc)
{
    return kf_ze_err ((uint32_t) rc);
}

//  Hands every tensor to the device (TO_HOST false: each region of the
//  file, canaries included, copied up) or to the host (copied down, so
//  the judge reads whatever the launches wrote, canaries too).
static long
s_hand (void *arg, kf_dev_runner_t *r, bool to_host)
{
    s_run_t *run = arg;
    uint32_t rc = 0;
    for (int k = 0; k < r->variants * r->n && !rc; k++) {
        int v = k / r->n, t = k % r->n;
        kf_ze_dbuf_t *b = &run->buf[v][t];
        unsigned char *at = r->map + v * r->variant_bytes + r->offset[t];
        rc = to_host ? kf_ze_download (at, b->base, b->alloc) : kf_ze_upload (b->base, at, b->alloc);
    }
    return rc;
}

//  Device memory of this context for each tensor's region of each
//  variant of the file (the kernels get the data within it); the tensors
//  start on the host.
static int
s_buffers (void *arg, kf_dev_runner_t *r, const kf_run_layout_t *l, char *why, size_t why_size)
{
    s_run_t *run = arg;
    uint32_t rc = 0;
    size_t largest = 64;
    for (int k = 0; k < r->variants * r->n && !rc; k++) {
        const kf_run_tensor_t *rt = &l->t[k % r->n];
        kf_ze_dbuf_t *b = &run->buf[k / r->n][k % r->n];
        b->alloc = (size_t) rt->region;
        b->bytes = (size_t) rt->bytes;
        rc = kf_ze_device_alloc ((void **) &b->base, b->alloc);
        b->data = b->base ? b->base + KF_ZE_PAD : NULL;
        largest = b->alloc > largest ? b->alloc : largest;
    }
    if (!rc)
        rc = kf_ze_stage_reserve (largest);
    if (rc) {
        snprintf (why, why_size, "harness: setup: device memory for the tensors: %s",
                  kf_ze_err (rc));
        return -1;
    }
    r->on_host = true;
    return 0;
}

static int
s_bind (void *arg)
{
    s_run_t *run = arg;
    s_use (run, 0);
    return kf_ze_bind (run->e, &run->e->cand, run->e->cand_d) == KF_ZE_OK ? 0 : -1;
}

//  One call's launches on variant V, appended to the command list (the
//  arguments are taken at each append).
static int
s_launch (void *arg, int v)
{
    s_run_t *run = arg;
    s_use (run, v);
    return kf_ze_append_call (run->e, &run->e->cand, run->e->cand_d) == KF_ZE_OK ? 0 : -1;
}

static long
s_wait (void *arg)
{
    (void) arg;
    return kf_ze_submit ();
}

//  The candidate's module: its bundle (taken) planned against the task,
//  built by the driver, its kernels and scratch made.
static int
s_build (void *arg, void *bytes, size_t size, json_t *task)
{
    s_run_t *run = arg;
    run->e->cand.bytes = bytes;
    return kf_ze_side_build (run->e, &run->e->cand, size, task) == KF_ZE_OK ? 0 : -1;
}

//  What must be done before the confinement: the task, the loader, the
//  driver, the GPU's context and queue (the driver opens its device
//  files here), the staging and the ping's buffer.
static int
s_prepare (s_run_t *r, int device, char *why, size_t why_size)
{
    char reason[400];
    r->e = calloc (1, sizeof *r->e);
    if (!r->e) {
        snprintf (why, why_size, "harness: out of memory");
        return -1;
    }
    if (kf_dev_runner_task (&r->shared, &r->e->n_in, r->e->in, &r->e->n_out, r->e->out, why,
                            why_size))
        return -1;
    r->shared.detail = r->e->detail;
    r->shared.pad = KF_ZE_PAD;
    r->e->cand.what = "candidate";
    if (kf_ze_find_device (device, reason, sizeof reason)
        || kf_ze_open_queue (reason, sizeof reason)) {
        snprintf (why, why_size, "harness: %.300s", reason);
        return -1;
    }
    uint32_t rc = kf_ze_stage_reserve (64);
    if (!rc)
        rc = kf_ze_device_alloc (&r->ping, 256);
    if (rc) {
        snprintf (why, why_size, "harness: the candidate's context: %s", kf_ze_err (rc));
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
    if (kf_ze_dev.api->CommandListAppendMemoryFill (kf_ze_dev.list, r->ping, &zero, 1, 256, NULL,
                                                    0, NULL) == 0)
        kf_ze_submit ();
    else
        kf_ze_dev.api->CommandListReset (kf_ze_dev.list);
}

static const kf_dev_runner_ops_t s_ops = {
    .api = "Level Zero", .err = s_err, .ping = s_ping, .build = s_build, .buffers = s_buffers,
    .bind = s_bind, .hand = s_hand, .launch = s_launch, .wait = s_wait
};

int
kf_runner_ze_main (int argc, char **argv)
{
    char cwd[PATH_MAX];
    if (kf_dev_runner_begin (argc, argv, "level-zero:", cwd, sizeof cwd) != 0)
        return 2;
    const char *candidate = argv[2];
    static s_run_t run;
    s_run_t *r = &run;
    const char *files[] = { candidate, NULL };
    const char *dirs[] = { cwd, argv[3][0] ? argv[3] : NULL, NULL };
    char report[240], why[400];
    if (s_prepare (r, atoi (argv[4] + 11), why, sizeof why) != 0) {
        kf_dev_runner_reply (KF_RUN_FAILED, 0, 0, why);
        return 2;
    }
    if (kf_confine_self (files, dirs, report, sizeof report) != 0) {
        kf_dev_runner_reply (KF_RUN_FAILED, 0, 0, report);
        return 2;
    }
    kf_dev_runner_ready (report);
    return kf_dev_runner_serve (&s_ops, r, &r->shared, candidate);
}
