/*  kf_stop.c - early stopping of a run's main phase (kf_stop.h). */
#include "kf_stop.h"
#include "kf_json.h"
#include "kf_verify.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
kf_stop_rule (const double *best, int n, int stop_after, double margin, kf_stop_t *out)
{
    memset (out, 0, sizeof *out);
    out->at = out->since = -1;
    if (stop_after <= 0)
        return;
    double running = 0;
    for (int g = 0; g < n; g++) {
        if (best[g] > running)
            running = best[g];
        if (!(running > 0))
            continue;   /* nothing correct yet: nothing to improve on */
        if (out->since < 0 || running > out->record * (1 + margin)) {
            out->record = running;
            out->since = g;
        }
        else if (g - out->since >= stop_after) {
            out->stop = true;
            out->at = g;
            return;
        }
    }
}

int
kf_stop_check (kf_db_t *db, int64_t run_id, int generations, int population,
               int stop_after, double margin, char *why, size_t size)
{
    if (stop_after <= 0 || population <= 0)
        return 0;
    char run[24];
    snprintf (run, sizeof run, "%lld", (long long) run_id);
    const char *params[1] = { run };
    /* Per generation of the main phase: how many candidates, how many are
     * still open (a re-verification or a full timing keeps one open), and
     * the best figure that counts towards the run's best. */
    json_t *rows = kf_db_query (
        db,
        "SELECT generation, count(*) AS n,"
        " count(*) FILTER (WHERE finished_at IS NULL OR verify_state = 'pending'"
        "  OR fidelity = 'pending') AS open,"
        " coalesce(max(speedup) FILTER (WHERE status = 'correct' AND speedup > 0 AND "
        KF_VERIFY_COUNTS "), 0) AS best"
        " FROM candidates WHERE run_id = $1 AND phase = 'search'"
        " GROUP BY generation ORDER BY generation",
        1, params);
    if (!rows)
        return -1;
    size_t count = json_array_size (rows);
    double *best = calloc (count + 1, sizeof *best);
    int n = 0;
    for (size_t i = 0; best && i < count; i++) {
        json_t *r = json_array_get (rows, i);
        /* Only the prefix of generations that are whole and final. */
        if (kf_jint (r, "generation") != n || kf_jint (r, "n") < population
            || kf_jint (r, "open") > 0)
            break;
        best[n++] = json_number_value (json_object_get (r, "best"));
    }
    json_decref (rows);
    if (!best)
        return -1;
    kf_stop_t verdict;
    kf_stop_rule (best, n, stop_after, margin, &verdict);
    free (best);
    if (!verdict.stop)
        return 0;
    snprintf (why, size,
              "stopped early after %d of %d generations: no improvement over %.2fx"
              " by more than %g%% in %d generation%s",
              verdict.at + 1, generations, verdict.record, margin * 100, verdict.at - verdict.since,
              verdict.at - verdict.since == 1 ? "" : "s");
    return 1;
}
