/*
 * net/tls.h - TLS (OpenSSL 3) for a connection: a context per listener
 * (or per client configuration) built from Kafka's ssl.* keys, and the
 * per-connection state the network thread drives without ever blocking:
 * the handshake, then records read and written through the socket itself.
 * Every call that would block returns at once and says what it waits for
 * (samsa_tls_read_wants / samsa_tls_write_wants: READ or WRITE), which the
 * owner adds to the selector interest: a read may need the socket
 * writable and a write readable.
 *
 * Threads: a samsa_tls_ctx_t is built on the main thread (or the client's
 * app thread) and is read-only afterwards (OpenSSL's SSL_CTX is safe to
 * share for SSL_new); it must outlive every samsa_tls_t made from it.
 * A samsa_tls_t belongs to the connection's network thread alone.
 * Ownership: the connection owns its samsa_tls_t; contexts are
 * refcounted (the listener's owner, server/tlsconf.c, holds the broker's;
 * a client's configuration and its network client each hold one).
 */
#ifndef SAMSA_NET_TLS_H
#define SAMSA_NET_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

typedef struct samsa_tls_ctx samsa_tls_ctx_t;
typedef struct samsa_tls     samsa_tls_t;

/* One resolved key: its name as it was given (so that errors name
 * "listener.name.ssl.ssl.keystore.location" when that is what was set)
 * and its value (NULL: not set).  Borrowed. */
typedef struct samsa_tls_opt {
    const char  *key;
    const char  *val;
} samsa_tls_opt_t;

/* Kafka's ssl.* keys (names in the comments: the field is the key). */
typedef struct samsa_tls_conf {
    samsa_tls_opt_t  keystore_type;           /* ssl.keystore.type: PEM */
    samsa_tls_opt_t  keystore_location;       /* key + chain, PEM file */
    samsa_tls_opt_t  keystore_password;       /* refused with PEM */
    samsa_tls_opt_t  keystore_certificate_chain;  /* PEM text (KIP-651) */
    samsa_tls_opt_t  keystore_key;            /* PEM text (KIP-651) */
    samsa_tls_opt_t  key_password;            /* encrypted private key */
    samsa_tls_opt_t  truststore_type;         /* PEM */
    samsa_tls_opt_t  truststore_location;     /* CA certificates, PEM */
    samsa_tls_opt_t  truststore_password;     /* refused with PEM */
    samsa_tls_opt_t  truststore_certificates; /* PEM text (KIP-651) */
    samsa_tls_opt_t  client_auth;             /* none/requested/required */
    samsa_tls_opt_t  enabled_protocols;       /* TLSv1.2,TLSv1.3 */
    samsa_tls_opt_t  protocol;                /* TLSv1.3, TLSv1.2, TLS */
    samsa_tls_opt_t  cipher_suites;           /* IANA or OpenSSL names */
    samsa_tls_opt_t  endpoint_identification_algorithm; /* client: https
                                                           or "" */
} samsa_tls_conf_t;

/* Build a context.  what names its user in errors ("listener SSL").  A
 * server needs a key store; a client uses one if given (mTLS).  Errors
 * (SAMSA_ERR__CONFIG) name the key and the file: a missing or unreadable
 * file, no certificate or key in it, an encrypted key without
 * ssl.key.password or with the wrong one, a key that does not match its
 * certificate, an unknown protocol or cipher.
 * @thread main (or the client's app thread) */
SAMSA_MUST_CHECK samsa_err_t samsa_tls_ctx_new(samsa_tls_ctx_t **out,
                                               const samsa_tls_conf_t *conf,
                                               bool is_server,
                                               const char *what,
                                               char *errstr,
                                               size_t errstr_size);

/* Another reference (a client's network client keeps the context its
 * configuration built).  Returns ctx.  @thread any */
samsa_tls_ctx_t *samsa_tls_ctx_ref(samsa_tls_ctx_t *ctx);

/* Drop a reference; the last frees the context.  NULL is a no-op.  No
 * samsa_tls_t of it may remain then.  @thread any */
void samsa_tls_ctx_unref(samsa_tls_ctx_t *ctx);

/* Kafka's CertificateEntries.ensureCompatible for a dynamic key store
 * update: the leaf certificate of next must have the subject DN of cur's
 * (unless allow_dn_changes: ssl.allow.dn.changes) and the same subject
 * alternative names (unless allow_san_changes: ssl.allow.san.changes).
 * SAMSA_ERR__CONFIG with both identities in errstr otherwise.
 * @thread any (both contexts are read only) */
SAMSA_MUST_CHECK samsa_err_t samsa_tls_ctx_same_identity(
    const samsa_tls_ctx_t *cur, const samsa_tls_ctx_t *next,
    bool allow_dn_changes, bool allow_san_changes, char *errstr,
    size_t errstr_size);

/* The key store of a server context as PEM text, for a TLS library that
 * takes PEM (libmicrohttpd's, for the metrics listener): *key_pem the
 * private key, unencrypted (PKCS#8), *chain_pem the certificate chain,
 * leaf first.  Both NUL-terminated and the caller's (samsa_free; the key
 * cleansed first, OPENSSL_cleanse).  SAMSA_ERR__CONFIG (what names the
 * context's user) when the context has no key store or OpenSSL cannot
 * encode it.  @thread any (the context is read only) */
SAMSA_MUST_CHECK samsa_err_t samsa_tls_ctx_export_pem(
    const samsa_tls_ctx_t *ctx, const char *what, char **key_pem,
    size_t *key_len, char **chain_pem, char *errstr, size_t errstr_size);

/* TLS on the connected non-blocking socket fd; peer ("1.2.3.4:5678" or
 * the connection id) names it in the log.  A client passes the host it
 * connects to in host (SNI and, with endpoint identification https, the
 * name checked against the certificate); a server NULL.  The handshake
 * has not started: call samsa_tls_handshake.  @thread network */
SAMSA_MUST_CHECK samsa_err_t samsa_tls_new(samsa_tls_t **out,
                                           samsa_tls_ctx_t *ctx, int fd,
                                           const char *peer,
                                           const char *host);

/* Send close_notify if the handshake had finished (without waiting for
 * anything) and free.  The caller closes fd afterwards.  NULL: no-op. */
void samsa_tls_free(samsa_tls_t *tls);

/* Drive the handshake.  NONE while it goes on (samsa_tls_handshaking()
 * true, samsa_tls_read_wants() says READ or WRITE) and once it is done;
 * _CLOSED when the peer closed; _IO when it failed (logged once for the
 * connection, with the peer and OpenSSL's reason). */
SAMSA_MUST_CHECK samsa_err_t samsa_tls_handshake(samsa_tls_t *tls);

bool samsa_tls_handshaking(const samsa_tls_t *tls);

/* Read at most len plaintext bytes, as recv(2): NONE with *n = 0 means
 * "nothing now" (samsa_tls_read_wants() says on what); _CLOSED at the
 * peer's close_notify, EOF or reset; _IO on a TLS error (logged once). */
SAMSA_MUST_CHECK samsa_err_t samsa_tls_read(samsa_tls_t *tls, void *p,
                                             size_t len, size_t *n);

/* Write at most len bytes, as send(2): NONE with *n = 0 means blocked
 * (samsa_tls_write_wants()).  After a block the next call must offer the
 * same bytes again (they may sit at another address); partial writes are
 * allowed.  _CLOSED / _IO as for reads. */
SAMSA_MUST_CHECK samsa_err_t samsa_tls_write(samsa_tls_t *tls,
                                             const void *p, size_t len,
                                             size_t *n);

/* Write up to len bytes of file fd from offset off (a Fetch's records:
 * sendfile(2) cannot encrypt, so they are read into the connection's
 * buffer and written with SSL_write).  *n bytes of the file went out;
 * the next call passes off + *n.  _IO if the file is shorter than off +
 * len or cannot be read. */
SAMSA_MUST_CHECK samsa_err_t samsa_tls_write_file(samsa_tls_t *tls, int fd,
                                                  int64_t off, int64_t len,
                                                  size_t *n);

/* Plaintext already decrypted (or records already read) that the socket's
 * readiness will not announce: the owner must read again without waiting
 * for the selector (Kafka's SslTransportLayer.hasBytesBuffered). */
bool samsa_tls_has_pending(const samsa_tls_t *tls);

/* SAMSA_SELECTOR_F_READ or _WRITE: what the last read (or handshake step)
 * and the last write that could not go on wait for; 0 when they did not
 * block. */
uint32_t samsa_tls_read_wants(const samsa_tls_t *tls);
uint32_t samsa_tls_write_wants(const samsa_tls_t *tls);

/* The negotiated protocol ("TLSv1.3") and cipher, for the log. */
const char *samsa_tls_version(const samsa_tls_t *tls);
/* The subject of the peer's verified certificate in RFC 2253 form
 * ("CN=client,O=Example"), as Java's X500Principal.getName() writes it:
 * false if the peer sent none (or it failed verification). */
bool samsa_tls_peer_dn(const samsa_tls_t *tls, char *out, size_t size);
const char *samsa_tls_cipher(const samsa_tls_t *tls);

#endif /* SAMSA_NET_TLS_H */
