/*
 * broker/handlers/h_DescribeUserScramCredentials.c - DescribeUserScram-
 * Credentials (key 50, KIP-554): per user the SCRAM mechanisms and
 * iterations the metadata image holds, as Kafka's ScramImage.describe
 * answers: null or empty Users means every user; a user named twice gets
 * DUPLICATE_RESOURCE, one without credentials RESOURCE_NOT_FOUND.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <string.h>

#include "meta/image.h"
#include "net/scram.h"
#include "proto/gen/DescribeUserScramCredentials.h"

static void
dus_user(samsa_req_t *req, const samsa_image_t *img, samsa_slice_t user,
         bool duplicate, samsa_DescribeUserScramCredentialsResult_t *out)
{
    static const samsa_scram_mech_t  mechs[] = { SAMSA_SCRAM_SHA_256,
                                                 SAMSA_SCRAM_SHA_512 };
    samsa_scram_cred_t               cred;
    char                            *name;
    size_t                           i;

    samsa_DescribeUserScramCredentialsResult_init(out);
    out->User = user;
    out->ErrorMessage = samsa_slice_cstr("");   /* Kafka: "", not null */
    if (duplicate) {
        out->ErrorCode = SAMSA_ERR_DUPLICATE_RESOURCE;
        out->ErrorMessage = samsa_slice_cstr(samsa_arena_printf(
            &req->arena, "Cannot describe SCRAM credentials for the same "
            "user twice in a single request: %.*s", (int) user.len,
            user.ptr));
        return;
    }
    name = samsa_arena_strndup(&req->arena, user.ptr, user.len);
    out->CredentialInfos = samsa_arena_calloc(&req->arena, 2,
                                              sizeof(*out->CredentialInfos));
    for (i = 0; i < 2; i++) {
        if (samsa_image_scram_credential(img, name, mechs[i], &cred)) {
            samsa_CredentialInfo_init(
                &out->CredentialInfos[out->CredentialInfos_cnt]);
            out->CredentialInfos[out->CredentialInfos_cnt].Mechanism =
                (int8_t) mechs[i];
            out->CredentialInfos[out->CredentialInfos_cnt++].Iterations =
                cred.iterations;
        }
    }
    if (out->CredentialInfos_cnt == 0) {
        out->ErrorCode = SAMSA_ERR_RESOURCE_NOT_FOUND;
        out->ErrorMessage = samsa_slice_cstr(samsa_arena_printf(
            &req->arena, "Attempt to describe a user credential that does "
            "not exist: %s", name));
    }
}

void
samsa_h_DescribeUserScramCredentials(samsa_apis_t *apis, samsa_req_t *req,
                                     void *body)
{
    samsa_DescribeUserScramCredentialsRequest_t  *rq = body;
    samsa_DescribeUserScramCredentialsResponse_t  m;
    samsa_image_t                                *img;
    samsa_slice_t                                *users;
    const char                                   *name;
    int8_t                                        type;
    size_t                                        i, j, n = 0, cnt, ncfg;
    size_t                                        seen;

    img = samsa_apis_image(apis->broker, req);
    samsa_DescribeUserScramCredentialsResponse_init(&m);
    m.ErrorMessage = samsa_slice_cstr("");      /* as Kafka's answer */
    if (rq->Users != NULL && rq->Users_cnt > 0) {
        cnt = (size_t) rq->Users_cnt;
        users = samsa_arena_calloc(&req->arena, cnt + 1, sizeof(*users));
        for (i = 0; i < cnt; i++) {
            for (j = 0; j < n && !samsa_slice_eq(users[j], rq->Users[i].Name);
                 j++) {
            }
            if (j == n) {
                users[n++] = rq->Users[i].Name;
            }
        }
    } else {
        cnt = samsa_image_resource_count(img);
        users = samsa_arena_calloc(&req->arena, cnt + 1, sizeof(*users));
        for (i = 0; i < cnt; i++) {
            (void) samsa_image_resource_at(img, i, &type, &name, &ncfg);
            if (type == SAMSA_IMAGE_RESOURCE_SCRAM && ncfg > 0) {
                users[n++] = samsa_slice_cstr(name);
            }
        }
    }
    m.Results = samsa_arena_calloc(&req->arena, n + 1, sizeof(*m.Results));
    m.Results_cnt = (int32_t) n;
    for (i = 0; i < n; i++) {
        seen = 0;
        for (j = 0; rq->Users != NULL && j < (size_t) rq->Users_cnt; j++) {
            seen += samsa_slice_eq(rq->Users[j].Name, users[i]);
        }
        dus_user(req, img, users[i], seen > 1, &m.Results[i]);
    }
    samsa_apis_send(apis->broker, req, &m);
}
