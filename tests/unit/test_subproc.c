/*  test_subproc.c - the sandbox: exit codes and signals come back, a hang
 *  is killed on time, output is capped and the rest counted, a fork bomb
 *  ends, and the private directory works across runs.
 *
 *  As root (the case that matters), the uid pool: concurrent runs get
 *  different uids, a run waits while all are taken, uids come back; a
 *  fork bomb in one run does not stop a concurrent run from forking and
 *  exec'ing (each uid has its own RLIMIT_NPROC budget); a child that
 *  escapes its process group (setsid, double fork) is dead once the run
 *  returns (as any user: the run's PID namespace ends with it); the
 *  working directory belongs to the run's uid only while
 *  the run lasts, a hard link to a file outside it is never handed over,
 *  and set-uid bits do not survive. The configuration (defaults, a bad
 *  value, KF_SANDBOX_USER) and the behaviour when not root are tried in
 *  forked children, before this process first uses the pool. */
#include "kf_subproc.h"
#include "../kf_test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define S_TEST_BASE  2000100000u
#define S_TEST_COUNT 4

static int
s_run_sh (const char *script, kf_subproc_limits_t *limits, kf_subproc_result_t *res)
{
    char *argv[] = { "sh", "-c", (char *) script, NULL };
    return kf_subproc_run (argv, limits, res);
}

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

//  One run on a thread of its own.
typedef struct {
    const char *script;
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    int rc;
    int done;                //  set (atomically) when the run has returned
    pthread_t thread;
} s_job_t;

static void *
s_job_main (void *arg)
{
    s_job_t *job = arg;
    job->rc = s_run_sh (job->script, &job->lim, &job->res);
    __atomic_store_n (&job->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static bool
s_job_done (s_job_t *job)
{
    return __atomic_load_n (&job->done, __ATOMIC_ACQUIRE) != 0;
}

static void
s_job_go (s_job_t *job)
{
    job->rc = -2;
    job->done = 0;
    pthread_create (&job->thread, NULL, s_job_main, job);
}

static void
s_job_start (s_job_t *job, const char *script)
{
    job->script = script;
    kf_subproc_limits_default (&job->lim);
    s_job_go (job);
}

//  The state letter of PID ('S', 'Z', ...), or 0 when it is gone.
static char
s_state (long pid)
{
    char path[64], buf[512];
    snprintf (path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open (path, O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = read (fd, buf, sizeof buf - 1);
    close (fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *paren = strrchr (buf, ')');
    return paren && paren[1] == ' ' ? paren[2] : '?';
}

//  How many processes of UID are running (zombies are dead).
//  Processes whose real uid is UID: the live ones, or with ZOMBIES also
//  the dead that wait for their parent (init) to reap them.
static int
s_procs_of (uid_t uid, bool zombies)
{
    DIR *proc = opendir ("/proc");
    int live = 0;
    struct dirent *e;
    while (proc && (e = readdir (proc)) != NULL) {
        char path[300], buf[2048];
        snprintf (path, sizeof path, "/proc/%s/status", e->d_name);
        int fd = e->d_name[0] >= '1' && e->d_name[0] <= '9' ? open (path, O_RDONLY) : -1;
        if (fd < 0)
            continue;
        ssize_t n = read (fd, buf, sizeof buf - 1);
        close (fd);
        buf[n > 0 ? n : 0] = 0;
        const char *state = strstr (buf, "\nState:\t");
        const char *ids = strstr (buf, "\nUid:\t");
        unsigned long real;
        if (state && ids && sscanf (ids, "\nUid:\t%lu", &real) == 1 && real == uid
            && (zombies || (state[8] != 'Z' && state[8] != 'X')))
            live++;
    }
    if (proc)
        closedir (proc);
    return live;
}

static int
s_live_of (uid_t uid)
{
    return s_procs_of (uid, false);
}

static bool
s_in_test_pool (uid_t uid)
{
    return uid >= S_TEST_BASE && uid < S_TEST_BASE + S_TEST_COUNT;
}

//  Exit code, output, signals, the clock, the output cap, a missing
//  program, a fork bomb, the private directory.
static void
s_test_basics (void)
{
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    kf_subproc_limits_default (&lim);
    CHECK (lim.drop_privileges == (geteuid () == 0));

    //  Exit code and captured output, stderr merged.
    CHECK (s_run_sh ("echo hello; echo oops >&2; exit 3", &lim, &res) == 0);
    CHECK (res.started && !res.timed_out);
    CHECK (res.exit_code == 3 && res.signal == 0);
    CHECK (strstr (res.output, "hello") && strstr (res.output, "oops"));
    CHECK (!res.output_truncated);
    kf_subproc_result_free (&res);

    //  Death by signal.
    CHECK (s_run_sh ("kill -SEGV $$", &lim, &res) == 0);
    CHECK (res.exit_code == -1 && res.signal == SIGSEGV);
    kf_subproc_result_free (&res);

    //  Runs as the uid it reports: as root one of the pool, else ours.
    CHECK (s_run_sh ("id -u; id -g", &lim, &res) == 0);
    unsigned long uid = 0, gid = 0;
    CHECK (sscanf (res.output, "%lu %lu", &uid, &gid) == 2 && uid == res.uid);
    if (geteuid () == 0)
        CHECK (s_in_test_pool (res.uid) && gid == uid);
    else
        CHECK (res.uid == geteuid ());
    kf_subproc_result_free (&res);
    //  A pool uid has no passwd entry: USER and LOGNAME name it, so
    //  "who am I" lookups (Python's getpass, torch.compile's cache path)
    //  do not fail.
    if (geteuid () == 0) {
        CHECK (s_run_sh ("echo \"$USER $LOGNAME\"", &lim, &res) == 0);
        char want[64];
        snprintf (want, sizeof want, "kf-sandbox-%lu kf-sandbox-%lu\n",
                  (unsigned long) res.uid, (unsigned long) res.uid);
        CHECK (!strcmp (res.output, want));
        kf_subproc_result_free (&res);
    }

    //  Wall-clock limit: killed at it, never before. The sleep is far
    //  longer than any delay a busy machine adds to the kill, so a run
    //  that was not killed shows (it would take 300 s).
    lim.time_limit_s = 0.3;
    char *sleeper[] = { "sleep", "300", NULL };
    CHECK (kf_subproc_run (sleeper, &lim, &res) == 0);
    CHECK (res.timed_out);
    CHECK (res.signal == SIGKILL);
    CHECK (res.wall_s >= 0.29 && res.wall_s < 60);
    kf_subproc_result_free (&res);

    //  A background child holding the pipe does not stall us after the
    //  leader exits: the group is killed. Stalled, the run would last
    //  until its limit and time out; the limit is generous to the honest
    //  work (a shell and an echo).
    lim.time_limit_s = 60;
    CHECK (s_run_sh ("sleep 300 & echo started", &lim, &res) == 0);
    CHECK (!res.timed_out && res.exit_code == 0 && res.wall_s < 60);
    CHECK (res.output && !strcmp (res.output, "started\n"));
    kf_subproc_result_free (&res);

    //  Output cap: 100000 bytes produced, 1000 kept.
    lim.output_cap = 1000;
    CHECK (s_run_sh ("head -c 100000 /dev/zero | tr '\\0' x", &lim, &res) == 0);
    CHECK (res.output_len == 1000 && res.output_truncated);
    CHECK (strlen (res.output) == 1000);
    kf_subproc_result_free (&res);
    lim.output_cap = 64 * 1024;

    //  A program that does not exist cannot be started.
    char *missing[] = { "kf-no-such-program", NULL };
    CHECK (kf_subproc_run (missing, &lim, &res) == -1);
    CHECK (res.output == NULL);

    //  Fork bomb: must end, by the process limit or the clock, and with
    //  it everything it started: the run returns long before the script's
    //  own sleep of 300 s would have ended it (the bound leaves a busy
    //  machine a minute to kill the bomb).
    lim.time_limit_s = 1.5;
    lim.max_procs = 16;
    CHECK (s_run_sh ("b() { b | b & }; b; sleep 300", &lim, &res) == 0);
    CHECK (res.wall_s < 60);
    kf_subproc_result_free (&res);
    //  And the host can still start processes afterwards.
    CHECK (s_run_sh ("exit 0", &lim, &res) == 0 && res.exit_code == 0);
    kf_subproc_result_free (&res);

    //  Private directory, the caller's, writable by the child, removed
    //  with its contents.
    kf_subproc_limits_default (&lim);
    char *dir = kf_subproc_mkdtemp (&lim);
    CHECK (dir != NULL);
    if (dir) {
        struct stat st;
        CHECK (stat (dir, &st) == 0 && S_ISDIR (st.st_mode));
        CHECK ((st.st_mode & 077) == 0 && st.st_uid == geteuid ());
        lim.workdir = dir;
        CHECK (s_run_sh ("mkdir sub && echo x > sub/f && pwd && echo $TMPDIR", &lim, &res) == 0);
        CHECK (res.exit_code == 0);
        CHECK (strstr (res.output, dir) != NULL);
        kf_subproc_result_free (&res);
        kf_subproc_rmtree (dir);
        CHECK (access (dir, F_OK) != 0);
        free (dir);
    }
}

//  Root: concurrent runs, a run that has to wait, uids that come back.
static void
s_test_pool (void)
{
    uid_t base = 0;
    int size = 0;
    CHECK (kf_subproc_uid_pool (&base, &size) == 0);
    CHECK (base == S_TEST_BASE && size == S_TEST_COUNT);

    //  Two at once: two uids.
    s_job_t two[2];
    for (int i = 0; i < 2; i++)
        s_job_start (&two[i], "sleep 0.5; id -u");
    unsigned long seen[2] = { 0, 0 };
    for (int i = 0; i < 2; i++) {
        pthread_join (two[i].thread, NULL);
        CHECK (two[i].rc == 0 && two[i].res.exit_code == 0);
        CHECK (two[i].res.output && sscanf (two[i].res.output, "%lu", &seen[i]) == 1);
        CHECK (seen[i] == two[i].res.uid && s_in_test_pool (two[i].res.uid));
        kf_subproc_result_free (&two[i].res);
    }
    printf ("  concurrent runs as %lu and %lu\n", seen[0], seen[1]);
    CHECK (seen[0] != seen[1]);

    //  Six at once on four uids: two wait for a uid, then run.
    s_job_t six[6];
    double start = s_now ();
    for (int i = 0; i < 6; i++)
        s_job_start (&six[i], "sleep 0.4; id -u");
    for (int i = 0; i < 6; i++) {
        pthread_join (six[i].thread, NULL);
        unsigned long uid = 0;
        CHECK (six[i].rc == 0 && six[i].res.exit_code == 0);
        CHECK (six[i].res.output && sscanf (six[i].res.output, "%lu", &uid) == 1
               && uid == six[i].res.uid && s_in_test_pool (uid));
        kf_subproc_result_free (&six[i].res);
    }
    double took = s_now () - start;
    printf ("  six runs on four uids: %.2f s\n", took);
    CHECK (took >= 0.75);

    //  One after another: the uids come back.
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    kf_subproc_limits_default (&lim);
    int uses[S_TEST_COUNT] = { 0 };
    for (int i = 0; i < 3 * S_TEST_COUNT; i++) {
        CHECK (s_run_sh ("id -u", &lim, &res) == 0 && res.exit_code == 0);
        CHECK (s_in_test_pool (res.uid) && (unsigned long) atol (res.output) == res.uid);
        if (s_in_test_pool (res.uid))
            uses[res.uid - S_TEST_BASE]++;
        kf_subproc_result_free (&res);
    }
    int most = 0;
    for (int i = 0; i < S_TEST_COUNT; i++)
        most = uses[i] > most ? uses[i] : most;
    CHECK (most >= 3);
}

//  Root: a fork bomb that holds its uid's whole process budget does not
//  stop another run from forking and exec'ing. With one shared sandbox
//  user the neighbour's exec failed with EAGAIN until the bomb's time ran
//  out (kf_subproc_run retried, so it was slow rather than failed: the
//  clock here is the caller's, not the run's own wall_s).
static void
s_test_bomb_next_door (void)
{
    //  Forks until the budget is spent and keeps it spent: the loop's
    //  subshell ends at the first failed fork, its sleeps stay. Its time
    //  limit is far beyond what its neighbours need; the test ends it.
    s_job_t bomb = { .script = "(while :; do sleep 300 & done) 2>/dev/null; exec sleep 300" };
    kf_subproc_limits_default (&bomb.lim);
    bomb.lim.time_limit_s = 120;
    s_job_go (&bomb);
    //  Wait until one uid of the pool holds (nearly) its whole budget:
    //  the state the neighbours must run beside, however long a busy
    //  machine takes to fork it.
    uid_t bomb_uid = 0;
    int most = 0;
    double deadline = s_now () + 60;
    while (!bomb_uid && !s_job_done (&bomb) && s_now () < deadline) {
        for (unsigned k = 0; k < S_TEST_COUNT; k++) {
            int live = s_live_of (S_TEST_BASE + k);
            most = live > most ? live : most;
            if (live >= bomb.lim.max_procs - 4)
                bomb_uid = S_TEST_BASE + k;
        }
        struct timespec pause = { 0, 20 * 1000 * 1000 };
        nanosleep (&pause, NULL);
    }
    printf ("  fork bomb as %u holds %d processes\n", (unsigned) bomb_uid, most);
    CHECK (bomb_uid != 0);

    //  The neighbours: each runs at once, not when the bomb's time is up
    //  (with a shared uid, exec failed with EAGAIN until then): all five
    //  are done while the bomb still runs.
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    kf_subproc_limits_default (&lim);
    for (int i = 0; i < 5; i++) {
        double start = s_now ();
        CHECK (s_run_sh ("/bin/echo one; /bin/echo two", &lim, &res) == 0);
        double took = s_now () - start;
        CHECK (res.exit_code == 0 && res.output && strstr (res.output, "one\ntwo"));
        CHECK (res.uid != bomb_uid);
        if (res.exit_code != 0)
            fprintf (stderr, "  next to the bomb: exit %d after %.2f s: %s\n",
                     res.exit_code, took, res.output ? res.output : "");
        kf_subproc_result_free (&res);
    }
    CHECK (!s_job_done (&bomb));
    CHECK (bomb_uid == 0 || s_live_of (bomb_uid) >= bomb.lim.max_procs - 4);

    //  End the bomb: every process of its uid killed until the run
    //  returns (its leader gone); then nothing of that uid is left.
    deadline = s_now () + 60;
    while (bomb_uid && !s_job_done (&bomb) && s_now () < deadline) {
        DIR *proc = opendir ("/proc");
        struct dirent *e;
        while (proc && (e = readdir (proc)) != NULL) {
            char path[300];
            struct stat st;
            snprintf (path, sizeof path, "/proc/%s", e->d_name);
            if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && stat (path, &st) == 0
                && st.st_uid == bomb_uid)
                kill ((pid_t) atol (e->d_name), SIGKILL);
        }
        if (proc)
            closedir (proc);
        struct timespec pause = { 0, 50 * 1000 * 1000 };
        nanosleep (&pause, NULL);
    }
    pthread_join (bomb.thread, NULL);
    CHECK (bomb.rc == 0 && bomb.res.uid == bomb_uid);
    printf ("  fork bomb as %u, its neighbours ran beside it\n", (unsigned) bomb.res.uid);
    CHECK (s_live_of (bomb.res.uid) == 0);
    kf_subproc_result_free (&bomb.res);
}

//  Live processes of the host whose arguments include ARG exactly (pids
//  printed inside a run are its PID namespace's, not the host's).
static int
s_running_with (const char *arg)
{
    DIR *proc = opendir ("/proc");
    int found = 0;
    struct dirent *e;
    while (proc && (e = readdir (proc)) != NULL) {
        char path[300], buf[4096];
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf (path, sizeof path, "/proc/%s/cmdline", e->d_name);
        int fd = open (path, O_RDONLY);
        ssize_t n = fd >= 0 ? read (fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0)
            close (fd);
        if (n <= 0)
            continue;
        buf[n] = 0;
        for (char *a = buf; a < buf + n; a += strlen (a) + 1)
            if (!strcmp (a, arg) && s_state (atol (e->d_name)) != 'Z') {
                found++;
                break;
            }
    }
    if (proc)
        closedir (proc);
    return found;
}

//  What escapes the process group dies with the run all the same (as
//  root, also the uid's processes are emptied; either way the run's PID
//  namespace ends with it).
static void
s_test_escape (void)
{
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    kf_subproc_limits_default (&lim);
    char *dir = kf_subproc_mkdtemp (&lim);
    CHECK (dir != NULL);
    if (!dir)
        return;
    lim.workdir = dir;
    //  The run waits until the double-forked one has written its pid
    //  (however long a busy machine takes), within a generous limit.
    lim.time_limit_s = 60;
    CHECK (s_run_sh ("setsid sleep 100.0417 </dev/null >/dev/null 2>&1 & echo $!;"
                     " (setsid sh -c 'sleep 100.0417 & echo $! > esc.tmp; mv esc.tmp esc; wait'"
                     " </dev/null >/dev/null 2>&1 &);"
                     " while [ ! -s esc ]; do sleep 0.05; done; cat esc", &lim, &res) == 0);
    CHECK (!res.timed_out);
    long first = 0, second = 0;
    CHECK (res.exit_code == 0 && sscanf (res.output, "%ld %ld", &first, &second) == 2);
    int left = s_running_with ("100.0417");
    printf ("  escaped %ld and %ld: %d of them running after the run\n", first, second, left);
    CHECK (left == 0);
    if (geteuid () == 0)
        CHECK (s_live_of (res.uid) == 0);
    kf_subproc_result_free (&res);
    kf_subproc_rmtree (dir);
    free (dir);
}

//  Root: the working directory across runs under different uids.
static void
s_test_workdir (void)
{
    //  A uid that still has processes, even dead ones init has not reaped
    //  yet (the earlier tests' escapes and bombs), is skipped by the pool
    //  until it is empty; then two runs in a row could get the one uid
    //  left. Wait until the pool's uids are empty (up to a minute; init
    //  reaps in its own time), so the round robin gives the second run
    //  another uid.
    int left = 0;
    for (int k = 0; k < 600; k++) {
        left = 0;
        for (unsigned u = 0; u < S_TEST_COUNT; u++)
            left += s_procs_of (S_TEST_BASE + u, true);
        if (left == 0)
            break;
        struct timespec pause = { 0, 100 * 1000 * 1000 };
        nanosleep (&pause, NULL);
    }
    if (left)
        fprintf (stderr, "  %d processes of the pool's uids still there\n", left);
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    kf_subproc_limits_default (&lim);
    char *dir = kf_subproc_mkdtemp (&lim);
    char *outside = kf_subproc_mkdtemp (&lim);
    CHECK (dir && outside);
    if (!dir || !outside)
        return;
    char path[4200], target[4200];
    snprintf (target, sizeof target, "%s/root-file", outside);
    FILE *f = fopen (target, "w");
    if (f) {
        fputs ("root's\n", f);
        fclose (f);
    }
    chmod (target, 0644);
    snprintf (path, sizeof path, "%s/linked", dir);
    CHECK (link (target, path) == 0);
    lim.workdir = dir;

    //  The first run writes, sets a set-uid bit and opens the directory up.
    CHECK (s_run_sh ("echo one > out && mkdir sub && echo x > sub/f && chmod 4755 out"
                     " && chmod 777 . sub", &lim, &res) == 0);
    CHECK (res.exit_code == 0);
    uid_t first = res.uid;
    kf_subproc_result_free (&res);
    //  Between runs all of it is the worker's again, private, no set-uid.
    struct stat st;
    CHECK (stat (dir, &st) == 0 && st.st_uid == geteuid () && (st.st_mode & 07777) == 0700);
    snprintf (path, sizeof path, "%s/out", dir);
    CHECK (stat (path, &st) == 0 && st.st_uid == geteuid () && !(st.st_mode & S_ISUID));
    snprintf (path, sizeof path, "%s/sub", dir);
    CHECK (stat (path, &st) == 0 && st.st_uid == geteuid () && !(st.st_mode & S_IWOTH));
    snprintf (path, sizeof path, "%s/sub/f", dir);
    CHECK (stat (path, &st) == 0 && st.st_uid == geteuid ());

    //  The second run, another uid, reads, appends, overwrites, removes.
    CHECK (s_run_sh ("cat out && echo two >> out && echo y > sub/f && rm sub/f"
                     " && echo z > sub/g", &lim, &res) == 0);
    CHECK (res.exit_code == 0 && strstr (res.output, "one"));
    CHECK (res.uid != first);
    kf_subproc_result_free (&res);
    snprintf (path, sizeof path, "%s/out", dir);
    f = fopen (path, "r");
    char text[64] = "";
    if (f) {
        size_t n = fread (text, 1, sizeof text - 1, f);
        text[n] = 0;
        fclose (f);
    }
    CHECK (!strcmp (text, "one\ntwo\n"));

    //  A hard link to a file outside is never handed to a run.
    CHECK (s_run_sh ("echo theirs > linked", &lim, &res) == 0);
    CHECK (res.exit_code != 0);
    kf_subproc_result_free (&res);
    CHECK (stat (target, &st) == 0 && st.st_uid == geteuid ());
    f = fopen (target, "r");
    text[0] = 0;
    if (f) {
        size_t n = fread (text, 1, sizeof text - 1, f);
        text[n] = 0;
        fclose (f);
    }
    CHECK (!strcmp (text, "root's\n"));
    kf_subproc_rmtree (dir);
    kf_subproc_rmtree (outside);
    free (dir);
    free (outside);

    //  A directory that is not private is not handed over at all.
    char shared[] = "/tmp/kf-shared-XXXXXX";
    CHECK (mkdtemp (shared) != NULL);
    chmod (shared, 0755);
    lim.workdir = shared;
    CHECK (s_run_sh ("touch x", &lim, &res) == 0 && res.exit_code != 0);
    kf_subproc_result_free (&res);
    CHECK (stat (shared, &st) == 0 && st.st_uid == geteuid () && (st.st_mode & 0777) == 0755);
    kf_subproc_rmtree (shared);
}

//  Runs FN in a forked child (this process has not used the pool yet, so
//  the child reads the configuration afresh) and checks it passed.
static void
s_in_child (const char *what, void (*fn) (void))
{
    fflush (stdout);
    pid_t pid = fork ();
    if (pid == 0) {
        fn ();
        fflush (stdout);
        //  _exit: no leak check in a child that may have changed uid.
        _exit (kf_test_failures ? 1 : 0);
    }
    int status = -1;
    waitpid (pid, &status, 0);
    if (!(WIFEXITED (status) && WEXITSTATUS (status) == 0))
        fprintf (stderr, "test_subproc: the child for %s failed\n", what);
    CHECK (WIFEXITED (status) && WEXITSTATUS (status) == 0);
}

static void
s_child_defaults (void)
{
    unsetenv ("KF_SANDBOX_UID_BASE");
    unsetenv ("KF_SANDBOX_UID_COUNT");
    unsetenv ("KF_SANDBOX_USER");
    uid_t base = 0;
    int size = 0;
    CHECK (kf_subproc_uid_pool (&base, &size) == 0);
    CHECK (base == 2000000000u && size == 64);
}

static void
s_child_bad_base (void)
{
    setenv ("KF_SANDBOX_UID_BASE", "4294967290", 1);   //  + 64 passes the last uid
    unsetenv ("KF_SANDBOX_USER");
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    kf_subproc_limits_default (&lim);
    errno = 0;
    CHECK (s_run_sh ("exit 0", &lim, &res) == -1 && errno == EINVAL);
    CHECK (res.output == NULL);
    uid_t base;
    int size;
    CHECK (kf_subproc_uid_pool (&base, &size) == -1 && errno == EINVAL);
}

//  KF_SANDBOX_USER: one named account for every run, as before the pool.
static void
s_child_named_user (void)
{
    setenv ("KF_SANDBOX_USER", "nobody", 1);
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    kf_subproc_limits_default (&lim);
    CHECK (lim.drop_privileges && lim.uid == 65534);
    uid_t base;
    int size;
    CHECK (kf_subproc_uid_pool (&base, &size) == -1);
    char *dir = kf_subproc_mkdtemp (&lim);
    CHECK (dir != NULL);
    lim.workdir = dir;
    CHECK (s_run_sh ("id -u > who && cat who", &lim, &res) == 0);
    CHECK (res.exit_code == 0 && atoi (res.output) == 65534 && res.uid == 65534);
    kf_subproc_result_free (&res);
    struct stat st;
    CHECK (dir && stat (dir, &st) == 0 && st.st_uid == 0);
    kf_subproc_rmtree (dir);
    free (dir);
}

//  Not root: no uid change, no pool, the directory the caller's.
static void
s_child_not_root (void)
{
    setenv ("TMPDIR", "/tmp", 1);
    if (setgroups (0, NULL) != 0 || setgid (65534) != 0 || setuid (65534) != 0) {
        CHECK (!"cannot become nobody");
        return;
    }
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    kf_subproc_limits_default (&lim);
    CHECK (!lim.drop_privileges && lim.uid == 0);
    uid_t base;
    int size;
    CHECK (kf_subproc_uid_pool (&base, &size) == -1);
    char *dir = kf_subproc_mkdtemp (&lim);
    CHECK (dir != NULL);
    struct stat st;
    CHECK (dir && stat (dir, &st) == 0 && st.st_uid == 65534 && (st.st_mode & 077) == 0);
    lim.workdir = dir;
    CHECK (s_run_sh ("id -u; setsid sleep 0.1 & echo x > f", &lim, &res) == 0);
    CHECK (res.exit_code == 0 && atoi (res.output) == 65534 && res.uid == 65534);
    kf_subproc_result_free (&res);
    char path[4200];
    snprintf (path, sizeof path, "%s/f", dir ? dir : "");
    CHECK (stat (path, &st) == 0 && st.st_uid == 65534);
    kf_subproc_rmtree (dir);
    free (dir);
}

//  A sandboxed child gets an allow-list of the environment: no key, token
//  or database URL of the worker's; the tools' own settings pass. A
//  trusted program of the operator's (keep_env) gets all of it.
static void
s_test_env (void)
{
    printf ("  the environment\n");
    setenv ("OPENAI_API_KEY", "sk-canary-7391", 1);
    setenv ("KF_DATABASE_URL", "postgresql://kf:canary-7391@db/kf", 1);
    setenv ("OMP_NUM_THREADS", "3", 1);
    kf_subproc_limits_t lim;
    kf_subproc_limits_default (&lim);
    kf_subproc_result_t res;
    CHECK (s_run_sh ("env", &lim, &res) == 0);
    CHECK (res.output && !strstr (res.output, "canary-7391"));
    CHECK (res.output && strstr (res.output, "OMP_NUM_THREADS=3"));
    CHECK (res.output && strstr (res.output, "PATH="));
    kf_subproc_result_free (&res);
    lim.keep_env = true;
    CHECK (s_run_sh ("env", &lim, &res) == 0);
    CHECK (res.output && strstr (res.output, "OPENAI_API_KEY=sk-canary-7391"));
    kf_subproc_result_free (&res);
    CHECK (kf_subproc_env_kept ("LD_LIBRARY_PATH=/x") && kf_subproc_env_kept ("CUDA_VISIBLE_DEVICES=0")
           && !kf_subproc_env_kept ("ANTHROPIC_API_KEY=x") && !kf_subproc_env_kept ("KF_CURVE_CERT=/k"));
    unsetenv ("OPENAI_API_KEY");
    unsetenv ("KF_DATABASE_URL");
    unsetenv ("OMP_NUM_THREADS");
}

int
main (void)
{
    if (geteuid () == 0) {
        s_in_child ("the defaults", s_child_defaults);
        s_in_child ("a bad KF_SANDBOX_UID_BASE", s_child_bad_base);
        s_in_child ("KF_SANDBOX_USER", s_child_named_user);
        s_in_child ("a worker that is not root", s_child_not_root);
        //  A pool of our own: four uids, not the default range, so that
        //  this test neither waits for nor is mistaken for a worker's.
        setenv ("KF_SANDBOX_UID_BASE", "2000100000", 1);
        setenv ("KF_SANDBOX_UID_COUNT", "4", 1);
        unsetenv ("KF_SANDBOX_USER");
    }
    s_test_basics ();
    s_test_env ();
    s_test_escape ();
    if (geteuid () == 0) {
        s_test_pool ();
        s_test_bomb_next_door ();
        s_test_workdir ();
    }
    else
        printf ("  not root: the uid pool is not tried\n");
    return kf_test_done ("test_subproc");
}
