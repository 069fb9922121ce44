/*  kf_runner.c - the candidate's process (kf_runner.h): loads the
 *  candidate after confining itself, maps the tensors the judge shares,
 *  and calls kf_forward when told to.
 *
 *  Everything here runs beside code that may be hostile, so nothing here
 *  is trusted by the judge either: the replies say only "done" or what
 *  went wrong, and the judge checks the outputs itself.
 */
#include "kf_runner.h"
#include "kf_confine.h"
#include "kf_runner_cuda.h"
#include "kf_runner_ocl.h"
#include "kf_runner_ze.h"
#include "kf_eval_channel.h"
#include "kf_eval_check.h"
#include "kf_scratch.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
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
/* RLIMIT_FSIZE of the candidate's process: kf_subproc's default. */
#define KF_RUN_FILE_BYTES ((rlim_t) 256 << 20)

static cpu_set_t s_all;
static bool s_all_ok;

typedef int (s_forward_fn) (const kf_tensor_t *, int, kf_tensor_t *, int, const kf_ctx_t *);

uint64_t
kf_run_region (uint64_t bytes)
{
    uint64_t page = (uint64_t) sysconf (_SC_PAGESIZE);
    return (bytes + KF_RUN_CANARY + page - 1) / page * page;
}

void
kf_run_tensor_view (kf_tensor_t *kt, const kf_run_tensor_t *t, void *data)
{
    memset (kt, 0, sizeof *kt);
    kt->data = data;
    kt->dtype = t->dtype;
    kt->rank = t->rank;
    int64_t stride = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        kt->shape[d] = t->shape[d];
        kt->strides[d] = stride;
        stride *= t->shape[d];
    }
}

static int s_sock = S_SOCK;
static struct { char *lo, *hi; } s_guards[KF_RUN_MAX_TENSORS * KF_RUN_MAX_VARIANTS];
static volatile sig_atomic_t s_n_guards;

void
kf_runner_send_reply (int sock, int status, int rc, uint32_t calls, const char *detail)
{
    kf_run_reply_t r;
    memset (&r, 0, sizeof r);
    r.status = status;
    r.rc = rc;
    r.calls = calls;
    for (size_t i = 0; detail && detail[i] && i + 1 < sizeof r.detail; i++)
        r.detail[i] = detail[i];
    ssize_t n = send (sock, &r, sizeof r, MSG_NOSIGNAL);
    (void) n;
}

static void
s_reply (int status, int rc, uint32_t calls, const char *detail)
{
    kf_runner_send_reply (s_sock, status, rc, calls, detail);
}

//  A fault in the candidate: say which, with send(2) only, and end.
static void
s_on_fault (int sig, siginfo_t *info, void *uctx)
{
    (void) uctx;
    char *addr = info ? (char *) info->si_addr : NULL;
    int in_guard = 0;
    for (int i = 0; i < s_n_guards; i++)
        in_guard |= addr >= s_guards[i].lo && addr < s_guards[i].hi;
    s_reply (KF_RUN_CRASHED, sig, 0, kf_eval_fault_what (sig, in_guard));
    _exit (3);
}

// --------------------------------------------------------------------------
//  Tensors

typedef struct {
    kf_run_layout_t layout;
    void *maps[KF_RUN_MAX_VARIANTS * KF_RUN_MAX_TENSORS];
    size_t map_len[KF_RUN_MAX_VARIANTS * KF_RUN_MAX_TENSORS];
    kf_tensor_t in[KF_RUN_MAX_VARIANTS][KF_RUN_MAX_TENSORS];
    kf_tensor_t out[KF_RUN_MAX_VARIANTS][KF_RUN_MAX_TENSORS];
    const char *names[KF_RUN_MAX_SCALARS];
    double values[KF_RUN_MAX_SCALARS];
    kf_ctx_t ctx;
    kf_scratch_t *scratch;      /* the host's ctx->scratch_alloc, one per setup */
} s_state_t;

static void
s_unmap (s_state_t *s)
{
    for (int i = 0; i < KF_RUN_MAX_VARIANTS * KF_RUN_MAX_TENSORS; i++)
        if (s->maps[i]) {
            munmap (s->maps[i], s->map_len[i]);
            s->maps[i] = NULL;
        }
    s_n_guards = 0;
    kf_scratch_destroy (&s->scratch);
    s->ctx.scratch_state = NULL;        // kf_scratch_alloc refuses until a setup
}

//  Maps each tensor of each variant from FD with an inaccessible page
//  after it.
static int
s_map (s_state_t *s, int fd, const kf_run_layout_t *l, char *why, size_t why_size)
{
    size_t page = (size_t) sysconf (_SC_PAGESIZE);
    uint32_t n = l->n_in + l->n_out;
    if (n > KF_RUN_MAX_TENSORS || l->n_names > KF_RUN_MAX_SCALARS || l->variants < 1
        || l->variants > KF_RUN_MAX_VARIANTS || l->variant_bytes % page
        || l->variant_bytes * l->variants > l->file_bytes) {
        snprintf (why, why_size, "setup: a layout the runner does not take");
        return -1;
    }
    s_unmap (s);
    s->layout = *l;
    int m_at = 0;
    for (uint32_t v = 0; v < l->variants; v++)
        for (uint32_t i = 0; i < n; i++) {
            const kf_run_tensor_t *t = &l->t[i];
            if (t->rank < 0 || t->rank > KF_MAX_RANK || t->region % page
                || t->offset % page || t->bytes + KF_RUN_CANARY > t->region
                || t->offset + t->region > l->variant_bytes) {
                snprintf (why, why_size, "setup: tensor %u lies outside its variant", i);
                return -1;
            }
            size_t len = (size_t) t->region + page;
            char *m = mmap (NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED
                || mmap (m, (size_t) t->region, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                         fd, (off_t) (v * l->variant_bytes + t->offset)) == MAP_FAILED) {
                snprintf (why, why_size, "setup: cannot map tensor %u: %s", i, strerror (errno));
                return -1;
            }
            s->maps[m_at] = m;
            s->map_len[m_at] = len;
            s_guards[m_at].lo = m + t->region;
            s_guards[m_at].hi = m + len;
            s_n_guards = (sig_atomic_t) ++m_at;
            kf_run_tensor_view (i < l->n_in ? &s->in[v][i] : &s->out[v][i - l->n_in], t,
                                m + t->region - t->bytes);
        }
    //  The scratch arena lives as long as these tensors: the calls of one
    //  shape case find their blocks' pages resident from the second on.
    if (!(s->scratch = kf_scratch_new (0))) {
        snprintf (why, why_size, "setup: out of memory for the scratch arena");
        return -1;
    }
    s->ctx.backend = KF_BACKEND_HOST;
    s->ctx.scratch_alloc = kf_scratch_alloc;
    s->ctx.scratch_state = s->scratch;
    return 0;
}

//  The scalars' names of the layout just taken.
static void
s_names (s_state_t *s)
{
    for (uint32_t k = 0; k < s->layout.n_names; k++) {
        s->layout.names[k][KF_RUN_NAME - 1] = 0;
        s->names[k] = s->layout.names[k];
    }
    s->ctx.n_scalars = (int32_t) s->layout.n_names;
    s->ctx.scalar_names = s->names;
    s->ctx.scalars = s->values;
}

ssize_t
kf_runner_recv (int sock, void *buf, size_t size, int *fd)
{
    struct iovec iov = { .iov_base = buf, .iov_len = size };
    char cbuf[CMSG_SPACE (sizeof (int))];
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                          .msg_controllen = sizeof cbuf };
    ssize_t n;
    do
        n = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    //  The judge woke this thread on its own CPU (kf_runner_link.c,
    //  s_start_here): whatever the message starts (a load that runs the
    //  candidate's constructors or a runtime's thread pool, the calls)
    //  may use every CPU the runner was started with; calls the judge
    //  times on one CPU (kf_runner_one_cpu) keep the one it set.
    const kf_run_call_msg_t *call = buf;
    bool one = n >= (ssize_t) sizeof *call && call->op == KF_RUN_OP_CALL && call->one_cpu;
    if (s_all_ok && !one)
        (void) sched_setaffinity (0, sizeof s_all, &s_all);
    *fd = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c; c = CMSG_NXTHDR (&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy (fd, CMSG_DATA (c), sizeof (int));
    return n;
}

int
kf_runner_main (int argc, char **argv)
{
    //  Dies with the judge; a judge that is already gone leaves us alone.
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    //  Every CPU the runner may use, before the judge first narrows it.
    s_all_ok = sched_getaffinity (0, sizeof s_all, &s_all) == 0;
    if (getppid () == 1 || argc < 3)
        return 2;
    //  "opencl:DEVICE": the OpenCL runner (kf_runner_ocl.c) instead.
    if (argc > 4 && strncmp (argv[4], "opencl:", 7) == 0)
        return kf_runner_ocl_main (argc, argv);
    //  "level-zero:N": the Level Zero runner (kf_runner_ze.c).
    if (argc > 4 && strncmp (argv[4], "level-zero:", 11) == 0)
        return kf_runner_ze_main (argc, argv);
    const char *candidate = argv[2];
    //  "cuda:N": the candidate's kernels run on CUDA device N, on the
    //  judge's buffers mapped into a context of this process.
    int cuda = argc > 4 && strncmp (argv[4], "cuda:", 5) == 0 ? atoi (argv[4] + 5) : -1;
    char cwd[PATH_MAX];
    if (!getcwd (cwd, sizeof cwd))
        return 2;
    //  The judge's file-size limit makes room for the shared tensors;
    //  what the candidate writes is held to the sandbox's default.
    struct rlimit fsize = { .rlim_cur = KF_RUN_FILE_BYTES, .rlim_max = KF_RUN_FILE_BYTES };
    setrlimit (RLIMIT_FSIZE, &fsize);
    //  A folder the worker shares with every candidate (eval_shared_dir,
    //  for tests) is the one other place it may reach.
    const char *files[] = { candidate, NULL };
    const char *dirs[] = { cwd, argc > 3 && argv[3][0] ? argv[3] : NULL, NULL };
    char report[240];
    //  The device is opened while only our code runs, before the
    //  confinement closes the files a driver opens.
    if (cuda >= 0 && kf_runner_cuda_init (cuda, report, sizeof report) != 0) {
        s_reply (KF_RUN_FAILED, 0, 0, report);
        return 2;
    }
    if (kf_confine_self (files, dirs, report, sizeof report) != 0) {
        s_reply (KF_RUN_FAILED, 0, 0, report);
        return 2;
    }
    kf_eval_on_faults (s_on_fault);
    s_reply (KF_RUN_OK, 0, 0, report);

    static s_state_t st;
    static union { uint32_t op; kf_run_setup_msg_t setup; kf_run_call_msg_t call; } msg;
    s_forward_fn *fn = NULL;
    kf_refusal_fn *refusal = NULL;      /* its optional reason (kf_kernel.h) */
    for (;;) {
        int fd;
        ssize_t n = kf_runner_recv (s_sock, &msg, sizeof msg, &fd);
        if (n <= 0) {
            s_unmap (&st);
            return 0;                   // the judge is done with us
        }
        if (msg.op == KF_RUN_OP_PING && !fn) {
            if (cuda >= 0)
                kf_runner_cuda_ping ();
            s_reply (KF_RUN_OK, 0, 0, "");
            continue;
        }
        if (msg.op == KF_RUN_OP_LOAD && !fn) {
            void *lib = dlopen (candidate, RTLD_NOW | RTLD_LOCAL);
            fn = lib ? (s_forward_fn *) dlsym (lib, "kf_forward") : NULL;
            refusal = lib ? (kf_refusal_fn *) dlsym (lib, "kf_refusal") : NULL;
            if (!fn) {
                const char *err = dlerror ();
                char why[240];
                snprintf (why, sizeof why, "candidate does not load: %s",
                          err ? err : "no kf_forward");
                s_reply (KF_RUN_FAILED, 0, 0, why);
                return 2;
            }
            s_reply (KF_RUN_OK, 0, 0, "");
            continue;
        }
        if (msg.op == KF_RUN_OP_SETUP && (size_t) n == sizeof msg.setup && fd >= 0) {
            char why[240] = "";
            int rc;
            if (cuda >= 0) {
                st.layout = msg.setup.layout;
                rc = kf_runner_cuda_map (fd, &st.layout, st.in, st.out, &st.ctx, why,
                                         sizeof why);
                if (rc)
                    st.layout.variants = 0;
            }
            else {
                rc = s_map (&st, fd, &msg.setup.layout, why, sizeof why);
                close (fd);
            }
            if (rc == 0)
                s_names (&st);
            s_reply (rc == 0 ? KF_RUN_OK : KF_RUN_FAILED, 0, 0, why);
            continue;
        }
        if (fd >= 0)
            close (fd);
        if (!fn || msg.op != KF_RUN_OP_CALL || (size_t) n != sizeof msg.call
            || msg.call.n != st.layout.n_names || st.layout.variants < 1) {
            s_reply (KF_RUN_FAILED, 0, 0, "a message the runner does not know");
            continue;
        }
        memcpy (st.values, msg.call.values, msg.call.n * sizeof (double));
        int rc = 0;
        uint32_t k;
        for (k = 0; k < msg.call.calls && rc == 0; k++) {
            uint32_t v = k % st.layout.variants;
            if (cuda >= 0)
                kf_runner_cuda_next_call ();
            rc = fn (st.in[v], (int) st.layout.n_in, st.out[v], (int) st.layout.n_out, &st.ctx);
            kf_scratch_reset (st.scratch);
        }
        //  On a GPU the answer waits for every kernel the calls started,
        //  on any stream; an error there ends the process (a context
        //  with a sticky error runs nothing more).
        char why[240];
        if (cuda >= 0 && kf_runner_cuda_settle (why, sizeof why) != 0) {
            s_reply (KF_RUN_CRASHED, 0, k, why);
            _exit (3);
        }
        //  A refusal's reason, asked here in the candidate's process; the
        //  judge cleans it again (kf_eval_cand_returned).
        char said[KF_REFUSAL_MAX + 1] = "";
        if (rc)
            kf_eval_refusal_read (refusal, said, sizeof said);
        s_reply (rc ? KF_RUN_RETURNED : KF_RUN_OK, rc, k, said);
    }
}
