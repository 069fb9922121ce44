/*  kf_lineage.c - a parent's children and the run's best kernel whatever
 *  its standing (kf_lineage.h; normalised source hashes in
 *  kf_lineage_hash.c).
 *
 *  The children's reasons are derived from figures the database already
 *  holds (statuses, speedups, verdict lines, compiler logs), so a prompt
 *  never states a cause the evaluation did not report.
 */
#include "kf_lineage.h"
#include "kf_json.h"
#include "kf_prompt.h"
#include "kf_prompt_target.h"
#include "kf_prompt_threads.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

//  The first line of TEXT that mentions an error, else its first line,
//  at most MAX characters, into BUF.
static void
s_first_line (const char *text, const char *prefer, char *buf, size_t size, int max)
{
    buf[0] = 0;
    if (!text || !*text)
        return;
    const char *line = text;
    if (prefer) {
        const char *hit = strstr (text, prefer);
        if (hit) {
            line = hit;
            while (line > text && line[-1] != '\n')
                line--;
        }
    }
    while (*line == ' ' || *line == '\t')
        line++;
    int n = (int) strcspn (line, "\n");
    snprintf (buf, size, "%.*s%s", n < max ? n : max, line, n > max ? "..." : "");
}

//  Round 34: a two-thread child "improved beyond the timing noise" over
//  its one-thread parent (33.95x against 19.96x) on a host that left it
//  a second CPU; timed again beside a core of other work its code took
//  as long as the parent's. Where its one-core time (its process held to
//  one CPU, kf_host_timing.c) is measured, say whose the gain is.
static void
s_threads_gain (json_t *c, double s, double parent_speedup, double band, char *buf,
                size_t size)
{
    json_t *oc = json_object_get (c, "oc");
    double cpw = kf_jnum (oc, "cpu_per_wall", 0), one = kf_jnum (oc, "median_ns", 0);
    double ns = kf_jnum (json_object_get (c, "tc"), "median_ns", 0);
    double pcpw = kf_jnum (json_object_get (c, "poc"), "cpu_per_wall", 0);
    size_t n = strlen (buf);
    if (!(cpw >= KF_PROMPT_SIDE_BY_SIDE && one > 0 && ns > 0) || pcpw >= KF_PROMPT_SIDE_BY_SIDE
        || n >= size)
        return;
    double s1 = s * ns / one;
    if (kf_lineage_verdict (s1, parent_speedup, band) == 1)
        snprintf (buf + n, size - n, "; with its process held to one CPU it still measured "
                  "%.2fx, so its code gained beyond what its threads add", s1);
    else
        snprintf (buf + n, size - n, "; with its process held to one CPU it measured %.2fx, "
                  "not beyond the parent's, so the gain is its threads' (its process used %.2f "
                  "CPU-seconds a second of its calls): it holds only while the host leaves "
                  "CPUs free for them, and shrinks beside other work", s1, cpw);
}

const char *
kf_lineage_reason (json_t *c, double parent_speedup, char *buf, size_t size)
{
    const char *status = kf_jstr (c, "status");
    char line[320];
    //  A repeat (kf_repeat.c) was not judged itself: say whose it is.
    static const char repeat[] = "the same source as candidate ";
    const char *detail = kf_jstr (c, "detail");
    if (!strncmp (detail, repeat, sizeof repeat - 1)) {
        char whose[160] = "", rest[300];
        snprintf (whose, sizeof whose, "repeated candidate %lld's source",
                  strtoll (detail + sizeof repeat - 1, NULL, 10));
        json_t *plain = json_deep_copy (c);
        json_object_del (plain, "detail");
        kf_lineage_reason (plain, parent_speedup, rest, sizeof rest);
        json_decref (plain);
        snprintf (buf, size, "%s (not judged again; its verdict: %s)", whose, rest);
        return buf;
    }
    if (!strcmp (status, "correct")) {
        double s = kf_jnum (c, "speedup", 0);
        /* Like with like: a screen figure (short, noisy) is not set against
         * the parent's full one as if the two were alike. */
        const char *fid = kf_jstr (c, "fidelity");
        if ((!strcmp (fid, "screen") || !strcmp (fid, "pending"))
            && strcmp (kf_jstr (c, "parent_fidelity"), "screen")) {
            char gap[200] = "", best[120] = "";
            if (kf_lineage_screen_points (c) > 1) {
                snprintf (best, sizeof best, KF_LINEAGE_BEST_OF, kf_lineage_screen_points (c));
                strcat (best, "; ");
            }
            double g = kf_jnum (c, "screen_gap", 0);
            if (g > 1)
                snprintf (gap, sizeof gap, "; in this run screen and full figures of one kernel "
                          "differed by up to %.2fx", g);
            if (parent_speedup > 0)
                snprintf (buf, size, "correct at %.2fx on the screen only (%sa short timing, "
                          "not comparable with the parent's full-protocol %.2fx%s)", s, best,
                          parent_speedup, gap);
            else
                snprintf (buf, size, "correct at %.2fx on the screen only (%sa short timing%s)",
                          s, best, gap);
            return buf;
        }
        /* A change counts once it is beyond the timing noise both figures
         * carry (their p10-p90 spreads, kf_lineage_noise), and never below
         * KF_LINEAGE_SAME_BAND; past KF_LINEAGE_UNTOLD nothing is told. */
        double noise = kf_jnum (c, "noise", 0), repeat = kf_jnum (c, "repeat", 0);
        double band = kf_lineage_band (noise, repeat);
        double median = kf_jnum (c, "repeat_median", 0);
        char within[640] = "", few[96] = "";
        json_int_t pairs = json_integer_value (json_object_get (c, "repeat_count"));
        if (pairs > 0 && pairs < KF_LINEAGE_REPEAT_TAIL)
            snprintf (few, sizeof few, " (as its %lld pairs so far put it, one outlying pair "
                      "not setting it)", (long long) pairs);
        if (repeat > 0 && repeat >= noise)
            snprintf (within, sizeof within, "; timing noise about +/-%.0f%% (the same kernel "
                      "timed twice %sin this run came out within %.0f%% of itself 9 times in "
                      "10%s, a median %.0f%% apart)", 100 * band,
                      json_is_true (json_object_get (c, "repeat_full"))
                          ? "with the full protocol " : "",
                      100 * repeat, few, 100 * median);
        else if (noise > 0)
            snprintf (within, sizeof within, "; timing noise about +/-%.0f%% (how far each "
                      "median may lie from its kernel's figure, from its samples' spread and "
                      "count, for both kernels)", 100 * band);
        //  Round 19: "regressed beyond the timing noise" of a child the
        //  same prompt said was timed beside other work; round 24: unless
        //  the gap is past what the load could account for.
        bool loaded = json_is_true (json_object_get (c, "loaded"));
        json_t *tl = json_object_get (c, "tl"), *pl = json_object_get (c, "pl");
        int v = kf_lineage_verdict_loaded (s, parent_speedup, band, loaded, tl, pl);
        if (loaded && (v == 1 || v == -1)) {
            size_t n = strlen (within);
            double f = kf_lineage_load_factor (v, tl, pl);
            if (f > 1.005)
                snprintf (within + n, sizeof within - n, "; it or its parent was timed beside "
                          "other work, which could account for a ratio of at most %.2f", f);
            else
                snprintf (within + n, sizeof within - n, "; the other work %s was timed "
                          "beside could only have narrowed this gap",
                          v == 1 ? "it" : "its parent");
        }
        //  Round 42: "regressed beyond the timing noise" of a threaded
        //  child beside "its threads hardly ran side by side ... the gap
        //  is the load each met": a loss of a kernel whose threads ran on
        //  about one CPU (a gain of a parent's) is not like for like.
        //  Its one-core figure is tried only for a kernel that starts
        //  threads (or ran on more than one CPU): a one-thread kernel's
        //  1.0 CPU-seconds a second say nothing.
        json_t *oc = json_object_get (c, v < 0 ? "oc" : "poc");
        double apart = json_is_true (json_object_get (oc, "tried"))
                       ? kf_jnum (oc, "cpu_per_wall", 0) : 0;
        if ((v == 1 || v == -1) && apart > 0 && apart < KF_PROMPT_SIDE_BY_SIDE && s > 0
            && parent_speedup > 0) {
            snprintf (buf, size, "correct at %.2fx against the parent's %.2fx, but in %s full "
                      "timing the threads hardly ran side by side (%.2f CPU-seconds a second of "
                      "its calls), so the two are not compared like for like%s", s,
                      parent_speedup, v < 0 ? "its" : "the parent's", apart, within);
            return buf;
        }
        //  Round 44: a child that lost on about one CPU read "the timings
        //  are too spread to tell the two apart", its CPU figure unsaid.
        json_t *own = json_object_get (c, "oc");
        double side = json_is_true (json_object_get (own, "tried"))
                      ? kf_jnum (own, "cpu_per_wall", 0) : 0;
        if ((v == 0 || v == 2 || v == 3) && side > 0 && side < KF_PROMPT_SIDE_BY_SIDE) {
            size_t n = strlen (within);
            snprintf (within + n, sizeof within - n, "; its threads hardly ran side by side in "
                      "its full timing (%.2f CPU-seconds a second of its calls)", side);
        }
        //  Round 46: "regressed beyond the timing noise: 32.66x against the
        //  parent's 34.55x" of a tuned child whose counted point was its
        //  template's defaults, the parent's own code timed again.
        bool again = !strcmp (kf_jstr (c, "phase"), "tuning")
                     && json_is_true (json_object_get (c, "at_defaults"));
        if (!(parent_speedup > 0))
            snprintf (buf, size, "correct at %.2fx", s);
        else if (again && (v == 1 || v == -1))
            snprintf (buf, size, "correct at %.2fx against the parent's %.2fx, at its "
                      "template's defaults, which keep the parent's own values: the parent's "
                      "design timed again, so the gap is the timing's, not a change%s", s,
                      parent_speedup, within);
        else if (v == 3)
            snprintf (buf, size, "correct at %.2fx against the parent's %.2fx, but it or its "
                      "parent was timed beside other work, so the two are not compared like "
                      "for like%s", s, parent_speedup, within);
        else if (v == 2)
            snprintf (buf, size, "correct at %.2fx against the parent's %.2fx, but the timings "
                      "are too spread to tell the two apart%s", s, parent_speedup, within);
        else if (v < 0)
            snprintf (buf, size, "correct but regressed beyond the timing noise: %.2fx against "
                      "the parent's %.2fx%s", s, parent_speedup, within);
        else if (v > 0) {
            snprintf (buf, size, "improved beyond the timing noise: %.2fx against the parent's "
                      "%.2fx%s", s, parent_speedup, within);
            s_threads_gain (c, s, parent_speedup, band, buf, size);
        }
        else
            snprintf (buf, size, "correct, within noise of the parent: %.2fx against the "
                      "parent's %.2fx%s", s, parent_speedup, *within ? within : "");
        return buf;
    }
    if (!strcmp (status, "compile_failed")) {
        s_first_line (kf_jstr (c, "log"), "error", line, sizeof line, 200);
        snprintf (buf, size, "did not compile%s%s", *line ? ": " : "", line);
        return buf;
    }
    s_first_line (kf_jstr (c, "detail"), NULL, line, sizeof line, 240);
    static const struct { const char *status, *words; } said[] = {
        { "incorrect", "wrong results" }, { "crashed", "crashed" },
        { "timeout", "ran past its time limit" }, { "failed", "failed" },
    };
    const char *words = status;
    for (size_t i = 0; i < sizeof said / sizeof said[0]; i++)
        if (!strcmp (status, said[i].status))
            words = said[i].words;
    snprintf (buf, size, "%s%s%s", words, *line ? ": " : "", line);
    return buf;
}

//  How far the median of the timing T may lie from the figure it
//  estimates, relative to it: twice its standard error (about a 95%
//  band), from the p10-p90 width of its samples (2.563 standard
//  deviations of a normal spread) and their count, the median's standard
//  error being 1.2533 standard deviations over the root of the count.
//  Round 11 used half the p10-p90 width itself, the spread of single
//  samples, and told a model that two figures 5% apart were "+/-190%".
//  Timings without a sample count (older figures) keep that half width.
static double
s_rel (json_t *t)
{
    double med = kf_jnum (t, "median_ns", 0), p10 = kf_jnum (t, "p10_ns", 0),
           p90 = kf_jnum (t, "p90_ns", 0), n = kf_jnum (t, "samples", 0);
    if (!(med > 0 && p90 >= p10 && p90 > 0))
        return 0;
    if (n >= 2)
        return 2 * 1.2533 * (p90 - p10) / 2.5631 / sqrt (n) / med;
    return (p90 - p10) / (2 * med);
}

int
kf_lineage_screen_points (json_t *c)
{
    json_int_t n = json_integer_value (json_object_get (c, "screen_points"));
    return !strcmp (kf_jstr (c, "phase"), "tuning") && n > 1 && n < 100000 ? (int) n : 0;
}

int
kf_lineage_verdict (double speedup, double parent_speedup, double band)
{
    //  Round 24: a band past KF_LINEAGE_UNTOLD hides only what lies
    //  within it ("12.41x against the parent's 1.18x, but the timings
    //  are too spread to tell the two apart; timing noise about +/-86%").
    if (speedup > parent_speedup * (1 + band))
        return 1;
    if (parent_speedup > speedup * (1 + band))
        return -1;
    return band > KF_LINEAGE_UNTOLD ? 2 : 0;
}

double
kf_lineage_load_factor (int v, json_t *tl, json_t *pl)
{
    double c = kf_jnum (tl, "others_cpu_share", -1), p = kf_jnum (pl, "others_cpu_share", -1);
    //  A timing over undisturbed samples had its CPU whenever it counted.
    if (kf_prompt_load_undisturbed (tl))
        c = 0;
    if (kf_prompt_load_undisturbed (pl))
        p = 0;
    if (!(c >= 0 && c <= 0.95 && p >= 0 && p <= 0.95) || (v != 1 && v != -1))
        return 0;
    //  The faster one's timing had (1 - its share) of the CPUs' time, the
    //  slower one's (1 - its share): load explains at most their ratio.
    double f = v == 1 ? (1 - c) / (1 - p) : (1 - p) / (1 - c);
    return f > 1 ? f : 1;
}

int
kf_lineage_verdict_loaded (double speedup, double parent_speedup, double band, bool loaded,
                           json_t *tl, json_t *pl)
{
    int v = kf_lineage_verdict (speedup, parent_speedup, band);
    if (!loaded || v == 2)
        return v;
    double f = kf_lineage_load_factor (v, tl, pl);
    if (f > 0 && kf_lineage_verdict (speedup, parent_speedup, (1 + band) * f - 1) == v)
        return v;
    return 3;
}

double
kf_lineage_band (double noise, double repeat)
{
    double band = noise > repeat ? noise : repeat;
    return band > KF_LINEAGE_SAME_BAND ? band : KF_LINEAGE_SAME_BAND;
}

double
kf_lineage_noise (json_t *tc, json_t *tr)
{
    double c = s_rel (tc), r = s_rel (tr);
    return sqrt (c * c + r * r);
}

double
kf_lineage_repeat (kf_db_t *db, int64_t run_id, double *largest, long *count, double *median)
{
    long full = 0;
    double band = kf_lineage_repeat_verdicts (db, run_id, median, &full);
    if (full > 0) {
        if (largest)
            *largest = 1 + band;
        if (count)
            *count = full;
        return band;
    }
    return kf_lineage_repeat_all (db, run_id, largest, count, median);
}

double
kf_lineage_repeat_verdicts (kf_db_t *db, int64_t run_id, double *median, long *full)
{
    char run[24];
    const char *params[1] = { S_I64 (run, run_id) };
    //  A confirmation's figure against its kernel's first full one.
    json_t *rows = kf_db_query (db,
                                "SELECT c.verify_speedup AS again,"
                                " (SELECT e.speedup FROM evaluations e"
                                "  JOIN jobs j ON j.id = e.job_id"
                                "  WHERE e.candidate_id = c.id AND e.correct"
                                "  AND e.fidelity IS DISTINCT FROM 'screen'"
                                "  AND j.avoid_worker IS NULL ORDER BY e.id LIMIT 1) AS first"
                                " FROM candidates c WHERE c.run_id = $1 AND c.verify_speedup > 0",
                                1, params);
    size_t n = json_array_size (rows), k = 0, i;
    double *gaps = n ? calloc (n, sizeof *gaps) : NULL;
    json_t *r;
    json_array_foreach (rows, i, r) {
        double a = kf_jnum (r, "again", 0), b = kf_jnum (r, "first", 0);
        if (gaps && a > 0 && b > 0)
            gaps[k++] = fabs (log (a / b));
    }
    json_decref (rows);
    *full = k >= KF_LINEAGE_REPEATS ? (long) k : 0;
    double band = *full ? kf_lineage_repeat_gaps (gaps, k, median) : 0;
    free (gaps);
    return band;
}

static int
s_cmp_double (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

//  The Q quantile of the N sorted values V, interpolated as
//  PostgreSQL's percentile_cont does.
static double
s_quantile (const double *v, size_t n, double q)
{
    double at = q * (double) (n - 1);
    size_t lo = (size_t) floor (at);
    if (lo + 1 >= n)
        return v[n - 1];
    return v[lo] + (at - (double) lo) * (v[lo + 1] - v[lo]);
}

double
kf_lineage_repeat_gaps (double *gaps, size_t n, double *median)
{
    if (median)
        *median = 0;
    if (n < KF_LINEAGE_REPEATS)
        return 0;
    qsort (gaps, n, sizeof *gaps, s_cmp_double);
    double mid = s_quantile (gaps, n, 0.5);
    if (median)
        *median = exp (mid) - 1;
    double band = s_quantile (gaps, n, KF_LINEAGE_REPEAT_SHARE);
    //  Round 43: below KF_LINEAGE_REPEAT_TAIL pairs the quantile is
    //  mostly the largest pair's, and one outlier (a screen of 82.93x
    //  against 121.34x in full, beside pairs a median 2% apart) set a
    //  +/-18% band for every verdict. There the band goes no further
    //  than the rest's own quantile or the median's half-normal figure,
    //  whichever is wider: one pair cannot set it, two can.
    if (n < KF_LINEAGE_REPEAT_TAIL) {
        double rest = s_quantile (gaps, n - 1, KF_LINEAGE_REPEAT_SHARE);
        double spread = KF_LINEAGE_REPEAT_TAIL_FROM_MEDIAN * mid;
        double cap = rest > spread ? rest : spread;
        band = band < cap ? band : cap;
    }
    return exp (band) - 1;
}

double
kf_lineage_repeat_early (double wide, double largest, long count)
{
    if (count >= KF_LINEAGE_REPEATS)
        return wide;
    return count > 0 && largest > 1 ? largest - 1 : 0;
}

size_t
kf_lineage_repeat_rows (json_t *rows, double *gaps)
{
    size_t k = 0, i;
    json_t *r;
    json_array_foreach (rows, i, r) {
        double screen = kf_jnum (r, "screen_speedup", 0), full = kf_jnum (r, "speedup", 0);
        json_int_t points = json_integer_value (json_object_get (r, "screen_points"));
        //  A tuning screen counts only where it timed one point.
        bool tuning = !strcmp (kf_jstr (r, "phase"), "tuning");
        if (screen > 0 && full > 0 && (!tuning || points == 1))
            gaps[k++] = fabs (log (screen / full));
    }
    return k;
}

double
kf_lineage_repeat_all (kf_db_t *db, int64_t run_id, double *largest, long *count,
                       double *median)
{
    char run[24];
    const char *params[1] = { S_I64 (run, run_id) };
    //  Round 17: a tuning candidate's screen is the best of its sweep's
    //  points (kf_lineage_repeat_rows leaves those out).
    json_t *rows = kf_db_query (db,
                                "SELECT c.screen_speedup, c.speedup, c.phase,"
                                " (SELECT coalesce(e.figures->'tuning'->'screened',"
                                "   e.figures->'tuning'->'configs') FROM evaluations e"
                                "  WHERE e.candidate_id = c.id AND e.fidelity = 'screen'"
                                "  ORDER BY e.id LIMIT 1) AS screen_points"
                                " FROM candidates c WHERE c.run_id = $1 AND c.screen_speedup > 0"
                                " AND c.speedup > 0 AND c.fidelity = 'full'",
                                1, params);
    size_t n = json_array_size (rows);
    double *gaps = n ? calloc (n, sizeof *gaps) : NULL;
    double big = 0;
    size_t k = gaps ? kf_lineage_repeat_rows (rows, gaps) : 0;
    for (size_t i = 0; i < k; i++)
        big = gaps[i] > big ? gaps[i] : big;
    json_decref (rows);
    double wide = gaps ? kf_lineage_repeat_gaps (gaps, k, median) : 0;
    if (!gaps && median)
        *median = 0;
    free (gaps);
    if (largest)
        *largest = k > 0 ? exp (big) : 0;
    if (count)
        *count = (long) k;
    return wide;
}

json_t *
kf_lineage_children (kf_db_t *db, int64_t parent_id, double parent_speedup, int n)
{
    char parent[24], limit[24];
    const char *params[2] = { S_I64 (parent, parent_id), S_I64 (limit, n) };
    json_t *rows = kf_db_query (db,
                                "SELECT c.id, c.generation, c.slot, c.status, c.speedup,"
                                " c.verdict_detail AS detail, left(c.log, 8000) AS log,"
                                " c.fidelity, e.figures->'candidate' AS tc,"
                                " e.figures->'reference' AS tr, c.phase,"
                                " c.selection->>'said' AS said,"
                                " e.figures->'tuning'->'screened' AS screen_points,"
                                " e.figures->'host_load' AS tl,"
                                " e.figures->'one_core' AS oc,"
                                //  Round 46: whether a tuned child counted its
                                //  template's defaults (the compile's first point).
                                //  Read for tuned children alone, through the
                                //  jobs' candidate index (migration 14).
                                " CASE WHEN c.phase = 'tuning' THEN"
                                " (SELECT bj.result->'best_config' FROM jobs bj"
                                "  WHERE bj.candidate_id = c.id"
                                "  AND bj.kind = 'evaluate' AND bj.state = 'done'"
                                "  ORDER BY bj.id DESC LIMIT 1)"
                                " = (SELECT cj.result->'configs'->0->'params' FROM jobs cj"
                                "  WHERE cj.candidate_id = c.id"
                                "  AND cj.kind = 'compile' AND cj.state = 'done'"
                                "  ORDER BY cj.id DESC LIMIT 1) END AS at_defaults"
                                " FROM candidates c LEFT JOIN LATERAL (SELECT figures"
                                "  FROM evaluations WHERE candidate_id = c.id AND correct"
                                "  ORDER BY id DESC LIMIT 1) e ON true"
                                " WHERE c.parent_id = $1 AND c.finished_at IS NOT NULL"
                                " ORDER BY c.finished_at DESC, c.id DESC LIMIT $2",
                                2, params);
    if (!rows)
        return NULL;
    /* The parent's own noise and protocol, and how far apart the screen
     * and full figures of one kernel came in this run. */
    json_t *par = kf_db_row (db,
                             "SELECT p.fidelity, p.run_id, e.figures->'candidate' AS tc,"
                             " e.figures->'reference' AS tr, e.figures->'host_load' AS tl,"
                             " e.figures->'one_core' AS oc FROM candidates p LEFT JOIN LATERAL (SELECT figures"
                             "  FROM evaluations WHERE candidate_id = p.id AND correct"
                             "  ORDER BY id DESC LIMIT 1) e ON true WHERE p.id = $1",
                             1, params, NULL);
    double pn = par ? kf_lineage_noise (json_object_get (par, "tc"),
                                        json_object_get (par, "tr")) : 0;
    //  The screen-against-full gap for the lines' own words; the band
    //  the verdicts take, the confirmations' where they make one.
    double gap = 0, median = 0, full_median = 0;
    long pairs = 0, full_pairs = 0;
    double repeat = kf_lineage_repeat_all (db, kf_jint (par, "run_id"), &gap, &pairs, &median);
    double full_band = kf_lineage_repeat_verdicts (db, kf_jint (par, "run_id"), &full_median,
                                                   &full_pairs);
    bool full = full_pairs > 0;
    if (full) {
        repeat = full_band;
        median = full_median;
        pairs = full_pairs;
    }
    size_t i;
    json_t *c;
    json_array_foreach (rows, i, c) {
        double cn = kf_lineage_noise (json_object_get (c, "tc"), json_object_get (c, "tr"));
        json_object_set_new (c, "noise", json_real (sqrt (cn * cn + pn * pn)));
        json_object_set_new (c, "repeat", json_real (repeat));
        json_object_set_new (c, "repeat_median", json_real (median));
        json_object_set_new (c, "repeat_count", json_integer (pairs));
        json_object_set_new (c, "repeat_full", json_boolean (full));
        json_object_set_new (c, "screen_gap", json_real (gap));
        json_object_set_new (c, "loaded",
                             json_boolean (kf_prompt_load_busy (json_object_get (c, "tl"))
                                           || kf_prompt_load_busy (json_object_get (par, "tl"))));
        if (json_object_get (par, "tl"))
            json_object_set (c, "pl", json_object_get (par, "tl"));
        if (json_object_get (par, "oc"))
            json_object_set (c, "poc", json_object_get (par, "oc"));
        if (*kf_jstr (par, "fidelity"))
            json_object_set_new (c, "parent_fidelity", json_string (kf_jstr (par, "fidelity")));
        char reason[800];
        kf_lineage_reason (c, parent_speedup, reason, sizeof reason);
        json_object_set_new (c, "reason", json_string (reason));
        static const char *const drop[] = { "log", "detail", "tc", "tr", "noise", "repeat",
                                            "repeat_median", "repeat_count", "repeat_full",
                                            "screen_gap", "parent_fidelity",
                                            "screen_points", "tl", "pl", "loaded", "oc",
                                            "poc", "at_defaults" };
        for (size_t k = 0; k < sizeof drop / sizeof drop[0]; k++)
            json_object_del (c, drop[k]);
        if (!json_is_number (json_object_get (c, "speedup"))
            || strcmp (kf_jstr (c, "status"), "correct"))
            json_object_del (c, "speedup");
    }
    json_decref (par);
    return rows;
}

int64_t
kf_lineage_last_child (kf_db_t *db, int64_t parent_id)
{
    json_t *row = kf_db_row_id (db,
                                "SELECT id FROM candidates WHERE parent_id = $1"
                                " AND finished_at IS NOT NULL"
                                " ORDER BY finished_at DESC, id DESC LIMIT 1",
                                parent_id, NULL);
    int64_t id = kf_jint (row, "id");
    json_decref (row);
    return id;
}

const char *
kf_lineage_standing (const char *fidelity, const char *verify_state, const char *audit_reason,
                     const char *audit_verdict)
{
    bool accepted = audit_verdict && !strcmp (audit_verdict, "accepted");
    if (audit_reason && *audit_reason && !accepted)
        return "held for audit";
    if (verify_state && !strcmp (verify_state, "pending"))
        return "being re-verified";
    if (fidelity && !strcmp (fidelity, "pending"))
        return "full timing pending";
    if (fidelity && !strcmp (fidelity, "screen"))
        return "screen figure";
    return "counted";
}

json_t *
kf_lineage_best (kf_db_t *db, int64_t run_id)
{
    json_t *row = kf_db_row_id (db,
                                "SELECT id, fidelity, verify_state, audit_reason, audit_verdict"
                                " FROM candidates WHERE run_id = $1 AND status = 'correct'"
                                " AND speedup > 0 AND audit_verdict IS DISTINCT FROM 'rejected'"
                                " AND duplicate_of IS NULL"   /* a repeat is its original */
                                " ORDER BY speedup DESC, id LIMIT 1",
                                run_id, NULL);
    if (!row)
        return NULL;
    json_t *k = kf_prompt_kernel (db, kf_jint (row, "id"));
    if (k)
        json_object_set_new (k, "standing",
                             json_string (kf_lineage_standing (
                                 kf_jstr (row, "fidelity"), kf_jstr (row, "verify_state"),
                                 kf_jstr (row, "audit_reason"), kf_jstr (row, "audit_verdict"))));
    json_decref (row);
    return k;
}

int
kf_lineage_end_rule (int64_t total, int64_t generated, int64_t judged, const char *last,
                     char *status, size_t status_size, char *reason, size_t reason_size)
{
    const char *what = last && *last ? last : "?";
    if (total <= 0 || judged > 0)
        return 0;
    snprintf (status, status_size, "failed");
    if (generated == 0)
        snprintf (reason, reason_size, "no candidate could be generated (%lld of %lld"
                  " failed before compiling); the last: %.300s", (long long) total,
                  (long long) total, what);
    else
        snprintf (reason, reason_size, "no candidate could be judged (%lld of %lld failed:"
                  " %lld before compiling, %lld in compiling or evaluation, with no verdict on"
                  " the kernel); the last: %.300s", (long long) total, (long long) total,
                  (long long) (total - generated), (long long) generated, what);
    return 1;
}

int
kf_lineage_run_end (kf_db_t *db, int64_t run_id, char *status, size_t status_size,
                    char *reason, size_t reason_size)
{
    char run[24];
    const char *params[1] = { S_I64 (run, run_id) };
    bool failed = false;
    /* The last failure's text: a generator's error while nothing was
     * generated, else the compile or evaluation failure. */
    json_t *row = kf_db_row (db,
                             "SELECT count(*) AS total,"
                             " count(*) FILTER (WHERE source_hash IS NOT NULL) AS generated,"
                             " count(*) FILTER (WHERE status IN ('correct', 'incorrect',"
                             "  'crashed', 'timeout', 'compile_failed')) AS judged,"
                             " (SELECT verdict_detail FROM candidates WHERE run_id = $1"
                             "  AND source_hash IS NULL AND verdict_detail IS NOT NULL"
                             "  ORDER BY finished_at DESC NULLS LAST, id DESC LIMIT 1) AS last_gen,"
                             " (SELECT verdict_detail FROM candidates WHERE run_id = $1"
                             "  AND source_hash IS NOT NULL AND verdict_detail IS NOT NULL"
                             "  ORDER BY finished_at DESC NULLS LAST, id DESC LIMIT 1) AS last"
                             " FROM candidates WHERE run_id = $1",
                             1, params, &failed);
    if (!row)
        return failed ? -1 : 0;
    int64_t generated = kf_jint (row, "generated");
    kf_lineage_end_rule (kf_jint (row, "total"), generated, kf_jint (row, "judged"),
                         kf_jstr (row, generated ? "last" : "last_gen"), status, status_size,
                         reason, reason_size);
    json_decref (row);
    return 0;
}
