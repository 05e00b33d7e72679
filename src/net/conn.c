/*
 * net/conn.c - framing on one connection: size-prefixed receives and
 * whole-response writes, over the socket or, on a TLS connection, through
 * net/tls.c (records read and written with SSL_read/SSL_write, file
 * regions read and encrypted instead of sendfile).
 * Threads: the connection's network thread.
 */
#include "net/conn.h"

#include <errno.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "util/alloc.h"
#include "util/endian.h"
#include "util/time.h"

/* recv once into p, and with q (an edge connection's next size prefix)
 * on into q; NONE with *n = 0 means "nothing more now".  On an edge
 * connection a short read or EAGAIN means the socket is empty: the next
 * bytes come with an edge. */
static samsa_err_t
conn_recv(samsa_conn_t *conn, void *p, size_t len, void *q, size_t qlen,
          size_t *n)
{
    struct iovec  iov[2] = { { p, len }, { q, qlen } };
    ssize_t       r;

    *n = 0;
    if (conn->tls != NULL) {
        return samsa_tls_read(conn->tls, p, len, n);
    }
    for (;;) {
        r = q != NULL ? readv(conn->fd, iov, 2) : recv(conn->fd, p, len, 0);
        if (r > 0) {
            *n = (size_t) r;
            if ((size_t) r < len + (q != NULL ? qlen : 0)) {
                conn->readable = false;
            }
            return SAMSA_ERR_NONE;
        }
        if (r == 0) {
            return SAMSA_ERR__CLOSED;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            conn->readable = false;
            return SAMSA_ERR_NONE;
        }
        return errno == ECONNRESET ? SAMSA_ERR__CLOSED : SAMSA_ERR__IO;
    }
}

static samsa_err_t
conn_read_size(samsa_conn_t *conn, int32_t max_size)
{
    samsa_err_t  err;
    size_t       n;

    while (conn->size_got < 4) {
        err = conn_recv(conn, conn->size_buf + conn->size_got,
                        4 - conn->size_got, NULL, 0, &n);
        if (err != SAMSA_ERR_NONE || n == 0) {
            return err;
        }
        conn->size_got += (uint32_t) n;
    }
    conn->size = (int32_t) samsa_load_be32(conn->size_buf);
    if (conn->size < 0 || conn->size > max_size) {
        return SAMSA_ERR__BAD_MSG;
    }
    return SAMSA_ERR_NONE;
}

/* Charge the pool for the next bytes of the payload: the rest of it, at
 * most CONN_CHARGE_STEP (a request up to that size is charged whole at
 * once, as Kafka does; no syscall is spent on asking the socket what it
 * holds).  _FULL when the pool is exhausted. */
#define CONN_CHARGE_STEP  65536

static samsa_err_t
conn_charge(samsa_conn_t *conn, samsa_mempool_t *pool)
{
    int32_t  want = conn->size - conn->charged;

    if (want > CONN_CHARGE_STEP) {
        want = CONN_CHARGE_STEP;
    }
    if (!samsa_mempool_try_take(pool, want)) {
        return SAMSA_ERR__FULL;
    }
    if (conn->charged == 0) {
        conn->recv_start_ns = samsa_now_ns();
    }
    conn->charged += want;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_conn_read(samsa_conn_t *conn, int32_t max_size, samsa_mempool_t *pool)
{
    samsa_err_t  err;
    size_t       n, want;
    bool         next;

    if (conn->recv_complete) {
        return SAMSA_ERR_NONE;
    }
    if (conn->payload == NULL) {
        /* the size prefix: read, or brought whole with the last request */
        err = conn_read_size(conn, max_size);
        if (err != SAMSA_ERR_NONE || conn->size_got < 4) {
            return err;
        }
    }
    if (conn->payload == NULL) {
        /* untouched pages cost address space, not memory */
        conn->payload = samsa_malloc(conn->size > 0 ? (size_t) conn->size
                                                    : 1);
        conn->payload_got = 0;
        conn->charged = 0;
        conn->recv_start_ns = 0;
    }
    while (conn->payload_got < conn->size) {
        if (conn->charged == conn->payload_got) {
            err = conn_charge(conn, pool);
            if (err != SAMSA_ERR_NONE) {
                return err;
            }
        }
        want = (size_t) (conn->charged - conn->payload_got);
        /* the last bytes of it, with the next size prefix */
        next = conn->edge && conn->charged == conn->size;
        err = conn_recv(conn, conn->payload + conn->payload_got, want,
                        next ? conn->next_size_buf : NULL, 4, &n);
        if (err != SAMSA_ERR_NONE || n == 0) {
            return err;
        }
        if (n > want) {
            conn->next_size_got = (uint32_t) (n - want);
            n = want;
        }
        conn->payload_got += (int32_t) n;
    }
    conn->recv_complete = true;
    return SAMSA_ERR_NONE;
}

uint8_t *
samsa_conn_take_payload(samsa_conn_t *conn, int32_t *size)
{
    uint8_t  *p = conn->payload;

    *size = conn->size;
    conn->payload = NULL;
    conn->payload_got = 0;
    conn->charged = 0;
    conn->size = 0;
    /* what of the next size prefix came with this request's end */
    memcpy(conn->size_buf, conn->next_size_buf, sizeof(conn->size_buf));
    conn->size_got = conn->next_size_got;
    conn->next_size_got = 0;
    conn->recv_complete = false;
    return p;
}

static samsa_err_t
conn_send_errno(void)
{
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return SAMSA_ERR_NONE;
    }
    return (errno != EPIPE && errno != ECONNRESET) ? SAMSA_ERR__IO
                                                   : SAMSA_ERR__CLOSED;
}

/* Over TLS: frame bytes up to stop with SSL_write (a blocked write is
 * offered the same bytes again next time, as OpenSSL requires). */
static samsa_err_t
conn_tls_send_frame(samsa_conn_t *conn, size_t stop, bool *blocked)
{
    samsa_buf_t  *frame = &conn->sending->frame;
    samsa_err_t   err;
    size_t        n;

    while (conn->send_off < stop) {
        err = samsa_tls_write(conn->tls, frame->data + conn->send_off,
                              stop - conn->send_off, &n);
        if (err != SAMSA_ERR_NONE || n == 0) {
            *blocked = true;
            return err;
        }
        conn->send_off += n;
    }
    return SAMSA_ERR_NONE;
}

/* Over TLS: the current file region read and encrypted (no sendfile: the
 * kernel would send the file's bytes in the clear; kernel TLS offload is
 * a later step). */
static samsa_err_t
conn_tls_send_region(samsa_conn_t *conn, bool *blocked)
{
    samsa_send_region_t  *rg = &conn->sending->regions[conn->send_region];
    samsa_err_t           err;
    size_t                n;

    while (conn->region_off < rg->len) {
        err = samsa_tls_write_file(conn->tls, rg->fd,
                                   rg->offset + conn->region_off,
                                   rg->len - conn->region_off, &n);
        if (err != SAMSA_ERR_NONE || n == 0) {
            *blocked = true;
            return err;
        }
        conn->region_off += (int64_t) n;
    }
    conn->send_region++;
    conn->region_off = 0;
    return SAMSA_ERR_NONE;
}

/* Frame bytes up to stop.  NONE with *blocked when the socket is full. */
static samsa_err_t
conn_send_frame(samsa_conn_t *conn, size_t stop, bool *blocked)
{
    samsa_buf_t  *frame = &conn->sending->frame;
    ssize_t       r;

    if (conn->tls != NULL) {
        return conn_tls_send_frame(conn, stop, blocked);
    }
    while (conn->send_off < stop) {
        r = send(conn->fd, frame->data + conn->send_off,
                 stop - conn->send_off, MSG_NOSIGNAL);
        if (r > 0) {
            conn->send_off += (size_t) r;
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else {
            *blocked = true;
            return r < 0 ? conn_send_errno() : SAMSA_ERR__CLOSED;
        }
    }
    return SAMSA_ERR_NONE;
}

/* The current file region, with sendfile(2).  A file shorter than the
 * region promised is an I/O error: the frame can no longer be completed. */
static samsa_err_t
conn_send_region(samsa_conn_t *conn, bool *blocked)
{
    samsa_send_region_t  *rg = &conn->sending->regions[conn->send_region];
    off_t                 off;
    ssize_t               r;

    if (conn->tls != NULL) {
        return conn_tls_send_region(conn, blocked);
    }
    while (conn->region_off < rg->len) {
        off = (off_t) (rg->offset + conn->region_off);
        r = sendfile(conn->fd, rg->fd, &off,
                     (size_t) (rg->len - conn->region_off));
        if (r > 0) {
            conn->region_off += r;
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else {
            *blocked = true;
            return r < 0 ? conn_send_errno() : SAMSA_ERR__IO;
        }
    }
    conn->send_region++;
    conn->region_off = 0;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_conn_write(samsa_conn_t *conn, bool *done)
{
    samsa_send_t  *send = conn->sending;
    samsa_err_t    err = SAMSA_ERR_NONE;
    bool           blocked = false;
    size_t         stop;

    *done = false;
    while (!blocked && err == SAMSA_ERR_NONE) {
        stop = conn->send_region < send->nregions
                   ? send->regions[conn->send_region].at
                   : send->frame.len;
        if (conn->send_off < stop) {
            err = conn_send_frame(conn, stop, &blocked);
        } else if (conn->send_region < send->nregions) {
            err = conn_send_region(conn, &blocked);
        } else {
            *done = true;
            break;
        }
    }
    return err;
}
