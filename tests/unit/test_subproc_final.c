/*  test_subproc_final.c - a run that ends at its child's final word
 *  (kf_subproc.h final_whole; the evaluation child's side in
 *  kf_eval_channel.h).
 *
 *  A child that stores a whole verdict, says so, and then would take 3 s
 *  to end is answered within a second, its verdict readable, and nothing
 *  of it runs on (a heartbeat it keeps while ending stays still). A
 *  child that says "final" with no whole verdict is waited for to its
 *  end, as without the pipe, and its later verdict is still taken. As
 *  root, with a pool of one uid and isolation off: while a process of the
 *  early-ended run's uid is left unreaped (an orphan this test holds as
 *  its subreaper), no other run is given that uid.
 *
 *  The children are this binary, run with --child MODE.
 */
#include "kf_subproc.h"
#include "../../exec-worker/kf_eval_channel.h"
#include "kf_sandbox.h"
#include "../kf_test.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

//  Where the children keep their own marks in the channel: between the
//  header and the result, where the judge writes nothing.
#define S_BEAT 2048
#define S_DONE 2056

static char s_self[4096];

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// --------------------------------------------------------------------------
//  The children

static volatile uint64_t *s_mark;

//  An exit that takes 3 s, beating all along.
static void
s_slow_exit (void)
{
    double until = s_now () + 3;
    while (s_now () < until)
        __atomic_add_fetch (&s_mark[0], 1, __ATOMIC_RELAXED);
}

static void
s_spin (double s)
{
    double until = s_now () + s;
    while (s_now () < until)
        ;
}

//  Processes of our uid but us (the uid test's second run).
static int
s_others_of_my_uid (void)
{
    DIR *proc = opendir ("/proc");
    struct dirent *e;
    int n = 0;
    char me[32];
    snprintf (me, sizeof me, "%d", (int) getpid ());
    while (proc && (e = readdir (proc)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9' || !strcmp (e->d_name, me))
            continue;
        char path[300], buf[2048];
        snprintf (path, sizeof path, "/proc/%s/status", e->d_name);
        FILE *f = fopen (path, "re");
        if (!f)
            continue;
        size_t len = fread (buf, 1, sizeof buf - 1, f);
        fclose (f);
        buf[len] = 0;
        const char *ids = strstr (buf, "\nUid:\t");
        unsigned long real;
        if (ids && sscanf (ids, "\nUid:\t%lu", &real) == 1 && real == getuid ())
            n++;
    }
    if (proc)
        closedir (proc);
    return n;
}

static int
s_child_main (const char *mode)
{
    if (!strcmp (mode, "alone")) {
        printf ("others %d\n", s_others_of_my_uid ());
        return 0;
    }
    kf_eval_final_fd (KF_SUBPROC_FINAL_FD);
    if (kf_eval_child_begin (".") != 0)
        return 2;
    void *map = mmap (NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, KF_EVAL_CHANNEL_FD, 0);
    if (map == MAP_FAILED)
        return 2;
    s_mark = (volatile uint64_t *) ((char *) map + S_BEAT);
    if (!strcmp (mode, "slow-exit")) {
        atexit (s_slow_exit);
        kf_eval_write_verdict (".", "correct", "all checks passed");
        return 0;
    }
    if (!strcmp (mode, "early-word")) {
        //  "Final" with nothing in the channel, twice: no verdict. Then a
        //  while of work, the mark that proves the end was waited for.
        for (int i = 0; i < 2; i++)
            if (write (KF_SUBPROC_FINAL_FD, "F", 1) != 1)
                return 2;
        s_spin (0.3);
        s_mark[1] = 1;
        return 7;
    }
    if (!strcmp (mode, "early-then-verdict")) {
        //  (No pipe when the run does not listen.)
        ssize_t rc = write (KF_SUBPROC_FINAL_FD, "F", 1);
        (void) rc;
        s_spin (0.2);
        atexit (s_slow_exit);
        kf_eval_write_verdict (".", "incorrect", "set 0: 3 of 4 outputs wrong");
        return 0;
    }
    if (!strcmp (mode, "orphan")) {
        //  A process that leaves the group and outlives us, then our
        //  verdict: both die at the final word, and the orphan's corpse
        //  goes to the test, which holds it.
        pid_t orphan = fork ();
        if (orphan == 0) {
            setsid ();
            for (;;)
                pause ();
        }
        printf ("orphan %d\n", (int) orphan);
        fflush (stdout);
        kf_eval_write_verdict (".", "correct", "all checks passed");
        for (;;)
            pause ();
    }
    return 2;
}

// --------------------------------------------------------------------------
//  The tests

static int
s_run (const char *mode, int channel, kf_subproc_limits_t *lim, kf_subproc_result_t *res)
{
    char *argv[] = { s_self, "--child", (char *) mode, NULL };
    lim->pass_fd = channel;
    return kf_subproc_run (argv, lim, res);
}

static bool
s_whole (void *arg)
{
    return kf_eval_channel_whole (*(int *) arg);
}

static void
s_listen (kf_subproc_limits_t *lim, int *channel)
{
    kf_subproc_limits_default (lim);
    lim->memory_bytes = 0;   //  AddressSanitizer's shadow
    lim->final_whole = s_whole;
    lim->final_arg = channel;
}

static uint64_t
s_read_mark (int channel, int which)
{
    uint64_t v = 0;
    if (pread (channel, &v, sizeof v, S_BEAT + 8 * which) != (ssize_t) sizeof v)
        return (uint64_t) -1;
    return v;
}

static const char *
s_verdict_in (int channel, char *buf, size_t size)
{
    json_t *r = kf_eval_channel_result (channel);
    snprintf (buf, size, "%s", r ? json_string_value (json_object_get (r, "verdict")) : "none");
    json_decref (r);
    return buf;
}

static void
s_test_slow_exit (void)
{
    printf ("  a whole verdict, then an exit of 3 s\n");
    int channel = kf_eval_channel_new ();
    CHECK (channel >= 0);
    CHECK (!kf_eval_channel_whole (channel) && kf_eval_channel_cpu (channel) == 0);
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    s_listen (&lim, &channel);
    char *dir = kf_subproc_workdir (&lim);
    double t0 = s_now ();
    CHECK (s_run ("slow-exit", channel, &lim, &res) == 0);
    double took = s_now () - t0;
    double stamps[KF_EVAL_T_N];
    kf_eval_channel_phase (channel, stamps);
    double after_verdict = s_now () - stamps[KF_EVAL_T_REPORTED];
    printf ("    returned %.3f s after the verdict (the run took %.3f s)\n", after_verdict, took);
    CHECK (stamps[KF_EVAL_T_REPORTED] > 0 && after_verdict < 1.0);
    CHECK (took < 3.0);
    CHECK (res.ended_final && res.exit_code == 0 && res.signal == 0 && !res.timed_out);
    char v[64];
    CHECK (!strcmp (s_verdict_in (channel, v, sizeof v), "correct"));
    CHECK (kf_eval_channel_cpu (channel) > 0);
    //  Nothing of the run beats on once it has returned: by the time it
    //  is reaped (waited for here), the heartbeat is where it was.
    uint64_t beat = s_read_mark (channel, 0);
    double r0 = s_now ();
    CHECK (kf_subproc_reap (true) == 0);
    printf ("    reaped %.3f s later; heartbeat %llu then, %llu now\n", s_now () - r0,
            (unsigned long long) beat, (unsigned long long) s_read_mark (channel, 0));
    CHECK (s_read_mark (channel, 0) == beat);
    CHECK (s_now () - r0 < 1.0);
    kf_subproc_result_free (&res);
    kf_subproc_rmtree (dir);
    free (dir);
    close (channel);
}

static void
s_test_early_word (void)
{
    printf ("  \"final\" with no verdict in the channel\n");
    int channel = kf_eval_channel_new ();
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    s_listen (&lim, &channel);
    char *dir = kf_subproc_workdir (&lim);
    CHECK (s_run ("early-word", channel, &lim, &res) == 0);
    //  Waited for to its end: its own exit code, its last mark.
    CHECK (!res.ended_final && res.exit_code == 7 && s_read_mark (channel, 1) == 1);
    CHECK (!kf_eval_channel_whole (channel));
    kf_subproc_result_free (&res);
    close (channel);

    //  And a verdict after such a word still ends the run at once.
    channel = kf_eval_channel_new ();
    double t0 = s_now ();
    CHECK (s_run ("early-then-verdict", channel, &lim, &res) == 0);
    char v[64];
    CHECK (res.ended_final && s_now () - t0 < 3.0);
    CHECK (!strcmp (s_verdict_in (channel, v, sizeof v), "incorrect"));
    kf_subproc_result_free (&res);
    kf_subproc_reap (true);
    close (channel);

    //  A run that does not listen: the child's word falls on no pipe.
    channel = kf_eval_channel_new ();
    lim.final_whole = NULL;
    t0 = s_now ();
    CHECK (s_run ("early-then-verdict", channel, &lim, &res) == 0);
    CHECK (!res.ended_final && res.exit_code == 0 && s_now () - t0 >= 3.0);
    printf ("    waited for: %.2f s of CPU\n", res.cpu_s);
    CHECK (res.cpu_s > 0.1);   //  spun for 3.2 s of wall time, on a shared machine
    CHECK (!strcmp (s_verdict_in (channel, v, sizeof v), "incorrect"));
    kf_subproc_result_free (&res);
    close (channel);
    kf_subproc_rmtree (dir);
    free (dir);
}

//  The second run of the uid test, on a thread of its own.
typedef struct {
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    int rc, done;
} s_second_t;

static void *
s_second_main (void *arg)
{
    s_second_t *s = arg;
    char *argv[] = { s_self, "--child", "alone", NULL };
    s->rc = kf_subproc_run (argv, &s->lim, &s->res);
    __atomic_store_n (&s->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void
s_child_uid_held (void)
{
    setenv ("KF_SANDBOX_UID_BASE", "2000100050", 1);
    setenv ("KF_SANDBOX_UID_COUNT", "1", 1);
    unsetenv ("KF_SANDBOX_USER");
    kf_sandbox_set_isolation (false);   //  so the runs see each other's uid
    prctl (PR_SET_CHILD_SUBREAPER, 1);
    int channel = kf_eval_channel_new ();
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    s_listen (&lim, &channel);
    CHECK (s_run ("orphan", channel, &lim, &res) == 0);
    CHECK (res.ended_final);
    uid_t uid = res.uid;
    int orphan = 0;
    const char *at = res.output ? strstr (res.output, "orphan ") : NULL;
    CHECK (at && sscanf (at, "orphan %d", &orphan) == 1 && orphan > 0);
    kf_subproc_result_free (&res);
    if (orphan <= 0)
        return;

    //  The orphan dies (SIGKILL to the run's uid) and comes to us as a
    //  zombie of that uid, which we hold.
    siginfo_t info;
    double until = s_now () + 10;
    for (;;) {
        memset (&info, 0, sizeof info);
        if (waitid (P_PID, (id_t) orphan, &info, WEXITED | WNOWAIT | WNOHANG) == 0
            && info.si_pid == orphan)
            break;
        if (s_now () > until)
            break;
        kf_subproc_reap (false);
        struct timespec pause = { 0, 1000 * 1000 };
        nanosleep (&pause, NULL);
    }
    CHECK (info.si_pid == orphan && info.si_code == CLD_KILLED);

    s_second_t second = { .rc = -2 };
    kf_subproc_limits_default (&second.lim);
    second.lim.memory_bytes = 0;
    pthread_t thread;
    pthread_create (&thread, NULL, s_second_main, &second);
    //  Not a proof of absence, a fair chance to go wrong: the pool's own
    //  passes and ours, while the uid's corpse is unreaped.
    for (int i = 0; i < 50 && !__atomic_load_n (&second.done, __ATOMIC_ACQUIRE); i++) {
        kf_subproc_reap (false);
        struct timespec pause = { 0, 10 * 1000 * 1000 };
        nanosleep (&pause, NULL);
    }
    CHECK (!__atomic_load_n (&second.done, __ATOMIC_ACQUIRE));
    waitpid (orphan, NULL, 0);
    pthread_join (thread, NULL);
    CHECK (second.rc == 0 && second.res.uid == uid && second.res.exit_code == 0);
    CHECK (second.res.output && strstr (second.res.output, "others 0"));
    if (second.res.output)
        printf ("    the uid's next run: %s", second.res.output);
    kf_subproc_result_free (&second.res);
    CHECK (kf_subproc_reap (true) == 0);
    close (channel);
}

static void
s_in_child (const char *what, void (*fn) (void))
{
    printf ("  %s\n", what);
    fflush (stdout);
    pid_t pid = fork ();
    if (pid == 0) {
        fn ();
        fflush (stdout);
        _exit (kf_test_failures ? 1 : 0);
    }
    int status = -1;
    waitpid (pid, &status, 0);
    CHECK (WIFEXITED (status) && WEXITSTATUS (status) == 0);
}

int
main (int argc, char **argv)
{
    if (argc == 3 && !strcmp (argv[1], "--child"))
        return s_child_main (argv[2]);
    ssize_t n = readlink ("/proc/self/exe", s_self, sizeof s_self - 1);
    if (n <= 0)
        return 2;
    s_self[n] = 0;
    if (geteuid () == 0) {
        //  The uid test first, in a child, before this process uses the
        //  pool: a range of its own, not test_subproc's or a worker's.
        s_in_child ("as root: an early-ended run's uid is not reused while "
                    "a process of it is left", s_child_uid_held);
        setenv ("KF_SANDBOX_UID_BASE", "2000100040", 1);
        setenv ("KF_SANDBOX_UID_COUNT", "4", 1);
        unsetenv ("KF_SANDBOX_USER");
    }
    s_test_slow_exit ();
    s_test_early_word ();
    return kf_test_done ("test_subproc_final");
}
