/* Unit tests for net/conn.c: size-prefixed receives and writes that splice
 * file regions (sendfile) into the frame. */
#include "unit.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <stdatomic.h>
#include <unistd.h>

#include "net/conn.h"
#include "util/alloc.h"

static void
conn_pair(samsa_conn_t *conn, int *peer)
{
    int  sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv),
                     0);
    memset(conn, 0, sizeof(*conn));
    conn->fd = sv[0];
    *peer = sv[1];
}

static void
test_conn_read_one_frame_exactly(void **state)
{
    samsa_conn_t     conn;
    samsa_mempool_t  pool;
    int              peer;
    int32_t          size;
    uint8_t         *p;
    /* two frames back to back: only the first may be consumed */
    const uint8_t    in[] = { 0, 0, 0, 3, 'a', 'b', 'c', 0, 0, 0, 1, 'z' };

    (void) state;
    conn_pair(&conn, &peer);
    samsa_mempool_init(&pool, -1);
    assert_int_equal(write(peer, in, 2), 2);          /* half a size */
    assert_int_equal(samsa_conn_read(&conn, 100, &pool), SAMSA_ERR_NONE);
    assert_false(conn.recv_complete);
    assert_int_equal(write(peer, in + 2, sizeof(in) - 2), sizeof(in) - 2);
    assert_int_equal(samsa_conn_read(&conn, 100, &pool), SAMSA_ERR_NONE);
    assert_true(conn.recv_complete);
    p = samsa_conn_take_payload(&conn, &size);
    assert_int_equal(size, 3);
    assert_memory_equal(p, "abc", 3);
    samsa_free(p);
    assert_int_equal(samsa_conn_read(&conn, 100, &pool), SAMSA_ERR_NONE);
    assert_true(conn.recv_complete);
    p = samsa_conn_take_payload(&conn, &size);
    assert_int_equal(size, 1);
    assert_int_equal(p[0], 'z');
    samsa_free(p);
    close(peer);
    assert_int_equal(samsa_conn_read(&conn, 100, &pool), SAMSA_ERR__CLOSED);
    close(conn.fd);
}

/* An edge connection reads the next request's size prefix with the end of
 * this one, and knows from a short read that the socket is empty. */
static void
test_conn_edge_reads_the_next_size_with_this_request(void **state)
{
    samsa_conn_t     conn;
    samsa_mempool_t  pool;
    int              peer;
    int32_t          size;
    uint8_t         *p;
    const uint8_t    in[] = { 0, 0, 0, 3, 'a', 'b', 'c', 0, 0, 0, 2, 'y',
                              'z', 0, 0 };

    (void) state;
    conn_pair(&conn, &peer);
    conn.edge = true;
    conn.readable = true;
    samsa_mempool_init(&pool, -1);
    assert_int_equal(write(peer, in, 13), 13);  /* two frames */
    assert_int_equal(samsa_conn_read(&conn, 100, &pool), SAMSA_ERR_NONE);
    assert_true(conn.recv_complete);
    assert_int_equal(conn.next_size_got, 4);    /* came with "abc" */
    assert_true(conn.readable);                 /* asked 7, got 7 */
    p = samsa_conn_take_payload(&conn, &size);
    assert_int_equal(size, 3);
    assert_memory_equal(p, "abc", 3);
    samsa_free(p);
    assert_int_equal(conn.size_got, 4);
    assert_int_equal(conn.next_size_got, 0);
    /* the second: its size is here, its body in the socket, and no more */
    assert_int_equal(samsa_conn_read(&conn, 100, &pool), SAMSA_ERR_NONE);
    assert_true(conn.recv_complete);
    assert_false(conn.readable);                /* asked 6, got 2 */
    assert_int_equal(conn.next_size_got, 0);
    p = samsa_conn_take_payload(&conn, &size);
    assert_int_equal(size, 2);
    assert_memory_equal(p, "yz", 2);
    samsa_free(p);
    /* half of the next size: kept, and the rest read after it */
    assert_int_equal(write(peer, in + 13, 2), 2);
    conn.readable = true;
    assert_int_equal(samsa_conn_read(&conn, 100, &pool), SAMSA_ERR_NONE);
    assert_false(conn.recv_complete);
    assert_int_equal(conn.size_got, 2);
    assert_false(conn.readable);
    assert_int_equal(write(peer, "\x00\x01q", 3), 3);
    assert_int_equal(samsa_conn_read(&conn, 100, &pool), SAMSA_ERR_NONE);
    assert_true(conn.recv_complete);
    p = samsa_conn_take_payload(&conn, &size);
    assert_int_equal(size, 1);
    assert_int_equal(p[0], 'q');
    samsa_free(p);
    /* an empty socket: EAGAIN clears readable */
    conn.readable = true;
    assert_int_equal(samsa_conn_read(&conn, 100, &pool), SAMSA_ERR_NONE);
    assert_false(conn.recv_complete);
    assert_false(conn.readable);
    close(peer);
    close(conn.fd);
}

static void
test_conn_read_rejects_bad_sizes_and_mutes_on_pool(void **state)
{
    samsa_conn_t     conn;
    samsa_mempool_t  pool;
    int              peer;
    const uint8_t    big[] = { 0, 0, 0, 101 };
    const uint8_t    neg[] = { 0xff, 0xff, 0xff, 0xff };
    const uint8_t    ok[] = { 0, 0, 0, 10 };

    (void) state;
    samsa_mempool_init(&pool, -1);
    conn_pair(&conn, &peer);
    assert_int_equal(write(peer, big, 4), 4);
    assert_int_equal(samsa_conn_read(&conn, 100, &pool), SAMSA_ERR__BAD_MSG);
    close(peer);
    close(conn.fd);

    conn_pair(&conn, &peer);
    assert_int_equal(write(peer, neg, 4), 4);
    assert_int_equal(samsa_conn_read(&conn, 100, &pool), SAMSA_ERR__BAD_MSG);
    close(peer);
    close(conn.fd);

    samsa_mempool_init(&pool, 5);
    assert_true(samsa_mempool_try_take(&pool, 5));     /* exhaust it */
    conn_pair(&conn, &peer);
    assert_int_equal(write(peer, ok, 4), 4);
    assert_int_equal(samsa_conn_read(&conn, 100, &pool), SAMSA_ERR__FULL);
    assert_false(samsa_mempool_give(&pool, 0));
    assert_true(samsa_mempool_give(&pool, 5));
    assert_int_equal(samsa_conn_read(&conn, 100, &pool), SAMSA_ERR_NONE);
    assert_non_null(conn.payload);                     /* waiting for body */
    samsa_free(conn.payload);
    close(peer);
    close(conn.fd);
}

/* The pool is charged for the bytes that arrive, 64 KiB at a time, not
 * the size announced: a trickled 1 MiB request holds 64 KiB of a 128 KiB
 * pool. */
static void
test_conn_read_charges_as_bytes_arrive(void **state)
{
    samsa_conn_t     conn;
    samsa_mempool_t  pool;
    int              peer;
    int32_t          size;
    uint8_t         *p;
    const uint8_t    hdr[] = { 0, 0x10, 0, 0 };        /* 1 MiB */
    static uint8_t   chunk[65536];

    (void) state;
    samsa_mempool_init(&pool, 131072);
    conn_pair(&conn, &peer);
    assert_int_equal(write(peer, hdr, 4), 4);
    assert_int_equal(write(peer, "0123456789", 10), 10);
    assert_int_equal(samsa_conn_read(&conn, 1 << 21, &pool), SAMSA_ERR_NONE);
    assert_false(conn.recv_complete);
    assert_int_equal(conn.payload_got, 10);
    assert_int_equal(conn.charged, 65536);
    assert_int_equal(atomic_load(&pool.available), 131072 - 65536);
    /* a burst takes the second step and empties the pool */
    assert_int_equal(write(peer, chunk, sizeof(chunk)), sizeof(chunk));
    assert_int_equal(samsa_conn_read(&conn, 1 << 21, &pool), SAMSA_ERR_NONE);
    assert_int_equal(conn.payload_got, 10 + 65536);
    assert_int_equal(conn.charged, 131072);
    assert_true(samsa_mempool_is_exhausted(&pool));
    /* past what it was charged for, the connection mutes */
    assert_int_equal(write(peer, chunk, sizeof(chunk)), sizeof(chunk));
    assert_int_equal(samsa_conn_read(&conn, 1 << 21, &pool), SAMSA_ERR__FULL);
    assert_int_equal(conn.payload_got, 131072);
    /* the rest arrives once memory is back */
    assert_true(samsa_mempool_give(&pool, 1 << 20));
    while (conn.payload_got < (1 << 20)) {
        size_t  want = (size_t) ((1 << 20) - conn.payload_got);

        if (want > sizeof(chunk)) {
            want = sizeof(chunk);
        }
        assert_int_equal(write(peer, chunk, want), (ssize_t) want);
        assert_int_equal(samsa_conn_read(&conn, 1 << 21, &pool),
                         SAMSA_ERR_NONE);
    }
    assert_true(conn.recv_complete);
    assert_int_equal(conn.charged, 1 << 20);
    p = samsa_conn_take_payload(&conn, &size);
    assert_int_equal(size, 1 << 20);
    assert_memory_equal(p, "0123456789", 10);
    samsa_free(p);
    close(peer);
    close(conn.fd);
}

/* A frame with two file regions spliced in goes out byte-exact. */
static void
test_conn_write_frame_with_regions(void **state)
{
    samsa_conn_t   conn;
    samsa_send_t   send = SAMSA_SEND_INIT;
    char           path[] = "/tmp/samsa-test-conn-XXXXXX";
    char           out[64];
    int            peer, fd;
    bool           done = false;
    ssize_t        n;

    (void) state;
    fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    assert_int_equal(write(fd, "0123456789", 10), 10);
    conn_pair(&conn, &peer);
    samsa_buf_append(&send.frame, "HDR", 3);
    samsa_send_add_region(&send, dup(fd), 2, 3);       /* "234" */
    samsa_buf_append(&send.frame, "mid", 3);
    samsa_send_add_region(&send, dup(fd), 8, 2);       /* "89" */
    samsa_send_add_region(&send, dup(fd), 0, 1);       /* "0" */
    samsa_buf_append(&send.frame, "END", 3);
    assert_int_equal(send.regions_len, 6);
    conn.sending = &send;
    assert_int_equal(samsa_conn_write(&conn, &done), SAMSA_ERR_NONE);
    assert_true(done);
    n = read(peer, out, sizeof(out));
    assert_int_equal(n, 15);
    assert_memory_equal(out, "HDR234mid890END", 15);
    /* a region past the end of its file cannot complete the frame */
    conn.sending = &send;
    conn.send_off = 0;
    conn.send_region = 0;
    conn.region_off = 0;
    send.regions[1].offset = 9;                        /* only 1 byte left */
    assert_int_equal(samsa_conn_write(&conn, &done), SAMSA_ERR__IO);
    assert_false(done);
    samsa_send_fini(&send);
    close(fd);
    close(peer);
    close(conn.fd);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conn_read_one_frame_exactly),
        cmocka_unit_test(test_conn_edge_reads_the_next_size_with_this_request),
        cmocka_unit_test(test_conn_read_rejects_bad_sizes_and_mutes_on_pool),
        cmocka_unit_test(test_conn_read_charges_as_bytes_arrive),
        cmocka_unit_test(test_conn_write_frame_with_regions),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
