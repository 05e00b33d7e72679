/*
 * broker/group/grptxn.c - the group coordinator's side of transactions
 * (Kafka's GroupMetadata pendingTransactionalOffsetCommits and
 * GroupMetadataManager.handleTxnCompletion): offsets committed by
 * TxnOffsetCommit wait per producer id until the transaction coordinator
 * writes its marker to the group's partition of __consumer_offsets; a
 * commit makes them the group's committed offsets, an abort drops them.
 * OffsetFetch with RequireStable reports partitions with pending offsets
 * as UNSTABLE_OFFSET_COMMIT.
 * Threads: handlers (TxnOffsetCommit, OffsetFetch), txnmarker (markers),
 * main (load); always under the group's lock.
 */
#include "broker/group/grp_int.h"

#include <string.h>

#include "util/alloc.h"

int32_t
samsa_grpcoord_partition_for(samsa_grpcoord_t *gc, samsa_slice_t group_id)
{
    return samsa_grp_partition_for(group_id.ptr != NULL ? group_id.ptr : "",
                                   group_id.len, gc->num_partitions);
}

static grp_txn_offset_t *
grp_txn_offset_find(samsa_grp_t *g, int64_t pid, const char *topic,
                    size_t topic_len, int32_t partition)
{
    grp_txn_offset_t  *t;
    size_t             i;

    for (i = 0; i < g->ntxn_offsets; i++) {
        t = &g->txn_offsets[i];
        if (t->producer_id == pid && t->o.partition == partition
            && strlen(t->o.topic) == topic_len
            && memcmp(t->o.topic, topic, topic_len) == 0) {
            return t;
        }
    }
    return NULL;
}

void
samsa_grp_txn_offset_put(samsa_grp_t *g, int64_t pid, const char *topic,
                         size_t topic_len, int32_t partition, int64_t offset,
                         int32_t leader_epoch, const char *metadata,
                         size_t metadata_len, int64_t commit_ts_ms)
{
    grp_txn_offset_t  *t = grp_txn_offset_find(g, pid, topic, topic_len,
                                               partition);

    if (t == NULL) {
        g->txn_offsets = samsa_realloc(g->txn_offsets,
                                       (g->ntxn_offsets + 1)
                                           * sizeof(*g->txn_offsets));
        t = &g->txn_offsets[g->ntxn_offsets++];
        memset(t, 0, sizeof(*t));
        t->producer_id = pid;
        t->o.topic = samsa_strndup(topic, topic_len);
        t->o.partition = partition;
    } else {
        samsa_free(t->o.metadata);
    }
    t->o.offset = offset;
    t->o.leader_epoch = leader_epoch;
    t->o.metadata = samsa_strndup(metadata != NULL ? metadata : "",
                                      metadata != NULL ? metadata_len : 0);
    t->o.commit_ts_ms = commit_ts_ms;
    t->o.expire_ts_ms = -1;
}

/* Commit (move to the offsets) or drop producer_id's pending offsets.
 * @locks grp held */
static void
grp_txn_apply(samsa_grp_t *g, int64_t pid, bool commit)
{
    grp_txn_offset_t  *t;
    size_t             i = 0;

    while (i < g->ntxn_offsets) {
        t = &g->txn_offsets[i];
        if (t->producer_id != pid) {
            i++;
            continue;
        }
        if (commit) {
            samsa_grp_offset_put(g, t->o.topic, strlen(t->o.topic),
                                 t->o.partition, t->o.offset,
                                 t->o.leader_epoch, t->o.metadata,
                                 strlen(t->o.metadata), t->o.commit_ts_ms,
                                 -1);
        }
        samsa_free(t->o.topic);
        samsa_free(t->o.metadata);
        memmove(t, t + 1, (g->ntxn_offsets - i - 1) * sizeof(*t));
        g->ntxn_offsets--;
    }
}

void
samsa_grp_txn_offsets_free(samsa_grp_t *g)
{
    size_t  i;

    for (i = 0; i < g->ntxn_offsets; i++) {
        samsa_free(g->txn_offsets[i].o.topic);
        samsa_free(g->txn_offsets[i].o.metadata);
    }
    samsa_free(g->txn_offsets);
    g->txn_offsets = NULL;
    g->ntxn_offsets = 0;
}

void
samsa_grp_txn_complete(samsa_grpcoord_t *gc, int32_t partition, int64_t pid,
                       bool commit)
{
    samsa_grp_t  **all;
    size_t         i, n;

    all = samsa_grp_snapshot(gc, &n);
    for (i = 0; i < n; i++) {
        if (all[i]->partition == partition) {
            pthread_mutex_lock(&all[i]->lock);
            grp_txn_apply(all[i], pid, commit);
            pthread_mutex_unlock(&all[i]->lock);
        }
        samsa_grp_unref(all[i]);
    }
    samsa_free(all);
}

void
samsa_grp_offsets_mark_unstable(samsa_grpcoord_t *gc, samsa_slice_t group_id,
                                samsa_grp_offset_t *offs, size_t n)
{
    samsa_grp_t  *g = samsa_grp_get(gc, group_id, false);
    size_t        i, j;

    if (g == NULL) {
        return;
    }
    pthread_mutex_lock(&g->lock);
    for (i = 0; i < n; i++) {
        for (j = 0; j < g->ntxn_offsets; j++) {
            if (g->txn_offsets[j].o.partition == offs[i].partition
                && samsa_slice_eq_cstr(offs[i].topic,
                                       g->txn_offsets[j].o.topic)) {
                offs[i].error = SAMSA_ERR_UNSTABLE_OFFSET_COMMIT;
                offs[i].offset = -1;
                offs[i].leader_epoch = -1;
                offs[i].metadata = (samsa_slice_t) { "", 0 };
                break;
            }
        }
    }
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
}
