/*
 * broker/handlers/h_ApiVersions.c - ApiVersions (key 18): the APIs and version
 * ranges this socket server implements, straight from the api table.  A
 * version we do not know is answered as v0 with UNSUPPORTED_VERSION and the
 * ranges, so the client can retry with one we do (KIP-511).  A v3+ request
 * whose client software name or version is invalid gets INVALID_REQUEST.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <string.h>

#include "broker/broker.h"
#include "broker/quota.h"
#include "meta/image.h"
#include "meta/meta.h"
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

/* v3+: KIP-584's feature tags.  Supported: the metadata.version levels
 * this broker reads and writes (SAMSA_META_METADATA_VERSION only).
 * Finalized: the image's feature levels, min and max both the level as
 * Kafka reports them since KIP-778, at the image's offset as the epoch
 * (Kafka's finalized-features epoch is the metadata offset too). */
static void
apiversions_fill_features(samsa_apis_t *apis, samsa_arena_t *arena,
                          samsa_ApiVersionsResponse_t *m)
{
    samsa_image_t  *img = samsa_meta_image_get(apis->broker->meta);
    size_t          i, n = samsa_image_feature_count(img);
    int16_t         level;
    const char     *name;

    m->SupportedFeatures = samsa_arena_calloc(arena, 1,
                                              sizeof(*m->SupportedFeatures));
    m->SupportedFeatures[0].Name =
        samsa_slice_cstr(SAMSA_META_METADATA_VERSION_NAME);
    m->SupportedFeatures[0].MinVersion = SAMSA_META_METADATA_VERSION;
    m->SupportedFeatures[0].MaxVersion = SAMSA_META_METADATA_VERSION;
    m->SupportedFeatures_cnt = 1;
    m->FinalizedFeatures = samsa_arena_calloc(arena, n + 1,
                                              sizeof(*m->FinalizedFeatures));
    for (i = 0; i < n; i++) {
        name = samsa_image_feature_at(img, i, &level);
        m->FinalizedFeatures[i].Name = samsa_slice_cstr(
            samsa_arena_strndup(arena, name, strlen(name)));
        m->FinalizedFeatures[i].MinVersionLevel = level;
        m->FinalizedFeatures[i].MaxVersionLevel = level;
    }
    m->FinalizedFeatures_cnt = (int32_t) n;
    m->FinalizedFeaturesEpoch = n > 0 ? samsa_image_offset(img) : -1;
    samsa_image_put(img);
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
    /* a controller-only socket server has no broker (and no image at
     * hand): its answer carries no features yet */
    if (version >= 3 && apis->broker != NULL) {
        apiversions_fill_features(apis, &req->arena, &m);
    }
    apiversions_send(apis, req, version, &m);
}
