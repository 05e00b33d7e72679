/*
 * server/format.h - samsa-server's storage commands, as kafka-storage:
 *   samsa-server format --cluster-id ID [server.properties]
 *                       [--override key=value]... [--ignore-formatted]
 *     loads and checks the configuration as a start would, then writes a
 *     meta.properties (version 1, cluster.id, node.id, a new
 *     directory.id) into every log dir and metadata.log.dir;
 *   samsa-server random-cluster-id
 *     prints a fresh cluster id (22 characters of URL-safe base64).
 * Threads: main; nothing else runs.
 * Ownership: argv stays the caller's.
 */
#ifndef SAMSA_SERVER_FORMAT_H
#define SAMSA_SERVER_FORMAT_H

#include <stdbool.h>

/* True if argv[1] names a storage command ("format",
 * "random-cluster-id"). */
bool samsa_format_is_command(int argc, char **argv);

/* Run the command argv[1] names; returns the process exit status (0 done,
 * 1 failed with a message on stderr, 2 bad usage). */
int samsa_format_main(int argc, char **argv);

#endif /* SAMSA_SERVER_FORMAT_H */
