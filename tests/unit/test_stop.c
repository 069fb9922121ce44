/*  test_stop.c - early stopping's rule (coordinator/kf_stop.c): the
 *  record rises only by more than the margin, the rule fires at the first
 *  generation stop_after past the record and not before, never before
 *  anything is correct, never with stop_after 0; and the run-config keys
 *  stop_after and stop_margin are in the built-in defaults and bounded. */
#include "../kf_test.h"
#include "../../coordinator/kf_search.h"
#include "../../coordinator/kf_stop.h"
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static void
test_rule (void)
{
    kf_stop_t v;
    /* Off. */
    double flat[6] = { 1.5, 1.5, 1.5, 1.5, 1.5, 1.5 };
    kf_stop_rule (flat, 6, 0, 0.02, &v);
    CHECK (!v.stop);
    /* A flat best: fires stop_after generations after the first. */
    kf_stop_rule (flat, 6, 2, 0.02, &v);
    CHECK (v.stop && v.at == 2 && v.since == 0 && v.record == 1.5);
    kf_stop_rule (flat, 2, 2, 0.02, &v);
    CHECK (!v.stop);   /* only one generation past the record */
    kf_stop_rule (flat, 3, 2, 0.02, &v);
    CHECK (v.stop && v.at == 2);
    /* Gains within the margin do not count; a gain past it resets. */
    double slow[7] = { 1.00, 1.01, 1.015, 1.10, 1.11, 1.12, 1.121 };
    kf_stop_rule (slow, 7, 3, 0.02, &v);
    CHECK (v.stop && v.since == 3 && v.at == 6 && v.record == 1.10);
    kf_stop_rule (slow, 7, 4, 0.02, &v);
    CHECK (!v.stop && v.since == 3);
    /* Exactly the margin is not more than it. */
    double edge[3] = { 1.0, 1.5, 1.5 };
    kf_stop_rule (edge, 3, 2, 0.5, &v);
    CHECK (v.stop && v.since == 0 && v.at == 2);
    kf_stop_rule (edge, 3, 2, 0.49, &v);
    CHECK (!v.stop && v.since == 1);
    /* The best is the running best: a worse generation changes nothing,
     * and nothing fires while no generation had a correct kernel. */
    double late[6] = { 0, 0, 0, 2.0, 1.0, 1.9 };
    kf_stop_rule (late, 6, 2, 0.02, &v);
    CHECK (v.stop && v.since == 3 && v.at == 5 && v.record == 2.0);
    double none[5] = { 0, 0, 0, 0, 0 };
    kf_stop_rule (none, 5, 1, 0.02, &v);
    CHECK (!v.stop && v.since == -1);
    /* Zero margin: any rise counts. */
    double rising[5] = { 1.0, 1.0001, 1.0002, 1.0003, 1.0004 };
    kf_stop_rule (rising, 5, 1, 0, &v);
    CHECK (!v.stop && v.since == 4);
    kf_stop_rule (rising, 5, 1, 0.02, &v);
    CHECK (v.stop && v.at == 1);
    /* The first firing point is the verdict, whatever follows it. */
    double after[6] = { 1.0, 1.0, 1.0, 9.0, 9.0, 9.0 };
    kf_stop_rule (after, 6, 2, 0.02, &v);
    CHECK (v.stop && v.at == 2 && v.record == 1.0);
}

static void
test_keys (void)
{
    char *why = NULL;
    json_t *d = kf_search_defaults_load (NULL, &why);
    CHECK (d != NULL);
    CHECK (json_integer_value (json_object_get (d, "stop_after")) == 0);
    CHECK (json_number_value (json_object_get (d, "stop_margin")) == 0.02);
    json_decref (d);
    free (why);
    why = NULL;
    json_t *ok = json_pack ("{s:i, s:f}", "stop_after", 4, "stop_margin", 0.05);
    CHECK (kf_search_config_check (ok, NULL, &why) == 0);
    json_decref (ok);
    json_t *bad = json_pack ("{s:i}", "stop_after", -1);
    CHECK (kf_search_config_check (bad, NULL, &why) != 0 && why && strstr (why, "stop_after"));
    json_decref (bad);
    free (why);
    why = NULL;
    bad = json_pack ("{s:s}", "stop_margin", "2%");
    CHECK (kf_search_config_check (bad, NULL, &why) != 0 && why && strstr (why, "stop_margin"));
    json_decref (bad);
    free (why);
}

int
main (void)
{
    test_rule ();
    test_keys ();
    return kf_test_done ("test_stop");
}
