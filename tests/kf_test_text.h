/*  kf_test_text.h - small helpers the prompt tests share: what a writer
 *  of one line prints, and where an idea of a feature stands in a list.
 */
#ifndef KF_TEST_TEXT_H
#define KF_TEST_TEXT_H

#include "../coordinator/kf_prompt_class.h"
#include <stdio.h>
#include <stdlib.h>

/* What STATEMENT writes to the FILE * named F, into TEXT (a char *,
 * NULL when no stream could be opened; the caller frees). */
#define KF_TEST_CAPTURE(text, f, statement)              \
    do {                                                 \
        size_t kf_test_size_ = 0;                        \
        (text) = NULL;                                   \
        FILE *f = open_memstream (&(text), &kf_test_size_); \
        if (f) {                                         \
            statement;                                   \
            fclose (f);                                  \
        }                                                \
    } while (0)

/* The source of a kernel that starts 2 threads (#define NTHREADS 2), as
 * the feature reading sees one. */
#define KF_TEST_TWO_THREADS                                                 \
    "#include <pthread.h>\n#define NTHREADS 2\n"                             \
    "static void *work (void *a) { return a; }\n"                            \
    "int kf_forward (void) { pthread_t t; pthread_create (&t, 0, work, 0);\n" \
    "    pthread_join (t, 0); return 0; }\n"

/* The index in IDEAS (N) of the first idea about FEATURE, or N. */
static inline size_t
kf_test_idea_index (const char *const *ideas, size_t n, kf_idea_feature_t feature)
{
    for (size_t i = 0; i < n; i++)
        if (kf_prompt_idea_feature (ideas[i]) == feature)
            return i;
    return n;
}

#endif
