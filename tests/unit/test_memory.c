/*  test_memory.c - the draw of a remembered inspiration
 *  (coordinator/kf_memory.c): a function of (run seed, candidate) only,
 *  always inside the pool, spread over it, none without a pool; and the
 *  run-config switch memory is on by default. */
#include "../kf_test.h"
#include "../../coordinator/kf_memory.h"
#include "../../coordinator/kf_search.h"
#include <jansson.h>
#include <stdlib.h>

int
main (void)
{
    CHECK (kf_memory_draw (1, 1, 0) == -1);
    int seen[KF_MEMORY_POOL] = { 0 };
    bool in_range = true, same = true;
    for (int64_t seq = 0; seq < 4000; seq++) {
        int i = kf_memory_draw (42, seq, KF_MEMORY_POOL);
        in_range &= i >= 0 && i < KF_MEMORY_POOL;
        same &= i == kf_memory_draw (42, seq, KF_MEMORY_POOL);
        if (i >= 0 && i < KF_MEMORY_POOL)
            seen[i]++;
        CHECK (kf_memory_draw (42, seq, 1) == 0);
    }
    CHECK (in_range);
    CHECK (same);
    for (int i = 0; i < KF_MEMORY_POOL; i++)
        CHECK (seen[i] > 4000 / KF_MEMORY_POOL / 2);   /* every elite gets its turn */
    int differ = 0;
    for (int64_t seq = 0; seq < 100; seq++)
        differ += kf_memory_draw (1, seq, KF_MEMORY_POOL) != kf_memory_draw (2, seq, KF_MEMORY_POOL);
    CHECK (differ > 50);   /* another seed, other draws */

    char *why = NULL;
    json_t *d = kf_search_defaults_load (NULL, &why);
    CHECK (d && json_is_true (json_object_get (d, "memory")));
    json_decref (d);
    json_t *bad = json_pack ("{s:s}", "memory", "no");
    CHECK (kf_search_config_check (bad, NULL, &why) != 0 && why);
    json_decref (bad);
    free (why);
    return kf_test_done ("test_memory");
}
