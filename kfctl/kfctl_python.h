/*  kfctl_python.h - the Python with torch that kfctl's own commands run
 *  (export's instructions and check, profile-model's profiler), found the
 *  way the exec worker finds its own (docs/pytorch-references.md, "Where
 *  it runs"): $KF_PYTHON, /opt/torch/.venv/bin/python3, /usr/bin/python3,
 *  then python3 on PATH, the first that imports torch. The python3 first
 *  on PATH often has no torch, so none is assumed.
 */
#ifndef KFCTL_PYTHON_H
#define KFCTL_PYTHON_H

#include <stddef.h>

/* The interpreter (caller frees) and its torch version in VERSION, or
 * NULL with what was tried, and why each failed, in TRIED. */
char *kf_ctl_python_find (char *version, size_t version_size, char *tried, size_t tried_size);

/* Runs ARGV (argv[0] an interpreter) in DIR with the user's own
 * environment, stdout and stderr together, for at most LIMIT_S seconds.
 * Returns its exit code (-1: not started, 124: past the limit) and
 * *OUTPUT (caller frees, at most 1 MiB kept). */
int kf_ctl_python_run (char *const argv[], const char *dir, double limit_s, char **output);

#endif
