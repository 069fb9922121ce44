/*  kf_runner_link.c - the judge's hold on the candidate's process
 *  (kf_runner.h): start it, share tensors with it, resume it for each
 *  timed call and stop it again, count its CPU time.
 */
#include "kf_runner.h"
#include "kf_eval_channel.h"
#include "kf_file.h"
#include "kf_host_wait.h"
#include "kf_subproc.h"
#include "kf_take.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct kf_runner {
    pid_t pid;
    int sock;
    clockid_t cpu;
    bool dead;
    double cpu_outside;
    double round_trip;
    double stop_cpu;         // the runner's own CPU for one stop (median of the pings')
    char confinement[240];
    int one_cpu;             // the CPU of calls timed on one (kf_runner_one_cpu), -1: all
    double wait_ns;          // the last exchange's waits for a CPU (kf_runner_wait_ns)
};

double
kf_runner_cpu_s (kf_runner_t *self)
{
    struct timespec ts;
    if (!self || self->dead || clock_gettime (self->cpu, &ts) != 0)
        return 0;
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
kf_runner_pid (kf_runner_t *self)
{
    return self && !self->dead ? (int) self->pid : 0;
}

double
kf_runner_wait_ns (kf_runner_t *self)
{
    return self ? self->wait_ns : -1;
}

long long
kf_runner_minor_faults (kf_runner_t *self)
{
    char path[64], buf[1024];
    if (!self || self->dead)
        return -1;
    snprintf (path, sizeof path, "/proc/%d/stat", (int) self->pid);
    if (kf_file_read_proc (path, buf, sizeof buf) < 0)
        return -1;
    //  Field 10: minflt.
    const char *p = kf_file_stat_field (buf, 10);
    unsigned long long minflt;
    if (!p || sscanf (p, "%llu", &minflt) != 1)
        return -1;
    return (long long) minflt;
}

double
kf_runner_cpu_outside_s (kf_runner_t *self)
{
    return self ? self->cpu_outside : 0;
}

double
kf_runner_round_trip_s (kf_runner_t *self)
{
    return self ? self->round_trip : 0;
}

const char *
kf_runner_confinement (kf_runner_t *self)
{
    return self ? self->confinement : "";
}

static void
s_set (kf_run_reply_t *reply, int status, const char *fmt, const char *arg)
{
    memset (reply, 0, sizeof *reply);
    reply->status = status;
    snprintf (reply->detail, sizeof reply->detail, fmt, arg);
}

//  The runner ended: what ended it, as a crash of the candidate's.
static void
s_ended (kf_runner_t *self, int status, kf_run_reply_t *reply)
{
    self->dead = true;
    char what[160];
    if (WIFSIGNALED (status))
        snprintf (what, sizeof what, "the candidate's process was killed by signal %d (%s)",
                  WTERMSIG (status), strsignal (WTERMSIG (status)));
    else
        snprintf (what, sizeof what, "the candidate's process exited with code %d",
                  WIFEXITED (status) ? WEXITSTATUS (status) : -1);
    s_set (reply, KF_RUN_CRASHED, "%s", what);
}

//  Stops the runner and waits until it is. -1 with REPLY when it ended.
static int
s_stop (kf_runner_t *self, kf_run_reply_t *reply)
{
    if (self->dead)
        return -1;
    kill (self->pid, SIGSTOP);
    int status;
    pid_t got;
    do
        got = waitpid (self->pid, &status, WUNTRACED);
    while (got < 0 && errno == EINTR);
    if (got == self->pid && WIFSTOPPED (status))
        return 0;
    if (got == self->pid)
        s_ended (self, status, reply);
    else {
        self->dead = true;
        s_set (reply, KF_RUN_CRASHED, "harness: the candidate's process is gone (%s)",
               strerror (errno));
    }
    return -1;
}

//  Where the runner's main thread wakes: on the judge's CPU, which the
//  judge leaves for recv at once. The runner widens the thread to every
//  CPU again as it takes the message (kf_runner_recv), so threads a kernel
//  starts go where the judge was not. Left to the scheduler, the main thread woke on another CPU, and a
//  thread it started stayed beside it for the whole call: the judge's own
//  work (the reference's batch, the checks) kept the judge's CPU looking
//  busy to the scheduler's averages though it sat idle. A two-thread GELU
//  timed 15-21 ms against 21.5 ms on one thread (10.7 ms in a plain
//  program); docs/evaluation.md, "Threads". Failing, nothing changes.
static void
s_start_here (kf_runner_t *self)
{
    int cpu = sched_getcpu ();
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return;
    cpu_set_t one;
    CPU_ZERO (&one);
    CPU_SET (cpu, &one);
    (void) sched_setaffinity (self->pid, sizeof one, &one);
}

//  Every thread of the runner allowed SET only: its main thread (the
//  threads a call starts inherit it) and the threads earlier calls left
//  (a kernel's thread pool), read from /proc. -1 when the main thread's
//  could not be set.
static int
s_pin_all (kf_runner_t *self, const cpu_set_t *set)
{
    if (sched_setaffinity (self->pid, sizeof *set, set) != 0)
        return -1;
    char path[64];
    snprintf (path, sizeof path, "/proc/%d/task", (int) self->pid);
    DIR *d = opendir (path);
    for (struct dirent *t; d && (t = readdir (d));) {
        pid_t tid = (pid_t) atoi (t->d_name);
        if (tid > 0 && tid != self->pid)
            (void) sched_setaffinity (tid, sizeof *set, set);
    }
    if (d)
        closedir (d);
    return 0;
}

int
kf_runner_one_cpu (kf_runner_t *self, bool one)
{
    if (!self || self->dead)
        return -1;
    cpu_set_t set;
    CPU_ZERO (&set);
    if (!one) {
        //  The runner started with the judge's CPUs (kf_runner_recv).
        self->one_cpu = -1;
        if (sched_getaffinity (0, sizeof set, &set) != 0)
            return -1;
        return s_pin_all (self, &set);
    }
    int cpu = sched_getcpu ();
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return -1;
    CPU_SET (cpu, &set);
    if (s_pin_all (self, &set) != 0)
        return -1;
    self->one_cpu = cpu;
    return 0;
}

//  The runner's answer. Its end instead (a fault it reported, or none)
//  is a crash; an answer it should not give is one too.
static int
s_answer (kf_runner_t *self, kf_run_reply_t *reply)
{
    memset (reply, 0, sizeof *reply);
    ssize_t n;
    do
        n = recv (self->sock, reply, sizeof *reply, 0);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t) sizeof *reply) {
        reply->detail[sizeof reply->detail - 1] = 0;
        //  Its words are shown to people and models: printable only.
        for (char *c = reply->detail; *c; c++)
            if ((unsigned char) *c < 32 || (unsigned char) *c > 126 || *c == '"' || *c == '\\')
                *c = '?';
        if (reply->status == KF_RUN_CRASHED) {
            int status;
            waitpid (self->pid, &status, 0);
            self->dead = true;
        }
        return reply->status == KF_RUN_OK ? 0 : -1;
    }
    int status;
    pid_t got;
    do
        got = waitpid (self->pid, &status, 0);
    while (got < 0 && errno == EINTR);
    if (got == self->pid)
        s_ended (self, status, reply);
    else
        s_set (reply, KF_RUN_CRASHED, "harness: no answer from the candidate's process (%s)",
               strerror (errno));
    self->dead = true;
    return -1;
}

static int
s_send (kf_runner_t *self, const void *msg, size_t size, int fd)
{
    struct iovec iov = { .iov_base = (void *) msg, .iov_len = size };
    char cbuf[CMSG_SPACE (sizeof (int))];
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
    if (fd >= 0) {
        memset (cbuf, 0, sizeof cbuf);
        m.msg_control = cbuf;
        m.msg_controllen = sizeof cbuf;
        struct cmsghdr *c = CMSG_FIRSTHDR (&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN (sizeof (int));
        memcpy (CMSG_DATA (c), &fd, sizeof (int));
    }
    ssize_t n;
    do
        n = sendmsg (self->sock, &m, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t) size ? 0 : -1;
}

#define S_PINGS 32
/* After an answer the judge looks whether the runner's threads are off
 * their CPUs: at once, and when they are not, S_WATCH_LOOKS more times
 * S_WATCH_NS apart (about a millisecond, the sleeps' slack included). */
#define S_WATCH_LOOKS 20
#define S_WATCH_NS 25000L

/* Whether some thread of PID is running or runnable ('R' in its
 * /proc/PID/task/TID/stat). A process that cannot be read counts as
 * quiet: the CPU figure is then taken right after the answer. */
static bool
s_busy (pid_t pid)
{
    char dir[64];
    snprintf (dir, sizeof dir, "/proc/%d/task", (int) pid);
    DIR *d = opendir (dir);
    if (!d)
        return false;
    bool busy = false;
    struct dirent *ent;
    while (!busy && (ent = readdir (d))) {
        if (ent->d_name[0] == '.')
            continue;
        char path[128], line[512];
        snprintf (path, sizeof path, "%s/%.32s/stat", dir, ent->d_name);
        FILE *f = fopen (path, "re");
        if (!f)
            continue;
        //  "TID (COMM) STATE ...": COMM may hold anything, the last ')'
        //  ends it.
        const char *end = fgets (line, sizeof line, f) ? strrchr (line, ')') : NULL;
        busy = end && end[1] == ' ' && end[2] == 'R';
        fclose (f);
    }
    closedir (d);
    return busy;
}

static int
s_cmp (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

//  The window after an answer: the runner, stopped at the answer, runs
//  again while any thread of it is on a CPU or waiting for one, up to
//  about a millisecond (letting a thread that keeps working show its
//  work; an honest runner is back in its recv within microseconds).
static void
s_watch (kf_runner_t *self)
{
    kill (self->pid, SIGCONT);
    struct timespec nap = { 0, S_WATCH_NS };
    for (int k = 0; k < S_WATCH_LOOKS && s_busy (self->pid); k++)
        nanosleep (&nap, NULL);
}

//  One message and its answer: resume the runner, send, wait, stop it
//  again. *WALL_S runs on the judge's clock from the resume to the
//  answer, so all the runner does while it runs is inside it, apart from
//  what it does between its answer and the stop, which is counted as CPU
//  outside the calls. 0 when the answer is "done"; -1 with REPLY.
static int
s_exchange (kf_runner_t *self, const void *msg, size_t size, int fd, double *wall_s,
            kf_run_reply_t *reply)
{
    *wall_s = 0;
    self->wait_ns = -1;
    if (self->dead) {
        s_set (reply, KF_RUN_CRASHED, "harness: the candidate's process has ended%s", "");
        return -1;
    }
    //  An answer waiting before the question is one the runner sent on
    //  its own, to have a later batch look finished before it is: a
    //  runner that does that has left the protocol.
    kf_run_reply_t stale;
    if (recv (self->sock, &stale, sizeof stale, MSG_DONTWAIT) > 0) {
        s_set (reply, KF_RUN_CRASHED, "the candidate's process answered a call it was not given%s",
               "");
        kill (self->pid, SIGKILL);
        int status;
        waitpid (self->pid, &status, 0);
        self->dead = true;
        return -1;
    }
    if (self->one_cpu >= 0) {
        //  Calls timed on one CPU: every thread on it again (a thread a
        //  call started and left may have been moved meanwhile).
        cpu_set_t one;
        CPU_ZERO (&one);
        CPU_SET (self->one_cpu, &one);
        (void) s_pin_all (self, &one);
    }
    else
        s_start_here (self);
    //  The waits for a CPU of the runner's threads and the judge's over
    //  the exchange, up to the stop at the answer (kf_host_wait.h).
    kf_host_wait_t waits;
    kf_host_wait_begin (&waits, (int) self->pid);
    double t0 = kf_eval_now ();
    kill (self->pid, SIGCONT);
    if (s_send (self, msg, size, fd) != 0) {
        s_set (reply, KF_RUN_FAILED, "harness: cannot reach the candidate's process: %s",
               strerror (errno));
        return -1;
    }
    int rc = s_answer (self, reply);
    *wall_s = kf_eval_now () - t0;
    if (self->dead)
        return -1;
    //  What the runner does after its answer is counted as work hidden
    //  from the clock. A process's CPU clock read from another process
    //  counts what each thread ran only up to that thread's last tick or
    //  switch, so a thread still on its CPU would show up to a tick (4 ms
    //  at HZ=250, 10 at HZ=100) of the call's own work later: an honest
    //  kernel's call charged as hidden work on a loaded machine. So the
    //  runner is stopped at the answer, every thread off its CPU and every
    //  count exact, then let run once more for the window (s_watch) and
    //  stopped again: what it used between the two stops is exactly what
    //  it did after answering.
    //  A runner that said what went wrong (it does not load, a call
    //  returned non-zero) and then ended is reported by what it said.
    kf_run_reply_t ended;
    if (s_stop (self, rc == 0 ? reply : &ended) != 0)
        return -1;
    self->wait_ns = kf_host_wait_end (&waits);
    double cpu_answered = kf_runner_cpu_s (self);
    s_watch (self);
    if (s_stop (self, rc == 0 ? reply : &ended) != 0)
        return -1;
    //  The stops and the resume cost the runner some CPU (woken in its
    //  recv to take each signal; more on a loaded machine): what they cost
    //  in the pings, before any candidate code was loaded, is not its work.
    double after = kf_runner_cpu_s (self) - cpu_answered - self->stop_cpu;
    self->cpu_outside += after > 0 ? after : 0;
    return rc;
}

//  The runner's environment: what a kernel's runtime may need, nothing
//  of the worker's (keys, database URLs, tokens).
static char **
s_env (const char *run_dir)
{
    size_t n = 0;
    for (char **e = environ; *e; e++)
        n++;
    char **env = calloc (n + 8, sizeof *env);
    if (!env)
        return NULL;
    //  The sandbox's allow-list (kf_subproc_env_kept), with a PATH, HOME
    //  and TMPDIR of the runner's own.
    size_t k = 0;
    for (char **e = environ; *e; e++)
        if (kf_subproc_env_kept (*e) && strncmp (*e, "PATH=", 5) && strncmp (*e, "HOME=", 5)
            && strncmp (*e, "TMPDIR=", 7))
            env[k++] = *e;
    static char path[] = "PATH=/usr/bin:/bin";
    static char home[4200], tmp[4200];
    snprintf (home, sizeof home, "HOME=%s", run_dir);
    snprintf (tmp, sizeof tmp, "TMPDIR=%s", run_dir);
    env[k++] = path;
    env[k++] = home;
    env[k++] = tmp;
    env[k] = NULL;
    return env;
}

kf_runner_t *
kf_runner_spawn (const char *candidate, const char *run_dir, const kf_run_start_t *opts,
                 kf_run_reply_t *reply)
{
    kf_runner_t *self = calloc (1, sizeof *self);
    int sv[2];
    char **env = s_env (run_dir);
    if (!self || !env || socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        s_set (reply, KF_RUN_FAILED, "harness: cannot start the candidate's process: %s",
               strerror (errno));
        free (env);
        free (self);
        return NULL;
    }
    char device[320] = "";
    if (opts->cuda_device >= 0)
        snprintf (device, sizeof device, "cuda:%d", opts->cuda_device);
    else if (opts->device)
        snprintf (device, sizeof device, "%s", opts->device);
    char *argv[] = { "kf-runner", "--eval-runner", (char *) candidate,
                     (char *) (opts->shared ? opts->shared : ""), device, NULL };
    pid_t pid = fork ();
    if (pid == 0) {
        //  Only the socket, as fd 3, and stdio: never the verdict channel.
        if (dup2 (sv[1], 3) < 0 || chdir (run_dir) != 0)
            _exit (127);
        syscall (SYS_close_range, 4u, ~0u, 0u);
        execve ("/proc/self/exe", argv, env);
        _exit (127);
    }
    close (sv[1]);
    free (env);
    if (pid < 0) {
        s_set (reply, KF_RUN_FAILED, "harness: cannot fork: %s", strerror (errno));
        close (sv[0]);
        free (self);
        return NULL;
    }
    self->pid = pid;
    self->sock = sv[0];
    self->one_cpu = -1;
    self->wait_ns = -1;
    if (clock_getcpuclockid (pid, &self->cpu) != 0)
        self->cpu = CLOCK_MONOTONIC;   // never: pid is our child
    return self;
}

int
kf_runner_ready (kf_runner_t **self_p, const kf_run_start_t *opts, kf_run_reply_t *reply)
{
    kf_runner_t *self = *self_p;
    //  Ready (confined, the candidate not loaded yet): time the round
    //  trip while only our code answers, then have it load the candidate.
    if (s_answer (self, reply) != 0 || s_stop (self, reply) != 0) {
        if (reply->status == KF_RUN_CRASHED && strstr (reply->detail, "exited with code 127"))
            s_set (reply, KF_RUN_FAILED, "harness: the candidate's process did not start%s", "");
        kf_runner_destroy (self_p);
        return -1;
    }
    snprintf (self->confinement, sizeof self->confinement, "%s", reply->detail);
    double trips[S_PINGS], stops[S_PINGS];
    uint32_t op = KF_RUN_OP_PING;
    for (int k = 0; k < S_PINGS; k++) {
        if (opts->before_ping)
            opts->before_ping (opts->arg);
        double outside = self->cpu_outside;
        if (s_exchange (self, &op, sizeof op, -1, &trips[k], reply) != 0) {
            kf_runner_destroy (self_p);
            return -1;
        }
        stops[k] = self->cpu_outside - outside;
        if (opts->after_ping)
            opts->after_ping (opts->arg);
    }
    qsort (trips, S_PINGS, sizeof trips[0], s_cmp);
    self->round_trip = trips[S_PINGS / 2];
    //  Only the runner's own code ran in the pings: what each stop cost
    //  it is the figure later stops are taken off by, and none of it
    //  counts as the candidate's.
    qsort (stops, S_PINGS, sizeof stops[0], s_cmp);
    self->stop_cpu = stops[S_PINGS / 2];
    self->cpu_outside = 0;
    double ignored;
    op = KF_RUN_OP_LOAD;
    if (s_exchange (self, &op, sizeof op, -1, &ignored, reply) != 0) {
        kf_runner_destroy (self_p);
        return -1;
    }
    return 0;
}

kf_runner_t *
kf_runner_start (const char *candidate, const char *run_dir, const kf_run_start_t *opts,
                 kf_run_reply_t *reply)
{
    kf_runner_t *self = kf_runner_spawn (candidate, run_dir, opts, reply);
    if (self && kf_runner_ready (&self, opts, reply) != 0)
        return NULL;
    return self;
}

int
kf_runner_setup (kf_runner_t *self, int fd, const kf_run_layout_t *layout, kf_run_reply_t *reply)
{
    static kf_run_setup_msg_t msg;
    memset (&msg, 0, sizeof msg);
    msg.op = KF_RUN_OP_SETUP;
    msg.layout = *layout;
    double ignored;
    return s_exchange (self, &msg, sizeof msg, fd, &ignored, reply);
}

int
kf_runner_call (kf_runner_t *self, uint32_t calls, const double *values, int n,
                double *wall_s, kf_run_reply_t *reply)
{
    kf_run_call_msg_t msg;
    memset (&msg, 0, sizeof msg);
    msg.op = KF_RUN_OP_CALL;
    msg.calls = calls;
    msg.one_cpu = self->one_cpu >= 0;
    msg.n = (uint32_t) (n < 0 ? 0 : n > KF_RUN_MAX_SCALARS ? KF_RUN_MAX_SCALARS : n);
    if (msg.n)
        memcpy (msg.values, values, msg.n * sizeof (double));
    return s_exchange (self, &msg, sizeof msg, -1, wall_s, reply);
}

int
kf_runner_op (kf_runner_t *self, uint32_t op, double *wall_s, kf_run_reply_t *reply)
{
    return s_exchange (self, &op, sizeof op, -1, wall_s, reply);
}

void
kf_runner_destroy (kf_runner_t **self_p)
{
    kf_runner_t *self = KF_TAKE (self_p);
    if (self) {
        if (!self->dead) {
            kill (self->pid, SIGKILL);
            int status;
            while (waitpid (self->pid, &status, 0) < 0 && errno == EINTR)
                ;
        }
        close (self->sock);
        free (self);
    }
}

// --------------------------------------------------------------------------
//  For an evaluation job

//  What the candidate's process must not find: the reference and the
//  job, once the judge holds them. (Its confinement keeps it out of the
//  directory anyway where the kernel has Landlock.)
void
kf_runner_hide_job (const char *dir, json_t *job)
{
    const char *names[] = { "reference.so", "reference.bin", "job.json",
                            json_string_value (json_object_get (job, "reference_data_path")) };
    char path[4200];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i] && !strchr (names[i], '/')) {
            snprintf (path, sizeof path, "%s/%s", dir, names[i]);
            unlink (path);
        }
}

static void
s_job_failed (const char *dir, const kf_run_reply_t *r)
{
    const kf_run_reply_t reply = *r;
    if (reply.status == KF_RUN_CRASHED)
        kf_eval_write_verdict (dir, "crashed", reply.detail);
    else if (strncmp (reply.detail, "harness: ", 9) == 0
             || strncmp (reply.detail, "seccomp", 7) == 0)
        kf_eval_write_verdict (dir, "harness_failed", reply.detail);
    else
        kf_eval_write_verdict (dir, "load_failed", reply.detail);
}

kf_runner_t *
kf_runner_spawn_for_job (const char *dir, json_t *job, const kf_run_start_t *given)
{
    char cand[4200], run[4200];
    snprintf (cand, sizeof cand, "%s/candidate.so", dir);
    snprintf (run, sizeof run, "%s/run", dir);
    if (mkdir (run, 0700) != 0 && errno != EEXIST) {
        char why[4300];
        snprintf (why, sizeof why, "harness: cannot make %s: %s", run, strerror (errno));
        kf_eval_write_verdict (dir, "harness_failed", why);
        return NULL;
    }
    kf_run_reply_t reply;
    kf_run_start_t opts = *given;
    opts.shared = json_string_value (json_object_get (job, "shared_dir"));
    kf_runner_t *runner = kf_runner_spawn (cand, run, &opts, &reply);
    if (!runner)
        s_job_failed (dir, &reply);
    return runner;
}

int
kf_runner_ready_for_job (const char *dir, kf_runner_t **runner_p, const kf_run_start_t *opts)
{
    kf_run_reply_t reply;
    kf_eval_set_phase ('C');     // the candidate's constructors run as it loads
    int rc = kf_runner_ready (runner_p, opts, &reply);
    kf_eval_set_phase ('H');
    if (rc != 0)
        s_job_failed (dir, &reply);
    return rc;
}

//  The candidate's process, started in DIR/run. NULL with the verdict
//  written when it could not be had.
kf_runner_t *
kf_runner_for_job (const char *dir, json_t *job, const kf_run_start_t *opts)
{
    kf_runner_t *runner = kf_runner_spawn_for_job (dir, job, opts);
    if (runner && kf_runner_ready_for_job (dir, &runner, opts) != 0)
        return NULL;
    return runner;
}
