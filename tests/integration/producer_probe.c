/*
 * tests/integration/producer_probe.c - drives libsamsa's producer through
 * its public API for tests/integration/test_producer*.py:
 *
 *   producer_probe seq BOOTSTRAP TOPIC N [k=v...]
 *       send N records, value "<i>", key "k<i % 97>", close(-1); print one
 *       JSON line {"sent", "delivered", "errors", "send_err", "close_err",
 *       "first_err", "retries", "producer_id", "splits"}
 *   producer_probe file BOOTSTRAP TOPIC PATH [k=v...]
 *       send the records of PATH, one a line:
 *           PARTITION TIMESTAMP KEY VALUE [HKEY HVALUE]...
 *       (PARTITION -1: the partitioner's; TIMESTAMP -1: now; each byte
 *       field in hex, "-" for null, "." for empty); close(-1); print the
 *       JSON line of seq
 *   producer_probe pool BOOTSTRAP TOPIC [k=v...]
 *       fill the buffer pool while the broker does not answer; print the
 *       JSON line {"err", "blocked_ms", "sent"} of the first send that fails
 *   producer_probe future BOOTSTRAP TOPIC [k=v...]
 *       one send with headers and a future; print its metadata
 *
 * Options of the probe itself, among the k=v arguments:
 *   probe.acks=PATH   one line per completed record, in completion order:
 *                     "INDEX PARTITION OFFSET ERRNAME"
 *   probe.rate=N      seq: at most N records/s
 *   probe.flush=1     flush(-1) before close(-1), so that "retries" (the
 *                     metrics are read before close) counts the whole run
 *   probe.warmup=N    seq: flush(-1) after the first N records (N=97: one
 *                     of each key, so every partition has some), so that
 *                     the broker knows the producer on every partition
 *                     before a batch of the rest can be refused
 * Threads: main; callbacks on the producer's sender thread (the only one
 * that writes probe.acks).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <samsa/producer.h>

static _Atomic long    delivered;
static _Atomic long    failed;
static _Atomic int     first_err;
static FILE           *acks_out;        /* [sender thread] after start */
static long            rate;            /* [main] records/s, 0: no limit */
static bool            flush_first;     /* [main] flush(-1) before close */
static long            warmup;          /* [main] seq: see probe.warmup */
static samsa_producer_t *_Atomic probe_p;   /* set before the first send */
static _Atomic long long  seen_pid = -1;    /* producer id at a delivery */

static void
on_delivery(const samsa_record_md_t *md, samsa_err_t err, void *opaque)
{
    if (err == SAMSA_ERR_NONE) {
        atomic_fetch_add(&delivered, 1);
        if (atomic_load(&seen_pid) < 0 && atomic_load(&probe_p) != NULL) {
            samsa_producer_metrics_t  m;

            /* the id the records went out with: the metrics read at the
             * end may come before InitProducerId was answered */
            samsa_producer_metrics(atomic_load(&probe_p), &m);
            atomic_store(&seen_pid, (long long) m.producer_id);
        }
    } else {
        int  none = 0;

        atomic_compare_exchange_strong(&first_err, &none, (int) err);
        atomic_fetch_add(&failed, 1);
    }
    if (acks_out != NULL) {
        fprintf(acks_out, "%ld %d %lld %s\n", (long) (intptr_t) opaque,
                md != NULL ? md->partition : -1,
                md != NULL ? (long long) md->offset : -1LL,
                samsa_err_name(err));
    }
}

static long
now_ms(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Handles the probe's own "probe.*" options; returns false for others. */
static bool
probe_option(const char *kv)
{
    if (strncmp(kv, "probe.acks=", 11) == 0) {
        acks_out = fopen(kv + 11, "w");
        if (acks_out == NULL) {
            fprintf(stderr, "producer_probe: %s: %s\n", kv + 11,
                    strerror(errno));
            exit(2);
        }
        return true;
    }
    if (strcmp(kv, "probe.flush=1") == 0) {
        flush_first = true;
        return true;
    }
    if (strncmp(kv, "probe.warmup=", 13) == 0) {
        warmup = atol(kv + 13);
        return true;
    }
    if (strncmp(kv, "probe.rate=", 11) == 0) {
        rate = atol(kv + 11);
        return true;
    }
    return false;
}

static samsa_producer_t *
make(const char *bootstrap, int argc, char **argv, const char *const *extra)
{
    samsa_conf_t      *conf = samsa_conf_new();
    samsa_producer_t  *p = NULL;
    char               err[512];
    int                i;

    if (samsa_conf_set(conf, "bootstrap.servers", bootstrap, err,
                       sizeof(err)) != SAMSA_ERR_NONE) {
        goto fail;
    }
    for (i = 0; extra != NULL && extra[i] != NULL; i++) {
        if (samsa_conf_set_kv(conf, extra[i], err, sizeof(err))
            != SAMSA_ERR_NONE) {
            goto fail;
        }
    }
    for (i = 0; i < argc; i++) {
        if (probe_option(argv[i])) {
            continue;
        }
        if (samsa_conf_set_kv(conf, argv[i], err, sizeof(err))
            != SAMSA_ERR_NONE) {
            goto fail;
        }
    }
    if (samsa_producer_new(conf, &p, err, sizeof(err)) != SAMSA_ERR_NONE) {
        goto fail;
    }
    samsa_conf_free(conf);
    atomic_store(&probe_p, p);
    return p;
fail:
    fprintf(stderr, "producer_probe: %s\n", err);
    exit(2);
}

/* [flush(-1),] close(-1), then the summary line.  sent: records accepted;
 * "retries" is record_retry_total before close. */
static int
finish(samsa_producer_t *p, long sent, samsa_err_t err)
{
    samsa_producer_metrics_t  m;
    samsa_err_t               cerr;

    if (flush_first && samsa_producer_flush(p, -1) != SAMSA_ERR_NONE) {
        fprintf(stderr, "producer_probe: flush failed\n");
    }
    samsa_producer_metrics(p, &m);          /* before close frees it */
    cerr = samsa_producer_close(p, -1);
    atomic_store(&probe_p, NULL);
    if (m.producer_id < 0) {
        m.producer_id = atomic_load(&seen_pid);
    }
    if (acks_out != NULL) {
        fclose(acks_out);                   /* the sender thread is gone */
        acks_out = NULL;
    }
    printf("{\"sent\": %ld, \"delivered\": %ld, \"errors\": %ld, "
           "\"send_err\": \"%s\", \"close_err\": \"%s\", "
           "\"first_err\": \"%s\", \"retries\": %lld, "
           "\"producer_id\": %lld, \"splits\": %lld, \"pinflight_max\": %d}\n",
           sent,
           atomic_load(&delivered),
           atomic_load(&failed), samsa_err_name(err), samsa_err_name(cerr),
           samsa_err_name((samsa_err_t) atomic_load(&first_err)),
           (long long) m.record_retry_total, (long long) m.producer_id,
           (long long) m.batch_split_total, m.partition_inflight_max);
    return 0;
}

static int
probe_seq(const char *bootstrap, const char *topic, long n, int argc,
          char **argv)
{
    samsa_producer_t  *p = make(bootstrap, argc, argv, NULL);
    samsa_record_t     rec;
    samsa_err_t        err = SAMSA_ERR_NONE;
    char               key[32], value[32];
    long               i, t0 = now_ms(), ahead;
    struct timespec    nap;

    memset(&rec, 0, sizeof(rec));
    rec.topic = topic;
    rec.partition = SAMSA_PARTITION_ANY;
    rec.timestamp = SAMSA_TIMESTAMP_NOW;
    for (i = 0; i < n; i++) {
        if (i == warmup && warmup > 0) {
            err = samsa_producer_flush(p, -1);
            if (err != SAMSA_ERR_NONE) {
                break;
            }
        }
        if (rate > 0 && i % 100 == 0) {
            ahead = i * 1000 / rate - (now_ms() - t0);
            if (ahead > 0) {
                nap.tv_sec = ahead / 1000;
                nap.tv_nsec = (ahead % 1000) * 1000000L;
                nanosleep(&nap, NULL);
            }
        }
        rec.key_len = (size_t) snprintf(key, sizeof(key), "k%ld", i % 97);
        rec.value_len = (size_t) snprintf(value, sizeof(value), "%ld", i);
        rec.key = key;
        rec.value = value;
        err = samsa_producer_send(p, &rec, on_delivery, (void *) (intptr_t) i,
                                  NULL);
        if (err != SAMSA_ERR_NONE) {
            break;
        }
    }
    return finish(p, i, err);
}

static int
unhex(int c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* One byte field of a `file` line: NULL for "-"; else a malloc'd buffer
 * (at least 1 byte) and *lenp.  Exits on a malformed field. */
static char *
field(char **cursor, size_t *lenp)
{
    char    *tok = strtok_r(NULL, " \t\n", cursor);
    char    *out;
    size_t   n, i;
    int      hi, lo;

    if (tok == NULL) {
        fprintf(stderr, "producer_probe: short line\n");
        exit(2);
    }
    *lenp = 0;
    if (strcmp(tok, "-") == 0) {
        return NULL;
    }
    if (strcmp(tok, ".") == 0) {
        return calloc(1, 1);
    }
    n = strlen(tok);
    out = malloc(n / 2 + 1);
    if (n % 2 != 0 || out == NULL) {
        fprintf(stderr, "producer_probe: bad hex %s\n", tok);
        exit(2);
    }
    for (i = 0; i + 1 < n; i += 2) {
        hi = unhex(tok[i]);
        lo = unhex(tok[i + 1]);
        if (hi < 0 || lo < 0) {
            fprintf(stderr, "producer_probe: bad hex %s\n", tok);
            exit(2);
        }
        out[i / 2] = (char) (hi << 4 | lo);
    }
    *lenp = n / 2;
    return out;
}

static int
probe_file(const char *bootstrap, const char *topic, const char *path,
           int argc, char **argv)
{
    samsa_producer_t  *p;
    samsa_record_t     rec;
    samsa_header_t     hdrs[16];
    samsa_err_t        err = SAMSA_ERR_NONE;
    FILE              *in = fopen(path, "r");
    char              *line = NULL, *cur, *tok, *key, *value;
    size_t             cap = 0, nh, i;
    long               sent = 0;

    if (in == NULL) {
        fprintf(stderr, "producer_probe: %s: %s\n", path, strerror(errno));
        return 2;
    }
    p = make(bootstrap, argc, argv, NULL);
    while (err == SAMSA_ERR_NONE && getline(&line, &cap, in) > 0) {
        memset(&rec, 0, sizeof(rec));
        rec.topic = topic;
        tok = strtok_r(line, " \t\n", &cur);
        if (tok == NULL) {
            continue;
        }
        rec.partition = atoi(tok);
        tok = strtok_r(NULL, " \t\n", &cur);
        rec.timestamp = tok != NULL ? atoll(tok) : SAMSA_TIMESTAMP_NOW;
        key = field(&cur, &rec.key_len);
        value = field(&cur, &rec.value_len);
        rec.key = key;
        rec.value = value;
        for (nh = 0; nh < 16 && *cur != '\0' && *cur != '\n'; nh++) {
            size_t  kl;

            hdrs[nh].key = field(&cur, &kl);
            hdrs[nh].key_len = kl;
            hdrs[nh].value = field(&cur, &hdrs[nh].value_len);
        }
        rec.headers = nh > 0 ? hdrs : NULL;
        rec.nheaders = nh;
        err = samsa_producer_send(p, &rec, on_delivery,
                                  (void *) (intptr_t) sent, NULL);
        if (err == SAMSA_ERR_NONE) {
            sent++;
        }
        free(key);
        free(value);
        for (i = 0; i < nh; i++) {
            free((void *) hdrs[i].key);
            free((void *) hdrs[i].value);
        }
    }
    free(line);
    fclose(in);
    return finish(p, sent, err);
}

static int
probe_pool(const char *bootstrap, const char *topic, int argc, char **argv)
{
    static const char *const  extra[] = { "buffer.memory=65536",
                                          "batch.size=16384",
                                          "max.block.ms=100",
                                          "linger.ms=0", NULL };
    samsa_producer_t  *p = make(bootstrap, argc, argv, extra);
    samsa_record_t     rec;
    samsa_err_t        err = SAMSA_ERR_NONE;
    static char        value[1000];
    long               t0 = 0, i;

    memset(&rec, 0, sizeof(rec));
    rec.topic = topic;
    rec.partition = 0;
    rec.value = value;
    rec.value_len = sizeof(value);
    rec.timestamp = SAMSA_TIMESTAMP_NOW;
    for (i = 0; i < 100000 && err == SAMSA_ERR_NONE; i++) {
        t0 = now_ms();
        err = samsa_producer_send(p, &rec, on_delivery, NULL, NULL);
    }
    printf("{\"err\": \"%s\", \"blocked_ms\": %ld, \"sent\": %ld}\n",
           samsa_err_name(err), now_ms() - t0, i - 1);
    fflush(stdout);
    (void) samsa_producer_close(p, 0);
    return 0;
}

static int
probe_future(const char *bootstrap, const char *topic, int argc, char **argv)
{
    samsa_producer_t        *p = make(bootstrap, argc, argv, NULL);
    samsa_header_t           h = { "h1", 2, "hv", 2 };
    samsa_record_t           rec;
    samsa_future_t          *fut = NULL;
    samsa_record_md_t        md;
    samsa_partition_info_t  *parts = NULL;
    samsa_err_t              err;
    int32_t                  nparts = 0;

    memset(&rec, 0, sizeof(rec));
    rec.topic = topic;
    rec.partition = 1;
    rec.key = "key";
    rec.key_len = 3;
    rec.value = "value";
    rec.value_len = 5;
    rec.headers = &h;
    rec.nheaders = 1;
    rec.timestamp = 1700000000123LL;
    err = samsa_producer_partitions_for(p, topic, &parts, &nparts);
    if (err == SAMSA_ERR_NONE) {
        err = samsa_producer_send(p, &rec, NULL, NULL, &fut);
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_future_wait(fut, 10000, &md);
    }
    printf("{\"err\": \"%s\", \"partitions\": %d, \"partition\": %d, "
           "\"offset\": %lld, \"timestamp\": %lld}\n", samsa_err_name(err),
           nparts, err == SAMSA_ERR_NONE ? md.partition : -1,
           err == SAMSA_ERR_NONE ? (long long) md.offset : -1LL,
           err == SAMSA_ERR_NONE ? (long long) md.timestamp : -1LL);
    samsa_future_free(fut);
    samsa_free_mem(parts);
    (void) samsa_producer_close(p, -1);
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "seq") == 0) {
        return probe_seq(argv[2], argv[3], atol(argv[4]), argc - 5,
                         argv + 5);
    }
    if (argc >= 5 && strcmp(argv[1], "file") == 0) {
        return probe_file(argv[2], argv[3], argv[4], argc - 5, argv + 5);
    }
    if (argc >= 4 && strcmp(argv[1], "pool") == 0) {
        return probe_pool(argv[2], argv[3], argc - 4, argv + 4);
    }
    if (argc >= 4 && strcmp(argv[1], "future") == 0) {
        return probe_future(argv[2], argv[3], argc - 4, argv + 4);
    }
    fprintf(stderr, "usage: producer_probe seq|file|pool|future BOOTSTRAP "
            "TOPIC [N|PATH] [k=v...]\n");
    return 2;
}
