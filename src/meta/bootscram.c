/*
 * meta/bootscram.c - see bootscram.h.
 */
#include "meta/bootscram.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/fsutil.h"
#include "util/props.h"

#define BOOTSCRAM_SALT_LEN  32          /* a random salt's bytes */
#define BOOTSCRAM_KEY       "credential."

/* The components of one argument's [...] (Kafka splits on ',' and each on
 * its first '=', dropping one pair of quotes around a value). */
typedef struct bootscram_parts {
    const char  *name, *password, *salt, *iterations, *salted;
    char         unknown[256];
} bootscram_parts_t;

static samsa_err_t
bootscram_component(char *comp, bootscram_parts_t *p, char *errstr,
                    size_t errstr_size)
{
    char    *eq = strchr(comp, '=');
    char    *v;
    size_t   vl, o;

    if (eq == NULL) {
        snprintf(errstr, errstr_size, "No equals sign found in SCRAM "
                 "component: %s", comp);
        return SAMSA_ERR__CONFIG;
    }
    *eq = '\0';
    v = eq + 1;
    vl = strlen(v);
    if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
        v[vl - 1] = '\0';
        v++;
    }
    if (strcmp(comp, "name") == 0) {
        p->name = v;
    } else if (strcmp(comp, "password") == 0) {
        p->password = v;
    } else if (strcmp(comp, "salt") == 0) {
        p->salt = v;
    } else if (strcmp(comp, "iterations") == 0) {
        p->iterations = v;
    } else if (strcmp(comp, "saltedpassword") == 0) {
        p->salted = v;
    } else {
        o = strlen(p->unknown);
        snprintf(p->unknown + o, sizeof(p->unknown) - o, "%s%s",
                 o > 0 ? ", " : "", comp);
    }
    return SAMSA_ERR_NONE;
}

/* base64 text of a salt or salted password into out (at most size). */
static samsa_err_t
bootscram_b64(const char *what, const char *text, uint8_t *out, size_t size,
              size_t *len, char *errstr, size_t errstr_size)
{
    if (samsa_scram_b64_decode(samsa_slice_cstr(text), out, size, len)
            != SAMSA_ERR_NONE || *len == 0) {
        snprintf(errstr, errstr_size, "Failed to decode given %s: %s", what,
                 text);
        return SAMSA_ERR__CONFIG;
    }
    return SAMSA_ERR_NONE;
}

/* The credential from parsed parts (ScramParser.PerMechanismData). */
static samsa_err_t
bootscram_cred(samsa_scram_mech_t mech, const bootscram_parts_t *p,
               samsa_bootscram_t *out, char *errstr, size_t errstr_size)
{
    uint8_t      salt[SAMSA_SCRAM_MAX_SALT], sp[SAMSA_SCRAM_MAX_HASH];
    size_t       salt_len = BOOTSCRAM_SALT_LEN, sp_len = 0;
    long         it = SAMSA_SCRAM_MIN_ITERATIONS;
    char        *end = NULL;
    samsa_err_t  err;

    if (p->name == NULL) {
        snprintf(errstr, errstr_size, "You must supply 'name' to add-scram");
        return SAMSA_ERR__CONFIG;
    }
    if (p->salt != NULL) {
        err = bootscram_b64("salt", p->salt, salt, sizeof(salt), &salt_len,
                            errstr, errstr_size);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
    } else if (samsa_scram_random(salt, salt_len) != SAMSA_ERR_NONE) {
        snprintf(errstr, errstr_size, "cannot make a random salt");
        return SAMSA_ERR__CONFIG;
    }
    if (p->iterations != NULL) {
        errno = 0;
        it = strtol(p->iterations, &end, 10);
        if (end == p->iterations || *end != '\0' || errno != 0
            || it < INT32_MIN || it > INT32_MAX) {
            snprintf(errstr, errstr_size, "Failed to parse iterations count: "
                     "%s", p->iterations);
            return SAMSA_ERR__CONFIG;
        }
    }
    if (p->password == NULL) {
        if (p->salted == NULL) {
            snprintf(errstr, errstr_size, "You must supply one of 'password' "
                     "or 'saltedpassword' to add-scram");
            return SAMSA_ERR__CONFIG;
        }
        if (p->salt == NULL) {
            snprintf(errstr, errstr_size, "You must supply 'salt' with "
                     "'saltedpassword' to add-scram");
            return SAMSA_ERR__CONFIG;
        }
        err = bootscram_b64("saltedPassword", p->salted, sp, sizeof(sp),
                            &sp_len, errstr, errstr_size);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        if (sp_len != samsa_scram_hash_len(mech)) {
            snprintf(errstr, errstr_size, "The 'saltedpassword' of %s must "
                     "be %zu bytes, not %zu", samsa_scram_mech_name(mech),
                     samsa_scram_hash_len(mech), sp_len);
            return SAMSA_ERR__CONFIG;
        }
    }
    if (p->unknown[0] != '\0') {
        snprintf(errstr, errstr_size, "Unknown SCRAM configurations: %s",
                 p->unknown);
        return SAMSA_ERR__CONFIG;
    }
    if (it < SAMSA_SCRAM_MIN_ITERATIONS || it > SAMSA_SCRAM_MAX_ITERATIONS) {
        snprintf(errstr, errstr_size, "The 'iterations' value must be %s %d "
                 "for add-scram using %s",
                 it < SAMSA_SCRAM_MIN_ITERATIONS ? ">=" : "<=",
                 it < SAMSA_SCRAM_MIN_ITERATIONS ? SAMSA_SCRAM_MIN_ITERATIONS
                                                 : SAMSA_SCRAM_MAX_ITERATIONS,
                 samsa_scram_mech_name(mech));
        return SAMSA_ERR__CONFIG;
    }
    err = p->password != NULL
              ? samsa_scram_cred_from_password(mech, p->password, salt,
                                               salt_len, (int32_t) it,
                                               &out->cred)
              : samsa_scram_cred_from_salted(mech, sp, salt, salt_len,
                                             (int32_t) it, &out->cred);
    if (err != SAMSA_ERR_NONE) {
        snprintf(errstr, errstr_size, "cannot compute the SCRAM credential "
                 "of %s (salt of %zu bytes)", p->name, salt_len);
        return SAMSA_ERR__CONFIG;
    }
    out->name = samsa_strdup(p->name);
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_bootscram_parse(const char *arg, samsa_bootscram_t *out, char *errstr,
                      size_t errstr_size)
{
    bootscram_parts_t   parts;
    samsa_scram_mech_t  mech;
    samsa_err_t         err = SAMSA_ERR_NONE;
    char               *s, *t, *eq, *cfg, *comp, *save = NULL;
    size_t              n;

    memset(out, 0, sizeof(*out));
    memset(&parts, 0, sizeof(parts));
    s = samsa_strdup(arg);
    for (t = s; *t == ' ' || *t == '\t'; t++) {
    }
    n = strlen(t);
    while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t')) {
        t[--n] = '\0';
    }
    if ((eq = strchr(t, '=')) == NULL) {
        snprintf(errstr, errstr_size, "Failed to find equals sign in SCRAM "
                 "argument '%s'", t);
        samsa_free(s);
        return SAMSA_ERR__CONFIG;
    }
    *eq = '\0';
    cfg = eq + 1;
    if (!samsa_scram_mech_from_name(t, &mech)) {
        snprintf(errstr, errstr_size, "The add-scram mechanism %s is not "
                 "supported.", t);
        err = SAMSA_ERR__CONFIG;
    } else if (cfg[0] != '[') {
        snprintf(errstr, errstr_size, "Expected configuration string to "
                 "start with [");
        err = SAMSA_ERR__CONFIG;
    } else if ((n = strlen(cfg)) < 2 || cfg[n - 1] != ']') {
        snprintf(errstr, errstr_size, "Expected configuration string to end "
                 "with ]");
        err = SAMSA_ERR__CONFIG;
    }
    if (err == SAMSA_ERR_NONE) {
        cfg[n - 1] = '\0';
        for (comp = strtok_r(cfg + 1, ",", &save);
             comp != NULL && err == SAMSA_ERR_NONE;
             comp = strtok_r(NULL, ",", &save)) {
            err = bootscram_component(comp, &parts, errstr, errstr_size);
        }
    }
    if (err == SAMSA_ERR_NONE) {
        err = bootscram_cred(mech, &parts, out, errstr, errstr_size);
    }
    samsa_free(s);
    return err;
}

samsa_err_t
samsa_bootscram_write(const char *mdir, const samsa_bootscram_t *creds,
                      size_t n, char *errstr, size_t errstr_size)
{
    samsa_buf_t  text = SAMSA_BUF_INIT;
    char         file[4096], line[1024], salt[200], stored[100], server[100];
    size_t       i, hl;
    int          rc;

    snprintf(file, sizeof(file), "%s/" SAMSA_BOOTSCRAM_FILE, mdir);
    snprintf(line, sizeof(line), "# SCRAM credentials for the metadata log's "
             "bootstrap, written by samsa-server format --add-scram\n# "
             BOOTSCRAM_KEY "N=MECHANISM NAME ITERATIONS SALT STOREDKEY "
             "SERVERKEY (base64)\n");
    (void) samsa_buf_append(&text, line, strlen(line));
    for (i = 0; i < n; i++) {
        hl = samsa_scram_hash_len(creds[i].cred.mech);
        if (samsa_scram_b64_encode(creds[i].cred.salt, creds[i].cred.salt_len,
                                   salt, sizeof(salt)) != SAMSA_ERR_NONE
            || samsa_scram_b64_encode(creds[i].cred.stored_key, hl, stored,
                                      sizeof(stored)) != SAMSA_ERR_NONE
            || samsa_scram_b64_encode(creds[i].cred.server_key, hl, server,
                                      sizeof(server)) != SAMSA_ERR_NONE
            || (size_t) snprintf(line, sizeof(line),
                                 BOOTSCRAM_KEY "%zu=%s %s %d %s %s %s\n", i,
                                 samsa_scram_mech_name(creds[i].cred.mech),
                                 creds[i].name, (int) creds[i].cred.iterations,
                                 salt, stored, server) >= sizeof(line)
            || strpbrk(creds[i].name, " \t\r\n") != NULL) {
            snprintf(errstr, errstr_size, "cannot write '%s': the SCRAM user "
                     "name '%s' is too long or holds white space", file,
                     creds[i].name);
            samsa_buf_fini(&text);
            return SAMSA_ERR__CONFIG;
        }
        (void) samsa_buf_append(&text, line, strlen(line));
    }
    rc = samsa_write_file_atomic_msg(file, text.data, text.len, errstr,
                                     errstr_size);
    samsa_buf_fini(&text);
    return rc != 0 ? SAMSA_ERR__IO : SAMSA_ERR_NONE;
}

/* One "MECHANISM NAME ITERATIONS SALT STOREDKEY SERVERKEY" entry. */
static bool
bootscram_entry(const char *text, samsa_bootscram_t *out)
{
    char    mech[32], name[SAMSA_SCRAM_MAX_USER], salt[200], stored[100],
            server[100];
    int     it;
    size_t  len, hl;

    if (sscanf(text, "%31s %255s %d %199s %99s %99s", mech, name, &it, salt,
               stored, server) != 6
        || !samsa_scram_mech_from_name(mech, &out->cred.mech)
        || it < SAMSA_SCRAM_MIN_ITERATIONS || it > SAMSA_SCRAM_MAX_ITERATIONS) {
        return false;
    }
    hl = samsa_scram_hash_len(out->cred.mech);
    out->cred.iterations = it;
    if (samsa_scram_b64_decode(samsa_slice_cstr(salt), out->cred.salt,
                               sizeof(out->cred.salt), &out->cred.salt_len)
            != SAMSA_ERR_NONE || out->cred.salt_len == 0
        || samsa_scram_b64_decode(samsa_slice_cstr(stored),
                                  out->cred.stored_key,
                                  sizeof(out->cred.stored_key), &len)
               != SAMSA_ERR_NONE || len != hl
        || samsa_scram_b64_decode(samsa_slice_cstr(server),
                                  out->cred.server_key,
                                  sizeof(out->cred.server_key), &len)
               != SAMSA_ERR_NONE || len != hl) {
        return false;
    }
    out->name = samsa_strdup(name);
    return true;
}

samsa_err_t
samsa_bootscram_read(const char *mdir, samsa_bootscram_t **creds, size_t *n,
                     char *errstr, size_t errstr_size)
{
    char            file[4096];
    samsa_props_t  *props;
    samsa_err_t     err;
    size_t          i, count;
    FILE           *f;

    *creds = NULL;
    *n = 0;
    snprintf(file, sizeof(file), "%s/" SAMSA_BOOTSCRAM_FILE, mdir);
    if ((f = fopen(file, "re")) == NULL) {
        if (errno == ENOENT) {
            return SAMSA_ERR__NOENT;
        }
        snprintf(errstr, errstr_size, "cannot read '%s': %s", file,
                 strerror(errno));
        return SAMSA_ERR__IO;
    }
    fclose(f);
    props = samsa_props_new();
    err = samsa_props_load_file(props, file, errstr, errstr_size);
    count = err == SAMSA_ERR_NONE ? samsa_props_count(props) : 0;
    if (count > 0) {
        *creds = samsa_calloc(count, sizeof(**creds));
    }
    for (i = 0; i < count && err == SAMSA_ERR_NONE; i++) {
        if (strncmp(samsa_props_key(props, i), BOOTSCRAM_KEY,
                    strlen(BOOTSCRAM_KEY)) != 0
            || !bootscram_entry(samsa_props_value(props, i),
                                &(*creds)[*n])) {
            snprintf(errstr, errstr_size, "%s: bad entry '%s' (expected "
                     BOOTSCRAM_KEY "N=MECHANISM NAME ITERATIONS SALT "
                     "STOREDKEY SERVERKEY)", file, samsa_props_key(props, i));
            err = SAMSA_ERR__CONFIG;
            break;
        }
        (*n)++;
    }
    samsa_props_free(props);
    if (err != SAMSA_ERR_NONE) {
        samsa_bootscram_free(*creds, *n);
        *creds = NULL;
        *n = 0;
    }
    return err;
}

void
samsa_bootscram_free(samsa_bootscram_t *creds, size_t n)
{
    size_t  i;

    for (i = 0; creds != NULL && i < n; i++) {
        samsa_free(creds[i].name);
    }
    samsa_free(creds);
}
