/*
 * cli/opts.h - the samsa tool's flag parsing, shared by every subcommand
 * so that all of them take flags the same way:
 *   --name VALUE, --name=VALUE, -x VALUE (short forms; a VALUE starting
 *   with "--" must use the --name=VALUE form), flags without a
 *   value, repeatable flags (--config k=v --config k=v), "--" ends flags;
 *   flags may come anywhere after the command words, between positional
 *   arguments.
 * The common flags (samsa_opts_common) are accepted by every command
 * that talks to a cluster: -b/--bootstrap-server, --command-config,
 * --timeout, --connect-timeout, --json, -v/--verbose, -h/--help.
 * Threads: main.
 */
#ifndef SAMSA_CLI_OPTS_H
#define SAMSA_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <samsa/conf.h>

/* Exit codes of every samsa command (docs/CLI.md). */
#define SAMSA_EXIT_OK           0
#define SAMSA_EXIT_FAILED       1   /* the operation failed */
#define SAMSA_EXIT_USAGE        2   /* bad flags or arguments */
#define SAMSA_EXIT_UNREACHABLE  3   /* cannot reach the cluster */

typedef enum samsa_opt_kind {
    SAMSA_OPT_FLAG,             /* no value */
    SAMSA_OPT_VALUE,            /* one value; the last one given wins */
    SAMSA_OPT_MULTI,            /* repeatable; every value kept */
} samsa_opt_kind_t;

typedef struct samsa_opt {
    const char        *name;        /* "--partitions"; NULL ends a table */
    char               short_name;  /* 'b', or 0 */
    samsa_opt_kind_t   kind;
    const char        *metavar;     /* "N" in the help */
    const char        *help;
} samsa_opt_t;

/* The flags every cluster command accepts, NULL-name terminated. */
extern const samsa_opt_t  samsa_opts_common[];

/* A parsed command line.  Values borrow argv. */
typedef struct samsa_opts {
    const samsa_opt_t   *spec;      /* the command's table */
    size_t               nspec;
    const char         **value;     /* per flag (spec, then common) */
    const char        ***multi;     /* per flag: its values */
    size_t              *nmulti;
    const char         **pos;       /* positional arguments */
    size_t               npos;
} samsa_opts_t;

/* Parse argv[0..argc) (after the command words) against spec (NULL-name
 * terminated) plus samsa_opts_common.  -1 with err like "unknown option
 * '--foo'" or "option '--partitions' needs a value" on a usage error;
 * call samsa_opts_fini() after any result. */
int samsa_opts_parse(samsa_opts_t *o, const samsa_opt_t *spec, int argc,
                     char **argv, char *err, size_t err_size);

void samsa_opts_fini(samsa_opts_t *o);

/* Was flag name ("--json") given? */
bool samsa_opts_has(const samsa_opts_t *o, const char *name);

/* The last value of name, or NULL if not given. */
const char *samsa_opts_get(const samsa_opts_t *o, const char *name);

/* Every value of a repeatable flag; *n gets the count. */
const char *const *samsa_opts_all(const samsa_opts_t *o, const char *name,
                                  size_t *n);

/* Parse a whole decimal number in [min, max]; -1 with err naming flag
 * ("invalid value 'x' for --partitions: not a number") otherwise. */
int samsa_opts_parse_i64(const char *flag, const char *text, int64_t min,
                         int64_t max, int64_t *v, char *err,
                         size_t err_size);

/* The value of flag as a number (dflt when not given); as above. */
int samsa_opts_i64(const samsa_opts_t *o, const char *flag, int64_t min,
                   int64_t max, int64_t dflt, int64_t *v, char *err,
                   size_t err_size);

/* Split "key=value" (key non-empty): -1 with err naming flag if there is
 * no '='.  *key is a copy to free(); *value points into kv. */
int samsa_opts_kv(const char *flag, const char *kv, char **key,
                  const char **value, char *err, size_t err_size);

/* ISO 8601 date-time as milliseconds since the epoch:
 * YYYY-MM-DD[THH:MM[:SS[.fff]]][Z|+HH:MM|-HH:MM|+HHMM]; no zone = UTC.
 * -1 with err naming flag if text is not one. */
int samsa_opts_parse_datetime(const char *flag, const char *text,
                              int64_t *ms, char *err, size_t err_size);

/* "TOPIC" or "TOPIC:P,P,..." (Kafka's --topic form for offsets): *topic
 * is a copy to free(), *parts (free()) gets *nparts partitions, none for
 * the whole topic.  -1 with err naming flag on a bad partition list. */
int samsa_opts_parse_topic_parts(const char *flag, const char *text,
                                 char **topic, int32_t **parts,
                                 size_t *nparts, char *err, size_t err_size);

/* Client configuration from the common flags: --command-config FILE
 * (Java properties), then the bootstrap servers from -b, else the file's
 * bootstrap.servers, else $SAMSA_BOOTSTRAP.  -1 with err on a bad file
 * or when no bootstrap server is known. */
int samsa_opts_client_conf(const samsa_opts_t *o, samsa_conf_t *conf,
                           char *err, size_t err_size);

/* Print "usage: SYNOPSIS", about, then spec's flags (and the common
 * ones when with_common) one per line. */
void samsa_opts_usage(FILE *out, const char *synopsis, const char *about,
                      const samsa_opt_t *spec, bool with_common);

#endif /* SAMSA_CLI_OPTS_H */
