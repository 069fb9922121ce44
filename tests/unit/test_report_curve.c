/*  test_report_curve.c - kfctl report's curve and per-generation
 *  progress count the candidates the run's best counts: correct ones not
 *  held for audit (or accepted by a person). A held result faster than
 *  every counted one must not lift the curve above the run's best. */
#include "../kf_test.h"
#include "../../kfctl/kfctl_report.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static json_t *
s_candidate (int id, int generation, int slot, const char *status,
             double speedup, const char *audit, const char *verdict)
{
    json_t *c = json_pack ("{s:i, s:i, s:i, s:s}", "id", id, "generation",
                           generation, "slot", slot, "status", status);
    if (speedup >= 0)
        json_object_set_new (c, "speedup", json_real (speedup));
    json_object_set_new (c, "audit_reason", audit ? json_string (audit) : json_null ());
    json_object_set_new (c, "audit_verdict", verdict ? json_string (verdict) : json_null ());
    return c;
}

/* The last line of PATH, in LINE. */
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

int
main (void)
{
    json_t *candidates = json_array ();
    json_array_append_new (candidates, s_candidate (1, 0, 0, "correct", 1.5, NULL, NULL));
    json_array_append_new (candidates, s_candidate (2, 0, 1, "incorrect", 50, NULL, NULL));
    /* held: over the audit threshold, nobody decided yet */
    json_array_append_new (candidates, s_candidate (3, 1, 0, "correct", 12.0, "over 10x", NULL));
    json_array_append_new (candidates, s_candidate (4, 1, 1, "correct", 2.5, NULL, NULL));
    /* rejected by a person */
    json_array_append_new (candidates, s_candidate (5, 2, 0, "correct", 20.0, "roofline", "rejected"));
    json_array_append_new (candidates, s_candidate (6, 2, 1, "crashed", -1, NULL, NULL));
    json_t *body = json_pack ("{s:{s:i, s:f}, s:o}", "run", "id", 7, "best_speedup", 2.5,
                              "candidates", candidates);

    char dir[] = "/tmp/kf-report-curve.XXXXXX";
    CHECK (mkdtemp (dir) != NULL);
    char prefix[64], *paths[3], *err = NULL, line[256];
    snprintf (prefix, sizeof prefix, "%s/r", dir);
    CHECK (kf_ctl_report_write (body, prefix, paths, &err) == 0);
    s_last_line (paths[0], line, sizeof line);
    CHECK (!strcmp (line, "6,2.5\n"));
    s_last_line (paths[1], line, sizeof line);
    /* generation 2: two candidates, none counted; best so far 2.5 */
    CHECK (!strcmp (line, "2,2,0,,2.5\n"));

    /* A person accepts the held one: now it counts on both. */
    json_object_set_new (json_array_get (candidates, 2), "audit_verdict", json_string ("accepted"));
    for (int i = 0; i < 3; i++)
        free (paths[i]);
    CHECK (kf_ctl_report_write (body, prefix, paths, &err) == 0);
    s_last_line (paths[0], line, sizeof line);
    CHECK (!strcmp (line, "6,12\n"));
    s_last_line (paths[1], line, sizeof line);
    CHECK (!strcmp (line, "2,2,0,,12\n"));

    for (int i = 0; i < 3; i++) {
        unlink (paths[i]);
        free (paths[i]);
    }
    rmdir (dir);
    json_decref (body);
    return kf_test_done ("test_report_curve");
}
