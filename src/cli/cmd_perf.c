/*
 * cli/cmd_perf.c - "samsa perf produce", the producer benchmark, with
 * kafka-producer-perf-test's options and output: a progress line every
 * 5 s and a final summary (records/s, MB/s, latency avg/percentiles/max),
 * or that summary as one JSON object with --json.  Latency is measured
 * per record from send() to its delivery callback.
 * Threads: main sends; the producer's sender thread runs the callbacks,
 * which record latencies and print the progress lines (as Java's Stats).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <samsa/producer.h>

#include "cli/cli.h"
#include "cli/perfstat.h"

#define PERF_WINDOW_NS  5000000000LL

typedef struct perf_opts {
    const char   *topic;
    int64_t       num_records;
    int64_t       record_size;
    const char   *payload_file;
    double        throughput;           /* records/s; <= 0 unlimited */
    bool          json;
} perf_opts_t;

/* Written by the sender thread (callbacks) only, read by main after
 * samsa_producer_close() has joined it. */
typedef struct perf_stats {
    int64_t      start_ns;
    int64_t     *send_ns;               /* per record: when sent */
    int32_t     *lat_us;                /* per record: latency */
    int64_t      count;
    int64_t      bytes;
    int64_t      errors;
    samsa_err_t  first_err;
    double       lat_sum_ms;
    double       lat_max_ms;
    int64_t      win_start_ns;
    int64_t      win_count;
    int64_t      win_bytes;
    double       win_lat_sum_ms;
    double       win_lat_max_ms;
    bool         quiet;
} perf_stats_t;

typedef struct perf_rec {
    perf_stats_t  *stats;
    int64_t        i;
    size_t         size;
} perf_rec_t;

static void
perf_usage(FILE *out)
{
    fprintf(out,
        "usage: samsa perf produce --topic TOPIC --num-records N\n"
        "         (--record-size BYTES | --payload-file FILE)\n"
        "         --throughput RECORDS_PER_SEC (-1: unlimited)\n"
        "         [--producer-props k=v [k=v ...]] [--producer.config FILE]\n"
        "         [--json]\n"
        "Producer properties use the Java client's names (bootstrap.servers,\n"
        "acks, linger.ms, batch.size, compression.type, ...).\n");
}

/* @thread sender (delivery callback) */
static void
perf_window_print(perf_stats_t *st, int64_t now)
{
    double  secs = (double) (now - st->win_start_ns) / 1e9;

    if (!st->quiet) {
        printf("%lld records sent, %.1f records/sec (%.2f MB/sec), "
               "%.1f ms avg latency, %.1f ms max latency.\n",
               (long long) st->win_count, (double) st->win_count / secs,
               (double) st->win_bytes / secs / (1024.0 * 1024.0),
               st->win_count ? st->win_lat_sum_ms / (double) st->win_count
                             : 0.0,
               st->win_lat_max_ms);
        fflush(stdout);
    }
    st->win_start_ns = now;
    st->win_count = 0;
    st->win_bytes = 0;
    st->win_lat_sum_ms = 0;
    st->win_lat_max_ms = 0;
}

/* @thread sender */
static void
perf_on_delivery(const samsa_record_md_t *md, samsa_err_t err, void *opaque)
{
    perf_rec_t    *r = opaque;
    perf_stats_t  *st = r->stats;
    int64_t        now = samsa_perf_now_ns();
    double         ms = (double) (now - st->send_ns[r->i]) / 1e6;

    (void) md;
    if (err != SAMSA_ERR_NONE) {
        if (st->errors++ == 0) {
            st->first_err = err;
        }
        return;
    }
    st->lat_us[r->i] = (int32_t) (ms * 1000.0);
    st->count++;
    st->bytes += (int64_t) r->size;
    st->lat_sum_ms += ms;
    st->lat_max_ms = ms > st->lat_max_ms ? ms : st->lat_max_ms;
    st->win_count++;
    st->win_bytes += (int64_t) r->size;
    st->win_lat_sum_ms += ms;
    st->win_lat_max_ms = ms > st->win_lat_max_ms ? ms : st->win_lat_max_ms;
    if (now - st->win_start_ns >= PERF_WINDOW_NS) {
        perf_window_print(st, now);
    }
}

static void
perf_summary(perf_stats_t *st, int64_t end_ns, bool json)
{
    double    secs = (double) (end_ns - st->start_ns) / 1e9;
    double    rps = (double) st->count / secs;
    double    mbps = (double) st->bytes / secs / (1024.0 * 1024.0);
    double    avg = st->count ? st->lat_sum_ms / (double) st->count : 0.0;
    int32_t  *lat = st->lat_us;
    int64_t   i, n = 0;

    for (i = 0; i < st->count + st->errors; i++) {
        if (lat[i] >= 0) {
            lat[n++] = lat[i];
        }
    }
    samsa_perf_sort(lat, n);
    if (json) {
        printf("{\"records\": %lld, \"records_per_sec\": %.2f, "
               "\"mb_per_sec\": %.3f, \"avg_latency_ms\": %.3f, "
               "\"p50_ms\": %.3f, \"p95_ms\": %.3f, \"p99_ms\": %.3f, "
               "\"p999_ms\": %.3f, \"max_latency_ms\": %.3f, "
               "\"errors\": %lld}\n",
               (long long) st->count, rps, mbps, avg,
               samsa_perf_pct(lat, n, 0.5),
               samsa_perf_pct(lat, n, 0.95), samsa_perf_pct(lat, n, 0.99),
               samsa_perf_pct(lat, n, 0.999), st->lat_max_ms,
               (long long) st->errors);
        return;
    }
    printf("%lld records sent, %.1f records/sec (%.2f MB/sec), %.2f ms avg "
           "latency, %.2f ms max latency, %.2f ms 50th, %.2f ms 95th, "
           "%.2f ms 99th, %.2f ms 99.9th.\n", (long long) st->count, rps,
           mbps, avg, st->lat_max_ms, samsa_perf_pct(lat, n, 0.5),
           samsa_perf_pct(lat, n, 0.95), samsa_perf_pct(lat, n, 0.99),
           samsa_perf_pct(lat, n, 0.999));
}

/* Payloads: one random record (A-Z), or the lines of a file. */
typedef struct perf_payloads {
    char    **items;
    size_t   *lens;
    size_t    n;
    char     *file_data;
} perf_payloads_t;

static int
perf_payloads_load(perf_payloads_t *pl, const perf_opts_t *o)
{
    FILE    *f;
    long     size;
    char    *p, *nl, *end;
    int64_t  i;

    memset(pl, 0, sizeof(*pl));
    if (o->payload_file == NULL) {
        pl->items = calloc(1, sizeof(char *));
        pl->lens = calloc(1, sizeof(size_t));
        pl->items[0] = malloc((size_t) o->record_size + 1);
        for (i = 0; i < o->record_size; i++) {
            pl->items[0][i] = (char) ('A' + rand() % 26);
        }
        pl->lens[0] = (size_t) o->record_size;
        pl->n = 1;
        return 0;
    }
    f = fopen(o->payload_file, "rb");
    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0) {
        fprintf(stderr, "samsa perf: cannot read %s: %s\n", o->payload_file,
                strerror(errno));
        return -1;
    }
    rewind(f);
    pl->file_data = malloc((size_t) size + 1);
    if (fread(pl->file_data, 1, (size_t) size, f) != (size_t) size) {
        fclose(f);
        fprintf(stderr, "samsa perf: short read on %s\n", o->payload_file);
        return -1;
    }
    fclose(f);
    end = pl->file_data + size;
    pl->items = calloc((size_t) size + 1, sizeof(char *));
    pl->lens = calloc((size_t) size + 1, sizeof(size_t));
    for (p = pl->file_data; p < end; p = nl + 1) {
        nl = memchr(p, '\n', (size_t) (end - p));
        nl = nl != NULL ? nl : end;
        if (nl > p) {
            pl->items[pl->n] = p;
            pl->lens[pl->n++] = (size_t) (nl - p);
        }
    }
    if (pl->n == 0) {
        fprintf(stderr, "samsa perf: %s holds no payloads\n",
                o->payload_file);
        return -1;
    }
    return 0;
}

static int
perf_parse(int argc, char **argv, perf_opts_t *o, samsa_conf_t *conf)
{
    char         err[512];
    int          i;

    memset(o, 0, sizeof(*o));
    o->num_records = -1;
    o->record_size = -1;
    o->throughput = -2;
    for (i = 0; i < argc; i++) {
        const char  *a = argv[i];
        const char  *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--json") == 0) {
            o->json = true;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            perf_usage(stdout);
            exit(0);
        }
        if (v == NULL) {
            fprintf(stderr, "samsa perf: %s needs a value\n", a);
            return -1;
        }
        if (strcmp(a, "--topic") == 0) {
            o->topic = v;
        } else if (strcmp(a, "--num-records") == 0) {
            o->num_records = strtoll(v, NULL, 10);
        } else if (strcmp(a, "--record-size") == 0) {
            o->record_size = strtoll(v, NULL, 10);
        } else if (strcmp(a, "--payload-file") == 0) {
            o->payload_file = v;
        } else if (strcmp(a, "--throughput") == 0) {
            o->throughput = strtod(v, NULL);
        } else if (strcmp(a, "--producer.config") == 0) {
            if (samsa_conf_load_file(conf, v, err, sizeof(err))
                != SAMSA_ERR_NONE) {
                fprintf(stderr, "samsa perf: %s\n", err);
                return -1;
            }
        } else if (strcmp(a, "--producer-props") == 0) {
            if (samsa_perf_props(conf, argc, argv, &i) != 0) {
                return -1;
            }
            continue;
        } else {
            fprintf(stderr, "samsa perf: unknown option %s\n", a);
            return -1;
        }
        i++;
    }
    if (o->topic == NULL || o->num_records < 0 || o->throughput == -2
        || (o->record_size < 0) == (o->payload_file == NULL)) {
        fprintf(stderr, "samsa perf: --topic, --num-records, --throughput "
                "and one of --record-size / --payload-file are required\n");
        return -1;
    }
    return 0;
}

/* Java's ThroughputThrottler: sleep when ahead of the target rate. */
static void
perf_throttle(const perf_opts_t *o, int64_t sent, int64_t start_ns)
{
    int64_t  due_ns;

    if (o->throughput <= 0) {
        return;
    }
    due_ns = start_ns + (int64_t) ((double) sent * 1e9 / o->throughput);
    while (samsa_perf_now_ns() < due_ns) {
        int64_t  left = due_ns - samsa_perf_now_ns();

        if (left > 0) {
            usleep((useconds_t) (left / 1000 > 0 ? left / 1000 : 1));
        }
    }
}

static int
perf_produce(int argc, char **argv)
{
    samsa_conf_t      *conf = samsa_conf_new();
    samsa_producer_t  *prod = NULL;
    perf_opts_t        o;
    perf_payloads_t    pl;
    perf_stats_t       st;
    perf_rec_t        *recs = NULL;
    samsa_record_t     rec;
    samsa_err_t        err;
    char               errstr[512];
    int64_t            i;
    int                rc = 1;

    if (perf_parse(argc, argv, &o, conf) != 0) {
        perf_usage(stderr);
        samsa_conf_free(conf);
        return 2;
    }
    if (perf_payloads_load(&pl, &o) != 0) {
        samsa_conf_free(conf);
        return 2;
    }
    err = samsa_producer_new(conf, &prod, errstr, sizeof(errstr));
    samsa_conf_free(conf);
    if (err != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa perf: %s\n", errstr);
        return 2;
    }
    memset(&st, 0, sizeof(st));
    st.quiet = o.json;
    st.send_ns = calloc((size_t) o.num_records + 1, sizeof(int64_t));
    st.lat_us = malloc(((size_t) o.num_records + 1) * sizeof(int32_t));
    memset(st.lat_us, 0xff, ((size_t) o.num_records + 1) * sizeof(int32_t));
    recs = calloc((size_t) o.num_records + 1, sizeof(perf_rec_t));
    st.start_ns = st.win_start_ns = samsa_perf_now_ns();
    memset(&rec, 0, sizeof(rec));
    rec.topic = o.topic;
    rec.partition = SAMSA_PARTITION_ANY;
    rec.timestamp = SAMSA_TIMESTAMP_NOW;
    for (i = 0; i < o.num_records; i++) {
        size_t  k = pl.n > 1 ? (size_t) rand() % pl.n : 0;

        recs[i] = (perf_rec_t) { &st, i, pl.lens[k] };
        rec.value = pl.items[k];
        rec.value_len = pl.lens[k];
        st.send_ns[i] = samsa_perf_now_ns();
        err = samsa_producer_send(prod, &rec, perf_on_delivery, &recs[i],
                                  NULL);
        if (err != SAMSA_ERR_NONE) {
            fprintf(stderr, "samsa perf: send failed: %s (%s)\n",
                    samsa_err_name(err), samsa_err_text(err));
            break;
        }
        perf_throttle(&o, i + 1, st.start_ns);
    }
    err = samsa_producer_close(prod, -1);       /* deliver everything */
    perf_summary(&st, samsa_perf_now_ns(), o.json);
    if (st.errors > 0) {
        fprintf(stderr, "samsa perf: %lld record(s) failed, first: %s\n",
                (long long) st.errors, samsa_err_name(st.first_err));
    }
    rc = (i == o.num_records && st.errors == 0 && err == SAMSA_ERR_NONE)
             ? 0 : 1;
    free(recs);
    free(st.send_ns);
    free(st.lat_us);
    if (pl.file_data == NULL && pl.items != NULL) {
        free(pl.items[0]);
    }
    free(pl.items);
    free(pl.lens);
    free(pl.file_data);
    return rc;
}

int
samsa_cmd_perf(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "produce") == 0) {
        return perf_produce(argc - 2, argv + 2);
    }
    if (argc >= 2 && strcmp(argv[1], "consume") == 0) {
        return samsa_perf_consume(argc - 2, argv + 2);
    }
    if (argc >= 2 && strcmp(argv[1], "e2e") == 0) {
        return samsa_perf_e2e(argc - 2, argv + 2);
    }
    fprintf(stderr, "usage: samsa perf produce|consume|e2e ... "
            "('samsa perf <kind> --help' describes each)\n");
    perf_usage(stderr);
    return 2;
}
