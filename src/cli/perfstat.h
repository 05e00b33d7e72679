/*
 * cli/perfstat.h - what "samsa perf produce" (cmd_perf.c) and "samsa perf
 * consume|e2e" (cmd_perfc.c) do the same way: "--*-props KEY=VALUE..."
 * flags, a monotonic clock and latency percentiles.
 * Threads: any.
 */
#ifndef SAMSA_CLI_PERFSTAT_H
#define SAMSA_CLI_PERFSTAT_H

#include <stdint.h>

#include <samsa/conf.h>

/* The KEY=VALUE arguments after argv[*i] (up to the next "--" flag) into
 * conf; *i is left on the last of them.  0, or -1 after printing why. */
int samsa_perf_props(samsa_conf_t *conf, int argc, char **argv, int *i);

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t samsa_perf_now_ns(void);

/* Sort n latencies (microseconds) ascending, for samsa_perf_pct(). */
void samsa_perf_sort(int32_t *lat_us, int64_t n);

/* The p-quantile (0..1) of n sorted latencies, in milliseconds; 0 when
 * n is 0. */
double samsa_perf_pct(const int32_t *sorted, int64_t n, double p);

#endif /* SAMSA_CLI_PERFSTAT_H */
