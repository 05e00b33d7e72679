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

typedef enum samsa_conf_type {
    SAMSA_CONF_STRING,
    SAMSA_CONF_LIST,            /* comma-separated */
    SAMSA_CONF_INT,             /* [min, max] */
    SAMSA_CONF_LONG,            /* [min, max] */
    SAMSA_CONF_BOOL,
    SAMSA_CONF_ACKS,            /* all, -1, 0, 1 */
    SAMSA_CONF_CODEC,           /* compression.type */
    SAMSA_CONF_LEVEL,           /* compression.<codec>.level; min = codec */
    SAMSA_CONF_PLAINTEXT,       /* security.protocol: PLAINTEXT only */
    SAMSA_CONF_OFFSET_RESET,    /* auto.offset.reset */
    SAMSA_CONF_ISOLATION,       /* isolation.level */
    SAMSA_CONF_GROUP_PROTOCOL,  /* group.protocol */
    SAMSA_CONF_ASSIGNORS,       /* partition.assignment.strategy */
    SAMSA_CONF_IGNORED,         /* Java-only key, accepted */
} samsa_conf_type_t;

typedef struct samsa_conf_def {
    const char         *name;
    samsa_conf_type_t   type;
    const char         *dflt;       /* NULL: null */
    int64_t             min;
    int64_t             max;
} samsa_conf_def_t;

/* Every key, ending with a NULL name. */
extern const samsa_conf_def_t  samsa_conf_defs[];

const samsa_conf_def_t *samsa_conf_def_find(const char *key);

/* The one accessor of a key's value: as set, else its default (values
 * were checked by samsa_conf_set(); defaults are well-formed, and the
 * typed ones assert that the text parses). */
const char *samsa_conf_value(const samsa_conf_t *conf, const char *key);
int64_t     samsa_conf_long(const samsa_conf_t *conf, const char *key);
bool        samsa_conf_bool(const samsa_conf_t *conf, const char *key);

/* A whole decimal number (blanks around allowed). */
bool samsa_conf_parse_long(const char *s, int64_t *v);

/* "true" / "false", any case. */
bool samsa_conf_parse_bool(const char *s, bool *v);

/* The short name ("range", "roundrobin", "cooperative-sticky") of one
 * partition.assignment.strategy item of len bytes (short or Java class
 * name), or NULL. */
const char *samsa_conf_assignor_name(const char *item, size_t len);

/* Whether list is a non-empty comma-separated list of known assignors. */
bool samsa_conf_assignors_valid(const char *list);

#endif /* SAMSA_CLIENT_CONF_DEFS_H */
