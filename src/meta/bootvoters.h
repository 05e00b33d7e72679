/*
 * meta/bootvoters.h - a dynamic quorum's initial voter set (KIP-853), as
 * `samsa-server format` wrote it: <metadata dir>/bootstrap.voters, one
 * key, initial.controllers=id@host:port:directory-id,... (Kafka's
 * --initial-controllers form; empty for a controller formatted with
 * --no-initial-controllers, which waits to be added by AddRaftVoter).
 * Kafka keeps the same set as a VotersRecord in the bootstrap checkpoint
 * of __cluster_metadata-0; the raft log's configuration supersedes it
 * once the quorum has started (libraft bootstraps only a pristine log).
 * Threads: main (format, and the start before any other thread).
 * Ownership: the caller owns what read returns (samsa_free).
 */
#ifndef SAMSA_META_BOOTVOTERS_H
#define SAMSA_META_BOOTVOTERS_H

#include <stdbool.h>
#include <stddef.h>

#include <samsa/errors.h>

#include "config/config_kraft.h"

#define SAMSA_BOOTVOTERS_FILE "bootstrap.voters"

/* Write mdir/bootstrap.voters (fsynced, atomically replaced): the n
 * voters (n 0: none, --no-initial-controllers).  SAMSA_ERR__IO with
 * errstr naming the file. */
SAMSA_MUST_CHECK samsa_err_t samsa_bootvoters_write(
    const char *mdir, const samsa_config_voter_t *voters, size_t n,
    char *errstr, size_t errstr_size);

/* Read mdir/bootstrap.voters: *voters (samsa_free; NULL when n is 0), *n.
 * A missing file is SAMSA_ERR__NOENT; a bad one SAMSA_ERR__CONFIG naming
 * the file and the entry; SAMSA_ERR__IO. */
SAMSA_MUST_CHECK samsa_err_t samsa_bootvoters_read(
    const char *mdir, samsa_config_voter_t **voters, size_t *n,
    char *errstr, size_t errstr_size);

#endif /* SAMSA_META_BOOTVOTERS_H */
