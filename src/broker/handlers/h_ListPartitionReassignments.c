/*
 * broker/handlers/h_ListPartitionReassignments.c - ListPartitionReassignments
 * (key 46, KIP-455), v0: the reassignments in progress, as Kafka's
 * controller lists them (ReplicationControlManager.
 * listPartitionReassignments, to which a broker forwards it): a topic is
 * listed only with partitions being reassigned, so unknown topics and
 * partitions named in the request are left out.  samsa never reassigns
 * partitions (AlterPartitionReassignments is not served), so the answer
 * is always the empty list.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/broker.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/gen/ListPartitionReassignments.h"

void
samsa_h_ListPartitionReassignments(samsa_apis_t *apis, samsa_req_t *req,
                                   void *body)
{
    samsa_ListPartitionReassignmentsResponse_t  m;

    (void) body;
    samsa_ListPartitionReassignmentsResponse_init(&m);  /* no topics */
    if (!samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_DESCRIBE)) {
        m.ErrorCode = SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED;
    }
    samsa_apis_send(apis->broker, req, &m);
}
