/*
 * util/time.h - clocks.  Monotonic nanoseconds for intervals, wall-clock
 * milliseconds for timestamps.  Threads: any.
 */
#ifndef SAMSA_UTIL_TIME_H
#define SAMSA_UTIL_TIME_H

#include <stdint.h>
#include <time.h>

static inline int64_t
samsa_now_ns(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int64_t
samsa_now_ms(void)
{
    return samsa_now_ns() / 1000000;
}

static inline int64_t
samsa_wall_ms(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

#endif /* SAMSA_UTIL_TIME_H */
