/*
 * cli/session.c - common flags, admin client and exit codes of the samsa
 * commands (see session.h).
 * Threads: main.
 */
#include "cli/session.h"

#include "cli/cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util/diag.h"

#define SESSION_TIMEOUT_MS          30000
#define SESSION_CONNECT_TIMEOUT_MS  5000

int
samsa_session_usage(samsa_session_t *s, const char *fmt, ...)
{
    va_list  ap;

    fprintf(stderr, "%s: ", s->cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help'.\n", s->cmd);
    return SAMSA_EXIT_USAGE;
}

/* The exit code for a call's err (0, 1 or 3). */
static int
session_exit_for(samsa_err_t err)
{
    switch ((int) err) {
    case SAMSA_ERR_NONE:
        return SAMSA_EXIT_OK;
    case SAMSA_ERR__CLOSED:
    case SAMSA_ERR__RESOLVE:
    case SAMSA_ERR__IO:
    case SAMSA_ERR__SHUTDOWN:
        return SAMSA_EXIT_UNREACHABLE;
    default:
        return SAMSA_EXIT_FAILED;
    }
}

int
samsa_session_fail(samsa_session_t *s, samsa_err_t err, const char *fmt,
                   ...)
{
    va_list  ap;

    fprintf(stderr, "%s: ", s->cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, ": %s: %s\n", samsa_err_name(err), samsa_err_text(err));
    return err == SAMSA_ERR_NONE ? SAMSA_EXIT_FAILED
                                 : session_exit_for(err);
}

int
samsa_session_parse(samsa_session_t *s, const char *cmd,
                    const char *synopsis, const char *about,
                    const samsa_opt_t *spec, int argc, char **argv,
                    size_t min_pos, size_t max_pos)
{
    char  err[512];

    memset(s, 0, sizeof(*s));
    s->cmd = cmd;
    s->synopsis = synopsis;
    s->about = about;
    s->spec = spec;
    if (samsa_opts_parse(&s->opts, spec, argc, argv, err, sizeof(err)) != 0) {
        return samsa_session_usage(s, "%s", err);
    }
    if (samsa_opts_has(&s->opts, "--help")) {
        samsa_opts_usage(stdout, synopsis, about, spec, true);
        return SAMSA_EXIT_OK;
    }
    if (s->opts.npos < min_pos) {
        return samsa_session_usage(s, "missing argument (usage: %s)",
                                   synopsis);
    }
    if (s->opts.npos > max_pos) {
        return samsa_session_usage(s, "unexpected argument '%s'",
                                   s->opts.pos[max_pos]);
    }
    if (samsa_opts_i64(&s->opts, "--timeout", 1, INT32_MAX,
                       SESSION_TIMEOUT_MS, &s->timeout_ms, err,
                       sizeof(err)) != 0
        || samsa_opts_i64(&s->opts, "--connect-timeout", 1, INT32_MAX,
                          SESSION_CONNECT_TIMEOUT_MS, &s->connect_timeout_ms,
                          err, sizeof(err)) != 0) {
        return samsa_session_usage(s, "%s", err);
    }
    s->json = samsa_opts_has(&s->opts, "--json");
    samsa_diag_set_level(samsa_opts_has(&s->opts, "--verbose")
                             ? SAMSA_DIAG_DEBUG : SAMSA_DIAG_ERROR);
    return -1;
}

/* The client configuration from the common flags into s->conf.  0, or
 * the exit code (2) after printing why. */
static int
session_conf(samsa_session_t *s)
{
    char  err[512];

    s->conf = samsa_conf_new();
    if (samsa_opts_client_conf(&s->opts, s->conf, err, sizeof(err)) != 0) {
        return samsa_session_usage(s, "%s", err);
    }
    /* a dead address should fail in seconds, not after Java's 10 s per
     * attempt: unless configured, no attempt outlives the connect budget */
    if (samsa_conf_get(s->conf, "socket.connection.setup.timeout.ms")
        == NULL) {
        char  v[32];

        snprintf(v, sizeof(v), "%lld", (long long) s->connect_timeout_ms);
        if (samsa_conf_set(s->conf, "socket.connection.setup.timeout.ms", v,
                           err, sizeof(err)) != SAMSA_ERR_NONE) {
            return samsa_session_usage(s, "--connect-timeout: %s", err);
        }
    }
    return SAMSA_EXIT_OK;
}

int
samsa_session_connect(samsa_session_t *s)
{
    char         err[512];
    samsa_err_t  e;
    int          rc = session_conf(s);

    if (rc != SAMSA_EXIT_OK) {
        return rc;
    }
    e = samsa_admin_new(s->conf, &s->admin, err, sizeof(err));
    if (e != SAMSA_ERR_NONE) {
        return samsa_session_usage(s, "%s", err);
    }
    e = samsa_admin_connect(s->admin, s->connect_timeout_ms, err,
                            sizeof(err));
    if (e != SAMSA_ERR_NONE) {
        fprintf(stderr, "%s: %s\n", s->cmd, err);
        /* reached, but refused: not an unreachable cluster */
        return e == SAMSA_ERR_SASL_AUTHENTICATION_FAILED
                       || e == SAMSA_ERR_UNSUPPORTED_SASL_MECHANISM
                       || e == SAMSA_ERR_ILLEGAL_SASL_STATE
                   ? SAMSA_EXIT_FAILED : SAMSA_EXIT_UNREACHABLE;
    }
    return SAMSA_EXIT_OK;
}

bool
samsa_session_open(samsa_session_t *s, int *rc, const char *cmd,
                   const char *synopsis, const char *about,
                   const samsa_opt_t *spec, int argc, char **argv,
                   size_t min_pos, size_t max_pos)
{
    *rc = samsa_session_parse(s, cmd, synopsis, about, spec, argc, argv,
                              min_pos, max_pos);
    if (*rc >= 0 || (*rc = samsa_session_connect(s)) != SAMSA_EXIT_OK) {
        samsa_session_close(s);
        return false;
    }
    return true;
}

void
samsa_session_list(samsa_session_t *s, samsa_json_t *j)
{
    samsa_json_init(j, stdout);
    if (s->json) {
        samsa_json_arr(j);
    }
}

void
samsa_session_list_end(samsa_session_t *s, samsa_json_t *j,
                       samsa_table_t *t)
{
    if (s->json) {
        samsa_json_arr_end(j);
        samsa_json_end(j);
    } else if (t != NULL) {
        samsa_table_print(t, stdout);
    }
    if (t != NULL) {
        samsa_table_free(t);
    }
}

void
samsa_session_json_err(samsa_json_t *j, samsa_err_t err)
{
    samsa_json_kv_str(j, "error",
                      err != SAMSA_ERR_NONE ? samsa_err_name(err) : NULL);
}

int
samsa_session_tp_fail(const samsa_session_t *s, const char *topic,
                      int32_t partition, samsa_err_t err, const char *errmsg)
{
    fprintf(stderr, "%s: %s-%d: %s: %s\n", s->cmd, topic, partition,
            samsa_err_name(err), errmsg);
    return SAMSA_EXIT_FAILED;
}

const samsa_tp_result_t *
samsa_session_tp_find(const samsa_tp_results_t *r, const char *topic,
                      int32_t partition)
{
    size_t  i;

    for (i = 0; r != NULL && i < r->n; i++) {
        if (r->items[i].partition == partition
            && strcmp(r->items[i].topic, topic) == 0) {
            return &r->items[i];
        }
    }
    return NULL;
}

int
samsa_session_topic(samsa_session_t *s, const char *topic,
                    samsa_topic_descs_t **td)
{
    samsa_err_t  e;

    *td = NULL;
    e = samsa_admin_describe_topics(s->admin, &topic, 1, s->timeout_ms, td);
    if (e == SAMSA_ERR_NONE && (*td)->n == 1) {
        e = (*td)->topics[0].err;
    }
    if (e != SAMSA_ERR_NONE) {
        samsa_admin_result_free(*td);
        *td = NULL;
        return samsa_session_fail(s, e, "topic '%s'", topic);
    }
    return SAMSA_EXIT_OK;
}

void
samsa_session_close(samsa_session_t *s)
{
    samsa_admin_free(s->admin);
    samsa_conf_free(s->conf);
    samsa_opts_fini(&s->opts);
    s->admin = NULL;
    s->conf = NULL;
}

int
samsa_cli_dispatch(const char *prefix, const samsa_cli_sub_t *subs, int argc,
                   char **argv)
{
    const samsa_cli_sub_t  *sub;
    FILE                   *out = stderr;

    if (argc >= 2) {
        for (sub = subs; sub->name != NULL; sub++) {
            if (strcmp(argv[1], sub->name) == 0) {
                return sub->fn(argc - 2, argv + 2);
            }
        }
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
            out = stdout;
        } else {
            fprintf(stderr, "%s: unknown command '%s'\n", prefix, argv[1]);
        }
    } else {
        fprintf(stderr, "%s: missing command\n", prefix);
    }
    fprintf(out, "usage: %s <command> [args...]\n\ncommands:\n", prefix);
    for (sub = subs; sub->name != NULL; sub++) {
        fprintf(out, "  %-20s %s\n", sub->name, sub->help);
    }
    fprintf(out, "\n'%s <command> --help' describes each.\n", prefix);
    return out == stdout ? SAMSA_EXIT_OK : SAMSA_EXIT_USAGE;
}
