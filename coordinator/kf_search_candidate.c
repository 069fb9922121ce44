/*  kf_search_candidate.c - the candidate pipeline: generate -> compile ->
 *  evaluate -> final.
 *
 *  What each job of a candidate brings back moves it on: a source is
 *  stored, checked for a repeat and classified, then compiled; an
 *  artifact (or a tuned set of them) is evaluated against the reference;
 *  the first evaluation is recorded and, unless a full-protocol timing or
 *  a re-verification follows, makes the candidate final, with what
 *  follows from that (transition, archive, figures, meta credit, the
 *  next plans).
 */
#include "kf_search_int.h"
#include "kf_json.h"
#include "kf_text.h"
#include "kf_descriptor.h"
#include "kf_fidelity.h"
#include "kf_meta.h"
#include "kf_prompt_changed.h"
#include "kf_prompt_class.h"
#include "kf_prompt_target.h"
#include "kf_reference.h"
#include "kf_rename.h"
#include "kf_repeat.h"
#include "kf_str.h"
#include "kf_tune.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

/* Makes a candidate final. A correct one found suspicious was marked
 * pending just before (kf_verify_check), so it does not count yet. */
static int
s_finish_candidate (kf_search_t *self, int64_t run_id, int64_t cand_id,
                    const char *status, double speedup, const char *detail,
                    const char *log)
{
    bool correct = !strcmp (status, KF_SEARCH_CORRECT) && speedup > 0;
    char id[24], sp[40], fit[40];
    snprintf (sp, sizeof sp, "%.17g", speedup);
    snprintf (fit, sizeof fit, "%.17g", kf_search_fitness (status, speedup));
    const char *params[6] = { S_I64 (id, cand_id), status, correct ? sp : NULL,
                              fit, detail, log };
    json_t *row = kf_db_row (self->db,
                             "UPDATE candidates SET status = $2, speedup = $3,"
                             " fitness = $4, verdict_detail = $5,"
                             " log = coalesce($6, log), finished_at = now()"
                             " WHERE id = $1 AND finished_at IS NULL"
                             " RETURNING generation, slot, verify_state, fidelity",
                             6, params, NULL);
    if (!row)
        return 0;   /* already final: nothing to do twice */
    int generation = (int) kf_jint (row, "generation");
    bool verifying = !strcmp (kf_jstr (row, "verify_state"), "pending");
    char fidelity[16];
    snprintf (fidelity, sizeof fidelity, "%s", kf_jstr (row, "fidelity"));
    json_decref (row);
    /* The parent->child move for the gradient estimator: coordinates and
     * fitness before and after, and whether the child's coordinates were
     * new to the run (no candidate planned before it had them). A child
     * without coordinates (no source came back) moved nowhere. */
    if (kf_db_exec (self->db,
                    "INSERT INTO transitions (child_id, run_id, parent_id, parent_coords,"
                    " child_coords, parent_fitness, child_fitness, novel)"
                    " SELECT c.id, c.run_id, p.id, p.coords, c.coords, p.fitness, c.fitness,"
                    "  NOT EXISTS (SELECT 1 FROM candidates o WHERE o.run_id = c.run_id"
                    "   AND o.coords = c.coords AND o.id < c.id)"
                    " FROM candidates c JOIN candidates p ON p.id = c.parent_id"
                    " WHERE c.id = $1 AND c.coords IS NOT NULL AND p.coords IS NOT NULL"
                    "  AND p.fitness IS NOT NULL"
                    " ON CONFLICT (child_id) DO NOTHING",
                    1, params) < 0)
        return -1;
    /* A new elite is profiled too (kf_search_archive_offer). */
    if (correct && kf_search_archive_offer (self, run_id, cand_id, sp, fit))
        return -1;
    /* A result held for audit or waiting for its re-verification still
     * enters the archive, so the search keeps exploring from it; only the
     * figures reported as the run's result wait (kf_verify.c,
     * kf_search_audit). */
    if (correct) {
        json_t *figures = kf_search_run_figures (self, run_id);
        if (!figures)
            return -1;
        json_decref (figures);
    }
    json_t *event = json_pack ("{s:I, s:i, s:s, s:o}", "candidate_id", (json_int_t) cand_id,
                               "generation", generation, "status", status, "speedup",
                               correct ? json_real (speedup) : json_null ());
    if (correct && verifying)
        json_object_set_new (event, "verify_state", json_string ("pending"));
    if (correct && *fidelity)   /* a screen figure counts for nothing */
        json_object_set_new (event, "fidelity", json_string (fidelity));
    kf_search_event (self, run_id, "candidate", event);
    if (kf_meta_after_candidate (self, run_id, cand_id))
        return -1;
    /* Repeats of this source that waited for its verdict take it now. */
    if (kf_repeat_resolve (self, run_id, cand_id))
        return -1;
    return kf_search_fill (self, run_id);
}

/* Records what generating a candidate used and cost, on it and its run. */
static int
s_account (kf_search_t *self, int64_t run_id, int64_t cand_id, const kf_generate_result_t *gen)
{
    if (!gen->has_usage && !gen->has_cost)
        return 0;
    char cand[24], run[24], in[24], out[24], usd[40];
    char *usage_text = gen->usage ? json_dumps (gen->usage, JSON_COMPACT) : NULL;
    S_I64 (in, gen->input_tokens);
    S_I64 (out, gen->output_tokens);
    snprintf (usd, sizeof usd, "%.17g", gen->cost_usd);
    const char *cp[3] = { S_I64 (cand, cand_id), usage_text, usd };
    const char *rp[4] = { S_I64 (run, run_id), in, out, usd };
    int rc = kf_db_exec (self->db, "UPDATE candidates SET usage = $2, cost_usd = $3 WHERE id = $1",
                         3, cp) < 0
             || kf_db_exec (self->db, "UPDATE runs SET input_tokens = input_tokens + $2,"
                            " output_tokens = output_tokens + $3, cost_usd = cost_usd + $4"
                            " WHERE id = $1", 4, rp) < 0 ? -1 : 0;
    free (usage_text);
    return rc;
}

int
kf_search_generated (kf_search_t *self, json_t *run, int64_t cand_id,
                     const kf_generate_result_t *gen)
{
    int64_t run_id = kf_jint (run, "id");
    if (s_account (self, run_id, cand_id, gen))
        return -1;
    const char *source = gen->source;
    if (!*source) {
        /* The gateway says why (a response cut off by the token limit, an
         * empty one, one with no code); that is the candidate's verdict. */
        char detail[400];
        snprintf (detail, sizeof detail, "the generator returned no source%s%s%s%s",
                  *gen->error_kind ? ": " : "", gen->error_kind, *gen->detail ? ": " : "",
                  gen->detail);
        return s_finish_candidate (self, run_id, cand_id, "failed", 0, detail, NULL);
    }
    char hash[65], cand[24], blobs[80], backend[32], arch[320];
    if (kf_search_store_blob (self, source, strlen (source), hash))
        return -1;
    /* Round 29: the author's own words for what the try changes are read
     * once, here, and kept with the candidate for every later prompt that
     * lists it (kf_prompt_history, kf_lineage_children); round 30: and
     * how many vector arithmetic calls its code writes, which an idea's
     * credit compares with its parent's (kf_prompt_credit.h). */
    char said[KF_PROMPT_SAID_MAX + 1], arith[24];
    kf_prompt_changed_said (source, said, sizeof said);
    const char *sp[3] = { S_I64 (cand, cand_id), said,
                          S_I64 (arith, kf_prompt_source_arith (source)) };
    if (kf_db_exec (self->db,
                    "UPDATE candidates SET selection = coalesce(selection, '{}'::jsonb)"
                    " || jsonb_strip_nulls(jsonb_build_object('said', nullif($2, ''),"
                    " 'arith', nullif($3::int, -1))) WHERE id = $1",
                    3, sp) < 0)
        return -1;
    /* A source the run has judged before (comments and spacing aside) is
     * not compiled and timed again: its earlier verdict is reused; but
     * for a template swept again because its sweep was timed beside
     * other work. */
    char norm[65];
    int repeat = kf_repeat_check (self, run_id, cand_id, source, hash,
                                  gen->generator,
                                  json_is_true (kf_search_setting (self, run, "dedup"))
                                      && strcmp (gen->generator, KF_SEARCH_TEMPLATE_AGAIN),
                                  norm);
    if (repeat)
        return repeat < 0 ? -1 : 0;
    /* Coordinates come from the source alone (comments and strings removed
     * first), so they are known before the kernel is even compiled. */
    kf_coords_t c = { 0, 0, 0 };
    char *why = NULL, coords[48];
    kf_descriptor_classify (source, strlen (source), kf_jstr (run, "language"), &c, &why);
    snprintf (coords, sizeof coords, "{%d,%d,%d}", c.mem, c.algo, c.sync);
    /* Round 14: tries were told by the idea they were handed, not by what
     * their code did (a shared reciprocal, streaming stores under the
     * intrinsics idea). What the code does is read once, here, and kept
     * with the plan (kf_prompt_source_features' bits), so a try counts
     * for every idea its code added to its parent's. */
    char features[24];
    snprintf (features, sizeof features, "%u",
              kf_prompt_source_features (source, kf_jstr (run, "language")));
    const char *params[7] = { S_I64 (cand, cand_id), hash, gen->generator,
                              coords, why, norm, features };
    json_t *row = kf_db_row (self->db,
                             "UPDATE candidates SET source_hash = $2, generator = $3,"
                             " status = 'compiling', coords = $4::int[], coords_why = $5,"
                             " norm_hash = $6, selection = coalesce(selection, '{}'::jsonb)"
                             " || jsonb_build_object('features', $7::bigint)"
                             " WHERE id = $1 RETURNING phase",
                             7, params, NULL);
    free (why);
    if (!row)
        return -1;
    bool tuning = !strcmp (kf_jstr (row, "phase"), "tuning");
    json_decref (row);
    kf_search_split_target (kf_jstr (run, "target"), backend, sizeof backend, arch, sizeof arch);
    /* A host kernel is built for the instruction sets its exec hosts
     * share, not for the compile host's CPU (common/kf_isa.h): the list
     * travels as the target's arch, which the cc toolchain turns into
     * -march=x86-64 and -m flags; with no list it builds -march=native. */
    if (!strcmp (backend, "host")) {
        char *isa = kf_prompt_host_isa (self->db);
        if (!isa)
            return -1;
        if (*isa)
            snprintf (arch, sizeof arch, "%s", isa);
        free (isa);
    }
    snprintf (blobs, sizeof blobs, "{%s}", hash);
    /* A tuning round's candidate is swept over tuning_configs points
     * (best@8 by default); any other over the run's `tune` (1: none). */
    json_t *tune = tuning ? kf_search_setting (self, run, "tuning_configs")
                          : json_object_get (json_object_get (run, "config"), "tune");
    return kf_search_insert_job (self, run_id, cand_id, "compile", "compile", backend, NULL,
                                 json_pack ("{s:s, s:{s:s, s:s}, s:s, s:I, s:O*}", "language",
                                            kf_jstr (run, "language"), "target", "backend",
                                            backend, "arch", arch, "source_hash", hash,
                                            "tune_max_configs",
                                            (json_int_t) (tune ? json_integer_value (tune) : 1),
                                            "libraries",
                                            json_object_get (json_object_get (run, "spec"),
                                                             "libraries")),
                                 blobs);
}

/* Most candidate artifacts in one evaluate job: the reference takes one
 * more frame, and the dispatcher's blob list (kf_coord.c, s_attach_blobs)
 * holds fifteen hashes. */
#define S_EVAL_MAX_CONFIGS 14

/* The evaluate job's configs for a tuned compile RESULT: each compiled
 * config with the index of its artifact among the job's candidate frames.
 * Stores those artifacts and writes their hashes, comma-separated, into
 * BLOBS; the default config (frame 0) always comes first. Appends a line
 * naming the configs that did not compile to *LOG_EXTRA (caller frees).
 * Returns the array (caller owns), or NULL when the result has no table. */
static json_t *
s_eval_configs (kf_search_t *self, const kf_compile_result_t *result, zmsg_t *frames,
                char *blobs, size_t blobs_size, char **log_extra, int *rc)
{
    *rc = 0;
    *log_extra = NULL;
    if (result->n_configs == 0)
        return NULL;
    zframe_t *by_index[16];
    int n_frames = 0;
    for (zframe_t *f = zmsg_first (frames); f && n_frames < 16; f = zmsg_next (frames))
        by_index[n_frames++] = f;
    int job_frame[16];       /* result frame -> evaluate job frame, -1: not sent */
    for (int i = 0; i < 16; i++)
        job_frame[i] = -1;
    int sent = 0, failed = 0;
    size_t used = 0;
    blobs[0] = 0;
    char *failures = NULL;
    size_t failures_size = 0;
    FILE *f = open_memstream (&failures, &failures_size);
    json_t *configs = json_array ();
    for (size_t i = 0; i < result->n_configs; i++) {
        const kf_compile_point_t *row = &result->configs[i];
        int k = row->frame < n_frames ? (int) row->frame : -1;
        if (!row->compiled || k < 0) {
            char label[256];
            kf_tune_params_label (row->params, label, sizeof label);
            if (f && !row->compiled)
                fprintf (f, "%s%s", failed++ ? "; " : "", label);
            continue;
        }
        if (job_frame[k] < 0) {
            if (sent == S_EVAL_MAX_CONFIGS)
                continue;
            char hash[65];
            if (kf_search_store_blob (self, zframe_data (by_index[k]),
                                      zframe_size (by_index[k]), hash)) {
                *rc = -1;
                break;
            }
            int n = snprintf (blobs + used, blobs_size - used, "%s%s", used ? "," : "", hash);
            if (n < 0 || (size_t) n >= blobs_size - used)
                break;
            used += (size_t) n;
            job_frame[k] = sent++;
        }
        json_array_append_new (configs, json_pack ("{s:O, s:i}", "params", row->params,
                                                   "frame", job_frame[k]));
    }
    if (f)
        fclose (f);
    if (failed && failures)
        *log_extra = kf_strdupf ("tuning: %d of %zu configs did not compile: %.800s\n",
                                 failed, result->n_configs, failures);
    free (failures);
    if (*rc || json_array_size (configs) == 0) {
        json_decref (configs);
        return NULL;
    }
    return configs;
}

int
kf_search_compiled (kf_search_t *self, json_t *run, int64_t cand_id,
                    const kf_compile_result_t *result, zmsg_t *frames)
{
    int64_t run_id = kf_jint (run, "id");
    zframe_t *artifact = frames ? zmsg_first (frames) : NULL;
    bool compiled = result->compiled && artifact;
    const char *log = result->log;
    if (!cand_id) {
        /* The run's reference: without it nothing can be evaluated. */
        if (!compiled) {
            char reason[512];
            /* The compiler named the compile worker's copy ("kernel.c"):
             * the user's file is the one to name. */
            char *named = kf_rename_reference (json_object_get (run, "spec"), log ? log : "");
            kf_text_head_in (reason, sizeof reason, "the reference does not compile: ",
                             named ? named : log ? log : "", 400, "");
            free (named);
            return kf_search_finish_run (self, run_id, "failed", reason);
        }
        char hash[65], id[24];
        if (kf_search_store_blob (self, zframe_data (artifact), zframe_size (artifact), hash))
            return -1;
        const char *params[2] = { S_I64 (id, run_id), hash };
        if (kf_db_exec (self->db, "UPDATE runs SET ref_artifact = $2 WHERE id = $1",
                        2, params) < 0)
            return -1;
        return kf_reference_probe (self, run, hash);   /* begins once it is judged */
    }
    if (!compiled)
        return s_finish_candidate (self, run_id, cand_id, "compile_failed", 0,
                                   "does not compile", log);
    char hash[65], cand[24], blobs[1200], backend[32], arch[64];
    if (kf_search_store_blob (self, zframe_data (artifact), zframe_size (artifact), hash))
        return -1;
    /* The compile worker classified the code it built (the source
     * preprocessed with the build's -D flags, #if branches chosen): those
     * coordinates replace the ones taken from the raw source at generate
     * time, before the archive insert at evaluation. */
    if (result->has_coords) {   /* each level 0..3: the decoder checked */
        const int *lv = result->coords;
        char built_coords[48];
        snprintf (built_coords, sizeof built_coords, "{%d,%d,%d}", lv[0], lv[1], lv[2]);
        const char *cp[3] = { S_I64 (cand, cand_id), built_coords, result->coords_why };
        if (kf_db_exec (self->db, "UPDATE candidates SET coords = $2::int[], coords_why = $3"
                                  " WHERE id = $1", 3, cp) < 0)
            return -1;
    }
    /* A tuned source: every compiled config goes to one evaluate job, so
     * each is timed against the reference in the same way (frames: the
     * candidates' artifacts, the reference last). */
    char cand_blobs[1100], *log_extra = NULL;
    int rc = 0;
    json_t *configs = s_eval_configs (self, result, frames, cand_blobs, sizeof cand_blobs,
                                      &log_extra, &rc);
    if (rc) {
        free (log_extra);
        return -1;
    }
    char *full_log = log_extra ? kf_strdupf ("%s%s", log, log_extra) : NULL;
    free (log_extra);
    const char *params[3] = { S_I64 (cand, cand_id), hash, full_log ? full_log : log };
    json_t *row = kf_db_row (self->db,
                             "UPDATE candidates SET artifact_hash = $2, log = $3,"
                             " status = 'evaluating' WHERE id = $1"
                             " RETURNING generation, slot",
                             3, params, NULL);
    free (full_log);
    if (!row) {
        json_decref (configs);
        return -1;
    }
    int64_t seed = kf_jint (run, "seed") * 7919 + kf_jint (row, "generation") * 1009
                   + kf_jint (row, "slot");
    json_decref (row);
    json_t *timing = json_object_get (json_object_get (run, "config"), "timing");
    /* A PyTorch run has no reference artifact (its data stays on the exec
     * hosts, kf_reference.c): the candidate's blobs alone. */
    const char *ref_blob = kf_jstr (run, "ref_artifact");
    snprintf (blobs, sizeof blobs, "{%s%s%s}", configs ? cand_blobs : hash,
              *ref_blob ? "," : "", ref_blob);
    kf_search_split_target (kf_jstr (run, "target"), backend, sizeof backend, arch, sizeof arch);
    json_t *payload = json_pack ("{s:O, s:I, s:O}", "task", json_object_get (run, "spec"),
                                 "seed", (json_int_t) (seed & 0xffffffffffffLL), "timing",
                                 timing ? timing : self->timing);
    if (configs)
        json_object_set_new (payload, "configs", configs);
    if (kf_reference_eval_payload (self, run, payload)
        || kf_fidelity_first_payload (self, run, payload)) {
        json_decref (payload);
        return -1;
    }
    return kf_search_insert_job (self, run_id, cand_id, "execute", "evaluate", backend, arch,
                                 payload, blobs);
}

int
kf_search_record_evaluation (kf_search_t *self, json_t *job, int64_t cand_id,
                             const kf_eval_result_t *result)
{
    const char *verdict = result->verdict;
    bool correct = !strcmp (verdict, KF_SEARCH_CORRECT);
    char cand[24], jobid[24], sp[40], cns[40], rns[40];
    snprintf (sp, sizeof sp, "%.17g", result->speedup);
    snprintf (cns, sizeof cns, "%.17g", result->candidate.median_ns);
    snprintf (rns, sizeof rns, "%.17g", result->reference.median_ns);
    /* The figures keep the whole result as it came, the tuning table
     * included. */
    char *figures = json_dumps (result->json, JSON_COMPACT);
    /* The protocol of the figures: the job's (jobs.fidelity,
     * kf_fidelity.c), unless a sweep says it could time none in full. */
    const char *fidelity = result->fidelity;
    const char *params[10] = { S_I64 (cand, cand_id), S_I64 (jobid, kf_jint (job, "id")),
                               kf_jstr (job, "worker"), *verdict ? verdict : "unknown",
                               correct ? "true" : "false", correct ? sp : NULL,
                               result->has_candidate ? cns : NULL,
                               result->has_reference ? rns : NULL, figures,
                               strcmp (fidelity, "screen") ? NULL : fidelity };
    long rc = kf_db_exec (self->db,
                          "INSERT INTO evaluations (candidate_id, job_id, worker, verdict,"
                          " correct, speedup, candidate_ns, reference_ns, figures, fidelity)"
                          " SELECT $1::bigint, j.id, $3, $4, $5::boolean, $6::float8, $7::float8,"
                          /* The host's condition as the registry knew it
                           * when the figures came (round 5: the Target
                           * section's "shared" changed mid-run and no
                           * outcome said which it was timed under). */
                          "  $8::float8, $9::jsonb || coalesce((SELECT jsonb_build_object("
                          "   'host_condition', jsonb_build_object('host', w.host,"
                          "   'compile_workers_beside', (SELECT count(*) FROM workers o"
                          "    WHERE o.role = 'compile' AND o.host = w.host"
                          "    AND o.last_seen > now() - interval '10 minutes'),"
                          "   'exec_workers_beside', (SELECT count(*) FROM workers o"
                          "    WHERE o.role = 'execute' AND o.id <> w.id AND o.host = w.host"
                          "    AND o.last_seen > now() - interval '10 minutes')))"
                          "   FROM workers w WHERE w.id = $3 AND w.host <> ''), '{}'::jsonb),"
                          "  coalesce($10, j.fidelity)"
                          " FROM jobs j WHERE j.id = $2"
                          " ON CONFLICT (job_id) DO NOTHING",
                          10, params);
    free (figures);
    return rc < 0 ? -1 : 0;
}

int
kf_search_evaluated (kf_search_t *self, json_t *run, json_t *job, int64_t cand_id,
                     const kf_eval_result_t *result)
{
    const char *verdict = result->verdict;
    static const char *known[] = { "correct", "incorrect", "crashed", "timeout" };
    const char *status = "crashed";
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp (verdict, known[i]))
            status = known[i];
    bool correct = !strcmp (status, KF_SEARCH_CORRECT);
    double speedup = result->speedup;
    if (kf_search_record_evaluation (self, job, cand_id, result)
        || kf_search_tuned_coords (self, cand_id, result))   /* its winning point's cell */
        return -1;
    /* A tuned candidate's detail names the config that counted, so the
     * run's listing shows what the sweep chose without the table. */
    const char *detail = result->detail;
    size_t n_configs = result->n_configs;
    json_t *best = result->best_config;
    char tuned[900];
    if (n_configs > 0) {
        char label[300];
        //  Round 43: "best of 8 configs: QTERMS=3 ..." led a verdict whose
        //  counted figure was QTERMS=5's, timed in full after the screen
        //  (kf_fidelity_full_points): a screen's choice says it is one.
        if (json_is_object (best))
            snprintf (tuned, sizeof tuned, "%.500s; best of %zu config%s%s: %s", detail,
                      n_configs, n_configs == 1 ? "" : "s",
                      strcmp (result->fidelity, "screen") ? "" : " on the screen",
                      kf_tune_params_label (best, label, sizeof label));
        else
            snprintf (tuned, sizeof tuned, "%.500s; none of %zu config%s was correct",
                      detail, n_configs, n_configs == 1 ? "" : "s");
        detail = tuned;
    }
    /* A screen near the best is timed with the full protocol before it
     * counts (kf_fidelity.c); a suspicious full result is re-verified
     * (kf_verify.c). */
    if (correct && speedup > 0 && kf_fidelity_check (self, run, job, cand_id, result, speedup))
        return -1;
    return s_finish_candidate (self, kf_jint (run, "id"), cand_id, status, speedup,
                               detail, NULL);
}


/* For kf_repeat.c, whose repeats end like any candidate. */
int
kf_search_finish_candidate (kf_search_t *self, int64_t run_id, int64_t cand_id,
                            const char *status, double speedup, const char *detail)
{
    return s_finish_candidate (self, run_id, cand_id, status, speedup, detail, NULL);
}
