/*  kf_python.c - the interpreters to try for torch and the reason a
 *  probe failed (kf_python.h).
 */
#include "kf_python.h"
#include "kf_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
kf_python_candidates (const char *configured, const char *list[KF_PYTHON_MAX])
{
    int n = 0;
    if (configured && *configured) {
        list[n++] = configured;
        return n;
    }
    const char *env = getenv ("KF_PYTHON");
    if (env && *env)
        list[n++] = env;
    list[n++] = "/opt/torch/.venv/bin/python3";
    list[n++] = "/usr/bin/python3";
    list[n++] = "python3";
    return n;
}

char *
kf_python_why (const char *output, bool timed_out, double limit_s, char *why, size_t size)
{
    if (timed_out) {
        snprintf (why, size, "import torch took over %.0f s", limit_s);
        return why;
    }
    const char *last;
    size_t len = kf_text_last_line (output, &last);
    if (len)
        snprintf (why, size, "%.*s", (int) len, last);
    else
        snprintf (why, size, "exited without a word");
    return why;
}
