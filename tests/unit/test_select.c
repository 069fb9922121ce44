/*  test_select.c - parent selection (coordinator/kf_select.c) and the
 *  search settings (coordinator/search-defaults.json, kf_search.c):
 *  every draw is a function of (seed, sequence, stream); each strategy
 *  weighs what it says; the mix follows the ratios; islands confine, each
 *  with an archive of its own that the run's grid may hide; the
 *  built-in defaults are the paper's Table 6 where it has a value, and a
 *  defaults file or a run config with a bad key is refused by name. */
#include "../kf_test.h"
#include "../../coordinator/kf_search.h"
#include "../../coordinator/kf_select.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Six elites in cell order: fitness rising with the index, islands 0..2. */
static void
s_archive (kf_elite_t e[6])
{
    memset (e, 0, 6 * sizeof *e);
    for (int i = 0; i < 6; i++) {
        e[i].candidate_id = 100 + i;
        e[i].coords[0] = i % 4;
        e[i].coords[1] = i / 4;
        e[i].fitness = 0.55 + 0.07 * i;
        e[i].speedup = 1.0 + i;
        e[i].islands = 1u << (i % 3);
        e[i].curiosity = 0;
    }
}

static kf_select_config_t
s_only (kf_select_strategy_t which, int islands)
{
    kf_select_config_t c;
    memset (&c, 0, sizeof c);
    c.ratio[which] = 1;
    c.islands = islands;
    c.inspirations = 2;
    return c;
}

static void
test_streams (void)
{
    uint64_t a = kf_select_stream (7, 3, 0), b = kf_select_stream (7, 3, 0);
    CHECK (a == b);
    CHECK (kf_select_stream (7, 3, 0) != kf_select_stream (7, 4, 0));
    CHECK (kf_select_stream (7, 3, 0) != kf_select_stream (8, 3, 0));
    CHECK (kf_select_stream (7, 3, 0) != kf_select_stream (7, 3, 1));
    double sum = 0;
    bool in_range = true;
    for (int i = 0; i < 10000; i++) {
        double x = kf_select_next (&a);
        in_range &= x >= 0 && x < 1;
        sum += x;
        CHECK (x == kf_select_next (&b));
    }
    CHECK (in_range);
    CHECK (fabs (sum / 10000 - 0.5) < 0.02);
}

static void
test_determinism (void)
{
    kf_elite_t e[6];
    s_archive (e);
    for (int i = 0; i < 6; i++)
        e[i].curiosity = 1 + i;
    kf_select_config_t c = { { 0.1, 0.2, 0.5, 0.2 }, 3, 2 };
    int differ = 0;
    for (int64_t seq = 0; seq < 200; seq++) {
        kf_selection_t x, y, z;
        CHECK (kf_select (&c, e, 6, 42, seq, (int) (seq % 3), &x) == 0);
        CHECK (kf_select (&c, e, 6, 42, seq, (int) (seq % 3), &y) == 0);
        CHECK (memcmp (&x, &y, sizeof x) == 0);
        CHECK (kf_select (&c, e, 6, 43, seq, (int) (seq % 3), &z) == 0);
        differ += x.parent != z.parent || x.strategy != z.strategy;
    }
    /* Another seed gives other choices (most of the time). */
    CHECK (differ > 100);
}

static void
test_mix (void)
{
    kf_elite_t e[6];
    s_archive (e);
    for (int i = 0; i < 6; i++)
        e[i].curiosity = 1;
    kf_select_config_t c = { { 0.1, 0.2, 0.5, 0.2 }, 3, 0 };
    int count[KF_SELECT_N] = { 0 };
    int n = 20000;
    for (int64_t seq = 0; seq < n; seq++) {
        kf_selection_t s;
        kf_select (&c, e, 6, 1, seq, 0, &s);
        count[s.strategy]++;
    }
    for (int k = 0; k < KF_SELECT_N; k++)
        CHECK (fabs ((double) count[k] / n - c.ratio[k]) < 0.015);
    /* One island only: the island strategy is off and the others share. */
    c.islands = 1;
    memset (count, 0, sizeof count);
    for (int64_t seq = 0; seq < n; seq++) {
        kf_selection_t s;
        kf_select (&c, e, 6, 1, seq, 0, &s);
        count[s.strategy]++;
    }
    CHECK (count[KF_SELECT_ISLAND] == 0);
    CHECK (fabs ((double) count[KF_SELECT_CURIOSITY] / n - 0.5 / 0.8) < 0.02);
    CHECK (strcmp (kf_select_strategy_name (KF_SELECT_CURIOSITY), "curiosity") == 0);
}

static void
test_strategies (void)
{
    kf_elite_t e[6];
    s_archive (e);
    int n = 30000, hits[6];
    /* Uniform: every elite about 1/6. */
    kf_select_config_t c = s_only (KF_SELECT_UNIFORM, 1);
    memset (hits, 0, sizeof hits);
    for (int64_t seq = 0; seq < n; seq++) {
        kf_selection_t s;
        kf_select (&c, e, 6, 9, seq, 0, &s);
        CHECK (s.parent >= 0 && s.parent < 6);
        hits[s.parent]++;
    }
    for (int i = 0; i < 6; i++)
        CHECK (fabs ((double) hits[i] / n - 1.0 / 6) < 0.015);
    /* Fitness-proportionate: the share follows the fitness. */
    c = s_only (KF_SELECT_FITNESS, 1);
    memset (hits, 0, sizeof hits);
    double total = 0;
    for (int i = 0; i < 6; i++)
        total += e[i].fitness;
    for (int64_t seq = 0; seq < n; seq++) {
        kf_selection_t s;
        kf_select (&c, e, 6, 9, seq, 0, &s);
        hits[s.parent]++;
    }
    for (int i = 0; i < 6; i++)
        CHECK (fabs ((double) hits[i] / n - e[i].fitness / total) < 0.015);
    CHECK (hits[5] > hits[0]);
    /* Curiosity: the estimator's weights; none at all: uniform, said so. */
    c = s_only (KF_SELECT_CURIOSITY, 1);
    kf_selection_t s;
    kf_select (&c, e, 6, 9, 1, 0, &s);
    CHECK (s.fallback);
    CHECK (s.parent >= 0);
    e[4].curiosity = 3;
    e[1].curiosity = 1;
    memset (hits, 0, sizeof hits);
    for (int64_t seq = 0; seq < n; seq++) {
        kf_select (&c, e, 6, 9, seq, 0, &s);
        CHECK (!s.fallback);
        hits[s.parent]++;
    }
    CHECK (hits[0] == 0 && hits[2] == 0 && hits[3] == 0 && hits[5] == 0);
    CHECK (fabs ((double) hits[4] / n - 0.75) < 0.015);
    /* Island: only members of the candidate's island. */
    c = s_only (KF_SELECT_ISLAND, 4);
    for (int64_t seq = 0; seq < 2000; seq++) {
        kf_select (&c, e, 6, 9, seq, 1, &s);
        CHECK (s.strategy == KF_SELECT_ISLAND && !s.fallback);
        CHECK (e[s.parent].islands & 2u);
    }
    /* Island 3 has no elite: uniform instead, said so. */
    kf_select (&c, e, 6, 9, 5, 3, &s);
    CHECK (s.fallback && s.parent >= 0);
    /* A migrant counts in its new island. */
    e[0].islands |= 1u << 3;
    for (int64_t seq = 0; seq < 50; seq++) {
        kf_select (&c, e, 6, 9, seq, 3, &s);
        CHECK (!s.fallback && s.parent == 0);
    }
}

static void
test_inspirations (void)
{
    kf_elite_t e[6];
    s_archive (e);
    kf_select_config_t c = { { 1, 0, 0, 0 }, 1, 3 };
    for (int64_t seq = 0; seq < 500; seq++) {
        kf_selection_t s;
        kf_select (&c, e, 6, 5, seq, 0, &s);
        CHECK (s.n_inspirations == 3);
        /* The best elite of another cell comes first. */
        CHECK (s.inspirations[0] == (s.parent == 5 ? 4 : 5));
        for (int i = 0; i < s.n_inspirations; i++) {
            CHECK (s.inspirations[i] != s.parent);
            for (int j = 0; j < i; j++)
                CHECK (s.inspirations[i] != s.inspirations[j]);
        }
    }
    /* Two elites: one inspiration at most; one elite: none. */
    kf_selection_t s;
    kf_select (&c, e, 2, 5, 0, 0, &s);
    CHECK (s.n_inspirations == 1);
    kf_select (&c, e, 1, 5, 0, 0, &s);
    CHECK (s.n_inspirations == 0 && s.parent == 0);
    /* An empty archive: no parent, but the strategy draw is made. */
    kf_select (&c, NULL, 0, 5, 0, 0, &s);
    CHECK (s.parent == -1 && s.n_inspirations == 0 && s.draw > 0);
    CHECK (kf_select (NULL, e, 6, 5, 0, 0, &s) == -1);
}

static void
test_best (void)
{
    kf_elite_t e[6];
    s_archive (e);
    e[2].fitness = e[5].fitness;   /* a tie on fitness: the faster first */
    e[2].speedup = 100;
    int out[6];
    CHECK (kf_select_best (e, 6, out, 3) == 3);
    CHECK (out[0] == 2 && out[1] == 5 && out[2] == 4);
    CHECK (kf_select_best (e, 6, out, 6) == 6);
    CHECK (out[5] == 0);
    CHECK (kf_select_best (e, 2, out, 8) == 2);
    CHECK (out[0] == 1 && out[1] == 0);
}

static void
test_island_archives (void)
{
    /* Five correct candidates in the order they were planned; all in one
     * cell but the last. Island 0 holds ids 1 and 2, island 1 ids 3 and
     * 4 (4 faster than 3 at equal fitness), island 2 id 5 and migrant 2. */
    kf_elite_t m[5];
    memset (m, 0, sizeof m);
    double fit[5] = { 0.70, 0.80, 0.75, 0.75, 0.60 };
    /* All at parity or better: one below the reference would be no
     * parent beside them (kf_select.h; test_search_round7.c). */
    double sp[5] = { 1.0, 2.0, 1.5, 1.6, 1.1 };
    int own[5] = { 0, 0, 1, 1, 2 };
    for (int i = 0; i < 5; i++) {
        m[i].candidate_id = i + 1;
        m[i].coords[0] = i == 4 ? 3 : 1;
        m[i].fitness = fit[i];
        m[i].speedup = sp[i];
        m[i].island = own[i];
        m[i].islands = 1u << own[i];
    }
    m[1].islands |= 1u << 2;   /* id 2 migrated into island 2 */
    kf_elite_t out[15];
    size_t n = kf_select_island_archives (m, 5, 4, 3, out);
    /* Island 0: id 2 (fitter than 1); island 1: id 4 (as fit as 3,
     * faster); island 2: id 2 in its cell, id 5 in another. */
    CHECK (n == 4);
    CHECK (out[0].candidate_id == 2 && out[0].island == 0 && out[0].islands == 1u);
    CHECK (out[1].candidate_id == 4 && out[1].island == 1 && out[1].islands == 2u);
    CHECK (out[2].candidate_id == 2 && out[2].island == 2 && out[2].islands == 4u);
    CHECK (out[3].candidate_id == 5 && out[3].island == 2);
    /* A tie on fitness and speedup: the earlier keeps the cell. */
    m[3].speedup = m[2].speedup;
    n = kf_select_island_archives (m, 5, 4, 3, out);
    CHECK (out[1].candidate_id == 3);
    /* Two bins: levels 1 and 3 still fall in different bins (0 and 1). */
    CHECK (kf_select_island_archives (m, 5, 2, 3, out) == 4);
    /* One island: a plain MAP-Elites grid of everything. */
    n = kf_select_island_archives (m, 5, 4, 1, out);
    CHECK (n == 1 && out[0].candidate_id == 2);

    /* The island strategy draws from the island's own archive, not from
     * the grid: the grid's elite of the cell is id 2 (island 0); island
     * 1's own elite there is id 3, which the grid hides. */
    kf_elite_t grid[2] = { m[1], m[4] };
    n = kf_select_island_archives (m, 5, 4, 3, out);
    kf_select_config_t c = s_only (KF_SELECT_ISLAND, 3);
    c.inspirations = 2;
    for (int64_t seq = 0; seq < 200; seq++) {
        kf_selection_t s;
        CHECK (kf_select_in (&c, grid, 2, out, n, 4, seq, 1, &s) == 0);
        CHECK (s.from_island && !s.fallback && s.parent == 1);
        CHECK (out[s.parent].candidate_id == 3);
        /* The grid's better kernel of that cell is shown beside it. */
        CHECK (s.n_inspirations == 2 && grid[s.inspirations[0]].candidate_id == 2);
    }
    /* Island 2 holds ids 2 and 5, fitness-weighted. */
    int hits[2] = { 0, 0 };
    for (int64_t seq = 0; seq < 4000; seq++) {
        kf_selection_t s;
        kf_select_in (&c, grid, 2, out, n, 4, seq, 2, &s);
        CHECK (s.from_island && (s.parent == 2 || s.parent == 3));
        hits[s.parent - 2]++;
        /* A parent from an island is never its own inspiration. */
        for (int i = 0; i < s.n_inspirations; i++)
            CHECK (grid[s.inspirations[i]].candidate_id != out[s.parent].candidate_id);
    }
    CHECK (fabs ((double) hits[0] / 4000 - 0.80 / 1.40) < 0.03);
    /* An island with nothing yet: uniform over the grid, said so. */
    kf_selection_t s;
    CHECK (kf_select_in (&c, grid, 2, out, 1, 4, 7, 1, &s) == 0);
    CHECK (s.fallback && !s.from_island && s.parent >= 0 && s.parent < 2);
    /* Other strategies never read the islands' archives. */
    c = s_only (KF_SELECT_FITNESS, 3);
    kf_select_in (&c, grid, 2, out, n, 4, 7, 1, &s);
    CHECK (!s.from_island);
}

static void
s_write (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");
    if (f) {
        fputs (text, f);
        fclose (f);
    }
}

static void
test_defaults (void)
{
    char *why = NULL;
    json_t *d = kf_search_defaults_load (NULL, &why);
    CHECK (d != NULL);
    if (!d)
        return;
    /* Table 6 of the paper. */
    CHECK (json_integer_value (json_object_get (d, "generations")) == 40);
    CHECK (json_integer_value (json_object_get (d, "population")) == 8);
    CHECK (json_integer_value (json_object_get (d, "archive_bins")) == 4);
    CHECK (json_integer_value (json_object_get (d, "meta_every")) == 10);
    CHECK (json_integer_value (json_object_get (d, "meta_max_edits")) == 3);
    CHECK (json_integer_value (json_object_get (d, "prompt_archive")) == 16);
    CHECK (json_integer_value (json_object_get (d, "tuning_rounds")) == 2);
    CHECK (json_integer_value (json_object_get (d, "tuning_configs")) == 8);
    CHECK (json_number_value (json_object_get (d, "temperature")) == 0.3);
    CHECK (json_number_value (json_object_get (d, "top_p")) == 1.0);
    CHECK (json_integer_value (json_object_get (d, "max_tokens")) == 8000);
    /* Curiosity leads the mix, and every switch is on. */
    json_t *sel = json_object_get (d, "selection");
    const char *k;
    json_t *v;
    json_object_foreach (sel, k, v)
        CHECK (strcmp (k, "curiosity") == 0
               || json_number_value (v) < json_number_value (json_object_get (sel, "curiosity")));
    CHECK (json_is_true (json_object_get (d, "islands")));
    CHECK (json_is_true (json_object_get (d, "gradients")));
    CHECK (json_is_true (json_object_get (d, "meta_prompting")));
    CHECK (json_is_true (json_object_get (d, "tuning")));
    json_decref (d);

    /* A file of the operator's replaces the keys it names. */
    char dir[] = "/tmp/test_select.XXXXXX";
    CHECK (mkdtemp (dir) != NULL);
    char path[96];
    snprintf (path, sizeof path, "%s/d.json", dir);
    s_write (path, "{\"tuning\": false, \"population\": 3}");
    d = kf_search_defaults_load (path, &why);
    CHECK (d && json_is_false (json_object_get (d, "tuning")));
    CHECK (d && json_integer_value (json_object_get (d, "population")) == 3);
    CHECK (d && json_integer_value (json_object_get (d, "generations")) == 40);
    json_decref (d);
    struct {
        const char *text, *says;
    } bad[] = {
        { "{\"tunning\": false}", "unknown key 'tunning'" },
        { "{\"island_count\": 0}", "island_count must be an integer" },
        { "{\"gradient_decay\": 2}", "gradient_decay must be a number" },
        { "{\"selection\": {\"curiosity\": 0}}", "at least one strategy" },
        { "{\"selection\": {\"greedy\": 1}}", "unknown strategy" },
        { "{\"islands\": 1}", "islands must be true or false" },
        { "{\"tuning\": false,\n  oops}", ":2:" },
        { "[1, 2]", "not a JSON object" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        s_write (path, bad[i].text);
        free (why);
        why = NULL;
        d = kf_search_defaults_load (path, &why);
        CHECK (d == NULL);
        CHECK (why && strstr (why, path) && strstr (why, bad[i].says));
        if (why && !strstr (why, bad[i].says))
            fprintf (stderr, "said: %s\n", why);
        json_decref (d);
    }
    free (why);
    why = NULL;
    CHECK (kf_search_defaults_load ("/nonexistent/defaults.json", &why) == NULL);
    CHECK (why && strstr (why, "/nonexistent/defaults.json"));
    free (why);
    why = NULL;
    unlink (path);
    rmdir (dir);

    /* A run's config: known keys checked and copied, others left alone. */
    json_t *config = json_pack ("{s:b, s:i, s:s, s:{s:f}}", "islands", 0, "tuning_rounds",
                                1, "target", "host", "selection", "uniform", 1.0);
    json_t *out = json_object ();
    CHECK (kf_search_config_check (config, out, &why) == 0);
    CHECK (json_is_false (json_object_get (out, "islands")));
    CHECK (json_integer_value (json_object_get (out, "tuning_rounds")) == 1);
    CHECK (json_object_get (out, "selection") != NULL);
    CHECK (json_object_get (out, "target") == NULL);
    json_object_set_new (config, "tunning", json_false ());
    CHECK (kf_search_config_check (config, NULL, &why) == -1);
    CHECK (why && strstr (why, "config.tunning: unknown key"));
    free (why);
    why = NULL;
    json_object_del (config, "tunning");
    json_object_set_new (config, "max_in_flight", json_integer (-1));
    CHECK (kf_search_config_check (config, NULL, &why) == -1);
    CHECK (why && strstr (why, "config.max_in_flight"));
    free (why);
    json_decref (config);
    json_decref (out);
}

int
main (void)
{
    test_streams ();
    test_determinism ();
    test_mix ();
    test_strategies ();
    test_inspirations ();
    test_best ();
    test_island_archives ();
    test_defaults ();
    return kf_test_done ("test_select");
}
