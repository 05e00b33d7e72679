/*
 * client/jaas_conf.c - sasl.jaas.config's grammar (see jaas_conf.h): a
 * small tokenizer with java.io.StreamTokenizer's rules as Kafka's
 * JaasConfig sets them up, and the one-entry parser on top.
 * Threads: pure functions.
 */
#include "client/jaas_conf.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/alloc.h"
#include "util/buf.h"

typedef enum jaas_tok {
    JAAS_EOF = 0,
    JAAS_WORD,                  /* a word or a quoted string: text */
    JAAS_CHAR,                  /* one ordinary character: ch */
    JAAS_BAD,                   /* an unterminated quote or comment */
} jaas_tok_t;

typedef struct jaas_lex {
    const char  *p;
    samsa_buf_t  text;          /* the last word, NUL-terminated */
    char         ch;
    bool         quoted;
    char         quote;         /* '"' or '\'' when quoted */
} jaas_lex_t;

static bool
jaas_word_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
           || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_'
           || c == '$' || c >= 0x80;
}

/* Skip blanks and comments; false on an unterminated slash-star one. */
static bool
jaas_skip(jaas_lex_t *lx)
{
    for (;;) {
        while (*lx->p != '\0' && (unsigned char) *lx->p <= ' ') {
            lx->p++;
        }
        if (lx->p[0] == '/' && lx->p[1] == '/') {
            while (*lx->p != '\0' && *lx->p != '\n' && *lx->p != '\r') {
                lx->p++;
            }
        } else if (lx->p[0] == '/' && lx->p[1] == '*') {
            const char  *end = strstr(lx->p + 2, "*/");

            if (end == NULL) {
                return false;
            }
            lx->p = end + 2;
        } else {
            return true;
        }
    }
}

static void
jaas_put(jaas_lex_t *lx, char c)
{
    samsa_buf_append(&lx->text, &c, 1);
}

/* One escape after a backslash inside quotes (StreamTokenizer's). */
static void
jaas_escape(jaas_lex_t *lx)
{
    char  c = *lx->p++;
    int   v, i;

    switch (c) {
    case 'n': jaas_put(lx, '\n'); return;
    case 't': jaas_put(lx, '\t'); return;
    case 'r': jaas_put(lx, '\r'); return;
    case 'b': jaas_put(lx, '\b'); return;
    case 'f': jaas_put(lx, '\f'); return;
    case 'a': jaas_put(lx, '\a'); return;
    case 'v': jaas_put(lx, '\v'); return;
    default:
        break;
    }
    if (c >= '0' && c <= '7') {
        v = c - '0';
        /* up to three digits, the first <= 3 for three */
        for (i = 1; i < (c <= '3' ? 3 : 2) && *lx->p >= '0'
                    && *lx->p <= '7'; i++) {
            v = v * 8 + (*lx->p++ - '0');
        }
        jaas_put(lx, (char) v);
        return;
    }
    jaas_put(lx, c);
}

static jaas_tok_t
jaas_quoted(jaas_lex_t *lx)
{
    char  q = *lx->p++;

    lx->quoted = true;
    lx->quote = q;
    while (*lx->p != q) {
        /* StreamTokenizer ends a quote at a line end too; Kafka's
         * values never span lines, so that is an error here */
        if (*lx->p == '\0' || *lx->p == '\n' || *lx->p == '\r') {
            return JAAS_BAD;
        }
        if (*lx->p == '\\' && lx->p[1] != '\0') {
            lx->p++;
            jaas_escape(lx);
        } else {
            jaas_put(lx, *lx->p++);
        }
    }
    lx->p++;
    jaas_put(lx, '\0');
    return JAAS_WORD;
}

static jaas_tok_t
jaas_next(jaas_lex_t *lx)
{
    lx->text.len = 0;
    lx->quoted = false;
    if (!jaas_skip(lx)) {
        return JAAS_BAD;
    }
    if (*lx->p == '\0') {
        return JAAS_EOF;
    }
    if (*lx->p == '"' || *lx->p == '\'') {
        return jaas_quoted(lx);
    }
    if (jaas_word_char((unsigned char) *lx->p)) {
        while (jaas_word_char((unsigned char) *lx->p)) {
            jaas_put(lx, *lx->p++);
        }
        jaas_put(lx, '\0');
        return JAAS_WORD;
    }
    lx->ch = *lx->p++;
    return JAAS_CHAR;
}

static const char *
jaas_text(const jaas_lex_t *lx)
{
    return (const char *) lx->text.data;
}

static void
jaas_opt_set(samsa_jaas_conf_t *jc, const char *key, const char *value)
{
    size_t  i;

    for (i = 0; i < jc->nopts; i++) {
        if (strcmp(jc->keys[i], key) == 0) {
            samsa_free(jc->values[i]);
            jc->values[i] = samsa_strdup(value);
            return;
        }
    }
    jc->keys = samsa_realloc(jc->keys, (jc->nopts + 1) * sizeof(char *));
    jc->values = samsa_realloc(jc->values,
                               (jc->nopts + 1) * sizeof(char *));
    jc->keys[jc->nopts] = samsa_strdup(key);
    jc->values[jc->nopts] = samsa_strdup(value);
    jc->nopts++;
}

static bool
jaas_flag_valid(const char *flag)
{
    static const char *const  flags[] = { "required", "requisite",
                                          "sufficient", "optional" };
    size_t                    i;

    for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        if (strcasecmp(flags[i], flag) == 0) {
            return true;
        }
    }
    return false;
}

/* key=value ... up to the ';' that ends the entry. */
static samsa_err_t
jaas_options(jaas_lex_t *lx, samsa_jaas_conf_t *jc, char *errstr,
             size_t errstr_size)
{
    jaas_tok_t  t;
    char       *key;

    for (;;) {
        t = jaas_next(lx);
        if (t == JAAS_CHAR && lx->ch == ';') {
            return SAMSA_ERR_NONE;
        }
        if (t != JAAS_WORD || lx->quoted) {
            snprintf(errstr, errstr_size, "%s", t == JAAS_EOF
                         ? "the login module's entry does not end with ';'"
                         : t == JAAS_BAD
                               ? "an unterminated quote or comment"
                               : "expected an option name or ';'");
            return SAMSA_ERR__CONFIG;
        }
        key = samsa_strdup(jaas_text(lx));
        if (jaas_next(lx) != JAAS_CHAR || lx->ch != '=') {
            snprintf(errstr, errstr_size, "value not specified for key "
                     "'%s'", key);
            samsa_free(key);
            return SAMSA_ERR__CONFIG;
        }
        t = jaas_next(lx);
        if (t != JAAS_WORD || (lx->quoted && lx->quote != '"')) {
            /* Java's JaasConfig takes words and "..." only */
            snprintf(errstr, errstr_size, "%s for key '%s'",
                     t == JAAS_BAD ? "an unterminated quote"
                     : t == JAAS_WORD ? "a value in single quotes (use \")"
                                      : "value not specified", key);
            samsa_free(key);
            return SAMSA_ERR__CONFIG;
        }
        jaas_opt_set(jc, key, jaas_text(lx));
        samsa_free(key);
    }
}

samsa_err_t
samsa_jaas_conf_parse(const char *text, samsa_jaas_conf_t *jc, char *errstr,
                      size_t errstr_size)
{
    jaas_lex_t   lx = { .p = text, .text = SAMSA_BUF_INIT };
    samsa_err_t  err = SAMSA_ERR__CONFIG;
    jaas_tok_t   t;

    memset(jc, 0, sizeof(*jc));
    t = jaas_next(&lx);
    if (t == JAAS_EOF) {
        snprintf(errstr, errstr_size, "login module not specified");
        goto out;
    }
    if (t != JAAS_WORD || lx.quoted) {
        snprintf(errstr, errstr_size, "expected a login module class name");
        goto out;
    }
    jc->module = samsa_strdup(jaas_text(&lx));
    if (jaas_next(&lx) != JAAS_WORD || lx.quoted
        || !jaas_flag_valid(jaas_text(&lx))) {
        snprintf(errstr, errstr_size, "expected a control flag (required, "
                 "requisite, sufficient or optional) after '%s'",
                 jc->module);
        goto out;
    }
    jc->flag = samsa_strdup(jaas_text(&lx));
    if (jaas_options(&lx, jc, errstr, errstr_size) != SAMSA_ERR_NONE) {
        goto out;
    }
    t = jaas_next(&lx);
    if (t != JAAS_EOF) {
        snprintf(errstr, errstr_size, "%s", t == JAAS_WORD
                     ? "more than one login module: a client's "
                       "sasl.jaas.config must hold exactly one"
                     : "unexpected text after the login module's ';'");
        goto out;
    }
    err = SAMSA_ERR_NONE;
out:
    samsa_buf_fini(&lx.text);
    return err;
}

const char *
samsa_jaas_conf_get(const samsa_jaas_conf_t *jc, const char *key)
{
    size_t  i;

    for (i = 0; i < jc->nopts; i++) {
        if (strcmp(jc->keys[i], key) == 0) {
            return jc->values[i];
        }
    }
    return NULL;
}

void
samsa_jaas_conf_fini(samsa_jaas_conf_t *jc)
{
    size_t  i;

    for (i = 0; i < jc->nopts; i++) {
        samsa_free(jc->keys[i]);
        samsa_free(jc->values[i]);
    }
    samsa_free(jc->keys);
    samsa_free(jc->values);
    samsa_free(jc->module);
    samsa_free(jc->flag);
    memset(jc, 0, sizeof(*jc));
}
