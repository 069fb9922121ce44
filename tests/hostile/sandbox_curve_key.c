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
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

/* The test's parameter NAME from the job's payload (job.json in the
 * evaluation's folder, where the evaluation child runs): "" if none. */
static __attribute__ ((unused)) void
s_param (const char *name, char *out, size_t size)
{
    char text[65536], key[128];
    out[0] = 0;
    FILE *f = fopen ("job.json", "r");
    if (!f)
        return;
    size_t n = fread (text, 1, sizeof text - 1, f);
    fclose (f);
    text[n] = 0;
    snprintf (key, sizeof key, "\"%s\":", name);
    char *at = strstr (text, key);
    if (!at)
        return;
    at += strlen (key);
    while (*at == ' ' || *at == '"')
        at++;
    size_t k = 0;
    while (at[k] && at[k] != '"' && k + 1 < size) {
        out[k] = at[k];
        k++;
    }
    out[k] = 0;
}

/* Its last words: one line on stderr, which the worker keeps as the
 * job's error or crash detail (stored, and shown to the next prompt). */
static void
s_say (const char *what, const char *found)
{
    char line[1024];
    snprintf (line, sizeof line, "KFH %s: %s", what, found);
    for (char *c = line; *c; c++)
        if (*c == '\n' || *c == '\0' || (unsigned char) *c < 32)
            *c = ' ';
    fprintf (stderr, "%s\n", line);
    fflush (stderr);
    _exit (0);
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) in; (void) n_in; (void) out; (void) n_out; (void) ctx;
    return 1;
}

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
