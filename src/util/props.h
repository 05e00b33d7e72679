/*
 * util/props.h - a Java .properties reader (the format of Kafka's
 * server.properties) and the ordered key/value set it fills.  Each key keeps
 * the origin of its latest value ("server.properties:12", "--override").
 * Threads: a samsa_props_t belongs to one thread at a time; the server's
 * main thread builds one at start-up and frees it once the config is built.
 * Ownership: the set owns copies of every key, value and origin.
 */
#ifndef SAMSA_UTIL_PROPS_H
#define SAMSA_UTIL_PROPS_H

#include <stddef.h>

#include <samsa/errors.h>

typedef struct samsa_props samsa_props_t;

/* An empty set; never NULL (allocation aborts). */
samsa_props_t *samsa_props_new(void);

/* Frees the set and all its strings; NULL is a no-op. */
void samsa_props_free(samsa_props_t *props);

/* Read the file at path and parse it as with samsa_props_parse(), each
 * origin being "<path>:<line>".  On failure errstr names the file and the
 * reason: SAMSA_ERR__NOENT if it does not exist, SAMSA_ERR__IO if it cannot
 * be read, SAMSA_ERR__CONFIG if its text is malformed. */
SAMSA_MUST_CHECK samsa_err_t samsa_props_load_file(samsa_props_t *props,
                                                   const char *path,
                                                   char *errstr,
                                                   size_t errstr_size);

/* Parse len bytes of .properties text (java.util.Properties.load rules):
 * one entry per logical line as "key=value", "key: value" or "key value";
 * lines starting with '#' or '!' are comments; leading blanks are skipped;
 * an odd number of trailing backslashes joins the next line (its leading
 * blanks dropped); escapes \t \n \r \f \uXXXX (written as UTF-8) and
 * backslash-anything for the character itself.  Bytes are kept as they are
 * (UTF-8 passes through).  Entries are set with origin "<origin>:<line>".
 * SAMSA_ERR__CONFIG, with errstr naming origin and line, on a malformed
 * \u escape, a lone surrogate or a NUL byte; entries before it stay set. */
SAMSA_MUST_CHECK samsa_err_t samsa_props_parse(samsa_props_t *props,
                                               const char *text, size_t len,
                                               const char *origin,
                                               char *errstr,
                                               size_t errstr_size);

/* Set key to value (both copied); a later set of the same key replaces the
 * value and origin but keeps the key's place in the order. */
void samsa_props_set(samsa_props_t *props, const char *key,
                     const char *value, const char *origin);

/* The value of key, or NULL if it is not set.  Borrowed until the next
 * set of that key or samsa_props_free(). */
const char *samsa_props_get(const samsa_props_t *props, const char *key);

/* Iteration in first-set order: i in [0, samsa_props_count()). */
size_t      samsa_props_count(const samsa_props_t *props);
const char *samsa_props_key(const samsa_props_t *props, size_t i);
const char *samsa_props_value(const samsa_props_t *props, size_t i);
const char *samsa_props_origin(const samsa_props_t *props, size_t i);

#endif /* SAMSA_UTIL_PROPS_H */
