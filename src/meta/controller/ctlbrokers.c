/*
 * meta/controller/ctlbrokers.c - broker registration on the controller
 * thread, as Kafka's ClusterControlManager.registerBroker and the
 * heartbeat that unfences a caught-up broker: a RegisterBrokerRecord
 * (fenced, its broker epoch its own offset, with the broker's endpoints
 * and the feature range it supports) followed by a
 * BrokerRegistrationChangeRecord unfencing it (one node only; in cluster
 * mode the heartbeat does, samsa_ctlbrokers_heartbeat).  Records are written at
 * metadata.version 3.3-IV3 (SAMSA_META_METADATA_VERSION):
 * RegisterBrokerRecord v1, BrokerRegistrationChangeRecord v0.
 * Threads: the controller thread.
 */
#include "meta/controller/controller_int.h"

#include <string.h>

#include "util/alloc.h"

/* RegisterBrokerRecord v1 (InControlledShutdown) from 3.3-IV3 on. */
#define CTLBROKERS_REGISTER_VERSION  1

void
samsa_ctlbrokers_register(samsa_ctlbatch_t *b,
                          const samsa_controller_broker_reg_t *reg,
                          bool unfence, int64_t *epoch)
{
    samsa_MetadataRecords_any_t      rec;
    samsa_RegisterBrokerRecord_t    *r = &rec.u.RegisterBrokerRecord;
    samsa_RegisterBrokerEndpoint_t  *eps;
    samsa_RegisterBrokerFeature_t    feat;
    size_t                           i;

    *epoch = b->next_offset;
    eps = samsa_calloc(reg->nendpoints + 1, sizeof(*eps));
    for (i = 0; i < reg->nendpoints; i++) {
        samsa_RegisterBrokerEndpoint_init(&eps[i]);
        eps[i].Name = samsa_slice_cstr(reg->endpoints[i].listener);
        eps[i].Host = samsa_slice_cstr(reg->endpoints[i].host);
        eps[i].Port = reg->endpoints[i].port;
        eps[i].SecurityProtocol = reg->endpoints[i].security_protocol;
    }
    samsa_RegisterBrokerFeature_init(&feat);
    feat.Name = samsa_slice_cstr(SAMSA_META_METADATA_VERSION_NAME);
    feat.MinSupportedVersion = SAMSA_META_METADATA_VERSION;
    feat.MaxSupportedVersion = SAMSA_META_METADATA_VERSION;
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_RegisterBrokerRecord;
    rec.version = CTLBROKERS_REGISTER_VERSION;
    samsa_RegisterBrokerRecord_init(r);
    r->BrokerId = reg->broker_id;
    r->IncarnationId = reg->incarnation_id;
    r->BrokerEpoch = *epoch;
    r->EndPoints = eps;
    r->EndPoints_cnt = (int32_t) reg->nendpoints;
    r->Features = &feat;
    r->Features_cnt = 1;
    r->Rack = reg->rack != NULL ? samsa_slice_cstr(reg->rack)
                                : SAMSA_SLICE_NULL;
    r->Fenced = true;
    samsa_ctlbatch_add(b, &rec);
    samsa_free(eps);
    if (!unfence) {
        return;     /* cluster mode: the first caught-up heartbeat does */
    }

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_BrokerRegistrationChangeRecord;
    samsa_BrokerRegistrationChangeRecord_init(
        &rec.u.BrokerRegistrationChangeRecord);
    rec.u.BrokerRegistrationChangeRecord.BrokerId = reg->broker_id;
    rec.u.BrokerRegistrationChangeRecord.BrokerEpoch = *epoch;
    rec.u.BrokerRegistrationChangeRecord.Fenced = -1;     /* unfence */
    samsa_ctlbatch_add(b, &rec);
}

/* A BrokerRegistrationChangeRecord (v0) setting the broker's fence state:
 * fenced 1 fences, -1 unfences. */
void
samsa_ctlbrokers_fence(samsa_ctlbatch_t *b, int32_t broker_id,
                       int64_t broker_epoch, int8_t fenced)
{
    samsa_MetadataRecords_any_t  rec;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_BrokerRegistrationChangeRecord;
    samsa_BrokerRegistrationChangeRecord_init(
        &rec.u.BrokerRegistrationChangeRecord);
    rec.u.BrokerRegistrationChangeRecord.BrokerId = broker_id;
    rec.u.BrokerRegistrationChangeRecord.BrokerEpoch = broker_epoch;
    rec.u.BrokerRegistrationChangeRecord.Fenced = fenced;
    samsa_ctlbatch_add(b, &rec);
}

samsa_err_t
samsa_ctlbrokers_check_epoch(samsa_ctlbatch_t *b, int32_t broker_id,
                             int64_t broker_epoch)
{
    const samsa_image_broker_t  *br = samsa_image_broker_find(b->img,
                                                              broker_id);

    if (br == NULL || br->epoch != broker_epoch) {
        return SAMSA_ERR_STALE_BROKER_EPOCH;
    }
    return SAMSA_ERR_NONE;
}

/* Kafka's ClusterControlManager / BrokerHeartbeatManager on a heartbeat:
 * the broker must be registered with this epoch; it is caught up once it
 * has applied its own registration record (the broker epoch is that
 * record's offset); a fenced, caught-up broker that does not ask to stay
 * fenced is unfenced. */
void
samsa_ctlbrokers_heartbeat(samsa_ctlbatch_t *b,
                           const samsa_controller_heartbeat_t *hb,
                           samsa_controller_heartbeat_result_t *res)
{
    const samsa_image_broker_t  *br = samsa_image_broker_find(b->img,
                                                              hb->broker_id);

    res->error = SAMSA_ERR_NONE;
    res->caught_up = false;
    res->fenced = true;
    if (br == NULL) {
        res->error = SAMSA_ERR_BROKER_ID_NOT_REGISTERED;
        return;
    }
    if (br->epoch != hb->broker_epoch) {
        res->error = SAMSA_ERR_STALE_BROKER_EPOCH;
        return;
    }
    res->caught_up = hb->current_offset >= br->epoch;
    res->fenced = br->fenced;
    if (br->fenced && res->caught_up && !hb->want_fence) {
        samsa_ctlbrokers_fence(b, br->id, br->epoch, -1);
        res->fenced = false;
    } else if (!br->fenced && hb->want_fence) {
        samsa_ctlbrokers_fence(b, br->id, br->epoch, 1);
        res->fenced = true;
    }
}
