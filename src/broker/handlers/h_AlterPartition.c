/*
 * broker/handlers/h_AlterPartition.c - AlterPartition (key 56, KIP-497),
 * served on the CONTROLLER listeners: a partition leader's ISR changes
 * (broker/isrmgr.h sends them) go to the controller thread
 * (samsa_controller_alter_partition: Kafka's
 * ReplicationControlManager.alterPartition) and the answer, per
 * partition, is the new ISR and epochs once the PartitionChangeRecords
 * are committed.  v0-1 name topics (TopicName, not advertised: Kafka 4
 * serves v2-3), v2 adds TopicId, v3 a broker epoch per ISR member
 * (NewIsrWithEpochs, KIP-903); before v3 every member's epoch is -1 (not
 * checked).  The top-level ErrorCode is STALE_BROKER_EPOCH (the sender's
 * broker epoch), NOT_CONTROLLER (not the active controller) or a commit
 * failure; the rest are per partition.  A v0-1 request names topics the
 * controller resolves here from the image (UNKNOWN_TOPIC_OR_PARTITION
 * when unknown).
 * Threads: handler (the answer waits for the metadata log commit).
 */
#include "broker/api_table.h"

#include "meta/controller/controller.h"
#include "meta/image.h"
#include "proto/gen/AlterPartition.h"

/* The topic id a request topic names: TopicId from v2, else the image's
 * id of TopicName (zero: unknown). */
static samsa_uuid_t
ap_topic_id(samsa_apis_t *apis, samsa_req_t *req,
            const samsa_AlterPartitionTopic_t *t)
{
    const samsa_image_topic_t  *it;
    samsa_uuid_t                none = { { 0 } };

    if (req->hdr.ApiVersion >= 2) {
        return t->TopicId;
    }
    it = samsa_image_topic_find(samsa_apis_image(apis->broker, req),
                                t->TopicName.ptr, t->TopicName.len);
    return it != NULL ? it->id : none;
}

/* One partition of the request as the controller takes it. */
static void
ap_change(samsa_req_t *req, samsa_uuid_t topic_id,
          const samsa_AlterPartitionPartition_t *p,
          samsa_controller_isr_change_t *c)
{
    samsa_controller_isr_member_t  *isr;
    int32_t                         i, n;

    n = req->hdr.ApiVersion >= 3 ? p->NewIsrWithEpochs_cnt : p->NewIsr_cnt;
    n = n > 0 ? n : 0;
    isr = samsa_arena_calloc(&req->arena, (size_t) n + 1, sizeof(*isr));
    for (i = 0; i < n; i++) {
        if (req->hdr.ApiVersion >= 3) {
            isr[i].broker_id = p->NewIsrWithEpochs[i].BrokerId;
            isr[i].broker_epoch = p->NewIsrWithEpochs[i].BrokerEpoch;
        } else {
            isr[i].broker_id = p->NewIsr[i];
            isr[i].broker_epoch = -1;
        }
    }
    c->topic_id = topic_id;
    c->partition = p->PartitionIndex;
    c->leader_epoch = p->LeaderEpoch;
    c->partition_epoch = p->PartitionEpoch;
    c->leader_recovery_state = p->LeaderRecoveryState;
    c->isr = isr;
    c->nisr = (size_t) n;
}

/* The response's partition for result r (answering request partition
 * index). */
static void
ap_result(int32_t index, const samsa_controller_isr_result_t *r,
          samsa_AlterPartitionPartitionResult_t *out)
{
    samsa_AlterPartitionPartitionResult_init(out);
    out->PartitionIndex = index;
    out->ErrorCode = (int16_t) r->error;
    if (r->error != SAMSA_ERR_NONE) {
        return;
    }
    out->LeaderId = r->leader_id;
    out->LeaderEpoch = r->leader_epoch;
    out->Isr = (int32_t *) r->isr;
    out->Isr_cnt = (int32_t) r->nisr;
    out->LeaderRecoveryState = r->leader_recovery_state;
    out->PartitionEpoch = r->partition_epoch;
}

/* The whole request's changes, in request order: *n of them. */
static samsa_controller_isr_change_t *
ap_changes(samsa_apis_t *apis, samsa_req_t *req,
           const samsa_AlterPartitionRequest_t *rq, size_t *n)
{
    samsa_controller_isr_change_t  *cs;
    samsa_uuid_t                    id;
    size_t                          total = 0, k = 0;
    int32_t                         i, j;

    for (i = 0; i < rq->Topics_cnt; i++) {
        total += rq->Topics[i].Partitions_cnt > 0
                 ? (size_t) rq->Topics[i].Partitions_cnt : 0;
    }
    cs = samsa_arena_calloc(&req->arena, total + 1, sizeof(*cs));
    for (i = 0; i < rq->Topics_cnt; i++) {
        id = ap_topic_id(apis, req, &rq->Topics[i]);
        for (j = 0; j < rq->Topics[i].Partitions_cnt; j++) {
            ap_change(req, id, &rq->Topics[i].Partitions[j], &cs[k++]);
        }
    }
    *n = total;
    return cs;
}

/* The response topics answering rq, from the results in request order;
 * a v0-1 topic the image does not know is UNKNOWN_TOPIC_OR_PARTITION
 * (the controller said UNKNOWN_TOPIC_ID for its zero id). */
static void
ap_answer(samsa_req_t *req, const samsa_AlterPartitionRequest_t *rq,
          const samsa_controller_isr_result_t *res,
          samsa_AlterPartitionResponse_t *m)
{
    samsa_AlterPartitionTopicResult_t  *t;
    samsa_controller_isr_result_t       r;
    size_t                              k = 0;
    int32_t                             i, j;

    m->Topics = samsa_apis_resp_array(req, rq->Topics_cnt, sizeof(*m->Topics),
                                      &m->Topics_cnt);
    for (i = 0; i < m->Topics_cnt; i++) {
        t = &m->Topics[i];
        samsa_AlterPartitionTopicResult_init(t);
        t->TopicName = rq->Topics[i].TopicName;
        t->TopicId = rq->Topics[i].TopicId;
        t->Partitions = samsa_apis_resp_array(
            req, rq->Topics[i].Partitions_cnt, sizeof(*t->Partitions),
            &t->Partitions_cnt);
        for (j = 0; j < t->Partitions_cnt; j++) {
            r = res[k++];
            if (req->hdr.ApiVersion < 2
                && r.error == SAMSA_ERR_UNKNOWN_TOPIC_ID) {
                r.error = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
            }
            ap_result(rq->Topics[i].Partitions[j].PartitionIndex, &r,
                      &t->Partitions[j]);
        }
    }
}

void
samsa_h_AlterPartition(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_AlterPartitionRequest_t    *rq = body;
    samsa_AlterPartitionResponse_t    m;
    samsa_controller_isr_change_t    *cs;
    samsa_controller_isr_result_t    *res;
    samsa_err_t                       err;
    size_t                            n;

    samsa_AlterPartitionResponse_init(&m);
    if (apis->broker == NULL || apis->broker->ctrl == NULL) {
        m.ErrorCode = SAMSA_ERR_NOT_CONTROLLER;
        samsa_apis_send(apis->broker, req, &m);
        return;
    }
    cs = ap_changes(apis, req, rq, &n);
    res = samsa_arena_calloc(&req->arena, n + 1, sizeof(*res));
    err = samsa_controller_alter_partition(apis->broker->ctrl, rq->BrokerId,
                                           rq->BrokerEpoch, cs, n,
                                           &req->arena, res);
    if (err != SAMSA_ERR_NONE) {
        m.ErrorCode = samsa_apis_controller_error(err);
    } else {
        ap_answer(req, rq, res, &m);
    }
    samsa_apis_send(apis->broker, req, &m);
}
