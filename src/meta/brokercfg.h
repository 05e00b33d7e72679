/*
 * meta/brokercfg.h - dynamic broker configs (Kafka's DynamicBrokerConfig):
 * which broker keys may change at run time, their value as a broker sees
 * it (the per-broker dynamic value, else the cluster-wide dynamic default,
 * else server.properties/--override, else the default), and the checks a
 * change must pass (DynamicThreadPool: a thread count moves by at most a
 * factor of two per change, the log cleaner's by LogCleaner's own rule;
 * a log or cleaner setting keeps its type and range).
 * The dynamic values live in the metadata
 * image as ConfigRecords of resource type BROKER, named by the node id, or
 * "" for the cluster-wide default.
 * Threads: any (pure functions over borrowed data).
 */
#ifndef SAMSA_META_BROKERCFG_H
#define SAMSA_META_BROKERCFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "log/cleaner.h"
#include "meta/image.h"
#include "config/config.h"

/* Samsa's limit on a thread count set at run time (Kafka has none; the
 * handler pool keeps a slot table of this size, net/server/sockserver_int.h). */
#define SAMSA_BROKERCFG_THREADS_MAX  4096

/* A broker's two levels of dynamic configs, borrowed. */
typedef struct samsa_brokercfg_levels {
    const samsa_image_config_t  *node;      /* resource "<node id>" */
    size_t                       nnode;
    const samsa_image_config_t  *dflt;      /* resource "" */
    size_t                       ndflt;
} samsa_brokercfg_levels_t;

/* Can key be changed at run time (Kafka's reconfigurable broker configs
 * that Samsa applies, and the listener.name.<listener>. forms of the
 * per-listener ones)? */
bool samsa_brokercfg_is_dynamic(const char *key);

/* The levels of node_id in img. */
void samsa_brokercfg_levels(const samsa_image_t *img, int32_t node_id,
                            samsa_brokercfg_levels_t *out);

/* The value of key among cfgs[0..n), NULL if none. */
const char *samsa_brokercfg_find(const samsa_image_config_t *cfgs, size_t n,
                                 const char *key);

/* key's value in effect and its source (a SAMSA_CONFIG_SOURCE_* of
 * meta/topic_config.h): per-broker dynamic, dynamic default, then cfg's
 * (static or default).  The string is borrowed from lv or cfg. */
const char *samsa_brokercfg_value(const samsa_config_t *cfg,
                                  const samsa_brokercfg_levels_t *lv,
                                  const char *key, int *source);

/* A check of this node's next dynamic configuration beyond its keys'
 * types, by the server that applies it: the listeners' TLS key and trust
 * stores can be loaded and keep the certificate's identity (Kafka's
 * SslFactory.validateReconfiguration).  fn fills errstr with the reason
 * and returns SAMSA_ERR_INVALID_CONFIG; it runs on the controller
 * thread. */
typedef struct samsa_brokercfg_check {
    samsa_err_t (*fn)(void *ctx, const samsa_brokercfg_levels_t *next,
                      char *errstr, size_t errstr_size);
    void         *ctx;
} samsa_brokercfg_check_t;

/* Check a resource's complete new set of dynamic configs before it is
 * written: is_default says which level it replaces (the node's or the
 * cluster default), cur the levels in effect now.  Fills errstr with
 * Kafka's message and returns SAMSA_ERR_INVALID_CONFIG: the request is
 * well formed, the configuration cannot be applied (what Kafka's comment
 * on KAFKA-13609 calls the right error; Kafka 3.x's broker still answers
 * INVALID_REQUEST). */
SAMSA_MUST_CHECK samsa_err_t samsa_brokercfg_validate(
    const samsa_config_t *cfg, const samsa_brokercfg_levels_t *cur,
    bool is_default, const samsa_image_config_t *set, size_t n,
    char *errstr, size_t errstr_size);

/* key's value in effect as an int (a dynamic value that does not parse,
 * which validation keeps out, falls back to the static one). */
int32_t samsa_brokercfg_int(const samsa_config_t *cfg,
                            const samsa_brokercfg_levels_t *lv,
                            const char *key);

/* A per-listener key's value for listener (its name, any case): the
 * dynamic listener.name.<listener>.<key> (broker, then default), else
 * the static one (*prefixed true), else the key's own value in effect
 * (*prefixed false), as Kafka's valuesWithPrefixOverride. */
int32_t samsa_brokercfg_listener_int(const samsa_config_t *cfg,
                                     const samsa_brokercfg_levels_t *lv,
                                     const char *listener, const char *key,
                                     bool *prefixed);

/* The same for a DOUBLE key. */
double samsa_brokercfg_double(const samsa_config_t *cfg,
                              const samsa_brokercfg_levels_t *lv,
                              const char *key);

/* The log cleaner's settings as resolved above: log.cleaner.threads,
 * .backoff.ms, .dedupe.buffer.size and .io.max.bytes.per.second, and the
 * static log.cleaner.enable.  Levels with nothing set give the static
 * configuration's values. */
void samsa_brokercfg_cleaner(const samsa_config_t *cfg,
                             const samsa_brokercfg_levels_t *lv,
                             samsa_cleaner_config_t *out);

/* The same for a LONG key. */
int64_t samsa_brokercfg_long(const samsa_config_t *cfg,
                             const samsa_brokercfg_levels_t *lv,
                             const char *key);

#endif /* SAMSA_META_BROKERCFG_H */
