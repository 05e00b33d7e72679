/*
 * broker/handlers/h_DescribeProducers.c - DescribeProducers (key 61, KIP-664), v0:
 * per partition the producers its log keeps state for (log/pstate.h):
 * id, epoch, last sequence, last timestamp, coordinator epoch and the
 * first offset of the open transaction.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/broker.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/DescribeProducers.h"
#include "proto/wr.h"
#include "util/alloc.h"

static void
dp_partition(samsa_broker_t *b, samsa_req_t *req, const samsa_image_t *img,
             samsa_slice_t name, int32_t index,
             samsa_DescribeProducersPartitionResponse_t *pr)
{
    const samsa_image_topic_t  *t;
    samsa_pstate_entry_t       *list;
    samsa_ProducerState_t      *ps;
    samsa_plog_t               *plog;
    size_t                      n, i;

    pr->PartitionIndex = index;
    plog = samsa_broker_plog_find(b, img, name, index, &t);
    if (plog == NULL) {
        pr->ErrorCode = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        return;
    }
    n = samsa_plog_producers(plog, &list);
    samsa_plog_unref(plog);
    pr->ActiveProducers_cnt = (int32_t) n;
    pr->ActiveProducers = samsa_arena_calloc(&req->arena, n,
                                             sizeof(*pr->ActiveProducers));
    for (i = 0; i < n; i++) {
        ps = &pr->ActiveProducers[i];
        samsa_ProducerState_init(ps);
        ps->ProducerId = list[i].producer_id;
        ps->ProducerEpoch = list[i].epoch;
        ps->LastSequence = list[i].nbatches > 0
                               ? list[i].batches[list[i].nbatches - 1].last_seq
                               : -1;
        ps->LastTimestamp = list[i].last_timestamp;
        ps->CoordinatorEpoch = list[i].coordinator_epoch;
        ps->CurrentTxnStartOffset = list[i].txn_first_offset;
    }
    samsa_free(list);
}

void
samsa_h_DescribeProducers(samsa_apis_t *apis, samsa_req_t *req)
{
    samsa_DescribeProducersRequest_t           rq;
    samsa_DescribeProducersResponse_t          m;
    samsa_DescribeProducersTopicResponse_t    *tr;
    samsa_image_t                             *img;
    int32_t                                    i, j;

    samsa_DescribeProducersRequest_init(&rq);
    if (samsa_DescribeProducersRequest_decode(&req->body, req->hdr.ApiVersion,
                                              &req->arena, &rq)
        != SAMSA_ERR_NONE) {
        samsa_apis_close(req, "malformed request body");
        return;
    }
    samsa_DescribeProducersResponse_init(&m);
    img = samsa_meta_image_get(apis->broker->meta);
    m.Topics_cnt = rq.Topics_cnt > 0 ? rq.Topics_cnt : 0;
    m.Topics = samsa_arena_calloc(&req->arena, (size_t) m.Topics_cnt,
                                  sizeof(*m.Topics));
    for (i = 0; i < m.Topics_cnt; i++) {
        tr = &m.Topics[i];
        samsa_DescribeProducersTopicResponse_init(tr);
        tr->Name = rq.Topics[i].Name;
        tr->Partitions_cnt = rq.Topics[i].PartitionIndexes_cnt > 0
                                 ? rq.Topics[i].PartitionIndexes_cnt : 0;
        tr->Partitions = samsa_arena_calloc(&req->arena,
                                            (size_t) tr->Partitions_cnt,
                                            sizeof(*tr->Partitions));
        for (j = 0; j < tr->Partitions_cnt; j++) {
            samsa_DescribeProducersPartitionResponse_init(&tr->Partitions[j]);
            dp_partition(apis->broker, req, img, tr->Name,
                         rq.Topics[i].PartitionIndexes[j],
                         &tr->Partitions[j]);
        }
    }
    samsa_image_put(img);
    samsa_apis_send_opts(apis->broker, req, &m, &samsa_apis_uncounted);
}
