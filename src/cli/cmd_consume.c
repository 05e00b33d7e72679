/*
 * cli/cmd_consume.c - "samsa consume TOPIC": print a topic's records, like
 * kcat -C / kafka-console-consumer, on libsamsa's consumer.  Without
 * --group the partitions are assigned directly (all, or --partition);
 * with --group the consumer subscribes and commits as the group's member.
 * Flags through cli/opts.c, as every samsa command.  Exit codes
 * (SAMSA_EXIT_*): 0 done (end reached with -e, -n records, or
 * interrupted), 1 a consume error or no such topic or partition, 2 usage
 * or configuration error, 3 no answer from the cluster within
 * --connect-timeout.
 * Threads: main (the consumer runs its own background thread; SIGINT /
 * SIGTERM only set a flag the loop checks).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <samsa/consumer.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "util/diag.h"

#define CONSUME_TIMEOUT_MS  10000      /* --timeout's default */

typedef struct consume_opts {
    const char   *topic;
    const char   *group;
    int32_t      *parts;
    int32_t       nparts;
    bool          from_beginning;
    int64_t       offset;           /* -1: none */
    int64_t       from_time;        /* -1: none */
    int64_t       count;            /* -1: no limit */
    const char   *format;
    bool          exit_at_end;
    bool          json;
    int64_t       timeout_ms;
    int64_t       connect_timeout_ms;   /* the first Metadata answer */
} consume_opts_t;

/* Set by SIGINT/SIGTERM; the loop polls at most 200 ms at a time and
 * checks it (a signal handler may not take the consumer's locks). */
static volatile sig_atomic_t  consume_stop;

static void
consume_on_signal(int sig)
{
    (void) sig;
    consume_stop = 1;
}

/* The flags of samsa consume (cli/opts.c adds the common ones). */
static const samsa_opt_t  consume_flags[] = {
    { "--group", 'g', SAMSA_OPT_VALUE, "GROUP",
      "consume as a member of GROUP (commits)" },
    { "--partition", 'p', SAMSA_OPT_VALUE, "P[,P..]",
      "only these partitions (no group)" },
    { "--from-beginning", 0, SAMSA_OPT_FLAG, NULL,
      "start at the earliest offset" },
    { "--offset", 'o', SAMSA_OPT_VALUE, "N", "start at offset N (no group)" },
    { "--from-time", 0, SAMSA_OPT_VALUE, "T",
      "start at the first record at or after T: ms since the epoch, or "
      "YYYY-MM-DDTHH:MM[:SS[.mmm]][Z|+HH:MM] (no zone: UTC)" },
    { "--count", 'n', SAMSA_OPT_VALUE, "N", "exit after N records" },
    { "--exit-at-end", 'e', SAMSA_OPT_FLAG, NULL,
      "exit once every partition is read to its end" },
    { "--format", 'f', SAMSA_OPT_VALUE, "FMT",
      "kcat-style: %t topic, %p partition, %o offset, %k key, %s value, "
      "%h headers, %T timestamp, %% a %, \\n \\t (default \"%s\\n\")" },
    { "--property", 'X', SAMSA_OPT_MULTI, "K=V",
      "consumer property (Java names); overrides --command-config" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

#define CONSUME_SYNOPSIS "samsa consume TOPIC [options]"
#define CONSUME_ABOUT \
    "Print a topic's records (libsamsa consumer), like kcat -C.  Without\n" \
    "--group the partitions are assigned directly; with it the consumer\n" \
    "joins GROUP and commits what it printed.  --timeout (10000) bounds\n" \
    "each lookup, --connect-timeout (default: --timeout) the first\n" \
    "answer from the cluster.  Exit 1 also when the topic or partition\n" \
    "does not exist."

/* Print a usage error; returns the exit code (2). */
static int
consume_usage_error(const char *msg)
{
    fprintf(stderr, "samsa consume: %s\nTry 'samsa consume --help'.\n",
            msg);
    return SAMSA_EXIT_USAGE;
}

/* "P[,P..]" into o->parts. */
static bool
consume_parse_parts(const char *s, consume_opts_t *o)
{
    char  *end;
    long   v;

    while (*s != '\0') {
        errno = 0;
        v = strtol(s, &end, 10);
        if (end == s || errno != 0 || v < 0 || v > INT32_MAX
            || (*end != ',' && *end != '\0')) {
            return false;
        }
        o->parts = realloc(o->parts, (size_t) (o->nparts + 1)
                                         * sizeof(int32_t));
        o->parts[o->nparts++] = (int32_t) v;
        s = *end == ',' ? end + 1 : end;
    }
    return o->nparts > 0;
}

/* --from-time: a number of ms since the epoch, or an ISO 8601 time. */
static int
consume_parse_time(const char *text, int64_t *ms, char *err,
                   size_t err_size)
{
    if (text[0] >= '0' && text[0] <= '9' && strchr(text, '-') == NULL) {
        return samsa_opts_parse_i64("--from-time", text, 0, INT64_MAX, ms,
                                    err, err_size);
    }
    return samsa_opts_parse_datetime("--from-time", text, ms, err,
                                     err_size);
}

/* The numbers and the partition list.  0, or -1 with err. */
static int
consume_values(const samsa_opts_t *so, consume_opts_t *o, char *err,
               size_t err_size)
{
    const char  *v;

    if (samsa_opts_i64(so, "--offset", 0, INT64_MAX, -1, &o->offset, err,
                       err_size) != 0
        || samsa_opts_i64(so, "--count", 0, INT64_MAX, -1, &o->count, err,
                          err_size) != 0
        || samsa_opts_i64(so, "--timeout", 0, INT32_MAX, CONSUME_TIMEOUT_MS,
                          &o->timeout_ms, err, err_size) != 0
        || samsa_opts_i64(so, "--connect-timeout", 0, INT32_MAX,
                          o->timeout_ms, &o->connect_timeout_ms, err,
                          err_size) != 0) {
        return -1;
    }
    v = samsa_opts_get(so, "--from-time");
    if (v != NULL && consume_parse_time(v, &o->from_time, err, err_size)
                         != 0) {
        return -1;
    }
    v = samsa_opts_get(so, "--partition");
    if (v != NULL && !consume_parse_parts(v, o)) {
        snprintf(err, err_size, "invalid value '%s' for --partition: "
                 "expected P[,P..]", v);
        return -1;
    }
    return 0;
}

/* The consumer configuration: --command-config, then -b (else the
 * file's bootstrap.servers, else $SAMSA_BOOTSTRAP), then every -X in
 * order.  0, or the exit code (2) after printing why. */
static int
consume_conf(const samsa_opts_t *so, samsa_conf_t *conf)
{
    const char *const  *props;
    char                err[512];
    size_t              n, i;

    if (samsa_opts_client_conf(so, conf, err, sizeof(err)) != 0) {
        if (samsa_conf_get(conf, "bootstrap.servers") == NULL) {
            return consume_usage_error("no bootstrap server: use -b "
                                       "HOST:PORT, bootstrap.servers in "
                                       "--command-config, or set "
                                       "SAMSA_BOOTSTRAP");
        }
        return consume_usage_error(err);
    }
    props = samsa_opts_all(so, "--property", &n);
    for (i = 0; i < n; i++) {
        char         *key;
        const char   *value;
        samsa_err_t   e;

        if (samsa_opts_kv("--property", props[i], &key, &value, err,
                          sizeof(err)) != 0) {
            return consume_usage_error(err);
        }
        e = samsa_conf_set(conf, key, value, err, sizeof(err));
        free(key);
        if (e != SAMSA_ERR_NONE) {
            return consume_usage_error(err);
        }
    }
    return SAMSA_EXIT_OK;
}

/* Parse argv (after "consume") into o and conf.  Returns -1 to go on,
 * else the exit code to return at once (0 after --help, 2 after a usage
 * error, printed). */
static int
consume_parse(int argc, char **argv, consume_opts_t *o, samsa_conf_t *conf)
{
    samsa_opts_t  so;
    char          err[512];
    int           rc = -1;

    memset(o, 0, sizeof(*o));
    o->from_time = -1;
    o->format = "%s\n";
    if (samsa_opts_parse(&so, consume_flags, argc, argv, err, sizeof(err))
        != 0) {
        rc = consume_usage_error(err);
    } else if (samsa_opts_has(&so, "--help")) {
        samsa_opts_usage(stdout, CONSUME_SYNOPSIS, CONSUME_ABOUT,
                         consume_flags, true);
        rc = SAMSA_EXIT_OK;
    } else if (so.npos == 0) {
        rc = consume_usage_error("no topic given");
    } else if (so.npos > 1) {
        snprintf(err, sizeof(err), "unexpected argument '%s'", so.pos[1]);
        rc = consume_usage_error(err);
    } else if (consume_values(&so, o, err, sizeof(err)) != 0) {
        rc = consume_usage_error(err);
    }
    if (rc >= 0) {
        samsa_opts_fini(&so);
        return rc;
    }
    /* values borrow argv: they outlive so */
    o->topic = so.pos[0];
    o->group = samsa_opts_get(&so, "--group");
    o->from_beginning = samsa_opts_has(&so, "--from-beginning");
    o->exit_at_end = samsa_opts_has(&so, "--exit-at-end");
    o->json = samsa_opts_has(&so, "--json");
    if (samsa_opts_get(&so, "--format") != NULL) {
        o->format = samsa_opts_get(&so, "--format");
    }
    if (samsa_opts_has(&so, "--verbose")) {
        samsa_diag_set_level(SAMSA_DIAG_INFO);
    }
    if (o->group != NULL && (o->nparts > 0 || o->offset >= 0)) {
        rc = consume_usage_error("--group cannot be combined with "
                                 "--partition or --offset");
    } else if ((o->from_beginning ? 1 : 0) + (o->offset >= 0 ? 1 : 0)
                   + (o->from_time >= 0 ? 1 : 0) > 1) {
        rc = consume_usage_error("use only one of --from-beginning, "
                                 "--offset, --from-time");
    } else if (consume_conf(&so, conf) != SAMSA_EXIT_OK) {
        rc = SAMSA_EXIT_USAGE;
    }
    samsa_opts_fini(&so);
    return rc;
}

/* ---- output ------------------------------------------------------------- */

static void
consume_json_str(FILE *out, const unsigned char *p, size_t len)
{
    size_t  i, k, n;

    fputc('"', out);
    for (i = 0; i < len; i++) {
        unsigned char  c = p[i];

        if (c == '"' || c == '\\') {
            fprintf(out, "\\%c", c);
        } else if (c < 0x20) {
            fprintf(out, "\\u%04x", c);
        } else if (c < 0x80) {
            fputc(c, out);
        } else {
            /* a valid UTF-8 sequence passes; a stray byte is \u00XX */
            n = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
                : (c & 0xf8) == 0xf0 ? 4 : 0;
            for (k = 1; n > 0 && k < n; k++) {
                if (i + k >= len || (p[i + k] & 0xc0) != 0x80) {
                    n = 0;
                }
            }
            if (n == 0) {
                fprintf(out, "\\u%04x", c);
            } else {
                fwrite(p + i, 1, n, out);
                i += n - 1;
            }
        }
    }
    fputc('"', out);
}

static void
consume_json_bytes(FILE *out, const void *p, size_t len)
{
    if (p == NULL) {
        fputs("null", out);
    } else {
        consume_json_str(out, p, len);
    }
}

static void
consume_print_json(FILE *out, const samsa_consumer_record_t *r)
{
    size_t  i;

    fputs("{\"topic\": ", out);
    consume_json_str(out, (const unsigned char *) r->topic,
                     strlen(r->topic));
    fprintf(out, ", \"partition\": %d, \"offset\": %lld, \"timestamp\": "
            "%lld, \"timestamp_type\": \"%s\", \"key\": ", r->partition,
            (long long) r->offset, (long long) r->timestamp,
            r->timestamp_type == SAMSA_TIMESTAMP_LOG_APPEND_TIME
                ? "LogAppendTime" : "CreateTime");
    consume_json_bytes(out, r->key, r->key_len);
    fputs(", \"value\": ", out);
    consume_json_bytes(out, r->value, r->value_len);
    fputs(", \"headers\": [", out);
    for (i = 0; i < r->nheaders; i++) {
        fputs(i ? ", [" : "[", out);
        consume_json_str(out, (const unsigned char *) r->headers[i].key,
                         r->headers[i].key_len);
        fputs(", ", out);
        consume_json_bytes(out, r->headers[i].value,
                           r->headers[i].value_len);
        fputc(']', out);
    }
    fputs("]}\n", out);
}

static void
consume_print_fmt(FILE *out, const char *fmt, const samsa_consumer_record_t *r)
{
    const char  *p;
    size_t       i;

    for (p = fmt; *p != '\0'; p++) {
        if (*p == '\\' && p[1] != '\0') {
            p++;
            fputc(*p == 'n' ? '\n' : *p == 't' ? '\t' : *p, out);
            continue;
        }
        if (*p != '%' || p[1] == '\0') {
            fputc(*p, out);
            continue;
        }
        switch (*++p) {
        case 't':
            fputs(r->topic, out);
            break;
        case 'p':
            fprintf(out, "%d", r->partition);
            break;
        case 'o':
            fprintf(out, "%lld", (long long) r->offset);
            break;
        case 'T':
            fprintf(out, "%lld", (long long) r->timestamp);
            break;
        case 'k':
            if (r->key != NULL) {
                fwrite(r->key, 1, r->key_len, out);
            }
            break;
        case 's':
            if (r->value != NULL) {
                fwrite(r->value, 1, r->value_len, out);
            }
            break;
        case 'h':
            for (i = 0; i < r->nheaders; i++) {
                fprintf(out, "%s%.*s=", i ? "," : "",
                        (int) r->headers[i].key_len, r->headers[i].key);
                if (r->headers[i].value != NULL) {
                    fwrite(r->headers[i].value, 1, r->headers[i].value_len,
                           out);
                }
            }
            break;
        case '%':
            fputc('%', out);
            break;
        default:
            fputc('%', out);
            fputc(*p, out);
            break;
        }
    }
}

/* ---- run ---------------------------------------------------------------- */

/* Every assigned partition read to its end (lag 0)? */
static bool
consume_at_end(samsa_consumer_t *c)
{
    samsa_topic_partition_t  *tps;
    size_t                    n, i;
    int64_t                   lag;
    bool                      end;

    if (samsa_consumer_assignment(c, &tps, &n) != SAMSA_ERR_NONE) {
        return false;
    }
    end = n > 0;
    for (i = 0; i < n && end; i++) {
        end = samsa_consumer_current_lag(c, tps[i].topic, tps[i].partition,
                                         &lag) == SAMSA_ERR_NONE
              && lag == 0;
    }
    samsa_tp_array_free(tps, n);
    return end;
}

/* assign() the chosen partitions and place them.  Returns an exit code. */
static int
consume_assign(samsa_consumer_t *c, consume_opts_t *o, int32_t nparts)
{
    samsa_topic_partition_t  *tps;
    samsa_err_t               err;
    int32_t                   i, n;

    n = o->nparts > 0 ? o->nparts : nparts;
    tps = calloc((size_t) n + 1, sizeof(*tps));
    for (i = 0; i < n; i++) {
        tps[i].topic = o->topic;
        tps[i].partition = o->nparts > 0 ? o->parts[i] : i;
        if (tps[i].partition >= nparts) {
            fprintf(stderr, "samsa consume: topic '%s' has no partition %d "
                    "(it has %d)\n", o->topic, tps[i].partition, nparts);
            free(tps);
            return SAMSA_EXIT_FAILED;
        }
    }
    err = samsa_consumer_assign(c, tps, (size_t) n);
    for (i = 0; err == SAMSA_ERR_NONE && i < n; i++) {
        if (o->offset >= 0) {
            err = samsa_consumer_seek(c, o->topic, tps[i].partition,
                                      o->offset);
        } else if (o->from_beginning) {
            err = samsa_consumer_seek(c, o->topic, tps[i].partition,
                                      SAMSA_OFFSET_BEGINNING);
        }
    }
    if (err == SAMSA_ERR_NONE && o->from_time >= 0) {
        for (i = 0; i < n; i++) {
            tps[i].timestamp = o->from_time;
        }
        err = samsa_consumer_offsets_for_times(c, tps, (size_t) n,
                                               o->timeout_ms);
        for (i = 0; err == SAMSA_ERR_NONE && i < n; i++) {
            err = samsa_consumer_seek(c, o->topic, tps[i].partition,
                                      tps[i].offset >= 0
                                          ? tps[i].offset
                                          : SAMSA_OFFSET_END);
        }
    }
    free(tps);
    if (err != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa consume: cannot position the partitions: %s "
                "(%s)\n", samsa_err_name(err), samsa_err_text(err));
        return SAMSA_EXIT_FAILED;
    }
    return SAMSA_EXIT_OK;
}

/* With --from-time in a group: seek each partition when it is assigned. */
static void
consume_on_rebalance(samsa_consumer_t *c, samsa_rebalance_event_t ev,
                     const samsa_topic_partition_t *tps, size_t n,
                     void *opaque)
{
    const consume_opts_t     *o = opaque;
    samsa_topic_partition_t  *q;
    size_t                    i;

    if (ev != SAMSA_REBALANCE_ASSIGNED || o->from_time < 0 || n == 0) {
        return;
    }
    q = calloc(n, sizeof(*q));
    for (i = 0; i < n; i++) {
        q[i] = tps[i];
        q[i].timestamp = o->from_time;
    }
    if (samsa_consumer_offsets_for_times(c, q, n, o->timeout_ms)
        == SAMSA_ERR_NONE) {
        for (i = 0; i < n; i++) {
            if (samsa_consumer_seek(c, q[i].topic, q[i].partition,
                                    q[i].offset >= 0 ? q[i].offset
                                                     : SAMSA_OFFSET_END)
                != SAMSA_ERR_NONE) {
                fprintf(stderr, "samsa consume: cannot seek %s [%d]\n",
                        q[i].topic, q[i].partition);
            }
        }
    }
    free(q);
}

/* -n stopped inside a set: put each partition back at its first record
 * not printed, so that the final commit covers only what was printed. */
static void
consume_unread(samsa_consumer_t *c, samsa_consumer_records_t *rs,
               size_t from)
{
    size_t  i, j, n = samsa_consumer_records_count(rs);

    for (i = from; i < n; i++) {
        const samsa_consumer_record_t  *r = samsa_consumer_records_get(rs, i);
        bool                            first = true;

        for (j = from; j < i && first; j++) {
            const samsa_consumer_record_t  *q =
                samsa_consumer_records_get(rs, j);

            first = q->partition != r->partition
                    || strcmp(q->topic, r->topic) != 0;
        }
        if (first) {
            if (samsa_consumer_seek(c, r->topic, r->partition, r->offset)
                != SAMSA_ERR_NONE) {
                continue;               /* no longer assigned */
            }
        }
    }
}

static int
consume_loop(samsa_consumer_t *c, const consume_opts_t *o)
{
    samsa_consumer_records_t  *rs;
    samsa_err_t                err;
    int64_t                    seen = 0;
    size_t                     i;

    for (;;) {
        if (consume_stop || (o->count >= 0 && seen >= o->count)) {
            return SAMSA_EXIT_OK;
        }
        if (o->exit_at_end && consume_at_end(c)) {
            return SAMSA_EXIT_OK;
        }
        err = samsa_consumer_poll(c, 200, &rs);
        if (err == SAMSA_ERR__SHUTDOWN) {
            return SAMSA_EXIT_OK;                 /* interrupted */
        }
        if (err != SAMSA_ERR_NONE) {
            fprintf(stderr, "samsa consume: %s (%s)\n", samsa_err_name(err),
                    samsa_err_text(err));
            return SAMSA_EXIT_FAILED;
        }
        for (i = 0; i < samsa_consumer_records_count(rs); i++) {
            if (o->count >= 0 && seen >= o->count) {
                break;
            }
            if (o->json) {
                consume_print_json(stdout, samsa_consumer_records_get(rs, i));
            } else {
                consume_print_fmt(stdout, o->format,
                                  samsa_consumer_records_get(rs, i));
            }
            seen++;
        }
        consume_unread(c, rs, i);
        samsa_consumer_records_free(rs);
        fflush(stdout);
    }
}

int
samsa_cmd_consume(int argc, char **argv)
{
    samsa_conf_t      *conf = samsa_conf_new();
    samsa_consumer_t  *c = NULL;
    consume_opts_t     o;
    samsa_err_t        err;
    char               errstr[512];
    int32_t            nparts = 0;
    int                rc;

    samsa_diag_set_level(SAMSA_DIAG_WARN);     /* -v: INFO */
    rc = consume_parse(argc - 1, argv + 1, &o, conf);
    if (rc >= 0) {
        samsa_conf_free(conf);
        free(o.parts);
        return rc;
    }
    err = SAMSA_ERR_NONE;
    if (samsa_conf_get(conf, "allow.auto.create.topics") == NULL) {
        err = samsa_conf_set(conf, "allow.auto.create.topics", "false",
                             errstr, sizeof(errstr));
    }
    if (err == SAMSA_ERR_NONE && o.group != NULL) {
        err = samsa_conf_set(conf, "group.id", o.group, errstr,
                             sizeof(errstr));
    }
    if (err == SAMSA_ERR_NONE && o.group != NULL && o.from_beginning) {
        err = samsa_conf_set(conf, "auto.offset.reset", "earliest", errstr,
                             sizeof(errstr));
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_consumer_new(conf, &c, errstr, sizeof(errstr));
    }
    samsa_conf_free(conf);
    if (err != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa consume: %s\n", errstr);
        free(o.parts);
        return SAMSA_EXIT_USAGE;
    }
    err = samsa_consumer_partitions_for(c, o.topic, o.connect_timeout_ms,
                                        &nparts);
    if (err == SAMSA_ERR__TIMED_OUT) {
        fprintf(stderr, "samsa consume: no answer from the cluster within "
                "%lld ms (is the bootstrap server right and up?)\n",
                (long long) o.connect_timeout_ms);
        rc = SAMSA_EXIT_UNREACHABLE;
    } else if (err == SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION) {
        fprintf(stderr, "samsa consume: topic '%s' does not exist\n",
                o.topic);
        rc = SAMSA_EXIT_FAILED;
    } else if (err != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa consume: topic '%s': %s (%s)\n", o.topic,
                samsa_err_name(err), samsa_err_text(err));
        rc = SAMSA_EXIT_FAILED;
    } else if (o.group != NULL) {
        const char  *topics[1] = { o.topic };

        samsa_consumer_set_rebalance_cb(c, consume_on_rebalance, &o);
        err = samsa_consumer_subscribe(c, topics, 1);
        rc = err == SAMSA_ERR_NONE ? SAMSA_EXIT_OK : SAMSA_EXIT_USAGE;
    } else {
        rc = consume_assign(c, &o, nparts);
    }
    if (rc == SAMSA_EXIT_OK) {
        signal(SIGINT, consume_on_signal);
        signal(SIGTERM, consume_on_signal);
        rc = consume_loop(c, &o);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
    }
    (void) samsa_consumer_close(c, 10000);
    free(o.parts);
    return rc;
}
