/*
 * consumer_probe - drives libsamsa's consumer for the integration tests
 * (tests/integration/test_consumer*.py).  Prints one JSON object per line:
 *   {"rec": {"t":..,"p":..,"o":..,"ts":..,"tt":..,"k":b64|null,
 *            "v":b64|null,"h":[[b64,b64|null],..]}}
 *   {"ev": "assigned"|"revoked"|"lost", "tps": [["t",p],..]}
 *   {"err": "NAME"}            poll() failed (the probe goes on)
 *   {"lookup": ..}             answers to --offsets-for-times etc.
 *   {"done": {"count": N, "exit": "max|idle|timeout|stop"}}
 * Commands on stdin (one per line): "stop" (close and exit), "commit"
 * (commit_sync of the positions), "sleep MS" (no poll() for MS ms).
 *
 * usage: consumer_probe -b HOST:PORT [-X key=value]...
 *          (--assign t:p[,t:p..] | --subscribe t[,t..] | --pattern RE)
 *          [--seek-beginning] [--seek t:p:off] [--max N] [--idle-ms MS]
 *          [--timeout-ms MS] [--commit-each] [--pause t:p]
 *          [--exit-on-error] [--positions]
 * --positions prints {"positions": [[t, p, offset, err]..]} once every
 * assigned partition's position is known (assign only).
 *          [--offsets-for-times t:p:ts] [--end-offsets t:p]
 *          [--beginning-offsets t:p] [--committed t:p] [--quiet]
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <samsa/consumer.h>

static bool  quiet;

static int64_t
now_ms(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
b64(const void *p, size_t len)
{
    static const char  tbl[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char  *s = p;
    size_t                i;

    if (p == NULL) {
        fputs("null", stdout);
        return;
    }
    putchar('"');
    for (i = 0; i + 2 < len; i += 3) {
        putchar(tbl[s[i] >> 2]);
        putchar(tbl[((s[i] & 3) << 4) | (s[i + 1] >> 4)]);
        putchar(tbl[((s[i + 1] & 15) << 2) | (s[i + 2] >> 6)]);
        putchar(tbl[s[i + 2] & 63]);
    }
    if (len - i == 1) {
        putchar(tbl[s[i] >> 2]);
        putchar(tbl[(s[i] & 3) << 4]);
        fputs("==", stdout);
    } else if (len - i == 2) {
        putchar(tbl[s[i] >> 2]);
        putchar(tbl[((s[i] & 3) << 4) | (s[i + 1] >> 4)]);
        putchar(tbl[(s[i + 1] & 15) << 2]);
        putchar('=');
    }
    putchar('"');
}

static void
print_rec(const samsa_consumer_record_t *r)
{
    size_t  i;

    printf("{\"rec\": {\"t\": \"%s\", \"p\": %d, \"o\": %lld, \"ts\": %lld, "
           "\"tt\": %d, \"k\": ", r->topic, r->partition,
           (long long) r->offset, (long long) r->timestamp,
           (int) r->timestamp_type);
    b64(r->key, r->key_len);
    fputs(", \"v\": ", stdout);
    b64(r->value, r->value_len);
    fputs(", \"h\": [", stdout);
    for (i = 0; i < r->nheaders; i++) {
        fputs(i ? ", [" : "[", stdout);
        b64(r->headers[i].key, r->headers[i].key_len);
        fputs(", ", stdout);
        b64(r->headers[i].value, r->headers[i].value_len);
        putchar(']');
    }
    fputs("]}}\n", stdout);
}

static void
print_tps(const samsa_topic_partition_t *tps, size_t n, bool offsets)
{
    size_t  i;

    putchar('[');
    for (i = 0; i < n; i++) {
        if (offsets) {
            printf("%s[\"%s\", %d, %lld, %lld, \"%s\"]", i ? ", " : "",
                   tps[i].topic, tps[i].partition, (long long) tps[i].offset,
                   (long long) tps[i].timestamp, samsa_err_name(tps[i].err));
        } else {
            printf("%s[\"%s\", %d]", i ? ", " : "", tps[i].topic,
                   tps[i].partition);
        }
    }
    putchar(']');
}

static void
on_rebalance(samsa_consumer_t *c, samsa_rebalance_event_t ev,
             const samsa_topic_partition_t *tps, size_t n, void *opaque)
{
    static const char *const  names[] = { "assigned", "revoked", "lost" };

    (void) c;
    (void) opaque;
    printf("{\"ev\": \"%s\", \"tps\": ", names[ev]);
    print_tps(tps, n, false);
    printf("}\n");
    fflush(stdout);
}

/* "t:p[:x]" -> tp; x in *extra if given. */
static int
parse_tp(char *s, samsa_topic_partition_t *tp, int64_t *extra)
{
    char  *c1 = strrchr(s, ':'), *c2;

    if (c1 == NULL) {
        return -1;
    }
    memset(tp, 0, sizeof(*tp));
    if (extra != NULL) {
        *extra = strtoll(c1 + 1, NULL, 10);
        *c1 = '\0';
        c2 = strrchr(s, ':');
        if (c2 == NULL) {
            return -1;
        }
        c1 = c2;
    }
    *c1 = '\0';
    tp->topic = s;
    tp->partition = atoi(c1 + 1);
    return 0;
}

typedef struct probe_opts {
    char       *assign;
    char       *subscribe;
    char       *pattern;
    bool        seek_beginning;
    char       *seek[16];
    int         nseek;
    char       *pause;
    int64_t     max;
    int64_t     idle_ms;
    int64_t     timeout_ms;
    bool        commit_each;
    bool        exit_on_error;
    bool        positions;
    char       *lookup_kind[16];
    char       *lookup_arg[16];
    int         nlookup;
} probe_opts_t;

static int
lookups(samsa_consumer_t *c, probe_opts_t *o)
{
    samsa_topic_partition_t  tp;
    samsa_err_t              err;
    int64_t                  x = 0;
    int                      i;

    for (i = 0; i < o->nlookup; i++) {
        bool  with_x = strcmp(o->lookup_kind[i], "offsets-for-times") == 0;

        if (parse_tp(o->lookup_arg[i], &tp, with_x ? &x : NULL) != 0) {
            return -1;
        }
        tp.timestamp = x;
        if (with_x) {
            err = samsa_consumer_offsets_for_times(c, &tp, 1, 10000);
        } else if (strcmp(o->lookup_kind[i], "end-offsets") == 0) {
            err = samsa_consumer_end_offsets(c, &tp, 1, 10000);
        } else if (strcmp(o->lookup_kind[i], "beginning-offsets") == 0) {
            err = samsa_consumer_beginning_offsets(c, &tp, 1, 10000);
        } else {
            err = samsa_consumer_committed(c, &tp, 1, 10000);
        }
        printf("{\"lookup\": \"%s\", \"err\": \"%s\", \"tps\": ",
               o->lookup_kind[i], samsa_err_name(err));
        print_tps(&tp, 1, true);
        printf("}\n");
        fflush(stdout);
    }
    return 0;
}

/* "stop" / "commit" from stdin; returns 1 to stop. */
static int
stdin_command(samsa_consumer_t *c)
{
    static char    buf[256];
    static size_t  len;
    struct pollfd  pfd = { 0, POLLIN, 0 };
    ssize_t        r;
    char          *nl;

    if (poll(&pfd, 1, 0) <= 0) {
        return 0;
    }
    r = read(0, buf + len, sizeof(buf) - 1 - len);
    if (r <= 0) {
        return r == 0 ? 0 : 0;
    }
    len += (size_t) r;
    buf[len] = '\0';
    while ((nl = strchr(buf, '\n')) != NULL) {
        *nl = '\0';
        if (strcmp(buf, "stop") == 0) {
            return 1;
        }
        if (strncmp(buf, "sleep ", 6) == 0) {
            /* stop polling for a while (max.poll.interval.ms tests) */
            usleep((useconds_t) atoi(buf + 6) * 1000);
            printf("{\"slept\": %d}\n", atoi(buf + 6));
            fflush(stdout);
        }
        if (strcmp(buf, "commit") == 0) {
            samsa_err_t  err = samsa_consumer_commit_sync(c, NULL, 0, 10000);

            printf("{\"commit\": \"%s\"}\n", samsa_err_name(err));
            fflush(stdout);
        }
        memmove(buf, nl + 1, len - (size_t) (nl + 1 - buf) + 1);
        len -= (size_t) (nl + 1 - buf);
    }
    return 0;
}

static int
setup(samsa_consumer_t *c, probe_opts_t *o)
{
    samsa_topic_partition_t  tps[256];
    const char              *topics[64];
    size_t                   n = 0;
    char                    *save, *tok;
    int64_t                  off;
    int                      i;

    if (o->assign != NULL) {
        for (tok = strtok_r(o->assign, ",", &save); tok != NULL && n < 256;
             tok = strtok_r(NULL, ",", &save)) {
            if (parse_tp(tok, &tps[n++], NULL) != 0) {
                return -1;
            }
        }
        if (samsa_consumer_assign(c, tps, n) != SAMSA_ERR_NONE) {
            return -1;
        }
    } else if (o->subscribe != NULL) {
        for (tok = strtok_r(o->subscribe, ",", &save); tok != NULL && n < 64;
             tok = strtok_r(NULL, ",", &save)) {
            topics[n++] = tok;
        }
        if (samsa_consumer_subscribe(c, topics, n) != SAMSA_ERR_NONE) {
            return -1;
        }
    } else if (o->pattern != NULL) {
        if (samsa_consumer_subscribe_pattern(c, o->pattern)
            != SAMSA_ERR_NONE) {
            return -1;
        }
    }
    if (o->seek_beginning
        && samsa_consumer_seek_to_beginning(c, NULL, 0) != SAMSA_ERR_NONE) {
        return -1;
    }
    for (i = 0; i < o->nseek; i++) {
        if (parse_tp(o->seek[i], &tps[0], &off) != 0
            || samsa_consumer_seek(c, tps[0].topic, tps[0].partition, off)
                   != SAMSA_ERR_NONE) {
            return -1;
        }
    }
    if (o->pause != NULL) {
        if (parse_tp(o->pause, &tps[0], NULL) != 0
            || samsa_consumer_pause(c, tps, 1) != SAMSA_ERR_NONE) {
            return -1;
        }
    }
    return 0;
}

static int
parse_args(int argc, char **argv, samsa_conf_t *conf, probe_opts_t *o)
{
    char  err[512];
    int   i;

    memset(o, 0, sizeof(*o));
    o->max = -1;
    o->timeout_ms = 30000;
    for (i = 1; i < argc; i++) {
        const char  *a = argv[i];
        char        *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--seek-beginning") == 0) {
            o->seek_beginning = true;
            continue;
        }
        if (strcmp(a, "--commit-each") == 0) {
            o->commit_each = true;
            continue;
        }
        if (strcmp(a, "--positions") == 0) {
            o->positions = true;
            continue;
        }
        if (strcmp(a, "--exit-on-error") == 0) {
            o->exit_on_error = true;
            continue;
        }
        if (strcmp(a, "--quiet") == 0) {
            quiet = true;
            continue;
        }
        if (v == NULL) {
            return -1;
        }
        i++;
        if (strcmp(a, "-b") == 0) {
            if (samsa_conf_set(conf, "bootstrap.servers", v, err,
                               sizeof(err)) != SAMSA_ERR_NONE) {
                return -1;
            }
        } else if (strcmp(a, "-X") == 0) {
            if (samsa_conf_set_kv(conf, v, err, sizeof(err))
                != SAMSA_ERR_NONE) {
                fprintf(stderr, "consumer_probe: %s\n", err);
                return -1;
            }
        } else if (strcmp(a, "--assign") == 0) {
            o->assign = v;
        } else if (strcmp(a, "--subscribe") == 0) {
            o->subscribe = v;
        } else if (strcmp(a, "--pattern") == 0) {
            o->pattern = v;
        } else if (strcmp(a, "--seek") == 0 && o->nseek < 16) {
            o->seek[o->nseek++] = v;
        } else if (strcmp(a, "--pause") == 0) {
            o->pause = v;
        } else if (strcmp(a, "--max") == 0) {
            o->max = strtoll(v, NULL, 10);
        } else if (strcmp(a, "--idle-ms") == 0) {
            o->idle_ms = strtoll(v, NULL, 10);
        } else if (strcmp(a, "--timeout-ms") == 0) {
            o->timeout_ms = strtoll(v, NULL, 10);
        } else if (strncmp(a, "--", 2) == 0 && o->nlookup < 16
                   && (strcmp(a + 2, "offsets-for-times") == 0
                       || strcmp(a + 2, "end-offsets") == 0
                       || strcmp(a + 2, "beginning-offsets") == 0
                       || strcmp(a + 2, "committed") == 0)) {
            o->lookup_kind[o->nlookup] = (char *) a + 2;
            o->lookup_arg[o->nlookup++] = v;
        } else {
            return -1;
        }
    }
    return 0;
}

int
main(int argc, char **argv)
{
    samsa_conf_t               *conf = samsa_conf_new();
    samsa_consumer_t           *c;
    samsa_consumer_records_t   *rs;
    probe_opts_t                o;
    samsa_err_t                 err;
    char                        errstr[512];
    const char                 *why = "timeout";
    int64_t                     count = 0, start, last;
    size_t                      i;

    if (parse_args(argc, argv, conf, &o) != 0) {
        fprintf(stderr, "consumer_probe: bad arguments\n");
        return 2;
    }
    err = samsa_consumer_new(conf, &c, errstr, sizeof(errstr));
    samsa_conf_free(conf);
    if (err != SAMSA_ERR_NONE) {
        printf("{\"config_error\": \"%s\"}\n", errstr);
        return 3;
    }
    samsa_consumer_set_rebalance_cb(c, on_rebalance, NULL);
    if (lookups(c, &o) != 0 || setup(c, &o) != 0) {
        fprintf(stderr, "consumer_probe: setup failed\n");
        (void) samsa_consumer_close(c, 5000);
        return 2;
    }
    if (o.positions) {
        samsa_topic_partition_t  *tps;
        size_t                    n, k;
        int64_t                   pos;

        if (samsa_consumer_assignment(c, &tps, &n) == SAMSA_ERR_NONE) {
            printf("{\"positions\": [");
            for (k = 0; k < n; k++) {
                err = samsa_consumer_position(c, tps[k].topic,
                                              tps[k].partition, 20000, &pos);
                printf("%s[\"%s\", %d, %lld, \"%s\"]", k ? ", " : "",
                       tps[k].topic, tps[k].partition, (long long) pos,
                       samsa_err_name(err));
            }
            printf("]}\n");
            fflush(stdout);
            samsa_tp_array_free(tps, n);
        }
    }
    start = last = now_ms();
    while (o.assign != NULL || o.subscribe != NULL || o.pattern != NULL) {
        if (stdin_command(c)) {
            why = "stop";
            break;
        }
        if (now_ms() - start > o.timeout_ms) {
            break;
        }
        if (o.idle_ms > 0 && count > 0 && now_ms() - last > o.idle_ms) {
            why = "idle";
            break;
        }
        err = samsa_consumer_poll(c, 100, &rs);
        if (err != SAMSA_ERR_NONE) {
            printf("{\"err\": \"%s\"}\n", samsa_err_name(err));
            fflush(stdout);
            if (o.exit_on_error) {
                why = "error";
                break;
            }
            usleep(50000);
            continue;
        }
        for (i = 0; i < samsa_consumer_records_count(rs); i++) {
            if (!quiet) {
                print_rec(samsa_consumer_records_get(rs, i));
            }
            count++;
            last = now_ms();
        }
        fflush(stdout);
        samsa_consumer_records_free(rs);
        if (o.commit_each && count > 0) {
            err = samsa_consumer_commit_sync(c, NULL, 0, 10000);
            if (err != SAMSA_ERR_NONE) {
                printf("{\"commit\": \"%s\"}\n", samsa_err_name(err));
            }
        }
        if (o.max >= 0 && count >= o.max) {
            why = "max";
            break;
        }
    }
    err = samsa_consumer_close(c, 10000);
    printf("{\"done\": {\"count\": %lld, \"exit\": \"%s\", \"close\": "
           "\"%s\"}}\n", (long long) count, why, samsa_err_name(err));
    return 0;
}
