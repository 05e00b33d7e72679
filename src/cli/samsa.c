/*
 * cli/samsa.c - main() of the samsa command-line tool: picks the
 * subcommand from argv[1] through one table.  Add a verb by writing
 * cmd_<verb>.c, declaring it in cli.h and adding a row below.  The
 * common options may also come before the command (`samsa -b HOST topic
 * list`): cli_hoist() moves them behind the command words.
 * Threads: main.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"

typedef struct cli_cmd {
    const char  *verb;
    int        (*fn)(int argc, char **argv);
    const char  *help;
} cli_cmd_t;

static const cli_cmd_t  cli_cmds[] = {
    { "topic", samsa_cmd_topic,
      "create, list, describe, delete, alter-config, create-partitions, "
      "delete-records" },
    { "produce", samsa_cmd_produce, "TOPIC: send lines as records" },
    { "consume", samsa_cmd_consume, "TOPIC: print a topic's records" },
    { "group", samsa_cmd_group,
      "list, describe (lag), reset-offsets, delete, delete-offsets" },
    { "cluster", samsa_cmd_cluster, "info: cluster id, controller, brokers" },
    { "acl", samsa_cmd_acl, "add, list, remove: ACL bindings" },
    { "user", samsa_cmd_user,
      "scram set, list, delete: users' SCRAM credentials" },
    { "perf", samsa_cmd_perf, "produce, consume, e2e: benchmarks" },
};

static void
cli_usage(FILE *out)
{
    size_t  i;

    fprintf(out, "usage: samsa [common options] <command> [args...]\n\n"
            "commands:\n");
    for (i = 0; i < sizeof(cli_cmds) / sizeof(cli_cmds[0]); i++) {
        fprintf(out, "  %-9s %s\n", cli_cmds[i].verb, cli_cmds[i].help);
    }
    fprintf(out, "\n'samsa <command> --help' describes each.  The common "
            "options (-b, --command-config,\n--timeout, --connect-timeout, "
            "--json, -v) may also come before the command.\n");
}

static bool
cli_is_help(const char *a)
{
    return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0;
}

/* An option word: "-x..." or "--x...", not "-" (a positional argument). */
static bool
cli_is_flag(const char *a)
{
    return a[0] == '-' && a[1] != '\0';
}

/* The common option that word a names ("-b", "--timeout", "--timeout=5"),
 * or NULL. */
static const samsa_opt_t *
cli_common(const char *a)
{
    const samsa_opt_t  *s;
    const char         *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
    size_t              len = eq != NULL ? (size_t) (eq - a) : strlen(a);

    for (s = samsa_opts_common; s->name != NULL; s++) {
        if ((len == 2 && a[1] != '-' && a[1] == s->short_name)
            || (strlen(s->name) == len && strncmp(s->name, a, len) == 0)) {
            return s;
        }
    }
    return NULL;
}

/* `samsa [COMMON OPTIONS] <command> [words] [args...]`: the common options
 * before the command go to just before the first option after the command
 * words (after it if that is -h/--help; at the end if there is none), where
 * every command parses them as usual; one given after the command too still
 * wins (it comes later).  *nargv is argv itself when nothing moves, else a
 * new array the caller frees.  2 after a usage error (printed). */
static int
cli_hoist(int argc, char **argv, int *nargc, char ***nargv)
{
    const samsa_opt_t   *s;
    char               **out;
    int                  i = 1, verb, at, n = 0, k;

    *nargc = argc;
    *nargv = argv;
    while (i < argc && cli_is_flag(argv[i]) && !cli_is_help(argv[i])
           && strcmp(argv[i], "--") != 0) {
        s = cli_common(argv[i]);
        if (s == NULL) {
            fprintf(stderr, "samsa: unknown option '%s' (before the command "
                    "only the common options; see 'samsa <command> "
                    "--help')\n", argv[i]);
            return 2;
        }
        if (s->kind != SAMSA_OPT_FLAG && strchr(argv[i], '=') == NULL) {
            if (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0) {
                fprintf(stderr, "samsa: option '%s' needs a value (%s)\n",
                        s->name, s->metavar != NULL ? s->metavar : "VALUE");
                return 2;
            }
            i++;
        } else if (s->kind == SAMSA_OPT_FLAG && strchr(argv[i], '=') != NULL) {
            fprintf(stderr, "samsa: option '%s' takes no value\n", s->name);
            return 2;
        }
        i++;
    }
    if (i == 1) {
        return 0;
    }
    if (i >= argc) {
        fprintf(stderr, "samsa: missing command\n");
        cli_usage(stderr);
        return 2;
    }
    verb = i;
    for (at = verb + 1; at < argc && !cli_is_flag(argv[at]); at++) {
    }
    if (at < argc && cli_is_help(argv[at])) {
        at++;
    }
    out = calloc((size_t) argc + 1, sizeof(*out));
    if (out == NULL) {
        fprintf(stderr, "samsa: out of memory\n");
        return 1;
    }
    out[n++] = argv[0];
    for (k = verb; k < at; k++) {
        out[n++] = argv[k];
    }
    /* a command word alone: it reports what is missing, no options
     * would be taken for its sub-command */
    for (k = 1; k < verb && verb + 1 < argc; k++) {
        out[n++] = argv[k];
    }
    for (k = at; k < argc; k++) {
        out[n++] = argv[k];
    }
    out[n] = NULL;
    *nargc = n;
    *nargv = out;
    return 0;
}

int
main(int argc, char **argv)
{
    char  **av;
    size_t  i;
    int     ac, rc;

    rc = cli_hoist(argc, argv, &ac, &av);
    if (rc != 0) {
        return rc;
    }
    if (ac < 2 || cli_is_help(av[1])) {
        cli_usage(ac < 2 ? stderr : stdout);
        rc = ac < 2 ? 2 : 0;
        goto out;
    }
    rc = 2;
    for (i = 0; i < sizeof(cli_cmds) / sizeof(cli_cmds[0]); i++) {
        if (strcmp(av[1], cli_cmds[i].verb) == 0) {
            rc = cli_cmds[i].fn(ac - 1, av + 1);
            break;
        }
    }
    if (i == sizeof(cli_cmds) / sizeof(cli_cmds[0])) {
        fprintf(stderr, "samsa: unknown command '%s'\n", av[1]);
        cli_usage(stderr);
    }
out:
    if (av != argv) {
        free(av);
    }
    return rc;
}
