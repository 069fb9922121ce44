/*  test_confine - common/kf_confine.c: what a confined process may still do.
 *
 *  Each check runs in a child that confines itself and reports, through
 *  its exit code, whether the operation was refused; the parent checks it.
 *  Without the confinement every refused operation below succeeds.
 */
#include "../../common/kf_confine.h"
#include "../kf_test.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static char s_dir[256];
static char s_secret[300];

static void *
s_thread (void *arg)
{
    return arg;
}

enum { S_FORK, S_EXEC, S_KILL_PARENT, S_SOCKET, S_THREAD, S_OWN_DIR, S_SECRET, S_SYSTEM_LIB,
       S_SETSID, S_N };
static const char *const s_names[] = { "fork", "exec", "kill the parent", "socket", "thread",
                                       "write its own directory", "read a file outside",
                                       "read the C library", "setsid" };

//  0: the operation worked; 1: it was refused; 2: confinement failed.
static int
s_try (int what)
{
    char report[240];
    const char *dirs[] = { s_dir, NULL };
    if (kf_confine_self (NULL, dirs, report, sizeof report) != 0)
        return 2;
    switch (what) {
    case S_FORK: {
        pid_t pid = fork ();
        if (pid == 0)
            _exit (0);
        if (pid > 0)
            waitpid (pid, NULL, 0);
        return pid < 0;
    }
    case S_EXEC: {
        char *argv[] = { "/bin/true", NULL };
        execv ("/bin/true", argv);
        return 1;
    }
    case S_KILL_PARENT:
        return kill (getppid (), 0) != 0;
    case S_SOCKET: {
        int fd = socket (AF_INET, SOCK_STREAM, 0);
        if (fd >= 0)
            close (fd);
        return fd < 0;
    }
    case S_THREAD: {
        pthread_t t;
        if (pthread_create (&t, NULL, s_thread, NULL) != 0)
            return 1;
        pthread_join (t, NULL);
        return 0;
    }
    case S_OWN_DIR: {
        char path[400];
        snprintf (path, sizeof path, "%s/out", s_dir);
        int fd = open (path, O_WRONLY | O_CREAT, 0600);
        if (fd >= 0)
            close (fd);
        return fd < 0;
    }
    case S_SECRET: {
        int fd = open (s_secret, O_RDONLY);
        if (fd >= 0)
            close (fd);
        return fd < 0;
    }
    case S_SYSTEM_LIB:
        return access ("/usr/lib", R_OK) != 0 && access ("/lib", R_OK) != 0;
    case S_SETSID:
        return setsid () < 0;
    }
    return 2;
}

static int
s_run (int what)
{
    fflush (stdout);
    pid_t pid = fork ();
    if (pid == 0)
        _exit (s_try (what));
    int status = 0;
    waitpid (pid, &status, 0);
    return WIFEXITED (status) ? WEXITSTATUS (status) : 3;
}

int
main (void)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/kf-confine-XXXXXX");
    char outside[] = "/tmp/kf-confine-outside-XXXXXX";
    CHECK (mkdtemp (s_dir) != NULL);
    CHECK (mkdtemp (outside) != NULL);
    snprintf (s_secret, sizeof s_secret, "%s/secret", outside);
    FILE *f = fopen (s_secret, "w");
    CHECK (f != NULL);
    if (f) {
        fputs ("a worker's key\n", f);
        fclose (f);
    }
    int landlock = kf_confine_landlock_abi ();
    printf ("landlock abi %d\n", landlock);

    //  Refused always (seccomp).
    int refused[] = { S_FORK, S_EXEC, S_KILL_PARENT, S_SOCKET, S_SETSID };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        int r = s_run (refused[i]);
        printf ("  %-26s %s\n", s_names[refused[i]], r == 1 ? "refused" : r == 0 ? "WORKED" : "error");
        CHECK (r == 1);
    }
    //  Allowed: threads, its own directory, the system's libraries.
    int allowed[] = { S_THREAD, S_OWN_DIR, S_SYSTEM_LIB };
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
        int r = s_run (allowed[i]);
        printf ("  %-26s %s\n", s_names[allowed[i]], r == 0 ? "worked" : "REFUSED");
        CHECK (r == 0);
    }
    //  A file of the same uid outside its directory: refused where the
    //  kernel has Landlock (the point of it), readable where it has none.
    int r = s_run (S_SECRET);
    printf ("  %-26s %s\n", s_names[S_SECRET], r == 1 ? "refused" : r == 0 ? "worked" : "error");
    CHECK (landlock > 0 ? r == 1 : r == 0);

    unlink (s_secret);
    rmdir (outside);
    char path[400];
    snprintf (path, sizeof path, "%s/out", s_dir);
    unlink (path);
    rmdir (s_dir);
    return kf_test_done ("test_confine");
}
