/*  test_fidelity.c - the rules of multi-fidelity timing
 *  (coordinator/kf_fidelity.c, docs/search.md "Fidelity"): which screened
 *  candidates are timed with the full protocol (the margin rule), what
 *  the screen protocol is for a given full one (never longer; none when
 *  it would be no shorter), how the settings are checked, and that a
 *  screen figure never counts where the run's best is reported (kfctl's
 *  report curve, its progress line and its listing). */
#include "../kf_test.h"
#include "../../coordinator/kf_fidelity.h"
#include "../../kfctl/kfctl_print.h"
#include "../../kfctl/kfctl_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
s_margin_rule (void)
{
    /* Nothing counted yet, or a cell of its own: every correct screen is
     * timed in full, however slow. */
    CHECK (kf_fidelity_wants_full (0.01, NAN, NAN, 0.8));
    CHECK (kf_fidelity_wants_full (0.01, 3.0, NAN, 0.8));
    CHECK (kf_fidelity_wants_full (0.01, NAN, 3.0, 0.8));
    /* Never a result that is not correct. */
    CHECK (!kf_fidelity_wants_full (0, NAN, NAN, 0.8));
    CHECK (!kf_fidelity_wants_full (-1, 1.0, 1.0, 0.8));
    CHECK (!kf_fidelity_wants_full (NAN, 1.0, 1.0, 0.8));
    /* Within the margin of the lower of the cell's elite and the run's
     * best: cell 3x, best 2x: the bar is 2x, 0.8 of it is 1.6x. */
    CHECK (kf_fidelity_wants_full (1.6, 3.0, 2.0, 0.8));
    CHECK (kf_fidelity_wants_full (2.5, 3.0, 2.0, 0.8));
    CHECK (!kf_fidelity_wants_full (1.59, 3.0, 2.0, 0.8));
    /* A weak cell (1x) in a strong run (4x): near its cell's elite is
     * enough, so every niche gets true figures. */
    CHECK (kf_fidelity_wants_full (0.8, 1.0, 4.0, 0.8));
    CHECK (!kf_fidelity_wants_full (0.79, 1.0, 4.0, 0.8));
    /* Far below both: screened out. */
    CHECK (!kf_fidelity_wants_full (0.1, 1.0, 1.0, 0.8));
    /* Margin 0: every correct screen is timed in full; margin 1: only one
     * at least as fast as the bar. */
    CHECK (kf_fidelity_wants_full (0.001, 5.0, 5.0, 0));
    CHECK (kf_fidelity_wants_full (5.0, 5.0, 6.0, 1));
    CHECK (!kf_fidelity_wants_full (4.99, 5.0, 6.0, 1));
}

static double
s_num (json_t *o, const char *key)
{
    return json_number_value (json_object_get (o, key));
}

static void
s_screen_timing (void)
{
    /* The coordinator's defaults as the full protocol: the screen's own
     * floors (the built-in screen_timing when it names none). */
    json_t *full = json_pack ("{s:f, s:i, s:f, s:i}", "min_time_s", 1.0, "min_samples", 10,
                              "warmup_s", 1.0, "warmup_calls", 10);
    json_t *screen = json_object ();
    json_t *t = kf_fidelity_screen_timing (screen, full);
    CHECK (t != NULL);
    CHECK (s_num (t, "min_time_s") == KF_FIDELITY_SCREEN_MIN_TIME_S);
    CHECK (json_integer_value (json_object_get (t, "min_samples"))
           == KF_FIDELITY_SCREEN_MIN_SAMPLES);
    CHECK (s_num (t, "warmup_s") == KF_FIDELITY_SCREEN_WARMUP_S);
    CHECK (json_integer_value (json_object_get (t, "warmup_calls"))
           == KF_FIDELITY_SCREEN_WARMUP_CALLS);
    json_decref (t);
    /* A run's screen names its floors. */
    json_object_set_new (screen, "min_time_s", json_real (0.2));
    t = kf_fidelity_screen_timing (screen, full);
    CHECK (t && s_num (t, "min_time_s") == 0.2);
    json_decref (t);
    json_decref (full);

    /* A full protocol no longer than the screen (the integration tests'
     * fast settings): nothing to screen with, the first evaluation is
     * the full one. */
    full = json_pack ("{s:f, s:i, s:f, s:i}", "min_time_s", 0.05, "min_samples", 5,
                      "warmup_s", 0.02, "warmup_calls", 2);
    json_object_clear (screen);
    CHECK (kf_fidelity_screen_timing (screen, full) == NULL);
    /* Shorter in one floor: a screen, each floor the lower of the two. */
    json_object_set_new (full, "min_samples", json_integer (21));
    json_object_set_new (full, "note", json_string ("kept"));
    t = kf_fidelity_screen_timing (screen, full);
    CHECK (t != NULL);
    CHECK (s_num (t, "min_time_s") == 0.05 && s_num (t, "warmup_s") == 0.02);
    CHECK (json_integer_value (json_object_get (t, "min_samples")) == 5);
    CHECK (json_integer_value (json_object_get (t, "warmup_calls")) == 2);
    CHECK (!strcmp (json_string_value (json_object_get (t, "note")), "kept"));
    json_decref (t);
    json_decref (full);
    /* No full timing at all: the exec worker's defaults (1 s, 10, 1 s,
     * 10) are the full protocol. */
    t = kf_fidelity_screen_timing (screen, NULL);
    CHECK (t && s_num (t, "min_time_s") == KF_FIDELITY_SCREEN_MIN_TIME_S);
    json_decref (t);
    json_decref (screen);
}

static void
s_settings (void)
{
    char *why = NULL;
    json_t *v = json_pack ("{s:f, s:i}", "min_time_s", 0.05, "min_samples", 3);
    CHECK (kf_fidelity_timing_check (v, "config.", "screen_timing", &why) == 0);
    json_object_set_new (v, "min_samples", json_real (2.5));
    CHECK (kf_fidelity_timing_check (v, "config.", "screen_timing", &why) == -1);
    CHECK (why && strstr (why, "config.screen_timing.min_samples"));
    free (why);
    why = NULL;
    json_object_set_new (v, "min_samples", json_integer (3));
    json_object_set_new (v, "min_time_s", json_real (0));
    CHECK (kf_fidelity_timing_check (v, "config.", "screen_timing", &why) == -1);
    free (why);
    why = NULL;
    json_object_del (v, "min_time_s");
    json_object_set_new (v, "samples", json_integer (3));
    CHECK (kf_fidelity_timing_check (v, "config.", "screen_timing", &why) == -1);
    CHECK (why && strstr (why, "unknown member"));
    free (why);
    why = NULL;
    json_decref (v);

    /* Through the run config's check and the built-in defaults. */
    json_t *config = json_pack ("{s:b, s:f, s:{s:f}}", "screening", 1, "full_margin", 0.5,
                                "screen_timing", "warmup_s", 0.01);
    CHECK (kf_search_config_check (config, NULL, &why) == 0);
    json_object_set_new (config, "full_margin", json_real (1.5));
    CHECK (kf_search_config_check (config, NULL, &why) == -1);
    CHECK (why && strstr (why, "full_margin"));
    free (why);
    why = NULL;
    json_object_set_new (config, "full_margin", json_real (0.5));
    json_object_set_new (config, "screen_timing", json_integer (1));
    CHECK (kf_search_config_check (config, NULL, &why) == -1);
    CHECK (why && strstr (why, "screen_timing"));
    free (why);
    why = NULL;
    json_decref (config);
    json_t *d = kf_search_defaults_load (NULL, &why);
    CHECK (d != NULL);
    CHECK (json_is_true (json_object_get (d, "screening")));
    CHECK (s_num (d, "full_margin") == 0.8);
    CHECK (s_num (json_object_get (d, "screen_timing"), "min_time_s")
           == KF_FIDELITY_SCREEN_MIN_TIME_S);
    json_decref (d);
    free (why);
}

static json_t *
s_candidate (int id, int generation, const char *fidelity, double speedup)
{
    json_t *c = json_pack ("{s:i, s:i, s:i, s:s, s:f}", "id", id, "generation", generation,
                           "slot", id, "status", "correct", "speedup", speedup);
    if (fidelity)
        json_object_set_new (c, "fidelity", json_string (fidelity));
    return c;
}

static void
s_last_line (const char *path, char *line, size_t size)
{
    FILE *f = fopen (path, "r");
    char buf[256];
    line[0] = 0;
    while (f && fgets (buf, sizeof buf, f))
        snprintf (line, size, "%s", buf);
    if (f)
        fclose (f);
}

static void
s_never_the_best (void)
{
    /* The report's curve: a screen figure (final or waiting for its full
     * evaluation) never lifts it; a full one and one from before
     * fidelity existed (none) do. */
    json_t *candidates = json_array ();
    json_array_append_new (candidates, s_candidate (1, 0, "full", 1.5));
    json_array_append_new (candidates, s_candidate (2, 0, NULL, 1.2));
    json_array_append_new (candidates, s_candidate (3, 1, "screen", 9.0));
    json_array_append_new (candidates, s_candidate (4, 1, "pending", 8.0));
    json_t *body = json_pack ("{s:{s:i, s:f}, s:o}", "run", "id", 9, "best_speedup", 1.5,
                              "candidates", candidates);
    char dir[] = "/tmp/kf-fidelity.XXXXXX";
    CHECK (mkdtemp (dir) != NULL);
    char prefix[64], *paths[3], *err = NULL, line[256];
    snprintf (prefix, sizeof prefix, "%s/r", dir);
    CHECK (kf_ctl_report_write (body, prefix, paths, &err) == 0);
    s_last_line (paths[0], line, sizeof line);
    CHECK (!strcmp (line, "4,1.5\n"));
    s_last_line (paths[1], line, sizeof line);
    CHECK (!strcmp (line, "1,2,0,,1.5\n"));
    for (int i = 0; i < 3; i++) {
        unlink (paths[i]);
        free (paths[i]);
    }
    rmdir (dir);
    /* The listing names each figure's protocol. */
    FILE *f = tmpfile ();
    kf_ctl_print_candidates (f, candidates);
    rewind (f);
    char text[2048];
    size_t n = fread (text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose (f);
    CHECK (strstr (text, "FIDELITY") && strstr (text, " screen ") && strstr (text, " pending ")
           && strstr (text, " full "));
    json_decref (body);

    /* kfctl's progress line: a candidate event with a screen figure does
     * not raise the best; a full one does. */
    kf_ctl_progress_t progress;
    memset (&progress, 0, sizeof progress);
    json_t *event = json_pack ("{s:s, s:s, s:f, s:s}", "event", "candidate", "status", "correct",
                               "speedup", 7.0, "fidelity", "screen");
    kf_ctl_progress_from_event (&progress, event);
    CHECK (!progress.has_best);
    json_object_set_new (event, "fidelity", json_string ("pending"));
    kf_ctl_progress_from_event (&progress, event);
    CHECK (!progress.has_best);
    json_object_set_new (event, "fidelity", json_string ("full"));
    kf_ctl_progress_from_event (&progress, event);
    CHECK (progress.has_best && progress.best == 7.0);
    json_decref (event);
}

int
main (void)
{
    s_margin_rule ();
    s_screen_timing ();
    s_settings ();
    s_never_the_best ();
    return kf_test_done ("test_fidelity");
}
