/*
 * meta/topic_name.c - see topic_name.h; messages are Kafka 4's
 * Topic.validate(name, "Topic name", ...).
 */
#include "meta/topic_name.h"

#include <stdio.h>
#include <string.h>

samsa_err_t
samsa_topic_name_validate(const char *name, size_t len, char *errstr,
                          size_t errstr_size)
{
    size_t  i;

    if (len == 0) {
        snprintf(errstr, errstr_size,
                 "Topic name is illegal, it can't be empty");
        return SAMSA_ERR_INVALID_TOPIC_EXCEPTION;
    }
    if ((len == 1 && name[0] == '.')
        || (len == 2 && name[0] == '.' && name[1] == '.')) {
        snprintf(errstr, errstr_size, "Topic name cannot be \".\" or \"..\"");
        return SAMSA_ERR_INVALID_TOPIC_EXCEPTION;
    }
    if (len > SAMSA_TOPIC_NAME_MAX) {
        snprintf(errstr, errstr_size, "Topic name is illegal, it can't be "
                 "longer than %d characters, Topic name: %.*s",
                 SAMSA_TOPIC_NAME_MAX, (int) len, name);
        return SAMSA_ERR_INVALID_TOPIC_EXCEPTION;
    }
    for (i = 0; i < len; i++) {
        char  c = name[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '.' || c == '_'
              || c == '-')) {
            snprintf(errstr, errstr_size, "Topic name \"%.*s\" is illegal, "
                     "it contains a character other than ASCII "
                     "alphanumerics, '.', '_' and '-'", (int) len, name);
            return SAMSA_ERR_INVALID_TOPIC_EXCEPTION;
        }
    }
    return SAMSA_ERR_NONE;
}

bool
samsa_topic_name_has_collision_chars(const char *name, size_t len)
{
    return memchr(name, '.', len) != NULL || memchr(name, '_', len) != NULL;
}

bool
samsa_topic_name_collides(const char *a, size_t alen, const char *b,
                          size_t blen)
{
    size_t  i;
    bool    same = true;

    if (alen != blen) {
        return false;
    }
    for (i = 0; i < alen; i++) {
        char  x = a[i] == '.' ? '_' : a[i];
        char  y = b[i] == '.' ? '_' : b[i];

        if (x != y) {
            return false;
        }
        same = same && a[i] == b[i];
    }
    return !same;
}

bool
samsa_topic_name_is_internal(const char *name, size_t len)
{
    return (len == strlen(SAMSA_TOPIC_CONSUMER_OFFSETS)
            && memcmp(name, SAMSA_TOPIC_CONSUMER_OFFSETS, len) == 0)
           || (len == strlen(SAMSA_TOPIC_TRANSACTION_STATE)
               && memcmp(name, SAMSA_TOPIC_TRANSACTION_STATE, len) == 0);
}
