/*  kf_test.h - the smallest test harness that can fail: CHECK records a
 *  failure with file and line and carries on; kf_test_done prints the
 *  count line that tests/run.sh adds up and returns the exit code. */
#ifndef KF_TEST_H
#define KF_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int kf_test_checks, kf_test_failures;

#define CHECK(cond)                                                          \
    do {                                                                     \
        kf_test_checks++;                                                    \
        if (!(cond)) {                                                       \
            kf_test_failures++;                                              \
            fprintf (stderr, "%s:%d: CHECK failed: %s\n", __FILE__,          \
                     __LINE__, #cond);                                       \
        }                                                                    \
    } while (0)

/* Whether TEXT (NULL: no) holds PART. */
static inline bool
kf_test_has (const char *text, const char *part)
{
    return text && strstr (text, part);
}

static inline int
kf_test_done (const char *name)
{
    printf ("%s: %d checks, %d failed\n", name, kf_test_checks,
            kf_test_failures);
    return kf_test_failures ? 1 : 0;
}

#endif
