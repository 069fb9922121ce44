/*  test_fitness.c - the fitness of ARCHITECTURE.md: 0 for a compile
 *  failure, 0.1 compiled but wrong, 0.5 + 0.5 s_norm when correct, with
 *  s_norm monotone in the speedup. */
#include "../kf_test.h"
#include "../../coordinator/kf_search.h"

int
main (void)
{
    CHECK (kf_search_fitness ("compile_failed", 0) == 0.0);
    CHECK (kf_search_fitness ("failed", 0) == 0.0);
    CHECK (kf_search_fitness ("incorrect", 3.0) == 0.1);
    CHECK (kf_search_fitness ("crashed", 0) == 0.1);
    CHECK (kf_search_fitness ("timeout", 0) == 0.1);
    CHECK (kf_search_fitness ("correct", 1.0) == 0.75);
    double last = 0.5;
    for (double s = 0.01; s < 1000; s *= 1.5) {
        double f = kf_search_fitness ("correct", s);
        CHECK (f > last && f < 1.0);
        last = f;
    }
    return kf_test_done ("test_fitness");
}
