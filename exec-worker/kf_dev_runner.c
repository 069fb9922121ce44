/*  kf_dev_runner.c - what the OpenCL and Level Zero runners
 *  (kf_runner_ocl.c, kf_runner_ze.c) do alike (kf_dev_share.h): the
 *  start of their main, the judge's messages read and answered over
 *  their own device work (kf_dev_runner_ops_t): the judge's file mapped
 *  and checked against the task, the calls counted, the tensors' holder
 *  tracked, the device's errors worded; load failures written,
 *  the task file read, the judge's layout checked against the task, and
 *  the check that no thread of the process escaped the confinement.
 */
#include "kf_dev_share.h"
#include "kf_eval_channel.h"
#include "kf_file.h"
#include "kf_ze_launch.h"

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
#include <unistd.h>

#define S_SOCK 3
#define S_FILE_BYTES ((rlim_t) 256 << 20)   // kf_subproc's default RLIMIT_FSIZE
#define S_MAX_BUNDLE ((size_t) 256 << 20)

ssize_t
kf_dev_runner_recv (void *buf, size_t size, int *fd)
{
    return kf_runner_recv (S_SOCK, buf, size, fd);
}

void
kf_dev_runner_reply (int status, int rc, uint32_t calls, const char *detail)
{
    kf_runner_send_reply (S_SOCK, status, rc, calls, detail);
}

void
kf_dev_runner_load_failed (const char *detail)
{
    int fd = open (KF_RUN_LOAD_LOG, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
        ssize_t n = write (fd, detail, strlen (detail));
        (void) n;
        close (fd);
    }
    kf_dev_runner_reply (KF_RUN_FAILED, 0, 0, detail);
}

int
kf_dev_runner_task (kf_dev_runner_t *r, int *n_in, kf_eval_spec_t *in, int *n_out,
                    kf_eval_spec_t *out, char *why, size_t why_size)
{
    size_t size;
    char *text = kf_file_read (KF_RUN_TASK, 1 << 24, &size);
    json_t *task = r->task = text ? json_loads (text, 0, NULL) : NULL;
    free (text);
    if (!task) {
        snprintf (why, why_size, "harness: the runner has no task");
        return -1;
    }
    json_t *ins = json_object_get (task, "inputs"), *outs = json_object_get (task, "outputs");
    *n_in = (int) json_array_size (ins);
    *n_out = (int) json_array_size (outs);
    if (*n_in > KF_DEV_MAX_TENSORS || *n_out > KF_DEV_MAX_TENSORS) {
        snprintf (why, why_size, "harness: the task has too many tensors");
        return -1;
    }
    for (int t = 0; t < *n_in + *n_out; t++) {
        json_t *spec = t < *n_in ? json_array_get (ins, (size_t) t)
                                 : json_array_get (outs, (size_t) (t - *n_in));
        if (kf_eval_spec (t < *n_in ? &in[t] : &out[t - *n_in], spec, why, why_size))
            return -1;
    }
    r->n_in = *n_in;
    r->n_out = *n_out;
    r->in = in;
    r->out = out;
    return 0;
}

int
kf_dev_runner_layout_ok (const kf_run_layout_t *l, int n_in, const kf_eval_spec_t *in,
                         int n_out, const kf_eval_spec_t *out, size_t pad, char *why,
                         size_t why_size)
{
    size_t page = (size_t) sysconf (_SC_PAGESIZE);
    if ((int) l->n_in != n_in || (int) l->n_out != n_out || l->variants < 1
        || l->variants > KF_DEV_MAX_VARIANTS || l->variant_bytes % page || l->variant_bytes == 0
        || l->file_bytes / l->variants < l->variant_bytes) {
        snprintf (why, why_size, "harness: setup: a layout the runner does not take");
        return -1;
    }
    for (int t = 0; t < n_in + n_out; t++) {
        const kf_run_tensor_t *rt = &l->t[t];
        const kf_eval_spec_t *s = t < n_in ? &in[t] : &out[t - n_in];
        if (rt->bytes != s->bytes || rt->offset % page || rt->region < 2 * pad + rt->bytes
            || rt->offset > l->variant_bytes || rt->region > l->variant_bytes - rt->offset) {
            snprintf (why, why_size, "harness: setup: tensor %d does not fit the task", t);
            return -1;
        }
    }
    return 0;
}

//  Landlock's domain comes with the seccomp filter: both are inherited
//  by threads made after them, so the filter alone tells.
int
kf_dev_runner_threads_confined (const char *who, char *why, size_t why_size)
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
                      "without the seccomp filter (%s started it before the confinement)",
                      ent->d_name, who);
            rc = -1;
        }
    }
    closedir (d);
    return rc;
}

int
kf_dev_runner_begin (int argc, char **argv, const char *prefix, char *cwd, size_t cwd_size)
{
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    if (getppid () == 1 || argc < 5 || strncmp (argv[4], prefix, strlen (prefix)) != 0)
        return -1;
    if (!getcwd (cwd, cwd_size))
        return -1;
    struct rlimit fsize = { .rlim_cur = S_FILE_BYTES, .rlim_max = S_FILE_BYTES };
    setrlimit (RLIMIT_FSIZE, &fsize);
    return 0;
}

//  A fault in the candidate's code (a kernel on a CPU platform, the test
//  double's stand-ins): say which, with send(2) only, and end.
static void
s_on_fault (int sig, siginfo_t *info, void *uctx)
{
    (void) info;
    (void) uctx;
    kf_dev_runner_reply (KF_RUN_CRASHED, sig, 0, kf_eval_fault_what (sig, 0));
    _exit (3);
}

void
kf_dev_runner_ready (const char *report)
{
    kf_eval_on_faults (s_on_fault);
    kf_dev_runner_reply (KF_RUN_OK, 0, 0, report);
}

//  The candidate's file read, refused unless it is a KF-SPIRV bundle, and
//  given to the device to build.
static int
s_load (const kf_dev_runner_ops_t *ops, void *d, kf_dev_runner_t *r, const char *candidate,
        char *why, size_t why_size)
{
    size_t size = 0;
    void *bytes = kf_file_read (candidate, S_MAX_BUNDLE, &size);
    if (!bytes || !kf_ze_is_bundle (bytes, size)) {
        free (bytes);
        snprintf (why, why_size, "candidate does not load: not a KF-SPIRV bundle (an OpenCL C "
                  "source built by the compile worker's spirv toolchain)");
        return -1;
    }
    if (ops->build (d, bytes, size, r->task) != 0) {
        snprintf (why, why_size, "%s", r->detail);
        return -1;
    }
    return 0;
}

//  Every tensor handed to the host (TO_HOST) or to the device, unless
//  they are there already.
static long
s_hand_over (const kf_dev_runner_ops_t *ops, void *d, kf_dev_runner_t *r, bool to_host)
{
    if (r->on_host == to_host)
        return 0;
    long rc = ops->hand (d, r, to_host);
    if (!rc)
        r->on_host = to_host;
    return rc;
}

//  The judge's file FD laid out as L: mapped, a device buffer for each
//  tensor's region, the tensors on the host, every kernel argument
//  bound. 0; -1 with WHY ("harness: ..."); 1 with WHY, the candidate's
//  load failure (a kf-launch line the kernel refuses, known before any
//  call).
static int
s_setup (const kf_dev_runner_ops_t *ops, void *d, kf_dev_runner_t *r, int fd,
         const kf_run_layout_t *l, char *why, size_t why_size)
{
    if (kf_dev_runner_layout_ok (l, r->n_in, r->in, r->n_out, r->out, r->pad, why, why_size))
        return -1;
    r->map = mmap (NULL, (size_t) l->file_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (r->map == MAP_FAILED) {
        r->map = NULL;
        snprintf (why, why_size, "harness: setup: cannot map the tensors: %s", strerror (errno));
        return -1;
    }
    r->map_bytes = (size_t) l->file_bytes;
    r->n = (int) (l->n_in + l->n_out);
    r->variants = (int) l->variants;
    r->variant_bytes = (size_t) l->variant_bytes;
    for (int t = 0; t < r->n; t++)
        r->offset[t] = (size_t) l->t[t].offset;
    if (ops->buffers (d, r, l, why, why_size) != 0)
        return -1;
    long rc = s_hand_over (ops, d, r, true);
    if (rc) {
        snprintf (why, why_size, "harness: setup: the shared tensors to the host: %s",
                  ops->err (rc));
        return -1;
    }
    if (ops->bind (d) != 0) {
        snprintf (why, why_size, "%s", r->detail);
        return 1;
    }
    return 0;
}

//  CALLS calls of the candidate, the tensors on the device, every launch
//  in order (call K on variant K modulo their number), and the wait for
//  them; *DONE the calls made. 0; 1 with WHY,
//  a launch refused before anything ran (the candidate's load failure);
//  -1 with WHY, the device's error after the candidate's launches.
static int
s_calls (const kf_dev_runner_ops_t *ops, void *d, kf_dev_runner_t *r, uint32_t calls,
         uint32_t *done, char *why, size_t why_size)
{
    long rc = s_hand_over (ops, d, r, false);
    for (*done = 0; *done < calls && !rc; ++*done)
        if (ops->launch (d, (int) (*done % (uint32_t) r->variants)) != 0) {
            snprintf (why, why_size, "%s", r->detail);
            return 1;
        }
    if (!rc)
        rc = ops->wait (d);
    if (rc) {
        snprintf (why, why_size, "%s error in the candidate: %s", ops->api, ops->err (rc));
        return -1;
    }
    return 0;
}

int
kf_dev_runner_serve (const kf_dev_runner_ops_t *ops, void *d, kf_dev_runner_t *r,
                     const char *candidate)
{
    static union { uint32_t op; kf_run_setup_msg_t setup; kf_run_call_msg_t call; } msg;
    static char why[2048];               // a build log fits
    bool loaded = false, ready = false;
    for (;;) {
        int fd;
        ssize_t n = kf_dev_runner_recv (&msg, sizeof msg, &fd);
        if (n <= 0)
            return 0;                   // the judge is done with us
        if (fd >= 0 && !(msg.op == KF_RUN_OP_SETUP && (size_t) n == sizeof msg.setup)) {
            close (fd);
            fd = -1;
        }
        why[0] = 0;
        if (msg.op == KF_RUN_OP_PING && !loaded) {
            ops->ping (d);
            kf_dev_runner_reply (KF_RUN_OK, 0, 0, "");
        }
        else if (msg.op == KF_RUN_OP_LOAD && !loaded) {
            if (s_load (ops, d, r, candidate, why, sizeof why) != 0) {
                kf_dev_runner_load_failed (why);
                return 2;
            }
            loaded = true;
            kf_dev_runner_reply (KF_RUN_OK, 0, 0, "");
        }
        else if (msg.op == KF_RUN_OP_SETUP && fd >= 0) {
            int rc = -1;
            if (!loaded || ready)
                snprintf (why, sizeof why, "harness: setup: a layout the runner does not take");
            else
                rc = s_setup (ops, d, r, fd, &msg.setup.layout, why, sizeof why);
            close (fd);
            if (rc > 0)
                kf_dev_runner_load_failed (why);
            else
                kf_dev_runner_reply (rc == 0 ? KF_RUN_OK : KF_RUN_FAILED, 0, 0, why);
            if (rc != 0)
                return 2;
            ready = true;
        }
        else if (ready && msg.op == KF_RUN_OP_CALL && (size_t) n == sizeof msg.call) {
            uint32_t done = 0;
            int rc = s_calls (ops, d, r, msg.call.calls, &done, why, sizeof why);
            if (rc > 0)
                kf_dev_runner_load_failed (why);
            else if (rc < 0)
                kf_dev_runner_reply (KF_RUN_CRASHED, 0, done, why);
            if (rc != 0)
                _exit (3);
            kf_dev_runner_reply (KF_RUN_OK, 0, done, "");
        }
        else if (ready && (msg.op == KF_RUN_OP_HOST || msg.op == KF_RUN_OP_DEVICE)) {
            long rc = s_hand_over (ops, d, r, msg.op == KF_RUN_OP_HOST);
            if (rc) {
                snprintf (why, sizeof why, "%s error in the candidate: %s", ops->api,
                          ops->err (rc));
                kf_dev_runner_reply (KF_RUN_CRASHED, 0, 0, why);
                _exit (3);
            }
            kf_dev_runner_reply (KF_RUN_OK, 0, 0, "");
        }
        else
            kf_dev_runner_reply (KF_RUN_FAILED, 0, 0,
                                 "harness: a message the runner does not know");
    }
}
