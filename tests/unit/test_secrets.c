/*  test_secrets - common/kf_secrets.c: a worker's secret values never
 *  leave in a RESULT's strings. Without the scrub every check on a
 *  redacted string fails. */
#include "../../common/kf_secrets.h"
#include "../kf_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main (void)
{
    setenv ("OPENAI_API_KEY", "sk-canary-4417-abcdef", 1);
    setenv ("KF_DATABASE_URL", "postgresql://kf:pw-canary-90210@db:5432/kf", 1);
    setenv ("KF_SHORT_TOKEN", "abc", 1);             // too short to scrub
    setenv ("OMP_NUM_THREADS", "sk-canary-4417-abcdef-not-a-secret-name", 1);
    json_t *r = json_pack ("{s:s, s:{s:s, s:[s, s]}, s:s, s:i}",
                           "detail", "crashed: key sk-canary-4417-abcdef, twice sk-canary-4417-abcdef",
                           "result", "log", "kernel.c:3: error: #error pw-canary-90210",
                           "more", "postgresql://kf:pw-canary-90210@db:5432/kf", "abc",
                           "error", "nothing here", "job_id", 7);
    int changed = kf_secrets_scrub (r);
    char *text = json_dumps (r, JSON_COMPACT);
    printf ("%d strings scrubbed: %s\n", changed, text);
    CHECK (changed == 3);
    CHECK (text && !strstr (text, "canary"));
    CHECK (text && strstr (text, "crashed: key [redacted], twice [redacted]"));
    CHECK (text && strstr (text, "#error [redacted]"));
    CHECK (text && strstr (text, "\"abc\""));           // short values stay
    CHECK (text && strstr (text, "nothing here"));
    CHECK (kf_secrets_is_secret_name ("ANTHROPIC_API_KEY=x") && kf_secrets_is_secret_name ("gh_token")
           && !kf_secrets_is_secret_name ("PATH=/bin") && !kf_secrets_is_secret_name ("OMP_NUM_THREADS"));
    free (text);
    json_decref (r);
    return kf_test_done ("test_secrets");
}
