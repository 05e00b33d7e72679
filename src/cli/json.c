/*
 * cli/json.c - the streaming JSON writer (see json.h).
 * Threads: main.
 */
#include "cli/json.h"

#include <inttypes.h>

void
samsa_json_init(samsa_json_t *j, FILE *out)
{
    j->out = out;
    j->depth = 0;
    j->first[0] = true;
    j->after_key = false;
}

/* Before any value or key: a comma unless first at this level. */
static void
json_sep(samsa_json_t *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (!j->first[j->depth]) {
        fputs(", ", j->out);
    }
    j->first[j->depth] = false;
}

static void
json_open(samsa_json_t *j, char c)
{
    json_sep(j);
    fputc(c, j->out);
    if (j->depth + 1 < SAMSA_JSON_MAX_DEPTH) {
        j->depth++;
    }
    j->first[j->depth] = true;
}

static void
json_close(samsa_json_t *j, char c)
{
    fputc(c, j->out);
    if (j->depth > 0) {
        j->depth--;
    }
}

void
samsa_json_obj(samsa_json_t *j)
{
    json_open(j, '{');
}

void
samsa_json_obj_end(samsa_json_t *j)
{
    json_close(j, '}');
}

void
samsa_json_arr(samsa_json_t *j)
{
    json_open(j, '[');
}

void
samsa_json_arr_end(samsa_json_t *j)
{
    json_close(j, ']');
}

void
samsa_json_quote(FILE *out, const char *s)
{
    const unsigned char  *p = (const unsigned char *) s;

    fputc('"', out);
    for (; *p != '\0'; p++) {
        switch (*p) {
        case '"':  fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20 || *p == 0x7f) {
                fprintf(out, "\\u%04x", *p);
            } else {
                fputc(*p, out);
            }
        }
    }
    fputc('"', out);
}

void
samsa_json_key(samsa_json_t *j, const char *key)
{
    json_sep(j);
    samsa_json_quote(j->out, key);
    fputs(": ", j->out);
    j->after_key = true;
}

void
samsa_json_str(samsa_json_t *j, const char *s)
{
    json_sep(j);
    if (s == NULL) {
        fputs("null", j->out);
    } else {
        samsa_json_quote(j->out, s);
    }
}

void
samsa_json_int(samsa_json_t *j, int64_t v)
{
    json_sep(j);
    fprintf(j->out, "%" PRId64, v);
}

void
samsa_json_bool(samsa_json_t *j, bool v)
{
    json_sep(j);
    fputs(v ? "true" : "false", j->out);
}

void
samsa_json_kv_str(samsa_json_t *j, const char *key, const char *s)
{
    samsa_json_key(j, key);
    samsa_json_str(j, s);
}

void
samsa_json_kv_int(samsa_json_t *j, const char *key, int64_t v)
{
    samsa_json_key(j, key);
    samsa_json_int(j, v);
}

void
samsa_json_kv_bool(samsa_json_t *j, const char *key, bool v)
{
    samsa_json_key(j, key);
    samsa_json_bool(j, v);
}

void
samsa_json_null(samsa_json_t *j)
{
    json_sep(j);
    fputs("null", j->out);
}

void
samsa_json_end(samsa_json_t *j)
{
    fputc('\n', j->out);
}
