/*  kf_subproc.c - run a program in a sandboxed child process.
 *
 *  Every compiler run and every evaluation goes through here, so this is
 *  the one place that decides what a misbehaving candidate can do to the
 *  host: it gets its own process group (the whole group is killed on the
 *  wall-clock limit and again after the leader ends), resource limits, no
 *  network where the kernel lets us unshare it, and, when the worker runs
 *  as root, an unprivileged uid - root ignores RLIMIT_NPROC, so without
 *  the drop a fork bomb would take the host.
 *
 *  That uid is the run's own, from a pool, and the run's working
 *  directory is handed to it for the run and back after:
 *  kf_subproc_pool.c.
 *
 *  Job threads call this concurrently, so the child does only
 *  async-signal-safe work between fork and exec: everything it needs
 *  (environment, argv) is prepared in the parent first, and every pipe is
 *  close-on-exec so a sibling job's child cannot hold our pipe open.
 */
#include "kf_subproc.h"
#include "kf_log.h"
#include "kf_sandbox.h"
#include "kf_subproc_pool.h"
#include "kf_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <math.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

void
kf_subproc_limits_default (kf_subproc_limits_t *limits)
{
    memset (limits, 0, sizeof *limits);
    limits->time_limit_s = 10;
    limits->output_cap = 64 * 1024;
    limits->memory_bytes = (size_t) 4 << 30;
    limits->file_bytes = (size_t) 256 << 20;
    limits->max_procs = 64;
    limits->no_network = true;
    if (geteuid () != 0)
        return;
    limits->drop_privileges = true;

    //  uid 0 (left so) means a uid of the pool, taken when the run starts.
    const char *user = getenv ("KF_SANDBOX_USER");
    if (!user || !*user)
        return;
    //  An operator's explicit choice of one account for every run.
    //  getpwnam_r because job threads fill limits concurrently.
    struct passwd pw, *found = NULL;
    char buf[4096];
    if (getpwnam_r (user, &pw, buf, sizeof buf, &found) == 0 && found) {
        limits->uid = found->pw_uid;
        limits->gid = found->pw_gid;
    }
    else {
        //  An unknown user must not silently mean "stay root" (nor the
        //  pool, which the operator chose against); fall back to the
        //  conventional overflow ids, which own nothing.
        limits->uid = 65534;
        limits->gid = 65534;
    }
}

//  The child's environment, built in the parent (setenv is not
//  async-signal-safe): the caller's, with TMPDIR pointing at the workdir
//  so compiler temporaries stay inside the job's private directory, and,
//  when the child drops to a sandbox uid, USER and LOGNAME naming it. A
//  pool uid has no passwd entry, and programs that ask who they are
//  (Python's getpass.getuser, which torch.compile's cache path uses) read
//  those first rather than fail. The strings it formats go in OWNED.
typedef struct {
    char tmpdir[4096 + 8];
    char home[4096 + 8];
    char user[64 + 8];
    char logname[64 + 8];
} s_env_owned_t;

bool
kf_subproc_env_kept (const char *entry)
{
    static const char *const kept[] = {
        "PATH=", "HOME=", "LANG=", "LANGUAGE=", "LC_", "TZ=", "TERM=", "USER=", "LOGNAME=",
        "LD_LIBRARY_PATH=", "CUDA_", "NVIDIA_", "ZE_", "SYCL_", "OMP_", "GOMP_", "KMP_",
        "MKL_", "OPENBLAS_", "PYTHON", "TORCH", "TRITON_", "XDG_CACHE_HOME=", "ASAN_OPTIONS=",
        "LSAN_OPTIONS=", "UBSAN_OPTIONS=", "KF_CUDART=", "KF_ZE_LOADER=",
        "KF_OPENCL_", "OCL_ICD_", "POCL_", NULL
    };
    for (int i = 0; kept[i]; i++)
        if (strncmp (entry, kept[i], strlen (kept[i])) == 0)
            return true;
    return false;
}

//  The child's environment: the allow-list (or all of ours for a trusted
//  program), TMPDIR its working directory, USER and LOGNAME its uid's;
//  in a private view (ISOLATED) HOME is the working directory too, since
//  the worker's home is not in it.
static char **
s_child_env (const kf_subproc_limits_t *limits, bool isolated, s_env_owned_t *owned)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **env = calloc (n + 5, sizeof *env);
    if (!env)
        return NULL;
    bool named = limits->drop_privileges && geteuid () == 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (limits->workdir && strncmp (environ[i], "TMPDIR=", 7) == 0)
            continue;
        if (isolated && limits->workdir && strncmp (environ[i], "HOME=", 5) == 0)
            continue;
        if (named && (strncmp (environ[i], "USER=", 5) == 0
                      || strncmp (environ[i], "LOGNAME=", 8) == 0))
            continue;
        if (!limits->keep_env && !kf_subproc_env_kept (environ[i]))
            continue;
        env[k++] = environ[i];
    }
    if (limits->workdir) {
        if ((size_t) snprintf (owned->tmpdir, sizeof owned->tmpdir, "TMPDIR=%s",
                               limits->workdir) >= sizeof owned->tmpdir) {
            free (env);
            errno = ENAMETOOLONG;
            return NULL;
        }
        env[k++] = owned->tmpdir;
        if (isolated) {
            snprintf (owned->home, sizeof owned->home, "HOME=%s", limits->workdir);
            env[k++] = owned->home;
        }
    }
    if (named) {
        char name[64];
        struct passwd pw, *found = NULL;
        char buf[4096];
        if (getpwuid_r (limits->uid, &pw, buf, sizeof buf, &found) == 0 && found)
            snprintf (name, sizeof name, "%s", found->pw_name);
        else
            snprintf (name, sizeof name, "kf-sandbox-%lu", (unsigned long) limits->uid);
        snprintf (owned->user, sizeof owned->user, "USER=%s", name);
        snprintf (owned->logname, sizeof owned->logname, "LOGNAME=%s", name);
        env[k++] = owned->user;
        env[k++] = owned->logname;
    }
    env[k] = NULL;
    return env;
}

static void
s_limit (int resource, rlim_t value)
{
    struct rlimit rl = { value, value };
    setrlimit (resource, &rl);
}

//  Reports errno to the parent through the close-on-exec error pipe and
//  ends the child. Only async-signal-safe calls.
static void
s_child_fail (int errfd, int stage)
{
    int msg[2] = { stage, errno };
    ssize_t rc = write (errfd, msg, sizeof msg);
    (void) rc;
    _exit (127);
}

static void
s_child (char *const argv[], char **env, const kf_subproc_limits_t *limits,
         bool no_new_privs, const kf_sandbox_plan_t *plan, pid_t parent, int outfd,
         int errfd, int finalfd)
{
    setpgid (0, 0);
    //  The parent may have blocked or ignored signals; a candidate should
    //  start with the defaults.
    sigset_t none;
    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
    signal (SIGPIPE, SIG_DFL);

    int devnull = open ("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2 (devnull, 0);
        if (devnull > 2)
            close (devnull);
    }
    if (dup2 (outfd, 1) < 0 || dup2 (outfd, 2) < 0)
        s_child_fail (errfd, 1);
    //  Fds 3 and 4 are the channel's and the final word's places: the
    //  error pipe and the final pipe move out of the way first (a copy
    //  left behind is close-on-exec).
    if (errfd <= 4 && (errfd = fcntl (errfd, F_DUPFD_CLOEXEC, 5)) < 0)
        _exit (127);
    if (finalfd >= 0 && finalfd <= 4 && (finalfd = fcntl (finalfd, F_DUPFD_CLOEXEC, 5)) < 0)
        s_child_fail (errfd, 1);
    if (limits->pass_fd > 2) {
        int rc = limits->pass_fd == 3 ? fcntl (3, F_SETFD, 0) : dup2 (limits->pass_fd, 3);
        if (rc < 0)
            s_child_fail (errfd, 1);
    }
    if (finalfd >= 0 && dup2 (finalfd, KF_SUBPROC_FINAL_FD) < 0)
        s_child_fail (errfd, 1);

    if (plan) {
        //  The sandbox's first two processes never exec: they must not
        //  keep a copy of any other descriptor of the worker's (another
        //  job's pipe would not reach its end until this run's did).
        if (errfd != 5 && (dup3 (errfd, 5, O_CLOEXEC) < 0 || (errfd = 5) < 0))
            _exit (127);
        if (limits->pass_fd <= 2)
            close (3);
        if (finalfd < 0)
            close (KF_SUBPROC_FINAL_FD);
        syscall (SYS_close_range, 6u, ~0u, 0u);
        if (kf_sandbox_enter (plan, parent, errfd) != 0)
            s_child_fail (errfd, KF_SANDBOX_STAGE_NS);
    }
    //  Needs CAP_SYS_ADMIN, so before the drop; EPERM (no privilege,
    //  or a container that forbids it) just leaves the network as is.
    else if (limits->no_network)
        unshare (CLONE_NEWNET);

    if (limits->workdir && chdir (limits->workdir) != 0)
        s_child_fail (errfd, 2);

    if (limits->memory_bytes)
        s_limit (RLIMIT_AS, limits->memory_bytes);
    if (limits->file_bytes)
        s_limit (RLIMIT_FSIZE, limits->file_bytes);
    if (limits->max_procs > 0)
        s_limit (RLIMIT_NPROC, (rlim_t) limits->max_procs);
    if (limits->time_limit_s > 0) {
        //  A second line of defence behind the wall clock: a CPU hog that
        //  somehow escapes the group kill still dies. The limit counts
        //  every thread's time, so it is the wall limit on every core: a
        //  harness with a thread per core (or a GPU runtime's busy wait
        //  beside it) would otherwise be killed long before its wall
        //  limit, as every sweep config at 16384 x 4096 on the H200 was.
        long cores = sysconf (_SC_NPROCESSORS_ONLN);
        s_limit (RLIMIT_CPU, (rlim_t) (ceil (limits->time_limit_s) * (cores > 0 ? cores : 1)) + 1);
    }
    s_limit (RLIMIT_CORE, 0);

    if (limits->drop_privileges && geteuid () == 0) {
        if (setgroups (0, NULL) != 0)
            s_child_fail (errfd, 3);
        if (setgid (limits->gid) != 0)
            s_child_fail (errfd, 3);
        if (setuid (limits->uid) != 0)
            s_child_fail (errfd, 3);
        //  Paranoia: if the drop did not stick we must not run as root.
        if (setuid (0) == 0)
            s_child_fail (errfd, 3);
        //  With uids that pass from run to run, a set-user-id file one run
        //  leaves behind (in /tmp, say) would let a later run become that
        //  uid while a third holds it: no set-id exec at all.
        if (no_new_privs && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
            s_child_fail (errfd, 3);
    }
    //  In the sandbox no set-id program raises anyone either.
    if (plan && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        s_child_fail (errfd, 3);
    //  A worker killed with -9 must not leave its candidate running: die
    //  with the parent. Set last, because a credential change clears it.
    //  (In the sandbox the parent is the namespace's init, pid 1, whose
    //  end kills every process of the namespace.)
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    if (!plan && getppid () == 1)
        _exit (126);   //  the parent died before the line above
    execvpe (argv[0], argv, env);
    s_child_fail (errfd, 4);
}

//  pidfd_open lets poll() wake on the child's exit as well as on output;
//  on kernels without it we fall back to short poll slices.
static int
s_pidfd_open (pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int) syscall (SYS_pidfd_open, pid, 0);
#else
    (void) pid;
    errno = ENOSYS;
    return -1;
#endif
}

//  How many "final" bytes without a whole answer a run may send before
//  its pipe is no longer heard (each costs the caller a look at its
//  channel): after that the run is waited for, as without the pipe.
#define S_FINAL_TRIES 16

//  Keeps N bytes of output at CHUNK up to CAP in all; the rest is only
//  marked as cut.
static void
s_keep_output (kf_subproc_result_t *result, const char *chunk, size_t n, size_t cap)
{
    size_t keep = result->output_len < cap ? cap - result->output_len : 0;
    if (keep > n)
        keep = n;
    memcpy (result->output + result->output_len, chunk, keep);
    result->output_len += keep;
    if (keep < n)
        result->output_truncated = true;
}

//  Reads what output is left in the pipe at FD without waiting: the
//  run's processes are killed, though the dying may still hold it open.
static void
s_take_rest (int fd, kf_subproc_result_t *result, size_t cap)
{
    char chunk[4096];
    struct pollfd pf = { fd, POLLIN, 0 };
    while (poll (&pf, 1, 0) > 0 && (pf.revents & POLLIN)) {
        ssize_t n = read (fd, chunk, sizeof chunk);
        if (n <= 0)
            break;
        s_keep_output (result, chunk, (size_t) n, cap);
    }
}

//  The child wrote to its final pipe (FD): whether its answer is final
//  now. The byte itself proves nothing (whoever holds the pipe can write
//  it); only the caller's own look at its channel does.
static bool
s_final_heard (int fd, const kf_subproc_limits_t *limits, int *tries, bool *open)
{
    char bytes[64];
    ssize_t n = read (fd, bytes, sizeof bytes);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        *open = false;   //  every writer is gone: the exit says the rest
        return false;
    }
    if (n < 0)
        return false;
    if (limits->final_whole (limits->final_arg))
        return true;
    if (++*tries >= S_FINAL_TRIES)
        *open = false;
    return false;
}

double
kf_subproc_rusage_s (const struct rusage *ru)
{
    return (double) ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6
           + (double) ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
}

//  One run. When it ends at its final answer, *DYING is its child,
//  killed and not reaped (the caller defers it); otherwise 0.
static int
s_run_once (char *const argv[], const kf_subproc_limits_t *limits, bool no_new_privs,
            kf_subproc_result_t *result, pid_t *dying)
{
    memset (result, 0, sizeof *result);
    result->exit_code = -1;
    *dying = 0;
    if (!argv || !argv[0] || !limits) {
        errno = EINVAL;
        return -1;
    }
    result->uid = limits->drop_privileges && geteuid () == 0 ? limits->uid : geteuid ();

    size_t cap = limits->output_cap;
    result->output = malloc (cap + 1);
    if (!result->output)
        return -1;
    result->output[0] = 0;

    //  The operator's own program (keep_env) sees the host as the worker
    //  does; everything else gets namespaces and a private view.
    kf_sandbox_plan_t *plan = NULL;
    bool isolated = kf_sandbox_isolation () && !limits->keep_env;
    if (isolated && !(plan = kf_sandbox_plan_new (argv[0], limits->workdir))) {
        kf_subproc_result_free (result);
        return -1;
    }
    s_env_owned_t owned;
    char **env = s_child_env (limits, isolated, &owned);
    int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, finalp[2] = { -1, -1 };
    if (!env || pipe2 (outp, O_CLOEXEC) != 0 || pipe2 (errp, O_CLOEXEC) != 0
        || (limits->final_whole && pipe2 (finalp, O_CLOEXEC | O_NONBLOCK) != 0)) {
        int saved = errno;
        kf_sandbox_plan_destroy (&plan);
        free (env);
        for (int i = 0; i < 2; i++) {
            if (outp[i] >= 0)
                close (outp[i]);
            if (errp[i] >= 0)
                close (errp[i]);
        }
        kf_subproc_result_free (result);
        errno = saved;
        return -1;
    }

    double start = kf_clock_now ();
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid == 0)
        s_child (argv, env, limits, no_new_privs, plan, parent, outp[1], errp[1], finalp[1]);
    close (outp[1]);
    close (errp[1]);
    if (finalp[1] >= 0)
        close (finalp[1]);
    free (env);
    kf_sandbox_plan_destroy (&plan);
    if (pid < 0) {
        close (outp[0]);
        close (errp[0]);
        if (finalp[0] >= 0)
            close (finalp[0]);
        kf_subproc_result_free (result);
        return -1;
    }
    //  Also from the parent, so a kill right after fork finds the group.
    setpgid (pid, pid);

    //  Did exec succeed? The error pipe closes on exec, or carries errno.
    int msg[2];
    ssize_t got;
    do
        got = read (errp[0], msg, sizeof msg);
    while (got < 0 && errno == EINTR);
    close (errp[0]);
    if (got == (ssize_t) sizeof msg) {
        int status;
        waitpid (pid, &status, 0);
        close (outp[0]);
        if (finalp[0] >= 0)
            close (finalp[0]);
        kf_subproc_result_free (result);
        if (msg[0] >= KF_SANDBOX_STAGE_NS && msg[0] <= KF_SANDBOX_STAGE_INIT)
            kf_sandbox_failed (msg[0], msg[1]);
        errno = msg[1];
        return -1;
    }
    result->started = true;

    int pidfd = s_pidfd_open (pid);
    bool pipe_open = true, exited = false, final_open = finalp[0] >= 0, final = false;
    int status = 0, final_tries = 0;
    struct rusage ru;
    memset (&ru, 0, sizeof ru);
    double deadline = limits->time_limit_s > 0 ? start + limits->time_limit_s : 0;
    double drain_until = 0;
    char chunk[4096];

    while (pipe_open || !exited) {
        if (!exited && wait4 (pid, &status, WNOHANG, &ru) == pid) {
            exited = true;
            //  Anything the leader left behind in its group goes now;
            //  such stragglers would otherwise keep our pipe open.
            kill (-pid, SIGKILL);
            drain_until = kf_clock_now () + 0.5;
        }
        double now = kf_clock_now ();
        if (!exited && deadline && now >= deadline) {
            result->timed_out = true;
            kill (-pid, SIGKILL);
            kill (pid, SIGKILL);
            wait4 (pid, &status, 0, &ru);
            exited = true;
            kill (-pid, SIGKILL);
            drain_until = kf_clock_now () + 0.5;
        }
        if (exited && (!pipe_open || now >= drain_until))
            break;

        int timeout_ms = pidfd >= 0 ? 1000 : 10;
        if (!exited && deadline) {
            int left = (int) ceil ((deadline - now) * 1000);
            if (left < timeout_ms)
                timeout_ms = left > 0 ? left : 0;
        }
        if (exited) {
            timeout_ms = (int) ceil ((drain_until - now) * 1000);
            if (timeout_ms < 0)
                timeout_ms = 0;
        }
        struct pollfd fds[3];
        int nfds = 0, at_out = -1, at_final = -1;
        if (pipe_open)
            fds[at_out = nfds++] = (struct pollfd) { outp[0], POLLIN, 0 };
        if (pidfd >= 0 && !exited)
            fds[nfds++] = (struct pollfd) { pidfd, POLLIN, 0 };
        if (final_open && !exited)
            fds[at_final = nfds++] = (struct pollfd) { finalp[0], POLLIN, 0 };
        int rc = poll (fds, nfds, timeout_ms);
        if (rc < 0 && errno != EINTR)
            break;
        if (rc > 0 && at_out >= 0 && fds[at_out].revents) {
            ssize_t n = read (outp[0], chunk, sizeof chunk);
            if (n > 0)
                s_keep_output (result, chunk, (size_t) n, cap);
            else if (n == 0 || (errno != EINTR && errno != EAGAIN))
                pipe_open = false;
        }
        if (rc > 0 && at_final >= 0 && fds[at_final].revents
            && s_final_heard (finalp[0], limits, &final_tries, &final_open)) {
            final = true;
            break;
        }
    }
    if (final) {
        //  The answer is whole: nothing of the run is needed any more.
        //  In a namespace the first process leaves the group first: it
        //  ends only once the namespace's last process is gone, so it
        //  is the one to reap (kf_subproc_reap). Every other process of
        //  the group dies now, the namespace with its init.
        if (isolated)
            setpgid (pid, getpgrp ());
        kill (-pid, SIGKILL);
        if (!isolated)
            kill (pid, SIGKILL);
        s_take_rest (outp[0], result, cap);
        result->ended_final = true;
        *dying = pid;
        status = 0;
    }
    else if (!exited) {
        kill (-pid, SIGKILL);
        wait4 (pid, &status, 0, &ru);
    }
    if (pidfd >= 0)
        close (pidfd);
    close (outp[0]);
    if (finalp[0] >= 0)
        close (finalp[0]);
    result->output[result->output_len] = 0;
    result->wall_s = kf_clock_now () - start;
    result->cpu_s = kf_subproc_rusage_s (&ru);
    if (WIFEXITED (status)) {
        result->exit_code = WEXITSTATUS (status);
        result->signal = 0;
    }
    else if (WIFSIGNALED (status)) {
        result->exit_code = -1;
        result->signal = WTERMSIG (status);
    }
    return 0;
}

//  A run that ended at its final answer (*DYING its child) and held no
//  uid of the pool: reaped later, or now when too many are dying.
static void
s_defer (pid_t dying)
{
    if (dying > 0 && kf_subproc_defer (dying, -1, 0, 0) != 0)
        while (waitpid (dying, NULL, 0) < 0 && errno == EINTR)
            ;
}

//  A run under a uid of the pool: taken, the workdir handed to it, the
//  run, every process of the uid killed, the workdir handed back, the uid
//  given back. The kill comes before the hand-back so that nothing of the
//  run's can race the walk. A run that ended at its final answer is not
//  waited for: in a PID namespace every process of the uid is in it and
//  dies with its init, which s_run_once killed with the group; without
//  one, the uid is killed here, once (a killed process makes no further
//  system call). The uid goes back when kf_subproc_reap finds the run
//  gone. (Killing the uid takes a fork of this process: 40-70 ms of a
//  sanitizer build's on a loaded machine, which a namespace saves.)
static int
s_run_pooled (char *const argv[], const kf_subproc_limits_t *limits,
              kf_subproc_result_t *result)
{
    pid_t dying;
    if (!argv || !argv[0])
        return s_run_once (argv, limits, false, result, &dying);
    int slot = kf_subproc_pool_take ();
    if (slot < 0) {
        int saved = errno;
        memset (result, 0, sizeof *result);
        result->exit_code = -1;
        errno = saved;
        return -1;
    }
    kf_subproc_limits_t mine = *limits;
    mine.uid = kf_subproc_pool_uid (slot);
    mine.gid = (gid_t) mine.uid;
    uid_t worker = geteuid ();
    gid_t group = getegid ();
    if (mine.workdir)
        kf_subproc_move_tree (mine.workdir, worker, mine.uid, mine.gid, true);
    int rc = s_run_once (argv, &mine, true, result, &dying);
    int saved = errno;
    bool isolated = kf_sandbox_isolation () && !mine.keep_env;
    bool deferred = dying > 0 && (isolated || kf_subproc_kill_uid (mine.uid, mine.gid) >= 0);
    if (deferred) {
        if (mine.workdir)
            kf_subproc_move_tree (mine.workdir, mine.uid, worker, group, false);
        deferred = kf_subproc_defer (dying, slot, mine.uid, mine.gid) == 0;
    }
    if (!deferred) {
        if (dying > 0)
            while (waitpid (dying, NULL, 0) < 0 && errno == EINTR)
                ;
        int left = kf_subproc_empty_uid (mine.uid, mine.gid);
        if (mine.workdir)
            kf_subproc_move_tree (mine.workdir, mine.uid, worker, group, false);
        kf_subproc_pool_give (slot, left);
    }
    errno = saved;
    return rc;
}

//  A run as the one account KF_SANDBOX_USER names. Its process budget is
//  shared with every other run, so while another job's fork bomb holds
//  it our exec fails with EAGAIN; that bomb dies at its own time limit,
//  so waiting a little is better than failing the job. Nothing but the
//  process group can be killed at the end: other runs share the uid.
static int
s_run_shared (char *const argv[], const kf_subproc_limits_t *limits,
              kf_subproc_result_t *result)
{
    uid_t worker = geteuid ();
    gid_t group = getegid ();
    if (limits->workdir)
        kf_subproc_move_tree (limits->workdir, worker, limits->uid, limits->gid, true);
    int rc;
    pid_t dying = 0;
    for (int attempt = 0; ; attempt++) {
        rc = s_run_once (argv, limits, false, result, &dying);
        if (rc == 0 || errno != EAGAIN || attempt >= 100)
            break;
        struct timespec pause = { 0, 100 * 1000 * 1000 };
        nanosleep (&pause, NULL);
    }
    int saved = errno;
    s_defer (dying);
    if (limits->workdir)
        kf_subproc_move_tree (limits->workdir, limits->uid, worker, group, false);
    errno = saved;
    return rc;
}

int
kf_subproc_run (char *const argv[], const kf_subproc_limits_t *limits,
                kf_subproc_result_t *result)
{
    //  What earlier runs left dying and is gone by now (their uids come
    //  back with it).
    kf_subproc_reap (false);
    if (!limits || !limits->drop_privileges || geteuid () != 0) {
        pid_t dying;
        int rc = s_run_once (argv, limits, false, result, &dying);
        int saved = errno;
        s_defer (dying);
        errno = saved;
        return rc;
    }
    if (limits->uid == 0)
        return s_run_pooled (argv, limits, result);
    return s_run_shared (argv, limits, result);
}

void
kf_subproc_result_free (kf_subproc_result_t *result)
{
    if (!result)
        return;
    free (result->output);
    result->output = NULL;
    result->output_len = 0;
}

char *
kf_subproc_mkdtemp (const kf_subproc_limits_t *limits)
{
    const char *base = getenv ("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    size_t len = strlen (base) + 16;
    char *path = malloc (len);
    if (!path)
        return NULL;
    snprintf (path, len, "%s/kf-XXXXXX", base);
    if (!mkdtemp (path)) {
        free (path);
        return NULL;
    }
    //  mkdtemp gives 0700, ours. No chown: each run hands the directory
    //  to its own uid for as long as it lasts (kf_subproc_run).
    (void) limits;
    return path;
}

char *
kf_subproc_workdir (kf_subproc_limits_t *limits)
{
    char *dir = kf_subproc_mkdtemp (limits);
    if (dir)
        limits->workdir = dir;
    return dir;
}

static int
s_unlink_one (const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void) sb;
    (void) ftw;
    if (flag == FTW_DP || flag == FTW_D)
        rmdir (path);
    else
        unlink (path);
    return 0;
}

void
kf_subproc_rmtree (const char *dir)
{
    if (!dir || !*dir)
        return;
    //  FTW_PHYS: never follow a link the sandboxed child planted.
    nftw (dir, s_unlink_one, 16, FTW_DEPTH | FTW_PHYS);
}
