/*  Hostile, reading the worker's CURVE secret key (issue 13, item 1): the
 *  file KF_CURVE_CERT names (NAME_secret), at the path the deployment
 *  uses (the test passes it). Caught when its content is in no output.
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
    char path[512], buf[512] = "";
    s_param ("kfh_key", path, sizeof path);
    FILE *f = fopen (path, "r");
    if (!f)
        s_say ("key", strerror (errno));
    size_t n = fread (buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    s_say ("key", buf);
}
