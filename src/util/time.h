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

/* clock's time ms (>= 0) milliseconds from now, as pthread_cond_timedwait
 * (on a condition variable set to that clock) and pthread_timedjoin_np
 * (CLOCK_REALTIME) take a deadline. */
static inline struct timespec
samsa_timespec_after(clockid_t clock, int64_t ms)
{
    struct timespec  ts;

    clock_gettime(clock, &ts);
    ts.tv_sec += (time_t) (ms / 1000);
    ts.tv_nsec += (long) (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

static inline int64_t
samsa_wall_ms(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

#endif /* SAMSA_UTIL_TIME_H */
