/*  kf_log.c - log records for the daemons and tools. */
#include "kf_log.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char s_program[32] = "kf";
static bool s_verbose;

void
kf_log_init (const char *program, bool verbose)
{
    snprintf (s_program, sizeof s_program, "%s", program);
    s_verbose = verbose;
}

void
kf_log (kf_log_level_t level, const char *fmt, ...)
{
    if (level == KF_LOG_DEBUG && !s_verbose)
        return;
    static const char *names[] = { "debug", "info", "warn", "error" };
    char stamp[32];
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r (&ts.tv_sec, &tm);
    strftime (stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    char line[2048];
    int n = snprintf (line, sizeof line, "%s.%03ldZ %s[%d] %s: ", stamp,
                      ts.tv_nsec / 1000000, s_program, (int) getpid (),
                      names[level]);
    va_list ap;
    va_start (ap, fmt);
    if (n > 0 && (size_t) n < sizeof line)
        vsnprintf (line + n, sizeof line - n, fmt, ap);
    va_end (ap);
    fprintf (stderr, "%s\n", line);
}
