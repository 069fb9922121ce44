/*  Hostile, reading another job's folder (issue 13, item 1): every kf-*
 *  folder beside its own (the worker makes each job's under its TMPDIR)
 *  and the sources in it. Caught when no other job's file is in any
 *  output.
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
    char cwd[4096], found[900] = "", path[8192];
    if (!getcwd (cwd, sizeof cwd))
        s_say ("other job", "no cwd");
    char *slash = strrchr (cwd, '/');
    const char *own = slash ? slash + 1 : cwd;
    if (slash)
        *slash = 0;
    DIR *d = opendir (cwd[0] ? cwd : "/");
    if (!d)
        s_say ("other job", strerror (errno));
    struct dirent *e;
    while ((e = readdir (d)) != NULL) {
        if (strncmp (e->d_name, "kf-", 3) || !strcmp (e->d_name, own))
            continue;
        snprintf (path, sizeof path, "%s/%s/candidate.c", cwd, e->d_name);
        FILE *f = fopen (path, "r");
        size_t used = strlen (found);
        snprintf (found + used, sizeof found - used, "%s: ", e->d_name);
        used = strlen (found);
        if (f) {
            size_t n = fread (found + used, 1, sizeof found - used - 1, f);
            found[used + n] = 0;
            fclose (f);
        }
        else
            snprintf (found + used, sizeof found - used, "%s; ", strerror (errno));
    }
    closedir (d);
    s_say ("other job", found[0] ? found : "none seen");
}
