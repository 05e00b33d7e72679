/*
 * broker/handlers/h_DeleteRecords.c - DeleteRecords (key 21): move each partition's
 * log start offset up to the given offset (-1: the high watermark),
 * deleting whole segments below it; fetches below it then get
 * OFFSET_OUT_OF_RANGE.  An offset above the high watermark is
 * OFFSET_OUT_OF_RANGE.  On one node the new start is durable once the
 * log-start-offset checkpoint is written, which the log manager does.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/broker.h"
#include "broker/handlers/tpresp.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/DeleteRecords.h"
#include "proto/wr.h"

static const samsa_tp_layout_t  rq_layout = SAMSA_TP_LAYOUT(
    samsa_DeleteRecordsTopic_t, Name, Partitions,
    samsa_DeleteRecordsPartition_t, NULL, NULL);
static const samsa_tp_layout_t  out_layout = SAMSA_TP_LAYOUT(
    samsa_DeleteRecordsTopicResult_t, Name, Partitions,
    samsa_DeleteRecordsPartitionResult_t,
    samsa_DeleteRecordsTopicResult_init_any,
    samsa_DeleteRecordsPartitionResult_init_any);

/* samsa_tp_fill_fn (ctx: samsa_tp_image_t) */
static void
deleterecords_one(void *ctx, samsa_slice_t name, size_t k, const void *rq,
                  void *out)
{
    const samsa_tp_image_t                *c = ctx;
    const samsa_DeleteRecordsPartition_t  *rp = rq;
    samsa_DeleteRecordsPartitionResult_t  *pr = out;
    const samsa_image_topic_t             *t;
    samsa_plog_t                          *plog;
    samsa_err_t                            err;
    int64_t                                offset = rp->Offset, low = -1;

    (void) k;
    pr->PartitionIndex = rp->PartitionIndex;
    pr->LowWatermark = -1;
    if (!samsa_tp_allowed(c, name)) {
        pr->ErrorCode = SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED;
        return;
    }
    err = samsa_broker_plog_find_leader(c->b, c->img, name,
                                        rp->PartitionIndex, &t, &plog);
    if (err != SAMSA_ERR_NONE) {
        pr->ErrorCode = err;
        return;
    }
    if (offset == -1) {
        offset = samsa_plog_high_watermark(plog);
    }
    /* on an error the low watermark is -1, Kafka's INVALID_LOW_WATERMARK
     * (tests/diff) */
    if (offset < 0 || offset > samsa_plog_high_watermark(plog)) {
        pr->ErrorCode = SAMSA_ERR_OFFSET_OUT_OF_RANGE;
        samsa_plog_unref(plog);
        return;
    }
    err = samsa_plog_delete_records(plog, offset, &low);
    pr->ErrorCode = samsa_err_wire(err);
    pr->LowWatermark = err == SAMSA_ERR_NONE ? low : -1;
    samsa_plog_unref(plog);
}

void
samsa_h_DeleteRecords(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_DeleteRecordsRequest_t   *rq = body;
    samsa_DeleteRecordsResponse_t   m;

    samsa_DeleteRecordsResponse_init(&m);
    m.Topics = samsa_tp_respond_checked(apis, req, SAMSA_ACL_OP_DELETE,
                                        &rq_layout, rq->Topics, rq->Topics_cnt,
                                        &out_layout, &m.Topics_cnt,
                                        deleterecords_one, NULL);
    samsa_apis_send(apis->broker, req, &m);
}
