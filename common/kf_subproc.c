/*  kf_subproc.c - run a program in a sandboxed child process.
 *
 *  Every compiler run and every evaluation goes through here, so this is
 *  the one place that decides what a misbehaving candidate can do to the
 *  host: it gets its own process group (the whole group is killed on the
 *  wall-clock limit and again after the leader ends, so stragglers do not
 *  outlive the job), resource limits, no network where the kernel lets us
 *  unshare it, and, when the worker runs as root, an unprivileged user -
 *  root ignores RLIMIT_NPROC, so without the drop a fork bomb would take
 *  the host.
 *
 *  Job threads call this concurrently, so the child does only
 *  async-signal-safe work between fork and exec: everything it needs
 *  (environment, argv) is prepared in the parent first, and every pipe is
 *  close-on-exec so a sibling job's child cannot hold our pipe open.
 */
#include "kf_subproc.h"

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

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

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

    const char *user = getenv ("KF_SANDBOX_USER");
    if (!user || !*user)
        user = "nobody";
    //  getpwnam_r because job threads fill limits concurrently.
    struct passwd pw, *found = NULL;
    char buf[4096];
    if (getpwnam_r (user, &pw, buf, sizeof buf, &found) == 0 && found) {
        limits->uid = found->pw_uid;
        limits->gid = found->pw_gid;
    }
    else {
        //  An unknown user must not silently mean "stay root"; fall back
        //  to the conventional overflow ids, which own nothing.
        limits->uid = 65534;
        limits->gid = 65534;
    }
    limits->drop_privileges = true;
}

//  Builds the child's environment in the parent (setenv is not
//  async-signal-safe): the caller's, with TMPDIR pointing at the workdir
//  so compiler temporaries stay inside the job's private directory.
static char **
s_child_env (const kf_subproc_limits_t *limits, char **tmpdir_var)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **env = calloc (n + 2, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!limits->workdir || strncmp (environ[i], "TMPDIR=", 7) != 0)
            env[k++] = environ[i];
    *tmpdir_var = NULL;
    if (limits->workdir) {
        size_t len = strlen (limits->workdir) + 8;
        *tmpdir_var = malloc (len);
        if (!*tmpdir_var) {
            free (env);
            return NULL;
        }
        snprintf (*tmpdir_var, len, "TMPDIR=%s", limits->workdir);
        env[k++] = *tmpdir_var;
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
         int outfd, int errfd)
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

    //  Needs CAP_SYS_ADMIN, so before the drop; EPERM (no privilege,
    //  or a container that forbids it) just leaves the network as is.
    if (limits->no_network)
        unshare (CLONE_NEWNET);

    if (limits->workdir && chdir (limits->workdir) != 0)
        s_child_fail (errfd, 2);

    if (limits->memory_bytes)
        s_limit (RLIMIT_AS, limits->memory_bytes);
    if (limits->file_bytes)
        s_limit (RLIMIT_FSIZE, limits->file_bytes);
    if (limits->max_procs > 0)
        s_limit (RLIMIT_NPROC, (rlim_t) limits->max_procs);
    if (limits->time_limit_s > 0)
        //  A second line of defence behind the wall clock: a CPU hog that
        //  somehow escapes the group kill still dies.
        s_limit (RLIMIT_CPU, (rlim_t) ceil (limits->time_limit_s) + 1);
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
    }
    //  A worker killed with -9 must not leave its candidate running: die
    //  with the parent. Set last, because a credential change clears it.
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    if (getppid () == 1)
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

static int
s_run_once (char *const argv[], const kf_subproc_limits_t *limits,
            kf_subproc_result_t *result)
{
    memset (result, 0, sizeof *result);
    result->exit_code = -1;
    if (!argv || !argv[0] || !limits)
        return -1;

    size_t cap = limits->output_cap;
    result->output = malloc (cap + 1);
    if (!result->output)
        return -1;
    result->output[0] = 0;

    char *tmpdir_var = NULL;
    char **env = s_child_env (limits, &tmpdir_var);
    int outp[2] = { -1, -1 }, errp[2] = { -1, -1 };
    if (!env || pipe2 (outp, O_CLOEXEC) != 0 || pipe2 (errp, O_CLOEXEC) != 0) {
        free (env);
        free (tmpdir_var);
        if (outp[0] >= 0) {
            close (outp[0]);
            close (outp[1]);
        }
        kf_subproc_result_free (result);
        return -1;
    }

    double start = s_now ();
    pid_t pid = fork ();
    if (pid == 0)
        s_child (argv, env, limits, outp[1], errp[1]);
    close (outp[1]);
    close (errp[1]);
    free (env);
    free (tmpdir_var);
    if (pid < 0) {
        close (outp[0]);
        close (errp[0]);
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
        kf_subproc_result_free (result);
        errno = msg[1];
        return -1;
    }
    result->started = true;

    int pidfd = s_pidfd_open (pid);
    bool pipe_open = true, exited = false;
    int status = 0;
    double deadline = limits->time_limit_s > 0 ? start + limits->time_limit_s : 0;
    double drain_until = 0;
    char chunk[4096];

    while (pipe_open || !exited) {
        if (!exited && waitpid (pid, &status, WNOHANG) == pid) {
            exited = true;
            //  Anything the leader left behind in its group goes now;
            //  such stragglers would otherwise keep our pipe open.
            kill (-pid, SIGKILL);
            drain_until = s_now () + 0.5;
        }
        double now = s_now ();
        if (!exited && deadline && now >= deadline) {
            result->timed_out = true;
            kill (-pid, SIGKILL);
            kill (pid, SIGKILL);
            waitpid (pid, &status, 0);
            exited = true;
            kill (-pid, SIGKILL);
            drain_until = s_now () + 0.5;
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
        struct pollfd fds[2];
        int nfds = 0;
        if (pipe_open)
            fds[nfds++] = (struct pollfd) { outp[0], POLLIN, 0 };
        if (pidfd >= 0 && !exited)
            fds[nfds++] = (struct pollfd) { pidfd, POLLIN, 0 };
        int rc = poll (fds, nfds, timeout_ms);
        if (rc < 0 && errno != EINTR)
            break;
        if (rc > 0 && pipe_open && fds[0].revents) {
            ssize_t n = read (outp[0], chunk, sizeof chunk);
            if (n > 0) {
                size_t keep = 0;
                if (result->output_len < cap)
                    keep = cap - result->output_len < (size_t) n
                         ? cap - result->output_len : (size_t) n;
                memcpy (result->output + result->output_len, chunk, keep);
                result->output_len += keep;
                if (keep < (size_t) n)
                    result->output_truncated = true;
            }
            else if (n == 0 || (errno != EINTR && errno != EAGAIN))
                pipe_open = false;
        }
    }
    if (!exited) {
        kill (-pid, SIGKILL);
        waitpid (pid, &status, 0);
    }
    if (pidfd >= 0)
        close (pidfd);
    close (outp[0]);
    result->output[result->output_len] = 0;
    result->wall_s = s_now () - start;
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

int
kf_subproc_run (char *const argv[], const kf_subproc_limits_t *limits,
                kf_subproc_result_t *result)
{
    //  All sandboxed children share one unprivileged user and so one
    //  RLIMIT_NPROC budget: while another job's fork bomb holds it, our
    //  setuid or exec fails with EAGAIN. That bomb dies at its own time
    //  limit, so waiting a little is better than failing the job.
    for (int attempt = 0; ; attempt++) {
        int rc = s_run_once (argv, limits, result);
        if (rc == 0 || errno != EAGAIN || attempt >= 100)
            return rc;
        struct timespec pause = { 0, 100 * 1000 * 1000 };
        nanosleep (&pause, NULL);
    }
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
    //  mkdtemp gives 0700; the sandbox user must own it to write there.
    if (limits && limits->drop_privileges && geteuid () == 0
        && chown (path, limits->uid, limits->gid) != 0) {
        rmdir (path);
        free (path);
        return NULL;
    }
    return path;
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

