/*  kf_meta_note.h - what a kernel prompt says of the meta-prompter: which
 *  prompt version its four evolvable sections come from, and where the
 *  meta rounds stand (kf_meta.h).
 *
 *  Round 11: two kernel prompts after a meta round still read "prompt
 *  version v1: no meta-prompter has rewritten them in this run yet". A
 *  run plans up to max_in_flight candidates (a generation's worth by
 *  default) ahead, and each one's prompt is written when it is planned:
 *  the kernels planned while the meta job waited for its model kept v1,
 *  and so did their prompts, with nothing saying a round was in flight
 *  or, later, that its edits had been rejected. The state is read where
 *  the sections are drawn (kf_meta_sections) and travels with them under
 *  KF_META_NOTE_KEY; the line is written here from it.
 */
#ifndef KF_META_NOTE_H
#define KF_META_NOTE_H

#include "kf_db.h"
#include "kf_prompt.h"
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

/* The key of the sections object (kf_meta_sections) that holds the meta
 * state below; kf_prompt.c writes the four sections by name only. */
#define KF_META_NOTE_KEY "meta_state"

/* The key of the sections object that holds kf_meta_guess_tested's text,
 * written after the sections (kf_meta_sections; absent: none tested). */
#define KF_META_TESTED_KEY "guesses_tested"

/* RUN_ID's meta rounds as a kernel prompt tells them (caller's; NULL on a
 * database error): {in_flight: {round, generation, since, parent_version}
 * when a meta job is queued or leased, last_round: {round, generation,
 * state, reason, accepted, made, rejected [{section, reason}]} for the
 * latest one that ended}, either absent when there is none. */
json_t *kf_meta_state (kf_db_t *db, int64_t run_id);

/* The line before the sections: their version (IN->prompt_version, 0:
 * nothing said), the generation that made it, and from the state under
 * KF_META_NOTE_KEY in IN->sections (may be absent), the round in flight
 * and that its version applies only to attempts planned after its reply
 * is judged, a newer version passed over and why ({newer: {number,
 * generation, why}}), and the last round's rejected edits or failure in
 * one line. */
void kf_meta_version_line (FILE *f, const kf_prompt_in_t *in);

#endif
