/*
 * net/jaas.c - the sasl.jaas.config parser (see jaas.h).
 * Threads: stateless, any thread.
 */
#include "net/jaas.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"

typedef struct jaas_lex {
    const char  *p;
    const char  *end;
    char        *why;
    size_t       why_size;
} jaas_lex_t;

static void
jaas_skip_space(jaas_lex_t *lx)
{
    while (lx->p < lx->end
           && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\n'
               || *lx->p == '\r')) {
        lx->p++;
    }
}

/* A bare word: what a StreamTokenizer with Kafka's word characters reads
 * (letters, digits, and . _ - $ / : @ + * and the like): anything but
 * space, '=', ';', '"'. */
static bool
jaas_word_char(char c)
{
    return c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '='
           && c != ';' && c != '"' && c != '\'' && c != '\0';
}

static samsa_err_t
jaas_bad(jaas_lex_t *lx, const char *what)
{
    snprintf(lx->why, lx->why_size, "%s", what);
    return SAMSA_ERR__CONFIG;
}

/* A word or a quoted string into *out (allocated). */
static samsa_err_t
jaas_token(jaas_lex_t *lx, char **out, const char *what)
{
    const char  *start;
    char        *s;
    size_t       n = 0;
    char         quote;

    jaas_skip_space(lx);
    if (lx->p >= lx->end) {
        snprintf(lx->why, lx->why_size, "%s expected, the text ended",
                 what);
        return SAMSA_ERR__CONFIG;
    }
    if (*lx->p == '"' || *lx->p == '\'') {
        quote = *lx->p++;
        s = samsa_malloc((size_t) (lx->end - lx->p) + 1);
        while (lx->p < lx->end && *lx->p != quote) {
            if (*lx->p == '\\' && lx->p + 1 < lx->end) {
                lx->p++;
            }
            s[n++] = *lx->p++;
        }
        if (lx->p >= lx->end) {
            samsa_free(s);
            snprintf(lx->why, lx->why_size, "unterminated quoted value "
                     "in %s", what);
            return SAMSA_ERR__CONFIG;
        }
        lx->p++;                        /* the closing quote */
        s[n] = '\0';
        *out = s;
        return SAMSA_ERR_NONE;
    }
    start = lx->p;
    while (lx->p < lx->end && jaas_word_char(*lx->p)) {
        lx->p++;
    }
    if (lx->p == start) {
        snprintf(lx->why, lx->why_size, "%s expected, found '%c'", what,
                 *lx->p);
        return SAMSA_ERR__CONFIG;
    }
    *out = samsa_strndup(start, (size_t) (lx->p - start));
    return SAMSA_ERR_NONE;
}

static bool
jaas_flag_valid(const char *flag)
{
    return strcmp(flag, "required") == 0 || strcmp(flag, "requisite") == 0
           || strcmp(flag, "sufficient") == 0
           || strcmp(flag, "optional") == 0;
}

static samsa_err_t
jaas_module(jaas_lex_t *lx, samsa_jaas_module_t *m)
{
    samsa_jaas_opt_t  *o;
    samsa_err_t        err;

    if ((err = jaas_token(lx, &m->class_name, "a login module class"))
        != SAMSA_ERR_NONE) {
        return err;
    }
    if ((err = jaas_token(lx, &m->flag, "a control flag")) != SAMSA_ERR_NONE) {
        return err;
    }
    if (!jaas_flag_valid(m->flag)) {
        snprintf(lx->why, lx->why_size, "invalid control flag '%s' (one of "
                 "required, requisite, sufficient, optional)", m->flag);
        return SAMSA_ERR__CONFIG;
    }
    for (;;) {
        jaas_skip_space(lx);
        if (lx->p >= lx->end) {
            return jaas_bad(lx, "the login module's options must end with "
                                "';'");
        }
        if (*lx->p == ';') {
            lx->p++;
            return SAMSA_ERR_NONE;
        }
        m->opts = samsa_realloc(m->opts, (m->nopts + 1) * sizeof(*m->opts));
        o = &m->opts[m->nopts++];
        memset(o, 0, sizeof(*o));
        if ((err = jaas_token(lx, &o->name, "an option name"))
            != SAMSA_ERR_NONE) {
            return err;
        }
        jaas_skip_space(lx);
        if (lx->p >= lx->end || *lx->p != '=') {
            snprintf(lx->why, lx->why_size, "'=' expected after option "
                     "'%s'", o->name);
            return SAMSA_ERR__CONFIG;
        }
        lx->p++;
        if ((err = jaas_token(lx, &o->value, "an option value"))
            != SAMSA_ERR_NONE) {
            return err;
        }
    }
}

samsa_err_t
samsa_jaas_parse(const char *text, size_t len, samsa_jaas_t *out, char *why,
                 size_t why_size)
{
    jaas_lex_t            lx = { text, text + len, why, why_size };
    samsa_jaas_module_t  *m;
    samsa_err_t           err;

    memset(out, 0, sizeof(*out));
    for (;;) {
        jaas_skip_space(&lx);
        if (lx.p >= lx.end) {
            break;
        }
        out->modules = samsa_realloc(out->modules, (out->nmodules + 1)
                                                       * sizeof(*out->modules));
        m = &out->modules[out->nmodules++];
        memset(m, 0, sizeof(*m));
        if ((err = jaas_module(&lx, m)) != SAMSA_ERR_NONE) {
            return err;
        }
    }
    if (out->nmodules == 0) {
        return jaas_bad(&lx, "no login module");
    }
    return SAMSA_ERR_NONE;
}

const char *
samsa_jaas_opt(const samsa_jaas_module_t *m, const char *name)
{
    size_t  i;

    for (i = 0; i < m->nopts; i++) {
        if (strcmp(m->opts[i].name, name) == 0) {
            return m->opts[i].value;
        }
    }
    return NULL;
}

void
samsa_jaas_fini(samsa_jaas_t *jaas)
{
    size_t  i, j;

    for (i = 0; i < jaas->nmodules; i++) {
        for (j = 0; j < jaas->modules[i].nopts; j++) {
            samsa_free(jaas->modules[i].opts[j].name);
            samsa_free(jaas->modules[i].opts[j].value);
        }
        samsa_free(jaas->modules[i].opts);
        samsa_free(jaas->modules[i].class_name);
        samsa_free(jaas->modules[i].flag);
    }
    samsa_free(jaas->modules);
    memset(jaas, 0, sizeof(*jaas));
}
