/*
 * cli/json.h - a small streaming JSON writer for the samsa tool's --json
 * output: objects, arrays, keys and scalars with commas placed for the
 * caller; strings escaped per RFC 8259 (control characters as \uXXXX,
 * bytes passed through as UTF-8).  One document per writer, ended with a
 * newline by samsa_json_end().
 * Threads: a writer belongs to one thread (main).
 */
#ifndef SAMSA_CLI_JSON_H
#define SAMSA_CLI_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SAMSA_JSON_MAX_DEPTH 32

typedef struct samsa_json {
    FILE  *out;
    int    depth;
    bool   first[SAMSA_JSON_MAX_DEPTH];  /* nothing written at this level */
    bool   after_key;                    /* a value completes a key */
} samsa_json_t;

void samsa_json_init(samsa_json_t *j, FILE *out);
void samsa_json_obj(samsa_json_t *j);          /* { */
void samsa_json_obj_end(samsa_json_t *j);      /* } */
void samsa_json_arr(samsa_json_t *j);          /* [ */
void samsa_json_arr_end(samsa_json_t *j);      /* ] */
void samsa_json_key(samsa_json_t *j, const char *key);
void samsa_json_str(samsa_json_t *j, const char *s);   /* NULL: null */
void samsa_json_int(samsa_json_t *j, int64_t v);
void samsa_json_bool(samsa_json_t *j, bool v);
void samsa_json_null(samsa_json_t *j);
/* A member of the object being written: key, then the value. */
void samsa_json_kv_str(samsa_json_t *j, const char *key, const char *s);
void samsa_json_kv_int(samsa_json_t *j, const char *key, int64_t v);
void samsa_json_kv_bool(samsa_json_t *j, const char *key, bool v);
/* Finish the document: a newline. */
void samsa_json_end(samsa_json_t *j);

/* Write s as a quoted JSON string to out. */
void samsa_json_quote(FILE *out, const char *s);

#endif /* SAMSA_CLI_JSON_H */
