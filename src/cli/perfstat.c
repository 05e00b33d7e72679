/*
 * cli/perfstat.c - flags, clock and latency percentiles shared by the perf
 * commands (see perfstat.h).
 * Threads: any.
 */
#include "cli/perfstat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int
samsa_perf_props(samsa_conf_t *conf, int argc, char **argv, int *i)
{
    char  err[512];

    for ((*i)++; *i < argc && strncmp(argv[*i], "--", 2) != 0; (*i)++) {
        if (samsa_conf_set_kv(conf, argv[*i], err, sizeof(err))
            != SAMSA_ERR_NONE) {
            fprintf(stderr, "samsa perf: %s\n", err);
            return -1;
        }
    }
    (*i)--;
    return 0;
}

int64_t
samsa_perf_now_ns(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int
perfstat_cmp_i32(const void *a, const void *b)
{
    int32_t  x = *(const int32_t *) a, y = *(const int32_t *) b;

    return (x > y) - (x < y);
}

void
samsa_perf_sort(int32_t *lat_us, int64_t n)
{
    qsort(lat_us, (size_t) n, sizeof(int32_t), perfstat_cmp_i32);
}

double
samsa_perf_pct(const int32_t *sorted, int64_t n, double p)
{
    int64_t  i = (int64_t) (p * (double) n);

    if (n == 0) {
        return 0.0;
    }
    return sorted[i < n ? i : n - 1] / 1000.0;
}
