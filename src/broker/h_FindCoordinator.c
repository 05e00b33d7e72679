/*
 * broker/h_FindCoordinator.c - FindCoordinator (key 10), v0-v4.  Samsa has
 * no group or transaction coordinator yet (issues 4 and 5), so every key
 * gets COORDINATOR_NOT_AVAILABLE, the retriable answer Kafka gives while
 * its coordinators load; clients keep asking and nothing else breaks.
 * The API is advertised even so because librdkafka turns on lz4 (and its
 * group coordinator support) only when FindCoordinator v0 is listed
 * (CLIENTS.md): without it librdkafka silently sends lz4 batches
 * uncompressed.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "net/reqchan.h"
#include "proto/gen/FindCoordinator.h"
#include "proto/wr.h"

#define FC_NONE_MSG "Samsa has no group or transaction coordinator yet"

void
samsa_h_FindCoordinator(samsa_apis_t *apis, samsa_req_t *req)
{
    samsa_FindCoordinatorRequest_t   rq;
    samsa_FindCoordinatorResponse_t  m;
    samsa_resp_t                    *resp;
    samsa_wr_t                       wr;
    int32_t                          i, n;

    (void) apis;
    samsa_FindCoordinatorRequest_init(&rq);
    if (samsa_FindCoordinatorRequest_decode(&req->body, req->hdr.ApiVersion,
                                            &req->arena, &rq)
        != SAMSA_ERR_NONE) {
        samsa_apis_close(req, "malformed request body");
        return;
    }
    samsa_FindCoordinatorResponse_init(&m);
    m.ErrorCode = SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
    m.ErrorMessage = samsa_slice_cstr(FC_NONE_MSG);
    m.NodeId = -1;
    m.Host = samsa_slice_cstr("");
    m.Port = -1;
    n = rq.CoordinatorKeys_cnt > 0 ? rq.CoordinatorKeys_cnt : 0;
    m.Coordinators_cnt = n;
    m.Coordinators = samsa_arena_calloc(&req->arena, (size_t) n + 1,
                                        sizeof(*m.Coordinators));
    for (i = 0; i < n; i++) {
        samsa_Coordinator_init(&m.Coordinators[i]);
        m.Coordinators[i].Key = rq.CoordinatorKeys[i];
        m.Coordinators[i].NodeId = -1;
        m.Coordinators[i].Host = samsa_slice_cstr("");
        m.Coordinators[i].Port = -1;
        m.Coordinators[i].ErrorCode = SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
        m.Coordinators[i].ErrorMessage = samsa_slice_cstr(FC_NONE_MSG);
    }
    resp = samsa_resp_new_send(req);
    wr = (samsa_wr_t) { .buf = &resp->frame };
    samsa_FindCoordinatorResponse_encode(&wr, req->hdr.ApiVersion, &m);
    samsa_reqchan_respond(resp);
}
