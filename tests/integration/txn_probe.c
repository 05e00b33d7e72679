/*
 * tests/integration/txn_probe.c - drives libsamsa's transactional
 * producer API for tests/integration/test_producer_txn.py:
 *
 *   txn_probe BOOTSTRAP TXN_ID [k=v...] -- STEP...
 *
 * runs the steps in order and prints one JSON line per step,
 * {"step": STEP, "err": ERRNAME, "ms": MS}, then a last line
 * {"delivered": N, "failed": N, "errors": {ERRNAME: N...}, "close_err"}.
 * Steps:
 *   init | begin | commit | abort | flush    the producer calls (timeout 20 s)
 *   send:TOPIC:PARTITION:VALUE                one record (key null)
 *   sendbig:TOPIC:PARTITION:SIZE              one record of SIZE bytes 'x'
 *   offsets:GROUP:TOPIC:PARTITION:OFFSET      send_offsets_to_transaction
 *   touch:PATH | wait:PATH                    create PATH / wait (20 s) for it
 * The probe continues after a failed step: the test reads the errors.
 * Threads: main; delivery callbacks on the sender thread (atomics only).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <samsa/producer.h>

#define STEP_TIMEOUT_MS  20000

static _Atomic long  delivered;
static _Atomic long  failed;
static _Atomic long  errcount[4096];    /* by -err or err, see err_slot */

static int
err_slot(samsa_err_t err)
{
    int  e = (int) err;

    return e < 0 ? 2048 + (-e % 2048) : e % 2048;
}

static void
on_delivery(const samsa_record_md_t *md, samsa_err_t err, void *opaque)
{
    (void) md;
    (void) opaque;
    if (err == SAMSA_ERR_NONE) {
        atomic_fetch_add(&delivered, 1);
    } else {
        atomic_fetch_add(&failed, 1);
        atomic_fetch_add(&errcount[err_slot(err)], 1);
    }
}

static long long
now_ms(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Split s at ':' into at most n fields (s is modified). */
static int
split(char *s, char **f, int n)
{
    int  i = 0;

    while (i < n) {
        f[i++] = s;
        s = strchr(s, ':');
        if (s == NULL) {
            break;
        }
        *s++ = '\0';
    }
    return i;
}

static samsa_err_t
step(samsa_producer_t *p, char *st)
{
    char                *f[6] = { NULL };
    int                  n = split(st, f, 6);
    samsa_record_t       rec;
    samsa_txn_offset_t   off;
    samsa_txn_group_t    grp;
    long long            t0;

    if (strcmp(f[0], "init") == 0) {
        return samsa_producer_init_transactions(p, STEP_TIMEOUT_MS);
    }
    if (strcmp(f[0], "begin") == 0) {
        return samsa_producer_begin_transaction(p);
    }
    if (strcmp(f[0], "commit") == 0) {
        return samsa_producer_commit_transaction(p, STEP_TIMEOUT_MS);
    }
    if (strcmp(f[0], "abort") == 0) {
        return samsa_producer_abort_transaction(p, STEP_TIMEOUT_MS);
    }
    if (strcmp(f[0], "flush") == 0) {
        return samsa_producer_flush(p, STEP_TIMEOUT_MS);
    }
    if (strcmp(f[0], "send") == 0 && n == 4) {
        memset(&rec, 0, sizeof(rec));
        rec.topic = f[1];
        rec.partition = atoi(f[2]);
        rec.value = f[3];
        rec.value_len = strlen(f[3]);
        rec.timestamp = SAMSA_TIMESTAMP_NOW;
        return samsa_producer_send(p, &rec, on_delivery, NULL, NULL);
    }
    if (strcmp(f[0], "sendbig") == 0 && n == 4) {
        static char  big[1 << 20];
        size_t       size = (size_t) atol(f[3]);

        if (size > sizeof(big)) {
            return SAMSA_ERR__INVALID_ARG;
        }
        memset(big, 'x', size);
        memset(&rec, 0, sizeof(rec));
        rec.topic = f[1];
        rec.partition = atoi(f[2]);
        rec.value = big;
        rec.value_len = size;
        rec.timestamp = SAMSA_TIMESTAMP_NOW;
        return samsa_producer_send(p, &rec, on_delivery, NULL, NULL);
    }
    if (strcmp(f[0], "offsets") == 0 && n == 5) {
        off = (samsa_txn_offset_t) { f[2], atoi(f[3]), atoll(f[4]), NULL };
        grp = (samsa_txn_group_t) { f[1], -1, NULL, NULL };
        return samsa_producer_send_offsets_to_transaction(p, &off, 1, &grp,
                                                          STEP_TIMEOUT_MS);
    }
    if (strcmp(f[0], "touch") == 0 && n == 2) {
        FILE  *fp = fopen(f[1], "w");

        if (fp == NULL) {
            return SAMSA_ERR__IO;
        }
        fclose(fp);
        return SAMSA_ERR_NONE;
    }
    if (strcmp(f[0], "wait") == 0 && n == 2) {
        t0 = now_ms();
        while (access(f[1], F_OK) != 0) {
            if (now_ms() - t0 > STEP_TIMEOUT_MS) {
                return SAMSA_ERR__TIMED_OUT;
            }
            usleep(20000);
        }
        return SAMSA_ERR_NONE;
    }
    return SAMSA_ERR__INVALID_ARG;
}

int
main(int argc, char **argv)
{
    samsa_conf_t      *conf;
    samsa_producer_t  *p;
    samsa_err_t        err, cerr;
    char               errstr[512];
    char               copy[1024];
    long long          t0;
    int                i, first = 1;
    bool               steps = false;

    if (argc < 4) {
        fprintf(stderr, "usage: txn_probe BOOTSTRAP TXN_ID [k=v...] -- "
                "STEP...\n");
        return 2;
    }
    conf = samsa_conf_new();
    if (samsa_conf_set(conf, "bootstrap.servers", argv[1], errstr,
                       sizeof(errstr)) != SAMSA_ERR_NONE
        || samsa_conf_set(conf, "transactional.id", argv[2], errstr,
                          sizeof(errstr)) != SAMSA_ERR_NONE) {
        fprintf(stderr, "%s\n", errstr);
        return 2;
    }
    for (i = 3; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (samsa_conf_set_kv(conf, argv[i], errstr, sizeof(errstr))
            != SAMSA_ERR_NONE) {
            fprintf(stderr, "%s\n", errstr);
            return 2;
        }
    }
    err = samsa_producer_new(conf, &p, errstr, sizeof(errstr));
    samsa_conf_free(conf);
    if (err != SAMSA_ERR_NONE) {
        printf("{\"step\": \"new\", \"err\": \"%s\", \"errstr\": \"%s\"}\n",
               samsa_err_name(err), errstr);
        return 0;
    }
    for (i++; i < argc; i++) {
        steps = true;
        snprintf(copy, sizeof(copy), "%s", argv[i]);
        t0 = now_ms();
        err = step(p, copy);
        printf("{\"step\": \"%s\", \"err\": \"%s\", \"ms\": %lld}\n", argv[i],
               samsa_err_name(err), now_ms() - t0);
        fflush(stdout);
    }
    cerr = samsa_producer_close(p, 10000);
    printf("{\"delivered\": %ld, \"failed\": %ld, \"close_err\": \"%s\", "
           "\"steps\": %s, \"errors\": {", atomic_load(&delivered),
           atomic_load(&failed), samsa_err_name(cerr),
           steps ? "true" : "false");
    for (i = 0; i < 4096; i++) {
        long  c = atomic_load(&errcount[i]);

        if (c > 0) {
            printf("%s\"%s\": %ld", first ? "" : ", ",
                   samsa_err_name((samsa_err_t) (i >= 2048 ? -(i - 2048)
                                                           : i)), c);
            first = 0;
        }
    }
    printf("}}\n");
    return 0;
}
