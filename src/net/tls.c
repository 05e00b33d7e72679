/*
 * net/tls.c - OpenSSL 3 contexts from Kafka's ssl.* keys, and non-blocking
 * TLS on a connection (see tls.h).
 * Threads: contexts on the main thread, then read-only; a connection's
 * state on its network thread.  OpenSSL's error queue is per thread: it is
 * cleared before every call whose errors we read.
 */
#include "net/tls.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "net/selector.h"
#include "util/alloc.h"
#include "util/diag.h"

#define TLS_FILE_CHUNK  65536           /* file bytes encrypted per pass */

struct samsa_tls_ctx {
    _Atomic int  refs;
    SSL_CTX  *ssl_ctx;
    bool      is_server;
    bool      verify_host;              /* client: endpoint identification */
};

struct samsa_tls {
    SSL        *ssl;
    bool        handshaking;
    bool        logged;                 /* an error was logged already */
    bool        failed;                 /* closed or broken: no
                                           close_notify */
    uint32_t    rd_want;                /* SAMSA_SELECTOR_F_*: last read */
    uint32_t    wr_want;                /* last write */
    char        peer[192];
    /* a file region's bytes on their way (samsa_tls_write_file) */
    uint8_t    *chunk;                  /* TLS_FILE_CHUNK, allocated on the
                                           first file write */
    int64_t     chunk_base;             /* file offset of chunk[0] */
    size_t      chunk_len;
    size_t      chunk_off;              /* bytes of it written */
};

/* ---- contexts ---------------------------------------------------------- */

/* OpenSSL's queued errors as one line (the queue is emptied). */
static void
tls_errors(char *out, size_t size)
{
    unsigned long  e;
    size_t         used = 0;
    char           one[256];

    out[0] = '\0';
    while ((e = ERR_get_error()) != 0) {
        ERR_error_string_n(e, one, sizeof(one));
        if (used + 3 < size) {
            used += (size_t) snprintf(out + used, size - used, "%s%s",
                                      used > 0 ? "; " : "", one);
        }
    }
    if (out[0] == '\0') {
        snprintf(out, size, "no OpenSSL reason");
    }
}

static bool
tls_set(const samsa_tls_opt_t *o)
{
    return o->val != NULL && o->val[0] != '\0';
}

static samsa_err_t
tls_bad(char *errstr, size_t errstr_size, const char *what, const char *fmt,
        ...) __attribute__((format(printf, 4, 5)));

static samsa_err_t
tls_bad(char *errstr, size_t errstr_size, const char *what, const char *fmt,
        ...)
{
    va_list  ap;
    int      n;

    n = snprintf(errstr, errstr_size, "%s: ", what);
    if (n < 0 || (size_t) n >= errstr_size) {
        return SAMSA_ERR__CONFIG;
    }
    va_start(ap, fmt);
    vsnprintf(errstr + n, errstr_size - (size_t) n, fmt, ap);
    va_end(ap);
    return SAMSA_ERR__CONFIG;
}

/* Never prompt on a terminal: the password is the configured one or none. */
static int
tls_pem_password(char *buf, int size, int rwflag, void *u)
{
    const char  *pw = u;
    size_t       len;

    (void) rwflag;
    if (pw == NULL) {
        return -1;
    }
    len = strlen(pw);
    if (len > (size_t) size) {
        return -1;
    }
    memcpy(buf, pw, len);
    return (int) len;
}

/* A PEM source: a file (location) or the value's text.  Returns a memory
 * BIO over its bytes (kept in *text for a file), or an error naming the
 * key and the file. */
static samsa_err_t
tls_pem_open(const samsa_tls_opt_t *o, bool is_file, char **text, BIO **bio,
             char *errstr, size_t errstr_size, const char *what)
{
    FILE    *f;
    long     len;

    *text = NULL;
    *bio = NULL;
    if (!is_file) {
        *bio = BIO_new_mem_buf(o->val, -1);
        return SAMSA_ERR_NONE;
    }
    f = fopen(o->val, "rb");
    if (f == NULL) {
        return tls_bad(errstr, errstr_size, what, "cannot read %s '%s': %s",
                       o->key, o->val, strerror(errno));
    }
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0
        || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return tls_bad(errstr, errstr_size, what, "cannot read %s '%s': %s",
                       o->key, o->val, strerror(errno));
    }
    *text = samsa_malloc((size_t) len + 1);
    if (fread(*text, 1, (size_t) len, f) != (size_t) len) {
        fclose(f);
        samsa_free(*text);
        *text = NULL;
        return tls_bad(errstr, errstr_size, what, "cannot read %s '%s'",
                       o->key, o->val);
    }
    fclose(f);
    (*text)[len] = '\0';
    *bio = BIO_new_mem_buf(*text, (int) len);
    return SAMSA_ERR_NONE;
}

/* How a key or file is named in errors: "ssl.keystore.location
 * '/x/server.pem'" or "ssl.keystore.key". */
static void
tls_src_name(const samsa_tls_opt_t *o, bool is_file, char *out, size_t size)
{
    if (is_file) {
        snprintf(out, size, "%s '%s'", o->key, o->val);
    } else {
        snprintf(out, size, "%s", o->key);
    }
}

/* The certificate chain (leaf first) of src into the context. */
static samsa_err_t
tls_load_chain(SSL_CTX *sctx, const samsa_tls_opt_t *o, bool is_file,
               char *errstr, size_t errstr_size, const char *what)
{
    samsa_err_t  err;
    X509        *x;
    BIO         *bio;
    char        *text, name[600], why[512];
    int          n = 0;

    err = tls_pem_open(o, is_file, &text, &bio, errstr, errstr_size, what);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    tls_src_name(o, is_file, name, sizeof(name));
    ERR_clear_error();
    while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
        if ((n == 0 ? SSL_CTX_use_certificate(sctx, x)
                    : SSL_CTX_add1_chain_cert(sctx, x)) != 1) {
            X509_free(x);
            tls_errors(why, sizeof(why));
            err = tls_bad(errstr, errstr_size, what, "%s: certificate %d "
                          "refused: %s", name, n + 1, why);
            goto out;
        }
        X509_free(x);
        n++;
    }
    ERR_clear_error();                  /* the end of the PEM blocks */
    if (n == 0) {
        err = tls_bad(errstr, errstr_size, what, "%s holds no PEM "
                      "certificate", name);
    }
out:
    BIO_free(bio);
    samsa_free(text);
    return err;
}

/* The private key of src (decrypted with password), checked against the
 * certificate already loaded. */
static samsa_err_t
tls_load_key(SSL_CTX *sctx, const samsa_tls_opt_t *o, bool is_file,
             const samsa_tls_opt_t *password, char *errstr,
             size_t errstr_size, const char *what)
{
    samsa_err_t  err;
    EVP_PKEY    *pkey;
    BIO         *bio;
    char        *text, name[600], why[512];
    bool         encrypted;

    err = tls_pem_open(o, is_file, &text, &bio, errstr, errstr_size, what);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    tls_src_name(o, is_file, name, sizeof(name));
    encrypted = strstr(text != NULL ? text : o->val, "ENCRYPTED") != NULL;
    ERR_clear_error();
    pkey = PEM_read_bio_PrivateKey(bio, NULL, tls_pem_password,
                                   (void *) password->val);
    if (pkey == NULL) {
        tls_errors(why, sizeof(why));
        if (encrypted && password->val == NULL) {
            err = tls_bad(errstr, errstr_size, what, "%s: the private key "
                          "is encrypted and %s is not set", name,
                          password->key);
        } else if (encrypted) {
            err = tls_bad(errstr, errstr_size, what, "%s: cannot decrypt "
                          "the private key with %s (wrong password?): %s",
                          name, password->key, why);
        } else {
            err = tls_bad(errstr, errstr_size, what, "%s holds no usable "
                          "PEM private key: %s", name, why);
        }
        goto out;
    }
    if (SSL_CTX_use_PrivateKey(sctx, pkey) != 1
        || SSL_CTX_check_private_key(sctx) != 1) {
        tls_errors(why, sizeof(why));
        err = tls_bad(errstr, errstr_size, what, "the private key in %s "
                      "does not match its certificate: %s", name, why);
    }
    EVP_PKEY_free(pkey);
out:
    BIO_free(bio);
    samsa_free(text);
    return err;
}

static bool
tls_is_pem(const samsa_tls_opt_t *type)
{
    return type->val == NULL || strcasecmp(type->val, "PEM") == 0;
}

static samsa_err_t
tls_keystore(SSL_CTX *sctx, const samsa_tls_conf_t *c, bool is_server,
             char *errstr, size_t errstr_size, const char *what)
{
    bool         file = tls_set(&c->keystore_location);
    bool         text = tls_set(&c->keystore_certificate_chain)
                        || tls_set(&c->keystore_key);
    samsa_err_t  err;

    if (!file && !text) {
        if (!is_server) {
            return SAMSA_ERR_NONE;
        }
        return tls_bad(errstr, errstr_size, what, "needs a key store: "
                       "%s (a PEM file with the private key and the "
                       "certificate chain), or %s and %s",
                       c->keystore_location.key,
                       c->keystore_certificate_chain.key,
                       c->keystore_key.key);
    }
    if (!tls_is_pem(&c->keystore_type)) {
        return tls_bad(errstr, errstr_size, what, "%s=%s is not supported: "
                       "only PEM (set %s=PEM)", c->keystore_type.key,
                       c->keystore_type.val, c->keystore_type.key);
    }
    if (tls_set(&c->keystore_password)) {
        return tls_bad(errstr, errstr_size, what, "%s cannot be used with "
                       "PEM key stores: the private key's password is %s",
                       c->keystore_password.key, c->key_password.key);
    }
    if (file && text) {
        return tls_bad(errstr, errstr_size, what, "set either %s or %s and "
                       "%s, not both", c->keystore_location.key,
                       c->keystore_certificate_chain.key,
                       c->keystore_key.key);
    }
    if (file) {
        err = tls_load_chain(sctx, &c->keystore_location, true, errstr,
                             errstr_size, what);
        return err != SAMSA_ERR_NONE
                   ? err
                   : tls_load_key(sctx, &c->keystore_location, true,
                                  &c->key_password, errstr, errstr_size,
                                  what);
    }
    if (!tls_set(&c->keystore_certificate_chain)
        || !tls_set(&c->keystore_key)) {
        return tls_bad(errstr, errstr_size, what, "%s and %s go together",
                       c->keystore_certificate_chain.key,
                       c->keystore_key.key);
    }
    err = tls_load_chain(sctx, &c->keystore_certificate_chain, false, errstr,
                         errstr_size, what);
    return err != SAMSA_ERR_NONE
               ? err
               : tls_load_key(sctx, &c->keystore_key, false,
                              &c->key_password, errstr, errstr_size, what);
}

/* Every certificate of the PEM source into the context's trust store. */
static samsa_err_t
tls_load_trust(SSL_CTX *sctx, const samsa_tls_opt_t *o, bool is_file,
               char *errstr, size_t errstr_size, const char *what)
{
    X509_STORE  *store = SSL_CTX_get_cert_store(sctx);
    samsa_err_t  err;
    X509        *x;
    BIO         *bio;
    char        *text, name[600];
    int          n = 0;

    err = tls_pem_open(o, is_file, &text, &bio, errstr, errstr_size, what);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    tls_src_name(o, is_file, name, sizeof(name));
    ERR_clear_error();
    while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
        X509_STORE_add_cert(store, x);  /* a duplicate is no error */
        X509_free(x);
        n++;
    }
    ERR_clear_error();
    if (n == 0) {
        err = tls_bad(errstr, errstr_size, what, "%s holds no PEM "
                      "certificate", name);
    }
    BIO_free(bio);
    samsa_free(text);
    return err;
}

static samsa_err_t
tls_truststore(SSL_CTX *sctx, const samsa_tls_conf_t *c, char *errstr,
               size_t errstr_size, const char *what)
{
    bool  file = tls_set(&c->truststore_location);
    bool  text = tls_set(&c->truststore_certificates);

    if (!file && !text) {
        SSL_CTX_set_default_verify_paths(sctx);     /* the system's CAs */
        return SAMSA_ERR_NONE;
    }
    if (!tls_is_pem(&c->truststore_type)) {
        return tls_bad(errstr, errstr_size, what, "%s=%s is not supported: "
                       "only PEM (set %s=PEM)", c->truststore_type.key,
                       c->truststore_type.val, c->truststore_type.key);
    }
    if (tls_set(&c->truststore_password)) {
        return tls_bad(errstr, errstr_size, what, "%s cannot be used with "
                       "PEM trust stores", c->truststore_password.key);
    }
    if (file && text) {
        return tls_bad(errstr, errstr_size, what, "set either %s or %s, not "
                       "both", c->truststore_location.key,
                       c->truststore_certificates.key);
    }
    if (file) {
        return tls_load_trust(sctx, &c->truststore_location, true, errstr,
                              errstr_size, what);
    }
    return tls_load_trust(sctx, &c->truststore_certificates, false, errstr,
                          errstr_size, what);
}

/* One protocol name: its OpenSSL version, or 0. */
static int
tls_version_of(const char *name)
{
    if (strcmp(name, "TLSv1.2") == 0) {
        return TLS1_2_VERSION;
    }
    if (strcmp(name, "TLSv1.3") == 0) {
        return TLS1_3_VERSION;
    }
    return 0;
}

/* Next comma-separated item of *s into out (trimmed); false at the end. */
static bool
tls_next_item(const char **s, char *out, size_t size)
{
    const char  *p = *s, *end;
    size_t       len;

    while (*p == ' ' || *p == '\t' || *p == ',') {
        p++;
    }
    if (*p == '\0') {
        return false;
    }
    end = p;
    while (*end != '\0' && *end != ',') {
        end++;
    }
    *s = end;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t')) {
        end--;
    }
    len = (size_t) (end - p) < size - 1 ? (size_t) (end - p) : size - 1;
    memcpy(out, p, len);
    out[len] = '\0';
    return true;
}

/* ssl.enabled.protocols (the range from lowest to highest; only TLSv1.2
 * and TLSv1.3 exist for us) capped by ssl.protocol (TLSv1.2 caps at 1.2,
 * TLSv1.3 and TLS do not cap). */
static samsa_err_t
tls_protocols(SSL_CTX *sctx, const samsa_tls_conf_t *c, char *errstr,
              size_t errstr_size, const char *what)
{
    const char  *s = c->enabled_protocols.val != NULL
                         ? c->enabled_protocols.val
                         : "TLSv1.2,TLSv1.3";
    int          lo = 0, hi = 0, v, cap = TLS1_3_VERSION;
    char         item[64];

    while (tls_next_item(&s, item, sizeof(item))) {
        v = tls_version_of(item);
        if (v == 0) {
            return tls_bad(errstr, errstr_size, what, "%s: '%s' is not "
                           "supported (TLSv1.2, TLSv1.3)",
                           c->enabled_protocols.key, item);
        }
        lo = lo == 0 || v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    if (lo == 0) {
        return tls_bad(errstr, errstr_size, what, "%s must name TLSv1.2 or "
                       "TLSv1.3", c->enabled_protocols.key);
    }
    if (c->protocol.val != NULL && strcmp(c->protocol.val, "TLS") != 0) {
        cap = tls_version_of(c->protocol.val);
        if (cap == 0) {
            return tls_bad(errstr, errstr_size, what, "%s: '%s' is not "
                           "supported (TLSv1.3, TLSv1.2, TLS)",
                           c->protocol.key, c->protocol.val);
        }
    }
    hi = hi < cap ? hi : cap;
    if (hi < lo) {
        return tls_bad(errstr, errstr_size, what, "%s=%s leaves none of %s",
                       c->protocol.key, c->protocol.val,
                       c->enabled_protocols.key);
    }
    SSL_CTX_set_min_proto_version(sctx, lo);
    SSL_CTX_set_max_proto_version(sctx, hi);
    return SAMSA_ERR_NONE;
}

/* ssl.cipher.suites: TLS 1.3 suites (TLS_AES_*, TLS_CHACHA20_*) go to
 * SSL_CTX_set_ciphersuites, the others (IANA names as Kafka takes them,
 * converted, or OpenSSL's own) to SSL_CTX_set_cipher_list.  A group left
 * empty keeps OpenSSL's defaults. */
static samsa_err_t
tls_ciphers(SSL_CTX *sctx, const samsa_tls_conf_t *c, char *errstr,
            size_t errstr_size, const char *what)
{
    const char  *s = c->cipher_suites.val, *name;
    char         item[128], v13[1024] = "", v12[2048] = "", why[512];
    char        *dst;
    size_t       size;

    if (!tls_set(&c->cipher_suites)) {
        return SAMSA_ERR_NONE;
    }
    while (tls_next_item(&s, item, sizeof(item))) {
        if (strncmp(item, "TLS_AES_", 8) == 0
            || strncmp(item, "TLS_CHACHA20_", 13) == 0) {
            dst = v13;
            size = sizeof(v13);
            name = item;
        } else {
            dst = v12;
            size = sizeof(v12);
            name = OPENSSL_cipher_name(item);
            name = strcmp(name, "(NONE)") == 0 ? item : name;
        }
        if (strlen(dst) + strlen(name) + 2 > size) {
            return tls_bad(errstr, errstr_size, what, "%s is too long",
                           c->cipher_suites.key);
        }
        if (dst[0] != '\0') {
            strcat(dst, ":");
        }
        strcat(dst, name);
    }
    ERR_clear_error();
    if ((v13[0] != '\0' && SSL_CTX_set_ciphersuites(sctx, v13) != 1)
        || (v12[0] != '\0' && SSL_CTX_set_cipher_list(sctx, v12) != 1)) {
        tls_errors(why, sizeof(why));
        return tls_bad(errstr, errstr_size, what, "%s: no usable cipher "
                       "among '%s': %s", c->cipher_suites.key,
                       c->cipher_suites.val, why);
    }
    return SAMSA_ERR_NONE;
}

static samsa_err_t
tls_client_auth(SSL_CTX *sctx, const samsa_tls_conf_t *c, char *errstr,
                size_t errstr_size, const char *what)
{
    const char  *v = c->client_auth.val != NULL ? c->client_auth.val
                                                : "none";
    static const unsigned char  sid[] = "samsa";

    if (strcmp(v, "none") == 0) {
        SSL_CTX_set_verify(sctx, SSL_VERIFY_NONE, NULL);
    } else if (strcmp(v, "requested") == 0) {
        SSL_CTX_set_verify(sctx, SSL_VERIFY_PEER, NULL);
    } else if (strcmp(v, "required") == 0) {
        SSL_CTX_set_verify(sctx,
                           SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                           NULL);
    } else {
        return tls_bad(errstr, errstr_size, what, "%s must be one of: "
                       "required, requested, none", c->client_auth.key);
    }
    /* resumed sessions of verified clients need an id context */
    SSL_CTX_set_session_id_context(sctx, sid, sizeof(sid) - 1);
    if (strcmp(v, "none") != 0 && tls_set(&c->truststore_location)) {
        SSL_CTX_set_client_CA_list(
            sctx, SSL_load_client_CA_file(c->truststore_location.val));
        ERR_clear_error();
    }
    return SAMSA_ERR_NONE;
}

static samsa_err_t
tls_ctx_setup(samsa_tls_ctx_t *ctx, const samsa_tls_conf_t *conf,
              char *errstr, size_t errstr_size, const char *what)
{
    SSL_CTX     *sctx = ctx->ssl_ctx;
    const char  *eia = conf->endpoint_identification_algorithm.val;
    samsa_err_t  err;

    SSL_CTX_set_options(sctx, SSL_OP_NO_RENEGOTIATION
                                  | SSL_OP_IGNORE_UNEXPECTED_EOF
                                  | (ctx->is_server
                                         ? SSL_OP_CIPHER_SERVER_PREFERENCE
                                         : 0));
    SSL_CTX_set_mode(sctx, SSL_MODE_ENABLE_PARTIAL_WRITE
                               | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER
                               | SSL_MODE_RELEASE_BUFFERS);
    err = tls_protocols(sctx, conf, errstr, errstr_size, what);
    if (err == SAMSA_ERR_NONE) {
        err = tls_ciphers(sctx, conf, errstr, errstr_size, what);
    }
    if (err == SAMSA_ERR_NONE) {
        err = tls_keystore(sctx, conf, ctx->is_server, errstr, errstr_size,
                           what);
    }
    if (err == SAMSA_ERR_NONE) {
        err = tls_truststore(sctx, conf, errstr, errstr_size, what);
    }
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    if (ctx->is_server) {
        return tls_client_auth(sctx, conf, errstr, errstr_size, what);
    }
    if (eia != NULL && eia[0] != '\0' && strcasecmp(eia, "https") != 0) {
        return tls_bad(errstr, errstr_size, what, "%s must be https or "
                       "empty", conf->endpoint_identification_algorithm.key);
    }
    ctx->verify_host = eia == NULL || eia[0] != '\0';
    SSL_CTX_set_verify(sctx, SSL_VERIFY_PEER, NULL);
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_tls_ctx_new(samsa_tls_ctx_t **out, const samsa_tls_conf_t *conf,
                  bool is_server, const char *what, char *errstr,
                  size_t errstr_size)
{
    samsa_tls_ctx_t  *ctx;
    samsa_err_t       err;
    char              why[512];

    *out = NULL;
    ERR_clear_error();
    ctx = samsa_calloc(1, sizeof(*ctx));
    ctx->is_server = is_server;
    atomic_init(&ctx->refs, 1);
    ctx->ssl_ctx = SSL_CTX_new(is_server ? TLS_server_method()
                                         : TLS_client_method());
    if (ctx->ssl_ctx == NULL) {
        tls_errors(why, sizeof(why));
        samsa_free(ctx);
        return tls_bad(errstr, errstr_size, what, "cannot create an OpenSSL "
                       "context: %s", why);
    }
    err = tls_ctx_setup(ctx, conf, errstr, errstr_size, what);
    if (err != SAMSA_ERR_NONE) {
        samsa_tls_ctx_unref(ctx);
        return err;
    }
    *out = ctx;
    return SAMSA_ERR_NONE;
}

samsa_tls_ctx_t *
samsa_tls_ctx_ref(samsa_tls_ctx_t *ctx)
{
    atomic_fetch_add_explicit(&ctx->refs, 1, memory_order_relaxed);
    return ctx;
}

void
samsa_tls_ctx_unref(samsa_tls_ctx_t *ctx)
{
    /* acq_rel: the last unref sees every other holder's use */
    if (ctx == NULL
        || atomic_fetch_sub_explicit(&ctx->refs, 1, memory_order_acq_rel)
               != 1) {
        return;
    }
    SSL_CTX_free(ctx->ssl_ctx);
    samsa_free(ctx);
}

/* The subject of x as RFC 2253 text into out (Kafka prints the X500
 * principal's name). */
static void
tls_subject(X509 *x, char *out, size_t size)
{
    BIO  *bio = BIO_new(BIO_s_mem());
    int   n = -1;

    if (bio != NULL
        && X509_NAME_print_ex(bio, X509_get_subject_name(x), 0,
                              XN_FLAG_RFC2253) >= 0) {
        n = BIO_read(bio, out, (int) size - 1);
    }
    BIO_free(bio);
    out[n > 0 ? n : 0] = '\0';
}

static int
tls_str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The subject alternative names of x, sorted, as "DNS:name" / "IP:addr"
 * / "URI:..." / "email:..." / "other" joined by ", " into out (Kafka
 * compares them as a set). */
static void
tls_sans(X509 *x, char *out, size_t size)
{
    GENERAL_NAMES  *names = X509_get_ext_d2i(x, NID_subject_alt_name, NULL,
                                             NULL);
    char          **items = NULL;
    int             n = names != NULL ? sk_GENERAL_NAME_num(names) : 0;
    int             i;
    size_t          o = 0;

    out[0] = '\0';
    if (n > 0) {
        items = samsa_calloc((size_t) n, sizeof(*items));
    }
    for (i = 0; i < n; i++) {
        const GENERAL_NAME  *g = sk_GENERAL_NAME_value(names, i);
        char                 buf[300];
        const unsigned char *d;
        int                  len;

        switch (g->type) {
        case GEN_DNS:
        case GEN_URI:
        case GEN_EMAIL:
            d = ASN1_STRING_get0_data(g->d.ia5);
            len = ASN1_STRING_length(g->d.ia5);
            snprintf(buf, sizeof(buf), "%s:%.*s",
                     g->type == GEN_DNS ? "DNS"
                     : g->type == GEN_URI ? "URI" : "email",
                     len > 250 ? 250 : len, (const char *) d);
            break;
        case GEN_IPADD:
            d = ASN1_STRING_get0_data(g->d.ip);
            len = ASN1_STRING_length(g->d.ip);
            if (len == 4) {
                snprintf(buf, sizeof(buf), "IP:%u.%u.%u.%u", d[0], d[1],
                         d[2], d[3]);
            } else {
                int  k;
                size_t  bo = (size_t) snprintf(buf, sizeof(buf), "IP:");

                for (k = 0; k < len && bo + 3 < sizeof(buf); k++) {
                    bo += (size_t) snprintf(buf + bo, sizeof(buf) - bo,
                                            "%02x", d[k]);
                }
            }
            break;
        default:
            snprintf(buf, sizeof(buf), "type%d", g->type);
            break;
        }
        items[i] = samsa_strdup(buf);
    }
    if (n > 0) {
        qsort(items, (size_t) n, sizeof(*items), tls_str_cmp);
    }
    for (i = 0; i < n; i++) {
        if (o < size) {
            o += (size_t) snprintf(out + o, size - o, "%s%s",
                                   i > 0 ? ", " : "", items[i]);
        }
        samsa_free(items[i]);
    }
    samsa_free(items);
    GENERAL_NAMES_free(names);
}

/* A memory BIO's bytes as a NUL-terminated string of ours. */
static char *
tls_bio_text(BIO *b, size_t *len)
{
    char  *p = NULL, *s;
    long   n = BIO_get_mem_data(b, &p);

    if (n < 0 || p == NULL) {
        n = 0;
    }
    s = samsa_malloc((size_t) n + 1);
    memcpy(s, p, (size_t) n);
    s[n] = '\0';
    if (len != NULL) {
        *len = (size_t) n;
    }
    return s;
}

samsa_err_t
samsa_tls_ctx_export_pem(const samsa_tls_ctx_t *ctx, const char *what,
                         char **key_pem, size_t *key_len, char **chain_pem,
                         char *errstr, size_t errstr_size)
{
    SSL_CTX         *sctx = ctx->ssl_ctx;
    EVP_PKEY        *pkey = SSL_CTX_get0_privatekey(sctx);
    X509            *leaf = SSL_CTX_get0_certificate(sctx);
    STACK_OF(X509)  *chain = NULL;
    BIO             *kb = NULL, *cb = NULL;
    samsa_err_t      err = SAMSA_ERR__CONFIG;
    int              i;

    *key_pem = NULL;
    *chain_pem = NULL;
    if (pkey == NULL || leaf == NULL) {
        snprintf(errstr, errstr_size, "%s: no key store", what);
        return SAMSA_ERR__CONFIG;
    }
    ERR_clear_error();
    kb = BIO_new(BIO_s_secmem());
    cb = BIO_new(BIO_s_mem());
    if (kb == NULL || cb == NULL
        || PEM_write_bio_PrivateKey(kb, pkey, NULL, NULL, 0, NULL, NULL) != 1
        || PEM_write_bio_X509(cb, leaf) != 1
        || SSL_CTX_get0_chain_certs(sctx, &chain) != 1) {
        goto fail;
    }
    for (i = 0; chain != NULL && i < sk_X509_num(chain); i++) {
        if (PEM_write_bio_X509(cb, sk_X509_value(chain, i)) != 1) {
            goto fail;
        }
    }
    *key_pem = tls_bio_text(kb, key_len);
    *chain_pem = tls_bio_text(cb, NULL);
    err = SAMSA_ERR_NONE;
    goto out;
fail:
    snprintf(errstr, errstr_size, "%s: cannot encode the key store as "
             "PEM: %s", what, ERR_reason_error_string(ERR_peek_last_error())
                              ? ERR_reason_error_string(ERR_peek_last_error())
                              : "unknown error");
out:
    BIO_free(kb);               /* secure memory: cleared when freed */
    BIO_free(cb);
    return err;
}

samsa_err_t
samsa_tls_ctx_same_identity(const samsa_tls_ctx_t *cur,
                            const samsa_tls_ctx_t *next, bool allow_dn_changes,
                            bool allow_san_changes, char *errstr,
                            size_t errstr_size)
{
    X509  *a = SSL_CTX_get0_certificate(cur->ssl_ctx);
    X509  *b = SSL_CTX_get0_certificate(next->ssl_ctx);
    char   dn_a[512], dn_b[512], san_a[1024], san_b[1024];

    if (a == NULL || b == NULL) {
        snprintf(errstr, errstr_size, "%s",
                 a == NULL ? "Cannot add SSL keystore to an existing "
                             "listener for which no keystore was configured."
                           : "Cannot remove the SSL keystore from an "
                             "existing listener for which a keystore was "
                             "configured.");
        return SAMSA_ERR__CONFIG;
    }
    tls_subject(a, dn_a, sizeof(dn_a));
    tls_subject(b, dn_b, sizeof(dn_b));
    tls_sans(a, san_a, sizeof(san_a));
    tls_sans(b, san_b, sizeof(san_b));
    if (!allow_dn_changes && strcmp(dn_a, dn_b) != 0) {
        snprintf(errstr, errstr_size, "Keystore DistinguishedName does not "
                 "match: existing={DN=%s, SAN=[%s]}, new={DN=%s, SAN=[%s]}",
                 dn_a, san_a, dn_b, san_b);
        return SAMSA_ERR__CONFIG;
    }
    if (!allow_san_changes && strcmp(san_a, san_b) != 0) {
        snprintf(errstr, errstr_size, "Keystore SubjectAltNames do not "
                 "match: existing={DN=%s, SAN=[%s]}, new={DN=%s, SAN=[%s]}",
                 dn_a, san_a, dn_b, san_b);
        return SAMSA_ERR__CONFIG;
    }
    return SAMSA_ERR_NONE;
}

/* ---- connections --------------------------------------------------------- */

samsa_err_t
samsa_tls_new(samsa_tls_t **out, samsa_tls_ctx_t *ctx, int fd,
              const char *peer, const char *host)
{
    samsa_tls_t  *tls;
    char          why[512];

    *out = NULL;
    ERR_clear_error();
    tls = samsa_calloc(1, sizeof(*tls));
    snprintf(tls->peer, sizeof(tls->peer), "%s", peer);
    tls->ssl = SSL_new(ctx->ssl_ctx);
    if (tls->ssl == NULL || SSL_set_fd(tls->ssl, fd) != 1) {
        tls_errors(why, sizeof(why));
        samsa_error("TLS for connection %s: cannot set up: %s", peer, why);
        samsa_tls_free(tls);
        return SAMSA_ERR__IO;
    }
    if (ctx->is_server) {
        SSL_set_accept_state(tls->ssl);
    } else {
        SSL_set_connect_state(tls->ssl);
        if (host != NULL && host[0] != '\0') {
            SSL_set_tlsext_host_name(tls->ssl, host);
            if (ctx->verify_host) {
                SSL_set1_host(tls->ssl, host);
            }
        }
    }
    tls->handshaking = true;
    tls->rd_want = SAMSA_SELECTOR_F_READ;
    *out = tls;
    return SAMSA_ERR_NONE;
}

void
samsa_tls_free(samsa_tls_t *tls)
{
    if (tls == NULL) {
        return;
    }
    if (tls->ssl != NULL) {
        if (!tls->handshaking && !tls->failed) {
            ERR_clear_error();
            (void) SSL_shutdown(tls->ssl);  /* close_notify, no wait */
        }
        SSL_free(tls->ssl);
        ERR_clear_error();
    }
    samsa_free(tls->chunk);
    samsa_free(tls);
}

/* Turn an SSL_* result r <= 0 into our result: NONE with *want set when it
 * would block, _CLOSED on the peer's close, _IO (logged once) else. */
static samsa_err_t
tls_result(samsa_tls_t *tls, int r, const char *op, uint32_t *want)
{
    int   e = SSL_get_error(tls->ssl, r);
    long  vr;
    char  why[512];

    switch (e) {
    case SSL_ERROR_WANT_READ:
        *want = SAMSA_SELECTOR_F_READ;
        return SAMSA_ERR_NONE;
    case SSL_ERROR_WANT_WRITE:
        *want = SAMSA_SELECTOR_F_WRITE;
        return SAMSA_ERR_NONE;
    case SSL_ERROR_ZERO_RETURN:
        ERR_clear_error();
        tls->failed = true;
        return SAMSA_ERR__CLOSED;
    case SSL_ERROR_SYSCALL:
        tls->failed = true;
        if (ERR_peek_error() == 0) {
            if (r == 0 || errno == ECONNRESET || errno == EPIPE) {
                return SAMSA_ERR__CLOSED;
            }
            snprintf(why, sizeof(why), "%s", strerror(errno));
            break;
        }
        /* fall through */
    default:
        tls_errors(why, sizeof(why));
        break;
    }
    tls->failed = true;
    if (!tls->logged) {
        tls->logged = true;
        vr = SSL_get_verify_result(tls->ssl);
        samsa_info("TLS %s failed on connection %s: %s%s%s", op, tls->peer,
                   why, vr != X509_V_OK ? "; certificate: " : "",
                   vr != X509_V_OK ? X509_verify_cert_error_string(vr) : "");
    }
    ERR_clear_error();
    return SAMSA_ERR__IO;
}

samsa_err_t
samsa_tls_handshake(samsa_tls_t *tls)
{
    samsa_err_t  err;
    int          r;

    if (!tls->handshaking) {
        return SAMSA_ERR_NONE;
    }
    ERR_clear_error();
    r = SSL_do_handshake(tls->ssl);
    if (r == 1) {
        tls->handshaking = false;
        tls->rd_want = 0;
        tls->wr_want = 0;
        samsa_debug("TLS handshake done on connection %s: %s, %s",
                    tls->peer, SSL_get_version(tls->ssl),
                    SSL_get_cipher_name(tls->ssl));
        return SAMSA_ERR_NONE;
    }
    err = tls_result(tls, r, "handshake", &tls->rd_want);
    tls->wr_want = tls->rd_want;
    return err;
}

bool
samsa_tls_handshaking(const samsa_tls_t *tls)
{
    return tls->handshaking;
}

samsa_err_t
samsa_tls_read(samsa_tls_t *tls, void *p, size_t len, size_t *n)
{
    int  r;

    *n = 0;
    tls->rd_want = 0;
    ERR_clear_error();
    r = SSL_read(tls->ssl, p, len > INT32_MAX ? INT32_MAX : (int) len);
    if (r > 0) {
        *n = (size_t) r;
        return SAMSA_ERR_NONE;
    }
    return tls_result(tls, r, "read", &tls->rd_want);
}

samsa_err_t
samsa_tls_write(samsa_tls_t *tls, const void *p, size_t len, size_t *n)
{
    int  r;

    *n = 0;
    tls->wr_want = 0;
    if (len == 0) {
        return SAMSA_ERR_NONE;
    }
    ERR_clear_error();
    r = SSL_write(tls->ssl, p, len > INT32_MAX ? INT32_MAX : (int) len);
    if (r > 0) {
        *n = (size_t) r;
        return SAMSA_ERR_NONE;
    }
    return tls_result(tls, r, "write", &tls->wr_want);
}

samsa_err_t
samsa_tls_write_file(samsa_tls_t *tls, int fd, int64_t off, int64_t len,
                     size_t *n)
{
    samsa_err_t  err;
    size_t       want;
    ssize_t      r;

    *n = 0;
    if (tls->chunk == NULL) {
        tls->chunk = samsa_malloc(TLS_FILE_CHUNK);
    }
    if (tls->chunk_off == tls->chunk_len
        || off != tls->chunk_base + (int64_t) tls->chunk_off) {
        want = len < TLS_FILE_CHUNK ? (size_t) len : TLS_FILE_CHUNK;
        do {
            r = pread(fd, tls->chunk, want, (off_t) off);
        } while (r < 0 && errno == EINTR);
        if (r <= 0) {
            samsa_error("connection %s: reading %zu bytes of a fetched "
                        "segment at %lld for TLS failed: %s", tls->peer,
                        want, (long long) off,
                        r < 0 ? strerror(errno) : "end of file");
            return SAMSA_ERR__IO;
        }
        tls->chunk_base = off;
        tls->chunk_len = (size_t) r;
        tls->chunk_off = 0;
    }
    err = samsa_tls_write(tls, tls->chunk + tls->chunk_off,
                          tls->chunk_len - tls->chunk_off, n);
    tls->chunk_off += *n;
    return err;
}

bool
samsa_tls_has_pending(const samsa_tls_t *tls)
{
    return !tls->handshaking
           && (SSL_pending(tls->ssl) > 0 || SSL_has_pending(tls->ssl) == 1);
}

uint32_t
samsa_tls_read_wants(const samsa_tls_t *tls)
{
    return tls->rd_want;
}

uint32_t
samsa_tls_write_wants(const samsa_tls_t *tls)
{
    return tls->wr_want;
}

const char *
samsa_tls_version(const samsa_tls_t *tls)
{
    return SSL_get_version(tls->ssl);
}

bool
samsa_tls_peer_dn(const samsa_tls_t *tls, char *out, size_t size)
{
    X509   *cert = SSL_get0_peer_certificate(tls->ssl);
    BIO    *bio;
    int     n;

    if (cert == NULL || SSL_get_verify_result(tls->ssl) != X509_V_OK
        || size == 0) {
        return false;
    }
    bio = BIO_new(BIO_s_mem());
    if (bio == NULL) {
        return false;
    }
    /* RFC 2253 (most specific RDN first, ',' between, no spaces): what
     * Java's X500Principal.getName() gives Kafka's DEFAULT rule */
    if (X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0,
                           XN_FLAG_RFC2253) < 0) {
        BIO_free(bio);
        return false;
    }
    n = BIO_read(bio, out, (int) size - 1);
    BIO_free(bio);
    if (n <= 0) {
        return false;
    }
    out[n] = '\0';
    return true;
}

const char *
samsa_tls_cipher(const samsa_tls_t *tls)
{
    return SSL_get_cipher_name(tls->ssl);
}
