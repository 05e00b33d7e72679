/*
 * meta/quorum.c - the metadata quorum on libraft 0.15 (see quorum.h).
 *
 * Other threads talk to the quorum thread through one locked queue of
 * operations (append, membership change, describe, adopted socket) and a
 * uv_async_t, drained whole by its callback (uv_async_send coalesces).  A
 * uv_timer polls raft_state/raft_leader (0.15 has no state callback) and
 * turns changes into leader_change calls, after a barrier on a new leader.
 */
#include "meta/quorum.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

#include "meta/quorum_transport.h"
#include "util/alloc.h"
#include "util/diag.h"

#define QUORUM_ENTRY_HDR    8          /* u32 length, u32 count */
#define QUORUM_SNAP_HDR     16         /* u64 next offset, u64 length */
#define QUORUM_POLL_MS      5
/* how long close waits for the leader's pending log writes (see
 * quorum_close_ready) */
#define QUORUM_CLOSE_WAIT_MS 5000
#define QUORUM_ADDR_MAX     (SAMSA_QUORUM_TRANSPORT_STR_MAX + 1)
#define QUORUM_OFFMAP       4096       /* raft index -> offset, recent */

typedef enum quorum_op_type {
    QUORUM_OP_APPEND,
    QUORUM_OP_CHANGE,
    QUORUM_OP_DESCRIBE,
    QUORUM_OP_ADOPT,
    QUORUM_OP_TRANSFER,
} quorum_op_type_t;

typedef enum quorum_change_kind {
    QUORUM_CHANGE_ADD_VOTER,
    QUORUM_CHANGE_ADD_OBSERVER,
    QUORUM_CHANGE_REMOVE,
} quorum_change_kind_t;

typedef struct quorum_op quorum_op_t;
struct quorum_op {
    quorum_op_type_t        type;
    quorum_op_t            *next;
    samsa_quorum_t         *q;
    void                   *ctx;
    /* append */
    struct raft_apply       apply;
    struct raft_buffer      buf;
    samsa_quorum_done_fn   *done;
    /* change */
    struct raft_change      change;
    quorum_change_kind_t    kind;
    raft_id                 id;
    char                    address[QUORUM_ADDR_MAX];
    bool                    assigning;  /* raft_add done, raft_assign next */
    samsa_quorum_change_fn *change_done;
    /* describe: the caller waits on q->cond; refs 2 until one side lets go */
    samsa_quorum_desc_t     desc;
    bool                    finished;
    bool                    filled;
    int                     refs;
    /* adopt */
    int                     fd;
    /* transfer (id 0: libraft picks a voter) */
    struct raft_transfer    transfer;
};

typedef struct quorum_voter {
    int32_t  node_id;
    char     address[QUORUM_ADDR_MAX];
} quorum_voter_t;

struct samsa_quorum {
    /* the conf, copied */
    int32_t                           node_id;
    bool                              is_voter;
    quorum_voter_t                   *voters;
    size_t                            n_voters;
    char                              address[QUORUM_ADDR_MAX];
    char                             *dir;
    char                             *cluster_id;
    unsigned                          election_ms;
    unsigned                          heartbeat_ms;
    bool                              pre_vote;
    bool                              reverse_dial;
    unsigned                          snapshot_threshold;
    unsigned                          snapshot_trailing;
    size_t                            segment_size;
    unsigned                          connect_retry_ms;
    samsa_quorum_commit_fn           *commit;
    samsa_quorum_leader_fn           *leader_change;
    samsa_quorum_snapshot_take_fn    *snapshot_take;
    samsa_quorum_snapshot_restore_fn *snapshot_restore;
    void                             *ctx;

    pthread_t                         thread;
    pthread_mutex_t                   mu;
    pthread_cond_t                    cond;
    /* under mu */
    quorum_op_t                      *head;
    quorum_op_t                      *tail;
    bool                              closing;
    bool                              started;
    samsa_err_t                       start_err;
    char                              start_errstr[256];
    int32_t                           leader_node_id;   /* as reported */
    int64_t                           epoch;

    /* the quorum thread's own */
    uv_loop_t                         loop;
    struct raft                       raft;
    struct raft_io                    io;
    struct raft_fsm                   fsm;
    struct raft_uv_transport          transport;
    uv_async_t                        async;
    uv_timer_t                        poll;
    bool                              raft_closing;
    bool                              close_waiting;
    uint64_t                          close_deadline;
    int64_t                           next_offset;
    int64_t                           entry_offset;     /* of the last apply */
    /* the end offset after each recently applied entry, by raft index
     * (a ring, oldest first from offmap_head - offmap_n) */
    raft_index                        offmap_index[QUORUM_OFFMAP];
    int64_t                           offmap_offset[QUORUM_OFFMAP];
    size_t                            offmap_head;
    size_t                            offmap_n;
    struct raft_barrier               barrier;
    bool                              barrier_pending;
    raft_term                         barrier_term;
    raft_term                         led_term;  /* barrier done in it */
    bool                              reported;
    int32_t                           rep_leader;
    int64_t                           rep_epoch;
    bool                              rep_self;
};

/* ---- helpers ---------------------------------------------------------- */

static raft_id
quorum_raft_id(int32_t node_id)
{
    return (raft_id) node_id + 1;
}

static int32_t
quorum_node_id(raft_id id)
{
    return id == 0 ? -1 : (int32_t) (id - 1);
}

static void
quorum_format_address(char out[QUORUM_ADDR_MAX], const char *host,
                      uint16_t port, const char *dir_id)
{
    bool  v6 = strchr(host, ':') != NULL;

    snprintf(out, QUORUM_ADDR_MAX, "%s%s%s:%u%s%s", v6 ? "[" : "", host,
             v6 ? "]" : "", (unsigned) port,
             dir_id != NULL && dir_id[0] != '\0' ? "#" : "",
             dir_id != NULL ? dir_id : "");
}

/* A raft address back into m's host, port and directory id. */
static void
quorum_parse_address(const char *address, samsa_quorum_member_t *m)
{
    const char  *hash = strchr(address, '#');
    const char  *end = hash != NULL ? hash : address + strlen(address);
    const char  *colon = NULL, *p, *h = address;
    size_t       hlen;

    for (p = address; p < end; p++) {
        if (*p == ':') {
            colon = p;
        }
    }
    m->host[0] = '\0';
    m->port = 0;
    m->dir_id[0] = '\0';
    if (hash != NULL) {
        snprintf(m->dir_id, sizeof(m->dir_id), "%s", hash + 1);
    }
    if (colon == NULL) {
        return;
    }
    hlen = (size_t) (colon - address);
    if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    }
    if (hlen >= sizeof(m->host)) {
        return;
    }
    memcpy(m->host, h, hlen);
    m->host[hlen] = '\0';
    m->port = (uint16_t) strtoul(colon + 1, NULL, 10);
}

static uint32_t
quorum_get_u32(const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16
           | (uint32_t) p[3] << 24;
}

static void
quorum_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t) (v >> (8 * i));
    }
}

static uint64_t
quorum_get_u64(const uint8_t *p)
{
    return (uint64_t) quorum_get_u32(p)
           | (uint64_t) quorum_get_u32(p + 4) << 32;
}

static void
quorum_put_u64(uint8_t *p, uint64_t v)
{
    quorum_put_u32(p, (uint32_t) v);
    quorum_put_u32(p + 4, (uint32_t) (v >> 32));
}

/* libraft 0.15 loses entries whose length is not a multiple of 8. */
static size_t
quorum_pad8(size_t n)
{
    return (n + 7) & ~(size_t) 7;
}

static samsa_err_t
quorum_err_of_raft(int rv)
{
    switch (rv) {
    case 0:
        return SAMSA_ERR_NONE;
    case RAFT_NOTLEADER:
        return SAMSA_ERR_NOT_CONTROLLER;
    case RAFT_LEADERSHIPLOST:
    case RAFT_CANTCHANGE:
        return SAMSA_ERR__STATE;
    case RAFT_SHUTDOWN:
    case RAFT_CANCELED:
        return SAMSA_ERR__SHUTDOWN;
    case RAFT_DUPLICATEID:
    case RAFT_DUPLICATEADDRESS:
        return SAMSA_ERR__EXISTS;
    case RAFT_BADID:
        return SAMSA_ERR__NOENT;
    case RAFT_NOCONNECTION:
        return SAMSA_ERR__TIMED_OUT;
    case RAFT_TOOBIG:
        return SAMSA_ERR__INVALID_ARG;
    default:
        return SAMSA_ERR__IO;
    }
}

static int64_t
quorum_wall_ms(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- raft index -> offset, for describe -------------------------------- */

static void
quorum_offmap_push(samsa_quorum_t *q, raft_index index, int64_t end_offset)
{
    q->offmap_index[q->offmap_head] = index;
    q->offmap_offset[q->offmap_head] = end_offset;
    q->offmap_head = (q->offmap_head + 1) % QUORUM_OFFMAP;
    if (q->offmap_n < QUORUM_OFFMAP) {
        q->offmap_n++;
    }
}

/* The offset after every entry up to index (entries that are not
 * commands leave it as it is); -1 if index is older than the map. */
static int64_t
quorum_offmap_get(const samsa_quorum_t *q, raft_index index)
{
    for (size_t k = 1; k <= q->offmap_n; k++) {
        size_t  at = (q->offmap_head + QUORUM_OFFMAP - k) % QUORUM_OFFMAP;

        if (q->offmap_index[at] <= index) {
            return q->offmap_offset[at];
        }
    }
    return -1;
}

/* ---- the state machine (raft_fsm, version 1) --------------------------- */

static int
quorum_fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf,
                 void **result)
{
    samsa_quorum_t  *q = fsm->data;
    const uint8_t   *p = buf->base;
    uint32_t         len, count;

    /* must not fail: libraft would retry this entry forever */
    q->entry_offset = q->next_offset;
    *result = &q->entry_offset;
    if (buf->len < QUORUM_ENTRY_HDR) {
        samsa_error("quorum: committed entry of %zu bytes has no header, "
                    "skipped", buf->len);
        return 0;
    }
    len = quorum_get_u32(p);
    count = quorum_get_u32(p + 4);
    if ((size_t) len > buf->len - QUORUM_ENTRY_HDR || count == 0) {
        samsa_error("quorum: committed entry says %u bytes, %u records in "
                    "%zu bytes, skipped", len, count, buf->len);
        return 0;
    }
    q->next_offset += count;
    /* libraft applies index last_applied + 1 (replicationApply) */
    quorum_offmap_push(q, q->raft.last_applied + 1, q->next_offset);
    q->commit(q->ctx, p + QUORUM_ENTRY_HDR, len, q->entry_offset, count);
    return 0;
}

static int
quorum_fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[],
                    unsigned *n_bufs)
{
    samsa_quorum_t      *q = fsm->data;
    uint8_t             *data = NULL;
    size_t               len = 0;
    struct raft_buffer  *b;
    samsa_err_t          err;

    if (q->snapshot_take != NULL) {
        err = q->snapshot_take(q->ctx, q->next_offset, &data, &len);
        if (err != SAMSA_ERR_NONE) {
            samsa_warn("quorum: snapshot at offset %" PRId64 " skipped: %s",
                       q->next_offset, samsa_err_name(err));
            return RAFT_IOERR;
        }
    }
    b = raft_malloc(sizeof(*b));
    samsa_assert(b != NULL);
    b->len = quorum_pad8(QUORUM_SNAP_HDR + len);
    b->base = raft_calloc(1, b->len);
    samsa_assert(b->base != NULL);
    quorum_put_u64(b->base, (uint64_t) q->next_offset);
    quorum_put_u64((uint8_t *) b->base + 8, (uint64_t) len);
    if (len > 0) {
        memcpy((uint8_t *) b->base + QUORUM_SNAP_HDR, data, len);
    }
    samsa_free(data);
    *bufs = b;
    *n_bufs = 1;
    samsa_info("quorum: snapshot taken at offset %" PRId64 " (%zu bytes)",
               q->next_offset, len);
    return 0;
}

static int
quorum_fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
    samsa_quorum_t  *q = fsm->data;
    const uint8_t   *p = buf->base;
    uint64_t         len;

    if (buf->len < QUORUM_SNAP_HDR
        || (len = quorum_get_u64(p + 8)) > buf->len - QUORUM_SNAP_HDR) {
        samsa_error("quorum: snapshot of %zu bytes does not decode",
                    buf->len);
        return RAFT_CORRUPT;            /* libraft keeps its buffer */
    }
    q->next_offset = (int64_t) quorum_get_u64(p);
    q->offmap_n = 0;                    /* older indexes: unknown */
    if (q->snapshot_restore != NULL) {
        q->snapshot_restore(q->ctx, p + QUORUM_SNAP_HDR, (size_t) len,
                            q->next_offset);
    }
    samsa_info("quorum: snapshot restored, next offset %" PRId64,
               q->next_offset);
    raft_free(buf->base);               /* ours on success */
    return 0;
}

/* ---- leadership ------------------------------------------------------- */

static void quorum_poll_now(samsa_quorum_t *q);

static void
quorum_barrier_cb(struct raft_barrier *req, int status)
{
    samsa_quorum_t  *q = req->data;

    q->barrier_pending = false;
    if (status == 0 && raft_state(&q->raft) == RAFT_LEADER
        && q->raft.current_term == q->barrier_term) {
        q->led_term = q->barrier_term;
    }
    if (!q->close_waiting) {
        quorum_poll_now(q);
    }
}

static void
quorum_report(samsa_quorum_t *q, int32_t leader, int64_t epoch, bool self)
{
    if (q->reported && q->rep_leader == leader && q->rep_epoch == epoch
        && q->rep_self == self) {
        return;
    }
    q->reported = true;
    q->rep_leader = leader;
    q->rep_epoch = epoch;
    q->rep_self = self;
    pthread_mutex_lock(&q->mu);
    q->leader_node_id = leader;
    q->epoch = epoch;
    pthread_mutex_unlock(&q->mu);
    samsa_info("quorum: node %d: leader %d epoch %" PRId64 "%s", q->node_id,
               leader, epoch, self ? " (this node)" : "");
    if (q->leader_change != NULL) {
        q->leader_change(q->ctx, leader, epoch, self);
    }
}

static void
quorum_poll_now(samsa_quorum_t *q)
{
    raft_id      lid;
    const char  *laddr;
    int          state = raft_state(&q->raft);
    raft_term    term = q->raft.current_term;
    int          rv;

    raft_leader(&q->raft, &lid, &laddr);
    if (state != RAFT_LEADER) {
        quorum_report(q, quorum_node_id(lid), (int64_t) term, false);
        return;
    }
    if (q->led_term == term) {
        quorum_report(q, q->node_id, (int64_t) term, true);
        return;
    }
    quorum_report(q, -1, (int64_t) term, false);
    if (!q->barrier_pending) {
        q->barrier.data = q;
        rv = raft_barrier(&q->raft, &q->barrier, quorum_barrier_cb);
        if (rv == 0) {
            q->barrier_pending = true;
            q->barrier_term = term;
        } else {
            samsa_warn("quorum: barrier: %s", raft_strerror(rv));
        }
    }
}

static void quorum_raft_closed(struct raft *r);

/* libraft 0.15 crashes (a use of a truncated log: removeSuffix's assert,
 * compiled out in Debian's build) when raft_close cancels more than one
 * pending disk write of a leader: each cancelled write truncates the log
 * from its own index.  So close waits, taking no new work, until every
 * entry is stored, for at most QUORUM_CLOSE_WAIT_MS. */
static bool
quorum_close_ready(samsa_quorum_t *q)
{
    return q->raft.last_stored >= raft_last_index(&q->raft)
           || uv_now(&q->loop) >= q->close_deadline;
}

static void
quorum_close_raft(samsa_quorum_t *q)
{
    q->raft_closing = true;
    uv_timer_stop(&q->poll);
    raft_close(&q->raft, quorum_raft_closed);
}

static void
quorum_poll_cb(uv_timer_t *t)
{
    samsa_quorum_t  *q = t->data;

    if (q->close_waiting) {
        if (!q->raft_closing && quorum_close_ready(q)) {
            quorum_close_raft(q);
        }
        return;
    }
    quorum_poll_now(q);
}

/* ---- operations ------------------------------------------------------- */

static void
quorum_apply_cb(struct raft_apply *req, int status, void *result)
{
    quorum_op_t  *op = req->data;

    if (status == 0) {
        op->done(op->ctx, SAMSA_ERR_NONE, *(const int64_t *) result);
    } else {
        op->done(op->ctx, quorum_err_of_raft(status), -1);
    }
    samsa_free(op);
}

static void
quorum_do_append(samsa_quorum_t *q, quorum_op_t *op)
{
    int  rv;

    op->apply.data = op;
    rv = raft_apply(&q->raft, &op->apply, &op->buf, 1, quorum_apply_cb);
    if (rv != 0) {
        raft_free(op->buf.base);
        op->done(op->ctx, quorum_err_of_raft(rv), -1);
        samsa_free(op);
    }
}

static void quorum_change_cb(struct raft_change *req, int status);

static int
quorum_change_assign(samsa_quorum_t *q, quorum_op_t *op)
{
    int  role = op->kind == QUORUM_CHANGE_ADD_VOTER ? RAFT_VOTER
                                                    : RAFT_STANDBY;

    op->assigning = false;
    return raft_assign(&q->raft, &op->change, op->id, role,
                       quorum_change_cb);
}

static void
quorum_change_finish(quorum_op_t *op, int status)
{
    op->change_done(op->ctx, quorum_err_of_raft(status));
    samsa_free(op);
}

static void
quorum_change_cb(struct raft_change *req, int status)
{
    quorum_op_t  *op = req->data;
    int           rv;

    if (status == 0 && op->assigning && !op->q->raft_closing) {
        if ((rv = quorum_change_assign(op->q, op)) != 0) {
            quorum_change_finish(op, rv);
        }
        return;
    }
    quorum_change_finish(op, status);
}

static void
quorum_do_change(samsa_quorum_t *q, quorum_op_t *op)
{
    int  rv;

    op->change.data = op;
    if (op->kind == QUORUM_CHANGE_REMOVE) {
        rv = raft_remove(&q->raft, &op->change, op->id, quorum_change_cb);
    } else {
        op->assigning = true;
        rv = raft_add(&q->raft, &op->change, op->id, op->address,
                      quorum_change_cb);
        if (rv == RAFT_DUPLICATEID) {   /* already a member: promote */
            rv = quorum_change_assign(q, op);
        }
    }
    if (rv != 0) {
        quorum_change_finish(op, rv);
    }
}

/* The transfer is over: it worked if another node leads now (or nobody
 * yet: an election is running without us). */
static void
quorum_transfer_cb(struct raft_transfer *req)
{
    quorum_op_t     *op = req->data;
    samsa_quorum_t  *q = op->q;
    raft_id          lid;
    const char      *laddr;

    raft_leader(&q->raft, &lid, &laddr);
    op->change_done(op->ctx, raft_state(&q->raft) == RAFT_LEADER
                             && lid == q->raft.id
                                 ? SAMSA_ERR__TIMED_OUT : SAMSA_ERR_NONE);
    samsa_free(op);
}

static void
quorum_do_transfer(samsa_quorum_t *q, quorum_op_t *op)
{
    int  rv;

    op->transfer.data = op;
    rv = raft_transfer(&q->raft, &op->transfer, op->id, quorum_transfer_cb);
    if (rv != 0) {
        quorum_change_finish(op, rv);
    }
}

static void
quorum_describe_member(samsa_quorum_t *q, size_t i, samsa_quorum_member_t *m)
{
    const struct raft_server  *s = &q->raft.configuration.servers[i];
    uint64_t                   now = uv_now(&q->loop);

    m->node_id = quorum_node_id(s->id);
    quorum_parse_address(s->address, m);
    m->log_end_index = -1;
    m->log_end_offset = -1;
    m->last_contact_ms = -1;
    if (s->id == q->raft.id) {
        m->log_end_index = (int64_t) raft_last_index(&q->raft);
        m->last_contact_ms = quorum_wall_ms();
    } else if (raft_state(&q->raft) == RAFT_LEADER
               && q->raft.leader_state.progress != NULL) {
        const struct raft_progress  *p = &q->raft.leader_state.progress[i];

        m->log_end_index = (int64_t) p->match_index;
        if (p->last_send > 0 && p->last_send <= now) {
            m->last_contact_ms = quorum_wall_ms()
                                 - (int64_t) (now - p->last_send);
        }
    }
    if (m->log_end_index >= 0) {
        m->log_end_offset = quorum_offmap_get(q, (raft_index) m->log_end_index);
    }
}

static void
quorum_do_describe(samsa_quorum_t *q, samsa_quorum_desc_t *d)
{
    memset(d, 0, sizeof(*d));
    d->leader_node_id = q->reported ? q->rep_leader : -1;
    d->epoch = (int64_t) q->raft.current_term;
    d->is_leader = q->reported && q->rep_self;
    d->high_watermark = (int64_t) q->raft.commit_index;
    d->high_watermark_offset = quorum_offmap_get(q, q->raft.commit_index);
    d->last_applied_index = (int64_t) raft_last_applied(&q->raft);
    d->last_index = (int64_t) raft_last_index(&q->raft);
    d->next_offset = q->next_offset;
    d->snapshot_index = (int64_t) q->raft.log.snapshot.last_index;
    d->refused_connections = samsa_quorum_transport_refused(&q->transport);
    for (size_t i = 0; i < q->raft.configuration.n; i++) {
        bool  voter = q->raft.configuration.servers[i].role == RAFT_VOTER;

        if (voter && d->n_voters < SAMSA_QUORUM_DESCRIBE_MAX) {
            quorum_describe_member(q, i, &d->voters[d->n_voters++]);
        } else if (!voter && d->n_observers < SAMSA_QUORUM_DESCRIBE_MAX) {
            quorum_describe_member(q, i, &d->observers[d->n_observers++]);
        }
    }
}

static void
quorum_op_release(samsa_quorum_t *q, quorum_op_t *op)
{
    bool  last;

    pthread_mutex_lock(&q->mu);
    op->finished = true;
    last = --op->refs == 0;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->mu);
    if (last) {
        samsa_free(op);
    }
}

/* Fail op because the quorum is closing. */
static void
quorum_op_cancel(samsa_quorum_t *q, quorum_op_t *op)
{
    switch (op->type) {
    case QUORUM_OP_APPEND:
        raft_free(op->buf.base);
        op->done(op->ctx, SAMSA_ERR__SHUTDOWN, -1);
        samsa_free(op);
        break;
    case QUORUM_OP_CHANGE:
    case QUORUM_OP_TRANSFER:
        quorum_change_finish(op, RAFT_SHUTDOWN);
        break;
    case QUORUM_OP_DESCRIBE:
        quorum_op_release(q, op);       /* finished, nothing filled */
        break;
    case QUORUM_OP_ADOPT:
        close(op->fd);
        samsa_free(op);
        break;
    }
}

static void
quorum_op_run(samsa_quorum_t *q, quorum_op_t *op)
{
    switch (op->type) {
    case QUORUM_OP_APPEND:
        quorum_do_append(q, op);
        break;
    case QUORUM_OP_CHANGE:
        quorum_do_change(q, op);
        break;
    case QUORUM_OP_DESCRIBE:
        quorum_do_describe(q, &op->desc);
        op->filled = true;
        quorum_op_release(q, op);
        break;
    case QUORUM_OP_ADOPT:
        samsa_quorum_transport_adopt(&q->transport, op->fd);
        samsa_free(op);
        break;
    case QUORUM_OP_TRANSFER:
        quorum_do_transfer(q, op);
        break;
    }
}

static void
quorum_closed_handle(uv_handle_t *h)
{
    (void) h;
}

static void
quorum_raft_closed(struct raft *r)
{
    samsa_quorum_t  *q = r->data;

    raft_uv_close(&q->io);
    samsa_quorum_transport_fini(&q->transport);
    uv_close((uv_handle_t *) &q->async, quorum_closed_handle);
    uv_close((uv_handle_t *) &q->poll, quorum_closed_handle);
}

static void
quorum_async_cb(uv_async_t *a)
{
    samsa_quorum_t  *q = a->data;
    quorum_op_t     *op, *next;
    bool             closing;

    pthread_mutex_lock(&q->mu);
    op = q->head;
    q->head = q->tail = NULL;
    closing = q->closing;
    pthread_mutex_unlock(&q->mu);
    for (; op != NULL; op = next) {
        next = op->next;
        if (closing) {
            quorum_op_cancel(q, op);
        } else {
            quorum_op_run(q, op);
        }
    }
    if (closing && !q->close_waiting) {
        q->close_waiting = true;
        q->close_deadline = uv_now(&q->loop) + QUORUM_CLOSE_WAIT_MS;
        if (quorum_close_ready(q)) {
            quorum_close_raft(q);
        }
    }
}

/* Queue op for the quorum thread; false (op untouched) if closing. */
static bool
quorum_op_push(samsa_quorum_t *q, quorum_op_t *op)
{
    pthread_mutex_lock(&q->mu);
    if (q->closing) {
        pthread_mutex_unlock(&q->mu);
        return false;
    }
    op->q = q;
    op->next = NULL;
    if (q->tail != NULL) {
        q->tail->next = op;
    } else {
        q->head = op;
    }
    q->tail = op;
    pthread_mutex_unlock(&q->mu);
    uv_async_send(&q->async);
    return true;
}

/* ---- the thread ------------------------------------------------------- */

/* Which raft ids may connect to us: any but our own (two servers with
 * one node.id).  Not "members only": a node whose configuration is stale
 * (restarted after a change, or new and still empty) would then refuse
 * the very leader that brings it the newer configuration. */
static bool
quorum_peer_allowed(void *ctx, raft_id id)
{
    samsa_quorum_t  *q = ctx;

    return id != q->raft.id;
}

static int
quorum_bootstrap(samsa_quorum_t *q)
{
    struct raft_configuration  conf;
    int                        rv = 0;

    raft_configuration_init(&conf);
    for (size_t i = 0; i < q->n_voters && rv == 0; i++) {
        rv = raft_configuration_add(&conf, quorum_raft_id(q->voters[i].node_id),
                                    q->voters[i].address, RAFT_VOTER);
    }
    if (rv == 0) {
        rv = raft_bootstrap(&q->raft, &conf);
        if (rv == RAFT_CANTBOOTSTRAP) {
            rv = 0;                     /* not pristine: a restart */
        } else if (rv == 0) {
            samsa_info("quorum: bootstrapped %zu voters in %s", q->n_voters,
                       q->dir);
        }
    }
    raft_configuration_close(&conf);
    return rv;
}

static void
quorum_started(samsa_quorum_t *q, samsa_err_t err, const char *what,
               const char *msg)
{
    pthread_mutex_lock(&q->mu);
    q->started = true;
    q->start_err = err;
    if (err != SAMSA_ERR_NONE) {
        /* a long dir or message is cut short, never overrun */
        if (snprintf(q->start_errstr, sizeof(q->start_errstr),
                     "quorum: %s (%s): %s", what, q->dir, msg) < 0) {
            q->start_errstr[0] = '\0';
        }
    }
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->mu);
}

static void
quorum_fail_closed(struct raft *r)
{
    samsa_quorum_t  *q = r->data;

    raft_uv_close(&q->io);
    samsa_quorum_transport_fini(&q->transport);
}

/* raft_init succeeded, then something failed: close raft, end the loop. */
static void
quorum_fail_after_init(samsa_quorum_t *q, const char *what, const char *msg)
{
    q->raft.data = q;
    raft_close(&q->raft, quorum_fail_closed);
    uv_run(&q->loop, UV_RUN_DEFAULT);
    quorum_started(q, SAMSA_ERR__IO, what, msg);
}

static void
quorum_raft_errmsg(samsa_quorum_t *q, int rv, char *msg, size_t size)
{
    snprintf(msg, size, "%s: %s", raft_strerror(rv), raft_errmsg(&q->raft));
}

/* The transport, raft_uv and raft_init with our settings. */
static bool
quorum_raft_init(samsa_quorum_t *q)
{
    char  msg[RAFT_ERRMSG_BUF_SIZE + 64];
    int   rv;

    if (samsa_quorum_transport_init(&q->transport, &q->loop, q->cluster_id,
                                    msg, sizeof(msg))
        != SAMSA_ERR_NONE) {
        quorum_started(q, SAMSA_ERR__INVALID_ARG, "transport", msg);
        return false;
    }
    samsa_quorum_transport_set_retry(&q->transport, q->connect_retry_ms);
    samsa_quorum_transport_set_member_check(&q->transport, quorum_peer_allowed,
                                            q);
    if ((rv = raft_uv_init(&q->io, &q->loop, q->dir, &q->transport)) != 0) {
        quorum_started(q, SAMSA_ERR__IO, "raft_uv_init", q->io.errmsg);
        samsa_quorum_transport_fini(&q->transport);
        return false;
    }
    if (q->segment_size > 0) {
        raft_uv_set_segment_size(&q->io, q->segment_size);
    }
    raft_uv_set_connect_retry_delay(&q->io, q->connect_retry_ms);
    q->fsm.version = 1;
    q->fsm.data = q;
    q->fsm.apply = quorum_fsm_apply;
    q->fsm.snapshot = quorum_fsm_snapshot;
    q->fsm.restore = quorum_fsm_restore;
    rv = raft_init(&q->raft, &q->io, &q->fsm, quorum_raft_id(q->node_id),
                   q->address);
    if (rv != 0) {
        quorum_raft_errmsg(q, rv, msg, sizeof(msg));
        raft_uv_close(&q->io);
        samsa_quorum_transport_fini(&q->transport);
        quorum_started(q, SAMSA_ERR__IO, "raft_init", msg);
        return false;
    }
    q->raft.data = q;
    raft_set_election_timeout(&q->raft, q->election_ms);
    raft_set_heartbeat_timeout(&q->raft, q->heartbeat_ms);
    raft_set_pre_vote(&q->raft, q->pre_vote);
    raft_set_snapshot_threshold(&q->raft, q->snapshot_threshold);
    raft_set_snapshot_trailing(&q->raft, q->snapshot_trailing);
    return true;
}

/* Bootstrap (a voter's pristine dir), load and start; the reverse dials. */
static bool
quorum_thread_setup(samsa_quorum_t *q)
{
    char  msg[RAFT_ERRMSG_BUF_SIZE + 64];
    int   rv;

    if (!quorum_raft_init(q)) {
        return false;
    }
    if (q->is_voter && (rv = quorum_bootstrap(q)) != 0) {
        quorum_raft_errmsg(q, rv, msg, sizeof(msg));
        quorum_fail_after_init(q, "raft_bootstrap", msg);
        return false;
    }
    quorum_offmap_push(q, 0, 0);        /* before the first entry */
    if ((rv = raft_start(&q->raft)) != 0) {
        quorum_raft_errmsg(q, rv, msg, sizeof(msg));
        quorum_fail_after_init(q, "raft_start", msg);
        return false;
    }
    for (size_t i = 0; q->reverse_dial && i < q->n_voters; i++) {
        if (samsa_quorum_transport_reverse_dial(
                &q->transport, quorum_raft_id(q->voters[i].node_id),
                q->voters[i].address, msg, sizeof(msg))
            != SAMSA_ERR_NONE) {
            quorum_fail_after_init(q, "reverse dial", msg);
            return false;
        }
    }
    return true;
}

static void *
quorum_thread(void *arg)
{
    samsa_quorum_t  *q = arg;

    samsa_thread_name_set("quorum");
    if (uv_loop_init(&q->loop) != 0) {
        quorum_started(q, SAMSA_ERR__IO, "uv_loop_init", "failed");
        return NULL;
    }
    if (quorum_thread_setup(q)) {
        uv_async_init(&q->loop, &q->async, quorum_async_cb);
        q->async.data = q;
        uv_timer_init(&q->loop, &q->poll);
        q->poll.data = q;
        uv_timer_start(&q->poll, quorum_poll_cb, QUORUM_POLL_MS,
                       QUORUM_POLL_MS);
        quorum_started(q, SAMSA_ERR_NONE, NULL, NULL);
        uv_run(&q->loop, UV_RUN_DEFAULT);
    }
    if (uv_loop_close(&q->loop) != 0) {
        samsa_warn("quorum: loop closed with handles still open");
    }
    return NULL;
}

/* ---- the API ---------------------------------------------------------- */

static samsa_err_t
quorum_conf_check(const samsa_quorum_conf_t *conf, char *errstr,
                  size_t errstr_size)
{
    bool  found = false;

    if (conf->node_id < 0 || conf->dir == NULL || conf->commit == NULL
        || conf->cluster_id == NULL || conf->cluster_id[0] == '\0'
        || strlen(conf->cluster_id) > SAMSA_QUORUM_TRANSPORT_STR_MAX) {
        samsa_diag_errstr(errstr, errstr_size,
                          "quorum: node id, dir, cluster id (1..%d bytes) "
                          "and the commit callback are required",
                          SAMSA_QUORUM_TRANSPORT_STR_MAX);
        return SAMSA_ERR__INVALID_ARG;
    }
    for (size_t i = 0; i < conf->n_voters; i++) {
        if (conf->voters[i].host == NULL || conf->voters[i].node_id < 0
            || strlen(conf->voters[i].host) > QUORUM_ADDR_MAX - 16) {
            samsa_diag_errstr(errstr, errstr_size,
                              "controller.quorum.voters: entry %zu has no "
                              "host or a bad node id", i);
            return SAMSA_ERR__CONFIG;
        }
        found = found || conf->voters[i].node_id == conf->node_id;
    }
    if (conf->is_voter && !found) {
        samsa_diag_errstr(errstr, errstr_size,
                          "controller.quorum.voters: node %d is a voter but "
                          "not in the list", conf->node_id);
        return SAMSA_ERR__CONFIG;
    }
    if (conf->heartbeat_ms != 0 && conf->election_timeout_ms != 0
        && conf->heartbeat_ms >= conf->election_timeout_ms) {
        samsa_diag_errstr(errstr, errstr_size,
                          "quorum: heartbeat (%u ms) must be below the "
                          "election timeout (%u ms)", conf->heartbeat_ms,
                          conf->election_timeout_ms);
        return SAMSA_ERR__CONFIG;
    }
    if (conf->segment_size % 4096 != 0) {
        samsa_diag_errstr(errstr, errstr_size,
                          "quorum: segment size %zu is not a multiple of "
                          "4096", conf->segment_size);
        return SAMSA_ERR__CONFIG;
    }
    return SAMSA_ERR_NONE;
}

static void
quorum_conf_copy(samsa_quorum_t *q, const samsa_quorum_conf_t *conf)
{
    q->node_id = conf->node_id;
    q->is_voter = conf->is_voter;
    q->n_voters = conf->n_voters;
    q->voters = samsa_calloc(conf->n_voters + 1, sizeof(*q->voters));
    for (size_t i = 0; i < conf->n_voters; i++) {
        q->voters[i].node_id = conf->voters[i].node_id;
        quorum_format_address(q->voters[i].address, conf->voters[i].host,
                              conf->voters[i].port, conf->voters[i].dir_id);
        if (conf->voters[i].node_id == conf->node_id) {
            memcpy(q->address, q->voters[i].address, QUORUM_ADDR_MAX);
        }
    }
    if (q->address[0] == '\0') {
        quorum_format_address(q->address,
                              conf->host != NULL ? conf->host : "127.0.0.1",
                              conf->port, NULL);
    }
    q->dir = samsa_strdup(conf->dir);
    q->cluster_id = samsa_strdup(conf->cluster_id);
    q->election_ms = conf->election_timeout_ms ? conf->election_timeout_ms
                                               : 1000;
    q->heartbeat_ms = conf->heartbeat_ms ? conf->heartbeat_ms
                                         : q->election_ms / 10;
    if (q->heartbeat_ms == 0) {
        q->heartbeat_ms = 1;
    }
    q->pre_vote = !conf->no_pre_vote;
    q->reverse_dial = conf->reverse_dial && !conf->is_voter;
    q->snapshot_threshold = conf->snapshot_threshold ? conf->snapshot_threshold
                                                     : 1024;
    q->snapshot_trailing = conf->snapshot_trailing ? conf->snapshot_trailing
                                                   : 2048;
    q->segment_size = conf->segment_size;
    q->connect_retry_ms = conf->connect_retry_ms ? conf->connect_retry_ms
                                                 : 200;
    q->commit = conf->commit;
    q->leader_change = conf->leader_change;
    q->snapshot_take = conf->snapshot_take;
    q->snapshot_restore = conf->snapshot_restore;
    q->ctx = conf->ctx;
    q->leader_node_id = -1;
}

static void
quorum_free(samsa_quorum_t *q)
{
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cond);
    samsa_free(q->voters);
    samsa_free(q->dir);
    samsa_free(q->cluster_id);
    samsa_free(q);
}

samsa_err_t
samsa_quorum_open(samsa_quorum_t **qp, const samsa_quorum_conf_t *conf,
                  char *errstr, size_t errstr_size)
{
    samsa_quorum_t  *q;
    samsa_err_t      err;
    int              rv;

    *qp = NULL;
    if ((err = quorum_conf_check(conf, errstr, errstr_size))
        != SAMSA_ERR_NONE) {
        return err;
    }
    q = samsa_calloc(1, sizeof(*q));
    quorum_conf_copy(q, conf);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cond, NULL);
    if ((rv = pthread_create(&q->thread, NULL, quorum_thread, q)) != 0) {
        samsa_diag_errstr(errstr, errstr_size,
                          "quorum: starting its thread: %s", strerror(rv));
        quorum_free(q);
        return SAMSA_ERR__IO;
    }
    pthread_mutex_lock(&q->mu);
    while (!q->started) {
        pthread_cond_wait(&q->cond, &q->mu);
    }
    err = q->start_err;
    pthread_mutex_unlock(&q->mu);
    if (err != SAMSA_ERR_NONE) {
        samsa_diag_errstr(errstr, errstr_size, "%s", q->start_errstr);
        pthread_join(q->thread, NULL);
        quorum_free(q);
        return err;
    }
    *qp = q;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_quorum_append(samsa_quorum_t *q, const void *data, size_t len,
                    uint32_t count, samsa_quorum_done_fn *done, void *ctx)
{
    quorum_op_t  *op;

    if (count == 0 || len > SAMSA_QUORUM_ENTRY_MAX || done == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    op = samsa_calloc(1, sizeof(*op));
    op->type = QUORUM_OP_APPEND;
    op->done = done;
    op->ctx = ctx;
    op->buf.len = quorum_pad8(QUORUM_ENTRY_HDR + len);
    op->buf.base = raft_calloc(1, op->buf.len);
    samsa_assert(op->buf.base != NULL);
    quorum_put_u32(op->buf.base, (uint32_t) len);
    quorum_put_u32((uint8_t *) op->buf.base + 4, count);
    if (len > 0) {
        memcpy((uint8_t *) op->buf.base + QUORUM_ENTRY_HDR, data, len);
    }
    if (!quorum_op_push(q, op)) {
        raft_free(op->buf.base);
        samsa_free(op);
        return SAMSA_ERR__SHUTDOWN;
    }
    return SAMSA_ERR_NONE;
}

void
samsa_quorum_leader(samsa_quorum_t *q, int32_t *leader_node_id,
                    int64_t *epoch)
{
    pthread_mutex_lock(&q->mu);
    *leader_node_id = q->leader_node_id;
    *epoch = q->epoch;
    pthread_mutex_unlock(&q->mu);
}

samsa_err_t
samsa_quorum_describe(samsa_quorum_t *q, samsa_quorum_desc_t *out,
                      int timeout_ms)
{
    quorum_op_t      *op;
    struct timespec   deadline;
    samsa_err_t       err = SAMSA_ERR_NONE;
    bool              last;

    if (pthread_equal(pthread_self(), q->thread)) {
        quorum_do_describe(q, out);
        return SAMSA_ERR_NONE;
    }
    op = samsa_calloc(1, sizeof(*op));
    op->type = QUORUM_OP_DESCRIBE;
    op->refs = 2;
    if (!quorum_op_push(q, op)) {
        samsa_free(op);
        return SAMSA_ERR__SHUTDOWN;
    }
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long) (timeout_ms % 1000) * 1000000;
    if (deadline.tv_nsec >= 1000000000) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&q->mu);
    while (!op->finished) {
        if (pthread_cond_timedwait(&q->cond, &q->mu, &deadline) == ETIMEDOUT) {
            break;
        }
    }
    if (!op->finished) {
        err = SAMSA_ERR__TIMED_OUT;
    } else if (!op->filled) {
        err = SAMSA_ERR__SHUTDOWN;
    } else {
        *out = op->desc;
    }
    last = --op->refs == 0;
    pthread_mutex_unlock(&q->mu);
    if (last) {
        samsa_free(op);
    }
    return err;
}

static samsa_err_t
quorum_change_push(samsa_quorum_t *q, quorum_change_kind_t kind,
                   int32_t node_id, const char *host, uint16_t port,
                   const char *dir_id, samsa_quorum_change_fn *done,
                   void *ctx)
{
    quorum_op_t  *op;

    if (node_id < 0 || done == NULL
        || (dir_id != NULL && strlen(dir_id) >= SAMSA_QUORUM_DIR_ID_SIZE)
        || (kind != QUORUM_CHANGE_REMOVE
            && (host == NULL
                || strlen(host) > QUORUM_ADDR_MAX - 16
                                  - SAMSA_QUORUM_DIR_ID_SIZE))) {
        return SAMSA_ERR__INVALID_ARG;
    }
    op = samsa_calloc(1, sizeof(*op));
    op->type = QUORUM_OP_CHANGE;
    op->kind = kind;
    op->id = quorum_raft_id(node_id);
    if (host != NULL) {
        quorum_format_address(op->address, host, port, dir_id);
    }
    op->change_done = done;
    op->ctx = ctx;
    if (!quorum_op_push(q, op)) {
        samsa_free(op);
        return SAMSA_ERR__SHUTDOWN;
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_quorum_add_voter(samsa_quorum_t *q, int32_t node_id, const char *host,
                       uint16_t port, samsa_quorum_change_fn *done, void *ctx)
{
    return quorum_change_push(q, QUORUM_CHANGE_ADD_VOTER, node_id, host, port,
                              NULL, done, ctx);
}

samsa_err_t
samsa_quorum_add_voter_dir(samsa_quorum_t *q, int32_t node_id,
                           const char *host, uint16_t port,
                           const char *dir_id, samsa_quorum_change_fn *done,
                           void *ctx)
{
    return quorum_change_push(q, QUORUM_CHANGE_ADD_VOTER, node_id, host, port,
                              dir_id, done, ctx);
}

samsa_err_t
samsa_quorum_add_observer(samsa_quorum_t *q, int32_t node_id,
                          const char *host, uint16_t port,
                          samsa_quorum_change_fn *done, void *ctx)
{
    return quorum_change_push(q, QUORUM_CHANGE_ADD_OBSERVER, node_id, host,
                              port, NULL, done, ctx);
}

samsa_err_t
samsa_quorum_remove_voter(samsa_quorum_t *q, int32_t node_id,
                          samsa_quorum_change_fn *done, void *ctx)
{
    return quorum_change_push(q, QUORUM_CHANGE_REMOVE, node_id, NULL, 0, NULL,
                              done, ctx);
}

samsa_err_t
samsa_quorum_transfer(samsa_quorum_t *q, int32_t node_id,
                      samsa_quorum_change_fn *done, void *ctx)
{
    quorum_op_t  *op;

    if (done == NULL || node_id < -1) {
        return SAMSA_ERR__INVALID_ARG;
    }
    op = samsa_calloc(1, sizeof(*op));
    op->type = QUORUM_OP_TRANSFER;
    op->id = node_id < 0 ? 0 : quorum_raft_id(node_id);
    op->change_done = done;
    op->ctx = ctx;
    if (!quorum_op_push(q, op)) {
        samsa_free(op);
        return SAMSA_ERR__SHUTDOWN;
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_quorum_adopt_fd(samsa_quorum_t *q, int fd)
{
    quorum_op_t  *op = samsa_calloc(1, sizeof(*op));

    op->type = QUORUM_OP_ADOPT;
    op->fd = fd;
    if (!quorum_op_push(q, op)) {
        close(fd);
        samsa_free(op);
        return SAMSA_ERR__SHUTDOWN;
    }
    return SAMSA_ERR_NONE;
}

void
samsa_quorum_close(samsa_quorum_t *q)
{
    if (q == NULL) {
        return;
    }
    pthread_mutex_lock(&q->mu);
    q->closing = true;
    pthread_mutex_unlock(&q->mu);
    uv_async_send(&q->async);
    pthread_join(q->thread, NULL);
    quorum_free(q);
}
