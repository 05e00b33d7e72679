/*
 * util/tbucket.h - a token bucket as Kafka's metrics TokenBucket stat
 * keeps it (KIP-599, the stat behind controller_mutation_rate): credits
 * refill continuously at the quota's rate up to a burst of
 * samples * window * rate, each recorded value takes its amount out (the
 * credits may go below zero), and the quota counts as exhausted while they
 * are below zero.  The time a client must wait for an exhausted bucket to
 * refill to zero is Kafka's ControllerMutationQuotaManager.throttleTimeMs:
 * -credits / rate seconds, rounded to ms.
 *
 * A new bucket is full: Kafka's starts with 0 credits last updated at time
 * 0, which the first refill at the wall clock's time fills to the burst;
 * this one is told so, as its clock (util/time.h's monotonic ms) may start
 * near 0.
 *
 * Threads: none of its own; the caller serialises access (broker/quota.c
 * holds the sensor's lock).
 */
#ifndef SAMSA_UTIL_TBUCKET_H
#define SAMSA_UTIL_TBUCKET_H

#include <stdbool.h>
#include <stdint.h>

typedef struct samsa_tbucket {
    double   tokens;            /* credits left; < 0: exhausted */
    int64_t  last_ms;           /* when last refilled */
    bool     started;           /* false: full at the first use */
} samsa_tbucket_t;

void samsa_tbucket_init(samsa_tbucket_t *t);

/* Kafka's burst: samples * window (in seconds) * rate. */
double samsa_tbucket_burst(double rate, int samples, int64_t window_ms);

/* Refill to now_ms and return the credits.  rate > 0. */
double samsa_tbucket_measure(samsa_tbucket_t *t, double rate, double burst,
                             int64_t now_ms);

/* Refill to now_ms, then take value out (never above burst). */
void samsa_tbucket_record(samsa_tbucket_t *t, double value, double rate,
                          double burst, int64_t now_ms);

/* The ms an exhausted bucket holding tokens needs to refill to zero at
 * rate: round(-tokens / rate * 1000); 0 when tokens >= 0. */
int64_t samsa_tbucket_throttle_ms(double tokens, double rate);

#endif /* SAMSA_UTIL_TBUCKET_H */
