/*
 * cli/samsa.c - main() of the samsa command-line tool: picks the
 * subcommand from argv[1] through one table.  Add a verb by writing
 * cmd_<verb>.c, declaring it in cli.h and adding a row below.
 * Threads: main.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

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
    { "perf", samsa_cmd_perf, "produce, consume, e2e: benchmarks" },
};

static void
cli_usage(FILE *out)
{
    size_t  i;

    fprintf(out, "usage: samsa <command> [args...]\n\ncommands:\n");
    for (i = 0; i < sizeof(cli_cmds) / sizeof(cli_cmds[0]); i++) {
        fprintf(out, "  %-9s %s\n", cli_cmds[i].verb, cli_cmds[i].help);
    }
    fprintf(out, "\n'samsa <command> --help' describes each.\n");
}

int
main(int argc, char **argv)
{
    size_t  i;

    if (argc < 2 || strcmp(argv[1], "-h") == 0
        || strcmp(argv[1], "--help") == 0) {
        cli_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (i = 0; i < sizeof(cli_cmds) / sizeof(cli_cmds[0]); i++) {
        if (strcmp(argv[1], cli_cmds[i].verb) == 0) {
            return cli_cmds[i].fn(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "samsa: unknown command '%s'\n", argv[1]);
    cli_usage(stderr);
    return 2;
}
