/*  kfctl_client.h - how kfctl finds and talks to the coordinator.
 *
 *  Endpoint lookup (flag, then environment, then the single-node state
 *  folder's `endpoints` file), one request/reply exchange with a timeout,
 *  and an interruptible wait on sockets. Kept apart from the commands so
 *  the exchange rules (fresh socket per request, no linger, no reliance on
 *  the "req" echo) live in one place.
 */
#ifndef KFCTL_CLIENT_H
#define KFCTL_CLIENT_H

#include "kf_proto.h"
#include <signal.h>
#include <stdbool.h>

/* Exit codes shared by every command (docs/kfctl.md). */
#define KF_CTL_EXIT_OK 0
#define KF_CTL_EXIT_ERROR 1        /* ERROR reply; run failed or cancelled */
#define KF_CTL_EXIT_USAGE 2        /* bad arguments or task file */
#define KF_CTL_EXIT_UNREACHABLE 3  /* no endpoint, or no reply in time */
#define KF_CTL_EXIT_INTERRUPTED 130

typedef struct {
    char *client;     /* owned; NULL when unknown */
    char *status;     /* owned */
    char *event;      /* owned */
    char *worker;     /* owned; only for display */
    char *source;     /* owned; where the client endpoint came from */
} kf_ctl_endpoints_t;

/* Set by the SIGINT/SIGTERM handler; every wait loop checks it. */
extern volatile sig_atomic_t kf_ctl_interrupted;

/* Installs SIGINT/SIGTERM handlers that only set kf_ctl_interrupted, and
 * turns czmq's own handler off so it cannot swallow the signal. */
void kf_ctl_catch_signals (void);

/* The single-node state folder: $KF_STATE, else /var/lib/kf-local for
 * root, else $HOME/.kf-local. Caller frees. */
char *kf_ctl_state_dir (void);

/* Fills EP from the flags (may be NULL), the environment and the state
 * folder's endpoints file, each endpoint on its own. Returns 0; the
 * caller checks which endpoints were found. */
int kf_ctl_endpoints_resolve (kf_ctl_endpoints_t *ep, const char *client_flag,
                              const char *status_flag, const char *event_flag);
void kf_ctl_endpoints_clear (kf_ctl_endpoints_t *ep);

/* Request outcomes. */
typedef enum {
    KF_CTL_REPLY = 0,        /* reply of the expected type in *REPLY_P */
    KF_CTL_ERROR_REPLY = 1,  /* ERROR reply in *REPLY_P */
    KF_CTL_NO_REPLY = -1,    /* timeout or transport failure; *ERR set */
    KF_CTL_BAD_REPLY = -2,   /* a reply we cannot use; *ERR set */
    KF_CTL_INTERRUPTED = -3  /* Ctrl-C while waiting */
} kf_ctl_rc_t;

/* Sends *REQ_P (consumed) to ENDPOINT on a fresh DEALER and waits up to
 * TIMEOUT_MS for one reply of type EXPECT (or ERROR). *REPLY_P is the
 * caller's on KF_CTL_REPLY and KF_CTL_ERROR_REPLY; *ERR (caller frees) on
 * failures. */
kf_ctl_rc_t kf_ctl_request (const char *endpoint, kf_msg_t **req_p,
                            const char *expect, int timeout_ms,
                            kf_msg_t **reply_p, char **err);

/* Waits up to TIMEOUT_MS for SOCK (may be NULL: just sleeps) to become
 * readable, in short slices so Ctrl-C is noticed. Returns 1 readable,
 * 0 timeout, -1 interrupted. */
int kf_ctl_wait_readable (zsock_t *sock, int timeout_ms);

/* Prepares SOCK for ENDPOINT: CURVE over tcp:// with $KF_CURVE_CERT (our
 * secret certificate) and $KF_CURVE_SERVER_KEY (the coordinator's public
 * certificate or key); plain tcp:// beyond loopback only with
 * $KF_ALLOW_PLAIN_TCP=1. Returns 0, or -1 with *ERR (caller frees). */
int kf_ctl_secure (zsock_t *sock, const char *endpoint, char **err);

/* Milliseconds on a monotonic clock. */
int64_t kf_ctl_now_ms (void);

#endif
