/*
 * broker/handlers/h_ListGroups.c - ListGroups (key 16), v0-v5: every group this
 * coordinator holds, with its state (v4+) and type (v5+: "classic", or
 * "consumer" for KIP-848 groups), filtered by StatesFilter (v4+) and
 * TypesFilter (v5+).
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <string.h>
#include <strings.h>

#include "broker/group/grp.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/ListGroups.h"
#include "proto/wr.h"

/* Whether the types filter lets groups of this type through (Kafka's
 * GroupType.parse: case-insensitive). */
static bool
listgroups_type_ok(const samsa_ListGroupsRequest_t *rq, const char *type)
{
    int32_t  i;
    size_t   len = strlen(type);

    if (rq->TypesFilter_cnt <= 0) {
        return true;
    }
    for (i = 0; i < rq->TypesFilter_cnt; i++) {
        if (rq->TypesFilter[i].len == len
            && strncasecmp(rq->TypesFilter[i].ptr, type, len) == 0) {
            return true;
        }
    }
    return false;
}

void
samsa_h_ListGroups(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_ListGroupsRequest_t  *rq = body;
    samsa_ListGroupsResponse_t  m;
    samsa_grp_listed_t         *gs = NULL;
    size_t                      i, k = 0, n;
    bool                        all;

    n = samsa_grp_list(apis->broker->grp, rq->StatesFilter,
                       rq->StatesFilter_cnt > 0
                           ? (size_t) rq->StatesFilter_cnt : 0,
                       &req->arena, &gs);
    samsa_ListGroupsResponse_init(&m);
    m.Groups = samsa_arena_calloc(&req->arena, n + 1, sizeof(*m.Groups));
    /* Kafka: DESCRIBE on the cluster lists all, else those one may
     * describe */
    all = samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_DESCRIBE);
    for (i = 0; i < n; i++) {
        const char  *type = gs[i].consumer ? "consumer" : "classic";

        if (!listgroups_type_ok(rq, type)
            || (!all && !samsa_apis_allowed(
                            apis, req, NULL, SAMSA_ACL_OP_DESCRIBE,
                            SAMSA_ACL_RESOURCE_GROUP,
                            samsa_slice_cstr(gs[i].group_id)))) {
            continue;
        }
        samsa_ListedGroup_init(&m.Groups[k]);
        m.Groups[k].GroupId = samsa_slice_cstr(gs[i].group_id);
        m.Groups[k].ProtocolType = samsa_slice_cstr(gs[i].protocol_type);
        m.Groups[k].GroupState = samsa_slice_cstr(gs[i].state_name);
        m.Groups[k].GroupType = samsa_slice_cstr(type);
        k++;
    }
    m.Groups_cnt = (int32_t) k;
    samsa_apis_send(apis->broker, req, &m);
}
