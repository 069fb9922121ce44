/*  kf_subproc.h - run a program in a sandboxed child process.
 *
 *  Used for every compiler run and every evaluation: a wall-clock limit
 *  (the whole process group is killed), CPU, memory, file-size and
 *  process-count limits, stdout and stderr captured together up to a cap,
 *  a working directory of the caller's, no network where the host allows
 *  an unshared network namespace, and, when the caller is root, an
 *  unprivileged user (root ignores RLIMIT_NPROC, so a fork bomb would
 *  otherwise take the host).
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
    const char *workdir;     /* chdir here; NULL = stay */
    bool no_network;         /* try unshare(CLONE_NEWNET); ignored if denied */
    uid_t uid;               /* when running as root: drop to these */
    gid_t gid;               /*   (kf_subproc_sandbox_ids fills them) */
    bool drop_privileges;
} kf_subproc_limits_t;

typedef struct {
    bool started;            /* exec succeeded */
    bool timed_out;
    int exit_code;           /* -1 when signalled */
    int signal;              /* 0 when exited */
    char *output;            /* NUL-terminated, owned */
    size_t output_len;
    bool output_truncated;
    double wall_s;
} kf_subproc_result_t;

/* Fills LIMITS with defaults (10 s, 64 KiB output, 4 GiB memory, 256 MiB
 * files, 64 processes, no network) and, when euid is 0, the ids of the
 * unprivileged sandbox user ("nobody" unless KF_SANDBOX_USER names one). */
void kf_subproc_limits_default (kf_subproc_limits_t *limits);

/* Runs ARGV[0] (searched in PATH) with ARGV. Returns 0 when the child ran
 * to any end (see RESULT), -1 when it could not be started. */
int kf_subproc_run (char *const argv[], const kf_subproc_limits_t *limits,
                    kf_subproc_result_t *result);

void kf_subproc_result_free (kf_subproc_result_t *result);

/* Creates a private directory under TMPDIR, owned by the sandbox user
 * when LIMITS drop privileges. Returns a path the caller frees, or NULL. */
char *kf_subproc_mkdtemp (const kf_subproc_limits_t *limits);
/* Removes DIR and everything in it. */
void kf_subproc_rmtree (const char *dir);

#endif
