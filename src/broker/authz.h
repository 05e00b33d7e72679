/*
 * broker/authz.h - the authorizer as the handlers see it (Kafka's
 * AuthHelper over StandardAuthorizer): authorizer.class.name, super.users
 * and allow.everyone.if.no.acl.found, read once at start, and the checks
 * each handler makes with one call.  The ACLs themselves are the metadata
 * image's (meta/acl.h): a check reads the image the handler already holds,
 * so a request sees one set of ACLs throughout.
 *
 * What is checked where: the broker listeners check every API as Kafka's
 * KafkaApis does.  The controller listeners (the inter-node channel:
 * BrokerRegistration, BrokerHeartbeat, AllocateProducerIds, the admin
 * requests brokers forward) are not checked: Samsa's nodes reach each
 * other there as User:ANONYMOUS on PLAINTEXT, so a cluster with an
 * authorizer keeps working, and a forwarded admin request was checked by
 * the broker that received it before it was forwarded
 * (samsa_authz_forwardable).  Keep controller listeners on a network only
 * the nodes reach.
 *
 * Threads: samsa_authz_t is [const] after samsa_authz_init (main); the
 * checks run on handler threads.
 */
#ifndef SAMSA_BROKER_AUTHZ_H
#define SAMSA_BROKER_AUTHZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>
#include "config/config.h"
#include "meta/acl.h"
#include "meta/image.h"
#include "util/slice.h"

#define SAMSA_AUTHZ_STANDARD \
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

typedef struct samsa_authz {
    bool     enabled;                   /* authorizer.class.name set */
    bool     allow_if_none;             /* allow.everyone.if.no.acl.found */
    char   **super_users;               /* super.users, split on ';' */
    size_t   nsuper_users;
} samsa_authz_t;

/* Read the three keys of cfg (config.c validated authorizer.class.name).
 * An empty item of super.users is refused with a message naming the key. */
SAMSA_MUST_CHECK samsa_err_t samsa_authz_init(samsa_authz_t *authz,
                                              const samsa_config_t *cfg,
                                              char *errstr,
                                              size_t errstr_size);
void samsa_authz_fini(samsa_authz_t *authz);

/* Whether principal is one of super.users. */
bool samsa_authz_is_super(const samsa_authz_t *authz, const char *principal);

/* The decision for principal from host (no authorizer: allowed). */
bool samsa_authz_decide(const samsa_authz_t *authz, const samsa_image_t *img,
                        const char *principal, const char *host,
                        int8_t operation, int8_t resource_type,
                        samsa_slice_t name);

/* KIP-430: the bit set (bit i: AclOperation i) of the operations the
 * resource type supports that principal may do on the resource. */
int32_t samsa_authz_decide_ops(const samsa_authz_t *authz,
                               const samsa_image_t *img,
                               const char *principal, const char *host,
                               int8_t resource_type, samsa_slice_t name);

#endif /* SAMSA_BROKER_AUTHZ_H */
