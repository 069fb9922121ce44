/*  kf_toolchain.c - what all toolchains share: the registry, finding a
 *  program on PATH, asking it for its version, and the builder their
 *  command lines are written with. */
#include "kf_toolchain.h"
#include "kf_subproc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

//  Declared here rather than in kf_toolchain.h: only the registry needs
//  it (kf_toolchain_for_language ("opencl") finds it for everyone else).
extern const kf_toolchain_t kf_toolchain_spirv;

static const kf_toolchain_t *const s_all[] = {
    &kf_toolchain_cc, &kf_toolchain_nvcc, &kf_toolchain_spirv, NULL
};

const kf_toolchain_t *const *
kf_toolchain_all (void)
{
    return s_all;
}

const kf_toolchain_t *
kf_toolchain_for_language (const char *language)
{
    if (!language)
        return NULL;
    for (int i = 0; s_all[i]; i++)
        if (strcmp (s_all[i]->language, language) == 0)
            return s_all[i];
    return NULL;
}

static char *
s_join (const char *dir, size_t dir_len, const char *name)
{
    size_t len = dir_len + strlen (name) + 2;
    char *path = malloc (len);
    if (path)
        snprintf (path, len, "%.*s/%s", (int) dir_len, dir, name);
    return path;
}

char *
kf_toolchain_which (const char *name, const char *const *extra_dirs)
{
    const char *path = getenv ("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr (path, ':');
        size_t len = colon ? (size_t) (colon - path) : strlen (path);
        if (len > 0) {
            char *candidate = s_join (path, len, name);
            if (candidate && access (candidate, X_OK) == 0)
                return candidate;
            free (candidate);
        }
        path += len + (colon ? 1 : 0);
    }
    for (int i = 0; extra_dirs && extra_dirs[i]; i++) {
        char *candidate = s_join (extra_dirs[i], strlen (extra_dirs[i]), name);
        if (candidate && access (candidate, X_OK) == 0)
            return candidate;
        free (candidate);
    }
    return NULL;
}

/* Versions already asked for, by toolchain and program path: a compiler
 * is not run once per job just to say what it is (a compile-cache hit
 * must cost no compiler run at all). */
#define S_VERSIONS 8
static struct {
    const kf_toolchain_t *tc;
    char *program;
    char *version;
} s_versions[S_VERSIONS];
static pthread_mutex_t s_versions_lock = PTHREAD_MUTEX_INITIALIZER;

static char *s_ask_version (const kf_toolchain_t *tc, char *program);

char *
kf_toolchain_version (const kf_toolchain_t *tc)
{
    char *program = tc->find ();
    if (!program)
        return NULL;
    char *version = NULL;
    pthread_mutex_lock (&s_versions_lock);
    int slot = -1;
    for (int i = 0; i < S_VERSIONS && slot < 0; i++)
        if (s_versions[i].tc == tc && !strcmp (s_versions[i].program, program))
            slot = i;
    if (slot >= 0)
        version = s_versions[slot].version ? strdup (s_versions[slot].version) : NULL;
    pthread_mutex_unlock (&s_versions_lock);
    if (slot >= 0) {
        free (program);
        return version;
    }
    version = s_ask_version (tc, strdup (program));
    pthread_mutex_lock (&s_versions_lock);
    for (int i = 0; i < S_VERSIONS; i++)
        if (!s_versions[i].tc) {
            s_versions[i].tc = tc;
            s_versions[i].program = program;
            s_versions[i].version = version ? strdup (version) : NULL;
            program = NULL;
            break;
        }
    pthread_mutex_unlock (&s_versions_lock);
    free (program);
    return version;
}

/* Runs PROGRAM --version (PROGRAM is taken) and picks TC's version line. */
static char *
s_ask_version (const kf_toolchain_t *tc, char *program)
{
    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = 10;
    limits.output_cap = 8192;
    char *argv[] = { program, "--version", NULL };
    kf_subproc_result_t res;
    char *version = NULL;
    if (kf_subproc_run (argv, &limits, &res) == 0) {
        if (res.exit_code == 0) {
            const char *line = res.output;
            if (tc->version_line) {
                const char *hit = strstr (res.output, tc->version_line);
                if (hit) {
                    while (hit > res.output && hit[-1] != '\n')
                        hit--;
                    line = hit;
                }
            }
            size_t len = strcspn (line, "\r\n");
            version = strndup (line, len);
        }
        kf_subproc_result_free (&res);
    }
    free (program);
    return version;
}

void
kf_argv_init (kf_argv_t *a, char **argv, size_t max, char *buf, size_t buf_size)
{
    *a = (kf_argv_t) { .argv = argv, .max = max, .buf = buf, .buf_size = buf_size };
}

void
kf_argv_add (kf_argv_t *a, const char *arg)
{
    //  One slot stays for the NULL that ends the vector.
    if (!arg || a->n + 1 >= a->max)
        a->failed = true;
    else
        a->argv[a->n++] = (char *) arg;
}

void
kf_argv_add_all (kf_argv_t *a, const char *const *args)
{
    for (int i = 0; args[i]; i++)
        kf_argv_add (a, args[i]);
}

char *
kf_argv_fmt (kf_argv_t *a, const char *fmt, ...)
{
    size_t left = a->buf_size - a->used;
    va_list ap;
    va_start (ap, fmt);
    int n = a->used < a->buf_size ? vsnprintf (a->buf + a->used, left, fmt, ap) : -1;
    va_end (ap);
    if (n < 0 || (size_t) n >= left) {
        a->failed = true;
        return NULL;
    }
    char *at = a->buf + a->used;
    a->used += (size_t) n + 1;
    return at;
}

void
kf_argv_add_output (kf_argv_t *a, const kf_toolchain_args_t *args)
{
    kf_argv_add (a, "-o");
    kf_argv_add (a, args->output);
    kf_argv_add (a, args->source);
}

int
kf_argv_end (kf_argv_t *a)
{
    if (a->max > 0)
        a->argv[a->n < a->max ? a->n : a->max - 1] = NULL;
    return a->failed || a->max == 0 ? -1 : 0;
}
