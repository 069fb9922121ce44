/*  kfctl_fields.c - defensive reading of reply fields (kfctl_fields.h),
 *  shared by the tables, the archive grids and the report files.
 */
#include "kfctl_fields.h"
#include <stdlib.h>
#include <string.h>

const char *
kf_ctl_str (json_t *obj, const char *key)
{
    const char *text = json_string_value (json_object_get (obj, key));
    return text && *text ? text : "-";
}

long long
kf_ctl_int (json_t *obj, const char *key, long long dflt)
{
    json_t *v = json_object_get (obj, key);
    if (json_is_integer (v))
        return (long long) json_integer_value (v);
    if (json_is_real (v))
        return (long long) json_real_value (v);
    return dflt;
}

/* A speedup may come as a number, or as text from a NUMERIC column of
 * another coordinator version; anything else is no value. */
bool
kf_ctl_real (json_t *obj, const char *key, double *out)
{
    json_t *v = json_object_get (obj, key);
    if (json_is_number (v)) {
        *out = json_number_value (v);
        return true;
    }
    const char *text = json_string_value (v);
    if (text && *text) {
        char *end = NULL;
        double d = strtod (text, &end);
        if (end && !*end) {
            *out = d;
            return true;
        }
    }
    return false;
}

/* Whether a candidate's figures are a screen's (kf_fidelity.c): final at
 * that fidelity, or waiting for its full-protocol evaluation. */
json_t *
kf_ctl_candidate (json_t *candidates, long long id)
{
    size_t i;
    json_t *c;
    json_array_foreach (candidates, i, c)
        if (kf_ctl_int (c, "id", -1) == id)
            return c;
    return NULL;
}

bool
kf_ctl_screen_only (json_t *c)
{
    return !strcmp (kf_ctl_str (c, "fidelity"), "screen")
           || !strcmp (kf_ctl_str (c, "fidelity"), "pending");
}

/* A correct candidate counts unless its figures are a screen's, it waits
 * for its re-verification, or is held for audit and not accepted
 * (KF_VERIFY_COUNTS in kf_verify.h). */
bool
kf_ctl_counts (json_t *c)
{
    return !strcmp (kf_ctl_str (c, "status"), "correct") && !kf_ctl_screen_only (c)
           && ((!json_is_string (json_object_get (c, "audit_reason"))
                && strcmp (kf_ctl_str (c, "verify_state"), "pending"))
               || !strcmp (kf_ctl_str (c, "audit_verdict"), "accepted"));
}
