/*
 * config/config_defs.h - the one row type of every configuration table,
 * one row per key in the manner of Kafka's ConfigDef: name, type, default,
 * validator, doc line, and for broker keys whether Samsa uses the key yet,
 * for topic keys the broker keys they fall back to.  The broker's table is
 * here (config.c parses and checks values against it; docs/CONFIG.md is
 * generated from it); the topic's is meta/topic_config.c's.  Values of
 * every table are parsed by config_parse.c.
 * Threads: const data and pure functions; any thread.
 */
#ifndef SAMSA_CONFIG_CONFIG_DEFS_H
#define SAMSA_CONFIG_CONFIG_DEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum samsa_config_type {
    SAMSA_CONFIG_INT,               /* int32 (Kafka's INT and SHORT) */
    SAMSA_CONFIG_LONG,              /* int64 */
    SAMSA_CONFIG_DOUBLE,
    SAMSA_CONFIG_BOOL,              /* true / false, any case */
    SAMSA_CONFIG_STRING,            /* blanks around it trimmed */
    SAMSA_CONFIG_LIST,              /* comma-separated, each item trimmed */
    SAMSA_CONFIG_PASSWORD,          /* a string never shown in logs */
} samsa_config_type_t;

typedef enum samsa_config_check {
    SAMSA_CONFIG_CHECK_NONE,        /* any value of the type */
    SAMSA_CONFIG_CHECK_RANGE,       /* numbers: min..max (dmin..dmax) */
    SAMSA_CONFIG_CHECK_ENUM,        /* one of names (each item of a list) */
    SAMSA_CONFIG_CHECK_FN,          /* fn decides */
} samsa_config_check_t;

/* A custom validator: text is the trimmed value, num its parsed value for
 * INT and LONG keys (0 otherwise).  On false, why says what is wrong. */
typedef bool samsa_config_check_fn(const char *text, int64_t num, char *why,
                                   size_t why_size);

#define SAMSA_CONFIG_SYNONYMS_MAX  3      /* broker keys per topic key */

/* A broker key a topic key falls back to (Kafka's synonyms), and what its
 * value is in the topic key's unit (log.retention.hours: 3600000 ms). */
typedef struct samsa_config_synonym {
    const char  *name;
    int64_t      scale;
} samsa_config_synonym_t;

typedef struct samsa_config_def {
    const char            *name;        /* Kafka's key, e.g. "num.io.threads" */
    samsa_config_type_t    type;
    const char            *dflt;        /* as written in server.properties;
                                           NULL: no value (Kafka's null) */
    samsa_config_check_t   check;
    int64_t                min;         /* RANGE, INT and LONG */
    int64_t                max;
    double                 dmin;        /* RANGE, DOUBLE */
    double                 dmax;
    const char *const     *names;       /* ENUM: NULL-terminated, exact case */
    samsa_config_check_fn *fn;          /* FN */
    const char            *valid;       /* valid values in words, for keys
                                           config.c checks as a whole
                                           (listeners...); NULL otherwise */
    bool                   nonempty;    /* LIST: at least one item */
    bool                   implemented; /* false: accepted, not used yet */
    bool                   per_listener;/* also listener.name.<listener>.
                                           <name>, for one listener */
    samsa_config_synonym_t synonyms[SAMSA_CONFIG_SYNONYMS_MAX];
                                        /* topic keys: Kafka's order; name
                                           NULL ends the list */
    const char            *doc;         /* one line */
} samsa_config_def_t;

/* The table, sorted by nothing in particular (groups as in Kafka's docs). */
extern const samsa_config_def_t  samsa_config_defs[];
extern const size_t              samsa_config_ndefs;

/* Row index of key, or samsa_config_ndefs if it is not a known key. */
size_t samsa_config_defs_index(const char *key);

/* "int", "long", "double", "boolean", "string", "list", "password". */
const char *samsa_config_defs_type_name(samsa_config_type_t type);

/* Write the reference table of every key as Markdown (the generated part
 * of docs/CONFIG.md): name, type, default, valid values, used, doc. */
void samsa_config_defs_markdown(FILE *out);

/* Write a sample server.properties with every key commented out at its
 * default, each after its description, type and valid values
 * (config/server.properties is this output). */
void samsa_config_defs_properties(FILE *out);

#endif /* SAMSA_CONFIG_CONFIG_DEFS_H */
