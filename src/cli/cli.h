/*
 * cli/cli.h - the samsa command-line tool's subcommands.  samsa.c
 * dispatches "samsa <verb> [<object>] args..." to one cmd_<verb>.c each.
 * Threads: the main thread (a subcommand may start its own).
 */
#ifndef SAMSA_CLI_CLI_H
#define SAMSA_CLI_CLI_H

/* "samsa perf produce ...": argv[0] is "perf".  Returns the exit status. */
int samsa_cmd_perf(int argc, char **argv);

#endif /* SAMSA_CLI_CLI_H */
