/*
 * cli/cmd_consume.c - "samsa consume TOPIC": print a topic's records, like
 * kcat -C / kafka-console-consumer, on libsamsa's consumer.  Without
 * --group the partitions are assigned directly (all, or --partition);
 * with --group the consumer subscribes and commits as the group's member.
 * Exit codes: 0 done (end reached with -e, -n records, or interrupted),
 * 1 the cluster failed us (unreachable within --timeout, a consume
 * error), 2 usage or configuration error, 3 topic or partition not found.
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
#include "util/diag.h"

/* the exit codes of every samsa command (cli/opts.h) */
#define CONSUME_EXIT_OK        0
#define CONSUME_EXIT_CLUSTER   1    /* the operation failed */
#define CONSUME_EXIT_USAGE     2
#define CONSUME_EXIT_NOTFOUND  1    /* no such topic or partition */
#define CONSUME_EXIT_UNREACHABLE 3  /* no answer from the cluster */

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

static void
consume_usage(FILE *out)
{
    fprintf(out,
        "usage: samsa consume TOPIC [options]\n"
        "  -b, --bootstrap-server HOST:PORT  (default: $SAMSA_BOOTSTRAP)\n"
        "  -g, --group GROUP        consume as a member of GROUP (commits)\n"
        "  -p, --partition P[,P..]  only these partitions (no group)\n"
        "      --from-beginning     start at the earliest offset\n"
        "  -o, --offset N           start at offset N (no group)\n"
        "      --from-time T        start at the first record at or after T\n"
        "                           (ms since the epoch, or\n"
        "                           YYYY-MM-DDTHH:MM:SS[.mmm] UTC)\n"
        "  -n, --count N            exit after N records\n"
        "  -e, --exit-at-end        exit once every partition is read to "
        "its end\n"
        "  -f, --format FMT         kcat-style: %%t topic, %%p partition, "
        "%%o offset,\n"
        "                           %%k key, %%s value, %%h headers, %%T "
        "timestamp,\n"
        "                           %%%% a %%, \\n \\t (default \"%%s\\n\")\n"
        "      --json               one JSON object per record\n"
        "  -X, --property K=V       consumer property (Java names)\n"
        "      --command-config F   consumer properties file\n"
        "      --timeout MS         how long to wait for the cluster "
        "(10000)\n"
        "  -v, --verbose            log the client's INFO lines\n"
        "exit status: 0 done, 1 cluster error, 2 usage error, 3 topic or "
        "partition not found\n");
}

/* "2026-11-29T10:00:00[.123]" (UTC) or a number of ms. */
static bool
consume_parse_time(const char *s, int64_t *ms)
{
    struct tm   tm;
    char       *end;
    long long   v;
    int         frac = 0;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (*s != '\0' && *end == '\0' && errno == 0 && v >= 0) {
        *ms = v;
        return true;
    }
    memset(&tm, 0, sizeof(tm));
    end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (end == NULL) {
        end = strptime(s, "%Y-%m-%d %H:%M:%S", &tm);
    }
    if (end == NULL) {
        return false;
    }
    if (*end == '.') {
        frac = atoi(end + 1);
        end++;
        while (*end >= '0' && *end <= '9') {
            end++;
        }
    }
    if (*end == 'Z') {
        end++;
    }
    if (*end != '\0') {
        return false;
    }
    *ms = (int64_t) timegm(&tm) * 1000 + frac;
    return true;
}

static bool
consume_parse_parts(const char *s, consume_opts_t *o)
{
    char       *end;
    long        v;

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

static bool
consume_parse_num(const char *s, int64_t *v)
{
    char       *end;
    long long   x;

    errno = 0;
    x = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || x < 0) {
        return false;
    }
    *v = x;
    return true;
}

static bool
consume_takes_value(const char *a)
{
    static const char *const  opts[] = {
        "-b", "--bootstrap-server", "-g", "--group", "-p", "--partition",
        "-o", "--offset", "--from-time", "-n", "--count", "-f", "--format",
        "--timeout", "-X", "--property", "--command-config",
    };
    size_t                    i;

    for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
        if (strcmp(a, opts[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* Parse argv (after "consume").  Returns -1 on a usage error (message
 * printed), 1 for --help, 0 to go on. */
static int
consume_parse(int argc, char **argv, consume_opts_t *o, samsa_conf_t *conf)
{
    const char  *bootstrap = getenv("SAMSA_BOOTSTRAP");
    char         err[512];
    int          i;

    memset(o, 0, sizeof(*o));
    o->offset = -1;
    o->from_time = -1;
    o->count = -1;
    o->format = "%s\n";
    o->timeout_ms = 10000;
    for (i = 0; i < argc; i++) {
        const char  *a = argv[i];
        const char  *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool         flag = true;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            consume_usage(stdout);
            return 1;
        } else if (strcmp(a, "--from-beginning") == 0) {
            o->from_beginning = true;
        } else if (strcmp(a, "-e") == 0
                   || strcmp(a, "--exit-at-end") == 0) {
            o->exit_at_end = true;
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            samsa_diag_set_level(SAMSA_DIAG_INFO);
        } else if (a[0] != '-') {
            if (o->topic != NULL) {
                fprintf(stderr, "samsa consume: unexpected argument '%s'\n",
                        a);
                return -1;
            }
            o->topic = a;
        } else {
            flag = false;
        }
        if (flag) {
            continue;
        }
        if (!consume_takes_value(a)) {
            fprintf(stderr, "samsa consume: unknown option '%s'\n", a);
            return -1;
        }
        if (v == NULL) {
            fprintf(stderr, "samsa consume: %s needs a value\n", a);
            return -1;
        }
        i++;
        if (strcmp(a, "-b") == 0 || strcmp(a, "--bootstrap-server") == 0) {
            bootstrap = v;
        } else if (strcmp(a, "-g") == 0 || strcmp(a, "--group") == 0) {
            o->group = v;
        } else if (strcmp(a, "-p") == 0 || strcmp(a, "--partition") == 0) {
            if (!consume_parse_parts(v, o)) {
                fprintf(stderr, "samsa consume: bad partition list '%s'\n",
                        v);
                return -1;
            }
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--offset") == 0) {
            if (!consume_parse_num(v, &o->offset)) {
                fprintf(stderr, "samsa consume: bad offset '%s'\n", v);
                return -1;
            }
        } else if (strcmp(a, "--from-time") == 0) {
            if (!consume_parse_time(v, &o->from_time)) {
                fprintf(stderr, "samsa consume: bad time '%s' (ms since "
                        "the epoch or YYYY-MM-DDTHH:MM:SS)\n", v);
                return -1;
            }
        } else if (strcmp(a, "-n") == 0 || strcmp(a, "--count") == 0) {
            if (!consume_parse_num(v, &o->count)) {
                fprintf(stderr, "samsa consume: bad count '%s'\n", v);
                return -1;
            }
        } else if (strcmp(a, "-f") == 0 || strcmp(a, "--format") == 0) {
            o->format = v;
        } else if (strcmp(a, "--timeout") == 0) {
            if (!consume_parse_num(v, &o->timeout_ms)) {
                fprintf(stderr, "samsa consume: bad timeout '%s'\n", v);
                return -1;
            }
        } else if (strcmp(a, "-X") == 0 || strcmp(a, "--property") == 0) {
            if (samsa_conf_set_kv(conf, v, err, sizeof(err))
                != SAMSA_ERR_NONE) {
                fprintf(stderr, "samsa consume: %s\n", err);
                return -1;
            }
        } else if (strcmp(a, "--command-config") == 0) {
            if (samsa_conf_load_file(conf, v, err, sizeof(err))
                != SAMSA_ERR_NONE) {
                fprintf(stderr, "samsa consume: %s\n", err);
                return -1;
            }
        } else {
            fprintf(stderr, "samsa consume: unknown option '%s'\n", a);
            return -1;
        }
    }
    if (o->topic == NULL) {
        fprintf(stderr, "samsa consume: no topic given\n");
        return -1;
    }
    if (o->group != NULL && (o->nparts > 0 || o->offset >= 0)) {
        fprintf(stderr, "samsa consume: --group cannot be combined with "
                "--partition or --offset\n");
        return -1;
    }
    if ((o->from_beginning ? 1 : 0) + (o->offset >= 0 ? 1 : 0)
            + (o->from_time >= 0 ? 1 : 0) > 1) {
        fprintf(stderr, "samsa consume: use only one of --from-beginning, "
                "--offset, --from-time\n");
        return -1;
    }
    if (bootstrap != NULL
        && samsa_conf_set(conf, "bootstrap.servers", bootstrap, err,
                          sizeof(err)) != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa consume: %s\n", err);
        return -1;
    }
    if (samsa_conf_get(conf, "bootstrap.servers") == NULL) {
        fprintf(stderr, "samsa consume: no bootstrap server: use -b "
                "HOST:PORT or set SAMSA_BOOTSTRAP\n");
        return -1;
    }
    return 0;
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
            return CONSUME_EXIT_NOTFOUND;
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
        return CONSUME_EXIT_CLUSTER;
    }
    return CONSUME_EXIT_OK;
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
            return CONSUME_EXIT_OK;
        }
        if (o->exit_at_end && consume_at_end(c)) {
            return CONSUME_EXIT_OK;
        }
        err = samsa_consumer_poll(c, 200, &rs);
        if (err == SAMSA_ERR__SHUTDOWN) {
            return CONSUME_EXIT_OK;                 /* interrupted */
        }
        if (err != SAMSA_ERR_NONE) {
            fprintf(stderr, "samsa consume: %s (%s)\n", samsa_err_name(err),
                    samsa_err_text(err));
            return CONSUME_EXIT_CLUSTER;
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
    if (rc != 0) {
        if (rc < 0) {
            fprintf(stderr, "Try 'samsa consume --help'.\n");
        }
        samsa_conf_free(conf);
        free(o.parts);
        return rc < 0 ? CONSUME_EXIT_USAGE : CONSUME_EXIT_OK;
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
        return CONSUME_EXIT_USAGE;
    }
    err = samsa_consumer_partitions_for(c, o.topic, o.timeout_ms, &nparts);
    if (err == SAMSA_ERR__TIMED_OUT) {
        fprintf(stderr, "samsa consume: no answer from the cluster within "
                "%lld ms (is the bootstrap server right and up?)\n",
                (long long) o.timeout_ms);
        rc = CONSUME_EXIT_UNREACHABLE;
    } else if (err == SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION) {
        fprintf(stderr, "samsa consume: topic '%s' does not exist\n",
                o.topic);
        rc = CONSUME_EXIT_NOTFOUND;
    } else if (err != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa consume: topic '%s': %s (%s)\n", o.topic,
                samsa_err_name(err), samsa_err_text(err));
        rc = CONSUME_EXIT_CLUSTER;
    } else if (o.group != NULL) {
        const char  *topics[1] = { o.topic };

        samsa_consumer_set_rebalance_cb(c, consume_on_rebalance, &o);
        err = samsa_consumer_subscribe(c, topics, 1);
        rc = err == SAMSA_ERR_NONE ? CONSUME_EXIT_OK : CONSUME_EXIT_USAGE;
    } else {
        rc = consume_assign(c, &o, nparts);
    }
    if (rc == CONSUME_EXIT_OK) {
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
