/*
 * server/tlsconf.h - the TLS contexts of the broker's listeners: for each
 * listener whose security protocol is SSL (or SASL_SSL, whose SASL half is
 * not there yet) the ssl.* keys resolved as Kafka resolves them
 * (listener.name.<listener in lower case>.ssl.<key> wins over ssl.<key>,
 * key by key) and turned into a net/tls.h context.
 * Threads: main, at start-up; the contexts are read-only afterwards.
 * Ownership: the samsa_tlsconf_t owns its contexts; free it after the
 * socket servers that borrow them.
 */
#ifndef SAMSA_SERVER_TLSCONF_H
#define SAMSA_SERVER_TLSCONF_H

#include <stdbool.h>
#include <stddef.h>

#include <samsa/errors.h>

#include "config/config.h"
#include "net/tls.h"

typedef struct samsa_tlsconf {
    samsa_tls_ctx_t  **ctx;             /* one per cfg->listeners[i]; NULL
                                           for plaintext listeners */
    size_t             n;
} samsa_tlsconf_t;

/* Whether a security protocol runs over TLS (SSL, SASL_SSL). */
bool samsa_tlsconf_is_tls(const char *security_protocol);

/* Fill out with listener's ssl.* keys (listener: its name, any case). */
void samsa_tlsconf_resolve(const samsa_config_t *cfg, const char *listener,
                           samsa_tls_conf_t *out);

/* A context for every TLS listener of cfg.  SAMSA_ERR__CONFIG with errstr
 * naming the listener, the key and the file.  Call samsa_tlsconf_fini
 * after any result.  @thread main */
SAMSA_MUST_CHECK samsa_err_t samsa_tlsconf_open(samsa_tlsconf_t *tc,
                                                const samsa_config_t *cfg,
                                                char *errstr,
                                                size_t errstr_size);

void samsa_tlsconf_fini(samsa_tlsconf_t *tc);

#endif /* SAMSA_SERVER_TLSCONF_H */
