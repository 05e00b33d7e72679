/*
 * meta/controller/ctlbrokers.c - broker registration on the controller
 * thread, as Kafka's ClusterControlManager.registerBroker and the
 * heartbeat that unfences a caught-up broker: a RegisterBrokerRecord
 * (fenced, its broker epoch its own offset, with the broker's endpoints
 * and the feature range it supports) followed by a
 * BrokerRegistrationChangeRecord unfencing it.  Records are written at
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
                          int64_t *epoch)
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

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_BrokerRegistrationChangeRecord;
    samsa_BrokerRegistrationChangeRecord_init(
        &rec.u.BrokerRegistrationChangeRecord);
    rec.u.BrokerRegistrationChangeRecord.BrokerId = reg->broker_id;
    rec.u.BrokerRegistrationChangeRecord.BrokerEpoch = *epoch;
    rec.u.BrokerRegistrationChangeRecord.Fenced = -1;     /* unfence */
    samsa_ctlbatch_add(b, &rec);
}
