/*
 * samsa/conf.h - libsamsa client configuration: Java client property names
 * and defaults ("bootstrap.servers", "linger.ms", ...).  Each set checks
 * the value at once; cross-key rules (idempotence needs acks=all and at
 * most 5 requests in flight, delivery.timeout.ms >= linger.ms +
 * request.timeout.ms, ...) are checked when the producer is created.
 * Every error message names the key.
 * Threads: a samsa_conf_t belongs to one thread at a time; the producer
 * copies it, so it may be freed or reused right after samsa_producer_new().
 */
#ifndef SAMSA_CONF_H
#define SAMSA_CONF_H

#include <stddef.h>

#include <samsa/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct samsa_conf samsa_conf_t;

/* An empty configuration (every key at its default).  Never NULL. */
SAMSA_API samsa_conf_t *samsa_conf_new(void);

/* A deep copy of conf. */
SAMSA_API samsa_conf_t *samsa_conf_dup(const samsa_conf_t *conf);

/* Free conf; NULL is a no-op. */
SAMSA_API void samsa_conf_free(samsa_conf_t *conf);

/* Set key to value after checking it.  SAMSA_ERR__CONFIG with errstr like
 * "invalid value 'x' for configuration 'linger.ms': not a number" for a
 * bad value; SAMSA_ERR__NOENT with "unknown configuration 'x'" for a key
 * libsamsa does not know (Java's key.serializer / value.serializer /
 * partitioner.class and a few others are accepted and ignored).
 * errstr may be NULL. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_conf_set(samsa_conf_t *conf,
                                                      const char *key,
                                                      const char *value,
                                                      char *errstr,
                                                      size_t errstr_size);

/* Set from "key=value". */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_conf_set_kv(samsa_conf_t *conf,
                                                         const char *kv,
                                                         char *errstr,
                                                         size_t errstr_size);

/* Load a Java .properties file and set each entry; errors name the file,
 * line and key.  Unknown keys fail as in samsa_conf_set(). */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_conf_load_file(
    samsa_conf_t *conf, const char *path, char *errstr, size_t errstr_size);

/* The value of key as set, or NULL if it was not set (its default then
 * applies).  Borrowed until conf changes. */
SAMSA_API const char *samsa_conf_get(const samsa_conf_t *conf,
                                     const char *key);

/* The default value of a known key as text, or NULL for an unknown key
 * (and for keys whose default is null, such as transactional.id). */
SAMSA_API const char *samsa_conf_default(const char *key);

#ifdef __cplusplus
}
#endif

#endif /* SAMSA_CONF_H */
