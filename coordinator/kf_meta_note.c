/*  kf_meta_note.c - the kernel prompt's line on the sections' prompt
 *  version and the meta rounds (kf_meta_note.h).
 */
#include "kf_meta_note.h"
#include "kf_json.h"
#include "kf_meta_prompt.h"
#include <stdbool.h>
#include <string.h>

//  The last round's rejected edits shown at most, each cut at a word
//  within S_REASON_MAX bytes: the line stays one line.
#define S_REASONS_SHOWN 2
#define S_REASON_MAX 120

json_t *
kf_meta_state (kf_db_t *db, int64_t run_id)
{
    bool failed = false;
    json_t *open = kf_db_row_id (
        db,
        "SELECT (payload->>'round')::int AS round, (payload->>'generation')::int AS generation,"
        " (payload->>'parent_version')::int AS parent_version,"
        " to_char(created_at AT TIME ZONE 'UTC', 'HH24:MI \"UTC\"') AS since"
        " FROM jobs WHERE run_id = $1 AND kind = 'meta' AND state IN ('queued', 'leased')"
        " ORDER BY id DESC LIMIT 1",
        run_id, &failed);
    if (failed)
        return NULL;
    json_t *last = kf_db_row_id (
        db,
        "SELECT (j.payload->>'round')::int AS round,"
        " (j.payload->>'generation')::int AS generation, j.state, j.reason,"
        " (SELECT count(*) FROM prompt_edits e WHERE e.job_id = j.id AND e.accepted)"
        "  AS accepted,"
        " (SELECT number FROM prompt_versions v WHERE v.meta_job_id = j.id) AS made,"
        " (SELECT jsonb_agg(jsonb_build_object('section', coalesce(e.section, ''),"
        "   'reason', coalesce(e.reason, '')) ORDER BY e.id)"
        "  FROM prompt_edits e WHERE e.job_id = j.id AND NOT e.accepted) AS rejected"
        " FROM jobs j WHERE j.run_id = $1 AND j.kind = 'meta' AND j.state IN ('done', 'failed')"
        " ORDER BY j.id DESC LIMIT 1",
        run_id, &failed);
    if (failed) {
        json_decref (open);
        return NULL;
    }
    kf_json_drop_nulls (open);
    kf_json_drop_nulls (last);
    json_t *state = json_object ();
    if (open)
        json_object_set_new (state, "in_flight", open);
    if (last)
        json_object_set_new (state, "last_round", last);
    return state;
}

//  "round 2, queued at generation 5" for a meta job's row.
static void
s_round (FILE *f, json_t *r)
{
    fprintf (f, "round %lld", (long long) kf_jint (r, "round"));
    if (json_is_integer (json_object_get (r, "generation")))
        fprintf (f, ", queued at generation %lld", (long long) kf_jint (r, "generation"));
}

//  The last round that ended, in one line, when it rejected edits or
//  failed; nothing when all it proposed made the version shown.
static void
s_last_round (FILE *f, json_t *last)
{
    if (!last)
        return;
    json_t *rejected = json_object_get (last, "rejected");
    size_t n = json_array_size (rejected);
    bool failed = !strcmp (kf_jstr (last, "state"), "failed");
    if (!failed && n == 0)
        return;
    fputs ("(The last meta round, ", f);
    s_round (f, last);
    if (failed) {
        fputs (", failed and made no new version", f);
        if (*kf_jstr (last, "reason")) {
            fputs (": ", f);
            kf_meta_quote_cut (f, kf_jstr (last, "reason"), S_REASON_MAX);
        }
        fputs (".)\n", f);
        return;
    }
    int64_t accepted = kf_jint (last, "accepted");
    if (kf_jint (last, "made"))
        fprintf (f, ", made v%lld from %lld edit%s and had %zu rejected: ",
                 (long long) kf_jint (last, "made"), (long long) accepted,
                 accepted == 1 ? "" : "s", n);
    else
        fputs (", made no new version: what it proposed was rejected: ", f);
    size_t i;
    json_t *e;
    json_array_foreach (rejected, i, e) {
        if (i == S_REASONS_SHOWN) {
            fprintf (f, "; and %zu more", n - i);
            break;
        }
        fputs (i ? "; " : "", f);
        if (*kf_jstr (e, "section"))
            fprintf (f, "%s: ", kf_jstr (e, "section"));
        kf_meta_quote_cut (f, kf_jstr (e, "reason"), S_REASON_MAX);
    }
    fputs (".)\n", f);
}

void
kf_meta_version_line (FILE *f, const kf_prompt_in_t *in)
{
    int version = in->prompt_version;
    if (version <= 0)
        return;
    json_t *state = json_object_get (in->sections, KF_META_NOTE_KEY);
    json_t *newer = json_object_get (state, "newer");
    json_t *flight = json_object_get (state, "in_flight");
    if (version == 1 && !newer)
        fputs ("\n(The four sections below are the original ones, prompt version v1: no "
               "meta-prompter has rewritten them in this run yet.", f);
    else if (version == 1)
        fputs ("\n(The four sections below are the original ones, prompt version v1.", f);
    else
        fprintf (f, "\n(The four sections below are of prompt version v%d, rewritten by the "
                 "meta-prompter at generation %d from the outcomes so far.", version,
                 in->prompt_version_generation);
    //  A newer version this attempt was not given (kf_meta_pick's reason).
    if (newer) {
        fprintf (f, " v%lld, written by the meta-prompter at generation %lld, was passed over "
                 "for this attempt", (long long) kf_jint (newer, "number"),
                 (long long) kf_jint (newer, "generation"));
        if (*kf_jstr (newer, "why")) {
            fputs (": ", f);
            kf_meta_quote_cut (f, kf_jstr (newer, "why"), 400);
        }
        fputs (".", f);
    }
    //  A round in flight: its version, if it makes one, is drawn only by
    //  the attempts planned after its reply is judged (this prompt was
    //  written when this attempt was planned).
    if (flight) {
        int64_t parent = kf_jint (flight, "parent_version");
        fputs (" A meta round rewriting ", f);
        if (parent && parent != version)
            fprintf (f, "v%lld's sections", (long long) parent);
        else
            fputs ("these sections", f);
        fputs (" has been in flight", f);
        if (*kf_jstr (flight, "since"))
            fprintf (f, " since %s", kf_jstr (flight, "since"));
        fputs (" (", f);
        s_round (f, flight);
        fputs ("): the version it makes, if its edits are accepted, applies to the attempts "
               "planned after its reply is judged, not to this one.", f);
    }
    fputs (")\n", f);
    s_last_round (f, json_object_get (state, "last_round"));
}
