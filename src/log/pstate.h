/*
 * log/pstate.h - one partition's producer state, Kafka's
 * ProducerStateManager (KIP-98, KIP-360): per producer id its epoch, the
 * last five batches' sequence and offset ranges (duplicate detection), the
 * coordinator epoch of its last transaction marker and the first offset
 * of its open transaction; the open transactions in offset order (the
 * first unstable offset, which bounds the last stable offset); and the
 * snapshot file format (<offset>.snapshot, Kafka's version 1).
 *
 * Appends go through samsa_pstate_apply(): it checks every batch of the
 * blob with Kafka's rules and applies it at once, remembering what it
 * changed, so that samsa_pstate_undo() can take it back when the write
 * fails; samsa_pstate_commit() forgets the undo information.
 *
 * Threads: none of its own.  The partition log owns one and uses it only
 * with its plog lock held; the snapshot codec is pure and any thread may
 * call it.
 */
#ifndef SAMSA_LOG_PSTATE_H
#define SAMSA_LOG_PSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "proto/batch.h"
#include "util/buf.h"

#define SAMSA_PSTATE_BATCHES        5   /* NUM_BATCHES_TO_RETAIN */
#define SAMSA_PSTATE_SNAPSHOT_V1    1
#define SAMSA_PSTATE_ENTRY_SIZE     46  /* one snapshot entry */
#define SAMSA_PSTATE_HEADER_SIZE    10  /* version, crc, count */

typedef struct samsa_pstate samsa_pstate_t;

/* One batch of a producer, as its sequence numbers and offsets. */
typedef struct samsa_pstate_batch {
    int32_t  first_seq;
    int32_t  last_seq;
    int64_t  first_offset;
    int64_t  last_offset;
    int64_t  timestamp;             /* the batch's MaxTimestamp */
} samsa_pstate_batch_t;

/* One producer id's state (Kafka's ProducerStateEntry). */
typedef struct samsa_pstate_entry {
    int64_t               producer_id;
    int16_t               epoch;            /* -1: none yet */
    int32_t               coordinator_epoch; /* -1: no marker seen */
    int64_t               last_timestamp;   /* last batch's or marker's
                                               MaxTimestamp (expiry) */
    int64_t               txn_first_offset; /* -1: no open transaction */
    int                   nbatches;
    samsa_pstate_batch_t  batches[SAMSA_PSTATE_BATCHES]; /* oldest first */
} samsa_pstate_entry_t;

/* Who appends: a producer (every check), a coordinator's markers (epochs
 * checked, sequences not), or a replay of the log at load (no checks). */
typedef enum samsa_pstate_origin {
    SAMSA_PSTATE_CLIENT,
    SAMSA_PSTATE_COORDINATOR,
    SAMSA_PSTATE_REPLAY,
} samsa_pstate_origin_t;

/* A transaction ended by a marker. */
typedef struct samsa_pstate_completed {
    int64_t  producer_id;
    int64_t  first_offset;
    int64_t  last_offset;           /* the marker's offset */
    bool     aborted;
} samsa_pstate_completed_t;

/* What one apply changed (undo information and ended transactions).
 * Init with samsa_pstate_change_init(); release with commit or undo. */
typedef struct samsa_pstate_change {
    struct samsa_pstate_saved       *saved;
    size_t                     nsaved;
    samsa_pstate_completed_t  *done;
    size_t                     ndone;
    bool                       ongoing_changed;
} samsa_pstate_change_t;

samsa_pstate_t *samsa_pstate_new(void);
void samsa_pstate_free(samsa_pstate_t *ps);     /* NULL: no-op */

/* Forget every producer. */
void samsa_pstate_clear(samsa_pstate_t *ps);

void samsa_pstate_change_init(samsa_pstate_change_t *ch);

/* Check and apply every batch of a validated records blob whose first
 * batch gets offset first_offset (the rest follow on).  Kafka's rules:
 *  - producer id -1: untouched (a transactional batch without one is
 *    INVALID_RECORD);
 *  - CLIENT: a batch equal (epoch, first and last sequence) to one of the
 *    producer's last five is a duplicate: *dup gets that batch, the blob
 *    is not applied and nothing must be written;
 *  - an epoch below the producer's: INVALID_PRODUCER_EPOCH (CLIENT,
 *    COORDINATOR);
 *  - CLIENT: a new epoch must start at sequence 0 unless the producer is
 *    unknown (any sequence is accepted then, as Kafka does since KIP-360);
 *    the same epoch must continue at last sequence + 1 (wrapping from
 *    INT32_MAX to 0): else OUT_OF_ORDER_SEQUENCE_NUMBER;
 *  - CLIENT: a non-transactional batch from a producer with an open
 *    transaction: INVALID_TXN_STATE; a negative sequence: INVALID_RECORD;
 *  - markers: a coordinator epoch below the last one seen:
 *    TRANSACTION_COORDINATOR_FENCED; a marker ends the producer's
 *    transaction (ch->done lists it when it had one).
 * On error nothing stays applied and *msg (may be NULL) says why (static
 * text).  *is_dup is set for a duplicate.
 * @returns SAMSA_ERR_NONE, or the error above. */
SAMSA_MUST_CHECK samsa_err_t samsa_pstate_apply(
    samsa_pstate_t *ps, const uint8_t *records, size_t len,
    int64_t first_offset, samsa_pstate_origin_t origin,
    samsa_pstate_change_t *ch, bool *is_dup, samsa_pstate_batch_t *dup,
    const char **msg);

/* Apply one batch given by its header (replay at load; a control batch's
 * marker type and coordinator epoch are passed in, ctl_type -1 for a
 * control batch that holds no marker).  Never fails. */
void samsa_pstate_replay(samsa_pstate_t *ps, const samsa_batch_hdr_t *hdr,
                         int16_t ctl_type, int32_t coordinator_epoch,
                         samsa_pstate_change_t *ch);

/* Take back what ch applied; releases ch. */
void samsa_pstate_undo(samsa_pstate_t *ps, samsa_pstate_change_t *ch);

/* Keep what ch applied; releases ch. */
void samsa_pstate_commit(samsa_pstate_t *ps, samsa_pstate_change_t *ch);

/* The first offset of the oldest open transaction, or -1 if none. */
int64_t samsa_pstate_first_unstable(const samsa_pstate_t *ps);

/* Kafka's lastStableOffset(completedTxn) for a transaction that just
 * ended: the first offset of the oldest transaction still open, else the
 * marker's offset + 1. */
int64_t samsa_pstate_lso_after(const samsa_pstate_t *ps,
                               const samsa_pstate_completed_t *done);

/* Remove producers without an open transaction whose last timestamp is
 * expiration_ms or more before now_ms (producer.id.expiration.ms).
 * @returns how many were removed. */
size_t samsa_pstate_expire(samsa_pstate_t *ps, int64_t now_ms,
                           int64_t expiration_ms);

size_t samsa_pstate_count(const samsa_pstate_t *ps);

/* The state of producer_id, or NULL (borrowed until the next change). */
const samsa_pstate_entry_t *samsa_pstate_find(const samsa_pstate_t *ps,
                                              int64_t producer_id);

/* A copy of every entry (samsa_free() it), ordered by producer id. */
size_t samsa_pstate_list(const samsa_pstate_t *ps,
                         samsa_pstate_entry_t **out);

/* ---- snapshots ----------------------------------------------------------- */

/* Encode the state as a version-1 snapshot into out (appended).  Kafka's
 * format (big-endian): Version int16 | Crc uint32 (CRC-32C of what
 * follows) | Count int32 | Count x (ProducerId int64, Epoch int16,
 * LastSequence int32, LastOffset int64, OffsetDelta int32, Timestamp
 * int64, CoordinatorEpoch int32, CurrentTxnFirstOffset int64).  Kafka
 * writes one entry per producer (its last batch); Samsa writes one per
 * retained batch, oldest first (a producer without batches gets one with
 * LastSequence and LastOffset -1), so that Kafka, which keeps the last
 * entry of a producer id, reads what it would have written, and Samsa
 * gets all five batches back. */
void samsa_pstate_encode(const samsa_pstate_t *ps, samsa_buf_t *out);

/* Decode a snapshot into ps (which is cleared first).  Rejects (with
 * CORRUPT_MESSAGE, ps left empty) a wrong version, size or CRC and
 * impossible values. */
SAMSA_MUST_CHECK samsa_err_t samsa_pstate_decode(samsa_pstate_t *ps,
                                                 const uint8_t *p,
                                                 size_t len);

/* The sequence number n after seq, wrapping past INT32_MAX to 0 (Kafka's
 * DefaultRecordBatch.incrementSequence). */
int32_t samsa_pstate_seq_add(int32_t seq, int32_t n);

#endif /* SAMSA_LOG_PSTATE_H */
