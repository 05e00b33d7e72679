/*
 * tests/integration/producer_probe.c - drives libsamsa's producer through
 * its public API for tests/integration/test_producer.py:
 *
 *   producer_probe seq BOOTSTRAP TOPIC N [k=v...]
 *       send N records, value "<i>", key "k<i % 97>", close(-1); print one
 *       JSON line {"sent", "delivered", "errors", "close_err", "first_err"}
 *   producer_probe pool BOOTSTRAP TOPIC [k=v...]
 *       fill the buffer pool while the broker does not answer; print the
 *       JSON line {"err", "blocked_ms"} of the first send that fails
 *   producer_probe future BOOTSTRAP TOPIC [k=v...]
 *       one send with headers and a future; print its metadata
 * Threads: main; callbacks on the producer's sender thread.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <samsa/producer.h>

static _Atomic long    delivered;
static _Atomic long    failed;
static _Atomic int     first_err;

static void
on_delivery(const samsa_record_md_t *md, samsa_err_t err, void *opaque)
{
    (void) md;
    (void) opaque;
    if (err == SAMSA_ERR_NONE) {
        atomic_fetch_add(&delivered, 1);
    } else {
        int  none = 0;

        atomic_compare_exchange_strong(&first_err, &none, (int) err);
        atomic_fetch_add(&failed, 1);
    }
}

static long
now_ms(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
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
        if (samsa_conf_set_kv(conf, argv[i], err, sizeof(err))
            != SAMSA_ERR_NONE) {
            goto fail;
        }
    }
    if (samsa_producer_new(conf, &p, err, sizeof(err)) != SAMSA_ERR_NONE) {
        goto fail;
    }
    samsa_conf_free(conf);
    return p;
fail:
    fprintf(stderr, "producer_probe: %s\n", err);
    exit(2);
}

static int
probe_seq(const char *bootstrap, const char *topic, long n, int argc,
          char **argv)
{
    samsa_producer_t  *p = make(bootstrap, argc, argv, NULL);
    samsa_record_t     rec;
    samsa_err_t        err = SAMSA_ERR_NONE, cerr;
    char               key[32], value[32];
    long               i;

    memset(&rec, 0, sizeof(rec));
    rec.topic = topic;
    rec.partition = SAMSA_PARTITION_ANY;
    rec.timestamp = SAMSA_TIMESTAMP_NOW;
    for (i = 0; i < n; i++) {
        rec.key_len = (size_t) snprintf(key, sizeof(key), "k%ld", i % 97);
        rec.value_len = (size_t) snprintf(value, sizeof(value), "%ld", i);
        rec.key = key;
        rec.value = value;
        err = samsa_producer_send(p, &rec, on_delivery, NULL, NULL);
        if (err != SAMSA_ERR_NONE) {
            break;
        }
    }
    cerr = samsa_producer_close(p, -1);
    printf("{\"sent\": %ld, \"delivered\": %ld, \"errors\": %ld, "
           "\"send_err\": \"%s\", \"close_err\": \"%s\", "
           "\"first_err\": \"%s\"}\n", i, atomic_load(&delivered),
           atomic_load(&failed), samsa_err_name(err), samsa_err_name(cerr),
           samsa_err_name((samsa_err_t) atomic_load(&first_err)));
    return 0;
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
    if (argc >= 4 && strcmp(argv[1], "pool") == 0) {
        return probe_pool(argv[2], argv[3], argc - 4, argv + 4);
    }
    if (argc >= 4 && strcmp(argv[1], "future") == 0) {
        return probe_future(argv[2], argv[3], argc - 4, argv + 4);
    }
    fprintf(stderr, "usage: producer_probe seq|pool|future BOOTSTRAP TOPIC "
            "[N] [k=v...]\n");
    return 2;
}
