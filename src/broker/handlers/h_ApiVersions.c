/*
 * broker/handlers/h_ApiVersions.c - ApiVersions (key 18): the APIs and version
 * ranges this socket server implements, straight from the api table.  A
 * version we do not know is answered as v0 with UNSUPPORTED_VERSION and the
 * ranges, so the client can retry with one we do (KIP-511).  A v3+ request
 * whose client software name or version is invalid gets INVALID_REQUEST.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/quota.h"
#include "net/server/reqchan.h"
#include "proto/gen/ApiVersions.h"
#include "proto/proto.h"
#include "proto/wr.h"

static void
apiversions_fill_keys(samsa_apis_t *apis, samsa_arena_t *arena,
                      samsa_ApiVersionsResponse_t *m)
{
    int  key, n = 0;

    for (key = 0; key < SAMSA_API_KEY_LIMIT; key++) {
        n += apis->defs[key] != NULL;
    }
    m->ApiKeys = samsa_arena_calloc(arena, (size_t) n, sizeof(*m->ApiKeys));
    m->ApiKeys_cnt = n;
    n = 0;
    for (key = 0; key < SAMSA_API_KEY_LIMIT; key++) {
        if (apis->defs[key] != NULL) {
            m->ApiKeys[n].ApiKey = (int16_t) key;
            m->ApiKeys[n].MinVersion = apis->defs[key]->min_version;
            m->ApiKeys[n].MaxVersion = apis->defs[key]->max_version;
            n++;
        }
    }
}

/* Written as version (v0 for an unsupported one); the request time goes
 * to the request quota before encoding (none on a controller listener). */
static void
apiversions_send(samsa_apis_t *apis, samsa_req_t *req, int16_t version,
                 samsa_ApiVersionsResponse_t *m)
{
    const samsa_apis_send_opts_t  opts = { version, NULL, true };

    samsa_apis_send_opts(apis->broker, req, m, &opts);
}

void
samsa_h_ApiVersions(samsa_apis_t *apis, samsa_req_t *req, void *raw)
{
    const samsa_api_def_t        *def = samsa_apis_find(apis,
                                             SAMSA_API_ApiVersions);
    samsa_ApiVersionsRequest_t    rq;
    samsa_ApiVersionsResponse_t   m;
    int16_t                       version = req->hdr.ApiVersion;

    (void) raw;                 /* SAMSA_API_F_RAW: decoded here */
    samsa_ApiVersionsResponse_init(&m);
    if (version < def->min_version || version > def->max_version) {
        m.ErrorCode = SAMSA_ERR_UNSUPPORTED_VERSION;
        apiversions_fill_keys(apis, &req->arena, &m);
        apiversions_send(apis, req, 0, &m);
        return;
    }
    samsa_ApiVersionsRequest_init(&rq);
    if (samsa_ApiVersionsRequest_decode(&req->body, version, &req->arena, &rq)
        != SAMSA_ERR_NONE) {
        samsa_apis_close(req, "malformed request body");
        return;
    }
    if (version >= 3
        && (!samsa_proto_software_valid(rq.ClientSoftwareName)
            || !samsa_proto_software_valid(rq.ClientSoftwareVersion))) {
        m.ErrorCode = SAMSA_ERR_INVALID_REQUEST;
        apiversions_send(apis, req, version, &m);
        return;
    }
    apiversions_fill_keys(apis, &req->arena, &m);
    apiversions_send(apis, req, version, &m);
}
