/*
 * server/format.c - see format.h.  Kafka's StorageTool keeps its options
 * (-t/--cluster-id, -g/--ignore-formatted, -c/--config) and wording; the
 * rest of the command line is samsa-server's own (a properties file,
 * --override key=value), read by samsa_config_from_args().
 */
#include "server/format.h"

#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "config/config_kraft.h"
#include "meta/bootscram.h"
#include "meta/bootvoters.h"
#include "meta/metaprops.h"
#include "util/alloc.h"

typedef struct format_args {
    const char  *cluster_id;
    bool         ignore_formatted;
    bool         help;
    /* a dynamic quorum's initial voters (KIP-853): at most one of */
    bool         standalone;
    const char  *initial_controllers;
    bool         no_initial_controllers;
    /* what the metadata dir gets: the voters to write, this node's dir id */
    samsa_config_voter_t  *voters;
    size_t                 nvoters;
    bool                   write_voters;
    char                   mdir_id[SAMSA_UUID_STR_SIZE];
    /* --add-scram: the credentials the metadata log starts with */
    samsa_bootscram_t     *scram;
    size_t                 nscram;
    char       **rest;              /* for samsa_config_from_args */
    int          nrest;
} format_args_t;

static void
format_usage(FILE *out)
{
    fputs("Usage: samsa-server format --cluster-id ID [server.properties]\n"
          "                           [--override key=value]... "
          "[--ignore-formatted]\n"
          "                           [--standalone | --initial-controllers "
          "LIST |\n"
          "                            --no-initial-controllers]\n"
          "                           [--add-scram MECH=[name=N,password=P]]"
          "...\n"
          "       samsa-server random-cluster-id\n\n"
          "format writes meta.properties (version, cluster.id, node.id, a\n"
          "new directory.id) into every log dir (log.dirs, else log.dir)\n"
          "and metadata.log.dir, after checking the configuration as a\n"
          "start would.  A node with process.roles set starts only on\n"
          "formatted dirs.  random-cluster-id prints a new cluster id.\n\n"
          "Options:\n"
          "  -t, --cluster-id ID     the cluster id (required)\n"
          "  -g, --ignore-formatted  skip dirs already formatted for this\n"
          "                          cluster id and node id\n"
          "  -c, --config FILE       the properties file (or give it alone)\n"
          "  -s, --standalone        a dynamic quorum (controller.quorum.\n"
          "                          bootstrap.servers): this controller is\n"
          "                          its first and only voter\n"
          "  -I, --initial-controllers id@host:port:directory-id,...\n"
          "                          a dynamic quorum's first voters; this\n"
          "                          node's entry gives its metadata dir's\n"
          "                          directory.id\n"
          "  -N, --no-initial-controllers\n"
          "                          a controller to be added later (it\n"
          "                          waits for AddRaftVoter)\n"
          "  -S, --add-scram SCRAM-SHA-256=[name=alice,password=secret]\n"
          "                          a SCRAM credential the new metadata log\n"
          "                          starts with (repeatable; also\n"
          "                          iterations=N, salt=B64,\n"
          "                          saltedpassword=B64 with salt)\n"
          "  --override key=value    set a configuration key (repeatable)\n"
          "  -h, --help              print this help and exit\n", out);
}

/* The argument after argv[*i], for an option that takes one. */
static const char *
format_arg_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "samsa-server format: %s needs a value\n", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

/* One --add-scram argument into fa->scram; false (message printed) if it
 * does not parse. */
static bool
format_add_scram(format_args_t *fa, const char *arg)
{
    char  errstr[512];

    fa->scram = samsa_realloc(fa->scram, (fa->nscram + 1) * sizeof(*fa->scram));
    if (samsa_bootscram_parse(arg, &fa->scram[fa->nscram], errstr,
                              sizeof(errstr)) != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa-server format: --add-scram: %s\n", errstr);
        return false;
    }
    fa->nscram++;
    return true;
}

/* Split argv ("samsa-server format ...") into fa; false on bad usage. */
static bool
format_args_parse(format_args_t *fa, int argc, char **argv)
{
    const char  *a, *v;
    int          i;

    fa->rest = samsa_calloc((size_t) argc + 1, sizeof(char *));
    fa->rest[fa->nrest++] = argv[0];
    for (i = 2; i < argc; i++) {
        a = argv[i];
        v = NULL;
        if (strcmp(a, "-t") == 0 || strcmp(a, "--cluster-id") == 0) {
            if ((fa->cluster_id = format_arg_value(argc, argv, &i)) == NULL) {
                return false;
            }
        } else if (strncmp(a, "--cluster-id=", 13) == 0) {
            fa->cluster_id = a + 13;
        } else if (strcmp(a, "-g") == 0
                   || strcmp(a, "--ignore-formatted") == 0) {
            fa->ignore_formatted = true;
        } else if (strcmp(a, "-s") == 0 || strcmp(a, "--standalone") == 0) {
            fa->standalone = true;
        } else if (strcmp(a, "-I") == 0
                   || strcmp(a, "--initial-controllers") == 0) {
            fa->initial_controllers = format_arg_value(argc, argv, &i);
            if (fa->initial_controllers == NULL) {
                return false;
            }
        } else if (strncmp(a, "--initial-controllers=", 22) == 0) {
            fa->initial_controllers = a + 22;
        } else if (strcmp(a, "-N") == 0
                   || strcmp(a, "--no-initial-controllers") == 0) {
            fa->no_initial_controllers = true;
        } else if (strcmp(a, "-S") == 0 || strcmp(a, "--add-scram") == 0
                   || strncmp(a, "--add-scram=", 12) == 0) {
            v = a[1] == '-' && a[11] == '=' ? a + 12
                                            : format_arg_value(argc, argv, &i);
            if (v == NULL || !format_add_scram(fa, v)) {
                return false;
            }
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fa->help = true;
        } else if (strcmp(a, "-c") == 0 || strcmp(a, "--config") == 0) {
            if ((v = format_arg_value(argc, argv, &i)) == NULL) {
                return false;
            }
            fa->rest[fa->nrest++] = (char *) v;
        } else if (strcmp(a, "--override") == 0 && i + 1 < argc) {
            fa->rest[fa->nrest++] = argv[i++];
            fa->rest[fa->nrest++] = argv[i];
        } else {
            fa->rest[fa->nrest++] = argv[i];
        }
    }
    return true;
}

/* Format dir; prints what it did.  False (message printed) on error. */
static bool
format_dir(const samsa_config_t *cfg, const char *dir, const char *what,
           const format_args_t *fa, size_t *nskipped)
{
    char         errstr[1024];
    bool         skipped, is_mdir;
    samsa_err_t  err;

    is_mdir = strcmp(what, "metadata") == 0;
    err = samsa_metaprops_format_id(dir, cfg->node_id, fa->cluster_id,
                                    is_mdir && fa->mdir_id[0] != '\0'
                                    ? fa->mdir_id : NULL,
                                    fa->ignore_formatted, &skipped, errstr,
                                    sizeof(errstr));
    if (err == SAMSA_ERR_NONE && is_mdir && !skipped && fa->write_voters) {
        err = samsa_bootvoters_write(dir, fa->voters, fa->nvoters, errstr,
                                     sizeof(errstr));
    }
    if (err == SAMSA_ERR_NONE && is_mdir && !skipped && fa->nscram > 0) {
        err = samsa_bootscram_write(dir, fa->scram, fa->nscram, errstr,
                                    sizeof(errstr));
    }
    if (err != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa-server format: %s\n", errstr);
        return false;
    }
    if (skipped) {
        printf("Log directory %s is already formatted for cluster.id %s; "
               "skipping it.\n", dir, fa->cluster_id);
        (*nskipped)++;
    } else {
        printf("Formatting %s directory %s with cluster.id %s and node.id "
               "%d.\n", what, dir, fa->cluster_id, (int) cfg->node_id);
    }
    return true;
}

/* The first controller listener's address, for --standalone: its
 * advertised address if it has one, else the listener's own. */
static bool
format_own_controller(const samsa_config_t *cfg, samsa_config_voter_t *v)
{
    const samsa_listener_t  *l = NULL;
    size_t                   i;

    for (i = 0; l == NULL && i < cfg->nadvertised_listeners; i++) {
        if (cfg->advertised_listeners[i].is_controller) {
            l = &cfg->advertised_listeners[i];
        }
    }
    for (i = 0; l == NULL && i < cfg->nlisteners; i++) {
        if (cfg->listeners[i].is_controller) {
            l = &cfg->listeners[i];
        }
    }
    if (l == NULL || l->host[0] == '\0' || l->port <= 0) {
        return false;
    }
    v->id = cfg->node_id;
    snprintf(v->addr.host, sizeof(v->addr.host), "%s", l->host);
    v->addr.port = l->port;
    return true;
}

/* --standalone / --initial-controllers / --no-initial-controllers against
 * the configuration (Kafka's Formatter rules), filling what the metadata
 * dir gets.  False (message printed) on error. */
static bool
format_quorum(const samsa_config_t *cfg, format_args_t *fa)
{
    const samsa_config_kraft_t  *k = samsa_config_kraft(cfg);
    char                         why[512];
    int                          nflags;
    size_t                       i;

    nflags = (fa->standalone ? 1 : 0) + (fa->initial_controllers != NULL)
             + (fa->no_initial_controllers ? 1 : 0);
    if (nflags > 1) {
        fprintf(stderr, "samsa-server format: only one of --standalone, "
                "--initial-controllers and --no-initial-controllers may be "
                "given\n");
        return false;
    }
    if (nflags == 1 && !k->dynamic) {
        fprintf(stderr, "samsa-server format: You cannot specify "
                "controller.quorum.voters and format the node with "
                "--initial-controllers, --standalone or "
                "--no-initial-controllers. If you want to use a dynamic "
                "quorum, remove controller.quorum.voters and specify "
                "controller.quorum.bootstrap.servers instead.\n");
        return false;
    }
    if (nflags == 1 && !(k->roles & SAMSA_CONFIG_ROLE_F_CONTROLLER)) {
        fprintf(stderr, "samsa-server format: --standalone, "
                "--initial-controllers and --no-initial-controllers are for "
                "a node with the 'controller' role (process.roles)\n");
        return false;
    }
    if (nflags == 0) {
        if (k->dynamic && (k->roles & SAMSA_CONFIG_ROLE_F_CONTROLLER)) {
            fprintf(stderr, "samsa-server format: Because "
                    "controller.quorum.voters is not set on this controller, "
                    "you must specify one of the following: --standalone, "
                    "--initial-controllers, or --no-initial-controllers.\n");
            return false;
        }
        return true;
    }
    fa->write_voters = true;
    if (fa->standalone) {
        fa->voters = samsa_calloc(1, sizeof(*fa->voters));
        if (!format_own_controller(cfg, &fa->voters[0])) {
            fprintf(stderr, "samsa-server format: --standalone needs a "
                    "controller listener with a host and a port "
                    "(listeners, controller.listener.names)\n");
            return false;
        }
        samsa_metaprops_random_id(fa->voters[0].dir_id);
        fa->nvoters = 1;
    } else if (fa->initial_controllers != NULL) {
        if (samsa_config_initial_voters_parse(fa->initial_controllers, true,
                                              &fa->voters, &fa->nvoters,
                                              why, sizeof(why))
            != SAMSA_ERR_NONE) {
            fprintf(stderr, "samsa-server format: invalid "
                    "--initial-controllers: %s\n", why);
            return false;
        }
        for (i = 0; i < fa->nvoters; i++) {
            if (!samsa_metaprops_id_valid(fa->voters[i].dir_id, why,
                                          sizeof(why))) {
                fprintf(stderr, "samsa-server format: invalid "
                        "--initial-controllers: directory id of voter %d: "
                        "%s\n", (int) fa->voters[i].id, why);
                return false;
            }
        }
    }
    for (i = 0; i < fa->nvoters; i++) {
        if (fa->voters[i].id == cfg->node_id) {
            snprintf(fa->mdir_id, sizeof(fa->mdir_id), "%s",
                     fa->voters[i].dir_id);
        }
    }
    return true;
}

/* Every log dir, then metadata.log.dir when it is none of them (the
 * metadata dir is metadata.log.dir, else the first log dir). */
static int
format_dirs(const samsa_config_t *cfg, const format_args_t *fa)
{
    const char  *mdir = samsa_config_str(cfg, "metadata.log.dir");
    size_t       i, ndirs = cfg->nlog_dirs, nskipped = 0;
    bool         mdir_apart = mdir != NULL;

    if (mdir == NULL) {
        mdir = cfg->log_dirs[0];
    }
    for (i = 0; i < cfg->nlog_dirs; i++) {
        if (strcmp(mdir, cfg->log_dirs[i]) == 0) {
            mdir_apart = false;
        }
        if (!format_dir(cfg, cfg->log_dirs[i],
                        strcmp(mdir, cfg->log_dirs[i]) == 0 ? "metadata"
                                                            : "data",
                        fa, &nskipped)) {
            return 1;
        }
    }
    if (mdir_apart) {
        ndirs++;
        if (!format_dir(cfg, mdir, "metadata", fa, &nskipped)) {
            return 1;
        }
    }
    if (nskipped == ndirs) {
        printf("All of the log directories are already formatted.\n");
    }
    return 0;
}

static int
format_run(int argc, char **argv)
{
    format_args_t   fa = { 0 };
    samsa_config_t  cfg;
    char            errstr[1024], why[256];
    int             rc = 2;

    memset(&cfg, 0, sizeof(cfg));
    if (!format_args_parse(&fa, argc, argv)) {
        goto out;
    }
    if (fa.help) {
        format_usage(stdout);
        rc = 0;
        goto out;
    }
    if (fa.cluster_id == NULL) {
        fprintf(stderr, "samsa-server format: --cluster-id is required (make "
                "one with `samsa-server random-cluster-id`)\n");
        goto out;
    }
    rc = 1;
    if (!samsa_metaprops_id_valid(fa.cluster_id, why, sizeof(why))) {
        fprintf(stderr, "samsa-server format: invalid --cluster-id: "
                "Cluster ID string %s\n", why);
        goto out;
    }
    if (samsa_config_from_args(&cfg, fa.nrest, fa.rest, errstr,
                               sizeof(errstr)) != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa-server format: %s\n", errstr);
        goto out;
    }
    if (cfg.nlog_dirs == 0) {           /* -V: nothing was loaded */
        format_usage(stderr);
        rc = 2;
        goto out;
    }
    if (!format_quorum(&cfg, &fa)) {
        goto out;
    }
    rc = format_dirs(&cfg, &fa);
out:
    samsa_bootscram_free(fa.scram, fa.nscram);
    samsa_free(fa.voters);
    samsa_config_fini(&cfg);
    samsa_free(fa.rest);
    return rc;
}

bool
samsa_format_is_command(int argc, char **argv)
{
    return argc > 1 && (strcmp(argv[1], "format") == 0
                        || strcmp(argv[1], "random-cluster-id") == 0);
}

int
samsa_format_main(int argc, char **argv)
{
    char  id[SAMSA_UUID_STR_SIZE];

    if (strcmp(argv[1], "format") == 0) {
        return format_run(argc, argv);
    }
    if (argc > 2) {
        fprintf(stderr, "samsa-server random-cluster-id: unexpected argument "
                "'%s'\n", argv[2]);
        return 2;
    }
    samsa_metaprops_random_id(id);
    printf("%s\n", id);
    return 0;
}
