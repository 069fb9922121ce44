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
#include "kf_eval_channel.h"
#include "kf_file.h"
#include "kf_ocl_eval.h"
#include "kf_runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define S_SOCK 3
#define S_FILE_BYTES ((rlim_t) 256 << 20)   // kf_subproc's default RLIMIT_FSIZE
#define S_MAX_BUNDLE ((size_t) 256 << 20)

typedef struct {
    kf_ocl_eval_t *e;                  // in_d: the inputs, cand_d: the outputs
    json_t *task;
    unsigned char *map;
    size_t map_bytes;
    int n;                             // tensors: inputs, then outputs
    void *mapped[KF_OCL_MAX_TENSORS * 2];
    size_t offset[KF_OCL_MAX_TENSORS * 2];   // of each tensor's region in MAP
    bool on_host, ready, loaded;
    kf_cl_handle ping;
} s_run_t;

static void
s_reply (int status, int rc, uint32_t calls, const char *detail)
{
    kf_runner_send_reply (S_SOCK, status, rc, calls, detail);
}

//  A fault in the candidate's kernel (on a CPU platform it runs in this
//  process): say which, with send(2) only, and end.
static void
s_on_fault (int sig, siginfo_t *info, void *uctx)
{
    (void) info;
    (void) uctx;
    s_reply (KF_RUN_CRASHED, sig, 0, kf_eval_fault_what (sig, 0));
    _exit (3);
}

//  A load failure in full where the judge reads it, and the start of it
//  in the reply.
static void
s_load_failed (const char *detail)
{
    int fd = open (KF_RUN_OCL_LOAD_LOG, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                   0600);
    if (fd >= 0) {
        ssize_t n = write (fd, detail, strlen (detail));
        (void) n;
        close (fd);
    }
    s_reply (KF_RUN_FAILED, 0, 0, detail);
}

static ssize_t
s_recv (void *buf, size_t size, int *fd)
{
    struct iovec iov = { .iov_base = buf, .iov_len = size };
    char cbuf[CMSG_SPACE (sizeof (int))];
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                          .msg_controllen = sizeof cbuf };
    ssize_t n;
    do
        n = recvmsg (S_SOCK, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    *fd = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c; c = CMSG_NXTHDR (&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy (fd, CMSG_DATA (c), sizeof (int));
    return n;
}

//  0 when every thread of this process runs under the seccomp filter
//  (Landlock's domain comes with it: both are inherited by threads made
//  after them); -1 with WHY naming the first that does not.
static int
s_threads_confined (char *why, size_t why_size)
{
    DIR *d = opendir ("/proc/self/task");
    if (!d) {
        snprintf (why, why_size, "harness: cannot list this process's threads: %s",
                  strerror (errno));
        return -1;
    }
    int rc = 0;
    struct dirent *ent;
    while (rc == 0 && (ent = readdir (d))) {
        if (ent->d_name[0] == '.')
            continue;
        char path[320], line[128];
        snprintf (path, sizeof path, "/proc/self/task/%.64s/status", ent->d_name);
        FILE *f = fopen (path, "r");
        bool filtered = false;
        while (f && fgets (line, sizeof line, f))
            if (strncmp (line, "Seccomp:", 8) == 0)
                filtered = atoi (line + 8) == 2;
        if (f)
            fclose (f);
        if (!filtered) {
            snprintf (why, why_size, "harness: thread %.32s of the candidate's process runs "
                      "without the seccomp filter (the OpenCL platform started it before the "
                      "confinement)", ent->d_name);
            rc = -1;
        }
    }
    closedir (d);
    return rc;
}

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
s_setup (s_run_t *r, int fd, const kf_run_layout_t *l, char *why, size_t why_size)
{
    kf_ocl_eval_t *e = r->e;
    size_t page = (size_t) sysconf (_SC_PAGESIZE), pad = kf_ocl_dev.pad;
    int n = (int) (l->n_in + l->n_out);
    if (r->ready || !r->loaded || (int) l->n_in != e->n_in || (int) l->n_out != e->n_out
        || l->variants != 1 || l->file_bytes % page || l->file_bytes == 0) {
        snprintf (why, why_size, "harness: setup: a layout the runner does not take");
        return -1;
    }
    for (int t = 0; t < n; t++) {
        const kf_run_tensor_t *rt = &l->t[t];
        const kf_eval_spec_t *s = t < e->n_in ? &e->in[t] : &e->out[t - e->n_in];
        if (rt->bytes != s->bytes || rt->offset % page || rt->region < 2 * pad + rt->bytes
            || rt->offset > l->file_bytes || rt->region > l->file_bytes - rt->offset) {
            snprintf (why, why_size, "harness: setup: tensor %d does not fit the task", t);
            return -1;
        }
    }
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
        snprintf (why, why_size, "%.300s", e->detail);
        return 1;
    }
    r->ready = true;
    return 0;
}

//  CALLS calls of the candidate, every launch in order, and the wait for
//  them. Ends the process on an OpenCL error: the context may be lost.
static void
s_calls (s_run_t *r, uint32_t calls)
{
    kf_cl_int rc = s_hand_over (r, false);
    uint32_t k = 0;
    for (; k < calls && !rc; k++)
        if (kf_ocl_enqueue_call (r->e, &r->e->cand, r->e->cand_d, NULL, NULL) != KF_OCL_OK) {
            //  The platform refused a launch (its sizes, an argument):
            //  the candidate's load failure, said before anything ran.
            s_load_failed (r->e->detail);
            _exit (3);
        }
    if (!rc)
        rc = kf_ocl_dev.api->Finish (kf_ocl_dev.queue);
    if (rc) {
        char why[240];
        snprintf (why, sizeof why, "OpenCL error in the candidate: %s", kf_ocl_err (rc));
        s_reply (KF_RUN_CRASHED, 0, k, why);
        _exit (3);
    }
    s_reply (KF_RUN_OK, 0, k, "");
}

//  The candidate's program: its bundle read, planned against the task,
//  built by the platform, its kernels and scratch made.
static int
s_load (s_run_t *r, const char *candidate)
{
    size_t size = 0;
    r->e->cand.bytes = kf_file_read (candidate, S_MAX_BUNDLE, &size);
    if (!r->e->cand.bytes || !kf_ze_is_bundle (r->e->cand.bytes, size)) {
        s_load_failed ("candidate does not load: not a KF-SPIRV bundle (an OpenCL C source "
                       "built by the compile worker's spirv toolchain)");
        return -1;
    }
    if (kf_ocl_side_build (r->e, &r->e->cand, size, r->task) != KF_OCL_OK) {
        s_load_failed (r->e->detail);
        return -1;
    }
    r->loaded = true;
    s_reply (KF_RUN_OK, 0, 0, "");
    return 0;
}

//  What must be done before the confinement: the loader and the task.
static int
s_prepare (s_run_t *r, char *why, size_t why_size)
{
    char reason[300];
    size_t size;
    if (kf_ocl_preload (reason, sizeof reason) != 0) {
        snprintf (why, why_size, "harness: %s", reason);
        return -1;
    }
    char *text = kf_file_read (KF_RUN_OCL_TASK, 1 << 24, &size);
    r->task = text ? json_loads (text, 0, NULL) : NULL;
    free (text);
    if (!r->task) {
        snprintf (why, why_size, "harness: the runner has no task");
        return -1;
    }
    r->e = calloc (1, sizeof *r->e);
    if (!r->e)
        return -1;
    json_t *ins = json_object_get (r->task, "inputs"), *outs = json_object_get (r->task, "outputs");
    r->e->n_in = (int) json_array_size (ins);
    r->e->n_out = (int) json_array_size (outs);
    if (r->e->n_in > KF_OCL_MAX_TENSORS || r->e->n_out > KF_OCL_MAX_TENSORS) {
        snprintf (why, why_size, "harness: the task has too many tensors");
        return -1;
    }
    for (int t = 0; t < r->e->n_in + r->e->n_out; t++) {
        json_t *spec = t < r->e->n_in ? json_array_get (ins, (size_t) t)
                                      : json_array_get (outs, (size_t) (t - r->e->n_in));
        kf_eval_spec_t *s = t < r->e->n_in ? &r->e->in[t] : &r->e->out[t - r->e->n_in];
        if (kf_eval_spec (s, spec, why, why_size))
            return -1;
    }
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
    if ((type & KF_CL_DEVICE_TYPE_CPU) && s_threads_confined (why, why_size) != 0)
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
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    if (getppid () == 1 || argc < 5 || strncmp (argv[4], "opencl:", 7) != 0)
        return 2;
    const char *candidate = argv[2];
    char cwd[PATH_MAX];
    if (!getcwd (cwd, sizeof cwd))
        return 2;
    struct rlimit fsize = { .rlim_cur = S_FILE_BYTES, .rlim_max = S_FILE_BYTES };
    setrlimit (RLIMIT_FSIZE, &fsize);
    static s_run_t run;
    s_run_t *r = &run;
    //  A CPU platform reads what the machine is when its device opens
    //  (PoCL: the processor's model and the memory, through hwloc).
    const char *files[] = { candidate, "/proc/cpuinfo", "/proc/meminfo", NULL };
    const char *dirs[] = { cwd, argv[3][0] ? argv[3] : NULL, NULL };
    char report[240], why[400];
    if (s_prepare (r, why, sizeof why) != 0) {
        s_reply (KF_RUN_FAILED, 0, 0, why);
        return 2;
    }
    if (kf_confine_self (files, dirs, report, sizeof report) != 0) {
        s_reply (KF_RUN_FAILED, 0, 0, report);
        return 2;
    }
    if (s_open (r, argv[4] + 7, why, sizeof why) != 0) {
        s_reply (KF_RUN_FAILED, 0, 0, why);
        return 2;
    }
    kf_eval_on_faults (s_on_fault);
    s_reply (KF_RUN_OK, 0, 0, report);

    static union { uint32_t op; kf_run_setup_msg_t setup; kf_run_call_msg_t call; } msg;
    for (;;) {
        int fd;
        ssize_t n = s_recv (&msg, sizeof msg, &fd);
        if (n <= 0)
            return 0;                   // the judge is done with us
        if (fd >= 0 && !(msg.op == KF_RUN_OP_SETUP && (size_t) n == sizeof msg.setup)) {
            close (fd);
            fd = -1;
        }
        if (msg.op == KF_RUN_OP_PING && !r->loaded) {
            unsigned char zero = 0;
            kf_cl_int rc = kf_ocl_dev.api->EnqueueFillBuffer (kf_ocl_dev.queue, r->ping, &zero,
                                                              1, 0, 256, 0, NULL, NULL);
            if (!rc)
                kf_ocl_dev.api->Finish (kf_ocl_dev.queue);
            s_reply (KF_RUN_OK, 0, 0, "");
        }
        else if (msg.op == KF_RUN_OP_LOAD && !r->loaded) {
            if (s_load (r, candidate) != 0)
                return 2;
        }
        else if (msg.op == KF_RUN_OP_SETUP && fd >= 0) {
            int rc = s_setup (r, fd, &msg.setup.layout, why, sizeof why);
            close (fd);
            if (rc > 0)
                s_load_failed (why);
            else
                s_reply (rc == 0 ? KF_RUN_OK : KF_RUN_FAILED, 0, 0, why);
            if (rc != 0)
                return 2;
        }
        else if (r->ready && msg.op == KF_RUN_OP_CALL && (size_t) n == sizeof msg.call)
            s_calls (r, msg.call.calls);
        else if (r->ready && (msg.op == KF_RUN_OP_OCL_HOST || msg.op == KF_RUN_OP_OCL_DEVICE)) {
            kf_cl_int rc = s_hand_over (r, msg.op == KF_RUN_OP_OCL_HOST);
            if (rc) {
                snprintf (why, sizeof why, "OpenCL error in the candidate: %s", kf_ocl_err (rc));
                s_reply (KF_RUN_CRASHED, 0, 0, why);
                _exit (3);
            }
            s_reply (KF_RUN_OK, 0, 0, "");
        }
        else
            s_reply (KF_RUN_FAILED, 0, 0, "harness: a message the runner does not know");
    }
}
