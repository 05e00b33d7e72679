/*
 * meta/metaprops.h - meta.properties, the identity file Kafka keeps in each
 * log directory (version=1, cluster.id, node.id, directory.id).  A first
 * start formats an empty directory by itself: it creates it and writes a
 * new file; later starts check the file against the configuration.
 * Threads: main, before any server starts.
 */
#ifndef SAMSA_META_METAPROPS_H
#define SAMSA_META_METAPROPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#define SAMSA_UUID_STR_SIZE 23          /* 22 base64url characters + NUL */

/* Make sure dir exists and holds a meta.properties for node_id.
 * cluster_id is in/out: if empty, a formatted directory's id is copied out,
 * or a new id is made when formatting; if set, it must match the file's.
 * *formatted tells whether a new file was written.  Errors name the file. */
SAMSA_MUST_CHECK samsa_err_t samsa_metaprops_ensure(
    const char *dir, int32_t node_id, char cluster_id[SAMSA_UUID_STR_SIZE],
    bool *formatted, char *errstr, size_t errstr_size);

#endif /* SAMSA_META_METAPROPS_H */
