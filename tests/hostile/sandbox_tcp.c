/*  Hostile, connecting to a TCP service of the host (issue 13, item 1):
 *  the address the test passes (a coordinator's or a database's port).
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
    char addr[128], hello[160];
    s_param ("kfh_tcp", addr, sizeof addr);
    char *colon = strrchr (addr, ':');
    if (!colon)
        s_say ("tcp", "no address");
    *colon = 0;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) atoi (colon + 1)) };
    inet_pton (AF_INET, addr, &sa.sin_addr);
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect (fd, (struct sockaddr *) &sa, sizeof sa) != 0)
        s_say ("tcp", strerror (errno));
    char mode[64];
    s_param ("kfh_mode", mode, sizeof mode);
    snprintf (hello, sizeof hello, "kfh sandbox_tcp %s\n", mode);
    ssize_t w = write (fd, hello, strlen (hello));
    (void) w;
    close (fd);
    s_say ("tcp", "connected");
}
