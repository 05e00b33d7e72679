/*
 * broker/handlers/h_OffsetDelete.c - OffsetDelete (key 47), v0 (KIP-496): delete a
 * group's committed offsets of partitions it does not consume (a consumer
 * member subscribed to the topic: GROUP_SUBSCRIBED_TO_TOPIC; a non-empty
 * group of another protocol: NON_EMPTY_GROUP).
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/group/grp.h"
#include "meta/acl.h"
#include "meta/image.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/OffsetDelete.h"
#include "proto/wr.h"

void
samsa_h_OffsetDelete(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_OffsetDeleteRequest_t         *rq = body;
    samsa_OffsetDeleteResponse_t         m;
    samsa_OffsetDeleteResponseTopic_t   *tr;
    const samsa_image_topic_t           *t;
    samsa_grp_offset_t                  *offs;
    samsa_image_t                       *img;
    samsa_err_t                          err;
    size_t                               n = 0, k = 0;
    int32_t                              i, j, p;

    for (i = 0; i < rq->Topics_cnt; i++) {
        n += rq->Topics[i].Partitions_cnt > 0
                 ? (size_t) rq->Topics[i].Partitions_cnt : 0;
    }
    offs = samsa_arena_calloc(&req->arena, n + 1, sizeof(*offs));
    img = samsa_meta_image_get(apis->broker->meta);
    for (i = 0; i < rq->Topics_cnt; i++) {
        t = samsa_image_topic_find(img, rq->Topics[i].Name.ptr != NULL
                                            ? rq->Topics[i].Name.ptr : "",
                                   rq->Topics[i].Name.len);
        for (j = 0; j < rq->Topics[i].Partitions_cnt; j++, k++) {
            p = rq->Topics[i].Partitions[j].PartitionIndex;
            offs[k].topic = rq->Topics[i].Name;
            offs[k].partition = p;
            offs[k].error =
                !samsa_apis_allowed(apis, req, img, SAMSA_ACL_OP_READ,
                                    SAMSA_ACL_RESOURCE_TOPIC,
                                    rq->Topics[i].Name)
                    ? SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED
                : t == NULL || p < 0 || p >= t->npartitions
                    ? SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION
                    : SAMSA_ERR_NONE;
        }
    }
    samsa_image_put(img);
    err = rq->GroupId.len == 0
              ? SAMSA_ERR_INVALID_GROUP_ID
          : !samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_DELETE,
                                SAMSA_ACL_RESOURCE_GROUP, rq->GroupId)
              ? SAMSA_ERR_GROUP_AUTHORIZATION_FAILED
              : samsa_grp_delete_offsets(apis->broker->grp, rq->GroupId, offs,
                                         n);
    samsa_OffsetDeleteResponse_init(&m);
    m.ErrorCode = samsa_err_wire(err);
    m.Topics_cnt = err == SAMSA_ERR_NONE && rq->Topics_cnt > 0
                       ? rq->Topics_cnt : 0;
    m.Topics = samsa_arena_calloc(&req->arena, (size_t) m.Topics_cnt + 1,
                                  sizeof(*m.Topics));
    k = 0;
    for (i = 0; i < m.Topics_cnt; i++) {
        tr = &m.Topics[i];
        tr->Name = rq->Topics[i].Name;
        tr->Partitions_cnt = rq->Topics[i].Partitions_cnt > 0
                                 ? rq->Topics[i].Partitions_cnt : 0;
        tr->Partitions = samsa_arena_calloc(&req->arena,
                                            (size_t) tr->Partitions_cnt + 1,
                                            sizeof(*tr->Partitions));
        for (j = 0; j < tr->Partitions_cnt; j++, k++) {
            tr->Partitions[j].PartitionIndex = offs[k].partition;
            tr->Partitions[j].ErrorCode = samsa_err_wire(offs[k].error);
        }
    }
    samsa_apis_send(apis->broker, req, &m);
}
