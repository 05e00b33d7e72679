/*
 * bench/rdk_mock.c - librdkafka's in-memory mock cluster as a process, so
 * that bench/rdk_perf runs the same way against it as against samsa-server.
 *
 *   rdk_mock [-n BROKERS] [-t TOPIC:PARTITIONS]...
 *
 * Starts rd_kafka_mock_cluster_new() (1 broker by default), creates the
 * -t topics, prints the bootstrap address ("127.0.0.1:PORT") on one line of
 * stdout, and stays up until SIGINT or SIGTERM.  The mock keeps produced
 * batches in memory only (and drops old ones beyond its small per-partition
 * limits): it measures what a client and one loopback connection cost,
 * with next to no broker work.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

static volatile sig_atomic_t  mock_stop;

static void
mock_on_signal(int sig)
{
    (void) sig;
    mock_stop = 1;
}

static int
mock_topic(rd_kafka_mock_cluster_t *mc, const char *arg)
{
    const char  *colon = strrchr(arg, ':');
    char         name[256];
    int          parts;

    if (colon == NULL || (size_t) (colon - arg) >= sizeof(name)
        || (parts = atoi(colon + 1)) <= 0) {
        fprintf(stderr, "rdk_mock: -t %s: expected TOPIC:PARTITIONS\n", arg);
        return -1;
    }
    memcpy(name, arg, (size_t) (colon - arg));
    name[colon - arg] = '\0';
    if (rd_kafka_mock_topic_create(mc, name, parts, 1) != 0) {
        fprintf(stderr, "rdk_mock: cannot create %s\n", name);
        return -1;
    }
    return 0;
}

int
main(int argc, char **argv)
{
    rd_kafka_conf_t          *conf = rd_kafka_conf_new();
    rd_kafka_mock_cluster_t  *mc;
    rd_kafka_t               *rk;
    struct sigaction          sa;
    char                      err[512];
    int                       i, brokers = 1;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            brokers = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-t") != 0 || i + 1 >= argc) {
            fprintf(stderr, "usage: rdk_mock [-n BROKERS] "
                    "[-t TOPIC:PARTITIONS]...\n");
            return 2;
        } else {
            i++;
        }
    }
    /* The mock cluster needs a client handle to live in; it is not used. */
    rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    if (rk == NULL) {
        fprintf(stderr, "rdk_mock: rd_kafka_new: %s\n", err);
        return 1;
    }
    mc = rd_kafka_mock_cluster_new(rk, brokers);
    if (mc == NULL) {
        fprintf(stderr, "rdk_mock: rd_kafka_mock_cluster_new failed\n");
        rd_kafka_destroy(rk);
        return 1;
    }
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-t") == 0 && mock_topic(mc, argv[++i]) != 0) {
            goto out;
        } else if (strcmp(argv[i], "-n") == 0) {
            i++;
        }
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = mock_on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    printf("%s\n", rd_kafka_mock_cluster_bootstraps(mc));
    fflush(stdout);
    while (!mock_stop) {
        pause();
    }
out:
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
    return 0;
}
