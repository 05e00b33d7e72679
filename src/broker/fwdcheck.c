/*
 * broker/fwdcheck.c - see fwdcheck.h.
 */
#include "broker/fwdcheck.h"

#include "meta/acl.h"
#include "proto/gen/AlterConfigs.h"
#include "proto/gen/CreatePartitions.h"
#include "proto/gen/CreateTopics.h"
#include "proto/gen/DeleteTopics.h"
#include "proto/gen/IncrementalAlterConfigs.h"

/* Kafka's ConfigResource.Type ids. */
#define FWD_CONFIG_TOPIC           2
#define FWD_CONFIG_GROUP           32

bool
samsa_fwdcheck_config_allowed(samsa_apis_t *apis, const samsa_req_t *req,
                              const samsa_image_t *img, int8_t operation,
                              int8_t config_type, samsa_slice_t name,
                              samsa_err_t *err)
{
    if (config_type == FWD_CONFIG_TOPIC) {
        *err = SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED;
        return samsa_apis_allowed(apis, req, img, operation,
                                  SAMSA_ACL_RESOURCE_TOPIC, name);
    }
    if (config_type == FWD_CONFIG_GROUP) {
        *err = SAMSA_ERR_GROUP_AUTHORIZATION_FAILED;
        return samsa_apis_allowed(apis, req, img, operation,
                                  SAMSA_ACL_RESOURCE_GROUP, name);
    }
    /* BROKER, BROKER_LOGGER, CLIENT_METRICS: the cluster */
    *err = SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED;
    return samsa_apis_allowed(apis, req, img, operation,
                              SAMSA_ACL_RESOURCE_CLUSTER,
                              samsa_slice_cstr(SAMSA_ACL_CLUSTER_NAME));
}

static bool
fwd_topic(samsa_apis_t *apis, const samsa_req_t *req, int8_t op,
          samsa_slice_t name)
{
    return samsa_apis_allowed(apis, req, NULL, op, SAMSA_ACL_RESOURCE_TOPIC,
                              name);
}

bool
samsa_fwdcheck_forwardable(samsa_apis_t *apis, const samsa_req_t *req,
                           const void *body)
{
    samsa_err_t  err;
    int32_t      i;

    if (!samsa_apis_authz_on(apis)) {
        return true;
    }
    switch (req->hdr.ApiKey) {
    case SAMSA_API_CreateTopics: {
        const samsa_CreateTopicsRequest_t  *rq = body;

        if (samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_CREATE)) {
            return true;
        }
        for (i = 0; i < rq->Topics_cnt; i++) {
            if (!fwd_topic(apis, req, SAMSA_ACL_OP_CREATE,
                           rq->Topics[i].Name)) {
                return false;
            }
        }
        return true;
    }
    case SAMSA_API_DeleteTopics: {
        const samsa_DeleteTopicsRequest_t  *rq = body;
        const samsa_image_topic_t          *t;
        samsa_image_t                      *img;
        bool                                ok = true;

        for (i = 0; i < rq->TopicNames_cnt && ok; i++) {
            ok = fwd_topic(apis, req, SAMSA_ACL_OP_DELETE, rq->TopicNames[i]);
        }
        img = samsa_meta_image_get(apis->broker->meta);
        for (i = 0; i < rq->Topics_cnt && ok; i++) {
            samsa_slice_t  name = rq->Topics[i].Name;

            if (name.ptr == NULL) {
                t = samsa_image_topic_find_id(img, rq->Topics[i].TopicId);
                name = t != NULL ? (samsa_slice_t) { t->name, t->name_len }
                                 : SAMSA_SLICE_NULL;
            }
            ok = name.ptr != NULL
                 && fwd_topic(apis, req, SAMSA_ACL_OP_DELETE, name);
        }
        samsa_image_put(img);
        return ok;
    }
    case SAMSA_API_CreatePartitions: {
        const samsa_CreatePartitionsRequest_t  *rq = body;

        for (i = 0; i < rq->Topics_cnt; i++) {
            if (!fwd_topic(apis, req, SAMSA_ACL_OP_ALTER,
                           rq->Topics[i].Name)) {
                return false;
            }
        }
        return true;
    }
    case SAMSA_API_AlterConfigs: {
        const samsa_AlterConfigsRequest_t  *rq = body;

        for (i = 0; i < rq->Resources_cnt; i++) {
            if (!samsa_fwdcheck_config_allowed(apis, req, NULL,
                                               SAMSA_ACL_OP_ALTER_CONFIGS,
                                               rq->Resources[i].ResourceType,
                                               rq->Resources[i].ResourceName,
                                               &err)) {
                return false;
            }
        }
        return true;
    }
    case SAMSA_API_IncrementalAlterConfigs: {
        const samsa_IncrementalAlterConfigsRequest_t  *rq = body;

        for (i = 0; i < rq->Resources_cnt; i++) {
            if (!samsa_fwdcheck_config_allowed(apis, req, NULL,
                                               SAMSA_ACL_OP_ALTER_CONFIGS,
                                               rq->Resources[i].ResourceType,
                                               rq->Resources[i].ResourceName,
                                               &err)) {
                return false;
            }
        }
        return true;
    }
    case SAMSA_API_AlterClientQuotas:
        return samsa_apis_allowed_cluster(apis, req,
                                          SAMSA_ACL_OP_ALTER_CONFIGS);
    default:        /* CreateAcls, DeleteAcls, UnregisterBroker */
        return samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_ALTER);
    }
}
