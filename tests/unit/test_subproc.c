/*  test_subproc.c - the sandbox: exit codes and signals come back, a hang
 *  is killed on time, output is capped and the rest counted, a fork bomb
 *  ends (as root this proves the drop to the sandbox user, since root
 *  ignores RLIMIT_NPROC), and the private directory belongs to that user. */
#include "kf_subproc.h"
#include "../kf_test.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int
s_run_sh (const char *script, kf_subproc_limits_t *limits, kf_subproc_result_t *res)
{
    char *argv[] = { "sh", "-c", (char *) script, NULL };
    return kf_subproc_run (argv, limits, res);
}

int
main (void)
{
    kf_subproc_limits_t lim;
    kf_subproc_result_t res;
    kf_subproc_limits_default (&lim);
    if (geteuid () == 0)
        CHECK (lim.drop_privileges && lim.uid != 0);

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

    //  Runs as the sandbox user.
    if (lim.drop_privileges) {
        CHECK (s_run_sh ("id -u", &lim, &res) == 0);
        CHECK (atoi (res.output) == (int) lim.uid);
        kf_subproc_result_free (&res);
    }

    //  Wall-clock limit.
    lim.time_limit_s = 0.3;
    char *sleeper[] = { "sleep", "10", NULL };
    CHECK (kf_subproc_run (sleeper, &lim, &res) == 0);
    CHECK (res.timed_out);
    CHECK (res.signal == SIGKILL);
    CHECK (res.wall_s >= 0.29 && res.wall_s < 2.0);
    kf_subproc_result_free (&res);

    //  A background child holding the pipe does not stall us after the
    //  leader exits: the group is killed.
    lim.time_limit_s = 5;
    CHECK (s_run_sh ("sleep 10 & echo started", &lim, &res) == 0);
    CHECK (!res.timed_out && res.exit_code == 0 && res.wall_s < 2.0);
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

    //  Fork bomb: must end, by the process limit or the clock.
    //  Small budget: the sandbox user's process count is shared with any
    //  other sandboxed job running on this host at the same time.
    lim.time_limit_s = 1.5;
    lim.max_procs = 16;
    CHECK (s_run_sh ("b() { b | b & }; b; sleep 30", &lim, &res) == 0);
    CHECK (res.wall_s < 3.5);
    kf_subproc_result_free (&res);
    //  And the host can still start processes afterwards.
    CHECK (s_run_sh ("exit 0", &lim, &res) == 0 && res.exit_code == 0);
    kf_subproc_result_free (&res);

    //  Private directory, owned by the sandbox user, writable by the
    //  child, removed with its contents.
    kf_subproc_limits_default (&lim);
    char *dir = kf_subproc_mkdtemp (&lim);
    CHECK (dir != NULL);
    if (dir) {
        struct stat st;
        CHECK (stat (dir, &st) == 0 && S_ISDIR (st.st_mode));
        CHECK ((st.st_mode & 077) == 0);
        if (lim.drop_privileges)
            CHECK (st.st_uid == lim.uid);
        lim.workdir = dir;
        CHECK (s_run_sh ("mkdir sub && echo x > sub/f && pwd && echo $TMPDIR", &lim, &res) == 0);
        CHECK (res.exit_code == 0);
        CHECK (strstr (res.output, dir) != NULL);
        kf_subproc_result_free (&res);
        kf_subproc_rmtree (dir);
        CHECK (access (dir, F_OK) != 0);
        free (dir);
    }
    return kf_test_done ("test_subproc");
}
