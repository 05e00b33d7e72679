/*
 * log/plog_int.h - the inside of samsa_plog_t, shared by plog.c (life
 * cycle, append, flush) and plog_ends.c (reads, ListOffsets, retention,
 * DeleteRecords, truncation).  Nothing outside log/plog*.c includes it.
 */
#ifndef SAMSA_LOG_PLOG_INT_H
#define SAMSA_LOG_PLOG_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "log/epochs.h"
#include "log/plog.h"
#include "log/pstate.h"

/* An immutable snapshot of the segment list: oldest first, the last one
 * active, one segment reference per slot.  Replaced whole (copy on write)
 * by the writer; readers take a reference on the snapshot under
 * segs_lock and use it without any lock. */
typedef struct samsa_plog_segs {
    _Atomic int    refcnt;          /* [atomic] last put frees */
    size_t         n;               /* [const] >= 1 */
    samsa_seg_t   *seg[];           /* [const] */
} samsa_plog_segs_t;

/* Segment files renamed to .deleted, unlinked once due.  The entry holds
 * a reference to the segment, so that a reader still holding the segment
 * when the files go can be kept on open descriptors (samsa_plog_purge). */
typedef struct samsa_plog_doomed {
    samsa_seg_t  *seg;      /* a reference of the list's own */
    int64_t       due_ms;
} samsa_plog_doomed_t;

typedef enum samsa_plog_state {
    SAMSA_PLOG_OPEN,
    SAMSA_PLOG_CLOSED,              /* samsa_plog_close() ran */
    SAMSA_PLOG_DELETED,             /* samsa_plog_delete() ran */
} samsa_plog_state_t;

/*
 * samsa_plog_t - see plog.h.  [lock] fields are read and written with
 * `lock` held; [atomic] ones are written with `lock` (or, for the flush
 * offsets, flush_lock) held and read anywhere.
 */
struct samsa_plog {
    _Atomic int               refcnt;       /* [atomic] */
    char                     *topic;        /* [const] */
    int32_t                   partition;    /* [const] */
    samsa_uuid_t              topic_id;     /* [const] */
    char                     *parent;       /* [const] the log dir */
    char                     *dir;          /* [const] <parent>/<t>-<p> */

    pthread_mutex_t           lock;         /* append, roll, truncate,
                                               retention, config */
    samsa_log_config_t        cfg;          /* [lock] */
    samsa_plog_state_t        state;        /* [lock] */
    int64_t                   leo;          /* [lock] next offset */
    int64_t                   roll_jitter_ms; /* [lock] for the active seg */
    int64_t                   flush_requested; /* [lock] highest offset a
                                                  flush was asked for */
    bool                      flush_full;   /* [lock] a FULL flush asked */
    bool                      dir_dirty;    /* [lock] files were created:
                                               fsync the dir next flush */
    uint64_t                  trunc_gen;    /* [lock] bumped by truncation,
                                               so a flush started before
                                               one does not move offsets */
    samsa_plog_doomed_t      *doomed;       /* [lock] */
    size_t                    ndoomed;      /* [lock] */
    size_t                    doomed_cap;   /* [lock] */

    samsa_pstate_t           *ps;           /* [lock] producer state */
    int64_t                   last_expiry_ms; /* [lock] last producer
                                                 expiry pass */
    _Atomic int64_t           first_unstable; /* [atomic] first offset of
                                                 the oldest open
                                                 transaction, INT64_MAX if
                                                 none; stored before hwm */

    pthread_mutex_t           segs_lock;    /* guards the segs pointer;
                                               held only to swap it or take
                                               a reference (after lock) */
    samsa_plog_segs_t        *segs;         /* [segs_lock] written with lock
                                               held as well, so the writer
                                               reads it under lock alone */

    bool                      keep_open;    /* [lock] the active segment
                                               stays pinned (the metadata
                                               log: samsa_plog_keep_open) */
    samsa_seg_t              *kept;         /* [lock] that pinned segment
                                               (a reference), or NULL */

    pthread_mutex_t           epochs_lock;  /* guards epochs (after lock) */
    samsa_epochs_t            epochs;       /* [epochs_lock] */

    _Atomic int64_t           leo_pub;      /* [atomic] leo, release after
                                               an append; readers acquire */
    _Atomic int64_t           hwm;          /* [atomic] high watermark, as
                                               leo_pub */
    _Atomic int64_t           log_start;    /* [atomic] */
    _Atomic bool              replicated;   /* [atomic] replication factor
                                               > 1: appends leave hwm to
                                               the replica manager
                                               (samsa_plog_set_replicated) */
    int64_t                   hw_ckpt;      /* [lock] the high watermark of
                                               replication-offset-checkpoint
                                               at start (-1: none), taken
                                               by the first
                                               samsa_plog_set_replicated */
    _Atomic bool              offline;      /* [atomic] an I/O error hit */

    pthread_mutex_t           flush_lock;   /* serialises flushes; held
                                               across fdatasync; before
                                               lock */
    _Atomic int64_t           durable;      /* [atomic] .log synced below */
    _Atomic int64_t           recovery_point; /* [atomic] all synced below */
    _Atomic int64_t           last_flush_ms;  /* [atomic] */

    _Atomic bool              flush_queued; /* [atomic] see
                                               samsa_plog_flush_claim() */
    samsa_plog_flush_want_t  *flusher;      /* [const] once shared */
    void                     *flusher_ctx;  /* [const] */

    _Atomic int64_t           clean_offset; /* [atomic] the log cleaner's
                                               first dirty offset (-1:
                                               none yet); see
                                               log/cleaner.h */
    _Atomic int64_t           horizon_due;  /* [atomic] earliest delete
                                               horizon the cleaner wrote
                                               and has not acted on yet
                                               (INT64_MAX: none) */
    _Atomic bool              cleaning;     /* [atomic] a cleaner thread
                                               has claimed the log */

    _Atomic uint64_t          n_appends;    /* [atomic] stats */
    _Atomic uint64_t          n_flushes;
    _Atomic uint64_t          n_fdatasyncs;
    _Atomic uint64_t          n_rolls;
    _Atomic uint64_t          n_messages_in;    /* [atomic] client appends */
    _Atomic uint64_t          n_bytes_in;       /* [atomic] their sizes */
    _Atomic uint64_t          n_bytes_out;      /* [atomic] sent to fetchers */
};

/* A reference on the current segment list.  @locks segs_lock taken */
samsa_plog_segs_t *samsa_plog_segs_get(samsa_plog_t *plog);
void samsa_plog_segs_put(samsa_plog_segs_t *segs);

/* The index of the last segment whose base is <= offset (0 if none). */
size_t samsa_plog_segs_find(const samsa_plog_segs_t *segs, int64_t offset);

/* Publish segs[from, to) plus extra (may be NULL) as the new list; the
 * new list takes its own references.  @locks lock held, segs_lock taken */
void samsa_plog_segs_replace(samsa_plog_t *plog, size_t from, size_t to,
                             samsa_seg_t *extra);

/* Roll to a new active segment at the LEO.  @locks lock held */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_roll(samsa_plog_t *plog,
                                             int64_t now_ms);

/* Move the log start offset up (never down) and trim the epoch cache.
 * @locks lock held */
void samsa_plog_set_log_start(samsa_plog_t *plog, int64_t offset);

/* Remember a segment renamed to .deleted for unlinking once due.
 * @locks lock held */
void samsa_plog_doom(samsa_plog_t *plog, samsa_seg_t *seg, int64_t due_ms);

/* Take the log offline after an I/O error (reported by the caller). */
void samsa_plog_go_offline(samsa_plog_t *plog);

/* ---- producer state (plog_pstate.c) ---------------------------------- */

/* Load the producer state: the latest valid snapshot at or below trust
 * (snapshots past the LEO are deleted, unreadable ones reported and
 * deleted), then the batches after it, rebuilding the transaction
 * indexes of the segments replayed.  trust -1: no snapshot, replay the
 * whole log.  @locks lock held (or before the plog is shared) */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_pstate_load(samsa_plog_t *plog,
                                                    int64_t trust,
                                                    int64_t now_ms);

/* Write <LEO>.snapshot (sync: fdatasync it and the directory).  A failure
 * is reported and returned; the state can always be rebuilt from the
 * log.  @locks lock held */
samsa_err_t samsa_plog_pstate_snapshot(samsa_plog_t *plog, bool sync);
/* Whether a clean close should write one: something was appended since
 * the last snapshot (and the log is not empty).  @locks lock held */
bool samsa_plog_pstate_snapshot_due(samsa_plog_t *plog);

/* Delete the snapshots below offset (their segments went).
 * @locks lock held */
void samsa_plog_pstate_drop_snapshots(samsa_plog_t *plog, int64_t offset);

/* Publish the first unstable offset.  @locks lock held */
void samsa_plog_pstate_publish(samsa_plog_t *plog);

/* Record the aborted transactions a committed append ended in the active
 * segment's transaction index.  @locks lock held */
/* Write records (len bytes, whose producer-state change ch is made but
 * not committed) to the active segment, pinned meanwhile, and index ch;
 * then commit and publish ch.  On failure ch is undone and: _NOFILE
 * (nothing written, retriable), KAFKA_STORAGE_ERROR (disk full, the
 * segment as before), or another error with the log taken offline.  The
 * leader's and the follower's appends.  @locks lock held */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_write_active(
    samsa_plog_t *plog, const uint8_t *records, size_t len,
    samsa_pstate_change_t *ch);

SAMSA_MUST_CHECK samsa_err_t samsa_plog_pstate_index(
    samsa_plog_t *plog, samsa_seg_t *seg, const samsa_pstate_change_t *ch);

/* Record a new leader epoch starting at offset (kept when it is above
 * the latest).  @locks lock held */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_note_epoch(samsa_plog_t *plog,
                                                   int32_t epoch,
                                                   int64_t offset);

/* Whether the append just made reaches flush.messages; if so res's
 * durable_wanted is set and a flush is wanted.  @locks lock held */
bool samsa_plog_flush_policy(samsa_plog_t *plog,
                             samsa_plog_append_result_t *res);

/* SAMSA_ERR_NONE if appends and deletions may run.  @locks lock held */
samsa_err_t samsa_plog_check_writable(samsa_plog_t *plog);

#endif /* SAMSA_LOG_PLOG_INT_H */
