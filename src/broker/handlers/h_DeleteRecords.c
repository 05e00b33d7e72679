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
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/DeleteRecords.h"
#include "proto/wr.h"

static void
deleterecords_one(samsa_broker_t *b, const samsa_image_t *img,
                  samsa_slice_t name, const samsa_DeleteRecordsPartition_t *rp,
                  samsa_DeleteRecordsPartitionResult_t *pr)
{
    const samsa_image_topic_t  *t;
    samsa_plog_t               *plog;
    samsa_err_t                 err;
    int64_t                     offset = rp->Offset, low = -1;

    pr->PartitionIndex = rp->PartitionIndex;
    pr->LowWatermark = -1;
    plog = samsa_broker_plog_find(b, img, name, rp->PartitionIndex, &t);
    if (plog == NULL) {
        pr->ErrorCode = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        return;
    }
    if (offset == -1) {
        offset = samsa_plog_high_watermark(plog);
    }
    if (offset < 0 || offset > samsa_plog_high_watermark(plog)) {
        pr->ErrorCode = SAMSA_ERR_OFFSET_OUT_OF_RANGE;
        pr->LowWatermark = samsa_plog_log_start_offset(plog);
        samsa_plog_unref(plog);
        return;
    }
    err = samsa_plog_delete_records(plog, offset, &low);
    pr->ErrorCode = samsa_err_wire(err);
    pr->LowWatermark = err == SAMSA_ERR_NONE
                           ? low
                           : samsa_plog_log_start_offset(plog);
    samsa_plog_unref(plog);
}

void
samsa_h_DeleteRecords(samsa_apis_t *apis, samsa_req_t *req)
{
    samsa_DeleteRecordsRequest_t         rq;
    samsa_DeleteRecordsResponse_t        m;
    samsa_DeleteRecordsTopicResult_t    *tr;
    samsa_image_t                       *img;
    int32_t                              i, j;

    samsa_DeleteRecordsRequest_init(&rq);
    if (samsa_DeleteRecordsRequest_decode(&req->body, req->hdr.ApiVersion,
                                          &req->arena, &rq)
        != SAMSA_ERR_NONE) {
        samsa_apis_close(req, "malformed request body");
        return;
    }
    samsa_DeleteRecordsResponse_init(&m);
    img = samsa_meta_image_get(apis->broker->meta);
    m.Topics_cnt = rq.Topics_cnt > 0 ? rq.Topics_cnt : 0;
    m.Topics = samsa_arena_calloc(&req->arena, (size_t) m.Topics_cnt,
                                  sizeof(*m.Topics));
    for (i = 0; i < m.Topics_cnt; i++) {
        tr = &m.Topics[i];
        samsa_DeleteRecordsTopicResult_init(tr);
        tr->Name = rq.Topics[i].Name;
        tr->Partitions_cnt = rq.Topics[i].Partitions_cnt > 0
                                 ? rq.Topics[i].Partitions_cnt : 0;
        tr->Partitions = samsa_arena_calloc(&req->arena,
                                            (size_t) tr->Partitions_cnt,
                                            sizeof(*tr->Partitions));
        for (j = 0; j < tr->Partitions_cnt; j++) {
            samsa_DeleteRecordsPartitionResult_init(&tr->Partitions[j]);
            deleterecords_one(apis->broker, img, tr->Name,
                              &rq.Topics[i].Partitions[j],
                              &tr->Partitions[j]);
        }
    }
    samsa_image_put(img);
    samsa_apis_send(apis->broker, req, &m);
}
