/*
 * client/client_config.h - the settings every client shares (Kafka's
 * CommonClientConfigs): bootstrap.servers, client.id, request.timeout.ms,
 * retry.backoff.*, reconnect.backoff.*, socket.connection.setup.timeout.ms,
 * the socket buffers and metadata.max.age.ms, in typed form from a
 * samsa_conf_t.  The producer's (producer/pconf.h) and the consumer's
 * (consumer/cconf.h) typed configs each hold one as .net.
 * Threads: built once by the client's constructor, then read-only.
 */
#ifndef SAMSA_CLIENT_CLIENT_CONFIG_H
#define SAMSA_CLIENT_CLIENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/conf.h>

#include "client/netclient.h"
#include "net/tls.h"

typedef struct samsa_client_config {
    char           **bootstrap;         /* "host:port" each */
    size_t           nbootstrap;
    char            *client_id;         /* "" when not set */
    int64_t          request_timeout_ms;
    int64_t          retry_backoff_ms;
    int64_t          retry_backoff_max_ms;  /* >= retry_backoff_ms */
    int64_t          metadata_max_age_ms;
    int64_t          reconnect_backoff_ms;
    int64_t          reconnect_backoff_max_ms;
    int64_t          connection_setup_timeout_ms;
    int32_t          send_buffer_bytes;
    int32_t          receive_buffer_bytes;
    samsa_tls_ctx_t *tls;               /* security.protocol SSL or
                                           SASL_SSL: one reference (the
                                           network client takes its own);
                                           NULL: no TLS */
    int              sasl_mech;         /* SASL_*: a samsa_sasl_mech_t;
                                           0: no SASL */
    char            *sasl_username;     /* SASL: from sasl.jaas.config or
                                           sasl.username */
    char            *sasl_password;
    char            *sasl_oauth_jaas;   /* OAUTHBEARER: sasl.jaas.config
                                           (OAuthBearerLoginModule), a
                                           fresh unsecured token made from
                                           it per authentication */
} samsa_client_config_t;

/* Fill cc from conf.  SAMSA_ERR__CONFIG with errstr naming the key when
 * bootstrap.servers is missing or an entry has no port, (SSL, SASL_SSL)
 * the ssl.* keys name a file that does not load (net/tls.c's errors), or
 * (SASL_PLAINTEXT, SASL_SSL) sasl.mechanism is one libsamsa does not
 * speak (GSSAPI, Java's default, ...) or no user name and password come
 * from sasl.jaas.config (PlainLoginModule or ScramLoginModule) or
 * sasl.username/sasl.password, or (OAUTHBEARER) sasl.jaas.config is not an
 * OAuthBearerLoginModule entry that makes a token (client/oauth_login.h).  Call
 * samsa_client_config_fini() after any result. */
SAMSA_MUST_CHECK samsa_err_t samsa_client_config_load(
    samsa_client_config_t *cc, const samsa_conf_t *conf, char *errstr,
    size_t errstr_size);

void samsa_client_config_fini(samsa_client_config_t *cc);

/* The network client's settings from cc (borrowing its client.id), with
 * max_in_flight requests per connection and log_name (NULL: "producer"). */
samsa_nc_conf_t samsa_client_config_nc(const samsa_client_config_t *cc,
                                       int32_t max_in_flight,
                                       const char *log_name);

#endif /* SAMSA_CLIENT_CLIENT_CONFIG_H */
