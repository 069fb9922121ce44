/*  kf_python.h - which Python to ask for torch, and what its refusal said.
 *
 *  Two programs look for a Python with torch: the exec worker, for its
 *  reference jobs (kf_torch_ref.c, the probe in the sandbox the jobs
 *  use), and kfctl, for the user's own model files and exports
 *  (kfctl_python.c, the probe with the user's environment). How each
 *  runs its probe differs on purpose; the interpreters they try, in
 *  order, and how a failed probe is told are one rule, kept here.
 */
#ifndef KF_PYTHON_H
#define KF_PYTHON_H

#include <stdbool.h>
#include <stddef.h>

#define KF_PYTHON_MAX 4

/* Fills LIST with the interpreters to try, first to last, and returns how
 * many: CONFIGURED alone when it is set (a named interpreter is an order:
 * a silent fall-back to another torch would run a version nobody chose),
 * else $KF_PYTHON when set, /opt/torch/.venv/bin/python3, /usr/bin/python3
 * and python3 on PATH. The strings are borrowed (CONFIGURED, the
 * environment's, or constants). */
int kf_python_candidates (const char *configured, const char *list[KF_PYTHON_MAX]);

/* Writes into WHY (SIZE bytes) why a probe found no torch: "import torch
 * took over LIMIT_S s" when it TIMED_OUT, else the last line its OUTPUT
 * printed ("ModuleNotFoundError: No module named 'torch'"), else "exited
 * without a word". Returns WHY. */
char *kf_python_why (const char *output, bool timed_out, double limit_s, char *why,
                     size_t size);

#endif
