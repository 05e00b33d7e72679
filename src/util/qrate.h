/*
 * util/qrate.h - a rate over sampled windows and the throttle time of a
 * quota on it, as Kafka's metrics Rate/SampledStat and QuotaUtils compute
 * them (the rate behind every client quota).
 *
 * The rate keeps `samples` windows of `window_ms` each.  A value goes to
 * the current window, or starts the next one (recycling the oldest) once
 * the current is window_ms old.  Windows older than samples * window_ms
 * are reset before measuring.  The rate is the sum of the windows over the
 * elapsed time since the oldest window started, counted as at least
 * (samples - 1) whole windows, so that a young rate is not overstated.
 * A quota bound B is violated when the rate R after recording exceeds B;
 * the throttle time is then (R - B) / B * that elapsed time, rounded: how
 * long the client must stay idle for R to fall back to B.
 *
 * Threads: none of its own; the caller serialises access (broker/quota.c
 * and net/server/connquota.c hold their locks).
 */
#ifndef SAMSA_UTIL_QRATE_H
#define SAMSA_UTIL_QRATE_H

#include <stdint.h>

#define SAMSA_QRATE_MAX_SAMPLES  64

typedef struct samsa_qrate_sample {
    int64_t  start_ms;          /* when the window began */
    double   value;
} samsa_qrate_sample_t;

typedef struct samsa_qrate {
    int                    samples;     /* [const] quota.window.num */
    int64_t                window_ms;   /* [const] quota.window.size.seconds
                                           * 1000 */
    int                    n;           /* windows in use */
    int                    current;
    samsa_qrate_sample_t   s[SAMSA_QRATE_MAX_SAMPLES];
} samsa_qrate_t;

/* samples is clamped to 1..SAMSA_QRATE_MAX_SAMPLES, window_ms to >= 1. */
void samsa_qrate_init(samsa_qrate_t *r, int samples, int64_t window_ms);

void samsa_qrate_record(samsa_qrate_t *r, double value, int64_t now_ms);

/* The rate per second at now_ms. */
double samsa_qrate_measure(samsa_qrate_t *r, int64_t now_ms);

/* The span, in ms, the rate divides by at now_ms (Kafka's windowSize). */
int64_t samsa_qrate_window_span_ms(samsa_qrate_t *r, int64_t now_ms);

/* Record value, then: 0 if the rate is within bound, else Kafka's throttle
 * time in ms, capped at max_ms when max_ms > 0 (request_percentage is
 * capped at one window; byte rates are not capped). */
int64_t samsa_qrate_record_throttle(samsa_qrate_t *r, double value,
                                    double bound, int64_t max_ms,
                                    int64_t now_ms);

#endif /* SAMSA_UTIL_QRATE_H */
