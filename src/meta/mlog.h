/*
 * meta/mlog.h - the controller's metadata log, __cluster_metadata-0 in
 * metadata.log.dir: Kafka's KRaft log, stored with the log layer's
 * partition log (log/plog.h) like any partition.  Its records are
 * metadata records framed as Kafka frames them (frame version, type,
 * version, body: samsa_MetadataRecords_encode_framed), with null keys, in
 * ordinary uncompressed record batches (magic 2), one batch per controller
 * operation so that an operation is all or nothing.
 *
 * Threads: the controller thread only (open and replay run on main before
 * it starts).
 * Ownership: the controller owns the samsa_mlog_t.
 */
#ifndef SAMSA_META_MLOG_H
#define SAMSA_META_MLOG_H

#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>
#include "proto/gen/MetadataRecords.h"
#include "util/arena.h"

typedef struct samsa_mlog samsa_mlog_t;

#define SAMSA_MLOG_PARTITION_DIR  "__cluster_metadata-0"

/* Called once per record, in offset order; rec's strings and arrays live
 * until the callback returns.  An error stops the replay and is returned
 * by samsa_mlog_open() with errstr. */
typedef samsa_err_t samsa_mlog_replay_fn(void *ctx,
                                         const samsa_MetadataRecords_any_t *rec,
                                         int64_t offset, char *errstr,
                                         size_t errstr_size);

/* Open <dir>/__cluster_metadata-0 (creating dir and the log if needed;
 * the log layer recovers a torn tail first) and replay every record.
 * Errors: SAMSA_ERR__IO (files), SAMSA_ERR__BAD_MSG (a batch or record
 * that does not decode: errstr names its offset), or the callback's. */
SAMSA_MUST_CHECK samsa_err_t samsa_mlog_open(samsa_mlog_t **mlog,
                                             const char *dir,
                                             samsa_mlog_replay_fn *replay,
                                             void *ctx, char *errstr,
                                             size_t errstr_size);

/* Offset the next appended record will get (the log end offset). */
int64_t samsa_mlog_next_offset(const samsa_mlog_t *mlog);

/* Append n framed records (values back to back in data, lens[i] bytes
 * each) as one batch at samsa_mlog_next_offset(), and fdatasync: when this
 * returns SAMSA_ERR_NONE the batch is durable.  SAMSA_ERR__IO otherwise
 * (errstr says why); the log's state is then unknown and the caller must
 * stop writing. */
SAMSA_MUST_CHECK samsa_err_t samsa_mlog_append(samsa_mlog_t *mlog,
                                               const uint8_t *data,
                                               const size_t *lens, size_t n,
                                               char *errstr,
                                               size_t errstr_size);

/* Close the log.  NULL is a no-op. */
void samsa_mlog_close(samsa_mlog_t *mlog);

#endif /* SAMSA_META_MLOG_H */
