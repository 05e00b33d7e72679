/*
 * meta/topic_name.h - Kafka's rules for topic names (Topic.java): legal
 * characters [a-zA-Z0-9._-], 1 to 249 of them, not "." or "..";
 * names that differ only in '.' against '_' collide (their metric names
 * would be the same); the internal topics.
 * Threads: pure functions; any thread.
 */
#ifndef SAMSA_META_TOPIC_NAME_H
#define SAMSA_META_TOPIC_NAME_H

#include <stdbool.h>
#include <stddef.h>

#include <samsa/errors.h>

#define SAMSA_TOPIC_NAME_MAX  249

#define SAMSA_TOPIC_CONSUMER_OFFSETS   "__consumer_offsets"
#define SAMSA_TOPIC_TRANSACTION_STATE  "__transaction_state"
#define SAMSA_TOPIC_CLUSTER_METADATA   "__cluster_metadata"

/* Check name (len bytes, need not be NUL-terminated) as Kafka's
 * Topic.validate: SAMSA_ERR_INVALID_TOPIC_EXCEPTION with Kafka's message
 * in errstr ("Topic name is illegal, it can't be empty", "Topic name
 * cannot be \".\" or \"..\"", "Topic name is illegal, it can't be longer
 * than 249 characters, Topic name: <name>", "Topic name \"<name>\" is
 * illegal, it contains a character other than ASCII alphanumerics, '.',
 * '_' and '-'"). */
SAMSA_MUST_CHECK samsa_err_t samsa_topic_name_validate(const char *name,
                                                       size_t len,
                                                       char *errstr,
                                                       size_t errstr_size);

/* True if the name contains '.' or '_' (Topic.hasCollisionChars). */
bool samsa_topic_name_has_collision_chars(const char *name, size_t len);

/* True if a and b differ but are equal once every '.' becomes '_'
 * (Topic.hasCollision). */
bool samsa_topic_name_collides(const char *a, size_t alen, const char *b,
                               size_t blen);

/* __consumer_offsets or __transaction_state (Topic.isInternal). */
bool samsa_topic_name_is_internal(const char *name, size_t len);

#endif /* SAMSA_META_TOPIC_NAME_H */
