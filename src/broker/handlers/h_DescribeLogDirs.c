/*
 * broker/handlers/h_DescribeLogDirs.c - DescribeLogDirs (key 35): each log dir with
 * the partitions in it (size, offset lag 0 on one node) and, v4+, the
 * volume's total and usable bytes.  A null topic list means every
 * partition.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <string.h>

#include "broker/broker.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/DescribeLogDirs.h"
#include "proto/wr.h"
#include "util/alloc.h"

typedef struct dld_ctx {
    samsa_arena_t                            *arena;
    const samsa_DescribeLogDirsRequest_t     *rq;
    const char                               *dir;
    samsa_DescribeLogDirsResult_t            *out;
    size_t                                    topics_cap;
} dld_ctx_t;

static bool
dld_wanted(const dld_ctx_t *c, const char *topic, int32_t partition)
{
    int32_t  i, j;

    if (c->rq->Topics_cnt < 0) {
        return true;
    }
    for (i = 0; i < c->rq->Topics_cnt; i++) {
        if (!samsa_slice_eq_cstr(c->rq->Topics[i].Topic, topic)) {
            continue;
        }
        for (j = 0; j < c->rq->Topics[i].Partitions_cnt; j++) {
            if (c->rq->Topics[i].Partitions[j] == partition) {
                return true;
            }
        }
    }
    return false;
}

static samsa_DescribeLogDirsTopic_t *
dld_topic(dld_ctx_t *c, const char *name)
{
    samsa_DescribeLogDirsTopic_t  *t;
    int32_t                        i;

    for (i = 0; i < c->out->Topics_cnt; i++) {
        if (samsa_slice_eq_cstr(c->out->Topics[i].Name, name)) {
            return &c->out->Topics[i];
        }
    }
    if ((size_t) c->out->Topics_cnt == c->topics_cap) {
        samsa_DescribeLogDirsTopic_t  *grown;

        c->topics_cap = c->topics_cap == 0 ? 16 : c->topics_cap * 2;
        grown = samsa_arena_calloc(c->arena, c->topics_cap, sizeof(*grown));
        if (c->out->Topics_cnt > 0) {
            memcpy(grown, c->out->Topics,
                   (size_t) c->out->Topics_cnt * sizeof(*grown));
        }
        c->out->Topics = grown;
    }
    t = &c->out->Topics[c->out->Topics_cnt++];
    samsa_DescribeLogDirsTopic_init(t);
    t->Name = samsa_slice_cstr(samsa_arena_strndup(c->arena, name,
                                                   strlen(name)));
    t->Partitions_cnt = 0;
    return t;
}

static void
dld_plog_cb(void *ctx, samsa_plog_t *plog)
{
    dld_ctx_t                         *c = ctx;
    samsa_DescribeLogDirsTopic_t      *t;
    samsa_DescribeLogDirsPartition_t  *p, *grown;
    const char                        *topic = samsa_plog_topic(plog);
    int32_t                            part = samsa_plog_partition(plog);

    if (strcmp(samsa_plog_parent_dir(plog), c->dir) != 0
        || !dld_wanted(c, topic, part)) {
        return;
    }
    t = dld_topic(c, topic);
    grown = samsa_arena_calloc(c->arena, (size_t) t->Partitions_cnt + 1,
                               sizeof(*grown));
    if (t->Partitions_cnt > 0) {
        memcpy(grown, t->Partitions,
               (size_t) t->Partitions_cnt * sizeof(*grown));
    }
    t->Partitions = grown;
    p = &t->Partitions[t->Partitions_cnt++];
    samsa_DescribeLogDirsPartition_init(p);
    p->PartitionIndex = part;
    p->PartitionSize = samsa_plog_size_bytes(plog);
    p->OffsetLag = 0;
}

void
samsa_h_DescribeLogDirs(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_DescribeLogDirsRequest_t  *rq = body;
    samsa_DescribeLogDirsResponse_t  m;
    samsa_logmgr_t                  *logs = apis->broker->logs;
    dld_ctx_t                        c;
    size_t                           i, n = samsa_logmgr_dir_count(logs);

    samsa_DescribeLogDirsResponse_init(&m);
    /* Kafka: DESCRIBE on the cluster, else no directories (v3+: the
     * error) */
    if (!samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_DESCRIBE)) {
        m.ErrorCode = SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED;
        m.Results_cnt = 0;
        samsa_apis_send(apis->broker, req, &m);
        return;
    }
    m.Results_cnt = (int32_t) n;
    m.Results = samsa_arena_calloc(&req->arena, n + 1, sizeof(*m.Results));
    for (i = 0; i < n; i++) {
        memset(&c, 0, sizeof(c));
        c.arena = &req->arena;
        c.rq = rq;
        c.dir = samsa_logmgr_dir(logs, i);
        c.out = &m.Results[i];
        samsa_DescribeLogDirsResult_init(c.out);
        c.out->LogDir = samsa_slice_cstr(c.dir);
        c.out->Topics_cnt = 0;
        if (!samsa_logmgr_dir_online(logs, i)) {
            c.out->ErrorCode = SAMSA_ERR_KAFKA_STORAGE_ERROR;
            continue;
        }
        if (samsa_logmgr_dir_usage(logs, i, &c.out->TotalBytes,
                                   &c.out->UsableBytes)
            != SAMSA_ERR_NONE) {
            c.out->TotalBytes = c.out->UsableBytes = -1;
        }
        samsa_logmgr_foreach(logs, dld_plog_cb, &c);
    }
    samsa_apis_send(apis->broker, req, &m);
}
