/*  test_progress.c - kfctl's counting rules for a run's progress
 *  (kfctl_progress.c): the phase never past its last generation or round,
 *  done never past the total nor going back, events never counting a
 *  candidate, the estimate hidden until a few candidates have finished,
 *  a better figure pending verification named beside the best; and the
 *  archive grids marking an elite the summary's best does not count. */
#include "../kf_test.h"
#include "../../kfctl/kfctl_archive.h"
#include "../../kfctl/kfctl_progress.h"

#include <stdlib.h>
#include <string.h>

static void
s_from (kf_ctl_progress_t *p, const char *json)
{
    json_t *run = json_loads (json, 0, NULL);
    CHECK (run != NULL);
    kf_ctl_progress_from_run (p, run);
    json_decref (run);
}

int
main (void)
{
    kf_ctl_progress_t p;
    char text[512];

    /* Main phase: generation g/G, the total with the tuning rounds to come. */
    kf_ctl_progress_init (&p, 4);
    s_from (&p, "{\"status\": \"running\", \"generation\": 0, \"generations\": 1,"
                " \"done\": 1, \"total\": 6, \"in_flight\": 1, \"tuning_round\": 0,"
                " \"tuning_rounds\": 2, \"elapsed_s\": 4.0}");
    kf_ctl_phase_text (&p, text, sizeof text);
    CHECK (!strcmp (text, "generation 1/1"));
    CHECK (kf_ctl_progress_estimate (&p) < 0);   /* 1 done: too few to say */
    kf_ctl_progress_line (&p, text, sizeof text);
    CHECK (strstr (text, "1/6 done, 1 in flight") != NULL);
    CHECK (strstr (text, "elapsed 4s") != NULL);
    CHECK (strstr (text, "estimate") == NULL);

    /* Events move the best, never the counts (SHOW counts; a candidate
     * evaluated twice, re-verified or timed in full, sends two). */
    json_t *ev = json_pack ("{s:s, s:s, s:f, s:i}", "event", "candidate", "status", "correct",
                            "speedup", 1.5, "generation", 1);
    kf_ctl_progress_from_event (&p, ev);
    kf_ctl_progress_from_event (&p, ev);
    json_decref (ev);
    CHECK (p.done == 1);
    CHECK (p.has_best && p.best == 1.5);
    /* A correct one waiting for its re-verification does not count. */
    ev = json_pack ("{s:s, s:s, s:f, s:s}", "event", "candidate", "status", "correct",
                    "speedup", 9.0, "verify_state", "pending");
    kf_ctl_progress_from_event (&p, ev);
    json_decref (ev);
    CHECK (p.best == 1.5);

    /* Tuning: the generation past the main phase is a round, never "gen 2/1". */
    s_from (&p, "{\"status\": \"running\", \"generation\": 1, \"generations\": 1,"
                " \"done\": 4, \"total\": 6, \"in_flight\": 2, \"tuning_round\": 1,"
                " \"tuning_rounds\": 2, \"elapsed_s\": 40.0, \"best_speedup\": 1.5,"
                " \"pending_best\": 26.45}");
    kf_ctl_phase_text (&p, text, sizeof text);
    CHECK (!strcmp (text, "tuning round 1/2"));
    /* 40 s for 4 candidates: 10 s each, 2 left. */
    CHECK (kf_ctl_progress_estimate (&p) > 19.9 && kf_ctl_progress_estimate (&p) < 20.1);
    kf_ctl_progress_line (&p, text, sizeof text);
    CHECK (strstr (text, "4/6 done, 2 in flight") != NULL);
    CHECK (strstr (text, "tuning round 1/2") != NULL);
    CHECK (strstr (text, "best 1.50x (26.45x pending verification)") != NULL);
    CHECK (strstr (text, "about 20s left (estimate)") != NULL);

    /* A late or stale reply never takes done back, nor the phase. */
    s_from (&p, "{\"status\": \"running\", \"generation\": 0, \"generations\": 1,"
                " \"done\": 3, \"total\": 6, \"tuning_round\": 0}");
    CHECK (p.done == 4);
    CHECK (p.tuning_round == 1);
    /* A total below done (an old coordinator's count) is raised to it. */
    s_from (&p, "{\"status\": \"running\", \"done\": 5, \"total\": 3}");
    CHECK (p.done == 5 && p.total == 5);
    /* A round past the rounds said widens them, never shows 3/2. */
    s_from (&p, "{\"status\": \"running\", \"tuning_round\": 3, \"tuning_rounds\": 2}");
    kf_ctl_phase_text (&p, text, sizeof text);
    CHECK (!strcmp (text, "tuning round 3/3"));

    /* Ended: no estimate; an old reply's generation past the last is clamped. */
    kf_ctl_progress_init (&p, 5);
    s_from (&p, "{\"status\": \"done\", \"generation\": 7, \"generations\": 6,"
                " \"done\": 12, \"total\": 12, \"elapsed_s\": 65}");
    kf_ctl_phase_text (&p, text, sizeof text);
    CHECK (!strcmp (text, "generation 6/6"));
    CHECK (kf_ctl_progress_estimate (&p) < 0);
    kf_ctl_duration_text (65, text, sizeof text);
    CHECK (!strcmp (text, "1m05s"));
    kf_ctl_duration_text (3725, text, sizeof text);
    CHECK (!strcmp (text, "1h02m"));

    /* The grids: an elite pending verification is marked, and said why. */
    json_t *body = json_loads (
        "{\"run\": {\"id\": 1, \"best_speedup\": 7.41, \"best_candidate_id\": 1},"
        " \"candidates\": [{\"id\": 1, \"status\": \"correct\", \"speedup\": 7.41,"
        "  \"coords\": \"{0,0,0}\"},"
        "  {\"id\": 2, \"status\": \"correct\", \"speedup\": 26.45, \"verify_state\": \"pending\","
        "  \"coords\": \"{1,1,0}\"}],"
        " \"archive\": [{\"cell\": \"{0,0,0}\", \"candidate_id\": 1, \"speedup\": 7.41},"
        "  {\"cell\": \"{1,1,0}\", \"candidate_id\": 2, \"speedup\": 26.45}]}", 0, NULL);
    CHECK (body != NULL);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream (&buf, &len);
    kf_ctl_print_archive (out, body);
    fclose (out);
    CHECK (strstr (buf, "26.45x*") != NULL);
    CHECK (strstr (buf, "7.41x*") == NULL);
    CHECK (strstr (buf, "* not counted in the run's best") != NULL);
    free (buf);
    json_decref (body);
    return kf_test_done ("test_progress");
}
