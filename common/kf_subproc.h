/*  kf_subproc.h - run a program in a sandboxed child process.
 *
 *  Used for every compiler run and every evaluation: a wall-clock limit
 *  (the whole process group is killed), CPU, memory, file-size and
 *  process-count limits, stdout and stderr captured together up to a cap,
 *  a working directory of the caller's, no network where the host allows
 *  an unshared network namespace, and, when the caller is root, an
 *  unprivileged uid of the run's own (root ignores RLIMIT_NPROC, so a fork
 *  bomb would otherwise take the host).
 *
 *  As root each run takes a uid of its own from a pool (KF_SANDBOX_UID_BASE,
 *  default 2000000000, KF_SANDBOX_UID_COUNT of them, default 64; gid the
 *  same number; no /etc/passwd entry needed) and gives it back when it
 *  ends, after every process still running as that uid has been killed.
 *  So one run's fork bomb cannot take another run's process budget, and
 *  nothing a run started, in its process group or out of it, outlives it.
 *  KF_SANDBOX_USER names one account for every run instead (the former
 *  behaviour: one shared process budget, only the process group killed).
 *  The pool's locks live in /run/kf-sandbox (KF_SANDBOX_LOCK_DIR): where
 *  that folder cannot be made or anyone but root may write it, no run
 *  starts, rather than share uids with the host's other workers.
 *
 *  Every child but the operator's own program (keep_env) also gets
 *  namespaces of its own and a private view of the host (kf_sandbox.h):
 *  no network, no other process, no file of the host's but the system,
 *  read-only, and its working directory; HOME and TMPDIR are that
 *  directory. Where the host refuses the namespaces the run does not
 *  start (errno from the refusal); kf_sandbox_set_isolation (false)
 *  (--no-isolation) turns this off for trusted code.
 *
 *  A child may end its run early by saying its answer is final
 *  (final_whole below: an evaluation, once its verdict is in the
 *  channel): the run's processes are SIGKILLed at once (the group, with
 *  the PID namespace's init, whose end kills the rest of the namespace;
 *  without a namespace, as root, every process of the run's uid) and
 *  kf_subproc_run returns without waiting for the kernel to tear them
 *  down (a GPU context takes a tenth of a second). Only their reaping is
 *  deferred (kf_subproc_reap): at the next run's start, while a run waits
 *  for a uid of the pool, and at this process's exit, which waits for
 *  every one of them. The run's uid goes back to the pool only once its
 *  child is reaped and no process of the uid is left, so no later run
 *  shares a uid with a dying one. In a PID namespace the child reaped is
 *  the run's first process, which ends only after the namespace's last;
 *  without one, the program itself (and, as for any run without a
 *  namespace or a uid of its own, what left its group is not followed).
 */
#ifndef KF_SUBPROC_H
#define KF_SUBPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct {
    double time_limit_s;     /* wall clock; 0 = none */
    size_t output_cap;       /* bytes of output kept; the rest is counted */
    size_t memory_bytes;     /* RLIMIT_AS; 0 = none */
    size_t file_bytes;       /* RLIMIT_FSIZE; 0 = none */
    int max_procs;           /* RLIMIT_NPROC; 0 = none */
    const char *workdir;     /* chdir here; NULL = stay (see kf_subproc_run) */
    bool no_network;         /* unisolated runs only (isolated ones never
                              * have a network): try unshare(CLONE_NEWNET);
                              * ignored if denied */
    uid_t uid;               /* when running as root: drop to these; uid 0 */
    gid_t gid;               /*   = a uid of the pool, taken for the run */
    bool drop_privileges;    /*   (kf_subproc_limits_default fills them) */
    bool keep_env;           /* the whole environment and the host's own
                              * view, no namespaces (a trusted program of
                              * the operator's); false: only what
                              * compilers, runtimes and Python need
                              * (kf_subproc_env_kept), no key, token or
                              * database URL */
    int pass_fd;             /* > 2: given to the child as its fd 3 (a
                              * channel only it and the caller hold);
                              * 0: none */
    bool (*final_whole) (void *arg);
                             /* non-NULL: the child gets fd 4
                              * (KF_SUBPROC_FINAL_FD), the write end of a
                              * pipe; a byte written there says "my answer
                              * is final". The run then ends at once
                              * (ended_final) when FINAL_WHOLE (FINAL_ARG)
                              * says the answer is whole (read from the
                              * caller's own channel, never from the
                              * byte); otherwise the byte is ignored and
                              * the run waits for the child's end */
    void *final_arg;
} kf_subproc_limits_t;

/* The child's descriptor for "my answer is final" (final_whole). */
#define KF_SUBPROC_FINAL_FD 4

typedef struct {
    bool started;            /* exec succeeded */
    bool timed_out;
    int exit_code;           /* -1 when signalled */
    int signal;              /* 0 when exited */
    char *output;            /* NUL-terminated, owned */
    size_t output_len;
    bool output_truncated;
    double wall_s;
    uid_t uid;               /* the uid the child ran as */
    bool ended_final;        /* it said its answer was final and was
                              * killed then, its end not waited for:
                              * exit_code 0, signal 0 */
    double cpu_s;            /* CPU seconds (user and system) of the
                              * child and what it waited for; 0 when
                              * ended_final (it is not reaped yet) */
} kf_subproc_result_t;

/* Fills LIMITS with defaults (10 s, 64 KiB output, 4 GiB memory, 256 MiB
 * files, 64 processes, no network) and, when euid is 0, the drop of
 * privileges: to a uid of the pool (uid 0 here), or to the account
 * KF_SANDBOX_USER names (65534 when it names none that exists). */
void kf_subproc_limits_default (kf_subproc_limits_t *limits);

/* Whether the environment entry ENTRY ("NAME=value") reaches a child
 * that does not keep the whole environment: PATH, HOME, the locale, the
 * library path, the CUDA, Level Zero, OpenMP, BLAS, Python and torch
 * settings, the sanitizers' options, KF_CUDART and KF_ZE_LOADER. */
bool kf_subproc_env_kept (const char *entry);

/* Runs ARGV[0] (searched in PATH) with ARGV. Returns 0 when the child ran
 * to any end (see RESULT), -1 when it could not be started (errno; EINVAL
 * too for a bad KF_SANDBOX_UID_BASE or KF_SANDBOX_UID_COUNT). Waits while
 * every uid of the pool is in use. When the run drops privileges, WORKDIR
 * must be private to the caller (mode 0700, as kf_subproc_mkdtemp makes
 * it): it and what is in it belong to the run's uid while the run lasts
 * and come back to the caller when it ends, so later runs, under other
 * uids, can read and overwrite what earlier ones left there. */
int kf_subproc_run (char *const argv[], const kf_subproc_limits_t *limits,
                    kf_subproc_result_t *result);

void kf_subproc_result_free (kf_subproc_result_t *result);

struct rusage;
/* RU's user plus system time, in seconds. */
double kf_subproc_rusage_s (const struct rusage *ru);

/* Reaps the runs that ended at their final answer (ended_final) and are
 * gone by now, and gives their uids back; with WAIT, waits until every
 * one is gone (bounded, as a run's own end is). Returns how many are
 * still dying. Each run's start calls it without WAIT, this process's
 * exit with WAIT (an atexit handler set at the first such run). */
int kf_subproc_reap (bool wait);

/* When runs take their uids from the pool (euid 0, no KF_SANDBOX_USER),
 * sets *BASE and *SIZE to its range and returns 0; otherwise -1 (errno
 * EINVAL when the pool's configuration is bad). */
int kf_subproc_uid_pool (uid_t *base, int *size);

/* Creates a private directory (0700, the caller's) under TMPDIR, for use
 * as the WORKDIR of any number of runs. LIMITS is not used any more: each
 * run hands the directory to its own uid. Returns a path the caller
 * frees, or NULL. */
char *kf_subproc_mkdtemp (const kf_subproc_limits_t *limits);
/* kf_subproc_mkdtemp, made the WORKDIR of LIMITS' runs: the directory
 * a run of its own works in. Returns its path (the caller frees it and
 * removes the directory) or NULL with errno, LIMITS then unchanged. */
char *kf_subproc_workdir (kf_subproc_limits_t *limits);
/* Removes DIR and everything in it. */
void kf_subproc_rmtree (const char *dir);

#endif
