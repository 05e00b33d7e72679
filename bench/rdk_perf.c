/*
 * bench/rdk_perf.c - a librdkafka-driven benchmark driver, run the same way
 * against samsa-server and against librdkafka's mock cluster (rdk_mock).
 *
 *   rdk_perf create   -b HOST:PORT -t TOPIC -p PARTS [-C k=v]...
 *   rdk_perf delete   -b HOST:PORT -t TOPIC
 *   rdk_perf produce  -b HOST:PORT -t TOPIC -n RECORDS -s BYTES [-a ACKS]
 *                     [-l LINGER_MS] [-p PARTS] [-z CODEC] [--round-robin]
 *                     [-X k=v]... [--json]
 *   rdk_perf consume  -b HOST:PORT -t TOPIC [-n EXPECTED] [-X k=v]... [--json]
 *   rdk_perf e2e      -b HOST:PORT -t TOPIC -r RATE -d SECONDS [-s BYTES]
 *                     [-a ACKS] [-w WARMUP_S] [-X k=v]... [--json]
 *   rdk_perf startup  --port PORT [--timeout-ms MS] -- SERVER ARGS...
 *
 * create: waits up to 120 s for the answer, then 60 s for Metadata.
 * produce: flat out, each record copied into librdkafka (RD_KAFKA_MSG_F_COPY),
 *   keyless (librdkafka's default partitioner); the clock runs from the first
 *   produce call to the end of rd_kafka_flush(); delivery latency is from
 *   the produce call (taken before any QUEUE_FULL wait) to the delivery
 *   report.  -p creates the topic first (an existing one is kept).
 *   --round-robin: TOPIC is a name prefix; record i goes to the i-th
 *   (topic, partition) of every topic whose name starts with it (Metadata
 *   for all topics, sorted by name then partition), cycling: a producer
 *   writing to many partitions at once (bench/scale.py).
 * consume: every partition from its start to its high watermark (read with
 *   ListOffsets before starting), no consumer group (librdkafka's simple
 *   consumer API on one queue); the clock runs from the consumer's creation
 *   (so ListOffsets counts) to the last partition's EOF.
 * e2e: a producer (linger.ms=0) at a fixed rate and a consumer in the same
 *   process, assigned at the current ends; each payload starts with the
 *   CLOCK_MONOTONIC time of its produce call; latency is consume time minus
 *   that.  Records sent during the warm-up are not counted.
 * startup: fork+exec the server, then poll PORT every 0.5 ms until it
 *   answers ApiVersions v0 and then Metadata v1; prints both times from the
 *   exec and the child's pid, and leaves the server running.
 *
 * Exit status: 0 when every record was delivered/consumed and counted right,
 * 1 on any error or wrong count (the error is printed), 2 on usage errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#define MAX_PROPS   32
#define MB          (1024.0 * 1024.0)

typedef struct opts {
    const char  *mode;
    const char  *bootstrap;
    const char  *topic;
    int64_t      records;
    int64_t      size;
    const char  *acks;
    int          linger_ms;
    int          partitions;
    const char  *codec;
    double       rate;
    double       duration_s;
    double       warmup_s;
    int          port;
    int          timeout_ms;
    bool         json;
    bool         round_robin;
    const char  *props[MAX_PROPS];      /* -X k=v (-Xp, -Xc) */
    char         prop_kind[MAX_PROPS];  /* 'a'll, 'p'roducer, 'c'onsumer */
    int          nprops;
    const char  *tconf[MAX_PROPS];      /* -C k=v (topic configs) */
    int          ntconf;
    char       **server_argv;           /* startup: after "--" */
} opts_t;

static int64_t
now_ns(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void
usage(FILE *out)
{
    fprintf(out,
        "usage: rdk_perf create  -b HOST:PORT -t TOPIC -p PARTS [-C k=v]...\n"
        "       rdk_perf delete  -b HOST:PORT -t TOPIC\n"
        "       rdk_perf produce -b HOST:PORT -t TOPIC -n RECORDS -s BYTES\n"
        "                        [-a ACKS] [-l LINGER_MS] [-p PARTS]"
        " [-z CODEC] [--round-robin]\n"
        "       rdk_perf consume -b HOST:PORT -t TOPIC [-n EXPECTED]\n"
        "       rdk_perf e2e     -b HOST:PORT -t TOPIC -r RATE -d SECONDS\n"
        "                        [-s BYTES] [-a ACKS] [-w WARMUP_S]\n"
        "       rdk_perf startup --port PORT [--timeout-ms MS] -- SERVER"
        " ARGS...\n"
        "common: [-X librdkafka.property=value]... [--json]\n"
        "        (-Xp: producer only, -Xc: consumer only)\n");
}

static int
opts_parse(int argc, char **argv, opts_t *o)
{
    int  i;

    memset(o, 0, sizeof(*o));
    o->records = -1;
    o->size = 100;
    o->acks = "1";
    o->linger_ms = -1;
    o->codec = "none";
    o->warmup_s = 1.0;
    o->timeout_ms = 5000;
    if (argc < 2) {
        return -1;
    }
    o->mode = argv[1];
    for (i = 2; i < argc; i++) {
        const char  *a = argv[i];
        const char  *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--json") == 0) {
            o->json = true;
            continue;
        }
        if (strcmp(a, "--round-robin") == 0) {
            o->round_robin = true;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            o->server_argv = &argv[i + 1];
            break;
        }
        if (v == NULL) {
            fprintf(stderr, "rdk_perf: %s needs a value\n", a);
            return -1;
        }
        i++;
        if (strcmp(a, "-b") == 0) {
            o->bootstrap = v;
        } else if (strcmp(a, "-t") == 0) {
            o->topic = v;
        } else if (strcmp(a, "-n") == 0) {
            o->records = strtoll(v, NULL, 10);
        } else if (strcmp(a, "-s") == 0) {
            o->size = strtoll(v, NULL, 10);
        } else if (strcmp(a, "-a") == 0) {
            o->acks = v;
        } else if (strcmp(a, "-l") == 0) {
            o->linger_ms = atoi(v);
        } else if (strcmp(a, "-p") == 0) {
            o->partitions = atoi(v);
        } else if (strcmp(a, "-z") == 0) {
            o->codec = v;
        } else if (strcmp(a, "-r") == 0) {
            o->rate = strtod(v, NULL);
        } else if (strcmp(a, "-d") == 0) {
            o->duration_s = strtod(v, NULL);
        } else if (strcmp(a, "-w") == 0) {
            o->warmup_s = strtod(v, NULL);
        } else if (strcmp(a, "--port") == 0) {
            o->port = atoi(v);
        } else if (strcmp(a, "--timeout-ms") == 0) {
            o->timeout_ms = atoi(v);
        } else if ((strcmp(a, "-X") == 0 || strcmp(a, "-Xp") == 0
                    || strcmp(a, "-Xc") == 0) && o->nprops < MAX_PROPS) {
            o->prop_kind[o->nprops] = a[2] != '\0' ? a[2] : 'a';
            o->props[o->nprops++] = v;
        } else if (strcmp(a, "-C") == 0 && o->ntconf < MAX_PROPS) {
            o->tconf[o->ntconf++] = v;
        } else {
            fprintf(stderr, "rdk_perf: unknown option %s\n", a);
            return -1;
        }
    }
    return 0;
}

/* ---- percentiles ---------------------------------------------------------*/

static int
cmp_i64(const void *a, const void *b)
{
    int64_t  x = *(const int64_t *) a, y = *(const int64_t *) b;

    return (x > y) - (x < y);
}

/* Nearest-rank percentile of n sorted values, in ms. */
static double
pct_ms(const int64_t *sorted_ns, int64_t n, double p)
{
    int64_t  i = (int64_t) (p * (double) n);

    if (n == 0) {
        return 0.0;
    }
    return (double) sorted_ns[i < n ? i : n - 1] / 1e6;
}

/* ---- librdkafka set-up ---------------------------------------------------*/

static int
conf_set(rd_kafka_conf_t *conf, const char *k, const char *v)
{
    char  err[512];

    if (rd_kafka_conf_set(conf, k, v, err, sizeof(err)) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "rdk_perf: %s=%s: %s\n", k, v, err);
        return -1;
    }
    return 0;
}

/* Common properties, then the -X ones (which win); -Xp go to producers
 * only (and admin clients), -Xc to consumers only. */
static rd_kafka_conf_t *
conf_new(const opts_t *o, char kind)
{
    rd_kafka_conf_t  *conf = rd_kafka_conf_new();
    char              k[256];
    int               i;

    if (conf_set(conf, "bootstrap.servers", o->bootstrap) != 0
        || conf_set(conf, "client.id", "rdk_perf") != 0) {
        goto fail;
    }
    for (i = 0; i < o->nprops; i++) {
        const char  *eq = strchr(o->props[i], '=');

        if (o->prop_kind[i] != 'a' && o->prop_kind[i] != kind) {
            continue;
        }
        if (eq == NULL || (size_t) (eq - o->props[i]) >= sizeof(k)) {
            fprintf(stderr, "rdk_perf: -X %s: expected key=value\n",
                    o->props[i]);
            goto fail;
        }
        memcpy(k, o->props[i], (size_t) (eq - o->props[i]));
        k[eq - o->props[i]] = '\0';
        if (conf_set(conf, k, eq + 1) != 0) {
            goto fail;
        }
    }
    return conf;

fail:
    rd_kafka_conf_destroy(conf);
    return NULL;
}

static rd_kafka_t *
client_new(rd_kafka_type_t type, rd_kafka_conf_t *conf)
{
    char         err[512];
    rd_kafka_t  *rk = rd_kafka_new(type, conf, err, sizeof(err));

    if (rk == NULL) {
        fprintf(stderr, "rdk_perf: rd_kafka_new: %s\n", err);
        rd_kafka_conf_destroy(conf);
    }
    return rk;
}

/* Partition count of topic from the broker's metadata, or -1. */
static int
topic_partitions(rd_kafka_t *rk, const char *topic, int timeout_ms)
{
    const struct rd_kafka_metadata  *md = NULL;
    rd_kafka_topic_t                *rkt = rd_kafka_topic_new(rk, topic, NULL);
    int                              n = -1;

    if (rd_kafka_metadata(rk, 0, rkt, &md, timeout_ms)
        == RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (md->topic_cnt == 1 && md->topics[0].err == 0) {
            n = md->topics[0].partition_cnt;
        }
        rd_kafka_metadata_destroy(md);
    }
    rd_kafka_topic_destroy(rkt);
    return n;
}

/* CreateTopics (replication factor 1, -C configs); an existing topic is
 * fine.  Then waits up to 60 s for Metadata to show the partitions. */
static int
topic_create(rd_kafka_t *rk, const opts_t *o)
{
    rd_kafka_NewTopic_t           *nt;
    rd_kafka_queue_t              *q = rd_kafka_queue_new(rk);
    rd_kafka_event_t              *ev;
    const rd_kafka_topic_result_t **res;
    size_t                         nres;
    char                           err[512], k[256];
    int64_t                        deadline;
    int                            i, rc = -1;

    nt = rd_kafka_NewTopic_new(o->topic, o->partitions, 1, err, sizeof(err));
    if (nt == NULL) {
        fprintf(stderr, "rdk_perf: NewTopic: %s\n", err);
        goto out;
    }
    for (i = 0; i < o->ntconf; i++) {
        const char  *eq = strchr(o->tconf[i], '=');

        if (eq == NULL || (size_t) (eq - o->tconf[i]) >= sizeof(k)) {
            fprintf(stderr, "rdk_perf: -C %s: expected key=value\n",
                    o->tconf[i]);
            rd_kafka_NewTopic_destroy(nt);
            goto out;
        }
        memcpy(k, o->tconf[i], (size_t) (eq - o->tconf[i]));
        k[eq - o->tconf[i]] = '\0';
        rd_kafka_NewTopic_set_config(nt, k, eq + 1);
    }
    rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
    rd_kafka_NewTopic_destroy(nt);
    ev = rd_kafka_queue_poll(q, 120000);    /* 10,000 partitions: ~15 s */
    if (ev == NULL) {
        fprintf(stderr, "rdk_perf: CreateTopics: no answer in 120 s\n");
        goto out;
    }
    if (rd_kafka_event_error(ev) != 0) {
        fprintf(stderr, "rdk_perf: CreateTopics: %s\n",
                rd_kafka_event_error_string(ev));
        rd_kafka_event_destroy(ev);
        goto out;
    }
    res = rd_kafka_CreateTopics_result_topics(
        rd_kafka_event_CreateTopics_result(ev), &nres);
    if (nres == 1 && rd_kafka_topic_result_error(res[0]) != 0
        && rd_kafka_topic_result_error(res[0])
               != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        fprintf(stderr, "rdk_perf: CreateTopics %s: %s\n", o->topic,
                rd_kafka_topic_result_error_string(res[0]));
        rd_kafka_event_destroy(ev);
        goto out;
    }
    rd_kafka_event_destroy(ev);
    deadline = now_ns() + 60000000000LL;
    while (topic_partitions(rk, o->topic, 2000) < o->partitions) {
        if (now_ns() > deadline) {
            fprintf(stderr, "rdk_perf: %s not in metadata with %d "
                    "partitions after 60 s\n", o->topic, o->partitions);
            goto out;
        }
        usleep(20000);
    }
    rc = 0;
out:
    rd_kafka_queue_destroy(q);
    return rc;
}

static int
topic_delete(rd_kafka_t *rk, const opts_t *o)
{
    rd_kafka_DeleteTopic_t  *dt = rd_kafka_DeleteTopic_new(o->topic);
    rd_kafka_queue_t        *q = rd_kafka_queue_new(rk);
    rd_kafka_event_t        *ev;
    int                      rc = -1;

    rd_kafka_DeleteTopics(rk, &dt, 1, NULL, q);
    rd_kafka_DeleteTopic_destroy(dt);
    ev = rd_kafka_queue_poll(q, 15000);
    if (ev != NULL) {
        const rd_kafka_topic_result_t  **res;
        size_t                           nres = 0;

        res = rd_kafka_DeleteTopics_result_topics(
            rd_kafka_event_DeleteTopics_result(ev), &nres);
        if (rd_kafka_event_error(ev) != 0) {
            fprintf(stderr, "rdk_perf: DeleteTopics: %s\n",
                    rd_kafka_event_error_string(ev));
        } else if (nres == 1 && rd_kafka_topic_result_error(res[0]) != 0) {
            fprintf(stderr, "rdk_perf: DeleteTopics %s: %s\n", o->topic,
                    rd_kafka_topic_result_error_string(res[0]));
        } else {
            rc = 0;
        }
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_queue_destroy(q);
    return rc;
}

static int
run_admin(const opts_t *o)
{
    rd_kafka_conf_t  *conf = conf_new(o, 'p');
    rd_kafka_t       *rk;
    int               rc;

    if (conf == NULL || (rk = client_new(RD_KAFKA_PRODUCER, conf)) == NULL) {
        return 1;
    }
    if (strcmp(o->mode, "create") == 0) {
        rc = topic_create(rk, o);
    } else {
        rc = topic_delete(rk, o);
    }
    rd_kafka_destroy(rk);
    return rc == 0 ? 0 : 1;
}

/* ---- produce -------------------------------------------------------------*/

typedef struct prod_stats {
    int64_t     *send_ns;           /* per record: produce call time */
    int64_t     *lat_ns;            /* delivered records' latencies */
    int64_t      delivered;
    int64_t      bytes;
    int64_t      errors;
    rd_kafka_resp_err_t  first_err;
    int64_t      last_ns;
} prod_stats_t;

/* @thread app (served from rd_kafka_poll/flush) */
static void
prod_on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    prod_stats_t  *st = opaque;
    int64_t        now = now_ns();
    int64_t        i = (int64_t) (intptr_t) m->_private;

    (void) rk;
    st->last_ns = now;
    if (m->err != 0) {
        if (st->errors++ == 0) {
            st->first_err = m->err;
        }
        return;
    }
    st->lat_ns[st->delivered++] = now - st->send_ns[i];
    st->bytes += (int64_t) m->len;
}

static void
payload_fill(char *buf, int64_t size)
{
    int64_t  i;

    for (i = 0; i < size; i++) {
        buf[i] = (char) ('A' + rand() % 26);
    }
}

static rd_kafka_t *
producer_new(const opts_t *o, int linger_ms, void *opaque)
{
    rd_kafka_conf_t  *conf = conf_new(o, 'p');
    char              v[32];

    if (conf == NULL) {
        return NULL;
    }
    /* -a, -z and -l are set after (and so win over) -X. */
    if (conf_set(conf, "acks", o->acks) != 0
        || conf_set(conf, "compression.codec", o->codec) != 0) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    if (linger_ms >= 0) {
        snprintf(v, sizeof(v), "%d", linger_ms);
        if (conf_set(conf, "linger.ms", v) != 0) {
            rd_kafka_conf_destroy(conf);
            return NULL;
        }
    }
    rd_kafka_conf_set_dr_msg_cb(conf, prod_on_delivery);
    rd_kafka_conf_set_opaque(conf, opaque);
    return client_new(RD_KAFKA_PRODUCER, conf);
}

static void
prod_report(const opts_t *o, prod_stats_t *st, int64_t start_ns, int64_t rss)
{
    double  secs = (double) (st->last_ns - start_ns) / 1e9;
    double  rps = secs > 0 ? (double) st->delivered / secs : 0;
    double  mbps = secs > 0 ? (double) st->bytes / secs / MB : 0;
    int64_t n = st->delivered;

    qsort(st->lat_ns, (size_t) n, sizeof(int64_t), cmp_i64);
    if (o->json) {
        printf("{\"mode\": \"produce\", \"records\": %" PRId64 ", "
               "\"errors\": %" PRId64 ", \"secs\": %.3f, "
               "\"records_per_sec\": %.1f, \"mb_per_sec\": %.3f, "
               "\"p50_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f, "
               "\"max_rss_kb\": %" PRId64 "}\n",
               n, st->errors, secs, rps, mbps, pct_ms(st->lat_ns, n, 0.5),
               pct_ms(st->lat_ns, n, 0.99), pct_ms(st->lat_ns, n, 1.0), rss);
    } else {
        printf("produce: %" PRId64 " records (%" PRId64 " errors) in %.3f s:"
               " %.1f records/s, %.2f MB/s; delivery latency p50 %.3f ms,"
               " p99 %.3f ms, max %.3f ms; max RSS %" PRId64 " KiB\n",
               n, st->errors, secs, rps, mbps, pct_ms(st->lat_ns, n, 0.5),
               pct_ms(st->lat_ns, n, 0.99), pct_ms(st->lat_ns, n, 1.0), rss);
    }
}

static int64_t
max_rss_kb(void)
{
    FILE     *f = fopen("/proc/self/status", "r");
    char      line[256];
    int64_t   kb = -1;

    if (f == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kb = strtoll(line + 6, NULL, 10);
        }
    }
    fclose(f);
    return kb;
}

/* The (topic, partition) targets of --round-robin. */
typedef struct rr_targets {
    rd_kafka_topic_t  **rkts;       /* one per topic */
    int                 ntopics;
    int32_t            *part;       /* per target */
    int                *topic_ix;   /* per target: index into rkts */
    int64_t             n;
} rr_targets_t;

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *) a, *(const char *const *) b);
}

static void
rr_free(rr_targets_t *rr)
{
    int  i;

    for (i = 0; i < rr->ntopics; i++) {
        rd_kafka_topic_destroy(rr->rkts[i]);
    }
    free(rr->rkts);
    free(rr->part);
    free(rr->topic_ix);
    memset(rr, 0, sizeof(*rr));
}

/* Every partition of every topic named PREFIX*, from one Metadata for all
 * topics.  0, or -1 with the error printed. */
static int
rr_load(rd_kafka_t *rk, const char *prefix, int timeout_ms, rr_targets_t *rr)
{
    const struct rd_kafka_metadata  *md = NULL;
    const char                     **names = NULL;
    int                             *counts = NULL;
    size_t                           plen = strlen(prefix);
    rd_kafka_resp_err_t              err;
    int                              i, j, nt = 0;
    int64_t                          total = 0, k = 0;

    memset(rr, 0, sizeof(*rr));
    err = rd_kafka_metadata(rk, 1, NULL, &md, timeout_ms);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        fprintf(stderr, "rdk_perf: metadata: %s\n", rd_kafka_err2str(err));
        return -1;
    }
    names = calloc((size_t) md->topic_cnt + 1, sizeof(*names));
    for (i = 0; i < md->topic_cnt; i++) {
        if (strncmp(md->topics[i].topic, prefix, plen) == 0
            && md->topics[i].err == 0 && md->topics[i].partition_cnt > 0) {
            names[nt++] = md->topics[i].topic;
        }
    }
    if (nt == 0) {
        fprintf(stderr, "rdk_perf: no topic named %s* with partitions\n",
                prefix);
        free(names);
        rd_kafka_metadata_destroy(md);
        return -1;
    }
    qsort(names, (size_t) nt, sizeof(*names), cmp_str);
    counts = calloc((size_t) nt, sizeof(*counts));
    for (i = 0; i < nt; i++) {
        for (j = 0; j < md->topic_cnt; j++) {
            if (md->topics[j].topic == names[i]) {
                counts[i] = md->topics[j].partition_cnt;
            }
        }
        total += counts[i];
    }
    rr->rkts = calloc((size_t) nt, sizeof(*rr->rkts));
    rr->part = calloc((size_t) total, sizeof(*rr->part));
    rr->topic_ix = calloc((size_t) total, sizeof(*rr->topic_ix));
    for (i = 0; i < nt; i++) {
        rr->rkts[i] = rd_kafka_topic_new(rk, names[i], NULL);
        rr->ntopics++;
        for (j = 0; j < counts[i]; j++, k++) {
            rr->part[k] = j;
            rr->topic_ix[k] = i;
        }
    }
    rr->n = total;
    free(counts);
    free(names);
    rd_kafka_metadata_destroy(md);
    return 0;
}

static int
run_produce(const opts_t *o)
{
    rr_targets_t         rr;
    prod_stats_t         st;
    rd_kafka_t          *rk;
    char                *buf;
    int64_t              i, start_ns;
    rd_kafka_resp_err_t  err;
    int                  rc = 1;

    if (o->records <= 0 || o->size < 0) {
        fprintf(stderr, "rdk_perf: produce needs -n RECORDS and -s BYTES\n");
        return 2;
    }
    memset(&st, 0, sizeof(st));
    memset(&rr, 0, sizeof(rr));
    st.send_ns = calloc((size_t) o->records, sizeof(int64_t));
    st.lat_ns = calloc((size_t) o->records, sizeof(int64_t));
    buf = malloc((size_t) o->size + 1);
    payload_fill(buf, o->size);
    rk = producer_new(o, o->linger_ms, &st);
    if (rk == NULL) {
        goto out;
    }
    if (o->partitions > 0 && topic_create(rk, o) != 0) {
        goto out_destroy;
    }
    if (o->round_robin && rr_load(rk, o->topic, 30000, &rr) != 0) {
        goto out_destroy;
    }
    start_ns = st.last_ns = now_ns();
    for (i = 0; i < o->records; i++) {
        st.send_ns[i] = now_ns();
        for (;;) {
            if (o->round_robin) {
                int64_t  t = i % rr.n;

                err = rd_kafka_producev(
                    rk, RD_KAFKA_V_RKT(rr.rkts[rr.topic_ix[t]]),
                    RD_KAFKA_V_PARTITION(rr.part[t]),
                    RD_KAFKA_V_VALUE(buf, (size_t) o->size),
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                    RD_KAFKA_V_OPAQUE((void *) (intptr_t) i), RD_KAFKA_V_END);
            } else {
                err = rd_kafka_producev(
                    rk, RD_KAFKA_V_TOPIC(o->topic),
                    RD_KAFKA_V_VALUE(buf, (size_t) o->size),
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                    RD_KAFKA_V_OPAQUE((void *) (intptr_t) i), RD_KAFKA_V_END);
            }
            if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                break;
            }
            rd_kafka_poll(rk, 1);
        }
        if (err != 0) {
            fprintf(stderr, "rdk_perf: produce: %s\n", rd_kafka_err2str(err));
            goto out_destroy;
        }
        rd_kafka_poll(rk, 0);
    }
    while (rd_kafka_outq_len(rk) > 0) {
        rd_kafka_flush(rk, 1000);
        if (now_ns() - st.last_ns > 30000000000LL) {
            fprintf(stderr, "rdk_perf: produce: %d records undelivered after"
                    " 30 s without progress\n", rd_kafka_outq_len(rk));
            goto out_destroy;
        }
    }
    prod_report(o, &st, start_ns, max_rss_kb());
    if (st.errors > 0) {
        fprintf(stderr, "rdk_perf: %" PRId64 " record(s) failed, first: %s\n",
                st.errors, rd_kafka_err2str(st.first_err));
    } else if (st.delivered != o->records) {
        fprintf(stderr, "rdk_perf: delivered %" PRId64 " of %" PRId64 "\n",
                st.delivered, o->records);
    } else {
        rc = 0;
    }
out_destroy:
    rr_free(&rr);
    rd_kafka_destroy(rk);
out:
    free(buf);
    free(st.send_ns);
    free(st.lat_ns);
    return rc;
}

/* ---- consume -------------------------------------------------------------*/

/* A consumer without a group: librdkafka's simple consumer API, every
 * partition of the topic started on one queue at an explicit offset (no
 * FindCoordinator, no commits). */
typedef struct cons {
    rd_kafka_t        *rk;
    rd_kafka_topic_t  *rkt;
    rd_kafka_queue_t  *q;
    int                nparts;
    int64_t           *high;        /* per partition: high watermark */
    int64_t            expected;    /* records between start and high */
} cons_t;

static void
cons_close(cons_t *c)
{
    int  p;

    for (p = 0; c->rkt != NULL && p < c->nparts; p++) {
        rd_kafka_consume_stop(c->rkt, p);
    }
    if (c->q != NULL) {
        rd_kafka_queue_destroy(c->q);
    }
    if (c->rkt != NULL) {
        rd_kafka_topic_destroy(c->rkt);
    }
    if (c->rk != NULL) {
        rd_kafka_destroy(c->rk);
    }
    free(c->high);
    memset(c, 0, sizeof(*c));
}

/* Reads every partition's watermarks (ListOffsets), then starts each at its
 * low watermark (from_start) or its high one. */
static int
cons_open(cons_t *c, const opts_t *o, bool from_start, const char *eof)
{
    rd_kafka_conf_t      *conf = conf_new(o, 'c');
    rd_kafka_resp_err_t   err;
    int64_t               lo, hi;
    int                   p;

    memset(c, 0, sizeof(*c));
    if (conf == NULL || conf_set(conf, "enable.partition.eof", eof) != 0) {
        if (conf != NULL) {
            rd_kafka_conf_destroy(conf);
        }
        return -1;
    }
    c->rk = client_new(RD_KAFKA_CONSUMER, conf);
    if (c->rk == NULL) {
        return -1;
    }
    c->nparts = topic_partitions(c->rk, o->topic, 5000);
    if (c->nparts <= 0) {
        fprintf(stderr, "rdk_perf: topic %s not found\n", o->topic);
        c->nparts = 0;
        goto fail;
    }
    c->high = calloc((size_t) c->nparts, sizeof(int64_t));
    c->rkt = rd_kafka_topic_new(c->rk, o->topic, NULL);
    c->q = rd_kafka_queue_new(c->rk);
    for (p = 0; p < c->nparts; p++) {
        err = rd_kafka_query_watermark_offsets(c->rk, o->topic, p, &lo, &hi,
                                               5000);
        if (err != 0) {
            fprintf(stderr, "rdk_perf: watermarks of %s [%d]: %s\n",
                    o->topic, p, rd_kafka_err2str(err));
            goto fail;
        }
        c->high[p] = hi;
        c->expected += hi - lo;
    }
    for (p = 0; p < c->nparts; p++) {
        if (rd_kafka_consume_start_queue(c->rkt, p, from_start ? 
                RD_KAFKA_OFFSET_BEGINNING : c->high[p], c->q) != 0) {
            fprintf(stderr, "rdk_perf: consume_start %s [%d]: %s\n",
                    o->topic, p, rd_kafka_err2str(rd_kafka_last_error()));
            goto fail;
        }
    }
    return 0;

fail:
    cons_close(c);
    return -1;
}

static void
consume_report(const opts_t *o, int64_t got, int64_t expected,
               int64_t errors, int64_t bytes, double secs)
{
    if (o->json) {
        printf("{\"mode\": \"consume\", \"records\": %" PRId64 ", "
               "\"expected\": %" PRId64 ", \"errors\": %" PRId64 ", "
               "\"secs\": %.3f, \"records_per_sec\": %.1f, "
               "\"mb_per_sec\": %.3f}\n", got, expected, errors, secs,
               (double) got / secs, (double) bytes / secs / MB);
    } else {
        printf("consume: %" PRId64 " records (expected %" PRId64 ", %"
               PRId64 " errors) in %.3f s: %.1f records/s, %.2f MB/s\n",
               got, expected, errors, secs, (double) got / secs,
               (double) bytes / secs / MB);
    }
}

static int
run_consume(const opts_t *o)
{
    cons_t               c;
    rd_kafka_message_t  *m;
    int64_t              got = 0, bytes = 0, errors = 0;
    int64_t              start_ns, last_ns;
    int                  left, rc = 1;
    bool                *done;

    start_ns = now_ns();
    if (cons_open(&c, o, true, "true") != 0) {
        return 1;
    }
    done = calloc((size_t) c.nparts, sizeof(bool));
    left = c.nparts;
    last_ns = now_ns();
    while (left > 0) {
        m = rd_kafka_consume_queue(c.q, 200);
        if (m == NULL) {
            if (now_ns() - last_ns > 10000000000LL) {
                fprintf(stderr, "rdk_perf: consume: no progress for 10 s "
                        "(%" PRId64 " of %" PRId64 " records)\n", got,
                        c.expected);
                goto out;
            }
            continue;
        }
        last_ns = now_ns();
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            if (m->offset >= c.high[m->partition] && !done[m->partition]) {
                done[m->partition] = true;
                left--;
            }
        } else if (m->err != 0) {
            if (errors++ == 0) {
                fprintf(stderr, "rdk_perf: consume: %s\n",
                        rd_kafka_message_errstr(m));
            }
        } else {
            got++;
            bytes += (int64_t) m->len;
        }
        rd_kafka_message_destroy(m);
    }
    consume_report(o, got, c.expected, errors, bytes,
                   (double) (now_ns() - start_ns) / 1e9);
    if (got != c.expected || errors > 0
        || (o->records >= 0 && got != o->records)) {
        fprintf(stderr, "rdk_perf: consume: got %" PRId64 " records, "
                "watermarks say %" PRId64 ", -n says %" PRId64 "\n", got,
                c.expected, o->records);
    } else {
        rc = 0;
    }
out:
    free(done);
    cons_close(&c);
    return rc;
}

/* ---- e2e -----------------------------------------------------------------*/

typedef struct e2e_state {
    cons_t           cons;
    int64_t          measure_from_ns;   /* count records sent after this */
    int64_t         *lat_ns;
    int64_t          cap;
    int64_t          counted;           /* [consumer thread] */
    int64_t          received;          /* [consumer thread] all, warm-up too */
    int64_t          errors;            /* [consumer thread] */
    volatile int64_t expect_total;      /* set by main when done sending */
    volatile bool    stop;
} e2e_state_t;

static void *
e2e_consumer_main(void *arg)
{
    e2e_state_t         *s = arg;
    rd_kafka_message_t  *m;
    int64_t              sent_ns;

    while (!s->stop) {
        m = rd_kafka_consume_queue(s->cons.q, 100);
        if (m == NULL) {
            continue;
        }
        if (m->err != 0) {
            if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF
                && s->errors++ == 0) {
                fprintf(stderr, "rdk_perf: e2e consume: %s\n",
                        rd_kafka_message_errstr(m));
            }
        } else if (m->len >= sizeof(int64_t)) {
            int64_t  now = now_ns();

            memcpy(&sent_ns, m->payload, sizeof(sent_ns));
            s->received++;
            if (sent_ns >= s->measure_from_ns && s->counted < s->cap) {
                s->lat_ns[s->counted++] = now - sent_ns;
            }
        }
        rd_kafka_message_destroy(m);
        if (s->expect_total > 0 && s->received >= s->expect_total) {
            break;
        }
    }
    return NULL;
}

static void
sleep_until(int64_t t_ns)
{
    struct timespec  ts = { .tv_sec = t_ns / 1000000000LL,
                            .tv_nsec = t_ns % 1000000000LL };

    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)
           == EINTR) {
    }
}

static void
e2e_report(const opts_t *o, e2e_state_t *s, int64_t sent, int64_t measured)
{
    int64_t  n = s->counted;

    qsort(s->lat_ns, (size_t) n, sizeof(int64_t), cmp_i64);
    if (o->json) {
        printf("{\"mode\": \"e2e\", \"rate\": %.0f, \"sent\": %" PRId64
               ", \"received\": %" PRId64 ", \"measured\": %" PRId64
               ", \"measured_sent\": %" PRId64 ", \"p50_ms\": %.3f, "
               "\"p99_ms\": %.3f, \"p999_ms\": %.3f, \"max_ms\": %.3f}\n",
               o->rate, sent, s->received, n, measured,
               pct_ms(s->lat_ns, n, 0.5), pct_ms(s->lat_ns, n, 0.99),
               pct_ms(s->lat_ns, n, 0.999), pct_ms(s->lat_ns, n, 1.0));
    } else {
        printf("e2e at %.0f records/s: sent %" PRId64 ", received %" PRId64
               ", measured %" PRId64 "; latency p50 %.3f ms, p99 %.3f ms, "
               "p99.9 %.3f ms, max %.3f ms\n", o->rate, sent, s->received, n,
               pct_ms(s->lat_ns, n, 0.5), pct_ms(s->lat_ns, n, 0.99),
               pct_ms(s->lat_ns, n, 0.999), pct_ms(s->lat_ns, n, 1.0));
    }
}

static int
run_e2e(const opts_t *o)
{
    prod_stats_t                      pst;
    e2e_state_t                       s;
    rd_kafka_t                       *prod;
    pthread_t                         th;
    char                             *buf;
    int64_t                           i, total;
    int64_t                           start_ns, t, measured = 0;
    int64_t                           interval_ns;
    rd_kafka_resp_err_t               err;
    int                               rc = 1;

    if (o->rate <= 0 || o->duration_s <= 0 || o->size < 16) {
        fprintf(stderr, "rdk_perf: e2e needs -r RATE, -d SECONDS, -s >= 16\n");
        return 2;
    }
    total = (int64_t) (o->rate * (o->duration_s + o->warmup_s));
    interval_ns = (int64_t) (1e9 / o->rate);
    memset(&s, 0, sizeof(s));
    memset(&pst, 0, sizeof(pst));
    s.cap = total;
    s.lat_ns = calloc((size_t) total, sizeof(int64_t));
    pst.send_ns = calloc((size_t) total, sizeof(int64_t));
    pst.lat_ns = calloc((size_t) total, sizeof(int64_t));
    buf = malloc((size_t) o->size);
    payload_fill(buf, o->size);
    prod = producer_new(o, 0, &pst);
    if (prod == NULL) {
        goto out;
    }
    if (o->partitions > 0 && topic_create(prod, o) != 0) {
        goto out;
    }
    if (cons_open(&s.cons, o, false, "false") != 0) {
        goto out;
    }
    if (topic_partitions(prod, o->topic, 5000) <= 0) {  /* connect, metadata */
        goto out;
    }
    usleep(300000);             /* let the consumer's first fetches start */
    start_ns = now_ns();
    s.measure_from_ns = start_ns + (int64_t) (o->warmup_s * 1e9);
    pthread_create(&th, NULL, e2e_consumer_main, &s);
    for (i = 0; i < total; i++) {
        sleep_until(start_ns + i * interval_ns);
        t = now_ns();
        memcpy(buf, &t, sizeof(t));
        memcpy(buf + sizeof(t), &i, sizeof(i));
        pst.send_ns[i] = t;
        measured += t >= s.measure_from_ns;
        err = rd_kafka_producev(prod, RD_KAFKA_V_TOPIC(o->topic),
                                RD_KAFKA_V_VALUE(buf, (size_t) o->size),
                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                RD_KAFKA_V_OPAQUE((void *) (intptr_t) i),
                                RD_KAFKA_V_END);
        if (err != 0) {
            fprintf(stderr, "rdk_perf: e2e produce: %s\n",
                    rd_kafka_err2str(err));
            break;
        }
        rd_kafka_poll(prod, 0);
    }
    rd_kafka_flush(prod, 10000);
    s.expect_total = i;
    /* The consumer thread stops when it has everything, or after 5 s. */
    t = now_ns() + 5000000000LL;
    while (s.received < i && now_ns() < t) {
        usleep(10000);
    }
    s.stop = true;
    pthread_join(th, NULL);
    e2e_report(o, &s, i, measured);
    if (pst.errors > 0 || s.errors > 0 || s.received != i
        || s.counted != measured) {
        fprintf(stderr, "rdk_perf: e2e: sent %" PRId64 " (delivery errors %"
                PRId64 "), received %" PRId64 " (consume errors %" PRId64
                "), measured %" PRId64 " of %" PRId64 "\n", i, pst.errors,
                s.received, s.errors, s.counted, measured);
    } else {
        rc = 0;
    }
out:
    if (prod != NULL) {
        rd_kafka_destroy(prod);
    }
    cons_close(&s.cons);
    free(buf);
    free(s.lat_ns);
    free(pst.send_ns);
    free(pst.lat_ns);
    return rc;
}

/* ---- startup -------------------------------------------------------------*/

static void
put_i16(uint8_t *p, int16_t v)
{
    uint16_t  u = htons((uint16_t) v);

    memcpy(p, &u, 2);
}

static void
put_i32(uint8_t *p, int32_t v)
{
    uint32_t  u = htonl((uint32_t) v);

    memcpy(p, &u, 4);
}

/* Sends one request (header v1, client id "rdk_perf", body) and reads the
 * answer whole; returns its body after the correlation id, or -1. */
static ssize_t
kafka_call(int fd, int16_t key, int16_t ver, int32_t corr,
           const uint8_t *body, size_t body_len, uint8_t *out, size_t cap)
{
    uint8_t   req[64];
    size_t    n = 4 + 2 + 2 + 4 + 2 + 8;
    uint32_t  rsize;
    ssize_t   got, need;
    size_t    have = 0;

    put_i32(req, (int32_t) (n - 4 + body_len));
    put_i16(req + 4, key);
    put_i16(req + 6, ver);
    put_i32(req + 8, corr);
    put_i16(req + 12, 8);
    memcpy(req + 14, "rdk_perf", 8);
    memcpy(req + n, body, body_len);
    if (write(fd, req, n + body_len) != (ssize_t) (n + body_len)) {
        return -1;
    }
    while (have < 4) {
        got = read(fd, out + have, 4 - have);
        if (got <= 0) {
            return -1;
        }
        have += (size_t) got;
    }
    memcpy(&rsize, out, 4);
    need = (ssize_t) ntohl(rsize);
    if (need < 4 || (size_t) need > cap) {
        return -1;
    }
    for (have = 0; (ssize_t) have < need; have += (size_t) got) {
        got = read(fd, out + have, (size_t) need - have);
        if (got <= 0) {
            return -1;
        }
    }
    memcpy(&rsize, out, 4);
    if ((int32_t) ntohl(rsize) != corr) {
        return -1;
    }
    return need - 4;
}

static int
tcp_connect(int port)
{
    struct sockaddr_in  sa = { .sin_family = AF_INET,
                               .sin_port = htons((uint16_t) port) };
    int                 fd = socket(AF_INET, SOCK_STREAM, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0) {
        return -1;
    }
    if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int
run_startup(const opts_t *o)
{
    static uint8_t  resp[1 << 20];
    const uint8_t   md_all[4] = { 0xff, 0xff, 0xff, 0xff };   /* null array */
    int64_t         t0, t_api = -1, t_md = -1, deadline;
    ssize_t         n;
    pid_t           pid;
    int             fd;

    if (o->port <= 0 || o->server_argv == NULL || o->server_argv[0] == NULL) {
        fprintf(stderr, "rdk_perf: startup needs --port and -- SERVER...\n");
        return 2;
    }
    t0 = now_ns();
    pid = fork();
    if (pid == 0) {
        execv(o->server_argv[0], o->server_argv);
        _exit(127);
    }
    deadline = t0 + (int64_t) o->timeout_ms * 1000000LL;
    while (t_md < 0 && now_ns() < deadline) {
        fd = tcp_connect(o->port);
        if (fd < 0) {
            usleep(500);
            continue;
        }
        n = kafka_call(fd, 18, 0, 1, NULL, 0, resp, sizeof(resp));
        if (n >= 2 && resp[4] == 0 && resp[5] == 0) {
            t_api = t_api < 0 ? now_ns() : t_api;
            n = kafka_call(fd, 3, 1, 2, md_all, 4, resp, sizeof(resp));
            if (n >= 4 && (resp[4] | resp[5] | resp[6] | resp[7]) != 0) {
                t_md = now_ns();            /* at least one broker listed */
            }
        }
        close(fd);
        if (t_md < 0) {
            usleep(500);
        }
    }
    if (t_md < 0) {
        fprintf(stderr, "rdk_perf: server not serving within %d ms\n",
                o->timeout_ms);
        kill(pid, SIGKILL);
        return 1;
    }
    if (o->json) {
        printf("{\"mode\": \"startup\", \"pid\": %d, \"apiversions_ms\": "
               "%.3f, \"metadata_ms\": %.3f}\n", (int) pid,
               (double) (t_api - t0) / 1e6, (double) (t_md - t0) / 1e6);
    } else {
        printf("startup: pid %d, ApiVersions answered after %.3f ms, "
               "Metadata after %.3f ms\n", (int) pid,
               (double) (t_api - t0) / 1e6, (double) (t_md - t0) / 1e6);
    }
    return 0;
}

int
main(int argc, char **argv)
{
    opts_t  o;

    if (opts_parse(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    if (strcmp(o.mode, "startup") == 0) {
        return run_startup(&o);
    }
    if (o.bootstrap == NULL || o.topic == NULL) {
        usage(stderr);
        return 2;
    }
    if (strcmp(o.mode, "create") == 0 || strcmp(o.mode, "delete") == 0) {
        if (strcmp(o.mode, "create") == 0 && o.partitions <= 0) {
            fprintf(stderr, "rdk_perf: create needs -p PARTS\n");
            return 2;
        }
        return run_admin(&o);
    }
    if (strcmp(o.mode, "produce") == 0) {
        return run_produce(&o);
    }
    if (strcmp(o.mode, "consume") == 0) {
        return run_consume(&o);
    }
    if (strcmp(o.mode, "e2e") == 0) {
        return run_e2e(&o);
    }
    usage(stderr);
    return 2;
}
