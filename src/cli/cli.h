/*
 * cli/cli.h - the samsa command-line tool's subcommands.  samsa.c
 * dispatches "samsa <verb> [<object>] args..." to one cmd_<verb>.c each.
 * Threads: the main thread (a subcommand may start its own).
 */
#ifndef SAMSA_CLI_CLI_H
#define SAMSA_CLI_CLI_H

/* "samsa perf produce ...": argv[0] is "perf".  Returns the exit status. */
int samsa_cmd_perf(int argc, char **argv);

/* "samsa perf consume ..." and "samsa perf e2e ..." (cmd_perfc.c):
 * argv[0] is the first option.  Return the exit status. */
int samsa_perf_consume(int argc, char **argv);
int samsa_perf_e2e(int argc, char **argv);

/* "samsa consume TOPIC ...": argv[0] is "consume".  Returns the exit
 * status (cmd_consume.c). */
int samsa_cmd_consume(int argc, char **argv);

#endif /* SAMSA_CLI_CLI_H */
