/*  kf_clock.c - the monotonic clock in seconds (kf_clock.h). */
#include "kf_clock.h"

#include <time.h>

double
kf_clock_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
