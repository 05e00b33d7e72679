/*
 * config/config_parse.h - the value parsers every configuration table is
 * checked with: the broker's (config.c, meta/brokercfg.c), the topic's
 * (meta/topic_config.c) and the client's (client/conf.c and the typed
 * configs built on it).  Integers, booleans, enum names and comma-separated
 * lists are parsed here and nowhere else; each table keeps its own error
 * messages (Kafka's broker, topic and client ones differ) and its own
 * idea of blanks (samsa_config_trim_t).  Part of samsa_config, which
 * libsamsa links (built PIC with hidden visibility).
 * Threads: pure functions; any thread.
 */
#ifndef SAMSA_CONFIG_CONFIG_PARSE_H
#define SAMSA_CONFIG_CONFIG_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which characters count as blanks around a value or a list item. */
typedef enum samsa_config_trim {
    SAMSA_CONFIG_TRIM_SPACE,        /* isspace(): server.properties */
    SAMSA_CONFIG_TRIM_JAVA,         /* Java's String.trim(): <= ' ' */
    SAMSA_CONFIG_TRIM_BLANK,        /* ' ' and '\t': the client's */
} samsa_config_trim_t;

/* Narrow the span [*s, *s + *n) to drop blanks of kind how on both
 * sides. */
void samsa_config_trim_span(const char **s, size_t *n,
                            samsa_config_trim_t how);

/* Decimal with an optional sign and nothing else (trim first), within
 * [min, max] (INT32_MIN..INT32_MAX names an int in the message, any other
 * range a long).  NULL with *out set, or why not: "not a number",
 * "out of range for an int (32 bits)", "out of range for a long
 * (64 bits)". */
const char *samsa_config_parse_i64(const char *text, int64_t min,
                                   int64_t max, int64_t *out);

/* Java's Double.parseDouble (Kafka's ConfigDef DOUBLE): blanks <= ' '
 * around it, an optional sign, then "NaN", "Infinity", a decimal number
 * (digits with an optional '.', at least one digit, an optional exponent)
 * or a hexadecimal one ("0x1.8p3": the binary exponent required), the
 * numbers with an optional f, F, d or D after them.  NULL with *out set,
 * or why not: "not a number", "out of range for a double" (a number past
 * the largest double, where Java would give Infinity; one below the
 * smallest gives 0 or a subnormal, as in Java). */
const char *samsa_config_parse_double(const char *text, double *out);

/* "true" or "false", any case (Kafka's ConfigDef BOOLEAN). */
bool samsa_config_parse_bool(const char *text, bool *out);

/* True if s is one of the NULL-terminated names (exact case; _case: any
 * case). */
bool samsa_config_in(const char *const *names, const char *s);
bool samsa_config_in_case(const char *const *names, const char *s);

/* Index of s in the NULL-terminated names (exact case), or -1. */
int samsa_config_enum_index(const char *const *names, const char *s);

/* "a, b, c" into buf (truncated to size); returns buf. */
const char *samsa_config_join(const char *const *names, char *buf,
                              size_t size);

/* Walking a comma-separated list: empty text has no items; otherwise
 * every span between commas is an item, empty ones included ("a," is "a"
 * and ""), untrimmed:
 *     samsa_config_list_t  it;
 *     samsa_config_list_init(&it, text);
 *     while (samsa_config_list_next(&it, &item, &len)) ... */
typedef struct samsa_config_list {
    const char  *next;              /* NULL: done */
} samsa_config_list_t;

void samsa_config_list_init(samsa_config_list_t *it, const char *text);
bool samsa_config_list_next(samsa_config_list_t *it, const char **item,
                            size_t *len);

#endif /* SAMSA_CONFIG_CONFIG_PARSE_H */
