/*
 * log/pstate.c - per-partition producer state (see pstate.h): a hash
 * table of producer entries, the open transactions in offset order, the
 * sequence and epoch rules of Kafka's ProducerAppendInfo, undo of a failed
 * append, expiry and the snapshot codec.
 */
#include "log/pstate.h"

#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/crc32c.h"
#include "util/endian.h"
#include "util/map.h"

typedef struct pstate_node {
    samsa_map_node_t      node;         /* in samsa_pstate_t.map */
    samsa_pstate_entry_t  e;
} pstate_node_t;

/* An open transaction. */
typedef struct pstate_txn {
    int64_t  first_offset;
    int64_t  producer_id;
} pstate_txn_t;

/* A producer's entry as it was before an apply changed it. */
struct samsa_pstate_saved {
    int64_t               producer_id;
    bool                  existed;
    samsa_pstate_entry_t  old;
};

struct samsa_pstate {
    samsa_map_t      map;           /* pstate_node_t by producer id */
    pstate_txn_t    *txns;          /* open transactions, oldest first */
    size_t           ntxns;
    size_t           txns_cap;
};

/* ---- table ----------------------------------------------------------------- */

static bool
pstate_node_eq(const samsa_map_node_t *node, const void *key)
{
    return SAMSA_MAP_ENTRY(node, pstate_node_t, node)->e.producer_id
           == *(const int64_t *) key;
}

static uint64_t
pstate_hash(int64_t pid)
{
    return samsa_hash_u64((uint64_t) pid, 0);
}

/* The next entry of the iteration, or NULL. */
static pstate_node_t *
pstate_next(samsa_map_iter_t *it)
{
    samsa_map_node_t  *node = samsa_map_iter_next(it);

    return node != NULL ? SAMSA_MAP_ENTRY(node, pstate_node_t, node) : NULL;
}

samsa_pstate_t *
samsa_pstate_new(void)
{
    samsa_pstate_t  *ps = samsa_calloc(1, sizeof(*ps));

    samsa_map_init(&ps->map);
    return ps;
}

void
samsa_pstate_clear(samsa_pstate_t *ps)
{
    samsa_map_iter_t   it;
    pstate_node_t     *node;

    samsa_map_iter_init(&it, &ps->map);
    while ((node = pstate_next(&it)) != NULL) {
        samsa_free(node);
    }
    samsa_map_fini(&ps->map);
    ps->ntxns = 0;
}

void
samsa_pstate_free(samsa_pstate_t *ps)
{
    if (ps == NULL) {
        return;
    }
    samsa_pstate_clear(ps);
    samsa_free(ps->txns);
    samsa_free(ps);
}

static pstate_node_t *
pstate_node(const samsa_pstate_t *ps, int64_t pid)
{
    samsa_map_node_t  *node = samsa_map_find(&ps->map, pstate_hash(pid),
                                             pstate_node_eq, &pid);

    return node != NULL ? SAMSA_MAP_ENTRY(node, pstate_node_t, node) : NULL;
}

static samsa_pstate_entry_t *
pstate_get(const samsa_pstate_t *ps, int64_t pid)
{
    pstate_node_t  *node = pstate_node(ps, pid);

    return node != NULL ? &node->e : NULL;
}

const samsa_pstate_entry_t *
samsa_pstate_find(const samsa_pstate_t *ps, int64_t producer_id)
{
    return pstate_get(ps, producer_id);
}

size_t
samsa_pstate_count(const samsa_pstate_t *ps)
{
    return samsa_map_count(&ps->map);
}

/* A new empty entry for pid (which must not exist). */
static samsa_pstate_entry_t *
pstate_add(samsa_pstate_t *ps, int64_t pid)
{
    pstate_node_t  *node = samsa_calloc(1, sizeof(*node));

    node->e.producer_id = pid;
    node->e.epoch = -1;
    node->e.coordinator_epoch = -1;
    node->e.last_timestamp = -1;
    node->e.txn_first_offset = -1;
    samsa_map_insert(&ps->map, &node->node, pstate_hash(pid));
    return &node->e;
}

static void
pstate_remove(samsa_pstate_t *ps, int64_t pid)
{
    pstate_node_t  *node = pstate_node(ps, pid);

    if (node != NULL) {
        samsa_map_remove(&ps->map, &node->node);
        samsa_free(node);
    }
}

/* ---- open transactions ------------------------------------------------------ */

static void
pstate_txn_add(samsa_pstate_t *ps, int64_t first_offset, int64_t pid)
{
    size_t  i;

    if (ps->ntxns == ps->txns_cap) {
        ps->txns_cap = ps->txns_cap ? ps->txns_cap * 2 : 8;
        ps->txns = samsa_realloc(ps->txns, ps->txns_cap * sizeof(*ps->txns));
    }
    /* appends come in offset order: the slot is almost always the last */
    for (i = ps->ntxns; i > 0 && ps->txns[i - 1].first_offset > first_offset;
         i--) {
        ps->txns[i] = ps->txns[i - 1];
    }
    ps->txns[i] = (pstate_txn_t) { first_offset, pid };
    ps->ntxns++;
}

static void
pstate_txn_remove(samsa_pstate_t *ps, int64_t pid)
{
    size_t  i;

    for (i = 0; i < ps->ntxns; i++) {
        if (ps->txns[i].producer_id == pid) {
            memmove(&ps->txns[i], &ps->txns[i + 1],
                    (ps->ntxns - i - 1) * sizeof(*ps->txns));
            ps->ntxns--;
            return;
        }
    }
}

/* Rebuild the open transactions from the entries (after an undo or a
 * snapshot load). */
static void
pstate_txn_rebuild(samsa_pstate_t *ps)
{
    samsa_map_iter_t  it;
    pstate_node_t    *node;

    ps->ntxns = 0;
    samsa_map_iter_init(&it, &ps->map);
    while ((node = pstate_next(&it)) != NULL) {
        if (node->e.txn_first_offset >= 0) {
            pstate_txn_add(ps, node->e.txn_first_offset, node->e.producer_id);
        }
    }
}

int64_t
samsa_pstate_first_unstable(const samsa_pstate_t *ps)
{
    return ps->ntxns > 0 ? ps->txns[0].first_offset : -1;
}

int64_t
samsa_pstate_lso_after(const samsa_pstate_t *ps,
                       const samsa_pstate_completed_t *done)
{
    size_t  i;

    for (i = 0; i < ps->ntxns; i++) {
        if (ps->txns[i].producer_id != done->producer_id) {
            return ps->txns[i].first_offset;
        }
    }
    return done->last_offset + 1;
}

/* ---- changes ---------------------------------------------------------------- */

void
samsa_pstate_change_init(samsa_pstate_change_t *ch)
{
    memset(ch, 0, sizeof(*ch));
}

static void
pstate_change_fini(samsa_pstate_change_t *ch)
{
    samsa_free(ch->saved);
    samsa_free(ch->done);
    samsa_pstate_change_init(ch);
}

/* Remember pid's entry before its first change in this apply. */
static void
pstate_save(samsa_pstate_change_t *ch, int64_t pid,
            const samsa_pstate_entry_t *e)
{
    size_t  i;

    for (i = 0; i < ch->nsaved; i++) {
        if (ch->saved[i].producer_id == pid) {
            return;
        }
    }
    ch->saved = samsa_realloc(ch->saved, (ch->nsaved + 1)
                                             * sizeof(*ch->saved));
    ch->saved[ch->nsaved].producer_id = pid;
    ch->saved[ch->nsaved].existed = e != NULL;
    if (e != NULL) {
        ch->saved[ch->nsaved].old = *e;
    }
    ch->nsaved++;
}

static void
pstate_done(samsa_pstate_change_t *ch, const samsa_pstate_completed_t *d)
{
    ch->done = samsa_realloc(ch->done, (ch->ndone + 1) * sizeof(*ch->done));
    ch->done[ch->ndone++] = *d;
}

void
samsa_pstate_undo(samsa_pstate_t *ps, samsa_pstate_change_t *ch)
{
    samsa_pstate_entry_t  *e;
    size_t                 i;

    for (i = ch->nsaved; i > 0; i--) {
        const struct samsa_pstate_saved  *s = &ch->saved[i - 1];

        e = pstate_get(ps, s->producer_id);
        if (!s->existed) {
            pstate_remove(ps, s->producer_id);
        } else if (e != NULL) {
            *e = s->old;
        } else {
            *pstate_add(ps, s->producer_id) = s->old;
        }
    }
    if (ch->ongoing_changed) {
        pstate_txn_rebuild(ps);
    }
    pstate_change_fini(ch);
}

void
samsa_pstate_commit(samsa_pstate_t *ps, samsa_pstate_change_t *ch)
{
    (void) ps;
    pstate_change_fini(ch);
}

/* ---- the rules ---------------------------------------------------------------- */

int32_t
samsa_pstate_seq_add(int32_t seq, int32_t n)
{
    int64_t  v = (int64_t) seq + (n > 0 ? n : 0);

    if (v > INT32_MAX) {
        return (int32_t) (v - INT32_MAX - 1);
    }
    return (int32_t) v;
}

static bool
pstate_in_sequence(int32_t last, int32_t next)
{
    return (int64_t) next == (int64_t) last + 1
           || (next == 0 && last == INT32_MAX);
}

/* Kafka's ProducerStateEntry.addBatch: a new epoch forgets the batches. */
static void
pstate_set_epoch(samsa_pstate_entry_t *e, int16_t epoch)
{
    if (e->epoch != epoch) {
        e->nbatches = 0;
        e->epoch = epoch;
    }
}

static void
pstate_add_batch(samsa_pstate_entry_t *e, const samsa_pstate_batch_t *b)
{
    if (e->nbatches == SAMSA_PSTATE_BATCHES) {
        memmove(&e->batches[0], &e->batches[1],
                (SAMSA_PSTATE_BATCHES - 1) * sizeof(e->batches[0]));
        e->nbatches--;
    }
    e->batches[e->nbatches++] = *b;
}

/* The batch of e equal to b (same epoch, first and last sequence). */
static const samsa_pstate_batch_t *
pstate_find_dup(const samsa_pstate_entry_t *e, int16_t epoch,
                const samsa_pstate_batch_t *b)
{
    int  i;

    if (e == NULL || e->epoch != epoch) {
        return NULL;
    }
    for (i = 0; i < e->nbatches; i++) {
        if (e->batches[i].first_seq == b->first_seq
            && e->batches[i].last_seq == b->last_seq) {
            return &e->batches[i];
        }
    }
    return NULL;
}

/* Kafka's checkSequence (client appends only). */
static samsa_err_t
pstate_check_seq(const samsa_pstate_entry_t *e, int16_t epoch,
                 int32_t first_seq, const char **msg)
{
    int32_t  last;

    if (e == NULL || e->epoch == -1) {
        return SAMSA_ERR_NONE;      /* unknown producer: any sequence */
    }
    if (e->epoch != epoch) {
        if (first_seq != 0) {
            *msg = "Invalid sequence number for new epoch";
            return SAMSA_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
        }
        return SAMSA_ERR_NONE;
    }
    last = e->nbatches > 0 ? e->batches[e->nbatches - 1].last_seq : -1;
    if (!pstate_in_sequence(last, first_seq)) {
        *msg = "Out of order sequence number";
        return SAMSA_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
    }
    return SAMSA_ERR_NONE;
}

/* One batch to apply, with what its records say. */
typedef struct pstate_in {
    const samsa_batch_hdr_t  *hdr;
    int64_t                   first_offset;
    int16_t                   ctl_type;     /* control batches */
    int32_t                   ctl_coord_epoch;
} pstate_in_t;

static samsa_err_t
pstate_marker(samsa_pstate_t *ps, const pstate_in_t *in,
              samsa_pstate_origin_t origin, samsa_pstate_change_t *ch,
              const char **msg)
{
    const samsa_batch_hdr_t   *hdr = in->hdr;
    samsa_pstate_entry_t      *e = pstate_get(ps, hdr->ProducerId);
    samsa_pstate_completed_t   d;

    if (in->ctl_type != SAMSA_BATCH_CONTROL_ABORT
        && in->ctl_type != SAMSA_BATCH_CONTROL_COMMIT) {
        return SAMSA_ERR_NONE;      /* not a transaction marker */
    }
    if (origin != SAMSA_PSTATE_REPLAY && e != NULL) {
        if (hdr->ProducerEpoch < e->epoch) {
            *msg = "Producer epoch of the marker is older than the "
                   "producer's";
            return SAMSA_ERR_INVALID_PRODUCER_EPOCH;
        }
        if (in->ctl_coord_epoch < e->coordinator_epoch) {
            *msg = "Coordinator epoch of the marker is older than the last "
                   "one seen";
            return SAMSA_ERR_TRANSACTION_COORDINATOR_FENCED;
        }
    }
    pstate_save(ch, hdr->ProducerId, e);
    if (e == NULL) {
        e = pstate_add(ps, hdr->ProducerId);
    }
    if (e->txn_first_offset >= 0) {
        d = (samsa_pstate_completed_t) {
            .producer_id = hdr->ProducerId,
            .first_offset = e->txn_first_offset,
            .last_offset = in->first_offset,
            .aborted = in->ctl_type == SAMSA_BATCH_CONTROL_ABORT,
        };
        pstate_done(ch, &d);
        pstate_txn_remove(ps, hdr->ProducerId);
        ch->ongoing_changed = true;
    }
    pstate_set_epoch(e, hdr->ProducerEpoch);
    e->txn_first_offset = -1;
    e->coordinator_epoch = in->ctl_coord_epoch;
    e->last_timestamp = hdr->MaxTimestamp;
    return SAMSA_ERR_NONE;
}

static samsa_err_t
pstate_data(samsa_pstate_t *ps, const pstate_in_t *in,
            samsa_pstate_origin_t origin, samsa_pstate_change_t *ch,
            const char **msg)
{
    const samsa_batch_hdr_t  *hdr = in->hdr;
    samsa_pstate_entry_t     *e = pstate_get(ps, hdr->ProducerId);
    samsa_pstate_batch_t      b;
    bool                      txn = samsa_batch_is_transactional(hdr);
    samsa_err_t               err;

    if (origin != SAMSA_PSTATE_REPLAY && e != NULL
        && hdr->ProducerEpoch < e->epoch) {
        *msg = "Producer's epoch is older than the last one seen";
        return SAMSA_ERR_INVALID_PRODUCER_EPOCH;
    }
    if (origin == SAMSA_PSTATE_CLIENT) {
        if (hdr->BaseSequence < 0) {     /* Kafka's LogValidator */
            *msg = "Invalid sequence number in a batch with a producer id";
            return SAMSA_ERR_INVALID_RECORD;
        }
        err = pstate_check_seq(e, hdr->ProducerEpoch, hdr->BaseSequence, msg);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        if (e != NULL && e->txn_first_offset >= 0 && !txn) {
            *msg = "Expected a transactional write from the producer";
            return SAMSA_ERR_INVALID_TXN_STATE;
        }
    }
    pstate_save(ch, hdr->ProducerId, e);
    if (e == NULL) {
        e = pstate_add(ps, hdr->ProducerId);
    }
    pstate_set_epoch(e, hdr->ProducerEpoch);
    b = (samsa_pstate_batch_t) {
        .first_seq = hdr->BaseSequence,
        .last_seq = samsa_pstate_seq_add(hdr->BaseSequence,
                                         hdr->LastOffsetDelta),
        .first_offset = in->first_offset,
        .last_offset = in->first_offset + hdr->LastOffsetDelta,
        .timestamp = hdr->MaxTimestamp,
    };
    pstate_add_batch(e, &b);
    e->last_timestamp = hdr->MaxTimestamp;
    if (txn && e->txn_first_offset < 0) {
        e->txn_first_offset = in->first_offset;
        pstate_txn_add(ps, in->first_offset, hdr->ProducerId);
        ch->ongoing_changed = true;
    }
    return SAMSA_ERR_NONE;
}

static samsa_err_t
pstate_one(samsa_pstate_t *ps, const pstate_in_t *in,
           samsa_pstate_origin_t origin, samsa_pstate_change_t *ch,
           const char **msg)
{
    if (in->hdr->ProducerId < 0) {
        if (samsa_batch_is_transactional(in->hdr)
            && origin != SAMSA_PSTATE_REPLAY) {
            *msg = "Transactional batch without a producer id";
            return SAMSA_ERR_INVALID_RECORD;
        }
        return SAMSA_ERR_NONE;
    }
    if (samsa_batch_is_control(in->hdr)) {
        return pstate_marker(ps, in, origin, ch, msg);
    }
    return pstate_data(ps, in, origin, ch, msg);
}

/* Kafka: a client append holding a duplicate of a recent batch is
 * answered with that batch's offsets and not written. */
static bool
pstate_dup_of(const samsa_pstate_t *ps, const samsa_batch_hdr_t *hdr,
              samsa_pstate_batch_t *dup)
{
    samsa_pstate_batch_t         b;
    const samsa_pstate_batch_t  *d;

    if (hdr->ProducerId < 0 || samsa_batch_is_control(hdr)) {
        return false;
    }
    b.first_seq = hdr->BaseSequence;
    b.last_seq = samsa_pstate_seq_add(hdr->BaseSequence,
                                      hdr->LastOffsetDelta);
    d = pstate_find_dup(pstate_get(ps, hdr->ProducerId), hdr->ProducerEpoch,
                        &b);
    if (d != NULL) {
        *dup = *d;
    }
    return d != NULL;
}

samsa_err_t
samsa_pstate_apply(samsa_pstate_t *ps, const uint8_t *records, size_t len,
                   int64_t first_offset, samsa_pstate_origin_t origin,
                   samsa_pstate_change_t *ch, bool *is_dup,
                   samsa_pstate_batch_t *dup, const char **msg)
{
    samsa_batch_hdr_t  hdr;
    pstate_in_t        in;
    const char        *why = NULL;
    size_t             off;
    int64_t            next = first_offset;
    samsa_err_t        err = SAMSA_ERR_NONE;

    *is_dup = false;
    for (off = 0; off + SAMSA_BATCH_HDR_SIZE <= len && err == SAMSA_ERR_NONE;
         off += (size_t) samsa_batch_size(&hdr)) {
        if (samsa_batch_parse(records + off, len - off, &hdr)
            != SAMSA_ERR_NONE) {
            break;                  /* validated by the caller */
        }
        if (origin == SAMSA_PSTATE_CLIENT && pstate_dup_of(ps, &hdr, dup)) {
            *is_dup = true;
            break;
        }
        in = (pstate_in_t) { .hdr = &hdr, .first_offset = next,
                             .ctl_type = -1, .ctl_coord_epoch = -1 };
        if (samsa_batch_is_control(&hdr) && hdr.ProducerId >= 0
            && samsa_batch_control_parse(records + off, len - off,
                                         &in.ctl_type, &in.ctl_coord_epoch)
                   != SAMSA_ERR_NONE) {
            why = "Control batch without a readable marker";
            err = SAMSA_ERR_INVALID_RECORD;
            break;
        }
        err = pstate_one(ps, &in, origin, ch, &why);
        next += (int64_t) hdr.LastOffsetDelta + 1;
    }
    if (err != SAMSA_ERR_NONE || *is_dup) {
        samsa_pstate_undo(ps, ch);
    }
    if (msg != NULL) {
        *msg = why;
    }
    return err;
}

void
samsa_pstate_replay(samsa_pstate_t *ps, const samsa_batch_hdr_t *hdr,
                    int16_t ctl_type, int32_t coordinator_epoch,
                    samsa_pstate_change_t *ch)
{
    pstate_in_t  in = { .hdr = hdr, .first_offset = hdr->BaseOffset,
                        .ctl_type = ctl_type,
                        .ctl_coord_epoch = coordinator_epoch };
    const char  *msg = NULL;

    (void) pstate_one(ps, &in, SAMSA_PSTATE_REPLAY, ch, &msg);
}

size_t
samsa_pstate_expire(samsa_pstate_t *ps, int64_t now_ms, int64_t expiration_ms)
{
    samsa_map_iter_t  it;
    pstate_node_t    *node;
    size_t            n = 0;

    samsa_map_iter_init(&it, &ps->map);
    while ((node = pstate_next(&it)) != NULL) {
        if (node->e.txn_first_offset < 0
            /* not now_ms - last_timestamp: a follower keeps the
             * leader's batch timestamps, any int64 (fuzz_plog_repl) */
            && node->e.last_timestamp <= now_ms - expiration_ms) {
            samsa_map_remove(&ps->map, &node->node);
            samsa_free(node);
            n++;
        }
    }
    return n;
}

static int
pstate_cmp_pid(const void *a, const void *b)
{
    int64_t  x = ((const samsa_pstate_entry_t *) a)->producer_id;
    int64_t  y = ((const samsa_pstate_entry_t *) b)->producer_id;

    return (x > y) - (x < y);
}

size_t
samsa_pstate_list(const samsa_pstate_t *ps, samsa_pstate_entry_t **out)
{
    samsa_map_iter_t  it;
    pstate_node_t    *node;
    size_t            n = 0;

    *out = samsa_calloc(samsa_map_count(&ps->map) + 1, sizeof(**out));
    samsa_map_iter_init(&it, &ps->map);
    while ((node = pstate_next(&it)) != NULL) {
        (*out)[n++] = node->e;
    }
    qsort(*out, n, sizeof(**out), pstate_cmp_pid);
    return n;
}

/* ---- snapshots ----------------------------------------------------------- */

static void
pstate_put_entry(samsa_buf_t *out, const samsa_pstate_entry_t *e,
                 const samsa_pstate_batch_t *b, int64_t ts)
{
    uint8_t  *p = samsa_buf_reserve(out, SAMSA_PSTATE_ENTRY_SIZE);

    samsa_store_be64(p, (uint64_t) e->producer_id);
    samsa_store_be16(p + 8, (uint16_t) e->epoch);
    samsa_store_be32(p + 10, (uint32_t) (b != NULL ? b->last_seq : -1));
    samsa_store_be64(p + 14, (uint64_t) (b != NULL ? b->last_offset : -1));
    samsa_store_be32(p + 22, (uint32_t) (b != NULL ? b->last_offset
                                                         - b->first_offset
                                                   : 0));
    samsa_store_be64(p + 26, (uint64_t) ts);
    samsa_store_be32(p + 34, (uint32_t) e->coordinator_epoch);
    samsa_store_be64(p + 38, (uint64_t) e->txn_first_offset);
    out->len += SAMSA_PSTATE_ENTRY_SIZE;
}

void
samsa_pstate_encode(const samsa_pstate_t *ps, samsa_buf_t *out)
{
    samsa_pstate_entry_t  *list;
    size_t                 n, i, start = out->len;
    uint32_t               count = 0;
    uint8_t               *p;
    int                    j;

    n = samsa_pstate_list(ps, &list);
    p = samsa_buf_reserve(out, SAMSA_PSTATE_HEADER_SIZE);
    memset(p, 0, SAMSA_PSTATE_HEADER_SIZE);
    out->len += SAMSA_PSTATE_HEADER_SIZE;
    for (i = 0; i < n; i++) {
        const samsa_pstate_entry_t  *e = &list[i];

        if (e->nbatches == 0) {
            pstate_put_entry(out, e, NULL, e->last_timestamp);
            count++;
        }
        for (j = 0; j < e->nbatches; j++) {
            pstate_put_entry(out, e, &e->batches[j],
                             j + 1 == e->nbatches ? e->last_timestamp
                                                  : e->batches[j].timestamp);
            count++;
        }
    }
    samsa_free(list);
    p = out->data + start;
    samsa_store_be16(p, SAMSA_PSTATE_SNAPSHOT_V1);
    samsa_store_be32(p + 6, count);
    samsa_store_be32(p + 2, samsa_crc32c(0, p + 6, out->len - start - 6));
}

/* One decoded snapshot entry into ps. */
static samsa_err_t
pstate_load_entry(samsa_pstate_t *ps, const uint8_t *p)
{
    samsa_pstate_entry_t  *e;
    samsa_pstate_batch_t   b;
    int64_t                pid = (int64_t) samsa_load_be64(p);
    int16_t                epoch = (int16_t) samsa_load_be16(p + 8);
    int32_t                last_seq = (int32_t) samsa_load_be32(p + 10);
    int64_t                last_offset = (int64_t) samsa_load_be64(p + 14);
    int32_t                delta = (int32_t) samsa_load_be32(p + 22);
    int64_t                ts = (int64_t) samsa_load_be64(p + 26);
    int32_t                coord = (int32_t) samsa_load_be32(p + 34);
    int64_t                txn = (int64_t) samsa_load_be64(p + 38);

    if (pid < 0 || delta < 0 || last_offset < -1 || txn < -1
        || (last_offset >= 0 && (last_seq < 0 || last_offset < delta))) {
        return SAMSA_ERR_CORRUPT_MESSAGE;
    }
    e = pstate_get(ps, pid);
    if (e == NULL) {
        e = pstate_add(ps, pid);
    }
    pstate_set_epoch(e, epoch);
    e->coordinator_epoch = coord;
    e->txn_first_offset = txn;
    e->last_timestamp = ts;
    if (last_offset >= 0) {
        b.last_seq = last_seq;
        b.first_seq = last_seq - delta >= 0
                          ? last_seq - delta
                          : (int32_t) ((int64_t) INT32_MAX + 1
                                       + (last_seq - delta));
        b.last_offset = last_offset;
        b.first_offset = last_offset - delta;
        b.timestamp = ts;
        pstate_add_batch(e, &b);
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_pstate_decode(samsa_pstate_t *ps, const uint8_t *p, size_t len)
{
    uint32_t     count, i;
    samsa_err_t  err = SAMSA_ERR_NONE;

    samsa_pstate_clear(ps);
    if (len < SAMSA_PSTATE_HEADER_SIZE
        || samsa_load_be16(p) != SAMSA_PSTATE_SNAPSHOT_V1
        || samsa_load_be32(p + 2) != samsa_crc32c(0, p + 6, len - 6)) {
        return SAMSA_ERR_CORRUPT_MESSAGE;
    }
    count = samsa_load_be32(p + 6);
    if ((uint64_t) count * SAMSA_PSTATE_ENTRY_SIZE
        != len - SAMSA_PSTATE_HEADER_SIZE) {
        return SAMSA_ERR_CORRUPT_MESSAGE;
    }
    for (i = 0; i < count && err == SAMSA_ERR_NONE; i++) {
        err = pstate_load_entry(ps, p + SAMSA_PSTATE_HEADER_SIZE
                                        + (size_t) i
                                              * SAMSA_PSTATE_ENTRY_SIZE);
    }
    if (err != SAMSA_ERR_NONE) {
        samsa_pstate_clear(ps);
        return err;
    }
    pstate_txn_rebuild(ps);
    return SAMSA_ERR_NONE;
}
