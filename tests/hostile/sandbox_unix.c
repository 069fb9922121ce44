/*  Hostile, connecting to a Unix socket bound to a path (issue 13, item 3;
 *  a network namespace stops TCP and abstract sockets only): the path the
 *  test passes, where a PostgreSQL or a ZeroMQ ipc:// endpoint would be.
 *  Caught when the test's listener heard nothing.
 *  It runs where code of a candidate's runs unconfined by the runner: in the
 *  evaluation child, as a CUDA or Level Zero candidate does (loaded into
 *  the judge; its constructors run at dlopen), or as a compiler does. The
 *  host backend's candidates run one process further in, under the
 *  runner's seccomp and Landlock, so the test loads this file as the job's
 *  reference: the same process, the same sandbox (kf_subproc.c). Its
 *  findings are its last line on stderr, which the worker stores. */
/* The scaffold (s_param, s_say, kf_forward) is sandbox_attack.h, put
 * before this file by test_hostile.sh. */

__attribute__ ((constructor)) static void
s_attack (void)
{
    char path[108], hello[160];
    s_param ("kfh_unix", path, sizeof path);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    snprintf (sa.sun_path, sizeof sa.sun_path, "%s", path);
    int fd = socket (AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect (fd, (struct sockaddr *) &sa, sizeof sa) != 0)
        s_say ("unix", strerror (errno));
    char mode[64];
    s_param ("kfh_mode", mode, sizeof mode);
    snprintf (hello, sizeof hello, "kfh sandbox_unix %s\n", mode);
    ssize_t w = write (fd, hello, strlen (hello));
    (void) w;
    close (fd);
    s_say ("unix", "connected");
}
