/*  kf_worker.h - the worker lifecycle shared by the three worker daemons.
 *
 *  kf_worker_run connects a DEALER to the coordinator, says HELLO with the
 *  role, credits and capabilities, heartbeats, and hands each JOB to the
 *  handler in a thread of its own (at most `credits` at once), so a long
 *  compile or evaluation never delays a heartbeat. When the coordinator
 *  goes quiet it reconnects with capped, jittered backoff and says HELLO
 *  again. On stop it tells the coordinator at once (a HEARTBEAT with no
 *  credits), hands back any JOB that still arrives, waits for the running
 *  ones (up to drain_ms), sends their results, says BYE and returns; the
 *  coordinator requeues what it still held without counting an attempt.
 *  Over tcp:// it speaks CURVE with curve_cert and curve_server_key
 *  (common/kf_curve.h). It heartbeats at the interval and liveness the
 *  coordinator's WELCOME names (its own settings count until then), and
 *  a result finished while it has no registered connection is kept (up
 *  to KF_WORKER_HELD_BYTES) and sent after the next WELCOME, its job
 *  listed in the HELLO meanwhile so the coordinator keeps its lease.
 *
 *  A second, asynchronous mode serves daemons whose jobs wait on the
 *  network rather than on the CPU (the gateway: hundreds of HTTP requests
 *  in flight). There the start function runs on the loop thread, must not
 *  block, and finishes each job later with kf_worker_complete; hooks add
 *  the daemon's own file descriptors and timer to the loop's zmq_poll, so
 *  one thread serves heartbeats and every request without locks.
 */
#ifndef KF_WORKER_H
#define KF_WORKER_H

#include "kf_config.h"
#include <czmq.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* Bytes of finished RESULTs a worker keeps while it is not registered. */
#define KF_WORKER_HELD_BYTES (256u * 1024u * 1024u)

typedef struct {
    int64_t job_id;
    int64_t lease;
    const char *lease_token; /* borrowed; echoed in the RESULT (kf_worker does) */
    const char *kind;        /* borrowed */
    json_t *payload;         /* borrowed */
    zmsg_t *frames;          /* borrowed binary frames of the JOB */
} kf_job_t;

typedef struct {
    bool ok;                 /* false: the job could not be done */
    bool final;              /* with !ok: the job's own failure, the same on
                                any worker and any try (a problem that
                                raises, data past a size limit): failed at
                                once, not retried */
    char *error;             /* owned; why not, when !ok */
    json_t *result;          /* owned; NULL means {} */
    zmsg_t *frames;          /* owned; binary frames to send back, or NULL */
} kf_job_result_t;

/* The longest reason kf_job_fail keeps, its NUL included: a reason, not
 * a log. */
#define KF_JOB_ERROR_MAX 1024

/* Marks RES failed with the formatted reason (cut to KF_JOB_ERROR_MAX - 1
 * bytes) as its error. Returns -1. */
int kf_job_fail (kf_job_result_t *res, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Runs in a job thread; must be thread-safe. Fills RES. */
typedef void (kf_job_fn) (void *arg, const kf_job_t *job, kf_job_result_t *res);

/* Threaded mode, optional: work a worker does in a moment when it holds
 * no job (the exec worker measures its host's figures again where they
 * were taken beside other work: exec-worker/kf_figures_retry.h). It
 * runs on a thread of its own, so heartbeats go on; a JOB that arrives
 * meanwhile takes its credit at once and starts when this returns, so
 * the two never run side by side. It may set *CAPS to new capabilities
 * (then the worker's), which the worker announces at once with a fresh
 * HELLO on its current connection. Returns the milliseconds until the
 * next call is due, or -1 for no more calls. */
typedef int64_t (kf_idle_fn) (void *arg, json_t **caps);

typedef struct {
    kf_idle_fn *fn;
    void *arg;
    int64_t first_ms;        /* the first call is due this long after the start */
} kf_worker_idle_t;

/* The running loop, as the asynchronous mode's callbacks see it. */
typedef struct kf_worker_t kf_worker_t;

/* Asynchronous mode: called on the loop thread for each JOB; must not
 * block. JOB and everything in it is borrowed for the call only (incref
 * the payload to keep it). The job ends when kf_worker_complete is called
 * for its id, which may happen before this returns. */
typedef void (kf_job_start_fn) (void *arg, kf_worker_t *worker, const kf_job_t *job);

/* Extra work for the loop's poll, asynchronous mode only. */
typedef struct {
    /* Writes up to MAX items to watch (a socket, or .fd for a plain file
     * descriptor) and returns how many it wants; when that is more than
     * MAX the loop grows its array and asks again. Lowers *TIMEOUT_MS
     * (never raises it) when a timer of the caller's falls due sooner. */
    int (*prepare) (void *arg, zmq_pollitem_t *items, int max, long *timeout_ms);
    /* Called after every poll, with the items prepare wrote and their
     * revents, also when the poll timed out (timers are due then). */
    void (*dispatch) (void *arg, kf_worker_t *worker, zmq_pollitem_t *items, int n);
} kf_worker_hooks_t;

/* Finishes job JOB_ID in asynchronous mode: sends its RESULT and frees its
 * credit. Loop thread only. Takes RES's contents (error, result, frames)
 * and clears them. Returns 0, or -1 when the job is not running here. */
int kf_worker_complete (kf_worker_t *worker, int64_t job_id, kf_job_result_t *res);

/* Milliseconds since the loop last sent a HEARTBEAT (tests, status). */
int64_t kf_worker_heartbeat_age (const kf_worker_t *worker);

typedef struct {
    const char *endpoint;        /* coordinator's worker endpoint */
    const char *role;            /* generate | compile | execute */
    const char *worker_id;       /* NULL: made from host, role and pid */
    const char *name;            /* NULL: same as worker_id */
    int credits;                 /* jobs at once */
    json_t *capabilities;        /* borrowed */
    kf_job_fn *handler;          /* threaded mode; or */
    kf_job_start_fn *start;      /* asynchronous mode (exactly one of the two) */
    const kf_worker_hooks_t *hooks;   /* asynchronous mode, optional */
    void *handler_arg;           /* for handler, start and hooks */
    const kf_worker_idle_t *idle;   /* threaded mode, optional */
    int heartbeat_ms;            /* 0: 1000 */
    int liveness;                /* 0: 3 */
    int backoff_min_ms;          /* 0: 100 */
    int backoff_max_ms;          /* 0: 5000 */
    int drain_ms;                /* 0: 30000 (the drain_s key) */
    size_t max_message;          /* 0: protocol default */
    const char *curve_cert;      /* our secret certificate, or NULL */
    const char *curve_server_key;   /* coordinator's public cert file or Z85 key */
    bool allow_plain_tcp;        /* connect beyond loopback without CURVE */
} kf_worker_config_t;

/* Runs until *STOP becomes non-zero (set it from a signal handler).
 * Returns 0 after a clean goodbye, -1 on a setup failure. */
int kf_worker_run (const kf_worker_config_t *cfg, volatile sig_atomic_t *stop);

/* The keys every worker daemon has, first in its configuration table. */
#define KF_WORKER_CFG_KEYS(default_credits, credits_help)                      \
    { "coordinator", KF_CFG_STR, "ipc:///tmp/kf-workers.sock", 0, -1,         \
      "coordinator's worker endpoint" },                                       \
    { "credits", KF_CFG_INT, default_credits, 1, 256, credits_help },          \
    { "heartbeat_ms", KF_CFG_INT, "1000", 50, 60000, "heartbeat interval" },   \
    { "liveness", KF_CFG_INT, "3", 1, 100,                                    \
      "missed heartbeats before the coordinator counts as gone (reconnect)" }, \
    { "drain_s", KF_CFG_INT, "30", 1, 86400,                                  \
      "after SIGTERM, seconds to finish the jobs held before exiting (what"    \
      " is left is given to another worker)" },                                \
    { "name", KF_CFG_STR, NULL, 0, -1, "display name (default: the worker id)" }, \
    { "curve_cert", KF_CFG_STR, NULL, 0, -1,                                  \
      "our secret certificate (kfctl keygen), for a tcp:// coordinator" },     \
    { "curve_server_key", KF_CFG_STR, NULL, 0, -1,                            \
      "the coordinator's public certificate file or Z85 public key" },         \
    { "allow_plain_tcp", KF_CFG_BOOL, "false", 0, -1,                         \
      "connect to a tcp:// coordinator beyond loopback without CURVE" },       \
    { "verbose", KF_CFG_BOOL, "false", 0, -1, "log debug lines" }

/* --- a worker daemon's start (kf_worker_start.c): what the compile and
 * exec workers' mains share before their loop, besides their own
 * standalone modes (--build, --eval). */

/* Removes NAME from ARGV (ARGC adjusted) with the value after it, unless
 * FLAG, and returns that value (a FLAG: NAME itself), or NULL when NAME
 * is absent; sets *MISSING when NAME is last and needs a value. */
char *kf_worker_take_arg (int *argc, char **argv, const char *name, bool flag, bool *missing);

/* Says "PROGRAM: " and FMT with ARG on stderr; returns 2, a usage
 * error's exit code. */
int kf_worker_usage_error (const char *program, const char *fmt, const char *arg);

/* PROGRAM's configuration from ARGV (TABLE's keys; USAGE for --help),
 * with the log started at its "verbose". NULL when there is none to run
 * with: *EXIT_CODE 0 after --help, 2 for a configuration that is wrong or
 * an argument left over (both said on stderr). */
struct kf_config_t *kf_worker_load_config (const char *program, const char *usage,
                                           const kf_cfg_entry_t *table, int *argc,
                                           char **argv, int *exit_code);

/* A worker daemon's main after its configuration is loaded: takes the
 * common keys from CONFIG, catches signals, runs the loop with ROLE, CAPS
 * (borrowed) and HANDLER until SIGINT or SIGTERM. Returns the exit code. */
struct kf_config_t;
int kf_worker_main (const struct kf_config_t *config, const char *role, json_t *caps,
                    kf_job_fn *handler, void *handler_arg);

/* kf_worker_main with work for the moments it holds no job (IDLE,
 * borrowed; NULL: none). */
int kf_worker_main_idle (const struct kf_config_t *config, const char *role, json_t *caps,
                         kf_job_fn *handler, void *handler_arg, const kf_worker_idle_t *idle);

/* The same for the asynchronous mode: START and HOOKS (may be NULL). */
int kf_worker_main_async (const struct kf_config_t *config, const char *role,
                          json_t *caps, kf_job_start_fn *start,
                          const kf_worker_hooks_t *hooks, void *arg);

/* Installs SIGINT/SIGTERM handlers that set *STOP. */
void kf_worker_catch_signals (volatile sig_atomic_t *stop);

#endif
