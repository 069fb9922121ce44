/*  test_meta_round18.c - round 18 of the model in the loop (issue 15,
 *  docs/search.md "Eighteenth round"): the accepted v2 of run 1 said
 *  that sqrtf vectorises under __attribute__((optimize("no-math-errno"))),
 *  which GCC at the run's flags does not do (kf_meta_claims.h), and the
 *  meta rules, which check citations and ranks, let it through unmarked.
 *  A sentence that claims a libm function vectorises is now kept with
 *  KF_META_CLAIM_MARK, and the edit's log says so.
 */
#include "../../coordinator/kf_meta_claims.h"
#include "../../coordinator/kf_meta_edits.h"
#include "../kf_test.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  Applies one edit that appends REPLACE to the strategies; returns the
//  new strategies (caller's) and the log entry's reason in REASON.
static char *
s_apply (const char *replace, char *reason, size_t size)
{
    json_t *sections = json_pack ("{s:s, s:s, s:s, s:s}", "philosophy", "Elementwise.",
                                  "strategies", "- Vectorise.", "pitfalls", "- None.",
                                  "analysis", "1. Why?");
    json_t *edits = json_pack ("[{s:s, s:s, s:s}]", "section", "strategies", "search",
                               "- Vectorise.", "replace", replace);
    json_t *log = NULL;
    json_t *out = kf_meta_apply_edits (sections, edits, 3, NULL, &log);
    json_t *entry = json_array_get (log, 0);
    snprintf (reason, size, "%s", json_string_value (json_object_get (entry, "reason"))
                                      ? json_string_value (json_object_get (entry, "reason"))
                                      : "");
    char *text = json_is_true (json_object_get (entry, "accepted"))
                     ? strdup (json_string_value (json_object_get (out, "strategies")))
                     : NULL;
    json_decref (log);
    json_decref (out);
    json_decref (edits);
    json_decref (sections);
    return text;
}

int
main (void)
{
    char reason[400];
    //  Round 18's sentence: kept, marked, and the log says why.
    char *t = s_apply ("- Vectorise. sqrtf vectorises once the kernel is compiled with "
                       "__attribute__((optimize(\"no-math-errno\"))), so keep the plain loop.",
                       reason, sizeof reason);
    printf ("%s\n  reason: %s\n", t ? t : "(refused)", reason);
    CHECK (kf_test_has (t, "no-math-errno\"))), so keep the plain loop" KF_META_CLAIM_MARK "."));
    CHECK (kf_test_has (reason, "1 sentence marked: says sqrtf vectorises"));
    free (t);
    //  Another function, another spelling.
    t = s_apply ("- Vectorise. The loop of expf will be vectorized by -O3.", reason,
                 sizeof reason);
    CHECK (kf_test_has (t, "by -O3" KF_META_CLAIM_MARK "."));
    CHECK (kf_test_has (reason, "says expf vectorises"));
    free (t);
    //  Not marked: a sentence that says it does not, an intrinsic's
    //  name, a claim without a libm function.
    const char *right[] = {
        "- Vectorise. sqrtf is not vectorised here: use _mm512_sqrt_ps.",
        "- Vectorise. _mm512_sqrt_ps vectorises the square root.",
        "- Vectorise. GCC won't vectorise atan2f.",
        "- Vectorise. The divide vectorises well with -O3.",
    };
    for (size_t i = 0; i < sizeof right / sizeof right[0]; i++) {
        t = s_apply (right[i], reason, sizeof reason);
        CHECK (t && !strstr (t, KF_META_CLAIM_MARK) && !strstr (reason, "marked"));
        free (t);
    }
    //  A marked sentence kept by a later round is not marked again.
    int marked = 0;
    char fn[32];
    char *once = kf_meta_claims_mark ("sqrtf vectorises.", &marked, fn, sizeof fn);
    CHECK (once && marked == 1 && !strcmp (fn, "sqrtf"));
    char *twice = once ? kf_meta_claims_mark (once, &marked, fn, sizeof fn) : NULL;
    CHECK (!twice && marked == 0);
    free (once);
    free (twice);
    return kf_test_done ("test_meta_round18");
}
