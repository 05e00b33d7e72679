/*
 * client/conf_defs.h - the table of client configuration keys behind
 * samsa/conf.h (conf.c), its typed accessors and the value parsers the
 * typed configs (client_config.c, pconf.c, cconf.c) share with it.
 * Threads: const data and pure functions.
 */
#ifndef SAMSA_CLIENT_CONF_DEFS_H
#define SAMSA_CLIENT_CONF_DEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/conf.h>
#include "config/config_defs.h"

/* Every key, ending with a NULL name: rows of the one configuration
 * row type (config/config_defs.h), checked by conf.c with the parsers of
 * config/config_parse.c.  INT and LONG rows are RANGE (or FN: the
 * compression levels), enum ones ENUM or FN; Java-only keys the client
 * ignores are STRING rows that are not implemented. */
extern const samsa_config_def_t  samsa_conf_defs[];

const samsa_config_def_t *samsa_conf_def_find(const char *key);

/* The one accessor of a key's value: as set, else its default (values
 * were checked by samsa_conf_set(); defaults are well-formed, and the
 * typed ones assert that the text parses). */
const char *samsa_conf_value(const samsa_conf_t *conf, const char *key);
int64_t     samsa_conf_long(const samsa_conf_t *conf, const char *key);
bool        samsa_conf_bool(const samsa_conf_t *conf, const char *key);

/* A whole decimal number (blanks around allowed). */
bool samsa_conf_parse_long(const char *s, int64_t *v);

/* The short name ("range", "roundrobin", "cooperative-sticky") of one
 * partition.assignment.strategy item of len bytes (short or Java class
 * name), or NULL. */
const char *samsa_conf_assignor_name(const char *item, size_t len);

/* Whether list is a non-empty comma-separated list of known assignors. */
bool samsa_conf_assignors_valid(const char *list);

#endif /* SAMSA_CLIENT_CONF_DEFS_H */
