/*
 * cli/cli.h - the samsa command-line tool's subcommands.  samsa.c
 * dispatches "samsa <verb> [<object>] args..." to one cmd_<verb>.c each;
 * a verb with sub-verbs ("samsa topic create") dispatches again through
 * samsa_cli_dispatch() over its own table.
 * Shared conventions (docs/CLI.md): flags via cli/opts.h, cluster access
 * and exit codes via cli/session.h, output via cli/table.h and
 * cli/json.h.
 * Threads: the main thread (a subcommand may start its own).
 */
#ifndef SAMSA_CLI_CLI_H
#define SAMSA_CLI_CLI_H

/* A verb's entry point: argv[0] is the verb itself.  Returns the exit
 * status. */
typedef int samsa_cli_fn(int argc, char **argv);

/* "samsa perf produce ...". */
int samsa_cmd_perf(int argc, char **argv);

/* "samsa topic create|list|describe|delete|alter-config|...". */
int samsa_cmd_topic(int argc, char **argv);

/* "samsa produce TOPIC ...". */
int samsa_cmd_produce(int argc, char **argv);

/* "samsa group list|describe|reset-offsets|delete|delete-offsets". */
int samsa_cmd_group(int argc, char **argv);

/* "samsa acl add|list|remove" (cmd_acl.c). */
int samsa_cmd_acl(int argc, char **argv);

/* "samsa cluster info". */
int samsa_cmd_cluster(int argc, char **argv);

/* "samsa user scram set|list|delete" (cmd_user.c). */
int samsa_cmd_user(int argc, char **argv);

/* One sub-verb: fn gets the arguments after it (argv[0] is the first). */
typedef struct samsa_cli_sub {
    const char    *name;
    samsa_cli_fn  *fn;
    const char    *help;
} samsa_cli_sub_t;

/* Run the sub-verb named by argv[1] from subs (NULL-name terminated);
 * "--help" or no sub-verb lists them.  prefix ("samsa topic") is for
 * messages.  Returns the exit status (2 for an unknown sub-verb). */
int samsa_cli_dispatch(const char *prefix, const samsa_cli_sub_t *subs,
                       int argc, char **argv);

/* "samsa perf consume ..." and "samsa perf e2e ..." (cmd_perfc.c):
 * argv[0] is the first option.  Return the exit status. */
int samsa_perf_consume(int argc, char **argv);
int samsa_perf_e2e(int argc, char **argv);

/* "samsa consume TOPIC ...": argv[0] is "consume".  Returns the exit
 * status (cmd_consume.c). */
int samsa_cmd_consume(int argc, char **argv);

#endif /* SAMSA_CLI_CLI_H */
