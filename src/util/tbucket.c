/*
 * util/tbucket.c - see tbucket.h.
 */
#include "util/tbucket.h"


void
samsa_tbucket_init(samsa_tbucket_t *t)
{
    t->tokens = 0.0;
    t->last_ms = 0;
    t->started = false;
}

double
samsa_tbucket_burst(double rate, int samples, int64_t window_ms)
{
    return (double) samples * ((double) window_ms / 1000.0) * rate;
}

static double
tbucket_min(double a, double b)
{
    return a < b ? a : b;
}

static void
tbucket_refill(samsa_tbucket_t *t, double rate, double burst, int64_t now_ms)
{
    if (!t->started) {
        t->tokens = burst;
        t->started = true;
    } else {
        t->tokens = tbucket_min(burst, t->tokens
                                           + rate * (double) (now_ms
                                                              - t->last_ms)
                                                 / 1000.0);
    }
    t->last_ms = now_ms;
}

double
samsa_tbucket_measure(samsa_tbucket_t *t, double rate, double burst,
                      int64_t now_ms)
{
    tbucket_refill(t, rate, burst, now_ms);
    return t->tokens;
}

void
samsa_tbucket_record(samsa_tbucket_t *t, double value, double rate,
                     double burst, int64_t now_ms)
{
    tbucket_refill(t, rate, burst, now_ms);
    t->tokens = tbucket_min(burst, t->tokens - value);
}

int64_t
samsa_tbucket_throttle_ms(double tokens, double rate)
{
    if (!(tokens < 0.0) || !(rate > 0.0)) {
        return 0;
    }
    return (int64_t) (-tokens / rate * 1000.0 + 0.5);  /* > 0: rounds half
                                                         up, as Math.round */
}
