/*
 * broker/handlers/h_DescribeProducers.c - DescribeProducers (key 61, KIP-664), v0:
 * per partition the producers its log keeps state for (log/pstate.h):
 * id, epoch, last sequence, last timestamp, coordinator epoch and the
 * first offset of the open transaction.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/broker.h"
#include "broker/handlers/tpresp.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/DescribeProducers.h"
#include "proto/wr.h"
#include "util/alloc.h"

/* samsa_tp_fill_fn (ctx: samsa_tp_image_t) */
static void
dp_partition(void *ctx, samsa_slice_t name, size_t k, const void *rq,
             void *out)
{
    const samsa_tp_image_t                      *c = ctx;
    int32_t                                      index = *(const int32_t *) rq;
    samsa_DescribeProducersPartitionResponse_t  *pr = out;
    const samsa_image_topic_t                   *t;
    samsa_pstate_entry_t                        *list;
    samsa_ProducerState_t                       *ps;
    samsa_plog_t                                *plog;
    size_t                                       n, i;
    samsa_err_t                                  err;

    (void) k;
    pr->PartitionIndex = index;
    if (!samsa_tp_allowed(c, name)) {
        pr->ErrorCode = SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED;
        return;
    }
    err = samsa_broker_plog_find_leader(c->b, c->img, name, index, &t,
                                        &plog);
    if (err != SAMSA_ERR_NONE) {
        pr->ErrorCode = err;    /* Kafka: the leader answers (KIP-664) */
        if (samsa_image_topic_find(c->img, name.ptr, name.len) == NULL) {
            /* a topic-level error comes with the error's default
             * message (Kafka's ApiError(UNKNOWN_TOPIC_OR_PARTITION)) */
            pr->ErrorMessage = samsa_slice_cstr(samsa_err_text(err));
        }
        return;
    }
    n = samsa_plog_producers(plog, &list);
    samsa_plog_unref(plog);
    pr->ActiveProducers_cnt = (int32_t) n;
    pr->ActiveProducers = samsa_arena_calloc(&c->req->arena, n,
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

static const samsa_tp_layout_t  rq_layout = SAMSA_TP_LAYOUT(
    samsa_DescribeProducersTopic_t, Name, PartitionIndexes, int32_t, NULL,
    NULL);
static const samsa_tp_layout_t  out_layout = SAMSA_TP_LAYOUT(
    samsa_DescribeProducersTopicResponse_t, Name, Partitions,
    samsa_DescribeProducersPartitionResponse_t,
    samsa_DescribeProducersTopicResponse_init_any,
    samsa_DescribeProducersPartitionResponse_init_any);

void
samsa_h_DescribeProducers(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_DescribeProducersRequest_t   *rq = body;
    samsa_DescribeProducersResponse_t   m;

    samsa_DescribeProducersResponse_init(&m);
    m.Topics = samsa_tp_respond_checked(apis, req, SAMSA_ACL_OP_READ,
                                        &rq_layout, rq->Topics, rq->Topics_cnt,
                                        &out_layout, &m.Topics_cnt,
                                        dp_partition, NULL);
    samsa_apis_send_opts(apis->broker, req, &m, &samsa_apis_uncounted);
}
