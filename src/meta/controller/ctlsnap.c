/*
 * meta/controller/ctlsnap.c - see ctlsnap.h.
 */
#include "meta/controller/ctlsnap.h"

#include <stdio.h>
#include <string.h>

#include "proto/rd.h"
#include "proto/wr.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/endian.h"

void
samsa_ctlsnap_add(samsa_buf_t *out, const samsa_MetadataRecords_any_t *rec)
{
    samsa_wr_t   wr;
    size_t       at = out->len;
    uint8_t     *p;

    samsa_wr_init(&wr, out);
    samsa_wr_u32(&wr, 0);               /* the length, patched below */
    samsa_MetadataRecords_encode_framed(&wr, rec);
    p = out->data + at;
    samsa_store_be32(p, (uint32_t) (out->len - at - 4));
}

static void
snap_features(const samsa_image_t *img, samsa_buf_t *out, uint32_t *count)
{
    samsa_MetadataRecords_any_t  rec;
    const char                  *name;
    int16_t                      level;
    size_t                       i;

    for (i = 0; i < samsa_image_feature_count(img); i++) {
        name = samsa_image_feature_at(img, i, &level);
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_FeatureLevelRecord;
        samsa_FeatureLevelRecord_init(&rec.u.FeatureLevelRecord);
        rec.u.FeatureLevelRecord.Name = samsa_slice_cstr(name);
        rec.u.FeatureLevelRecord.FeatureLevel = level;
        samsa_ctlsnap_add(out, &rec);
        (*count)++;
    }
}

static void
snap_config(samsa_buf_t *out, uint32_t *count, int8_t type, const char *res,
            const samsa_image_config_t *c)
{
    samsa_MetadataRecords_any_t  rec;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_ConfigRecord;
    samsa_ConfigRecord_init(&rec.u.ConfigRecord);
    rec.u.ConfigRecord.ResourceType = type;
    rec.u.ConfigRecord.ResourceName = samsa_slice_cstr(res);
    rec.u.ConfigRecord.Name = samsa_slice_cstr(c->name);
    rec.u.ConfigRecord.Value = samsa_slice_cstr(c->value);
    samsa_ctlsnap_add(out, &rec);
    (*count)++;
}

/* A SCRAM credential as Kafka's ScramImage writes it: a
 * UserScramCredentialRecord. */
static void
snap_scram(samsa_buf_t *out, uint32_t *count, const char *user,
           const samsa_image_config_t *c)
{
    samsa_MetadataRecords_any_t       rec;
    samsa_UserScramCredentialRecord_t *r = &rec.u.UserScramCredentialRecord;
    samsa_scram_cred_t                cred;
    samsa_scram_mech_t                mech;
    size_t                            hlen;

    if (!samsa_scram_mech_from_name(c->name, &mech)
        || !samsa_image_scram_parse(c->value, mech, &cred)) {
        return;                         /* replay checked it: not reached */
    }
    hlen = samsa_scram_hash_len(mech);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_UserScramCredentialRecord;
    samsa_UserScramCredentialRecord_init(r);
    r->Name = samsa_slice_cstr(user);
    r->Mechanism = (int8_t) mech;
    r->Salt = (samsa_slice_t) { (const char *) cred.salt, cred.salt_len };
    r->StoredKey = (samsa_slice_t) { (const char *) cred.stored_key, hlen };
    r->ServerKey = (samsa_slice_t) { (const char *) cred.server_key, hlen };
    r->Iterations = cred.iterations;
    samsa_ctlsnap_add(out, &rec);
    (*count)++;
}

static void
snap_topic(const samsa_image_topic_t *t, samsa_buf_t *out, uint32_t *count)
{
    samsa_MetadataRecords_any_t     rec;
    samsa_PartitionRecord_t        *p = &rec.u.PartitionRecord;
    const samsa_image_partition_t  *ip;
    int32_t                         i;
    size_t                          c;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_TopicRecord;
    samsa_TopicRecord_init(&rec.u.TopicRecord);
    rec.u.TopicRecord.Name = (samsa_slice_t) { t->name, t->name_len };
    rec.u.TopicRecord.TopicId = t->id;
    samsa_ctlsnap_add(out, &rec);
    (*count)++;
    for (i = 0; i < t->npartitions; i++) {
        ip = &t->partitions[i];
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_PartitionRecord;
        samsa_PartitionRecord_init(p);
        p->PartitionId = ip->partition;
        p->TopicId = t->id;
        p->Replicas = (int32_t *) ip->replicas;
        p->Replicas_cnt = ip->nreplicas;
        p->Isr = (int32_t *) ip->isr;
        p->Isr_cnt = ip->nisr;
        p->AddingReplicas = (int32_t *) ip->adding;
        p->AddingReplicas_cnt = ip->nadding;
        p->RemovingReplicas = (int32_t *) ip->removing;
        p->RemovingReplicas_cnt = ip->nremoving;
        p->Leader = ip->leader;
        p->LeaderEpoch = ip->leader_epoch;
        p->PartitionEpoch = ip->partition_epoch;
        samsa_ctlsnap_add(out, &rec);
        (*count)++;
    }
    for (c = 0; c < t->nconfigs; c++) {
        snap_config(out, count, SAMSA_CONFIG_RESOURCE_TOPIC, t->name,
                    &t->configs[c]);
    }
}

/* RegisterBrokerRecord v1 (InControlledShutdown), as ctlbrokers.c writes
 * it at metadata.version 3.3-IV3. */
#define SNAP_REGISTER_BROKER_VERSION  1

/* Each broker as one RegisterBrokerRecord with its whole registration:
 * endpoints, features, rack, fence and controlled shutdown state. */
static void
snap_brokers(const samsa_image_t *img, samsa_buf_t *out, uint32_t *count)
{
    samsa_MetadataRecords_any_t       rec;
    samsa_RegisterBrokerRecord_t     *r = &rec.u.RegisterBrokerRecord;
    samsa_RegisterBrokerEndpoint_t   *eps;
    samsa_RegisterBrokerFeature_t    *feats;
    const samsa_image_broker_t       *b;
    size_t                            i, j;

    for (i = 0; i < samsa_image_broker_count(img); i++) {
        b = samsa_image_broker_at(img, i);
        eps = samsa_calloc(b->nendpoints + 1, sizeof(*eps));
        for (j = 0; j < b->nendpoints; j++) {
            samsa_RegisterBrokerEndpoint_init(&eps[j]);
            eps[j].Name = samsa_slice_cstr(b->endpoints[j].listener);
            eps[j].Host = samsa_slice_cstr(b->endpoints[j].host);
            eps[j].Port = b->endpoints[j].port;
            eps[j].SecurityProtocol = b->endpoints[j].security_protocol;
        }
        feats = samsa_calloc(b->nfeatures + 1, sizeof(*feats));
        for (j = 0; j < b->nfeatures; j++) {
            samsa_RegisterBrokerFeature_init(&feats[j]);
            feats[j].Name = samsa_slice_cstr(b->features[j].name);
            feats[j].MinSupportedVersion = b->features[j].min_version;
            feats[j].MaxSupportedVersion = b->features[j].max_version;
        }
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_RegisterBrokerRecord;
        rec.version = SNAP_REGISTER_BROKER_VERSION;
        samsa_RegisterBrokerRecord_init(r);
        r->BrokerId = b->id;
        r->BrokerEpoch = b->epoch;
        r->IncarnationId = b->incarnation_id;
        r->EndPoints = eps;
        r->EndPoints_cnt = (int32_t) b->nendpoints;
        r->Features = feats;
        r->Features_cnt = (int32_t) b->nfeatures;
        r->Fenced = b->fenced;
        r->InControlledShutdown = b->in_controlled_shutdown;
        r->Rack = b->rack != NULL ? samsa_slice_cstr(b->rack)
                                  : (samsa_slice_t) { NULL, 0 };
        samsa_ctlsnap_add(out, &rec);
        (*count)++;
        samsa_free(feats);
        samsa_free(eps);
    }
}

/* Each ACL binding as its AccessControlEntryRecord, id and all. */
static void
snap_acls(const samsa_image_t *img, samsa_buf_t *out, uint32_t *count)
{
    samsa_MetadataRecords_any_t        rec;
    samsa_AccessControlEntryRecord_t  *r = &rec.u.AccessControlEntryRecord;
    const samsa_acl_set_t             *set = samsa_image_acls(img);
    const samsa_acl_t                 *acl;
    size_t                             i;

    for (i = 0; i < samsa_acl_set_count(set); i++) {
        acl = samsa_acl_set_at(set, i);
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_AccessControlEntryRecord;
        samsa_AccessControlEntryRecord_init(r);
        r->Id = acl->id;
        r->ResourceType = acl->resource_type;
        r->ResourceName = samsa_slice_cstr(acl->resource_name);
        r->PatternType = acl->pattern_type;
        r->Principal = samsa_slice_cstr(acl->principal);
        r->Host = samsa_slice_cstr(acl->host);
        r->Operation = acl->operation;
        r->PermissionType = acl->permission;
        samsa_ctlsnap_add(out, &rec);
        (*count)++;
    }
}

void
samsa_ctlsnap_write(const samsa_image_t *img, samsa_buf_t *out,
                    uint32_t *count)
{
    samsa_MetadataRecords_any_t  rec;
    const samsa_image_config_t  *cfgs;
    const char                  *name;
    int8_t                       type;
    size_t                       i, j, n;

    *count = 0;
    snap_features(img, out, count);
    snap_brokers(img, out, count);
    for (i = 0; i < samsa_image_topic_count(img); i++) {
        snap_topic(samsa_image_topic_at(img, i), out, count);
    }
    for (i = 0; i < samsa_image_resource_count(img); i++) {
        cfgs = samsa_image_resource_at(img, i, &type, &name, &n);
        for (j = 0; j < n; j++) {
            if (type == SAMSA_IMAGE_RESOURCE_SCRAM) {
                snap_scram(out, count, name, &cfgs[j]);
            } else {
                snap_config(out, count, type, name, &cfgs[j]);
            }
        }
    }
    snap_acls(img, out, count);
    if (samsa_image_next_producer_id(img) > 0) {
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_ProducerIdsRecord;
        samsa_ProducerIdsRecord_init(&rec.u.ProducerIdsRecord);
        rec.u.ProducerIdsRecord.BrokerId = -1;
        rec.u.ProducerIdsRecord.NextProducerId =
            samsa_image_next_producer_id(img);
        samsa_ctlsnap_add(out, &rec);
        (*count)++;
    }
}

samsa_err_t
samsa_ctlsnap_replay(samsa_image_delta_t *delta, const uint8_t *data,
                     size_t len, uint32_t max, int64_t first,
                     bool same_offset, char *errstr, size_t errstr_size)
{
    samsa_MetadataRecords_any_t  rec;
    samsa_arena_t                arena;
    samsa_rd_t                   rd, one;
    samsa_err_t                  err = SAMSA_ERR_NONE;
    uint32_t                     i, rlen;

    samsa_arena_init(&arena);
    samsa_rd_init(&rd, data, len);
    for (i = 0; i < max && samsa_rd_remain(&rd) > 0; i++) {
        rlen = samsa_rd_u32(&rd);
        if (rd.err != SAMSA_ERR_NONE || rlen > samsa_rd_remain(&rd)) {
            snprintf(errstr, errstr_size, "record %u: bad length",
                     (unsigned) i);
            err = SAMSA_ERR__BAD_MSG;
            break;
        }
        samsa_rd_init(&one, samsa_rd_fixed(&rd, rlen), rlen);
        if (samsa_MetadataRecords_decode_framed(&one, &arena, &rec)
                != SAMSA_ERR_NONE
            || samsa_rd_remain(&one) != 0) {
            snprintf(errstr, errstr_size, "record %u does not decode",
                     (unsigned) i);
            err = SAMSA_ERR__BAD_MSG;
            break;
        }
        err = samsa_image_delta_replay(delta, &rec,
                                       same_offset ? first : first + i,
                                       errstr, errstr_size);
        if (err != SAMSA_ERR_NONE) {
            break;
        }
    }
    if (err == SAMSA_ERR_NONE && max != UINT32_MAX && i != max) {
        snprintf(errstr, errstr_size, "%u record(s) of %u", (unsigned) i,
                 (unsigned) max);
        err = SAMSA_ERR__BAD_MSG;
    }
    samsa_arena_fini(&arena);
    return err;
}
