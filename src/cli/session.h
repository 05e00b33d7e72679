/*
 * cli/session.h - what every samsa command that talks to a cluster does
 * the same way: parse its flags (cli/opts.h) with --help and usage errors
 * (exit 2, the message naming the flag), build the client configuration
 * (-b, $SAMSA_BOOTSTRAP, --command-config), open the admin client and
 * reach the cluster within --connect-timeout (exit 3 if it cannot), and
 * report failures with Kafka's error names (exit 1).
 * Threads: main.
 */
#ifndef SAMSA_CLI_SESSION_H
#define SAMSA_CLI_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include <samsa/admin.h>
#include <samsa/conf.h>

#include "cli/json.h"
#include "cli/opts.h"
#include "cli/table.h"

typedef struct samsa_session {
    const char      *cmd;           /* "samsa topic create", for messages */
    const char      *synopsis;
    const char      *about;
    const samsa_opt_t  *spec;
    samsa_opts_t     opts;
    samsa_conf_t    *conf;          /* from the common flags */
    samsa_admin_t   *admin;         /* after samsa_session_connect() */
    int64_t          timeout_ms;    /* --timeout */
    int64_t          connect_timeout_ms;
    bool             json;
} samsa_session_t;

/* Parse argv (after the command words) with spec; positional arguments
 * must number min_pos..max_pos.  Returns -1 to go on, else the exit code
 * to return at once (0 after --help, 2 after a usage error, printed). */
int samsa_session_parse(samsa_session_t *s, const char *cmd,
                        const char *synopsis, const char *about,
                        const samsa_opt_t *spec, int argc, char **argv,
                        size_t min_pos, size_t max_pos);

/* The client configuration from the common flags, then the admin client
 * and a first round trip within --connect-timeout.  0, or the exit code
 * (2 or 3), printed. */
int samsa_session_connect(samsa_session_t *s);

/* samsa_session_parse(), then samsa_session_connect(): true when
 * connected (*rc = SAMSA_EXIT_OK); false with *rc the exit code to return
 * at once, s already closed. */
bool samsa_session_open(samsa_session_t *s, int *rc, const char *cmd,
                        const char *synopsis, const char *about,
                        const samsa_opt_t *spec, int argc, char **argv,
                        size_t min_pos, size_t max_pos);

/* Start a listing on stdout: with --json, "[". */
void samsa_session_list(samsa_session_t *s, samsa_json_t *j);

/* Finish it: with --json "]" and the newline, else t printed (when not
 * NULL); t is freed. */
void samsa_session_list_end(samsa_session_t *s, samsa_json_t *j,
                            samsa_table_t *t);

/* An "error" member: err's name, or null for SAMSA_ERR_NONE. */
void samsa_session_json_err(samsa_json_t *j, samsa_err_t err);

/* Print "<cmd>: <topic>-<partition>: <ERROR_NAME>: <errmsg>"; returns
 * SAMSA_EXIT_FAILED. */
int samsa_session_tp_fail(const samsa_session_t *s, const char *topic,
                          int32_t partition, samsa_err_t err,
                          const char *errmsg);

/* The result for topic-partition in r (NULL r: none), or NULL. */
const samsa_tp_result_t *samsa_session_tp_find(const samsa_tp_results_t *r,
                                               const char *topic,
                                               int32_t partition);

/* Describe the one topic named (Metadata) into *td; the exit code,
 * "topic '<name>': ..." printed and *td NULL on failure. */
int samsa_session_topic(samsa_session_t *s, const char *topic,
                        samsa_topic_descs_t **td);

/* Free everything. */
void samsa_session_close(samsa_session_t *s);

/* Print "<cmd>: <message>" and a pointer to --help; returns 2. */
int samsa_session_usage(samsa_session_t *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Print "<cmd>: <message>: <ERROR_NAME>: <text>"; returns 3 when err says
 * the cluster could not be reached, else 1. */
int samsa_session_fail(samsa_session_t *s, samsa_err_t err,
                       const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* SAMSA_CLI_SESSION_H */
