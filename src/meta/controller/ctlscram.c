/*
 * meta/controller/ctlscram.c - AlterUserScramCredentials on the controller
 * thread, as Kafka's ScramControlManager.alterCredentials: the ops grouped
 * by user, each user validated (a user named twice is a
 * DUPLICATE_RESOURCE), the salted passwords turned into stored and server
 * keys (the controller never sees a password), and one
 * UserScramCredentialRecord or RemoveUserScramCredentialRecord per user
 * that passes.
 * Threads: the controller thread.
 */
#include "meta/controller/controller_int.h"

#include <string.h>

#include "net/scram.h"

#define SCRAM_DUPLICATE \
    "A user credential cannot be altered twice in the same request"

/* The op of results[i]'s user that is its one change (-1: none yet). */
static size_t
scram_first_of(const samsa_controller_scram_op_t *ops, size_t i)
{
    size_t  j;

    for (j = 0; j < i; j++) {
        if (samsa_slice_eq(ops[j].name, ops[i].name)) {
            return j;
        }
    }
    return i;
}

static bool
scram_exists(samsa_ctlbatch_t *b, const samsa_controller_scram_op_t *op,
             samsa_scram_mech_t mech)
{
    const samsa_image_config_t  *cfgs;
    size_t                       n, i;

    cfgs = samsa_image_delta_resource_configs(b->delta,
                                              SAMSA_IMAGE_RESOURCE_SCRAM,
                                              op->name.ptr, op->name.len, &n);
    for (i = 0; i < n; i++) {
        if (strcmp(cfgs[i].name, samsa_scram_mech_name(mech)) == 0) {
            return true;
        }
    }
    return false;
}

/* Kafka's validateDeletion / validateUpsertion. */
static samsa_controller_result_t
scram_validate(samsa_ctlbatch_t *b, const samsa_controller_scram_op_t *op)
{
    samsa_scram_mech_t  mech;

    if (op->name.len == 0) {
        return (samsa_controller_result_t) {
            SAMSA_ERR_UNACCEPTABLE_CREDENTIAL, "Username must not be empty" };
    }
    if (!samsa_scram_mech_from_type(op->mechanism, &mech)) {
        return (samsa_controller_result_t) {
            SAMSA_ERR_UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism" };
    }
    if (op->remove) {
        if (!scram_exists(b, op, mech)) {
            return (samsa_controller_result_t) {
                SAMSA_ERR_RESOURCE_NOT_FOUND,
                "Attempt to delete a user credential that does not exist" };
        }
        return (samsa_controller_result_t) { SAMSA_ERR_NONE, NULL };
    }
    if (op->iterations < SAMSA_SCRAM_MIN_ITERATIONS) {
        return (samsa_controller_result_t) {
            SAMSA_ERR_UNACCEPTABLE_CREDENTIAL, "Too few iterations" };
    }
    if (op->iterations > SAMSA_SCRAM_MAX_ITERATIONS) {
        return (samsa_controller_result_t) {
            SAMSA_ERR_UNACCEPTABLE_CREDENTIAL, "Too many iterations" };
    }
    if (op->salt.len == 0 || op->salt.len > SAMSA_SCRAM_MAX_SALT
        || op->salted_password.len == 0) {
        /* Kafka's clients always send both; the image keeps salts of
         * 1..128 bytes */
        return (samsa_controller_result_t) {
            SAMSA_ERR_UNACCEPTABLE_CREDENTIAL,
            "The salt must be 1 to 128 bytes and the salted password not "
            "empty" };
    }
    return (samsa_controller_result_t) { SAMSA_ERR_NONE, NULL };
}

/* The record for a user's one valid op. */
static void
scram_record(samsa_ctlbatch_t *b, const samsa_controller_scram_op_t *op,
             samsa_arena_t *arena)
{
    samsa_MetadataRecords_any_t  rec;
    samsa_scram_mech_t           mech;
    uint8_t                      ck[SAMSA_SCRAM_MAX_HASH];
    uint8_t                     *stored, *server;
    size_t                       hlen;

    (void) samsa_scram_mech_from_type(op->mechanism, &mech);
    memset(&rec, 0, sizeof(rec));
    if (op->remove) {
        rec.type = SAMSA_MetadataRecords_RemoveUserScramCredentialRecord;
        samsa_RemoveUserScramCredentialRecord_init(
            &rec.u.RemoveUserScramCredentialRecord);
        rec.u.RemoveUserScramCredentialRecord.Name = op->name;
        rec.u.RemoveUserScramCredentialRecord.Mechanism = op->mechanism;
        samsa_ctlbatch_add(b, &rec);
        return;
    }
    /* ScramFormatter: StoredKey = H(HMAC(SP, "Client Key")), ServerKey =
     * HMAC(SP, "Server Key"), for a salted password of any length */
    hlen = samsa_scram_hash_len(mech);
    stored = samsa_arena_alloc(arena, hlen);
    server = samsa_arena_alloc(arena, hlen);
    samsa_scram_hmac(mech, (const uint8_t *) op->salted_password.ptr,
                     op->salted_password.len, "Client Key", 10, ck);
    samsa_scram_hash(mech, ck, hlen, stored);
    samsa_scram_hmac(mech, (const uint8_t *) op->salted_password.ptr,
                     op->salted_password.len, "Server Key", 10, server);
    rec.type = SAMSA_MetadataRecords_UserScramCredentialRecord;
    samsa_UserScramCredentialRecord_init(&rec.u.UserScramCredentialRecord);
    rec.u.UserScramCredentialRecord.Name = op->name;
    rec.u.UserScramCredentialRecord.Mechanism = op->mechanism;
    rec.u.UserScramCredentialRecord.Salt = op->salt;
    rec.u.UserScramCredentialRecord.StoredKey =
        (samsa_slice_t) { (const char *) stored, hlen };
    rec.u.UserScramCredentialRecord.ServerKey =
        (samsa_slice_t) { (const char *) server, hlen };
    rec.u.UserScramCredentialRecord.Iterations = op->iterations;
    samsa_ctlbatch_add(b, &rec);
}

void
samsa_ctlscram_alter(samsa_ctlbatch_t *b,
                     const samsa_controller_scram_op_t *ops, size_t n,
                     samsa_arena_t *arena,
                     samsa_controller_result_t *results)
{
    size_t  i, first, changes = 0;

    /* each user's answer lands on its first op; later ops of a user that
     * has not failed yet make it a duplicate */
    for (i = 0; i < n; i++) {
        first = scram_first_of(ops, i);
        if (first == i) {
            results[i] = scram_validate(b, &ops[i]);
        } else if (results[first].error == SAMSA_ERR_NONE) {
            results[first] = (samsa_controller_result_t) {
                SAMSA_ERR_DUPLICATE_RESOURCE, SCRAM_DUPLICATE };
        }
    }
    for (i = 0; i < n; i++) {
        first = scram_first_of(ops, i);
        results[i] = results[first];
        changes += first == i && results[i].error == SAMSA_ERR_NONE;
    }
    if (!samsa_ctlbatch_room(b, (int64_t) changes)) {
        return;
    }
    for (i = 0; i < n; i++) {
        if (scram_first_of(ops, i) == i && results[i].error == SAMSA_ERR_NONE) {
            scram_record(b, &ops[i], arena);
        }
    }
}
