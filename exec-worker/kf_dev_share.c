/*  kf_dev_share.c - the judge's hold on the candidate's process for the
 *  OpenCL and Level Zero backends (kf_dev_share.h): the shared file laid
 *  out and filled, the runner started, called and stopped, and the file
 *  checked after every call (inputs unchanged, canaries intact).
 *
 *  Nothing the runner says is believed beyond "done" or "this went
 *  wrong": every byte the judge judges it reads from the file itself.
 */
#include "kf_dev_share.h"
#include "kf_eval_channel.h"

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
s_harness (kf_dev_share_t *s, const char *what)
{
    snprintf (s->detail, s->detail_size, "harness: %s: %s", what, strerror (errno));
    return KF_DEV_HARNESS;
}

void
kf_dev_share_init (kf_dev_share_t *s, int n_in, const kf_eval_spec_t *in, int n_out,
                   const kf_eval_spec_t *out, size_t pad, uint64_t device_bytes, char *detail,
                   size_t detail_size)
{
    *s = (kf_dev_share_t) { .n_in = n_in, .n_out = n_out, .in = in, .out = out, .pad = pad,
                            .device_bytes = device_bytes, .detail = detail,
                            .detail_size = detail_size, .fd = -1 };
}

//  The layout of the candidate's tensors, inputs then outputs, as many
//  copies of them as fit the file's budget.
static void
s_lay_out (kf_dev_share_t *s)
{
    kf_run_layout_t *l = &s->layout;
    memset (l, 0, sizeof *l);
    uint64_t page = (uint64_t) sysconf (_SC_PAGESIZE), pad = s->pad, at = 0;
    l->n_in = (uint32_t) s->n_in;
    l->n_out = (uint32_t) s->n_out;
    for (int t = 0; t < s->n_in + s->n_out; t++) {
        const kf_eval_spec_t *sp = t < s->n_in ? &s->in[t] : &s->out[t - s->n_in];
        uint64_t body = ((uint64_t) (sp->bytes ? sp->bytes : 1) + pad - 1) / pad * pad;
        kf_run_tensor_t *rt = &l->t[t];
        rt->dtype = sp->dtype;
        rt->offset = at;
        rt->bytes = sp->bytes;
        rt->region = (pad + body + pad + page - 1) / page * page;
        at += rt->region;
    }
    uint64_t budget = s->device_bytes / 8 ? s->device_bytes / 8 : KF_DEV_SHARE_MAX;
    uint64_t n = (budget < KF_DEV_SHARE_MAX ? budget : KF_DEV_SHARE_MAX) / at;
    l->variants = n < 1 ? 1 : n > KF_DEV_MAX_VARIANTS ? KF_DEV_MAX_VARIANTS : (uint32_t) n;
    l->variant_bytes = at;
    l->file_bytes = at * l->variants;
}

//  The runner's task: the tensors and scalars its kf-launch lines name,
//  nothing else of the job.
static int
s_write_task (kf_dev_share_t *s, const char *run, json_t *task)
{
    json_t *t = json_object ();
    const char *keys[] = { "inputs", "outputs", "scalars" };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        json_t *v = json_object_get (task, keys[k]);
        if (v)
            json_object_set (t, keys[k], v);
    }
    char path[4300];
    snprintf (path, sizeof path, "%s/%s", run, KF_RUN_TASK);
    int rc = json_dump_file (t, path, JSON_COMPACT);
    json_decref (t);
    if (rc != 0) {
        snprintf (s->detail, s->detail_size, "harness: cannot write %.1500s", path);
        return KF_DEV_HARNESS;
    }
    return KF_DEV_OK;
}

//  The runner's account of a load failure in full (a build log): its
//  file when it is a plain one, else the reply's short detail. Bounded,
//  never following a link or waiting on a FIFO, printable only.
static void
s_load_log (kf_dev_share_t *s, const char *run, const char *fallback)
{
    char path[4300], text[S_LOG_MAX + 1];
    snprintf (path, sizeof path, "%s/%s", run, KF_RUN_LOAD_LOG);
    int fd = open (path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    ssize_t n = -1;
    if (fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode))
        n = read (fd, text, S_LOG_MAX);
    if (fd >= 0)
        close (fd);
    if (n <= 0) {
        snprintf (s->detail, s->detail_size, "%s", fallback);
        return;
    }
    text[n] = 0;
    for (char *c = text; *c; c++)
        if ((unsigned char) *c > 126 || ((unsigned char) *c < 32 && *c != '\n'))
            *c = '?';
    snprintf (s->detail, s->detail_size, "%s", text);
}

//  A reply that is not "done": the candidate's fault, or ours.
static int
s_failed (kf_dev_share_t *s, const kf_run_reply_t *reply, const char *when)
{
    if (reply->status == KF_RUN_FAILED && strncmp (reply->detail, "harness: ", 9) == 0) {
        snprintf (s->detail, s->detail_size, "%s", reply->detail);
        return KF_DEV_HARNESS;
    }
    if (reply->status == KF_RUN_FAILED && strncmp (reply->detail, "candidate", 9) == 0) {
        snprintf (s->detail, s->detail_size, "%s", reply->detail);
        return KF_DEV_LOAD_FAILED;         // a launch the platform refused
    }
    snprintf (s->detail, s->detail_size, "%s: %s", when, reply->detail);
    return KF_DEV_CRASHED;
}

int
kf_dev_share_start (kf_dev_share_t *s, const char *dir, json_t *job, json_t *task,
                    const char *device, void (*before_ping) (void *), void *arg)
{
    s_lay_out (s);
    s->fd = memfd_create ("kf-dev-tensors", MFD_CLOEXEC);
    if (s->fd < 0 || ftruncate (s->fd, (off_t) s->layout.file_bytes) != 0)
        return s_harness (s, "the shared tensors");
    s->bytes = (size_t) s->layout.file_bytes;
    s->map = mmap (NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    if (s->map == MAP_FAILED) {
        s->map = NULL;
        return s_harness (s, "mapping the shared tensors");
    }
    memset (s->map, 0xA5, s->bytes);
    for (uint32_t v = 0; v < s->layout.variants; v++)
        for (int t = 0; t < s->n_in + s->n_out; t++) {
            unsigned char *data = s->map + v * s->layout.variant_bytes + s->layout.t[t].offset
                                  + s->pad;
            if (t < s->n_in)
                s->cand_in[v][t] = data;
            else
                s->cand_out[v][t - s->n_in] = data;
        }
    char run[4200];
    snprintf (run, sizeof run, "%s/run", dir);
    if (mkdir (run, 0700) != 0 && errno != EEXIST)
        return s_harness (s, "making the runner's directory");
    int st = s_write_task (s, run, task);
    if (st)
        return st;
    //  What the runner must not find once the judge holds it.
    kf_runner_hide_job (dir, job);
    char cand[4300];
    snprintf (cand, sizeof cand, "%s/candidate.so", dir);
    kf_run_start_t opts = { .shared = json_string_value (json_object_get (job, "shared_dir")),
                            .cuda_device = -1, .device = device,
                            .before_ping = before_ping, .arg = arg };
    kf_run_reply_t reply;
    kf_eval_set_phase ('C');         // the platform builds the candidate's source
    s->runner = kf_runner_start (cand, run, &opts, &reply);
    if (s->runner && kf_runner_setup (s->runner, s->fd, &s->layout, &reply) != 0)
        kf_runner_destroy (&s->runner);
    kf_eval_set_phase ('H');
    if (s->runner)
        return KF_DEV_OK;
    if (reply.status == KF_RUN_CRASHED) {
        snprintf (s->detail, s->detail_size, "%s", reply.detail);
        return KF_DEV_CRASHED;
    }
    if (strncmp (reply.detail, "harness: ", 9) == 0 || strncmp (reply.detail, "seccomp", 7) == 0) {
        snprintf (s->detail, s->detail_size, "%s", reply.detail);
        return KF_DEV_HARNESS;
    }
    s_load_log (s, run, reply.detail);
    return KF_DEV_LOAD_FAILED;
}

void
kf_dev_share_fill (kf_dev_share_t *s, int v, void *const *in_h, void *const *poison_h)
{
    for (int i = 0; in_h && i < s->n_in; i++)
        memcpy (s->cand_in[v][i], in_h[i], s->in[i].bytes);
    for (int o = 0; o < s->n_out; o++)
        memcpy (s->cand_out[v][o], poison_h[o], s->out[o].bytes);
}

int
kf_dev_share_check (kf_dev_share_t *s, int v, void *const *in_h, const char *when)
{
    for (int i = 0; i < s->n_in; i++)
        if (memcmp (s->cand_in[v][i], in_h[i], s->in[i].bytes) != 0) {
            snprintf (s->detail, s->detail_size,
                      "%s: inputs changed: the candidate wrote to input '%s'", when, s->in[i].name);
            return KF_DEV_INCORRECT;
        }
    for (int t = 0; t < s->n_in + s->n_out; t++) {
        const kf_run_tensor_t *rt = &s->layout.t[t];
        const unsigned char *region = s->map + v * s->layout.variant_bytes + rt->offset;
        size_t end = s->pad + (size_t) rt->bytes;
        int where = 0;
        for (size_t k = 0; k < s->pad && !where; k++)
            where = region[k] != 0xA5 ? 1 : 0;
        for (size_t k = end; k < (size_t) rt->region && !where; k++)
            where = region[k] != 0xA5 ? 2 : 0;
        if (where) {
            const char *name = t < s->n_in ? s->in[t].name : s->out[t - s->n_in].name;
            snprintf (s->detail, s->detail_size, "%s: out-of-bounds write %s %s '%s'", when,
                      where == 1 ? "before" : "past the end of", t < s->n_in ? "input" : "output",
                      name);
            return KF_DEV_CRASHED;
        }
    }
    return KF_DEV_OK;
}

void
kf_dev_share_outputs (kf_dev_share_t *s, int v, void *const *out_h)
{
    for (int o = 0; o < s->n_out; o++)
        memcpy (out_h[o], s->cand_out[v][o], s->out[o].bytes);
}

int
kf_dev_share_call (kf_dev_share_t *s, uint32_t calls, double *wall_s, const char *when)
{
    kf_run_reply_t reply;
    kf_eval_set_phase ('C');
    int rc = kf_runner_call (s->runner, calls, NULL, 0, wall_s, &reply);
    kf_eval_set_phase ('H');
    return rc == 0 ? KF_DEV_OK : s_failed (s, &reply, when);
}

int
kf_dev_share_hand (kf_dev_share_t *s, bool to_host, const char *when)
{
    kf_run_reply_t reply;
    double ignored;
    kf_eval_set_phase ('C');
    int rc = kf_runner_op (s->runner, to_host ? KF_RUN_OP_HOST : KF_RUN_OP_DEVICE, &ignored,
                           &reply);
    kf_eval_set_phase ('H');
    return rc == 0 ? KF_DEV_OK : s_failed (s, &reply, when);
}

double
kf_dev_share_round_trip_s (kf_dev_share_t *s)
{
    return kf_runner_round_trip_s (s->runner);
}

json_t *
kf_dev_share_isolation (kf_dev_share_t *s)
{
    return json_pack ("{s:s, s:s, s:f, s:f}", "candidate", "own process", "confinement",
                      kf_runner_confinement (s->runner), "round_trip_us",
                      kf_runner_round_trip_s (s->runner) * 1e6, "cpu_after_calls_s",
                      kf_runner_cpu_outside_s (s->runner));
}

void
kf_dev_share_end (kf_dev_share_t *s)
{
    kf_runner_destroy (&s->runner);
    if (s->map)
        munmap (s->map, s->bytes);
    if (s->fd >= 0)
        close (s->fd);
    s->map = NULL;
    s->fd = -1;
}
