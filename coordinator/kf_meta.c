/*  kf_meta.c - meta-prompt evolution (kf_meta.h).
 *
 *  A run's prompt versions live in prompt_versions, numbered 1, 2, ... per
 *  run; version 1 is the default sections. A meta job is queued when the
 *  run's finished candidates pass the next multiple of meta_every x
 *  population (runs.meta_rounds counts the rounds queued, moved on with a
 *  compare-and-set so a replay queues nothing twice; kf_meta_score.c has
 *  the schedule and how versions are scored). The job carries the
 *  sections of the version new kernels are written with now (the one
 *  kf_meta_pick draws, so a version on trial is edited, not dropped), and
 *  why it is that one, the recent outcomes
 *  with their figures straight from the evaluations table, the code
 *  behind the best and the worst of them (both kf_meta_outcomes.c), and a prompt
 *  for a model that explains the edit format. Its reply is text: the
 *  edits are parsed and checked in the coordinator (kf_meta_edits.c), not
 *  in the gateway, because only the coordinator knows the sections and
 *  the limits. Every proposed edit is logged in prompt_edits, accepted or
 *  rejected with the reason, so a meta-prompter that misbehaves is
 *  visible after the fact.
 */
#include "kf_meta.h"
#include "kf_json.h"
#include "kf_log.h"
#include "kf_meta_ideas.h"
#include "kf_meta_note.h"
#include "kf_meta_outcomes.h"
#include "kf_meta_prompt.h"
#include "kf_meta_guess.h"
#include "kf_meta_score.h"
#include "kf_prompt.h"
#include "kf_prompt_facts.h"
#include "kf_str.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

//  Outcomes shown to the meta-prompter (the longest kernel shown with them
//  is KF_META_SOURCE_MAX; the longest a section may grow is in
//  kf_meta_edits.c).
#define S_OUTCOMES_MAX 24

//  ---------------------------------------------------------------------
//  Settings

json_t *
kf_meta_settings (json_t *config)
{
    json_t *on = json_object_get (config, "meta_prompting");
    json_t *every = json_object_get (config, "meta_every");
    json_t *edits = json_object_get (config, "meta_max_edits");
    json_t *size = json_object_get (config, "prompt_archive");
    const char *model = json_string_value (json_object_get (config, "meta_model"));
    //  Without a model of its own the meta-prompter is the run's first
    //  model: a run that names only "offline" gets the rule-based one.
    if (!model)
        model = json_string_value (json_object_get (config, "first_model"));
    if (!model)
        model = json_string_value (
            json_object_get (json_array_get (json_object_get (config, "models"), 0), "model"));
    return json_pack ("{s:b, s:I, s:I, s:I, s:s}", "meta_prompting",
                      on ? json_is_true (on) : 1, "meta_every",
                      (json_int_t) (json_integer_value (every) > 0 ? json_integer_value (every)
                                                                   : KF_META_EVERY),
                      "meta_max_edits",
                      (json_int_t) (json_integer_value (edits) > 0 ? json_integer_value (edits)
                                                                   : KF_META_MAX_EDITS),
                      "prompt_archive",
                      (json_int_t) (json_integer_value (size) > 0 ? json_integer_value (size)
                                                                  : KF_META_ARCHIVE),
                      "meta_model", model ? model : "offline");
}

//  ---------------------------------------------------------------------
//  Versions in the database

static json_t *
s_run (kf_search_t *self, int64_t run_id)
{
    char id[24];
    const char *params[1] = { S_I64 (id, run_id) };
    return kf_db_row (self->db,
                      "SELECT r.id, r.status, r.language, r.target, r.seed, r.population,"
                      " r.generations, r.generation, r.config, r.meta_rounds, r.best_speedup,"
                      " coalesce(r.spec, t.spec) AS spec"
                      " FROM runs r JOIN tasks t ON t.id = r.task_id WHERE r.id = $1",
                      1, params, NULL);
}

//  The run's version 1 (the defaults), created when missing.
static int
s_ensure_root (kf_search_t *self, json_t *run)
{
    json_t *dflt = kf_prompt_default_sections_for (kf_jstr (run, "language"),
                                                   kf_jstr (run, "target"),
                                                   json_object_get (run, "spec"));
    char *text = json_dumps (dflt, JSON_COMPACT);
    json_decref (dflt);
    char id[24];
    const char *params[2] = { S_I64 (id, kf_jint (run, "id")), text };
    long n = kf_db_exec (self->db,
                         "INSERT INTO prompt_versions (run_id, number, sections)"
                         " VALUES ($1, 1, $2) ON CONFLICT (run_id, number) DO NOTHING",
                         2, params);
    free (text);
    return n < 0 ? -1 : 0;
}

//  The run's archive of versions, newest first, with the kernels written
//  with each (open ones included): what kf_meta_pick draws from.
static json_t *
s_versions (kf_search_t *self, int64_t run_id)
{
    char id[24];
    const char *params[1] = { S_I64 (id, run_id) };
    return kf_db_query (
        self->db,
        "SELECT v.id, v.number, v.generation, v.sections, v.fitness,"
        " (SELECT count(*) FROM candidates c WHERE c.prompt_version_id = v.id) AS used,"
        " (SELECT count(*) FROM candidates c WHERE c.prompt_version_id = v.id"
        "  AND c.finished_at IS NOT NULL) AS finished"
        " FROM prompt_versions v WHERE v.run_id = $1 AND v.in_archive"
        " ORDER BY v.number DESC",
        1, params);
}

//  The guess lines of SECTIONS that outcomes since have tested, as a
//  kernel prompt lists them after the sections (kf_meta_guess_tested),
//  under KF_META_TESTED_KEY; nothing where there are none.
static void
s_guesses_tested (kf_search_t *self, json_t *run, json_t *sections, int64_t number)
{
    json_t *lines = kf_meta_guess_lines (sections);
    size_t n = json_array_size (lines);
    json_decref (lines);
    if (!n)
        return;
    json_t *outcomes = kf_meta_outcomes (self->db, kf_jint (run, "id"), S_OUTCOMES_MAX);
    json_t *history = kf_meta_history (self->db, kf_jint (run, "id"));
    char *text = NULL;
    size_t size = 0;
    FILE *f = outcomes ? open_memstream (&text, &size) : NULL;
    if (f) {
        kf_meta_outcome_ideas (run, outcomes);
        kf_meta_guess_tested (f, sections, outcomes, history, number);
        fclose (f);
        if (size)
            json_object_set_new (sections, KF_META_TESTED_KEY, json_string (text));
    }
    free (text);
    json_decref (outcomes);
    json_decref (history);
}

json_t *
kf_meta_sections (kf_search_t *self, int64_t run_id, int64_t *version_id)
{
    if (version_id)
        *version_id = 0;
    json_t *run = s_run (self, run_id);
    if (!run)
        return NULL;
    json_t *settings = kf_meta_settings (json_object_get (run, "config"));
    bool on = json_is_true (json_object_get (settings, "meta_prompting"));
    json_decref (settings);
    if (!on) {
        json_t *dflt = kf_prompt_default_sections_for (kf_jstr (run, "language"),
                                                       kf_jstr (run, "target"),
                                                       json_object_get (run, "spec"));
        json_decref (run);
        return dflt;
    }
    if (s_ensure_root (self, run)) {
        json_decref (run);
        return NULL;
    }
    //  A new version first gets a fair trial (a generation's worth of
    //  candidates), newest first; after that the version of the highest
    //  score: the mean fitness of its recent candidates plus a bonus that
    //  shrinks as it is used (kf_meta_score.h). The newest wins a tie, and
    //  everything it reads is in the database, so a replay picks the same.
    json_t *versions = s_versions (self, run_id);
    char why[400];
    json_t *pick = kf_meta_pick (versions, kf_jint (run, "population"), why, sizeof why);
    json_t *sections = NULL;
    if (pick) {
        sections = json_copy (json_object_get (pick, "sections"));
        if (version_id)
            *version_id = kf_jint (pick, "id");
    }
    //  Where the meta rounds stand, for the kernel prompt's version line
    //  (kf_meta_note.h): a round in flight, the last one's rejections, a
    //  newer version passed over and why.
    json_t *state = sections ? kf_meta_state (self->db, run_id) : NULL;
    json_t *newest = json_array_get (versions, 0);
    if (state && newest && newest != pick)
        json_object_set_new (state, "newer",
                             json_pack ("{s:I, s:I, s:s}", "number",
                                        (json_int_t) kf_jint (newest, "number"), "generation",
                                        (json_int_t) kf_jint (newest, "generation"), "why",
                                        why));
    if (sections && !state) {
        json_decref (sections);
        sections = NULL;   //  a database error
    }
    else if (sections) {
        json_object_set_new (sections, KF_META_NOTE_KEY, state);
        s_guesses_tested (self, run, sections, kf_jint (pick, "number"));
    }
    json_decref (versions);
    json_decref (run);
    return sections;
}

int
kf_meta_attach (kf_search_t *self, int64_t candidate_id, int64_t version_id)
{
    if (!version_id)
        return 0;
    char c[24], v[24];
    const char *params[2] = { S_I64 (c, candidate_id), S_I64 (v, version_id) };
    return kf_db_exec (self->db, "UPDATE candidates SET prompt_version_id = $2 WHERE id = $1",
                       2, params) < 0 ? -1 : 0;
}

//  ---------------------------------------------------------------------
//  The meta job

//  Queues the run's next meta job (RUN is its row, SETTINGS its settings).
static int
s_queue_meta (kf_search_t *self, json_t *run, json_t *settings, int round)
{
    int64_t run_id = kf_jint (run, "id");
    char id[24], rnd[24];
    const char *params[2] = { S_I64 (id, run_id), S_I64 (rnd, round) };
    //  The parent: the version the search writes kernels with now, drawn
    //  as kf_meta_sections draws it. (Until round 4 it was the fittest,
    //  where a version on trial counted 0: a round edited v1 while v2 was
    //  on trial, and v2's accepted edits were lost to every later version.)
    json_t *versions = s_versions (self, run_id);
    char why[400];
    json_t *parent = json_incref (kf_meta_pick (versions, kf_jint (run, "population"), why,
                                                sizeof why));
    json_decref (versions);
    if (!parent)
        return 0;   //  no version yet: the search never asked for sections
    //  Nothing written with it has finished: the round waits, due still,
    //  for its first verdict (kf_meta_judged), and a later one queues it.
    if (!kf_meta_judged (parent)) {
        kf_debug ("run %lld: meta round %d waits for a verdict on v%lld", (long long) run_id,
                  round + 1, (long long) kf_jint (parent, "number"));
        json_decref (parent);
        return 0;
    }
    //  Moves the round on only from ROUND: a replayed completion finds it
    //  moved and queues nothing.
    long moved = kf_db_exec (self->db,
                             "UPDATE runs SET meta_rounds = $2::int + 1 WHERE id = $1"
                             " AND meta_rounds = $2::int",
                             2, params);
    if (moved <= 0) {
        json_decref (parent);
        return moved < 0 ? -1 : 0;
    }
    json_t *outcomes = kf_meta_outcomes (self->db, run_id, S_OUTCOMES_MAX);
    if (!outcomes)
        outcomes = json_array ();
    kf_meta_outcome_ideas (run, outcomes);
    json_t *best_outcome = NULL, *worst_outcome = NULL;
    if (kf_meta_extremes (self->db, outcomes, &best_outcome, &worst_outcome)) {
        json_decref (outcomes);
        json_decref (parent);
        return -1;
    }
    json_t *best = NULL;
    json_t *best_row = kf_db_row (self->db,
                                  "SELECT best_candidate_id FROM runs WHERE id = $1", 1, params,
                                  NULL);
    if (kf_jint (best_row, "best_candidate_id"))
        best = kf_prompt_kernel (self->db, kf_jint (best_row, "best_candidate_id"));
    json_decref (best_row);
    int max_edits = (int) kf_jint (settings, "meta_max_edits");
    json_t *sections = json_object_get (parent, "sections");
    json_t *history = kf_meta_history (self->db, run_id);
    char backend[32], arch[64];
    kf_search_split_target (kf_jstr (run, "target"), backend, sizeof backend, arch, sizeof arch);
    kf_meta_base_t base = { .number = kf_jint (parent, "number"), .why = why,
                            .population = (int) kf_jint (run, "population"),
                            .hardware = kf_prompt_hardware (self->db, backend, arch, run_id),
                            .output_range = NULL };
    json_t *manifest = kf_prompt_manifest (self->db, run_id);
    base.output_range = kf_prompt_output_range (manifest);
    json_decref (manifest);
    if (best)
        kf_meta_outcomes_awaiting (outcomes, kf_jint (best, "id"), kf_jnum (best, "speedup", 0));
    char *prompt = kf_meta_prompt_text (run, sections, &base, outcomes, max_edits, best,
                                        best_outcome, worst_outcome, history);
    json_decref (base.hardware);
    json_decref (base.output_range);
    json_decref (history);
    size_t i;
    json_t *o;
    json_array_foreach (outcomes, i, o)
        json_object_del (o, "source");   //  the prompt's; the job needs none
    json_t *payload = json_pack ("{s:s, s:s, s:s, s:O, s:I, s:I, s:s, s:o, s:i, s:s, s:f, s:i,"
                                 " s:i}",
                                 "model", kf_jstr (settings, "meta_model"), "language",
                                 kf_jstr (run, "language"), "task_name",
                                 kf_jstr (json_object_get (run, "spec"), "name"), "sections",
                                 sections, "parent_version_id",
                                 (json_int_t) kf_jint (parent, "id"), "parent_version",
                                 (json_int_t) kf_jint (parent, "number"), "parent_reason", why,
                                 "outcomes",
                                 outcomes, "max_edits", max_edits,
                                 "prompt", prompt ? prompt : "", "temperature", 0.3,
                                 "round", round + 1, "generation",
                                 (int) kf_jint (run, "generation"));
    if (best && *kf_jstr (best, "source"))
        json_object_set_new (payload, "best",
                             json_pack ("{s:O, s:O}", "speedup",
                                        json_object_get (best, "speedup"), "candidate_id",
                                        json_object_get (best, "id")));
    json_t *ends[2] = { best_outcome, worst_outcome };
    static const char *const end_keys[2] = { "best_outcome", "worst_outcome" };
    for (int e = 0; e < 2 && payload; e++)
        if (ends[e])
            json_object_set_new (payload, end_keys[e],
                                 json_pack ("{s:I, s:s, s:O?}", "candidate_id",
                                            (json_int_t) kf_jint (ends[e], "id"), "status",
                                            kf_jstr (ends[e], "status"), "speedup",
                                            json_object_get (ends[e], "speedup")));
    free (prompt);
    json_decref (best);
    json_decref (best_outcome);
    json_decref (worst_outcome);
    json_decref (parent);
    char *text = payload ? json_dumps (payload, JSON_COMPACT) : NULL;
    json_decref (payload);
    if (!text)
        return -1;
    char attempts[24], lease[24];
    const char *jp[4] = { id, text, S_I64 (attempts, self->max_attempts),
                          S_I64 (lease, self->lease_ms[0]) };
    long rc = kf_db_exec (self->db,
                          "INSERT INTO jobs (run_id, role, kind, payload, max_attempts, lease_ms)"
                          " VALUES ($1, 'generate', 'meta', $2, $3, $4)",
                          4, jp);
    free (text);
    if (rc < 0)
        return -1;
    kf_info ("run %lld: meta-prompt round %d queued", (long long) run_id, round + 1);
    return 0;
}

//  Every version's fitness of RUN_ID: the mean value of its last
//  KF_META_WINDOW finished kernels against the run's best speedup so far
//  (kf_meta_score.h). All of them, since a new best moves every
//  version's figure; recomputed, not incremented, so calling this twice
//  changes nothing.
int
kf_meta_refit (kf_search_t *self, int64_t run_id)
{
    char id[24], window[24], least[32];
    snprintf (least, sizeof least, "%.17g", KF_META_CORRECT);
    const char *params[3] = { S_I64 (id, run_id), S_I64 (window, KF_META_WINDOW), least };
    json_t *rows = kf_db_query (
        self->db,
        "SELECT v.id, (SELECT max(speedup) FROM candidates WHERE run_id = $1"
        "  AND finished_at IS NOT NULL AND fitness >= $3::float8 AND speedup > 0) AS best,"
        " (SELECT jsonb_agg(jsonb_build_array(w.fitness, w.speedup)) FROM (SELECT fitness,"
        "  speedup FROM candidates WHERE prompt_version_id = v.id AND finished_at IS NOT NULL"
        "  ORDER BY finished_at DESC, id DESC LIMIT $2::int) w) AS kernels"
        " FROM prompt_versions v WHERE v.run_id = $1 ORDER BY v.id",
        3, params);
    if (!rows)
        return -1;
    int rc = 0;
    size_t i;
    json_t *row;
    json_array_foreach (rows, i, row) {
        double mean = 0;
        char vid[24], fit[40];
        bool has = kf_meta_fitness (json_object_get (row, "kernels"),
                                    kf_jnum (row, "best", 0), &mean);
        if (has)
            snprintf (fit, sizeof fit, "%.17g", mean);
        const char *up[2] = { S_I64 (vid, kf_jint (row, "id")), has ? fit : NULL };
        if (kf_db_exec (self->db, "UPDATE prompt_versions SET fitness = $2::float8"
                                  " WHERE id = $1 AND fitness IS DISTINCT FROM $2::float8",
                        2, up) < 0) {
            rc = -1;
            break;
        }
    }
    json_decref (rows);
    return rc;
}

int
kf_meta_after_candidate (kf_search_t *self, int64_t run_id, int64_t candidate_id)
{
    char cand[24], id[24];
    const char *cp[1] = { S_I64 (cand, candidate_id) };
    if (kf_db_exec (self->db,
                    "UPDATE prompt_versions v SET"
                    " best_speedup = (SELECT max(speedup) FROM candidates"
                    "  WHERE prompt_version_id = v.id AND status = 'correct'),"
                    " candidates = (SELECT count(*) FROM candidates"
                    "  WHERE prompt_version_id = v.id AND finished_at IS NOT NULL)"
                    " WHERE v.id = (SELECT prompt_version_id FROM candidates WHERE id = $1)",
                    1, cp) < 0
        || kf_meta_refit (self, run_id))
        return -1;
    json_t *run = s_run (self, run_id);
    if (!run)
        return -1;
    json_t *settings = kf_meta_settings (json_object_get (run, "config"));
    int rc = 0;
    if (json_is_true (json_object_get (settings, "meta_prompting"))
        && !strcmp (kf_jstr (run, "status"), "running")) {
        const char *rp[1] = { S_I64 (id, run_id) };
        json_t *counts = kf_db_row (self->db,
                                    "SELECT (SELECT count(*) FROM candidates WHERE run_id = $1"
                                    "  AND finished_at IS NOT NULL) AS finished,"
                                    " (SELECT count(*) FROM candidates WHERE run_id = $1"
                                    "  AND phase = 'search') AS planned,"
                                    " (SELECT count(*) FROM jobs WHERE run_id = $1"
                                    "  AND kind = 'meta' AND state IN ('queued', 'leased'))"
                                    "  AS open, (SELECT count(*) FROM candidates"
                                    "  WHERE run_id = $1 AND fidelity = 'pending') AS pending",
                                    1, rp, NULL);
        int generations = (int) kf_jint (run, "generations");
        int population = (int) kf_jint (run, "population");
        int interval = kf_meta_interval ((int) kf_jint (settings, "meta_every"), generations);
        int64_t total = (int64_t) generations * population;
        int round = (int) kf_jint (run, "meta_rounds");
        //  One meta job at a time; none once every candidate of the main
        //  search is planned (nothing would be written with what it
        //  proposes); in a short run, rounds come more often than
        //  meta_every (kf_meta_score.h).
        //  A round waits (a while) for the full-protocol figures of
        //  kernels whose screen asked for one, so it shows them
        //  (kf_meta_waits; kf_fidelity.c calls again when one lands).
        if (counts && kf_jint (counts, "open") == 0
            && kf_meta_due (round, kf_jint (counts, "finished"), kf_jint (counts, "planned"),
                            total, interval, population)
            && !kf_meta_waits (round, kf_jint (counts, "finished"), interval, population,
                               kf_jint (counts, "pending")))
            rc = s_queue_meta (self, run, settings, round);
        json_decref (counts);
    }
    json_decref (settings);
    json_decref (run);
    return rc;
}

static int
s_log_edit (kf_search_t *self, int64_t run_id, int64_t job_id, int64_t parent_id,
            int64_t version_id, json_t *entry)
{
    char run[24], job[24], parent[24], version[24];
    const char *params[9] = { S_I64 (run, run_id), S_I64 (job, job_id),
                              parent_id ? S_I64 (parent, parent_id) : NULL,
                              version_id ? S_I64 (version, version_id) : NULL,
                              json_string_value (json_object_get (entry, "section")),
                              kf_jstr (entry, "search"), kf_jstr (entry, "replace"),
                              json_is_true (json_object_get (entry, "accepted")) ? "true"
                                                                                : "false",
                              json_string_value (json_object_get (entry, "reason")) };
    if (!json_is_true (json_object_get (entry, "accepted")))
        kf_warn ("run %lld: meta job %lld: edit rejected: %s", (long long) run_id,
                 (long long) job_id, kf_jstr (entry, "reason"));
    return kf_db_exec (self->db,
                       "INSERT INTO prompt_edits (run_id, job_id, parent_id, version_id,"
                       " section, search, replace, accepted, reason)"
                       " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                       9, params) < 0 ? -1 : 0;
}

int
kf_meta_job_done (kf_search_t *self, json_t *job, const kf_generate_result_t *result)
{
    if (strcmp (kf_jstr (job, "kind"), "meta") != 0)
        return 0;
    int64_t run_id = kf_jint (job, "run_id");
    int64_t job_id = kf_jint (job, "id");
    char jid[24], rid[24];
    const char *jp[1] = { S_I64 (jid, job_id) };
    bool failed;
    json_t *seen = kf_db_row (self->db, "SELECT 1 AS seen FROM prompt_edits WHERE job_id = $1"
                                        " LIMIT 1", 1, jp, &failed);
    if (failed)
        return -1;
    if (seen) {
        json_decref (seen);
        return 0;   //  a replay: its edits were judged already
    }
    json_t *row = kf_db_row (self->db, "SELECT payload FROM jobs WHERE id = $1", 1, jp, NULL);
    json_t *payload = json_object_get (row, "payload");
    int64_t parent_id = kf_jint (payload, "parent_version_id");
    //  What the round was shown: its edits are held to the evidence rules
    //  the prompt stated (kf_meta_edits.h).
    json_t *shown = json_incref (json_object_get (payload, "outcomes"));
    char pid[24];
    const char *pp[1] = { S_I64 (pid, parent_id) };
    json_t *parent = kf_db_row (self->db,
                                "SELECT v.id, v.number, v.sections, r.generation, r.config,"
                                " r.language, r.target, coalesce(r.spec, t.spec) AS spec"
                                " FROM prompt_versions v JOIN runs r ON r.id = v.run_id"
                                " JOIN tasks t ON t.id = r.task_id WHERE v.id = $1",
                                1, pp, NULL);
    json_decref (row);
    if (!parent) {
        json_decref (shown);
        return 0;   //  nothing to edit (a job from before a restore)
    }
    json_t *settings = kf_meta_settings (json_object_get (parent, "config"));
    int max_edits = (int) kf_jint (settings, "meta_max_edits");
    json_decref (settings);
    const char *text = result->text;
    json_t *edits = kf_meta_parse_edits (text);
    //  The rest of the prompt, so an edit aimed at it can be named as such.
    kf_prompt_in_t in = { .spec = json_object_get (parent, "spec"),
                          .language = kf_jstr (parent, "language"),
                          .target = kf_jstr (parent, "target"),
                          .sections = json_object_get (parent, "sections") };
    char *outside = kf_prompt_build (&in);
    //  The task's own text, which a factual correction of the philosophy
    //  quotes (kf_meta_edits.h): the description and the reference code
    //  the meta prompt showed.
    json_t *spec = json_object_get (parent, "spec");
    char *task = kf_strdupf ("%s\n%s", kf_jstr (spec, "description"),
                             kf_jstr (json_object_get (spec, "reference"), "source"));
    kf_meta_rules_t rules = { .outcomes = shown, .task = task };
    json_t *log = NULL;
    json_t *sections = kf_meta_apply_edits_ruled (json_object_get (parent, "sections"), edits,
                                                  max_edits, outside, &rules, &log);
    //  The guesses the reply retracts (kf_meta_guess.h), numbered as the
    //  prompt listed the parent's.
    json_t *retractions = kf_meta_parse_retractions (text);
    int retracted = 0;
    json_t *kept = kf_meta_apply_retractions (json_object_get (parent, "sections"), sections,
                                              retractions, max_edits, log, &retracted);
    json_decref (retractions);
    if (kept) {
        json_decref (sections);
        sections = kept;
    }
    //  The idea list's edits (kf_meta_ideas.h), logged with the others.
    json_t *ideas = kf_meta_idea_list (sections, spec,
                                       kf_prompt_target_kind (kf_jstr (parent, "target"),
                                                              kf_jstr (parent, "language")));
    json_t *idea_edits = kf_meta_parse_idea_edits (text);
    int ideas_changed = 0;
    json_t *edited = kf_meta_apply_idea_edits (ideas, idea_edits, max_edits, log,
                                               &ideas_changed);
    if (ideas_changed)
        json_object_set (sections, KF_META_IDEAS_KEY, edited);
    json_decref (edited);
    json_decref (ideas);
    json_decref (idea_edits);
    json_decref (shown);
    free (task);
    free (outside);
    int rc = 0;
    int64_t version_id = 0;
    json_t *accepted = json_array ();
    size_t i;
    json_t *entry;
    json_array_foreach (log, i, entry)
        if (json_is_true (json_object_get (entry, "accepted")))
            json_array_append_new (accepted,
                                   json_pack ("{s:O, s:O, s:O}", "section",
                                              json_object_get (entry, "section"), "search",
                                              json_object_get (entry, "search"), "replace",
                                              json_object_get (entry, "replace")));
    if (json_array_size (accepted)) {
        char *stext = json_dumps (sections, JSON_COMPACT);
        char *etext = json_dumps (accepted, JSON_COMPACT);
        char gen[24];
        const char *vp[6] = { S_I64 (rid, run_id), pid,
                              S_I64 (gen, kf_jint (parent, "generation")), stext, etext, jid };
        json_t *created = kf_db_row (
            self->db,
            "INSERT INTO prompt_versions (run_id, number, parent_id, generation, sections,"
            " edits, meta_job_id) SELECT $1, coalesce(max(number), 0) + 1, $2, $3, $4, $5, $6"
            " FROM prompt_versions WHERE run_id = $1 RETURNING id, number",
            6, vp, NULL);
        free (stext);
        free (etext);
        if (!created)
            rc = -1;
        else {
            version_id = kf_jint (created, "id");
            kf_info ("run %lld: prompt v%lld from v%lld by %zu edit%s", (long long) run_id,
                     (long long) kf_jint (created, "number"), (long long) kf_jint (parent, "number"),
                     json_array_size (accepted), json_array_size (accepted) == 1 ? "" : "s");
            char topic[64];
            snprintf (topic, sizeof topic, "run/%lld/", (long long) run_id);
            json_array_append_new (
                self->events,
                json_pack ("{s:s, s:{s:I, s:s, s:I, s:I, s:I}}", "topic", topic, "body",
                           "run_id", (json_int_t) run_id, "event", "prompt", "version",
                           (json_int_t) kf_jint (created, "number"), "parent",
                           (json_int_t) kf_jint (parent, "number"), "edits",
                           (json_int_t) json_array_size (accepted)));
            json_decref (created);
        }
    }
    if (rc == 0 && json_array_size (log) == 0) {
        //  Why there was nothing, when the gateway said (a reply cut off
        //  by max_tokens, an empty one).
        char why[300];
        snprintf (why, sizeof why, "the reply holds no SEARCH/REPLACE edit%s%.40s%s%.200s",
                  *result->error_kind ? ": " : "", result->error_kind,
                  *result->detail ? ": " : "", result->detail);
        json_t *none = json_pack ("{s:s, s:s, s:b, s:s}", "search", "", "replace", "",
                                  "accepted", 0, "reason", why);
        rc = s_log_edit (self, run_id, job_id, parent_id, 0, none);
        json_decref (none);
    }
    json_array_foreach (log, i, entry)
        if (rc == 0)
            rc = s_log_edit (self, run_id, job_id, parent_id,
                             json_is_true (json_object_get (entry, "accepted")) ? version_id : 0,
                             entry);
    if (rc == 0 && version_id) {
        //  The archive keeps the fittest versions; one not tried yet
        //  (no fitness) is kept until it has been.
        json_t *rrow = kf_db_row (self->db, "SELECT config FROM runs WHERE id = $1", 1,
                                  (const char *[]) { rid }, NULL);
        json_t *st = kf_meta_settings (json_object_get (rrow, "config"));
        char size[24];
        const char *ap[2] = { rid, S_I64 (size, kf_jint (st, "prompt_archive")) };
        json_decref (st);
        json_decref (rrow);
        if (kf_db_exec (self->db,
                        "UPDATE prompt_versions SET in_archive = false WHERE id IN ("
                        " SELECT id FROM prompt_versions WHERE run_id = $1 AND in_archive"
                        " ORDER BY fitness IS NULL DESC, fitness DESC, number DESC"
                        " OFFSET $2::int)",
                        2, ap) < 0)
            rc = -1;
    }
    json_decref (accepted);
    json_decref (log);
    json_decref (sections);
    json_decref (edits);
    json_decref (parent);
    return rc;
}

int
kf_meta_job_failed (kf_search_t *self, json_t *job, const char *reason)
{
    (void) self;
    kf_warn ("run %lld: meta job %lld failed for good: %s; the run keeps its prompt versions",
             (long long) kf_jint (job, "run_id"), (long long) kf_jint (job, "id"),
             reason ? reason : "?");
    return 0;
}

json_t *
kf_meta_show (kf_db_t *db, int64_t run_id)
{
    char id[24];
    const char *params[1] = { S_I64 (id, run_id) };
    json_t *versions = kf_db_query (
        db,
        "SELECT v.id, v.number, p.number AS parent, v.generation, v.fitness,"
        " v.best_speedup, v.candidates, v.in_archive, v.edits, v.meta_job_id"
        " FROM prompt_versions v LEFT JOIN prompt_versions p ON p.id = v.parent_id"
        " WHERE v.run_id = $1 ORDER BY v.number",
        1, params);
    json_t *rejected = kf_db_query (
        db,
        "SELECT * FROM (SELECT id, job_id, section, left(search, 200) AS search, reason"
        " FROM prompt_edits WHERE run_id = $1 AND NOT accepted ORDER BY id DESC LIMIT 20) r"
        " ORDER BY id",
        1, params);
    json_t *jobs = kf_db_row (db,
                              "SELECT count(*) AS n FROM jobs WHERE run_id = $1 AND kind = 'meta'",
                              1, params, NULL);
    if (!versions || !rejected || !jobs) {
        json_decref (versions);
        json_decref (rejected);
        json_decref (jobs);
        return NULL;
    }
    json_t *out = json_pack ("{s:o, s:o, s:O}", "prompt_versions", versions,
                             "prompt_rejected", rejected, "meta_jobs",
                             json_object_get (jobs, "n"));
    json_decref (jobs);
    return out;
}
