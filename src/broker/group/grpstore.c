/*
 * broker/group/grpstore.c - the group coordinator's records in __consumer_offsets
 * (Kafka's GroupMetadataManager): offset commits (key OffsetCommitKey v1,
 * value OffsetCommitValue v3, or v1 with an expire timestamp), group
 * metadata (GroupMetadataKey v2, GroupMetadataValue v3), tombstones (null
 * values; with a consumer group's, broker/group/consumer_group_store.c, whose records this
 * load hands over), written through the normal partition log as uncompressed
 * record batches; and the replay of every partition at start.
 * Threads: writes run on handlers (or a reaper) with the group's lock
 * held; the load runs on main before any handler starts.
 */
#include "broker/group/grp_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "meta/image.h"
#include "proto/batch.h"
#include "proto/gen/GroupRecords.h"
#include "proto/wr.h"
#include "broker/coordload.h"
#include "broker/coordtopic.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"

#define GRPSTORE_KEY_OFFSET      1      /* OffsetCommitKey version written */
#define GRPSTORE_KEY_GROUP       2      /* GroupMetadataKey version */
#define GRPSTORE_VALUE_OFFSET    3      /* OffsetCommitValue, no expiry */
#define GRPSTORE_VALUE_OFFSET_X  1      /* ... with an expire timestamp */
#define GRPSTORE_VALUE_GROUP     3      /* GroupMetadataValue */
#define GRPSTORE_READ_BYTES      (1 << 20)

typedef samsa_grpstore_rec_t grpstore_rec_t;

/* ---- writing --------------------------------------------------------------- */

static void
grpstore_key_offset(samsa_buf_t *buf, const char *group, samsa_slice_t topic,
                    int32_t partition)
{
    samsa_OffsetCommitKey_t  k;
    samsa_wr_t               wr;

    samsa_OffsetCommitKey_init(&k);
    k.Group = samsa_slice_cstr(group);
    k.Topic = topic;
    k.Partition = partition;
    samsa_wr_init(&wr, buf);
    samsa_wr_i16(&wr, GRPSTORE_KEY_OFFSET);
    samsa_OffsetCommitKey_encode(&wr, GRPSTORE_KEY_OFFSET, &k);
}

static void
grpstore_key_group(samsa_buf_t *buf, const char *group)
{
    samsa_GroupMetadataKey_t  k;
    samsa_wr_t                wr;

    samsa_GroupMetadataKey_init(&k);
    k.Group = samsa_slice_cstr(group);
    samsa_wr_init(&wr, buf);
    samsa_wr_i16(&wr, GRPSTORE_KEY_GROUP);
    samsa_GroupMetadataKey_encode(&wr, GRPSTORE_KEY_GROUP, &k);
}

/* Append recs as one batch to the group's partition; pid >= 0 makes it
 * a transactional batch of that producer id and epoch. */
static samsa_err_t
grpstore_append(samsa_grp_t *g, grpstore_rec_t *recs, size_t n, int64_t pid,
                int16_t epoch)
{
    samsa_grpcoord_t           *gc = g->gc;
    samsa_coordtopic_append_t   how = { pid, epoch, false,
                                        "group.store.before_append",
                                        "group.store.after_append" };
    samsa_err_t                 err;

    err = samsa_coordtopic_append(gc->conf.meta, gc->conf.logs,
                                  SAMSA_GRP_OFFSETS_TOPIC, g->partition, recs,
                                  n, &how);
    if (err != SAMSA_ERR_NONE && err != SAMSA_ERR_COORDINATOR_NOT_AVAILABLE) {
        samsa_warn("group %s: cannot append to %s-%d: %s", g->id,
                   SAMSA_GRP_OFFSETS_TOPIC, (int) g->partition,
                   samsa_err_name(err));
        /* Kafka's mapping of append errors for the group's callers */
        err = err == SAMSA_ERR_MESSAGE_TOO_LARGE
                      || err == SAMSA_ERR_RECORD_LIST_TOO_LARGE
                  ? SAMSA_ERR_INVALID_COMMIT_OFFSET_SIZE
                  : SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    return err;
}

samsa_err_t
samsa_grpstore_append(samsa_grp_t *g, samsa_grpstore_rec_t *recs, size_t n)
{
    return grpstore_append(g, recs, n, -1, -1);
}

void
samsa_grpstore_recs_free(grpstore_rec_t *recs, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        samsa_buf_fini(&recs[i].key);
        samsa_buf_fini(&recs[i].value);
    }
    samsa_free(recs);
}

samsa_err_t
samsa_grpstore_write_group(samsa_grp_t *g)
{
    samsa_GroupMetadataValue_t    v;
    samsa_GroupMemberMetadata_t  *mm;
    grpstore_rec_t                rec = { SAMSA_BUF_INIT, SAMSA_BUF_INIT,
                                          false };
    const grp_member_t           *m;
    samsa_wr_t                    wr;
    samsa_err_t                   err;
    size_t                        i, j;

    samsa_GroupMetadataValue_init(&v);
    v.ProtocolType = samsa_slice_cstr(g->protocol_type != NULL
                                          ? g->protocol_type : "");
    v.Generation = g->generation;
    v.Protocol = samsa_slice_cstr(g->protocol_name);
    v.Leader = samsa_slice_cstr(g->leader_id);
    v.CurrentStateTimestamp = g->state_ts_ms;
    mm = samsa_calloc(g->nmembers + 1, sizeof(*mm));
    for (i = 0; i < g->nmembers; i++) {
        m = g->members[i];
        samsa_GroupMemberMetadata_init(&mm[i]);
        mm[i].MemberId = samsa_slice_cstr(m->member_id);
        mm[i].GroupInstanceId = samsa_slice_cstr(m->instance_id);
        mm[i].ClientId = samsa_slice_cstr(m->client_id);
        mm[i].ClientHost = samsa_slice_cstr(m->client_host);
        mm[i].RebalanceTimeout = m->rebalance_timeout_ms;
        mm[i].SessionTimeout = m->session_timeout_ms;
        mm[i].Subscription = (samsa_slice_t) { "", 0 };
        for (j = 0; j < m->nprotos && g->protocol_name != NULL; j++) {
            if (strcmp(m->protos[j].name, g->protocol_name) == 0) {
                mm[i].Subscription = (samsa_slice_t) {
                    (const char *) m->protos[j].metadata,
                    m->protos[j].metadata_len };
            }
        }
        mm[i].Assignment = (samsa_slice_t) { (const char *) m->assignment,
                                             m->assignment_len };
    }
    v.Members = mm;
    v.Members_cnt = (int32_t) g->nmembers;
    grpstore_key_group(&rec.key, g->id);
    samsa_wr_init(&wr, &rec.value);
    samsa_wr_i16(&wr, GRPSTORE_VALUE_GROUP);
    samsa_GroupMetadataValue_encode(&wr, GRPSTORE_VALUE_GROUP, &v);
    err = grpstore_append(g, &rec, 1, -1, -1);
    samsa_buf_fini(&rec.key);
    samsa_buf_fini(&rec.value);
    samsa_free(mm);
    return err;
}

static samsa_err_t
grpstore_write_offsets(samsa_grp_t *g, const samsa_grp_offset_t *offs,
                       size_t n, int64_t now_ms, int64_t expire_ts_ms,
                       int64_t pid, int16_t epoch)
{
    samsa_OffsetCommitValue_t  v;
    grpstore_rec_t            *recs = samsa_calloc(n + 1, sizeof(*recs));
    samsa_wr_t                 wr;
    samsa_err_t                err;
    int16_t                    ver = expire_ts_ms >= 0
                                         ? GRPSTORE_VALUE_OFFSET_X
                                         : GRPSTORE_VALUE_OFFSET;
    size_t                     i, k = 0;

    for (i = 0; i < n; i++) {
        if (offs[i].error != SAMSA_ERR_NONE) {
            continue;
        }
        samsa_OffsetCommitValue_init(&v);
        v.Offset = offs[i].offset;
        v.LeaderEpoch = offs[i].leader_epoch;
        v.Metadata = offs[i].metadata.ptr != NULL ? offs[i].metadata
                                                  : (samsa_slice_t) { "", 0 };
        v.CommitTimestamp = offs[i].commit_timestamp_ms >= 0
                                ? offs[i].commit_timestamp_ms : now_ms;
        v.ExpireTimestamp = expire_ts_ms;
        grpstore_key_offset(&recs[k].key, g->id, offs[i].topic,
                            offs[i].partition);
        samsa_wr_init(&wr, &recs[k].value);
        samsa_wr_i16(&wr, ver);
        samsa_OffsetCommitValue_encode(&wr, ver, &v);
        k++;
    }
    err = grpstore_append(g, recs, k, pid, epoch);
    samsa_grpstore_recs_free(recs, n + 1);
    return err;
}

samsa_err_t
samsa_grpstore_write_offsets(samsa_grp_t *g, const samsa_grp_offset_t *offs,
                             size_t n, int64_t now_ms, int64_t expire_ts_ms)
{
    return grpstore_write_offsets(g, offs, n, now_ms, expire_ts_ms, -1, -1);
}

samsa_err_t
samsa_grpstore_write_txn_offsets(samsa_grp_t *g,
                                 const samsa_grp_offset_t *offs, size_t n,
                                 int64_t now_ms, int64_t pid, int16_t epoch)
{
    return grpstore_write_offsets(g, offs, n, now_ms, -1, pid, epoch);
}

samsa_err_t
samsa_grpstore_write_tombstones(samsa_grp_t *g, bool with_group,
                                const grp_offset_t *offs, size_t n)
{
    grpstore_rec_t  *recs = samsa_calloc(n + 2, sizeof(*recs));
    samsa_err_t      err;
    size_t           i, k = 0;

    for (i = 0; i < n; i++) {
        grpstore_key_offset(&recs[k].key, g->id,
                            samsa_slice_cstr(offs[i].topic),
                            offs[i].partition);
        recs[k++].tombstone = true;
    }
    if (with_group && g->cg != NULL) {
        /* a consumer group's records go first, as in Kafka */
        k = samsa_grp_cg_ops(g)->store_tombstones(g, &recs, k);
    }
    if (with_group) {
        recs = samsa_realloc(recs, (k + 1) * sizeof(*recs));
        memset(&recs[k], 0, sizeof(*recs));
        grpstore_key_group(&recs[k].key, g->id);
        recs[k++].tombstone = true;
    }
    err = grpstore_append(g, recs, k, -1, -1);
    samsa_grpstore_recs_free(recs, k);
    return err;
}

/* ---- loading ----------------------------------------------------------------- */

static void
grpstore_load_offset(samsa_grpcoord_t *gc, samsa_rd_t *krd, int16_t kver,
                     const samsa_record_t *rec, int64_t pid,
                     samsa_arena_t *arena)
{
    samsa_OffsetCommitKey_t    k;
    samsa_OffsetCommitValue_t  v;
    samsa_grp_t               *g;
    grp_offset_t              *o;
    samsa_rd_t                 vrd;
    int16_t                    vver;

    samsa_OffsetCommitKey_init(&k);
    if (samsa_OffsetCommitKey_decode(krd, kver, arena, &k) != SAMSA_ERR_NONE) {
        samsa_warn("%s: skipping an offset commit key that does not decode",
                   SAMSA_GRP_OFFSETS_TOPIC);
        return;
    }
    g = samsa_grp_get(gc, k.Group, rec->Value != NULL);
    if (g == NULL) {
        return;
    }
    pthread_mutex_lock(&g->lock);
    if (rec->Value == NULL) {
        o = samsa_grp_offset_find(g, k.Topic.ptr, k.Topic.len, k.Partition);
        if (o != NULL) {
            samsa_grp_offset_drop(g, (size_t) (o - g->offsets));
        }
    } else {
        samsa_rd_init(&vrd, rec->Value, (size_t) rec->ValueLen);
        vver = samsa_rd_i16(&vrd);
        samsa_OffsetCommitValue_init(&v);
        if (samsa_OffsetCommitValue_decode(&vrd, vver, arena, &v)
            != SAMSA_ERR_NONE) {
            samsa_warn("group %s: skipping an offset value that does not "
                       "decode", g->id);
        } else if (pid >= 0) {
            /* a transaction's: pending until its marker */
            samsa_grp_txn_offset_put(g, pid, k.Topic.ptr, k.Topic.len,
                                     k.Partition, v.Offset, v.LeaderEpoch,
                                     v.Metadata.ptr, v.Metadata.len,
                                     v.CommitTimestamp);
        } else {
            samsa_grp_offset_put(g, k.Topic.ptr, k.Topic.len, k.Partition,
                                 v.Offset, v.LeaderEpoch, v.Metadata.ptr,
                                 v.Metadata.len, v.CommitTimestamp,
                                 v.ExpireTimestamp);
        }
    }
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
}

/* Replace g's members and generation with what v says (Kafka's
 * GroupMetadataManager.readGroupMessageValue). */
static void
grpstore_apply_group(samsa_grp_t *g, const samsa_GroupMetadataValue_t *v)
{
    const samsa_GroupMemberMetadata_t  *mm;
    grp_member_t                       *m;
    size_t                              i;

    for (i = 0; i < g->nmembers; i++) {
        samsa_grp_member_free(g->members[i]);
    }
    samsa_free(g->members);
    g->members = samsa_calloc((size_t) v->Members_cnt + 1,
                              sizeof(*g->members));
    g->nmembers = 0;
    samsa_free(g->protocol_type);
    samsa_free(g->protocol_name);
    samsa_free(g->leader_id);
    g->protocol_type = v->ProtocolType.len > 0
                           ? samsa_strndup(v->ProtocolType.ptr,
                                               v->ProtocolType.len)
                           : NULL;
    g->protocol_name = v->Protocol.ptr != NULL
                           ? samsa_strndup(v->Protocol.ptr,
                                               v->Protocol.len)
                           : NULL;
    g->leader_id = v->Leader.ptr != NULL
                       ? samsa_strndup(v->Leader.ptr, v->Leader.len)
                       : NULL;
    g->generation = v->Generation;
    for (i = 0; i < (size_t) v->Members_cnt && g->protocol_name != NULL;
         i++) {
        mm = &v->Members[i];
        m = samsa_grp_member_new(samsa_strndup(mm->MemberId.ptr,
                                               mm->MemberId.len),
                                 mm->GroupInstanceId, mm->ClientId,
                                 mm->ClientHost, mm->SessionTimeout,
                                 mm->RebalanceTimeout > 0
                                     ? mm->RebalanceTimeout
                                     : mm->SessionTimeout);
        m->protos = samsa_calloc(2, sizeof(*m->protos));
        m->nprotos = 1;
        m->protos[0].name = samsa_strdup(g->protocol_name);
        m->protos[0].metadata = samsa_malloc(mm->Subscription.len + 1);
        if (mm->Subscription.len > 0) {
            memcpy(m->protos[0].metadata, mm->Subscription.ptr,
                   mm->Subscription.len);
        }
        m->protos[0].metadata_len = mm->Subscription.len;
        m->assignment = samsa_malloc(mm->Assignment.len + 1);
        if (mm->Assignment.len > 0) {
            memcpy(m->assignment, mm->Assignment.ptr, mm->Assignment.len);
        }
        m->assignment_len = mm->Assignment.len;
        g->members[g->nmembers++] = m;
    }
    samsa_grp_set_state(g, g->nmembers > 0 ? SAMSA_GRP_STABLE
                                           : SAMSA_GRP_EMPTY);
}

static void
grpstore_load_group(samsa_grpcoord_t *gc, samsa_rd_t *krd,
                    const samsa_record_t *rec, samsa_arena_t *arena)
{
    samsa_GroupMetadataKey_t    k;
    samsa_GroupMetadataValue_t  v;
    samsa_grp_t                *g;
    samsa_rd_t                  vrd;
    int16_t                     vver;

    samsa_GroupMetadataKey_init(&k);
    if (samsa_GroupMetadataKey_decode(krd, GRPSTORE_KEY_GROUP, arena, &k)
        != SAMSA_ERR_NONE) {
        samsa_warn("%s: skipping a group key that does not decode",
                   SAMSA_GRP_OFFSETS_TOPIC);
        return;
    }
    g = samsa_grp_get(gc, k.Group, true);
    pthread_mutex_lock(&g->lock);
    samsa_GroupMetadataValue_init(&v);
    v.Members_cnt = 0;
    if (rec->Value == NULL) {
        /* deleted: forget its members; offsets have tombstones of their
         * own */
        grpstore_apply_group(g, &v);
        g->generation = 0;
    } else {
        samsa_rd_init(&vrd, rec->Value, (size_t) rec->ValueLen);
        vver = samsa_rd_i16(&vrd);
        if (samsa_GroupMetadataValue_decode(&vrd, vver, arena, &v)
            == SAMSA_ERR_NONE) {
            grpstore_apply_group(g, &v);
            if (vver >= 2 && v.CurrentStateTimestamp >= 0) {
                g->state_ts_ms = v.CurrentStateTimestamp;   /* KIP-211 */
            }
        } else {
            samsa_warn("group %s: skipping metadata that does not decode",
                       g->id);
        }
    }
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
}

static void
grpstore_load_record(samsa_grpcoord_t *gc, const samsa_record_t *rec,
                     int64_t pid)
{
    samsa_arena_t  arena;
    samsa_rd_t     krd;
    int16_t        kver;

    if (rec->Key == NULL) {
        return;
    }
    samsa_arena_init(&arena);
    samsa_rd_init(&krd, rec->Key, (size_t) rec->KeyLen);
    kver = samsa_rd_i16(&krd);
    if (krd.err == SAMSA_ERR_NONE && (kver == 0 || kver == 1)) {
        grpstore_load_offset(gc, &krd, kver, rec, pid, &arena);
    } else if (krd.err == SAMSA_ERR_NONE && kver == GRPSTORE_KEY_GROUP) {
        grpstore_load_group(gc, &krd, rec, &arena);
    } else if (krd.err == SAMSA_ERR_NONE && kver >= 3 && kver <= 8
               && gc->conf.consumer_ops != NULL) {
        /* a consumer group's (KIP-848): the version is its type */
        gc->conf.consumer_ops->store_load(gc, kver, &krd, rec, &arena);
    }
    samsa_arena_fini(&arena);
}

/* A transaction marker in partition p: the producer's pending offsets in
 * the partition's groups are committed or dropped. */
static void
grpstore_load_marker(samsa_grpcoord_t *gc, int32_t p, const uint8_t *batch,
                     size_t size, int64_t pid)
{
    samsa_record_it_t  it;
    samsa_record_t     rec;

    samsa_record_it_init(&it, batch, size);
    if (samsa_record_it_next(&it, &rec) && rec.Key != NULL
        && rec.KeyLen >= 4) {
        /* ControlRecordType key: version i16, type i16 (0 abort, 1
         * commit) */
        samsa_grp_txn_complete(gc, p, pid,
                               ((rec.Key[2] << 8) | rec.Key[3]) == 1);
    }
}

static void
grpstore_load_data(void *ctx, int32_t p, const samsa_batch_hdr_t *hdr,
                   const samsa_record_t *rec)
{
    (void) p;
    grpstore_load_record(ctx, rec, samsa_batch_is_transactional(hdr)
                                       ? hdr->ProducerId : -1);
}

static void
grpstore_load_control(void *ctx, int32_t p, const samsa_batch_hdr_t *hdr,
                      const uint8_t *batch, size_t size)
{
    grpstore_load_marker(ctx, p, batch, size, hdr->ProducerId);
}

static const samsa_coordload_ops_t  grpstore_load_ops = {
    grpstore_load_data, grpstore_load_control,
};

/* Nothing in g (its lock held): no members, offsets, pending
 * transactional offsets or consumer-protocol group. */
static bool
grpstore_group_is_empty(const samsa_grp_t *g)
{
    return g->nmembers == 0 && g->noffsets == 0 && g->ntxn_offsets == 0
           && g->cg == NULL && g->npending == 0;
}

/* After loading: groups with nothing go, loaded members (classic and
 * consumer) get session timers (they must come back, as after a Kafka
 * coordinator moves).  A late load (a cluster node whose offsets topic
 * came after it started) may meet handlers that already use the table:
 * each group is looked at under its own lock, from a snapshot, and goes
 * under that lock, as every removal does. */
static void
grpstore_load_finish(samsa_grpcoord_t *gc)
{
    samsa_grp_t  **all, *g;
    size_t         n, i, j;

    all = samsa_grp_snapshot(gc, &n);
    for (i = 0; i < n; i++) {
        g = all[i];
        pthread_mutex_lock(&g->lock);
        if (gc->conf.consumer_ops != NULL) {
            gc->conf.consumer_ops->load_finish(g);
        }
        if (grpstore_group_is_empty(g)) {
            samsa_grp_remove(g);
        } else {
            for (j = 0; j < g->nmembers; j++) {
                samsa_grp_member_touch(g, g->members[j]);
            }
        }
        pthread_mutex_unlock(&g->lock);
        samsa_grp_unref(g);
    }
    samsa_free(all);
}

samsa_err_t
samsa_grpstore_load(samsa_grpcoord_t *gc, char *errstr, size_t errstr_size)
{
    samsa_err_t  err;
    int32_t      np;
    int64_t      start = samsa_now_ms();

    np = samsa_coordload_npartitions(gc->conf.meta, SAMSA_GRP_OFFSETS_TOPIC);
    if (np == 0) {
        return SAMSA_ERR_NONE;
    }
    if (np != gc->num_partitions) {
        /* the topic decides, as in Kafka once it exists */
        gc->num_partitions = np;
    }
    atomic_store(&gc->topic_ready, true);
    err = samsa_coordload_scan(gc->conf.logs, gc->conf.meta,
                               samsa_config_kraft(gc->conf.cfg),
                               gc->conf.node_id, SAMSA_GRP_OFFSETS_TOPIC, np,
                               GRPSTORE_READ_BYTES, &grpstore_load_ops, gc,
                               errstr, errstr_size);
    grpstore_load_finish(gc);
    /* only now: a late load's concurrent group requests wait for it in
     * grp_load_late (gc->load_lock) instead of meeting half-loaded groups */
    atomic_store(&gc->loaded, true);
    samsa_info("loaded %zu groups from %s in %lld ms",
               samsa_grpcoord_group_count(gc), SAMSA_GRP_OFFSETS_TOPIC,
               (long long) (samsa_now_ms() - start));
    return err;
}
