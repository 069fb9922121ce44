/*  test_sandbox.c - the private view every sandboxed child gets
 *  (kf_sandbox.h), as root and as any other user:
 *
 *  - a file of the host outside the allow-list is not there; the CURVE
 *    key named by KF_CURVE_CERT is hidden even inside a visible folder,
 *    and so are other jobs' folders when TMPDIR is inside one;
 *  - the root and the system are read-only, the job's folder writable;
 *  - /proc shows the run's own processes only, not the host's;
 *  - /tmp and /dev/shm are the run's own, size-capped, gone afterwards;
 *  - a host with no user namespaces to give (user.max_user_namespaces = 0
 *    in a user namespace of the test's own: the kernel's real refusal)
 *    gets no run at all, and a probe that says which sysctls allow it;
 *    with isolation off (--no-isolation) the same run starts;
 *  - as root, the uid pool's locks hold across two worker processes (a
 *    second one waits while the first holds the only uid), and a lock
 *    folder that is not root's alone stops every run instead of sharing.
 *
 *  Each check fails on a sandbox without the defence it names.
 */
#include "kf_sandbox.h"
#include "kf_subproc.h"
#include "../kf_test.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int
s_run_sh (const char *script, kf_subproc_limits_t *limits, kf_subproc_result_t *res)
{
    char *argv[] = { "sh", "-c", (char *) script, NULL };
    return kf_subproc_run (argv, limits, res);
}

//  Runs SCRIPT in a fresh private folder; its exit code, or -1 when it
//  did not start. The output goes to OUT when it is not NULL.
static int
s_sh (const char *script, char *out, size_t out_size)
{
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    kf_subproc_limits_default (&lim);
    lim.time_limit_s = 60;
    char *dir = kf_subproc_mkdtemp (&lim);
    if (!dir)
        return -1;
    lim.workdir = dir;
    int rc = s_run_sh (script, &lim, &res) == 0 ? res.exit_code : -1;
    if (out)
        snprintf (out, out_size, "%s", rc >= 0 || res.output ? res.output : "");
    if (res.output)
        kf_subproc_result_free (&res);
    kf_subproc_rmtree (dir);
    free (dir);
    return rc;
}

static void
s_write (const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen (path, "w");
    if (f) {
        fputs (text, f);
        fclose (f);
    }
    chmod (path, mode);
}

//  What is visible, readable and writable.
static void
s_test_view (void)
{
    char host[] = "/tmp/kf-view-XXXXXX", path[256], script[1024], out[4096];
    CHECK (mkdtemp (host) != NULL);
    chmod (host, 0755);
    //  A file of the host any user may read, outside the allow-list.
    snprintf (path, sizeof path, "%s/other-job.txt", host);
    s_write (path, "kf-canary-other-job\n", 0644);
    snprintf (script, sizeof script, "cat %s", path);
    CHECK (s_sh (script, out, sizeof out) != 0 && !strstr (out, "kf-canary"));

    //  A key beside a file the operator lets children read.
    char key[256], secret[300];
    snprintf (key, sizeof key, "%s/worker.key", host);
    snprintf (secret, sizeof secret, "%s_secret", key);
    s_write (key, "kf-canary-public\n", 0644);
    s_write (secret, "kf-canary-secret\n", 0644);
    setenv ("KF_SANDBOX_BIND", host, 1);
    setenv ("KF_CURVE_CERT", key, 1);
    snprintf (script, sizeof script, "cat %s; cat %s %s; true", path, key, secret);
    CHECK (s_sh (script, out, sizeof out) == 0);
    printf ("  a visible folder with the CURVE key in it: %.60s\n", out);
    CHECK (strstr (out, "kf-canary-other-job") && !strstr (out, "kf-canary-secret")
           && !strstr (out, "kf-canary-public"));
    unsetenv ("KF_CURVE_CERT");

    //  The jobs' folder (TMPDIR) inside that visible folder: the other
    //  jobs' folders beside this one's are covered all the same.
    char jobs[64], other[96], saved_tmp[4096] = "";
    snprintf (jobs, sizeof jobs, "%s/jobs", host);
    snprintf (other, sizeof other, "%s/kf-other", jobs);
    mkdir (jobs, 0755);
    mkdir (other, 0755);
    snprintf (path, sizeof path, "%s/candidate.c", other);
    s_write (path, "kf-canary-beside\n", 0644);
    if (getenv ("TMPDIR"))
        snprintf (saved_tmp, sizeof saved_tmp, "%s", getenv ("TMPDIR"));
    setenv ("TMPDIR", jobs, 1);
    snprintf (script, sizeof script, "cat %s 2>/dev/null; ls ..", path);
    CHECK (s_sh (script, out, sizeof out) == 0);
    printf ("  the jobs' folder inside a visible one, seen from a job: %.60s\n", out);
    CHECK (!strstr (out, "kf-canary-beside") && !strstr (out, "kf-other"));
    if (saved_tmp[0])
        setenv ("TMPDIR", saved_tmp, 1);
    else
        unsetenv ("TMPDIR");
    unsetenv ("KF_SANDBOX_BIND");

    //  Read-only system and root, a writable job folder.
    CHECK (s_sh ("touch ./mine && ! touch /x 2>/dev/null && ! touch /usr/x 2>/dev/null"
                 " && ! touch /etc/x 2>/dev/null", NULL, 0) == 0);
    //  Its own processes only: the init, sh and ls.
    snprintf (script, sizeof script, "test ! -e /proc/%ld && ls /proc | grep -c '^[0-9]'",
              (long) getpid ());
    CHECK (s_sh (script, out, sizeof out) == 0 && atoi (out) > 0 && atoi (out) <= 4);
    printf ("  processes in the run's /proc: %d\n", atoi (out));

    //  /tmp and /dev/shm: the run's own, capped, and gone with it.
    snprintf (path, sizeof path, "/tmp/kf-left-%ld", (long) getpid ());
    snprintf (script, sizeof script, "echo x > %s && echo y > /dev/shm/kf-left-%ld && test -s %s",
              path, (long) getpid (), path);
    CHECK (s_sh (script, NULL, 0) == 0);
    CHECK (access (path, F_OK) != 0);
    snprintf (script, sizeof script, "test ! -e %s", path);
    CHECK (s_sh (script, NULL, 0) == 0);
    snprintf (path, sizeof path, "/dev/shm/kf-left-%ld", (long) getpid ());
    CHECK (access (path, F_OK) != 0);
    unlink (path);
    setenv ("KF_SANDBOX_TMP_MB", "4", 1);
    setenv ("KF_SANDBOX_SHM_MB", "4", 1);
    CHECK (s_sh ("head -c 1048576 /dev/zero > /tmp/small && "
                 "! head -c 8388608 /dev/zero > /tmp/big 2>/dev/null && "
                 "! head -c 8388608 /dev/zero > /dev/shm/big 2>/dev/null", NULL, 0) == 0);
    unsetenv ("KF_SANDBOX_TMP_MB");
    unsetenv ("KF_SANDBOX_SHM_MB");
    kf_subproc_rmtree (host);
}

//  In a forked child: a user namespace of its own, in which this process
//  is not root and no further user namespace may be made.
static bool
s_no_user_namespaces (void)
{
    uid_t uid = geteuid ();
    gid_t gid = getegid ();
    char map[64];
    if (unshare (CLONE_NEWUSER) != 0)
        return false;
    int fd = open ("/proc/self/setgroups", O_WRONLY);
    if (fd >= 0) {
        if (write (fd, "deny", 4) != 4) {
        }
        close (fd);
    }
    snprintf (map, sizeof map, "1000 %lu 1\n", (unsigned long) uid);
    fd = open ("/proc/self/uid_map", O_WRONLY);
    bool ok = fd >= 0 && write (fd, map, strlen (map)) == (ssize_t) strlen (map);
    if (fd >= 0)
        close (fd);
    snprintf (map, sizeof map, "1000 %lu 1\n", (unsigned long) gid);
    fd = open ("/proc/self/gid_map", O_WRONLY);
    ok = ok && fd >= 0 && write (fd, map, strlen (map)) == (ssize_t) strlen (map);
    if (fd >= 0)
        close (fd);
    fd = open ("/proc/sys/user/max_user_namespaces", O_WRONLY);
    ok = ok && fd >= 0 && write (fd, "0", 1) == 1;
    if (fd >= 0)
        close (fd);
    return ok && geteuid () == 1000;
}

static void
s_child_refused (void)
{
    CHECK (s_no_user_namespaces ());
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    kf_subproc_limits_default (&lim);
    errno = 0;
    CHECK (s_run_sh ("exit 0", &lim, &res) == -1 && errno == ENOSPC);
    char why[1024];
    CHECK (kf_sandbox_probe (why, sizeof why) == -1);
    printf ("  no user namespaces: %.150s...\n", why);
    CHECK (strstr (why, "user.max_user_namespaces") && strstr (why, "--no-isolation")
           && strstr (why, "kernel.apparmor_restrict_unprivileged_userns")
           && strstr (why, "kernel.unprivileged_userns_clone"));
    CHECK (!strcmp (kf_sandbox_mode (), "namespaces"));
    //  --no-isolation: the operator's choice, for trusted code only.
    kf_sandbox_set_isolation (false);
    CHECK (!strcmp (kf_sandbox_mode (), "off"));
    CHECK (kf_sandbox_probe (why, sizeof why) == 0);
    CHECK (s_run_sh ("exit 0", &lim, &res) == 0 && res.exit_code == 0);
    kf_subproc_result_free (&res);
}

//  Runs FN in a forked child and checks it passed.
static void
s_in_child (const char *what, void (*fn) (void))
{
    fflush (stdout);
    pid_t pid = fork ();
    if (pid == 0) {
        fn ();
        fflush (stdout);
        _exit (kf_test_failures ? 1 : 0);
    }
    int status = -1;
    waitpid (pid, &status, 0);
    if (!(WIFEXITED (status) && WEXITSTATUS (status) == 0))
        fprintf (stderr, "test_sandbox: the child for %s failed\n", what);
    CHECK (WIFEXITED (status) && WEXITSTATUS (status) == 0);
}

// --------------------------------------------------------------------------
//  The uid pool's locks across worker processes (root)

//  A worker process: one run with the pool's only uid that says
//  "running" through SOCK (its fd 3) and waits for a word back; the
//  process exits 0 when the run started and ended, 1 when it was refused.
static pid_t
s_worker (const char *lock_dir, int sock, const char *script)
{
    fflush (stdout);
    pid_t pid = fork ();
    if (pid != 0)
        return pid;
    setenv ("KF_SANDBOX_LOCK_DIR", lock_dir, 1);
    setenv ("KF_SANDBOX_UID_BASE", "2000200000", 1);
    setenv ("KF_SANDBOX_UID_COUNT", "1", 1);
    unsetenv ("KF_SANDBOX_USER");
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    kf_subproc_limits_default (&lim);
    lim.time_limit_s = 120;
    lim.pass_fd = sock;
    int rc = s_run_sh (script, &lim, &res);
    if (rc == 0)
        kf_subproc_result_free (&res);
    _exit (rc == 0 ? 0 : 1);
}

//  Whether a line arrives on FD within SECONDS.
static bool
s_hears (int fd, double seconds)
{
    struct pollfd pf = { fd, POLLIN, 0 };
    return poll (&pf, 1, (int) (seconds * 1000)) == 1;
}

static void
s_test_lock (void)
{
    char dir[] = "/tmp/kf-locks-XXXXXX";
    CHECK (mkdtemp (dir) != NULL);
    const char *script = "id -u >&3; read word <&3";
    int a[2], b[2];
    CHECK (socketpair (AF_UNIX, SOCK_STREAM, 0, a) == 0 && socketpair (AF_UNIX, SOCK_STREAM, 0, b) == 0);
    pid_t first = s_worker (dir, a[1], script);
    char uid_a[32] = "", uid_b[32] = "";
    CHECK (s_hears (a[0], 60) && read (a[0], uid_a, sizeof uid_a - 1) > 0);
    //  The first holds the only uid: the second must not start its run
    //  until the first ends (a bounded wait for something that must not
    //  happen), then must.
    pid_t second = s_worker (dir, b[1], script);
    CHECK (!s_hears (b[0], 2));
    CHECK (write (a[0], "go\n", 3) == 3);
    CHECK (s_hears (b[0], 60) && read (b[0], uid_b, sizeof uid_b - 1) > 0);
    CHECK (write (b[0], "go\n", 3) == 3);
    int st1 = -1, st2 = -1;
    waitpid (first, &st1, 0);
    waitpid (second, &st2, 0);
    CHECK (WIFEXITED (st1) && WEXITSTATUS (st1) == 0 && WIFEXITED (st2) && WEXITSTATUS (st2) == 0);
    printf ("  two workers, one uid: %ld, then %ld\n", atol (uid_a), atol (uid_b));
    CHECK (atol (uid_a) == 2000200000L && atol (uid_b) == 2000200000L);

    //  A lock folder others may write: no run, rather than uids shared.
    chmod (dir, 0777);
    pid_t third = s_worker (dir, b[1], "exit 0");
    int st3 = -1;
    waitpid (third, &st3, 0);
    CHECK (WIFEXITED (st3) && WEXITSTATUS (st3) == 1);
    //  And one that cannot be made at all.
    char missing[300];
    snprintf (missing, sizeof missing, "%s/no/such/folder", dir);
    third = s_worker (missing, b[1], "exit 0");
    waitpid (third, &st3, 0);
    CHECK (WIFEXITED (st3) && WEXITSTATUS (st3) == 1);
    for (int i = 0; i < 2; i++) {
        close (a[i]);
        close (b[i]);
    }
    kf_subproc_rmtree (dir);
}

int
main (void)
{
    printf ("  isolation: %s\n", kf_sandbox_mode ());
    //  The pool is read once per process: its workers fork before this
    //  process first uses it.
    if (geteuid () == 0)
        s_test_lock ();
    else
        printf ("  not root: the uid pool's locks are not tried\n");
    s_in_child ("no user namespaces", s_child_refused);
    s_test_view ();
    return kf_test_done ("test_sandbox");
}
