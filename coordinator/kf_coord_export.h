/*  kf_coord_export.h - the EXPORT client request: everything `kfctl
 *  export` needs to rebuild one correct kernel of a run outside the
 *  system (proto/PROTOCOL.md, "Client messages").
 */
#ifndef KF_COORD_EXPORT_H
#define KF_COORD_EXPORT_H

#include "kf_coord_internal.h"

/* Answers EXPORT {run_id, candidate_id?} on SOCK to ROUTE: EXPORTED with
 * the candidate, the task the candidates saw, the tuning point that was
 * measured and, for a PyTorch run, the reference's manifest; frame 1 the
 * source. An unknown run or candidate is not-found; a candidate that is
 * not correct (or a run with none) is bad-request, with the reason. */
void kf_coord_on_export (kf_coord_t *self, zsock_t *sock, zframe_t *route, kf_msg_t *msg);

#endif
