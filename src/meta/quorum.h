/*
 * meta/quorum.h - the metadata quorum: N samsa servers replicate one
 * metadata log with Raft (Debian's libraft 0.15 and its raft_uv storage),
 * Kafka's KRaft quorum in samsa's terms.  The controller appends opaque
 * entries (its record batches) on the leader; every member gets every
 * committed entry, in the same order, through the commit callback.
 *
 * Ids: Kafka's node.id n is raft id n + 1 (raft ids are never 0).  A
 * member's raft address is "host:port" of its CONTROLLER listener.
 *
 * Offsets: assigned at apply time, Kafka-style.  Each entry says how many
 * records it holds (append's count, >= 1); the first committed entry has
 * offset 0 and each entry's offset is the previous one's plus its count,
 * so offsets count records as Kafka's metadata offsets do.  The next
 * offset is saved in every snapshot.  Raft indexes (which also count
 * configuration and barrier entries) appear only in samsa_quorum_describe,
 * next to the offsets they map to.
 *
 * Entry format (in the raft log): u32 payload length, u32 record count,
 * payload, zero padding to a multiple of 8 bytes.  libraft 0.15 silently
 * loses or garbles entries whose length is not a multiple of 8 at the
 * next restart (its segment writer reserves the padded size but writes
 * only len bytes; the check is an assert, compiled out in Debian's
 * build), so the padding is not optional (test_quorum fails without).
 *
 * Snapshot format: u64 next offset, u64 payload length, payload (what
 * snapshot_take produced).
 *
 * Leadership: leader_change runs whenever the (leader, epoch) pair this
 * node knows changes; epoch is the raft term.  When this node becomes
 * leader it first commits a raft barrier, and only then reports is_self:
 * by then every entry of earlier terms has been through commit.  Until
 * then it reports leader -1.  samsa_quorum_leader() reads the same state.
 *
 * Threads: open and close on one owning thread (main); append, leader,
 * describe and the membership calls from any thread; adopt_fd from any
 * thread.  The quorum runs one thread, "quorum", with a libuv loop; every
 * libraft call and every callback of the conf (commit, leader_change,
 * snapshot_take, snapshot_restore) and every done callback runs there.
 * Callbacks must not block for long and must not call close; they may
 * call append (the entry is queued).
 * Ownership: the opener owns the samsa_quorum_t; open copies the conf.
 */
#ifndef SAMSA_META_QUORUM_H
#define SAMSA_META_QUORUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

typedef struct samsa_quorum samsa_quorum_t;

/* Largest payload one append takes. */
#define SAMSA_QUORUM_ENTRY_MAX  (64u * 1024 * 1024)

/* One member of controller.quorum.voters: id@host:port. */
typedef struct samsa_quorum_voter {
    int32_t      node_id;
    const char  *host;
    uint16_t     port;
    /* the voter's metadata directory id (KIP-853; a dynamic quorum's
     * voters have one), NULL or "": none.  Kept in the raft
     * configuration as a suffix of the member's address,
     * "host:port#directory-id" */
    const char  *dir_id;
} samsa_quorum_voter_t;

#define SAMSA_QUORUM_DIR_ID_SIZE  23    /* a Kafka Uuid's text, with NUL */
#define SAMSA_QUORUM_HOST_MAX     256

/* A committed entry, on every member, in order.  data (len bytes, as
 * appended) lives until the callback returns.  Must not fail: an entry
 * that the state machine cannot use is the state machine's problem. */
typedef void samsa_quorum_commit_fn(void *ctx, const uint8_t *data,
                                    size_t len, int64_t offset,
                                    uint32_t count);

/* The leader changed: leader_node_id (-1: none known), epoch (the raft
 * term), is_self (this node leads and has committed everything before). */
typedef void samsa_quorum_leader_fn(void *ctx, int32_t leader_node_id,
                                    int64_t epoch, bool is_self);

/* Produce a snapshot of the state that covers every entry committed so
 * far (the next offset is next_offset): *data from samsa_malloc (the
 * quorum frees it), *len bytes.  An error skips this snapshot. */
typedef samsa_err_t samsa_quorum_snapshot_take_fn(void *ctx,
                                                  int64_t next_offset,
                                                  uint8_t **data,
                                                  size_t *len);

/* Replace the whole state with a snapshot (at open, or when the leader
 * sends one to a member that is behind); entries after it follow through
 * commit.  data lives until the callback returns. */
typedef void samsa_quorum_snapshot_restore_fn(void *ctx, const uint8_t *data,
                                              size_t len,
                                              int64_t next_offset);

/* An append's outcome: SAMSA_ERR_NONE with the entry's offset once it is
 * committed (after its commit callback ran on this node), or
 *   SAMSA_ERR_NOT_CONTROLLER  this node is not the leader (not written),
 *   SAMSA_ERR__STATE          leadership was lost while the entry was in
 *                             flight: it may or may not commit later (it
 *                             then shows up in commit like any entry),
 *   SAMSA_ERR__SHUTDOWN       the quorum is closing,
 *   SAMSA_ERR__INVALID_ARG    count 0 or len over SAMSA_QUORUM_ENTRY_MAX,
 *   SAMSA_ERR__IO             anything else libraft reported;
 * offset is -1 then. */
typedef void samsa_quorum_done_fn(void *ctx, samsa_err_t err,
                                  int64_t offset);

/* A membership change's outcome (add_voter, remove_voter, add_observer):
 * SAMSA_ERR_NONE once the new configuration is committed,
 * SAMSA_ERR_NOT_CONTROLLER (not the leader), SAMSA_ERR__STATE (another
 * change is in flight), SAMSA_ERR__EXISTS / SAMSA_ERR__NOENT (id already
 * a member / not one), SAMSA_ERR__TIMED_OUT (the new voter did not catch
 * up), SAMSA_ERR__SHUTDOWN, SAMSA_ERR__IO. */
typedef void samsa_quorum_change_fn(void *ctx, samsa_err_t err);

typedef struct samsa_quorum_conf {
    int32_t                       node_id;      /* Kafka node.id, >= 0 */
    /* whether node_id is in voters; a non-voter starts with an empty
     * configuration and waits to be added (add_observer/add_voter) */
    bool                          is_voter;
    const samsa_quorum_voter_t   *voters;       /* the initial voters */
    size_t                        n_voters;
    /* this node's address when it is not in voters (NULL: 127.0.0.1:0) */
    const char                   *host;
    uint16_t                      port;
    /* a non-voter nobody can dial (no CONTROLLER listener): it keeps a
     * "reverse" socket open to every voter, which the voters use to send
     * to it (quorum_transport.h); add it with port 0 */
    bool                          reverse_dial;
    const char                   *dir;          /* raft_uv's own dir */
    const char                   *cluster_id;   /* 1..255 bytes */
    uint32_t                      election_timeout_ms;  /* 0: 1000 */
    uint32_t                      heartbeat_ms;         /* 0: election/10 */
    bool                          no_pre_vote;          /* pre-vote is on */
    uint32_t                      snapshot_threshold;   /* 0: 1024 */
    uint32_t                      snapshot_trailing;    /* 0: 2048 */
    size_t                        segment_size;  /* 0: 8 MiB; 4 KiB units */
    uint32_t                      connect_retry_ms;     /* 0: 200 */
    samsa_quorum_commit_fn           *commit;
    samsa_quorum_leader_fn           *leader_change;   /* may be NULL */
    samsa_quorum_snapshot_take_fn    *snapshot_take;   /* NULL: no state,
                                                          empty snapshot */
    samsa_quorum_snapshot_restore_fn *snapshot_restore; /* may be NULL */
    void                             *ctx;
} samsa_quorum_conf_t;

/* One member as samsa_quorum_describe() reports it. */
typedef struct samsa_quorum_member {
    int32_t  node_id;
    /* its raft address: host and port ("broker-N", 0 for an observer
     * reached through its reverse socket) and directory id ("": none) */
    char     host[SAMSA_QUORUM_HOST_MAX];
    uint16_t port;
    char     dir_id[SAMSA_QUORUM_DIR_ID_SIZE];
    /* raft index this member is known to have (the leader's match index;
     * this node's own last index for itself); -1 where unknown (we are
     * not the leader) */
    int64_t  log_end_index;
    /* the offset after its log_end_index (what DescribeQuorum's
     * LogEndOffset wants), from a map of the last 4096 applied entries:
     * known only up to this node's last applied entry; -1 unknown */
    int64_t  log_end_offset;
    /* wall-clock ms of the last AppendEntries the leader sent it; -1
     * unknown (libraft 0.15 keeps no receive time) */
    int64_t  last_contact_ms;
} samsa_quorum_member_t;

#define SAMSA_QUORUM_DESCRIBE_MAX  64

/* What DescribeQuorum (API 55) answers from. */
typedef struct samsa_quorum_desc {
    int32_t                leader_node_id;      /* -1: none */
    int64_t                epoch;               /* current term */
    bool                   is_leader;           /* is_self was reported */
    int64_t                high_watermark;      /* commit index (raft
                                                   index, not an offset) */
    int64_t                high_watermark_offset;   /* as an offset; -1
                                                       unknown */
    int64_t                last_applied_index;
    int64_t                last_index;          /* this node's log end */
    int64_t                next_offset;         /* offset of the next entry */
    int64_t                snapshot_index;      /* last snapshot's index */
    uint64_t               refused_connections; /* bad handshakes */
    size_t                 n_voters;
    samsa_quorum_member_t  voters[SAMSA_QUORUM_DESCRIBE_MAX];
    size_t                 n_observers;
    samsa_quorum_member_t  observers[SAMSA_QUORUM_DESCRIBE_MAX];
} samsa_quorum_desc_t;

/* Start the quorum thread: open conf->dir (which must exist) with
 * raft_uv, on a pristine dir of a voter bootstrap the voters
 * configuration, load the log (snapshot_restore, if there is a snapshot)
 * and start taking part.  Returns once started.  Errors:
 * SAMSA_ERR__INVALID_ARG / SAMSA_ERR__CONFIG (conf), SAMSA_ERR__IO
 * (libraft: errstr has its message). */
SAMSA_MUST_CHECK samsa_err_t samsa_quorum_open(samsa_quorum_t **q,
                                               const samsa_quorum_conf_t *conf,
                                               char *errstr,
                                               size_t errstr_size);

/* Queue len bytes (copied) holding count records for the log; done (on
 * the quorum thread) says how it went.  SAMSA_ERR__SHUTDOWN if closing
 * (done is then not called). */
SAMSA_MUST_CHECK samsa_err_t samsa_quorum_append(samsa_quorum_t *q,
                                                 const void *data, size_t len,
                                                 uint32_t count,
                                                 samsa_quorum_done_fn *done,
                                                 void *ctx);

/* The leader as last reported to leader_change (-1 and the epoch if
 * none). */
void samsa_quorum_leader(samsa_quorum_t *q, int32_t *leader_node_id,
                         int64_t *epoch);

/* Fill out from the quorum thread's state (waits for it, at most
 * timeout_ms).  Errors: SAMSA_ERR__TIMED_OUT, SAMSA_ERR__SHUTDOWN. */
SAMSA_MUST_CHECK samsa_err_t samsa_quorum_describe(samsa_quorum_t *q,
                                                   samsa_quorum_desc_t *out,
                                                   int timeout_ms);

/* Membership changes, on the leader only (done gets NOT_CONTROLLER
 * elsewhere).  add_voter adds node_id@host:port and promotes it to voter
 * once it has caught up (or promotes an observer); add_observer adds it as
 * a standby that replicates but does not vote; remove_voter removes a
 * member (voter or observer).  SAMSA_ERR__SHUTDOWN if closing (done is
 * then not called). */
SAMSA_MUST_CHECK samsa_err_t samsa_quorum_add_voter(
    samsa_quorum_t *q, int32_t node_id, const char *host, uint16_t port,
    samsa_quorum_change_fn *done, void *ctx);
/* add_voter with the new voter's directory id (NULL: none), kept in the
 * configuration (samsa_quorum_voter_t.dir_id). */
SAMSA_MUST_CHECK samsa_err_t samsa_quorum_add_voter_dir(
    samsa_quorum_t *q, int32_t node_id, const char *host, uint16_t port,
    const char *dir_id, samsa_quorum_change_fn *done, void *ctx);
SAMSA_MUST_CHECK samsa_err_t samsa_quorum_add_observer(
    samsa_quorum_t *q, int32_t node_id, const char *host, uint16_t port,
    samsa_quorum_change_fn *done, void *ctx);
SAMSA_MUST_CHECK samsa_err_t samsa_quorum_remove_voter(
    samsa_quorum_t *q, int32_t node_id, samsa_quorum_change_fn *done,
    void *ctx);

/* Hand leadership to voter node_id (-1: the most up-to-date voter), for
 * a controlled shutdown of the active controller; on the leader only.
 * done: SAMSA_ERR_NONE once this node no longer leads,
 * SAMSA_ERR__TIMED_OUT if it still does (the target did not take over
 * within an election timeout), SAMSA_ERR_NOT_CONTROLLER (not the leader
 * or a transfer already running), SAMSA_ERR__NOENT (not a voter, or this
 * node).  SAMSA_ERR__SHUTDOWN if closing (done is then not called). */
SAMSA_MUST_CHECK samsa_err_t samsa_quorum_transfer(
    samsa_quorum_t *q, int32_t node_id, samsa_quorum_change_fn *done,
    void *ctx);

/* Hand over a socket accepted on the CONTROLLER listener whose first
 * bytes are one of the raft magics (samsa_quorum_transport_is_magic); the
 * quorum owns fd from now on, also on error (SAMSA_ERR__SHUTDOWN: it is
 * closed). */
SAMSA_MUST_CHECK samsa_err_t samsa_quorum_adopt_fd(samsa_quorum_t *q,
                                                   int fd);

/* Stop: queued appends and changes fail with SAMSA_ERR__SHUTDOWN; then,
 * taking no new work, wait (at most 5 s) until every log entry is stored
 * (libraft 0.15 crashes when it closes a leader with several log writes
 * pending); then raft closes and entries still in flight fail with
 * SAMSA_ERR__STATE (they may yet commit on the next leader); the thread
 * is joined, q is freed.  NULL is a no-op.  Must not be called on the
 * quorum thread.  For a controlled shutdown of the leader, transfer
 * first. */
void samsa_quorum_close(samsa_quorum_t *q);

#endif /* SAMSA_META_QUORUM_H */
