/*  kf_figures_retry.h - a host exec worker whose figures were measured
 *  while other work ran measures them again once the host is quiet.
 *
 *  Figures taken beside other work read low (round 23: every core's cold
 *  read at 22 GB/s where the quiet host does 39), and a worker kept them
 *  for its whole life: its capabilities said figures_measured_busy, the
 *  coordinator judged results against them with a 2x margin, and every
 *  prompt's Target section carried them. So while they are marked busy
 *  the worker, in a moment when it holds no job (kf_worker_idle_t: a
 *  thread of its own, the heartbeats go on), tries again every
 *  figures_retry_s seconds, at most figures_retries times: a glance at
 *  the host, a full measurement where it looks quiet, and the same quiet
 *  test a start uses (kf_host_figures_again). Quiet figures replace the
 *  capabilities, which a fresh HELLO on the current connection tells the
 *  coordinator (it replaces its copy and the workers row), and are kept
 *  in the figures file as a quiet start keeps them. One log line a try.
 */
#ifndef KF_FIGURES_RETRY_H
#define KF_FIGURES_RETRY_H

#include "kf_host_figures.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* How a try ended. */
typedef enum {
    KF_FIGURES_RETRY_QUIET,      /* measured quiet: taken, no more tries */
    KF_FIGURES_RETRY_BUSY,       /* still busy: the figures in use stay */
    KF_FIGURES_RETRY_NOT_BUSY    /* the figures in use are not busy ones */
} kf_figures_outcome_t;

typedef struct {
    double every_s;          /* between tries; 0: never try */
    int max_tries;           /* at most this many tries */
    int tries;               /* made so far */
    json_t *caps;            /* the worker's capabilities (owned; a copy,
                              * so the worker's loop and the try's thread
                              * never share an object) */
} kf_figures_retry_t;

/* Milliseconds until the next try after the TRIES-th (0: before the
 * first) ended in OUTCOME (ignored before the first), at most MAX_TRIES
 * tries EVERY_S seconds apart; -1 for none. Pure. */
int64_t kf_figures_retry_next_ms (kf_figures_outcome_t outcome, int tries, int max_tries,
                                  double every_s);

/* The log line of try TRIES of MAX_TRIES that ended in A (of
 * kf_host_figures_again) into BUF. Pure. */
void kf_figures_retry_line (char *buf, size_t size, const kf_host_figures_again_t *a, int tries,
                            int max_tries);

/* Sets up R for a worker with capabilities CAPS (copied), trying every
 * EVERY_S seconds at most MAX_TRIES times. Returns the milliseconds to
 * the first try, or -1 where there is none to make: not the host
 * backend's figures, not measured busy, or EVERY_S 0. */
int64_t kf_figures_retry_init (kf_figures_retry_t *r, json_t *caps, double every_s,
                               int max_tries);

/* Frees what R holds. */
void kf_figures_retry_free (kf_figures_retry_t *r);

/* kf_idle_fn (kf_worker.h); ARG a kf_figures_retry_t: one try, its log
 * line, and where quiet the new capabilities in *CAPS. */
int64_t kf_figures_retry_idle (void *arg, json_t **caps);

/* Round 34: prompts of one run read a thread start of 19.1 us, then,
 * after the figures were measured again mid-run, 61.9 us, with no word
 * of the change. Marks the device DEV, measured again quietly, with when
 * its figures replaced those of OLD (figures_measured_again_at,
 * "YYYY-MM-DD HH:MM UTC"), and keeps OLD's thread start where it is
 * lower: the higher figure holds a wait for a CPU (kf_host_figures.h). */
void kf_figures_retry_mark (json_t *dev, json_t *old);

#endif
