/*
 * client/mdcache.h - the producer's metadata (Kafka's ProducerMetadata):
 * for each topic the producer uses, its partition count and leaders, as an
 * immutable refcounted snapshot that app threads read without holding a
 * lock; the set of topics to ask the brokers about; when to ask.
 * App threads wait (up to max.block.ms) for a topic's first metadata; the
 * sender thread sends Metadata requests and installs the answers.
 * Threads: any; one mutex and condition variable inside.
 */
#ifndef SAMSA_CLIENT_MDCACHE_H
#define SAMSA_CLIENT_MDCACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "proto/gen/Metadata.h"

/* One topic's metadata at one time.  [const] after creation. */
typedef struct samsa_mdtopic {
    _Atomic int   refs;             /* [atomic] */
    char         *name;
    samsa_err_t   err;              /* topic-level error, or NONE */
    int32_t       npartitions;
    int32_t      *leaders;          /* by partition; -1 unknown */
    int32_t      *avail;            /* partitions with a leader, ascending */
    int32_t       navail;
} samsa_mdtopic_t;

typedef struct samsa_mdcache samsa_mdcache_t;

/* wake is called (any thread, no lock held) when an app thread needs an
 * update: the producer wakes its sender. */
samsa_mdcache_t *samsa_mdcache_new(int64_t max_age_ms,
                                   void (*wake)(void *ctx), void *wake_ctx);
void samsa_mdcache_free(samsa_mdcache_t *mdc);

/* The topic's metadata with partition (or any, if partition < 0) known,
 * waiting up to max_wait_ms.  SAMSA_ERR__TIMED_OUT if it did not come in
 * time; a topic-level error that is not retriable (e.g.
 * INVALID_TOPIC_EXCEPTION) at once; SAMSA_ERR__SHUTDOWN once closed.
 * Release *out with samsa_mdtopic_unref().  @thread app */
SAMSA_MUST_CHECK samsa_err_t samsa_mdcache_wait(samsa_mdcache_t *mdc,
                                                const char *topic,
                                                int32_t partition,
                                                int64_t max_wait_ms,
                                                samsa_mdtopic_t **out);

void samsa_mdtopic_unref(samsa_mdtopic_t *t);

/* Fail waiters with SAMSA_ERR__SHUTDOWN from now on. */
void samsa_mdcache_close(samsa_mdcache_t *mdc);

/* Ask for an update at the next chance (errors naming stale leaders). */
void samsa_mdcache_request_update(samsa_mdcache_t *mdc);

/* Is an update due (requested, or metadata.max.age.ms passed)?  Sets
 * *next_ms to the time until the next one is due otherwise.
 * @thread sender */
bool samsa_mdcache_update_due(samsa_mdcache_t *mdc, int64_t now_ms,
                              int64_t *next_ms);

/* The topics to ask about: a NULL-terminated array of copies, freed with
 * samsa_mdcache_topics_free().  @thread sender */
char **samsa_mdcache_topics(samsa_mdcache_t *mdc, int32_t *n);
void samsa_mdcache_topics_free(char **topics);

/* Install a Metadata response; wakes waiters; bumps the generation.
 * @thread sender */
void samsa_mdcache_update(samsa_mdcache_t *mdc,
                          const samsa_MetadataResponse_t *resp,
                          int64_t now_ms);

/* A Metadata request failed: try again soon.  @thread sender */
void samsa_mdcache_update_failed(samsa_mdcache_t *mdc);

/* Bumped by every update. */
uint64_t samsa_mdcache_gen(samsa_mdcache_t *mdc);

/* Leader of (topic, partition), -1 if unknown.  Matches
 * samsa_accum_leader_fn (ctx = the mdcache). */
int32_t samsa_mdcache_leader(void *mdc, const char *topic,
                             int32_t partition);

#endif /* SAMSA_CLIENT_MDCACHE_H */
