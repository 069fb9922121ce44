/*  test_suggest.c - "did you mean": typos of commands, options and field
 *  names find their word; unrelated or oversized words find none. */
#include "kf_suggest.h"
#include "../kf_test.h"

#include <string.h>

static int
s_is (const char *got, const char *want)
{
    return got && want ? !strcmp (got, want) : got == want;
}

int
main (void)
{
    static const char *const commands[] = { "submit", "status", "workers", "drain", "undrain",
                                            "runs", "show", "best", "cancel", "watch", NULL };
    CHECK (s_is (kf_suggest_list ("sumbit", commands), "submit"));     /* swap */
    CHECK (s_is (kf_suggest_list ("stauts", commands), "status"));
    CHECK (s_is (kf_suggest_list ("wrokers", commands), "workers"));
    CHECK (s_is (kf_suggest_list ("shwo", commands), "show"));
    CHECK (s_is (kf_suggest_list ("SUBMIT", commands), "submit"));     /* case */
    CHECK (s_is (kf_suggest_list ("run", commands), "runs"));          /* a letter short */
    CHECK (s_is (kf_suggest_list ("frobnicate", commands), NULL));     /* no typo of any */
    CHECK (s_is (kf_suggest_list ("xyz", commands), NULL));
    CHECK (s_is (kf_suggest_list ("", commands), NULL));
    static const char *const options[] = { "--generations", "--population", "--json", NULL };
    CHECK (s_is (kf_suggest_list ("--genrations", options), "--generations"));
    CHECK (s_is (kf_suggest_list ("--jsn", options), "--json"));
    CHECK (s_is (kf_suggest_list ("--verbose", options), NULL));
    /* NULL entries are skipped; a word past the bound costs nothing. */
    const char *holes[] = { NULL, "tolerance", NULL };
    CHECK (s_is (kf_suggest ("tolerence", holes, 3), "tolerance"));
    char big[4096];
    memset (big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    CHECK (s_is (kf_suggest_list (big, commands), NULL));
    CHECK (s_is (kf_suggest_list ("submit", NULL), NULL));
    return kf_test_done ("test_suggest");
}
