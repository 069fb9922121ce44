/*  kf_coord_source.h - the SOURCE client request: any candidate of a run,
 *  correct or not, with its source, its verdict detail, the compiler's
 *  log and the times behind its speedup (`kfctl source`; proto/PROTOCOL.md,
 *  "Client messages").
 */
#ifndef KF_COORD_SOURCE_H
#define KF_COORD_SOURCE_H

#include "kf_coord_internal.h"

/* Answers SOURCE {run_id, candidate_id} on SOCK to ROUTE: SOURCE {run_id,
 * candidate, compile_log} with the source as frame 1 (empty when the
 * candidate never got one). An unknown run or candidate is not-found. */
void kf_coord_on_source (kf_coord_t *self, zsock_t *sock, zframe_t *route, kf_msg_t *msg);

#endif
