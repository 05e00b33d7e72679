/*
 * meta/qentity.h - a client quota entity (Kafka's ClientQuotaEntity): a
 * set of (entity type, name) pairs over the types "user", "client-id" and
 * "ip", each type at most once, a NULL name meaning the type's default
 * entity.  Its key is one canonical string naming it, used where the
 * metadata image stores the entity's quotas: types in the order user,
 * client-id, ip, each as "<letter>-;" (default) or "<letter>=<len>:<name>;"
 * (letters u, c, i; len in decimal), so that any byte may appear in a name.
 * Threads: pure functions over caller-owned values.
 */
#ifndef SAMSA_META_QENTITY_H
#define SAMSA_META_QENTITY_H

#include <stdbool.h>
#include <stddef.h>

#include <samsa/errors.h>
#include "util/arena.h"
#include "util/slice.h"

typedef enum samsa_qentity_type {
    SAMSA_QENTITY_USER = 0,
    SAMSA_QENTITY_CLIENT_ID,
    SAMSA_QENTITY_IP,
    SAMSA_QENTITY__NTYPES
} samsa_qentity_type_t;

typedef struct samsa_qentity {
    bool           has[SAMSA_QENTITY__NTYPES];
    samsa_slice_t  name[SAMSA_QENTITY__NTYPES];   /* ptr NULL: default */
} samsa_qentity_t;

/* Kafka's names: "user", "client-id", "ip". */
const char *samsa_qentity_type_name(samsa_qentity_type_t t);

/* The type named by s, or -1. */
int samsa_qentity_type_find(samsa_slice_t s);

/* The canonical key of e, NUL-terminated, in arena. */
const char *samsa_qentity_key(const samsa_qentity_t *e, samsa_arena_t *arena);

/* Parse a key made by samsa_qentity_key; names point into key.
 * SAMSA_ERR__BAD_MSG if it is not one. */
SAMSA_MUST_CHECK samsa_err_t samsa_qentity_parse(const char *key,
                                                 samsa_qentity_t *e);

/* Kafka's ClientQuotaEntity.toString, e.g.
 * "ClientQuotaEntity(entries={client-id=a, user=null})", in arena. */
const char *samsa_qentity_str(const samsa_qentity_t *e, samsa_arena_t *arena);

#endif /* SAMSA_META_QENTITY_H */
