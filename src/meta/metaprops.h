/*
 * meta/metaprops.h - meta.properties, the identity file Kafka keeps in each
 * log directory (version=1, cluster.id, node.id, directory.id as Kafka 3.7+
 * writes it).  `samsa-server format` writes it (samsa_metaprops_format, as
 * kafka-storage format); each start checks it against the configuration
 * (samsa_metaprops_ensure), and in Samsa's single-node mode a first start
 * formats an empty directory by itself.
 * Threads: main, before any server starts (the id helpers: any).
 * Ownership: callers own every buffer; nothing is kept.
 */
#ifndef SAMSA_META_METAPROPS_H
#define SAMSA_META_METAPROPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "proto/types.h"

#define SAMSA_UUID_STR_SIZE 23          /* 22 base64url characters + NUL */

/* A fresh random (version 4) Kafka Uuid in Kafka's text form (URL-safe
 * base64 without padding, never starting with '-'): what
 * `samsa-server random-cluster-id` prints.  @thread any */
void samsa_metaprops_random_id(char out[SAMSA_UUID_STR_SIZE]);

/* True if s is a Kafka Uuid in text form: 22 base64url characters that
 * decode to 16 bytes (the last one carrying no stray bits), not the zero
 * Uuid.  Otherwise false with why filled.  @thread any */
bool samsa_metaprops_id_valid(const char *s, char *why, size_t why_size);

/* s (a valid Kafka Uuid text, samsa_metaprops_id_valid) into *out; false
 * (*out zero) if s is not one.  @thread any */
bool samsa_metaprops_id_decode(const char *s, samsa_uuid_t *out);

/* Check dir's meta.properties against node_id and the cluster id of the
 * node's other dirs, at start.  cluster_id is in/out: if empty, the
 * file's id is copied out (or, formatting, a new one made); if set, the
 * file's must equal it ("Invalid cluster.id in: <file>. Expected A, but
 * read B.").  A node.id other than node_id fails with "Stale or
 * mismatched node.id" naming both and the file.  A dir without the file
 * is created and formatted when may_format (single-node mode; *formatted
 * set then); otherwise it fails with "No `meta.properties` found in <dir>
 * (have you run `samsa-server format` to format the directory?)".
 * Returns SAMSA_ERR__CONFIG (mismatch, unformatted) or SAMSA_ERR__IO. */
SAMSA_MUST_CHECK samsa_err_t samsa_metaprops_ensure(
    const char *dir, int32_t node_id, char cluster_id[SAMSA_UUID_STR_SIZE],
    bool may_format, bool *formatted, char *errstr, size_t errstr_size);

/* `samsa-server format` for one dir: create it if needed and write a new
 * meta.properties (new directory.id) for cluster_id and node_id.  An
 * already formatted dir fails with Kafka's "Log directory <dir> is already
 * formatted. Use --ignore-formatted to ignore this directory and format
 * the others."; with ignore_formatted it is skipped (*skipped set) if its
 * cluster.id and node.id are those given, and fails naming both values
 * and the file if not.  A non-empty dir without meta.properties is
 * refused.  Returns SAMSA_ERR__CONFIG or SAMSA_ERR__IO. */
SAMSA_MUST_CHECK samsa_err_t samsa_metaprops_format(
    const char *dir, int32_t node_id, const char *cluster_id,
    bool ignore_formatted, bool *skipped, char *errstr, size_t errstr_size);

/* samsa_metaprops_format with a given directory.id (dir_id, a valid
 * Uuid; NULL: a new random one), for the metadata dir of a controller
 * named in --initial-controllers (its voter entry carries the id). */
SAMSA_MUST_CHECK samsa_err_t samsa_metaprops_format_id(
    const char *dir, int32_t node_id, const char *cluster_id,
    const char *dir_id, bool ignore_formatted, bool *skipped, char *errstr,
    size_t errstr_size);

#endif /* SAMSA_META_METAPROPS_H */
