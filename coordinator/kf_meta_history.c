/*  kf_meta_history.c - the prompt versions of a run and the meta prompt's
 *  account of them (kf_meta_history.h).
 */
#include "kf_meta_history.h"
#include "kf_json.h"
#include "kf_meta_prompt.h"
#include "kf_meta_score.h"
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

json_t *
kf_meta_history (kf_db_t *db, int64_t run_id)
{
    char id[24];
    const char *params[1] = { S_I64 (id, run_id) };
    json_t *versions = kf_db_query (
        db,
        "SELECT v.number, p.number AS parent, v.generation, v.edits, v.in_archive,"
        //  When it was made: the guesses' outcomes since (kf_meta_guess.h).
        " extract(epoch FROM v.created_at)::float8 AS made_s,"
        " s.candidates, v.fitness AS mean_fitness, s.best_speedup, s.verdicts,"
        " (SELECT count(*) FROM candidates c WHERE c.prompt_version_id = v.id"
        "  AND c.finished_at IS NULL) AS pending,"
        " (SELECT jsonb_agg(jsonb_build_object('section', e.section, 'reason', e.reason)"
        "   ORDER BY e.id) FROM prompt_edits e"
        "  WHERE e.job_id = v.meta_job_id AND NOT e.accepted) AS rejected"
        " FROM prompt_versions v LEFT JOIN prompt_versions p ON p.id = v.parent_id"
        " LEFT JOIN LATERAL (SELECT count(*) AS candidates,"
        "  max(c.speedup) FILTER (WHERE c.status = 'correct' AND c.fidelity = 'full')"
        "   AS best_speedup,"
        "  (SELECT jsonb_object_agg(t.status, t.n) FROM (SELECT status, count(*) AS n"
        "    FROM candidates WHERE prompt_version_id = v.id AND finished_at IS NOT NULL"
        "    GROUP BY status) t) AS verdicts"
        "  FROM candidates c WHERE c.prompt_version_id = v.id AND c.finished_at IS NOT NULL) s"
        " ON true"
        " WHERE v.run_id = $1 ORDER BY v.number",
        1, params);
    json_t *rounds = versions ? kf_db_query (
        db,
        "SELECT e.job_id AS round_job, jsonb_agg(jsonb_build_object('section', e.section,"
        "  'reason', e.reason) ORDER BY e.id) AS rejected"
        " FROM prompt_edits e WHERE e.run_id = $1 AND NOT e.accepted"
        " AND NOT EXISTS (SELECT 1 FROM prompt_versions v WHERE v.meta_job_id = e.job_id)"
        " GROUP BY e.job_id ORDER BY e.job_id",
        1, params) : NULL;
    if (!versions || !rounds) {
        json_decref (versions);
        return NULL;
    }
    kf_json_drop_nulls (versions);
    json_array_extend (versions, rounds);
    json_decref (rounds);
    return versions;
}

//  One edit, short: its section and what it did.
static void
s_edit (FILE *f, json_t *e)
{
    const char *search = kf_jstr (e, "search"), *replace = kf_jstr (e, "replace");
    if (!*search)
        fprintf (f, "%s: appended \"", kf_jstr (e, "section"));
    else if (!*replace) {
        //  A retracted guess (kf_meta_guess.h).
        fprintf (f, "%s: removed \"", kf_jstr (e, "section"));
        kf_meta_quote_cut (f, search, 120);
        fputc ('"', f);
        return;
    }
    else {
        fprintf (f, "%s: replaced \"", kf_jstr (e, "section"));
        kf_meta_quote_cut (f, search, 80);
        fputs ("\" with \"", f);
    }
    kf_meta_quote_cut (f, replace, 120);
    fputc ('"', f);
}

static void
s_rejected (FILE *f, json_t *rejected)
{
    size_t i;
    json_t *e;
    json_array_foreach (rejected, i, e)
        fprintf (f, "%s%s%s%.200s", i ? "; " : "", kf_jstr (e, "section"),
                 *kf_jstr (e, "section") ? ": " : "", kf_jstr (e, "reason"));
}

//  Whether version NUMBER is BASE or one BASE was made from (HISTORY's
//  parent links).
static bool
s_in_line (json_t *history, int64_t base, int64_t number)
{
    for (int hops = 0; base > 0 && hops < 10000; hops++) {
        if (base == number)
            return true;
        int64_t up = 0;
        size_t i;
        json_t *v;
        json_array_foreach (history, i, v)
            if (kf_jint (v, "number") == base)
                up = kf_jint (v, "parent");
        base = up;
    }
    return false;
}

//  The fate of every version (and of rounds that made none); BASE the
//  version whose sections are shown.
void
kf_meta_history_text (FILE *f, json_t *history, int64_t base)
{
    if (!json_array_size (history))
        return;
    //  Round 11: "mean fitness" here and the archive's "fitness" of the
    //  kernel prompts' hints (0.5 + 0.5 s/(1 + s)) were two formulas under
    //  one name; this one is the "version score" wherever it is shown.
    fprintf (f, "\n## What became of your earlier edits\n"
           "Each round whose edits were accepted made a new prompt version; below, each "
           "version, the edits that made it, and the kernels written under it. A version's "
           "\"version score\" is its own measure, not the archive's fitness that kernel "
           "prompts quote: the mean over its latest %d finished kernels of 0 for one that "
           "did not compile or run, 0.1 for a wrong one, and 0.5 + 0.5 ln(1 + s) / ln(1 + b) "
           "for a correct one at speedup s, b the run's best speedup so far: 1.0 for a "
           "kernel at b, about 0.9 for one at half of b when b is near 50x.\n",
           KF_META_WINDOW);
    size_t i;
    json_t *v;
    json_array_foreach (history, i, v) {
        if (!json_object_get (v, "number")) {
            fputs ("- a round that made no version; rejected: ", f);
            s_rejected (f, json_object_get (v, "rejected"));
            fputs ("\n", f);
            continue;
        }
        fprintf (f, "- v%lld", (long long) kf_jint (v, "number"));
        if (json_object_get (v, "parent")) {
            fprintf (f, " (from v%lld at generation %lld; edits: ",
                     (long long) kf_jint (v, "parent"), (long long) kf_jint (v, "generation"));
            size_t k;
            json_t *e;
            json_array_foreach (json_object_get (v, "edits"), k, e) {
                if (k)
                    fputs ("; ", f);
                s_edit (f, e);
            }
            fputs (")", f);
        }
        else
            fputs (" (the default sections)", f);
        //  Finished and pending apart (round 11: "5 written with it" in
        //  the reason for the base beside "3 kernels" here, unexplained).
        int64_t n = kf_jint (v, "candidates"), pending = kf_jint (v, "pending");
        if (n == 0)
            fputs (": no kernel finished under it yet", f);
        else {
            fprintf (f, ": %lld kernel%s finished (", (long long) n, n == 1 ? "" : "s");
            const char *key;
            json_t *count;
            bool first = true;
            json_object_foreach (json_object_get (v, "verdicts"), key, count) {
                fprintf (f, "%s%lld %s", first ? "" : ", ", (long long) json_integer_value (count),
                         key);
                first = false;
            }
            fprintf (f, "), version score %.3f", kf_jnum (v, "mean_fitness", 0));
            if (json_is_number (json_object_get (v, "best_speedup")))
                //  Round 12: a screen figure here read as the version's
                //  best while the prompt says screens never count.
                fprintf (f, ", best full-protocol %.3fx", kf_jnum (v, "best_speedup", 0));
        }
        if (pending > 0)
            fprintf (f, "%s%lld more written with it and not finished yet", n ? "; " : " (",
                     (long long) pending);
        if (pending > 0 && !n)
            fputc (')', f);
        if (json_is_false (json_object_get (v, "in_archive")))
            fputs ("; no longer in the archive of versions (outscored)", f);
        //  A sibling (or a child passed over) is not what the edits apply
        //  to: said, so its edits are not looked for in the sections shown
        //  (round 4: "v2 accepted" beside v1's sections read as lost edits).
        int64_t number = kf_jint (v, "number");
        if (number == base)
            fputs ("; the version you edit (its sections are shown above)", f);
        else if (!s_in_line (history, base, number))
            fprintf (f, "; not the base you edit: its edits are NOT in the sections shown "
                     "(v%lld's), and your edits make a new version from v%lld beside it",
                     (long long) base, (long long) base);
        fputs ("\n", f);
        if (json_array_size (json_object_get (v, "rejected"))) {
            fputs ("  rejected in the same round: ", f);
            s_rejected (f, json_object_get (v, "rejected"));
            fputs ("\n", f);
        }
    }
}
