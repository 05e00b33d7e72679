/*
 * util/qrate.c - see qrate.h.
 */
#include "util/qrate.h"

#include <string.h>

void
samsa_qrate_init(samsa_qrate_t *r, int samples, int64_t window_ms)
{
    memset(r, 0, sizeof(*r));
    r->samples = samples < 1 ? 1
                 : samples > SAMSA_QRATE_MAX_SAMPLES ? SAMSA_QRATE_MAX_SAMPLES
                                                     : samples;
    r->window_ms = window_ms < 1 ? 1 : window_ms;
}

void
samsa_qrate_record(samsa_qrate_t *r, double value, int64_t now_ms)
{
    samsa_qrate_sample_t  *cur;

    if (r->n == 0) {
        r->n = 1;
        r->current = 0;
        r->s[0] = (samsa_qrate_sample_t) { now_ms, 0.0 };
    }
    cur = &r->s[r->current];
    if (now_ms - cur->start_ms >= r->window_ms) {
        r->current = (r->current + 1) % r->samples;
        if (r->current >= r->n) {
            r->n = r->current + 1;
        }
        cur = &r->s[r->current];
        *cur = (samsa_qrate_sample_t) { now_ms, 0.0 };
    }
    cur->value += value;
}

/* Reset windows too old to count (Kafka's purgeObsoleteSamples). */
static void
qrate_purge(samsa_qrate_t *r, int64_t now_ms)
{
    int64_t  expire = (int64_t) r->samples * r->window_ms;
    int      i;

    for (i = 0; i < r->n; i++) {
        if (now_ms - r->s[i].start_ms >= expire) {
            r->s[i] = (samsa_qrate_sample_t) { now_ms, 0.0 };
        }
    }
}

int64_t
samsa_qrate_window_span_ms(samsa_qrate_t *r, int64_t now_ms)
{
    int64_t  oldest = now_ms, elapsed, full, min_full;
    int      i;

    qrate_purge(r, now_ms);
    for (i = 0; i < r->n; i++) {
        if (r->s[i].start_ms < oldest) {
            oldest = r->s[i].start_ms;
        }
    }
    elapsed = now_ms - oldest;
    full = elapsed / r->window_ms;
    min_full = r->samples - 1;
    if (full < min_full) {
        elapsed += (min_full - full) * r->window_ms;
    }
    return elapsed > 0 ? elapsed : 1;
}

double
samsa_qrate_measure(samsa_qrate_t *r, int64_t now_ms)
{
    int64_t  span = samsa_qrate_window_span_ms(r, now_ms);
    double   sum = 0.0;
    int      i;

    for (i = 0; i < r->n; i++) {
        sum += r->s[i].value;
    }
    return sum / ((double) span / 1000.0);
}

int64_t
samsa_qrate_record_throttle(samsa_qrate_t *r, double value, double bound,
                            int64_t max_ms, int64_t now_ms)
{
    double   rate, t;
    int64_t  ms;

    samsa_qrate_record(r, value, now_ms);
    rate = samsa_qrate_measure(r, now_ms);
    if (!(bound > 0.0) || rate <= bound) {
        return 0;
    }
    t = (rate - bound) / bound
        * (double) samsa_qrate_window_span_ms(r, now_ms);
    if (t > 1e15) {
        t = 1e15;                       /* keeps the cast defined */
    }
    ms = (int64_t) (t + 0.5);           /* t > 0: rounds half up */
    if (max_ms > 0 && ms > max_ms) {
        ms = max_ms;
    }
    return ms;
}
