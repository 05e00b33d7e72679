/*
 * cli/cmd_produce.c - "samsa produce TOPIC": one record per input line
 * (stdin or --file), like kafka-console-producer, on libsamsa's producer
 * (samsa/producer.h).  --key-separator splits each line into key and
 * value at the separator's first occurrence; --header adds the same
 * headers to every record.  The cluster is reached through the admin
 * client first, so that an unreachable broker exits 3 within
 * --connect-timeout.
 * Threads: main reads and sends; the producer's sender thread runs the
 * delivery callbacks, which only count (atomics).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <samsa/admin.h>
#include <samsa/producer.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "cli/session.h"

static const samsa_opt_t  produce_opts[] = {
    { "--file", 'f', SAMSA_OPT_VALUE, "FILE",
      "read lines from FILE instead of stdin" },
    { "--key-separator", 'K', SAMSA_OPT_VALUE, "SEP",
      "each line is KEY SEP VALUE (a line without SEP is an error)" },
    { "--header", 'H', SAMSA_OPT_MULTI, "KEY=VALUE",
      "a header on every record" },
    { "--partition", 'p', SAMSA_OPT_VALUE, "P",
      "send to this partition (default: the partitioner's choice)" },
    { "--acks", 0, SAMSA_OPT_VALUE, "all|1|0",
      "acknowledgements to wait for (default all)" },
    { "--compression", 'z', SAMSA_OPT_VALUE, "CODEC",
      "none, gzip, snappy, lz4 or zstd (default none)" },
    { "--producer-property", 'X', SAMSA_OPT_MULTI, "KEY=VALUE",
      "any producer property (Java names)" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

/* Counted by the sender thread, read by main after close. */
typedef struct produce_stats {
    _Atomic int64_t  delivered;
    _Atomic int64_t  failed;
    _Atomic int      first_err;
} produce_stats_t;

/* @thread sender */
static void
produce_on_delivery(const samsa_record_md_t *md, samsa_err_t err,
                    void *opaque)
{
    produce_stats_t  *st = opaque;
    int               none = SAMSA_ERR_NONE;

    (void) md;
    if (err == SAMSA_ERR_NONE) {
        atomic_fetch_add_explicit(&st->delivered, 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&st->failed, 1, memory_order_relaxed);
    atomic_compare_exchange_strong(&st->first_err, &none, (int) err);
}

/* Producer settings from the flags on top of --command-config; the
 * console producer's defaults where the flags are absent. */
static int
produce_conf(samsa_session_t *s)
{
    const char *const  *props;
    const char         *v;
    char                err[512];
    size_t              n, i;
    samsa_err_t         e = SAMSA_ERR_NONE;

    props = samsa_opts_all(&s->opts, "--producer-property", &n);
    for (i = 0; i < n && e == SAMSA_ERR_NONE; i++) {
        e = samsa_conf_set_kv(s->conf, props[i], err, sizeof(err));
    }
    if (e == SAMSA_ERR_NONE && (v = samsa_opts_get(&s->opts, "--acks"))
                                   != NULL) {
        e = samsa_conf_set(s->conf, "acks", v, err, sizeof(err));
    }
    if (e == SAMSA_ERR_NONE
        && (v = samsa_opts_get(&s->opts, "--compression")) != NULL) {
        e = samsa_conf_set(s->conf, "compression.type", v, err, sizeof(err));
    }
    /* As the Java producer: idempotence is on by default, and turned off
     * (not refused) when the acks asked for cannot go with it and
     * enable.idempotence was not set. */
    v = samsa_opts_get(&s->opts, "--acks");
    if (e == SAMSA_ERR_NONE && v != NULL && strcmp(v, "all") != 0
        && strcmp(v, "-1") != 0
        && samsa_conf_get(s->conf, "enable.idempotence") == NULL) {
        e = samsa_conf_set(s->conf, "enable.idempotence", "false", err,
                           sizeof(err));
    }
    if (e == SAMSA_ERR_NONE && samsa_conf_get(s->conf, "max.block.ms")
                                   == NULL) {
        char  t[32];

        snprintf(t, sizeof(t), "%lld", (long long) s->timeout_ms);
        e = samsa_conf_set(s->conf, "max.block.ms", t, err, sizeof(err));
    }
    if (e != SAMSA_ERR_NONE) {
        return samsa_session_usage(s, "%s", err);
    }
    return SAMSA_EXIT_OK;
}

/* --header k=v as record headers (keys copied, values point into argv). */
static int
produce_headers(samsa_session_t *s, samsa_header_t **hp, size_t *np)
{
    const char *const  *hs = samsa_opts_all(&s->opts, "--header", np);
    samsa_header_t     *h = calloc(*np + 1, sizeof(*h));
    const char         *v;
    char               *k, err[256];
    size_t              i;

    *hp = h;
    for (i = 0; i < *np; i++) {
        if (samsa_opts_kv("--header", hs[i], &k, &v, err, sizeof(err))
            != 0) {
            *np = i;
            return samsa_session_usage(s, "%s", err);
        }
        h[i].key = k;
        h[i].key_len = strlen(k);
        h[i].value = v;
        h[i].value_len = strlen(v);
    }
    return SAMSA_EXIT_OK;
}

/* Send each line of in; returns the exit code.  *nsent counts records
 * accepted by send(). */
static int
produce_lines(samsa_session_t *s, samsa_producer_t *prod, FILE *in,
              samsa_record_t *rec, produce_stats_t *st, int64_t *nsent)
{
    const char  *sep = samsa_opts_get(&s->opts, "--key-separator");
    char        *line = NULL, *cut;
    size_t       cap = 0;
    ssize_t      len;
    int64_t      lineno = 0;
    samsa_err_t  e;

    if (sep != NULL && sep[0] == '\0') {
        return samsa_session_usage(s, "--key-separator must not be empty");
    }
    while ((len = getline(&line, &cap, in)) >= 0) {
        lineno++;
        if (len > 0 && line[len - 1] == '\n') {
            line[--len] = '\0';
        }
        rec->key = NULL;
        rec->key_len = 0;
        rec->value = line;
        rec->value_len = (size_t) len;
        if (sep != NULL) {
            cut = strstr(line, sep);
            if (cut == NULL) {
                fprintf(stderr, "%s: line %lld has no key separator '%s'\n",
                        s->cmd, (long long) lineno, sep);
                free(line);
                return SAMSA_EXIT_FAILED;
            }
            rec->key = line;
            rec->key_len = (size_t) (cut - line);
            rec->value = cut + strlen(sep);
            rec->value_len = (size_t) (len - (cut - line))
                             - strlen(sep);
        }
        e = samsa_producer_send(prod, rec, produce_on_delivery, st, NULL);
        if (e != SAMSA_ERR_NONE) {
            free(line);
            return samsa_session_fail(s, e, "line %lld not sent",
                                      (long long) lineno);
        }
        (*nsent)++;
    }
    free(line);
    return SAMSA_EXIT_OK;
}

static void
produce_report(samsa_session_t *s, const char *topic, produce_stats_t *st)
{
    int64_t       ok = atomic_load(&st->delivered);
    int64_t       bad = atomic_load(&st->failed);
    samsa_err_t   first = (samsa_err_t) atomic_load(&st->first_err);
    samsa_json_t  j;

    if (bad > 0) {
        fprintf(stderr, "%s: %lld record(s) failed, first: %s: %s\n",
                s->cmd, (long long) bad, samsa_err_name(first),
                samsa_err_text(first));
    }
    if (!s->json) {
        printf("Produced %lld record(s) to '%s'.\n", (long long) ok, topic);
        return;
    }
    samsa_json_init(&j, stdout);
    samsa_json_obj(&j);
    samsa_json_kv_str(&j, "topic", topic);
    samsa_json_kv_int(&j, "records", ok);
    samsa_json_kv_int(&j, "failed", bad);
    samsa_json_kv_str(&j, "first_error",
                      bad > 0 ? samsa_err_name(first) : NULL);
    samsa_json_obj_end(&j);
    samsa_json_end(&j);
}

/* The producer waits up to max.block.ms for a partition to appear (as
 * Java's); a partition beyond an existing topic's count fails at once
 * here instead. */
static int
produce_check_partition(samsa_session_t *s, const char *topic,
                        int32_t partition)
{
    samsa_topic_descs_t  *td = NULL;
    samsa_err_t           e;
    int                   rc = SAMSA_EXIT_OK;

    e = samsa_admin_describe_topics(s->admin, &topic, 1, s->timeout_ms, &td);
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(s, e, "topic '%s'", topic);
    } else if (td->n == 1 && td->topics[0].err == SAMSA_ERR_NONE
               && (size_t) partition >= td->topics[0].npartitions) {
        rc = samsa_session_fail(s, SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION,
                                "topic '%s' has %zu partition(s), no "
                                "partition %d", topic,
                                td->topics[0].npartitions, partition);
    }
    samsa_admin_result_free(td);
    return rc;
}

int
samsa_cmd_produce(int argc, char **argv)
{
    samsa_session_t    s;
    samsa_producer_t  *prod = NULL;
    samsa_header_t    *hdrs = NULL;
    samsa_record_t     rec;
    produce_stats_t    st;
    const char        *file;
    FILE              *in = stdin;
    char               err[512];
    size_t             nhdrs = 0, i;
    int64_t            part, nsent = 0;
    samsa_err_t        e;
    int                rc;

    rc = samsa_session_parse(&s, "samsa produce",
                             "samsa produce TOPIC [options] < lines",
                             "Send one record per input line "
                             "(libsamsa producer).",
                             produce_opts, argc - 1, argv + 1, 1, 1);
    if (rc >= 0) {
        samsa_session_close(&s);
        return rc;
    }
    memset(&st, 0, sizeof(st));
    memset(&rec, 0, sizeof(rec));
    rc = produce_headers(&s, &hdrs, &nhdrs);
    if (rc == SAMSA_EXIT_OK
        && samsa_opts_i64(&s.opts, "--partition", 0, INT32_MAX,
                          SAMSA_PARTITION_ANY, &part, err, sizeof(err))
               != 0) {
        rc = samsa_session_usage(&s, "%s", err);
    }
    if (rc != SAMSA_EXIT_OK || (rc = samsa_session_connect(&s))
                               != SAMSA_EXIT_OK
        || (rc = produce_conf(&s)) != SAMSA_EXIT_OK) {
        goto out;
    }
    if (part >= 0 && (rc = produce_check_partition(&s, s.opts.pos[0],
                                                   (int32_t) part))
                         != SAMSA_EXIT_OK) {
        goto out;
    }
    file = samsa_opts_get(&s.opts, "--file");
    if (file != NULL && (in = fopen(file, "r")) == NULL) {
        rc = samsa_session_usage(&s, "--file: cannot open '%s': %s", file,
                                 strerror(errno));
        in = stdin;
        goto out;
    }
    e = samsa_producer_new(s.conf, &prod, err, sizeof(err));
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_usage(&s, "%s", err);
        goto out;
    }
    rec.topic = s.opts.pos[0];
    rec.partition = (int32_t) part;
    rec.headers = hdrs;
    rec.nheaders = nhdrs;
    rec.timestamp = SAMSA_TIMESTAMP_NOW;
    rc = produce_lines(&s, prod, in, &rec, &st, &nsent);
    e = samsa_producer_close(prod, -1);      /* deliver what was accepted */
    produce_report(&s, rec.topic, &st);
    if (rc == SAMSA_EXIT_OK && (e != SAMSA_ERR_NONE
                                || atomic_load(&st.failed) > 0)) {
        rc = SAMSA_EXIT_FAILED;
    }
out:
    if (in != stdin) {
        fclose(in);
    }
    for (i = 0; i < nhdrs; i++) {
        free((char *) hdrs[i].key);
    }
    free(hdrs);
    samsa_session_close(&s);
    return rc;
}
