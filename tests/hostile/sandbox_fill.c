/*  Hostile, filling /tmp and /dev/shm (issue 13, item 3): up to 64 MiB in
 *  each, left there (files in tmpfs are memory, and outlive the run).
 *  Caught when the run's /tmp and /dev/shm are capped below that and
 *  nothing of it is left on the host afterwards.
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
    static char chunk[1 << 20];
    memset (chunk, 'F', sizeof chunk);
    const char *where[] = { "/tmp", "/dev/shm" };
    char found[256] = "";
    for (int w = 0; w < 2; w++) {
        char path[128];
        snprintf (path, sizeof path, "%s/kfh-fill-%ld", where[w], (long) getpid ());
        int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int mib = 0, err = 0;
        while (fd >= 0 && mib < 64) {
            if (write (fd, chunk, sizeof chunk) != (ssize_t) sizeof chunk) {
                err = errno;
                break;
            }
            mib++;
        }
        if (fd < 0)
            err = errno;
        else
            close (fd);
        size_t used = strlen (found);
        snprintf (found + used, sizeof found - used, "%s=%d MiB (%s) ", where[w], mib,
                  err ? strerror (err) : "no limit met");
    }
    s_say ("fill", found);
}
