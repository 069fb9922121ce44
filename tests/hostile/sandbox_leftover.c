/*  Hostile, files that outlive the run (issue 13, item 3): one in /tmp
 *  and one in /dev/shm, left for a later run to find (or to fill the
 *  host, a run at a time). Caught when neither is on the host once the
 *  job has ended.
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
    const char *where[] = { "/tmp", "/dev/shm" };
    char found[256] = "";
    for (int w = 0; w < 2; w++) {
        char path[128];
        snprintf (path, sizeof path, "%s/kfh-leftover-%ld", where[w], (long) getpid ());
        int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        size_t used = strlen (found);
        snprintf (found + used, sizeof found - used, "%s %s; ", path,
                  fd >= 0 ? "written" : strerror (errno));
        if (fd >= 0)
            close (fd);
    }
    s_say ("leftover", found);
}
