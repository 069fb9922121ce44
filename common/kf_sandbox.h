/*  kf_sandbox.h - the private view of the host a sandboxed child gets.
 *
 *  kf_subproc.c bounds a child with limits and, as root, a uid of its own;
 *  this module gives it namespaces of its own: a new user namespace when
 *  the worker is not root (root needs none to build the rest), and new
 *  mount, network, PID and IPC namespaces in every case. Its filesystem is
 *  an allow-list rooted on a fresh tmpfs (pivot_root, the host's root
 *  detached): the system read-only (/usr, /bin, /sbin, /lib*, /etc,
 *  /opt, /sys), the program's own folder and the worker's read-only, the
 *  job's folder read-write, a /dev of the few device nodes a runtime opens
 *  (null, zero, full, random, urandom, nvidia*, dri, accel, kfd), a /proc
 *  of its own PID namespace, and a private, size-capped /tmp and /dev/shm.
 *  Hidden: the CURVE key files ($KF_CURVE_CERT and its _secret), the
 *  folders and files KF_SANDBOX_HIDE names, /etc/kernelfoundry, and
 *  everything the allow-list leaves out (/home, /root, /run, /var, the
 *  host's /tmp with its sockets and other jobs' folders, the logs).
 *
 *  A run is three processes: the first (outside the PID namespace, which
 *  unshare leaves its caller in) waits and ends as the program ended; the
 *  second is the namespace's init, which builds the view, starts the
 *  program and reaps; the third is the program. When the init ends every
 *  process left in the namespace is killed by the kernel, so nothing a run
 *  starts outlives it, whatever session or group it moved to.
 *
 *  Environment (read by the worker, never by the child):
 *  KF_SANDBOX_BIND   folders every child may read (colon-separated), on
 *                    top of the allow-list;
 *  KF_SANDBOX_SHARE  folders every child may read and write (tests);
 *  KF_SANDBOX_HIDE   files or folders to hide inside what is visible;
 *  KF_SANDBOX_TMP_MB size of the private /tmp (default 512),
 *  KF_SANDBOX_SHM_MB and of /dev/shm (default 256).
 */
#ifndef KF_SANDBOX_H
#define KF_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct kf_sandbox_plan kf_sandbox_plan_t;

/* Whether sandboxed children get namespaces (the default) or, after
 * kf_sandbox_set_isolation (false) (--no-isolation), run in the worker's
 * own view of the host. Process-wide; set before any run starts. */
void kf_sandbox_set_isolation (bool on);
bool kf_sandbox_isolation (void);

/* Shares PATH read-write with every sandboxed child (eval_shared_dir, for
 * tests). Call before any run starts. 0, or -1 when too many. */
int kf_sandbox_share (const char *path);

/* Hides the CURVE certificate PATH (and PATH_secret beside it) from
 * every sandboxed child, wherever it is (the curve_cert key; the one
 * KF_CURVE_CERT names is hidden without this). NULL is ignored. */
int kf_sandbox_hide (const char *path);

/* The worker's isolation in a word or three for its capabilities and
 * logs: "namespaces", "namespaces, uid per run" (root), or "off". */
const char *kf_sandbox_mode (void);

/* A worker's start: with NO_ISOLATION (--no-isolation) turns isolation
 * off and says so loudly in the log; otherwise, when PROBE, checks with
 * kf_sandbox_probe that this host lets the worker isolate its children,
 * and when it does not, logs why and how to allow it and returns -1: the
 * worker then refuses to start rather than run candidates unisolated. */
int kf_sandbox_setup (bool no_isolation, bool probe);

/* Starts a trivial sandboxed child to see whether this host lets the
 * worker build the sandbox. 0, or -1 with what refused and how to allow
 * it in WHY. Always 0 when isolation is off. */
int kf_sandbox_probe (char *why, size_t why_size);

/* What to tell the operator when a child's STAGE (KF_SANDBOX_STAGE_*)
 * failed with ERR (errno): the cause and the settings that allow it. */
void kf_sandbox_explain (int stage, int err, char *why, size_t why_size);

/* kf_subproc.c calls this when a child reported such a failure: logs the
 * explanation once per stage, and keeps it for kf_sandbox_probe. */
void kf_sandbox_failed (int stage, int err);

/* The stages a child reports through kf_subproc's error pipe. */
#define KF_SANDBOX_STAGE_NS   5     /* entering the namespaces */
#define KF_SANDBOX_STAGE_VIEW 6     /* building the view */
#define KF_SANDBOX_STAGE_INIT 7     /* starting the init or the program */

/* Prepares, in the parent (it allocates), the view for one run of
 * PROGRAM (argv[0]; searched in PATH when it has no slash) in WORKDIR
 * (may be NULL: no writable folder but the private /tmp). Returns NULL
 * with errno when a name is too long or memory runs out. */
kf_sandbox_plan_t *kf_sandbox_plan_new (const char *program, const char *workdir);
void kf_sandbox_plan_destroy (kf_sandbox_plan_t **self_p);

/* In the child of fork, before anything is dropped: enters the
 * namespaces, builds the view and returns 0 in the process that is to
 * exec the program (the third above); the other two never return. -1
 * with errno (in the first process) when the namespaces are refused.
 * PARENT is the pid of the process that forked (the worker): the child
 * ends at once if it is gone.
 * ERRFD is the caller's close-on-exec error pipe: a failure after the
 * namespaces is written there as {stage, errno} and ends the child.
 * Async-signal-safe: job threads fork concurrently. */
int kf_sandbox_enter (const kf_sandbox_plan_t *plan, pid_t parent, int errfd);

#endif
