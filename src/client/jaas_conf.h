/*
 * client/jaas_conf.h - the value of sasl.jaas.config as Java's
 * org.apache.kafka.common.security.JaasConfig reads it:
 *
 *   <LoginModuleClass> <flag> [key=value ...];
 *
 * flag one of required, requisite, sufficient, optional (any case);
 * values words ([A-Za-z0-9._$-] and bytes >= 0x80) or quoted strings ("..."
 * or '...', backslash escapes as java.io.StreamTokenizer's: \n \t \r \b
 * \f, octal \NNN, any other \c is c); // and slash-star comments are
 * skipped.  A client's value holds exactly one login module (Kafka's
 * JaasContext.loadClientContext refuses more).
 * Threads: pure functions; a samsa_jaas_conf_t has one owner.
 */
#ifndef SAMSA_CLIENT_JAAS_CONF_H
#define SAMSA_CLIENT_JAAS_CONF_H

#include <stddef.h>

#include <samsa/errors.h>

#define SAMSA_JAAS_PLAIN_MODULE \
    "org.apache.kafka.common.security.plain.PlainLoginModule"
#define SAMSA_JAAS_SCRAM_MODULE \
    "org.apache.kafka.common.security.scram.ScramLoginModule"

typedef struct samsa_jaas_conf {
    char    *module;        /* the login module's class name */
    char    *flag;          /* "required", ... as written */
    size_t   nopts;
    char   **keys;          /* in order; a repeated key: the last wins */
    char   **values;
} samsa_jaas_conf_t;

/* Parse text into jc.  SAMSA_ERR__CONFIG with the reason in errstr (no
 * value of a password is quoted there).  Call samsa_jaas_conf_fini()
 * after any result. */
SAMSA_MUST_CHECK samsa_err_t samsa_jaas_conf_parse(const char *text,
                                                   samsa_jaas_conf_t *jc,
                                                   char *errstr,
                                                   size_t errstr_size);

/* The value of option key, or NULL. */
const char *samsa_jaas_conf_get(const samsa_jaas_conf_t *jc,
                                const char *key);

void samsa_jaas_conf_fini(samsa_jaas_conf_t *jc);

#endif /* SAMSA_CLIENT_JAAS_CONF_H */
