/*
 * server/saslconf.h - the SASL settings of the broker's SASL_PLAINTEXT and
 * SASL_SSL listeners, resolved as Kafka resolves them: per listener
 * (listener.name.<listener in lower case>.<key> over <key>) the enabled
 * mechanisms (sasl.enabled.mechanisms), the JAAS login context per
 * mechanism (listener.name.<l>.<mechanism>.sasl.jaas.config, then
 * listener.name.<l>.sasl.jaas.config, then sasl.jaas.config: the
 * PlainLoginModule's user_NAME="PASSWORD" options are the PLAIN users)
 * and connections.max.reauth.ms.
 * Threads: main, at start-up; the confs are read-only afterwards.
 * Ownership: samsa_saslconf_t owns its confs; free it after the socket
 * servers that borrow them.
 */
#ifndef SAMSA_SERVER_SASLCONF_H
#define SAMSA_SERVER_SASLCONF_H

#include <stdbool.h>
#include <stddef.h>

#include <samsa/errors.h>

#include "config/config.h"
#include "net/sasl.h"

typedef struct samsa_saslconf {
    samsa_sasl_conf_t  **conf;          /* one per cfg->listeners[i]; NULL
                                           for listeners without SASL */
    size_t               n;
} samsa_saslconf_t;

/* Whether a security protocol authenticates with SASL. */
bool samsa_saslconf_is_sasl(const char *security_protocol);

/* The confs of every SASL listener of cfg, SCRAM credentials looked up
 * with lookup(ctx, ...).  SAMSA_ERR__CONFIG with errstr naming the
 * listener and the key.  Call samsa_saslconf_fini after any result.
 * @thread main */
SAMSA_MUST_CHECK samsa_err_t samsa_saslconf_open(
    samsa_saslconf_t *sc, const samsa_config_t *cfg,
    samsa_sasl_scram_lookup_fn lookup, void *ctx, char *errstr,
    size_t errstr_size);

void samsa_saslconf_fini(samsa_saslconf_t *sc);

#endif /* SAMSA_SERVER_SASLCONF_H */
