/*
 * server/tlsconf.h - the TLS contexts of the broker's listeners: for each
 * listener whose security protocol is SSL (or SASL_SSL, whose SASL half is
 * not there yet) the ssl.* keys resolved as Kafka resolves them
 * (listener.name.<listener in lower case>.ssl.<key> wins over ssl.<key>,
 * key by key) and turned into a net/tls.h context.
 * Dynamic key store updates (Kafka's SslFactory reconfiguration): the
 * per-broker dynamic configs listener.name.<l>.ssl.<store key> (Kafka's
 * SslConfigs.RECONFIGURABLE_CONFIGS) win over the static ones; a change
 * builds a new context, checked to load and to keep the certificate's
 * subject DN and subject alternative names (unless ssl.allow.dn.changes /
 * ssl.allow.san.changes), which the socket server then gives to new
 * connections.
 * Threads: open on main; check and update on the controller or quorum
 * thread (the image listener), under the tlsconf's lock.
 * Ownership: the samsa_tlsconf_t owns its contexts; free it after the
 * socket servers that borrow them.
 */
#ifndef SAMSA_SERVER_TLSCONF_H
#define SAMSA_SERVER_TLSCONF_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <samsa/errors.h>

#include "config/config.h"
#include "meta/brokercfg.h"
#include "net/tls.h"

typedef struct samsa_tlsconf {
    samsa_tls_ctx_t  **ctx;             /* [const] one per
                                           cfg->listeners[i], the static
                                           configuration's; NULL for
                                           plaintext listeners; borrowed by
                                           the socket servers' listeners */
    size_t             n;
    pthread_mutex_t    lock;            /* guards cur, applied */
    samsa_tls_ctx_t  **cur;             /* [lock] the context in use (a
                                           reference) */
    char             **applied;         /* [lock] the dynamic store values
                                           cur was built with */
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

/* Would the next dynamic configuration (lv) of this broker build a usable
 * context for every TLS listener whose store keys it changes?
 * SAMSA_ERR_INVALID_CONFIG with Kafka's message ("Validation of dynamic
 * config update of SSLFactory failed: ...", naming the key and the file,
 * or both certificates' identities) if not.  Nothing changes.
 * Fits samsa_brokercfg_check_t's fn (ctx: tc; cfg: the one opened). */
SAMSA_MUST_CHECK samsa_err_t samsa_tlsconf_check(samsa_tlsconf_t *tc,
                                                 const samsa_config_t *cfg,
                                                 const samsa_brokercfg_levels_t *lv,
                                                 char *errstr,
                                                 size_t errstr_size);

/* Apply the dynamic configuration lv: for every TLS listener whose store
 * values changed, build and check its new context; out[i] (n entries,
 * zeroed by the caller) gets a reference to it for the socket server
 * (samsa_tls_ctx_unref it after samsa_sockserver_set_tls), or stays NULL
 * when listener i is unchanged or its update failed (logged with the
 * reason; the listener keeps its context). */
void samsa_tlsconf_update(samsa_tlsconf_t *tc, const samsa_config_t *cfg,
                          const samsa_brokercfg_levels_t *lv,
                          samsa_tls_ctx_t **out);

void samsa_tlsconf_fini(samsa_tlsconf_t *tc);

#endif /* SAMSA_SERVER_TLSCONF_H */
