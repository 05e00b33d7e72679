/*
 * client/admin/admin_scram.c - users' SCRAM credentials (KIP-554):
 * DescribeUserScramCredentials (API 50) and AlterUserScramCredentials
 * (API 51), as Kafka's Admin.describeUserScramCredentials and
 * alterUserScramCredentials (the client salts: net/scram.h).
 * Threads: the caller's, under a->lock.
 */
#include <samsa/admin.h>

#include <stdlib.h>
#include <string.h>


#include "client/admin/admin_int.h"
#include "net/scram.h"
#include "proto/gen/AlterUserScramCredentials.h"
#include "proto/gen/DescribeUserScramCredentials.h"
#include "proto/gen/apis.h"
#include "util/alloc.h"
#include "util/diag.h"

#define ADMIN_SCRAM_SALT_BYTES  32

const char *
samsa_admin_scram_mechanism_name(int8_t mechanism)
{
    samsa_scram_mech_t  m;

    return samsa_scram_mech_from_type(mechanism, &m)
               ? samsa_scram_mech_name(m) : NULL;
}

static int
admin_cmp_user(const void *a, const void *b)
{
    return strcmp(((const samsa_user_scram_desc_t *) a)->user,
                  ((const samsa_user_scram_desc_t *) b)->user);
}

static int
admin_cmp_info(const void *a, const void *b)
{
    return ((const samsa_scram_credential_info_t *) a)->mechanism
           - ((const samsa_scram_credential_info_t *) b)->mechanism;
}

static samsa_user_scram_descs_t *
admin_scram_descs(const samsa_DescribeUserScramCredentialsResponse_t *resp)
{
    samsa_user_scram_descs_t  *res;
    samsa_user_scram_desc_t   *d;
    samsa_arena_t             *arena;
    const samsa_DescribeUserScramCredentialsResult_t  *r;
    int32_t                    i, j;

    res = samsa_admin_result_new(sizeof(*res), &arena);
    res->users = samsa_admin_items(arena, resp->Results_cnt,
                                   sizeof(*res->users), &res->n);
    for (i = 0; i < (int32_t) res->n; i++) {
        r = &resp->Results[i];
        d = &res->users[i];
        d->user = samsa_admin_name(arena, r->User);
        d->err = (samsa_err_t) r->ErrorCode;
        d->errmsg = samsa_admin_errmsg(arena, d->err, r->ErrorMessage);
        d->infos = samsa_admin_items(arena, r->CredentialInfos_cnt,
                                     sizeof(*d->infos), &d->ninfos);
        for (j = 0; j < (int32_t) d->ninfos; j++) {
            d->infos[j].mechanism = r->CredentialInfos[j].Mechanism;
            d->infos[j].iterations = r->CredentialInfos[j].Iterations;
        }
        qsort(d->infos, d->ninfos, sizeof(*d->infos), admin_cmp_info);
    }
    qsort(res->users, res->n, sizeof(*res->users), admin_cmp_user);
    return res;
}

static samsa_err_t
admin_describe_scram(samsa_admin_t *a, const char *const *users, size_t n,
                     int64_t deadline, samsa_arena_t *scratch,
                     samsa_user_scram_descs_t **resultp)
{
    samsa_DescribeUserScramCredentialsRequest_t   req;
    samsa_DescribeUserScramCredentialsResponse_t  resp;
    samsa_admin_rpc_t                             rpc;
    samsa_err_t                                   err;
    size_t                                        i;

    err = samsa_admin_rpc_begin(a, &rpc, SAMSA_ADMIN_ANY,
                                SAMSA_API_DescribeUserScramCredentials, 0, 0,
                                deadline);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    samsa_DescribeUserScramCredentialsRequest_init(&req);
    req.Users_cnt = -1;                         /* null: every user */
    if (n > 0) {
        req.Users = samsa_arena_calloc(scratch, n, sizeof(*req.Users));
        req.Users_cnt = (int32_t) n;
        for (i = 0; i < n; i++) {
            req.Users[i].Name = samsa_slice_cstr(users[i]);
        }
    }
    err = samsa_admin_rpc_run(
        a, &rpc, samsa_DescribeUserScramCredentialsRequest_encode_any, &req,
        samsa_DescribeUserScramCredentialsResponse_decode_any, &resp,
        deadline, scratch);
    if (err == SAMSA_ERR_NONE) {
        err = (samsa_err_t) resp.ErrorCode;
    }
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    *resultp = admin_scram_descs(&resp);
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_admin_describe_user_scram_credentials(samsa_admin_t *a,
                                            const char *const *users,
                                            size_t n, int64_t timeout_ms,
                                            samsa_user_scram_descs_t **resultp)
{
    samsa_arena_t  scratch = SAMSA_ARENA_INIT;
    int64_t        deadline;
    samsa_err_t    err;
    size_t         i;

    *resultp = NULL;
    if (n > 0 && users == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    for (i = 0; i < n; i++) {
        if (users[i] == NULL) {
            return SAMSA_ERR__INVALID_ARG;
        }
    }
    deadline = samsa_admin_deadline(a, timeout_ms);
    pthread_mutex_lock(&a->lock);
    err = admin_describe_scram(a, users, n, deadline, &scratch, resultp);
    pthread_mutex_unlock(&a->lock);
    samsa_arena_fini(&scratch);
    return err;
}

/* Check the alterations before anything is salted or sent. */
static bool
admin_scram_valid(const samsa_user_scram_alteration_t *alts, size_t n)
{
    samsa_scram_mech_t  m;
    size_t              i;
    int32_t             it;

    if (n == 0 || alts == NULL) {
        return false;
    }
    for (i = 0; i < n; i++) {
        it = alts[i].iterations == 0 ? SAMSA_SCRAM_ITERATIONS_DEFAULT
                                     : alts[i].iterations;
        if (alts[i].user == NULL
            || !samsa_scram_mech_from_type(alts[i].mechanism, &m)
            || (!alts[i].is_delete
                && (alts[i].password == NULL
                    || it < SAMSA_SCRAM_ITERATIONS_MIN
                    || it > SAMSA_SCRAM_ITERATIONS_MAX))) {
            return false;
        }
    }
    return true;
}

/* One upsertion: a fresh salt and the salted password (arena memory). */
static samsa_err_t
admin_scram_upsertion(const samsa_user_scram_alteration_t *alt,
                      samsa_arena_t *scratch,
                      samsa_ScramCredentialUpsertion_t *up)
{
    samsa_scram_mech_t  m;
    uint8_t            *salt, *sp;
    samsa_err_t         err;

    samsa_assert(samsa_scram_mech_from_type(alt->mechanism, &m));
    salt = samsa_arena_calloc(scratch, ADMIN_SCRAM_SALT_BYTES, 1);
    sp = samsa_arena_calloc(scratch, SAMSA_SCRAM_MAX_HASH, 1);
    err = samsa_scram_random(salt, ADMIN_SCRAM_SALT_BYTES);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    up->Name = samsa_slice_cstr(alt->user);
    up->Mechanism = alt->mechanism;
    up->Iterations = alt->iterations == 0 ? SAMSA_SCRAM_ITERATIONS_DEFAULT
                                          : alt->iterations;
    err = samsa_scram_salted_password(m, alt->password, strlen(alt->password),
                                      salt, ADMIN_SCRAM_SALT_BYTES,
                                      up->Iterations, sp);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    up->Salt = (samsa_slice_t) { (const char *) salt,
                                 ADMIN_SCRAM_SALT_BYTES };
    up->SaltedPassword = (samsa_slice_t) { (const char *) sp,
                                           samsa_scram_hash_len(m) };
    return SAMSA_ERR_NONE;
}

static samsa_err_t
admin_scram_request(const samsa_user_scram_alteration_t *alts, size_t n,
                    samsa_arena_t *scratch,
                    samsa_AlterUserScramCredentialsRequest_t *req)
{
    samsa_err_t  err;
    size_t       i;

    samsa_AlterUserScramCredentialsRequest_init(req);
    req->Deletions = samsa_arena_calloc(scratch, n, sizeof(*req->Deletions));
    req->Upsertions = samsa_arena_calloc(scratch, n,
                                         sizeof(*req->Upsertions));
    req->Deletions_cnt = req->Upsertions_cnt = 0;
    for (i = 0; i < n; i++) {
        if (alts[i].is_delete) {
            req->Deletions[req->Deletions_cnt].Name =
                samsa_slice_cstr(alts[i].user);
            req->Deletions[req->Deletions_cnt++].Mechanism =
                alts[i].mechanism;
            continue;
        }
        err = admin_scram_upsertion(&alts[i], scratch,
                                    &req->Upsertions[req->Upsertions_cnt++]);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
    }
    return SAMSA_ERR_NONE;
}

/* The items, one per distinct user in request order, from the response's
 * per-user results (a user the broker left out: UNKNOWN_SERVER_ERROR). */
static samsa_admin_items_t *
admin_scram_items(const samsa_user_scram_alteration_t *alts, size_t n,
                  const samsa_AlterUserScramCredentialsResponse_t *resp)
{
    samsa_admin_items_t  *res;
    samsa_arena_t        *arena;
    size_t                i, j;
    int32_t               k;

    res = samsa_admin_result_new(sizeof(*res), &arena);
    res->items = samsa_arena_calloc(arena, n + 1, sizeof(*res->items));
    for (i = 0; i < n; i++) {
        for (j = 0; j < res->n; j++) {
            if (strcmp(res->items[j].name, alts[i].user) == 0) {
                break;
            }
        }
        if (j < res->n) {
            continue;
        }
        res->items[j].name = samsa_arena_strndup(arena, alts[i].user,
                                                 strlen(alts[i].user));
        res->items[j].err = SAMSA_ERR_UNKNOWN_SERVER_ERROR;
        for (k = 0; k < resp->Results_cnt; k++) {
            if (samsa_slice_eq_cstr(resp->Results[k].User, alts[i].user)) {
                res->items[j].err = (samsa_err_t) resp->Results[k].ErrorCode;
                res->items[j].errmsg = samsa_admin_errmsg(
                    arena, res->items[j].err, resp->Results[k].ErrorMessage);
                break;
            }
        }
        if (k == resp->Results_cnt) {
            res->items[j].errmsg = samsa_admin_errmsg(
                arena, res->items[j].err,
                samsa_slice_cstr("no result for this user"));
        }
        res->n++;
    }
    return res;
}

static samsa_err_t
admin_alter_scram(samsa_admin_t *a, const samsa_user_scram_alteration_t *alts,
                  size_t n, int64_t deadline, samsa_arena_t *scratch,
                  samsa_admin_items_t **resultp)
{
    samsa_AlterUserScramCredentialsRequest_t   req;
    samsa_AlterUserScramCredentialsResponse_t  resp;
    samsa_admin_rpc_t                          rpc;
    samsa_err_t                                err;

    err = admin_scram_request(alts, n, scratch, &req);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    err = samsa_admin_rpc_begin(a, &rpc, SAMSA_ADMIN_ANY,
                                SAMSA_API_AlterUserScramCredentials, 0, 0,
                                deadline);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    err = samsa_admin_rpc_run(
        a, &rpc, samsa_AlterUserScramCredentialsRequest_encode_any, &req,
        samsa_AlterUserScramCredentialsResponse_decode_any, &resp, deadline,
        scratch);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    *resultp = admin_scram_items(alts, n, &resp);
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_admin_alter_user_scram_credentials(
    samsa_admin_t *a, const samsa_user_scram_alteration_t *alts, size_t n,
    int64_t timeout_ms, samsa_admin_items_t **resultp)
{
    samsa_arena_t  scratch = SAMSA_ARENA_INIT;
    int64_t        deadline;
    samsa_err_t    err;

    *resultp = NULL;
    if (!admin_scram_valid(alts, n)) {
        return SAMSA_ERR__INVALID_ARG;
    }
    deadline = samsa_admin_deadline(a, timeout_ms);
    pthread_mutex_lock(&a->lock);
    err = admin_alter_scram(a, alts, n, deadline, &scratch, resultp);
    pthread_mutex_unlock(&a->lock);
    samsa_arena_fini(&scratch);
    return err;
}
