/*  kf_gateway.h - the gateway's job handler: generate jobs in, sources out.
 *
 *  The gateway turns a generate job into a candidate source with one of
 *  its generators. Today that is the built-in offline generator only
 *  (kf_gen_offline.h); model-backed generators plug in here, behind the
 *  same handler, one file each.
 */
#ifndef KF_GATEWAY_H
#define KF_GATEWAY_H

#include "kf_worker.h"

/* The capabilities the gateway advertises in HELLO (caller's). */
json_t *kf_gateway_capabilities (void);

/* kf_job_fn for the generate role. ARG is unused. Thread-safe. */
void kf_gateway_handle (void *arg, const kf_job_t *job, kf_job_result_t *res);

#endif
