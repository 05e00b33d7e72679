/*
 * meta/controller/ctlquotas.c - AlterClientQuotas on the controller thread: validate
 * each entry as Kafka's ClientQuotaControlManager does and add one
 * ClientQuotaRecord per key whose value changes (a removal only if the key
 * is set).  An entry either applies whole or not at all.
 * Threads: the controller thread.
 */
#include "meta/controller/controller_int.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "meta/qentity.h"

typedef enum quota_key_type {
    QUOTA_KEY_LONG,
    QUOTA_KEY_INT,
    QUOTA_KEY_DOUBLE,
} quota_key_type_t;

typedef struct quota_key_def {
    const char        *name;
    quota_key_type_t   type;
    bool               ip;          /* an ip entity's key, else user and
                                       client-id entities' */
} quota_key_def_t;

/* Kafka's QuotaConfig.userAndClientQuotaConfigs() and ipConfigs(). */
static const quota_key_def_t  quota_keys[] = {
    { "producer_byte_rate", QUOTA_KEY_LONG, false },
    { "consumer_byte_rate", QUOTA_KEY_LONG, false },
    { "request_percentage", QUOTA_KEY_DOUBLE, false },
    { "controller_mutation_rate", QUOTA_KEY_DOUBLE, false },
    { "connection_creation_rate", QUOTA_KEY_INT, true },
};

static samsa_controller_result_t
quota_invalid(samsa_arena_t *arena, const char *msg)
{
    return (samsa_controller_result_t) {
        .error = SAMSA_ERR_INVALID_REQUEST,
        .message = samsa_arena_strndup(arena, msg, strlen(msg)),
    };
}

static bool
quota_ip_valid(samsa_slice_t name)
{
    unsigned char  addr[16];
    char           s[64];

    if (name.ptr == NULL) {
        return true;
    }
    if (name.len >= sizeof(s)) {
        return false;
    }
    memcpy(s, name.ptr, name.len);
    s[name.len] = '\0';
    return inet_pton(AF_INET, s, addr) == 1 || inet_pton(AF_INET6, s, addr) == 1;
}

/* Kafka's validateEntity and configKeysForEntityType. */
static bool
quota_entity(const samsa_controller_quota_alter_t *a, samsa_arena_t *arena,
             samsa_qentity_t *e, samsa_controller_result_t *res)
{
    size_t  i;
    int     t;

    memset(e, 0, sizeof(*e));
    if (a->nentity == 0) {
        *res = quota_invalid(arena, "Invalid empty client quota entity");
        return false;
    }
    for (i = 0; i < a->nentity; i++) {
        t = samsa_qentity_type_find(a->entity[i].type);
        if (t >= 0 && e->has[t]) {
            *res = (samsa_controller_result_t) {
                SAMSA_ERR_INVALID_REQUEST,
                samsa_ctl_msg(arena, "Invalid client quota entity, duplicate "
                              "entity entry %s",
                              samsa_qentity_type_name(t)) };
            return false;
        }
        if (t < 0) {
            *res = (samsa_controller_result_t) {
                SAMSA_ERR_INVALID_REQUEST,
                samsa_ctl_msg(arena, "Unhandled client quota entity type: "
                              "%.*s", (int) a->entity[i].type.len,
                              a->entity[i].type.ptr) };
            return false;
        }
        e->has[t] = true;
        e->name[t] = a->entity[i].name;
        if (e->name[t].ptr != NULL && e->name[t].len == 0) {
            *res = (samsa_controller_result_t) {
                SAMSA_ERR_INVALID_REQUEST,
                samsa_ctl_msg(arena, "Empty %s not supported",
                              samsa_qentity_type_name(t)) };
            return false;
        }
    }
    if (e->has[SAMSA_QENTITY_IP]) {
        if (e->has[SAMSA_QENTITY_USER] || e->has[SAMSA_QENTITY_CLIENT_ID]) {
            /* Kafka's message, its missing space included. */
            *res = quota_invalid(arena, "Invalid quota entity combination, "
                                        "IP entity shouldnot be combined "
                                        "with User or ClientId");
            return false;
        }
        if (!quota_ip_valid(e->name[SAMSA_QENTITY_IP])) {
            *res = (samsa_controller_result_t) {
                SAMSA_ERR_INVALID_REQUEST,
                samsa_ctl_msg(arena, "%.*s is not a valid IP or resolvable "
                              "host.",
                              (int) e->name[SAMSA_QENTITY_IP].len,
                              e->name[SAMSA_QENTITY_IP].ptr) };
            return false;
        }
    }
    return true;
}

/* Kafka's validateQuotaKeyValue. */
static bool
quota_value(const samsa_controller_quota_op_t *op, bool ip,
            samsa_arena_t *arena, samsa_controller_result_t *res)
{
    const quota_key_def_t  *def = NULL;
    size_t                  i;
    int                     klen = (int) op->key.len;

    for (i = 0; i < sizeof(quota_keys) / sizeof(quota_keys[0]); i++) {
        if (quota_keys[i].ip == ip
            && samsa_slice_eq_cstr(op->key, quota_keys[i].name)) {
            def = &quota_keys[i];
        }
    }
    if (def == NULL) {
        *res = (samsa_controller_result_t) {
            SAMSA_ERR_INVALID_REQUEST,
            samsa_ctl_msg(arena, "Invalid configuration key %.*s", klen,
                          op->key.ptr) };
        return false;
    }
    if (!(op->value > 0.0)) {
        *res = (samsa_controller_result_t) {
            SAMSA_ERR_INVALID_REQUEST,
            samsa_ctl_msg(arena, "Quota %.*s must be greater than 0", klen,
                          op->key.ptr) };
        return false;
    }
    if (def->type == QUOTA_KEY_DOUBLE) {
        return true;
    }
    if (def->type == QUOTA_KEY_INT && op->value > 2147483647.0) {
        *res = (samsa_controller_result_t) {
            SAMSA_ERR_INVALID_REQUEST,
            samsa_ctl_msg(arena, "Proposed value for %.*s is too large for "
                          "an INT.", klen, op->key.ptr) };
        return false;
    }
    if (def->type == QUOTA_KEY_LONG && op->value > 9223372036854775807.0) {
        *res = (samsa_controller_result_t) {
            SAMSA_ERR_INVALID_REQUEST,
            samsa_ctl_msg(arena, "Proposed value for %.*s is too large for "
                          "a LONG.", klen, op->key.ptr) };
        return false;
    }
    /* past 2^53 every double is whole (and the cast is kept defined) */
    if (op->value < 9007199254740992.0
        && op->value - (double) (int64_t) op->value > 1e-6) {
        *res = (samsa_controller_result_t) {
            SAMSA_ERR_INVALID_REQUEST,
            samsa_ctl_msg(arena, "%.*s cannot be a fractional value.", klen,
                          op->key.ptr) };
        return false;
    }
    return true;
}

/* The current value of key for the entity, if set. */
static bool
quota_current(samsa_ctlbatch_t *b, const char *ekey, samsa_slice_t key,
              double *value)
{
    const samsa_image_config_t  *cfgs;
    size_t                       n, i;

    cfgs = samsa_image_delta_resource_configs(
        b->delta, SAMSA_IMAGE_RESOURCE_CLIENT_QUOTA, ekey, strlen(ekey), &n);
    for (i = 0; i < n; i++) {
        if (samsa_slice_eq_cstr(key, cfgs[i].name)) {
            *value = strtod(cfgs[i].value, NULL);
            return true;
        }
    }
    return false;
}

static void
quota_record(samsa_ctlbatch_t *b, const samsa_qentity_t *e,
             const samsa_controller_quota_op_t *op, samsa_arena_t *arena)
{
    samsa_MetadataRecords_any_t  rec;
    samsa_ClientQuotaRecord_t   *r = &rec.u.ClientQuotaRecord;
    samsa_ClientQuotaRecordEntity_t  *parts;
    int                          t, n = 0;

    parts = samsa_arena_calloc(arena, SAMSA_QENTITY__NTYPES, sizeof(*parts));
    for (t = 0; t < SAMSA_QENTITY__NTYPES; t++) {
        if (e->has[t]) {
            samsa_ClientQuotaRecordEntity_init(&parts[n]);
            parts[n].EntityType = samsa_slice_cstr(samsa_qentity_type_name(t));
            parts[n].EntityName = e->name[t];
            n++;
        }
    }
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_ClientQuotaRecord;
    samsa_ClientQuotaRecord_init(r);
    r->Entity = parts;
    r->Entity_cnt = n;
    r->Key = op->key;
    r->Value = op->remove ? 0.0 : op->value;
    r->Remove = op->remove;
    samsa_ctlbatch_add(b, &rec);
}

static void
quota_alter_one(samsa_ctlbatch_t *b, const samsa_controller_quota_alter_t *a,
                samsa_arena_t *arena, samsa_controller_result_t *res)
{
    samsa_qentity_t  e;
    const char      *ekey;
    double           cur;
    bool             ip, has;
    size_t           i, j, changes = 0;

    memset(res, 0, sizeof(*res));
    if (!quota_entity(a, arena, &e, res)) {
        return;
    }
    ip = e.has[SAMSA_QENTITY_IP];
    ekey = samsa_qentity_key(&e, arena);
    for (i = 0; i < a->nops; i++) {
        for (j = 0; j < i; j++) {
            if (samsa_slice_eq(a->ops[j].key, a->ops[i].key)) {
                *res = (samsa_controller_result_t) {
                    SAMSA_ERR_INVALID_REQUEST,
                    samsa_ctl_msg(arena, "Duplicate quota key %.*s not "
                                  "updating quota for this entity %s",
                                  (int) a->ops[i].key.len, a->ops[i].key.ptr,
                                  samsa_qentity_str(&e, arena)) };
                return;
            }
        }
        if (!a->ops[i].remove && !quota_value(&a->ops[i], ip, arena, res)) {
            return;
        }
    }
    for (i = 0; i < a->nops; i++) {
        has = quota_current(b, ekey, a->ops[i].key, &cur);
        if (a->ops[i].remove ? has : !has || cur != a->ops[i].value) {
            changes++;
        }
    }
    if (!samsa_ctlbatch_room(b, (int64_t) changes)) {
        return;
    }
    for (i = 0; i < a->nops; i++) {
        has = quota_current(b, ekey, a->ops[i].key, &cur);
        if (a->ops[i].remove ? has : !has || cur != a->ops[i].value) {
            quota_record(b, &e, &a->ops[i], arena);
        }
    }
}

void
samsa_ctlquotas_alter(samsa_ctlbatch_t *b,
                      const samsa_controller_quota_alter_t *entries, size_t n,
                      samsa_arena_t *arena,
                      samsa_controller_result_t *results)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        quota_alter_one(b, &entries[i], arena, &results[i]);
    }
}
