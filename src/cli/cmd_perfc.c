/*
 * cli/cmd_perfc.c - "samsa perf consume" (kafka-consumer-perf-test's
 * options and summary: records, MB, records/s, MB/s, rebalance time,
 * fetch time and the fetch-phase rates) and "samsa perf e2e" (Kafka's
 * EndToEndLatency at a fixed rate: a producer and a consumer in one
 * process, latency from send() to poll() per record, p50/p99/p99.9/max).
 * Both print a progress line every --reporting-interval (5 s) and the
 * summary, or only the summary as one JSON object with --json.
 * Dispatched from cmd_perf.c.
 * Threads: perf consume runs on main; perf e2e sends on main and consumes
 * on one thread of its own (the consumer's application thread).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <samsa/consumer.h>
#include <samsa/producer.h>

#include "cli/cli.h"
#include "cli/perfstat.h"
#include "util/diag.h"

typedef struct perfc_opts {
    const char  *topic;
    int64_t      records;           /* consume: --messages; e2e: N */
    const char  *group;
    bool         from_latest;
    bool         no_group;          /* consume: assign every partition */
    int64_t      timeout_ms;        /* consume: longest gap between records */
    int64_t      interval_ms;
    bool         json;
    double       throughput;        /* e2e: records/s */
    int64_t      record_size;       /* e2e */
} perfc_opts_t;

static int64_t
perfc_wall_ms(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
perfc_usage(FILE *out, bool e2e)
{
    if (e2e) {
        fprintf(out,
            "usage: samsa perf e2e --topic TOPIC --num-records N "
            "--throughput RECORDS_PER_SEC\n"
            "         [--record-size BYTES (100)] [-b HOST:PORT]\n"
            "         [--producer-props k=v ...] [--consumer-props k=v ...]\n"
            "         [--command-config FILE] [--reporting-interval MS] "
            "[--json]\n"
            "End-to-end latency: records sent at a fixed rate by a producer "
            "and read by a\nconsumer in the same process (send() to "
            "poll()); p50/p99/p99.9/max.\n"
            "The producer defaults to acks=1, linger.ms=0, "
            "enable.idempotence=false.\n");
        return;
    }
    fprintf(out,
        "usage: samsa perf consume --topic TOPIC --messages N [-b HOST:PORT]\n"
        "         [--group GROUP | --no-group] [--from-latest]\n"
        "         [--timeout MS (10000)]\n"
        "         [--consumer-props k=v ...] [--consumer.config FILE]\n"
        "         [--command-config FILE] [--reporting-interval MS (5000)]\n"
        "         [--json]\n"
        "Consumes N records as a member of GROUP (default perf-consumer-<n>),\n"
        "from the earliest offset unless --from-latest, and reports\n"
        "kafka-consumer-perf-test's numbers.  --no-group assigns every\n"
        "partition instead (no group, no commits, rebalance time 0).\n");
}

static bool
perfc_num(const char *s, int64_t *v)
{
    char       *end;
    long long   x;

    errno = 0;
    x = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0) {
        return false;
    }
    *v = x;
    return true;
}

/* Shared options; conf (consumer) and pconf (producer, e2e) get the
 * properties.  Returns 1 for --help, -1 on error, 0 to run. */
static int
perfc_parse(int argc, char **argv, bool e2e, perfc_opts_t *o,
            samsa_conf_t *conf, samsa_conf_t *pconf)
{
    const char  *bootstrap = getenv("SAMSA_BOOTSTRAP");
    char         err[512];
    int          i;

    memset(o, 0, sizeof(*o));
    o->records = -1;
    o->timeout_ms = 10000;
    o->interval_ms = 5000;
    o->record_size = 100;
    o->throughput = -1;
    for (i = 0; i < argc; i++) {
        const char  *a = argv[i];
        const char  *v = i + 1 < argc ? argv[i + 1] : NULL;
        samsa_conf_t *target;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            perfc_usage(stdout, e2e);
            return 1;
        }
        if (strcmp(a, "--json") == 0) {
            o->json = true;
            continue;
        }
        if (strcmp(a, "--from-latest") == 0 && !e2e) {
            o->from_latest = true;
            continue;
        }
        if (strcmp(a, "--no-group") == 0 && !e2e) {
            o->no_group = true;
            continue;
        }
        if (strcmp(a, "--consumer-props") == 0
            || strcmp(a, "--producer-props") == 0) {
            target = a[2] == 'c' ? conf : pconf;
            if (target == NULL) {
                fprintf(stderr, "samsa perf: unknown option '%s'\n", a);
                return -1;
            }
            if (samsa_perf_props(target, argc, argv, &i) != 0) {
                return -1;
            }
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "samsa perf: %s needs a value\n", a);
            return -1;
        }
        i++;
        if (strcmp(a, "--topic") == 0) {
            o->topic = v;
        } else if (strcmp(a, "-b") == 0
                   || strcmp(a, "--bootstrap-server") == 0) {
            bootstrap = v;
        } else if ((strcmp(a, "--messages") == 0 && !e2e)
                   || (strcmp(a, "--num-records") == 0 && e2e)) {
            if (!perfc_num(v, &o->records) || o->records < 0) {
                fprintf(stderr, "samsa perf: bad count '%s'\n", v);
                return -1;
            }
        } else if (strcmp(a, "--group") == 0 && !e2e) {
            o->group = v;
        } else if (strcmp(a, "--timeout") == 0 && !e2e) {
            if (!perfc_num(v, &o->timeout_ms) || o->timeout_ms < 0) {
                fprintf(stderr, "samsa perf: bad timeout '%s'\n", v);
                return -1;
            }
        } else if (strcmp(a, "--reporting-interval") == 0) {
            if (!perfc_num(v, &o->interval_ms) || o->interval_ms <= 0) {
                fprintf(stderr, "samsa perf: bad interval '%s'\n", v);
                return -1;
            }
        } else if (strcmp(a, "--throughput") == 0 && e2e) {
            o->throughput = strtod(v, NULL);
        } else if (strcmp(a, "--record-size") == 0 && e2e) {
            if (!perfc_num(v, &o->record_size) || o->record_size < 16) {
                fprintf(stderr, "samsa perf: --record-size must be at "
                        "least 16\n");
                return -1;
            }
        } else if (strcmp(a, "--consumer.config") == 0
                   || strcmp(a, "--command-config") == 0) {
            if (samsa_conf_load_file(conf, v, err, sizeof(err))
                    != SAMSA_ERR_NONE
                || (pconf != NULL
                    && samsa_conf_load_file(pconf, v, err, sizeof(err))
                           != SAMSA_ERR_NONE)) {
                fprintf(stderr, "samsa perf: %s\n", err);
                return -1;
            }
        } else {
            fprintf(stderr, "samsa perf: unknown option '%s'\n", a);
            return -1;
        }
    }
    if (o->topic == NULL || o->records < 0 || (e2e && o->throughput <= 0)) {
        fprintf(stderr, e2e ? "samsa perf e2e: --topic, --num-records and "
                              "--throughput (> 0) are required\n"
                            : "samsa perf consume: --topic and --messages "
                              "are required\n");
        return -1;
    }
    if (bootstrap != NULL
        && (samsa_conf_set(conf, "bootstrap.servers", bootstrap, err,
                           sizeof(err)) != SAMSA_ERR_NONE
            || (pconf != NULL
                && samsa_conf_set(pconf, "bootstrap.servers", bootstrap,
                                  err, sizeof(err)) != SAMSA_ERR_NONE))) {
        fprintf(stderr, "samsa perf: %s\n", err);
        return -1;
    }
    if (samsa_conf_get(conf, "bootstrap.servers") == NULL) {
        fprintf(stderr, "samsa perf: no bootstrap server: use -b HOST:PORT, "
                "bootstrap.servers in the properties, or SAMSA_BOOTSTRAP\n");
        return -1;
    }
    return 0;
}

/* Set key unless the user did. */
static samsa_err_t
perfc_default(samsa_conf_t *conf, const char *key, const char *value)
{
    if (samsa_conf_get(conf, key) != NULL) {
        return SAMSA_ERR_NONE;
    }
    return samsa_conf_set(conf, key, value, NULL, 0);
}

/* ---- perf consume ------------------------------------------------------- */

typedef struct perfc_rebalance {
    int64_t  assigned_ns;           /* first ASSIGNED with partitions */
} perfc_rebalance_t;

static void
perfc_on_rebalance(samsa_consumer_t *c, samsa_rebalance_event_t ev,
                   const samsa_topic_partition_t *tps, size_t n,
                   void *opaque)
{
    perfc_rebalance_t  *rb = opaque;

    (void) c;
    (void) tps;
    if (ev == SAMSA_REBALANCE_ASSIGNED && n > 0 && rb->assigned_ns == 0) {
        rb->assigned_ns = samsa_perf_now_ns();
    }
}

static void
perfc_time_str(int64_t wall_ms, char *buf, size_t size)
{
    time_t     t = (time_t) (wall_ms / 1000);
    struct tm  tm;

    gmtime_r(&t, &tm);
    snprintf(buf, size, "%04d-%02d-%02d %02d:%02d:%02d:%03d",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec, (int) (wall_ms % 1000));
}

int
samsa_perf_consume(int argc, char **argv)
{
    samsa_conf_t              *conf = samsa_conf_new();
    samsa_consumer_t          *c = NULL;
    samsa_consumer_records_t  *rs;
    perfc_opts_t               o;
    perfc_rebalance_t          rb = { 0 };
    samsa_err_t                err;
    char                       errstr[512], group[64], t0[96], t1[96];
    const char                *topics[1];
    int64_t                    start_ns, start_wall, last_ns, win_ns;
    int64_t                    count = 0, bytes = 0, win_count = 0;
    int64_t                    win_bytes = 0;
    int32_t                    nparts = 0;
    double                     secs, fetch_secs, mb, reb_ms;
    size_t                     i;
    int                        rc;

    samsa_diag_set_level(SAMSA_DIAG_WARN);
    rc = perfc_parse(argc, argv, false, &o, conf, NULL);
    if (rc != 0) {
        if (rc < 0) {
            perfc_usage(stderr, false);
        }
        samsa_conf_free(conf);
        return rc < 0 ? 2 : 0;
    }
    snprintf(group, sizeof(group), "perf-consumer-%d",
             (int) (perfc_wall_ms() % 100000));
    err = o.no_group ? SAMSA_ERR_NONE
                     : samsa_conf_set(conf, "group.id",
                                      o.group != NULL ? o.group : group,
                                      errstr, sizeof(errstr));
    if (err == SAMSA_ERR_NONE) {
        err = perfc_default(conf, "auto.offset.reset",
                            o.from_latest ? "latest" : "earliest");
    }
    if (err == SAMSA_ERR_NONE) {
        err = perfc_default(conf, "allow.auto.create.topics", "false");
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_consumer_new(conf, &c, errstr, sizeof(errstr));
    }
    samsa_conf_free(conf);
    if (err != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa perf consume: %s\n", errstr);
        return 2;
    }
    samsa_consumer_set_rebalance_cb(c, perfc_on_rebalance, &rb);
    topics[0] = o.topic;
    start_wall = perfc_wall_ms();
    start_ns = last_ns = win_ns = samsa_perf_now_ns();
    err = samsa_consumer_partitions_for(c, o.topic, o.timeout_ms, &nparts);
    if (err == SAMSA_ERR_NONE && o.no_group) {
        samsa_topic_partition_t  *tps = calloc((size_t) nparts + 1,
                                               sizeof(*tps));
        int32_t                   k;

        for (k = 0; k < nparts; k++) {
            tps[k].topic = o.topic;
            tps[k].partition = k;
        }
        err = samsa_consumer_assign(c, tps, (size_t) nparts);
        if (err == SAMSA_ERR_NONE) {
            err = o.from_latest ? samsa_consumer_seek_to_end(c, NULL, 0)
                                : samsa_consumer_seek_to_beginning(c, NULL,
                                                                   0);
        }
        free(tps);
        rb.assigned_ns = start_ns;
    } else if (err == SAMSA_ERR_NONE) {
        err = samsa_consumer_subscribe(c, topics, 1);
    }
    if (err != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa perf consume: topic '%s': %s (%s)\n", o.topic,
                samsa_err_name(err), err == SAMSA_ERR__TIMED_OUT
                    ? "no answer from the cluster" : samsa_err_text(err));
        (void) samsa_consumer_close(c, 5000);
        return err == SAMSA_ERR__TIMED_OUT ? 3 : 1;  /* 3: unreachable */
    }
    rc = 0;
    if (!o.json) {
        printf("start.time, end.time, data.consumed.in.MB, MB.sec, "
               "data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, "
               "fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec\n");
    }
    while (count < o.records) {
        int64_t  now = samsa_perf_now_ns();

        if ((now - last_ns) / 1000000 > o.timeout_ms) {
            fprintf(stderr, "samsa perf consume: no record for %lld ms: "
                    "stopping after %lld of %lld\n",
                    (long long) o.timeout_ms, (long long) count,
                    (long long) o.records);
            rc = 1;
            break;
        }
        err = samsa_consumer_poll(c, 100, &rs);
        if (err != SAMSA_ERR_NONE) {
            fprintf(stderr, "samsa perf consume: %s (%s)\n",
                    samsa_err_name(err), samsa_err_text(err));
            rc = 1;
            break;
        }
        for (i = 0; i < samsa_consumer_records_count(rs)
                    && count < o.records; i++) {
            const samsa_consumer_record_t  *r =
                samsa_consumer_records_get(rs, i);

            bytes += (int64_t) (r->key_len + r->value_len);
            win_bytes += (int64_t) (r->key_len + r->value_len);
            count++;
            win_count++;
        }
        if (samsa_consumer_records_count(rs) > 0) {
            last_ns = samsa_perf_now_ns();
        }
        samsa_consumer_records_free(rs);
        now = samsa_perf_now_ns();
        if (!o.json && (now - win_ns) / 1000000 >= o.interval_ms) {
            secs = (double) (now - win_ns) / 1e9;
            perfc_time_str(perfc_wall_ms(), t1, sizeof(t1));
            printf("%s, %lld records, %.4f MB, %.4f MB.sec, %.1f "
                   "nMsg.sec\n", t1, (long long) count,
                   (double) bytes / 1048576.0,
                   (double) win_bytes / 1048576.0 / secs,
                   (double) win_count / secs);
            fflush(stdout);
            win_ns = now;
            win_count = win_bytes = 0;
        }
    }
    secs = (double) (last_ns - start_ns) / 1e9;
    reb_ms = rb.assigned_ns > 0 ? (double) (rb.assigned_ns - start_ns) / 1e6
                                : 0.0;
    fetch_secs = secs - reb_ms / 1000.0;
    mb = (double) bytes / 1048576.0;
    if (secs <= 0) {
        secs = 1e-9;
    }
    if (fetch_secs <= 0) {
        fetch_secs = 1e-9;
    }
    perfc_time_str(start_wall, t0, sizeof(t0));
    perfc_time_str(start_wall + (last_ns - start_ns) / 1000000, t1,
                   sizeof(t1));
    if (o.json) {
        printf("{\"records\": %lld, \"mb\": %.4f, \"mb_per_sec\": %.4f, "
               "\"records_per_sec\": %.2f, \"rebalance_time_ms\": %.1f, "
               "\"fetch_time_ms\": %.1f, \"fetch_mb_per_sec\": %.4f, "
               "\"fetch_records_per_sec\": %.2f}\n", (long long) count, mb,
               mb / secs, (double) count / secs, reb_ms, fetch_secs * 1000.0,
               mb / fetch_secs, (double) count / fetch_secs);
    } else {
        printf("%s, %s, %.4f, %.4f, %lld, %.4f, %.0f, %.0f, %.4f, %.4f\n",
               t0, t1, mb, mb / secs, (long long) count,
               (double) count / secs, reb_ms, fetch_secs * 1000.0,
               mb / fetch_secs, (double) count / fetch_secs);
    }
    (void) samsa_consumer_close(c, 10000);
    return rc;
}

/* ---- perf e2e ----------------------------------------------------------- */

typedef struct perfc_e2e {
    samsa_consumer_t  *c;
    const char        *topic;
    int64_t            n;
    int32_t           *lat_us;          /* by record index, -1 none */
    _Atomic int64_t    received;
    _Atomic bool       stop;
    _Atomic int64_t    sent;
    int64_t            interval_ms;
    bool               quiet;
    samsa_err_t        err;
} perfc_e2e_t;

/* @thread e2e consumer */
static void *
perfc_e2e_consume(void *arg)
{
    perfc_e2e_t               *e = arg;
    samsa_consumer_records_t  *rs;
    samsa_err_t                err;
    int64_t                    win_start = samsa_perf_now_ns(), win = 0;
    size_t                     i;

    while (!atomic_load(&e->stop)) {
        err = samsa_consumer_poll(e->c, 50, &rs);
        if (err == SAMSA_ERR__SHUTDOWN) {
            break;
        }
        if (err != SAMSA_ERR_NONE) {
            e->err = err;
            break;
        }
        for (i = 0; i < samsa_consumer_records_count(rs); i++) {
            const samsa_consumer_record_t  *r =
                samsa_consumer_records_get(rs, i);
            int64_t                         sent_ns, idx;

            if (r->value == NULL || r->value_len < 16) {
                continue;
            }
            memcpy(&sent_ns, r->value, 8);
            memcpy(&idx, (const char *) r->value + 8, 8);
            if (idx < 0 || idx >= e->n || e->lat_us[idx] >= 0) {
                continue;               /* not ours, or a duplicate */
            }
            e->lat_us[idx] = (int32_t) ((samsa_perf_now_ns() - sent_ns) / 1000);
            atomic_fetch_add(&e->received, 1);
            win++;
        }
        samsa_consumer_records_free(rs);
        if (!e->quiet && samsa_perf_now_ns() - win_start
                             >= e->interval_ms * 1000000LL) {
            printf("%lld records sent, %lld received, %.1f records/sec "
                   "received\n", (long long) atomic_load(&e->sent),
                   (long long) atomic_load(&e->received),
                   (double) win * 1e9
                       / (double) (samsa_perf_now_ns() - win_start));
            fflush(stdout);
            win_start = samsa_perf_now_ns();
            win = 0;
        }
        if (atomic_load(&e->received) >= e->n) {
            break;
        }
    }
    return NULL;
}

/* Assign every partition of the topic at its end; wait until placed. */
static samsa_err_t
perfc_e2e_assign(samsa_consumer_t *c, const char *topic, int32_t *nparts)
{
    samsa_topic_partition_t  *tps;
    samsa_err_t               err;
    int64_t                   pos;
    int32_t                   i;

    err = samsa_consumer_partitions_for(c, topic, 10000, nparts);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    tps = calloc((size_t) *nparts, sizeof(*tps));
    for (i = 0; i < *nparts; i++) {
        tps[i].topic = topic;
        tps[i].partition = i;
    }
    err = samsa_consumer_assign(c, tps, (size_t) *nparts);
    if (err == SAMSA_ERR_NONE) {
        err = samsa_consumer_seek_to_end(c, NULL, 0);
    }
    for (i = 0; err == SAMSA_ERR_NONE && i < *nparts; i++) {
        err = samsa_consumer_position(c, topic, i, 10000, &pos);
    }
    free(tps);
    return err;
}

int
samsa_perf_e2e(int argc, char **argv)
{
    samsa_conf_t      *conf = samsa_conf_new(), *pconf = samsa_conf_new();
    samsa_producer_t  *prod = NULL;
    perfc_e2e_t        e;
    perfc_opts_t       o;
    samsa_record_t     rec;
    samsa_err_t        err;
    pthread_t          th;
    char               errstr[512];
    char              *payload;
    int64_t            i, start_ns, due, n;
    int32_t            nparts = 0;
    double             sum = 0, max = 0;
    int                rc;

    samsa_diag_set_level(SAMSA_DIAG_WARN);
    memset(&e, 0, sizeof(e));
    rc = perfc_parse(argc, argv, true, &o, conf, pconf);
    if (rc != 0) {
        if (rc < 0) {
            perfc_usage(stderr, true);
        }
        samsa_conf_free(conf);
        samsa_conf_free(pconf);
        return rc < 0 ? 2 : 0;
    }
    err = perfc_default(pconf, "acks", "1");
    err = err != SAMSA_ERR_NONE ? err : perfc_default(pconf, "linger.ms", "0");
    err = err != SAMSA_ERR_NONE ? err
          : perfc_default(pconf, "enable.idempotence", "false");
    err = err != SAMSA_ERR_NONE ? err
          : perfc_default(conf, "allow.auto.create.topics", "false");
    err = err != SAMSA_ERR_NONE ? err
          : perfc_default(conf, "fetch.max.wait.ms", "100");
    if (err == SAMSA_ERR_NONE) {
        err = samsa_producer_new(pconf, &prod, errstr, sizeof(errstr));
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_consumer_new(conf, &e.c, errstr, sizeof(errstr));
    }
    samsa_conf_free(conf);
    samsa_conf_free(pconf);
    if (err != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa perf e2e: %s\n", errstr);
        if (prod != NULL) {
            (void) samsa_producer_close(prod, 0);
        }
        return 2;
    }
    err = perfc_e2e_assign(e.c, o.topic, &nparts);
    if (err != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa perf e2e: topic '%s': %s (%s)\n", o.topic,
                samsa_err_name(err), err == SAMSA_ERR__TIMED_OUT
                    ? "no answer from the cluster" : samsa_err_text(err));
        (void) samsa_consumer_close(e.c, 5000);
        (void) samsa_producer_close(prod, 0);
        return err == SAMSA_ERR__TIMED_OUT ? 3 : 1;  /* 3: unreachable */
    }
    e.topic = o.topic;
    e.n = o.records;
    e.interval_ms = o.interval_ms;
    e.quiet = o.json;
    e.lat_us = malloc(((size_t) o.records + 1) * sizeof(int32_t));
    memset(e.lat_us, 0xff, ((size_t) o.records + 1) * sizeof(int32_t));
    payload = calloc(1, (size_t) o.record_size);
    memset(payload + 16, 'x', (size_t) o.record_size - 16);
    pthread_create(&th, NULL, perfc_e2e_consume, &e);
    memset(&rec, 0, sizeof(rec));
    rec.topic = o.topic;
    rec.partition = SAMSA_PARTITION_ANY;
    rec.timestamp = SAMSA_TIMESTAMP_NOW;
    rec.value = payload;
    rec.value_len = (size_t) o.record_size;
    start_ns = samsa_perf_now_ns();
    rc = 0;
    for (i = 0; i < o.records; i++) {
        int64_t  now;

        due = start_ns + (int64_t) ((double) i * 1e9 / o.throughput);
        while ((now = samsa_perf_now_ns()) < due) {
            usleep((useconds_t) ((due - now) / 1000 > 0 ? (due - now) / 1000
                                                        : 1));
        }
        now = samsa_perf_now_ns();
        memcpy(payload, &now, 8);
        memcpy(payload + 8, &i, 8);
        err = samsa_producer_send(prod, &rec, NULL, NULL, NULL);
        if (err != SAMSA_ERR_NONE) {
            fprintf(stderr, "samsa perf e2e: send failed: %s (%s)\n",
                    samsa_err_name(err), samsa_err_text(err));
            rc = 1;
            break;
        }
        atomic_store(&e.sent, i + 1);
    }
    if (samsa_producer_flush(prod, 30000) != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa perf e2e: records still unsent after 30 s\n");
        rc = 1;
    }
    for (i = 0; i < 100 && atomic_load(&e.received) < atomic_load(&e.sent)
                && e.err == SAMSA_ERR_NONE; i++) {
        usleep(50000);                  /* up to 5 s for the stragglers */
    }
    atomic_store(&e.stop, true);
    pthread_join(th, NULL);
    if (e.err != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa perf e2e: consume failed: %s\n",
                samsa_err_name(e.err));
        rc = 1;
    }
    for (i = 0, n = 0; i < o.records; i++) {
        if (e.lat_us[i] >= 0) {
            sum += e.lat_us[i] / 1000.0;
            max = e.lat_us[i] / 1000.0 > max ? e.lat_us[i] / 1000.0 : max;
            e.lat_us[n++] = e.lat_us[i];
        }
    }
    samsa_perf_sort(e.lat_us, n);
    if (n < o.records) {
        fprintf(stderr, "samsa perf e2e: %lld of %lld records not received\n",
                (long long) (o.records - n), (long long) o.records);
        rc = 1;
    }
    if (o.json) {
        printf("{\"records\": %lld, \"received\": %lld, \"avg_ms\": %.3f, "
               "\"p50_ms\": %.3f, \"p99_ms\": %.3f, \"p999_ms\": %.3f, "
               "\"max_ms\": %.3f}\n", (long long) o.records, (long long) n,
               n ? sum / (double) n : 0.0, samsa_perf_pct(e.lat_us, n, 0.5),
               samsa_perf_pct(e.lat_us, n, 0.99),
               samsa_perf_pct(e.lat_us, n, 0.999),
               max);
    } else {
        printf("%lld records, %lld received, avg latency %.3f ms, p50 %.3f "
               "ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms\n",
               (long long) o.records, (long long) n,
               n ? sum / (double) n : 0.0, samsa_perf_pct(e.lat_us, n, 0.5),
               samsa_perf_pct(e.lat_us, n, 0.99),
               samsa_perf_pct(e.lat_us, n, 0.999),
               max);
    }
    (void) samsa_consumer_close(e.c, 5000);
    (void) samsa_producer_close(prod, 5000);
    free(e.lat_us);
    free(payload);
    return rc;
}
