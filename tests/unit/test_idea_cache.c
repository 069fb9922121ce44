/*  test_idea_cache.c - the plan's cache of what each source's parse found
 *  (kf_search_idea_cache.h): by the source's hash and the run, each view
 *  apart, a run's entries gone when it ends, and no more than
 *  KF_SEARCH_IDEA_CACHE_RUNS runs held. The cache in a plan, a source
 *  parsed once a run while a later plan still sees a new kernel, is
 *  test_search_ideas.sh's.
 */
#include "../../coordinator/kf_search_idea_cache.h"
#include "../kf_test.h"
#include <stdio.h>

static const char *h1 = "1111111111111111111111111111111111111111111111111111111111111111";
static const char *h2 = "2222222222222222222222222222222222222222222222222222222222222222";

static void
test_get_put (void)
{
    kf_search_idea_cache_t *c = kf_search_idea_cache_new ();
    CHECK (c);
    unsigned f = 7;
    CHECK (!kf_search_idea_cache_get (c, 1, h1, KF_SEARCH_IDEA_ESCAPED, &f));
    CHECK (f == 7);
    CHECK (kf_search_idea_cache_put (c, 1, h1, KF_SEARCH_IDEA_ESCAPED, 0x21) == 0);
    CHECK (kf_search_idea_cache_get (c, 1, h1, KF_SEARCH_IDEA_ESCAPED, &f) && f == 0x21);
    //  The other view of one source is read apart, and so is another run.
    CHECK (!kf_search_idea_cache_get (c, 1, h1, KF_SEARCH_IDEA_BYTES, &f));
    CHECK (!kf_search_idea_cache_get (c, 2, h1, KF_SEARCH_IDEA_ESCAPED, &f));
    CHECK (!kf_search_idea_cache_get (c, 1, h2, KF_SEARCH_IDEA_ESCAPED, &f));
    CHECK (kf_search_idea_cache_put (c, 1, h1, KF_SEARCH_IDEA_BYTES, 0) == 0);
    CHECK (kf_search_idea_cache_get (c, 1, h1, KF_SEARCH_IDEA_BYTES, &f) && f == 0);
    CHECK (kf_search_idea_cache_get (c, 1, h1, KF_SEARCH_IDEA_ESCAPED, &f) && f == 0x21);
    CHECK (kf_search_idea_cache_size (c, 1) == 1);
    long hits, puts;
    kf_search_idea_cache_counts (c, &hits, &puts);
    CHECK (hits == 3 && puts == 2);
    //  No hash, no run: nothing kept.
    CHECK (kf_search_idea_cache_put (c, 1, "", KF_SEARCH_IDEA_BYTES, 1) == -1);
    CHECK (kf_search_idea_cache_put (c, 0, h2, KF_SEARCH_IDEA_BYTES, 1) == -1);
    CHECK (!kf_search_idea_cache_get (c, 1, NULL, KF_SEARCH_IDEA_BYTES, &f));
    //  The run ended: its entries go.
    kf_search_idea_cache_drop (c, 1);
    CHECK (kf_search_idea_cache_size (c, 1) == 0);
    CHECK (!kf_search_idea_cache_get (c, 1, h1, KF_SEARCH_IDEA_ESCAPED, &f));
    kf_search_idea_cache_drop (c, 1);
    kf_search_idea_cache_destroy (&c);
    CHECK (c == NULL);
    kf_search_idea_cache_destroy (&c);
    //  No cache: nothing known, nothing kept.
    CHECK (!kf_search_idea_cache_get (NULL, 1, h1, KF_SEARCH_IDEA_ESCAPED, &f));
    CHECK (kf_search_idea_cache_put (NULL, 1, h1, KF_SEARCH_IDEA_ESCAPED, 1) == -1);
    kf_search_idea_cache_drop (NULL, 1);
}

//  One run more than the cache holds: the run planned longest ago goes.
static void
test_bounded (void)
{
    kf_search_idea_cache_t *c = kf_search_idea_cache_new ();
    for (int64_t run = 1; run <= KF_SEARCH_IDEA_CACHE_RUNS; run++)
        CHECK (kf_search_idea_cache_put (c, run, h1, KF_SEARCH_IDEA_ESCAPED,
                                         (unsigned) run) == 0);
    unsigned f = 0;
    //  Run 1 is read again, so run 2 is now the one used longest ago.
    CHECK (kf_search_idea_cache_get (c, 1, h1, KF_SEARCH_IDEA_ESCAPED, &f) && f == 1);
    CHECK (kf_search_idea_cache_put (c, 100, h2, KF_SEARCH_IDEA_ESCAPED, 100) == 0);
    CHECK (kf_search_idea_cache_size (c, 2) == 0);
    CHECK (kf_search_idea_cache_size (c, 1) == 1);
    CHECK (kf_search_idea_cache_size (c, 100) == 1);
    for (int64_t run = 3; run <= KF_SEARCH_IDEA_CACHE_RUNS; run++)
        CHECK (kf_search_idea_cache_get (c, run, h1, KF_SEARCH_IDEA_ESCAPED, &f)
               && f == (unsigned) run);
    //  A slot freed by a run's end is taken before any run is dropped.
    kf_search_idea_cache_drop (c, 5);
    CHECK (kf_search_idea_cache_put (c, 200, h1, KF_SEARCH_IDEA_BYTES, 2) == 0);
    CHECK (kf_search_idea_cache_size (c, 1) == 1 && kf_search_idea_cache_size (c, 3) == 1);
    kf_search_idea_cache_destroy (&c);
}

int
main (void)
{
    test_get_put ();
    test_bounded ();
    return kf_test_done ("test_idea_cache");
}
