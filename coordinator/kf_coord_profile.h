/*  kf_coord_profile.h - `kfctl profile-model` through the coordinator:
 *  PROFILE_MODEL queues a `model_profile` job on an exec worker of the
 *  target asked for (a job of no run: it touches no search), and
 *  PROFILE_STATE tells where it is and, once done, its result
 *  (proto/PROTOCOL.md, "Client messages"; the job in
 *  exec-worker/kf_model_profile.h).
 */
#ifndef KF_COORD_PROFILE_H
#define KF_COORD_PROFILE_H

#include "kf_coord_internal.h"

/* PROFILE_MODEL {source, top, name?, target?} -> PROFILE_QUEUED {job_id}. */
void kf_coord_on_profile_model (kf_coord_t *self, zsock_t *sock, zframe_t *route,
                                kf_msg_t *msg);

/* PROFILE_STATE {job_id} -> PROFILE_STATE {job_id, state, result, reason}. */
void kf_coord_on_profile_state (kf_coord_t *self, zsock_t *sock, zframe_t *route,
                                kf_msg_t *msg);

#endif
