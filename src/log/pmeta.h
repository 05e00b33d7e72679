/*
 * log/pmeta.h - <topic>-<partition>/partition.metadata, Kafka's file
 * naming the topic id of a partition's directory:
 *     version: 0
 *     topic_id: <22-character URL-safe base64 uuid>
 * Threads: any; one writer per directory (the plog's creator).
 */
#ifndef SAMSA_LOG_PMETA_H
#define SAMSA_LOG_PMETA_H

#include <samsa/errors.h>

#include "proto/types.h"

/* Write dir/partition.metadata atomically.  KAFKA_STORAGE_ERROR on
 * failure. */
SAMSA_MUST_CHECK samsa_err_t samsa_pmeta_write(const char *dir,
                                               samsa_uuid_t topic_id);

/* Read it: _NOENT when missing, _BAD_MSG (with a warning naming the file)
 * when malformed. */
SAMSA_MUST_CHECK samsa_err_t samsa_pmeta_read(const char *dir,
                                              samsa_uuid_t *topic_id);

/* Kafka's Uuid text form: URL-safe base64 without padding (22 chars +
 * NUL). */
void samsa_pmeta_uuid_str(samsa_uuid_t u, char out[23]);
bool samsa_pmeta_uuid_parse(const char *s, samsa_uuid_t *u);

#endif /* SAMSA_LOG_PMETA_H */
