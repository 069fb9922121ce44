/*  test_figures_retry.c - the decisions of measuring busy host figures
 *  again (exec-worker/kf_figures_retry.h): when the next try is due, what
 *  each try's log line says, and which workers try at all.
 */
#include "../../exec-worker/kf_figures_retry.h"
#include "../kf_test.h"

#include <string.h>

int
main (void)
{
    //  Spaced: the first try EVERY_S after the start, each busy one
    //  EVERY_S after the last.
    CHECK (kf_figures_retry_next_ms (KF_FIGURES_RETRY_BUSY, 0, 40, 45) == 45000);
    CHECK (kf_figures_retry_next_ms (KF_FIGURES_RETRY_BUSY, 1, 40, 45) == 45000);
    CHECK (kf_figures_retry_next_ms (KF_FIGURES_RETRY_BUSY, 39, 40, 0.5) == 500);
    //  Bounded: none after the last try.
    CHECK (kf_figures_retry_next_ms (KF_FIGURES_RETRY_BUSY, 40, 40, 45) == -1);
    CHECK (kf_figures_retry_next_ms (KF_FIGURES_RETRY_BUSY, 0, 0, 45) == -1);
    //  Off: figures_retry_s 0.
    CHECK (kf_figures_retry_next_ms (KF_FIGURES_RETRY_BUSY, 0, 40, 0) == -1);
    //  Done: quiet figures were taken, or those in use are not busy.
    CHECK (kf_figures_retry_next_ms (KF_FIGURES_RETRY_QUIET, 3, 40, 45) == -1);
    CHECK (kf_figures_retry_next_ms (KF_FIGURES_RETRY_NOT_BUSY, 1, 40, 45) == -1);

    //  The log lines: one a try, with the figures before and after.
    char line[512];
    kf_host_figures_again_t a = { .quiet = true, .others_share = 0.031, .was_read_gbs = 22.0,
                                  .read_gbs = 39.4, .was_copy_gbs = 6, .copy_gbs = 11.3 };
    kf_figures_retry_line (line, sizeof line, &a, 2, 40);
    CHECK (!strcmp (line, "figures measured again: quiet, cold read all cores 39.4 GB/s "
                          "(was 22.0), copy 11.3 GB/s (was 6.0), others took 3% of the CPUs"));
    a = (kf_host_figures_again_t) { .glance_only = true, .others_share = 0.99,
                                    .was_read_gbs = 22 };
    kf_figures_retry_line (line, sizeof line, &a, 5, 40);
    CHECK (!strcmp (line, "figures measured again: still busy (at a glance, others took 99% of "
                          "the CPUs; try 5 of 40)"));
    a = (kf_host_figures_again_t) { .others_share = 0.25, .was_read_gbs = 22, .read_gbs = 30.5 };
    kf_figures_retry_line (line, sizeof line, &a, 6, 40);
    CHECK (!strcmp (line, "figures measured again: still busy (cold read all cores 30.5 GB/s, "
                          "was 22.0, others took 25% of the CPUs; try 6 of 40)"));

    //  Who tries: a host worker whose figures say busy, and no other.
    kf_figures_retry_t r;
    json_t *caps = json_pack ("{s:[s], s:[{s:s, s:b, s:f}]}", "backends", "host", "devices",
                              "name", "cpu", "figures_measured_busy", 1,
                              "read_cold_all_cores_gbs", 22.0);
    CHECK (kf_figures_retry_init (&r, caps, 45, 40) == 45000);
    CHECK (r.caps && r.caps != caps && json_equal (r.caps, caps));
    kf_figures_retry_free (&r);
    CHECK (r.caps == NULL);
    CHECK (kf_figures_retry_init (&r, caps, 0, 40) == -1 && !r.caps);
    json_object_del (json_array_get (json_object_get (caps, "devices"), 0), "figures_measured_busy");
    CHECK (kf_figures_retry_init (&r, caps, 45, 40) == -1 && !r.caps);
    json_t *cuda = json_pack ("{s:[s], s:[{s:b}]}", "backends", "cuda", "devices",
                              "figures_measured_busy", 1);
    CHECK (kf_figures_retry_init (&r, cuda, 45, 40) == -1 && !r.caps);
    json_decref (cuda);
    json_decref (caps);

    //  Round 34: the figures measured again say when, and keep the lower
    //  thread start (19.1 us at the start, 61.9 us again).
    json_t *old = json_pack ("{s:f}", "thread_start_join_us", 19.1);
    json_t *dev = json_pack ("{s:f}", "thread_start_join_us", 61.9);
    kf_figures_retry_mark (dev, old);
    const char *at = json_string_value (json_object_get (dev, "figures_measured_again_at"));
    CHECK (at && strlen (at) == 20 && !strcmp (at + 16, " UTC"));
    CHECK (json_number_value (json_object_get (dev, "thread_start_join_us")) == 19.1);
    json_object_set_new (old, "thread_start_join_us", json_real (80.0));
    kf_figures_retry_mark (dev, old);
    CHECK (json_number_value (json_object_get (dev, "thread_start_join_us")) == 19.1);
    json_decref (old);
    json_decref (dev);
    return kf_test_done ("test_figures_retry");
}
