/*
 * tests/unit/client/test_netclient_throttle.c - KIP-219 in the netclient:
 * after a response whose version leaves the waiting to the client
 * (Metadata v6+) says ThrottleTimeMs, the next request is not written to
 * the broker before the throttle ends, even by a caller that does not ask
 * samsa_netclient_ready first; before that version (Metadata v5) the
 * broker has done the waiting and the next request goes at once.
 *
 * A fake broker thread on a loopback port answers ApiVersions and
 * Metadata and notes when each request arrives.
 */
#include "unit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/netclient.h"
#include "proto/gen/ApiVersions.h"
#include "proto/gen/Metadata.h"
#include "proto/gen/apis.h"
#include "proto/resphdr.h"
#include "util/buf.h"
#include "util/endian.h"
#include "util/time.h"

#define THROTTLE_MS  700
#define MAX_REQS     8

typedef struct fake_broker {
    int        lfd;
    int        port;
    int32_t    throttle_ms;     /* in every Metadata response */
    pthread_t  thread;
    int        nmeta;
    int64_t    meta_at[MAX_REQS];       /* when each Metadata arrived */
    int64_t    meta_answered[MAX_REQS]; /* when its response was written */
} fake_broker_t;

/* Read (out false) or write all n bytes; false on EOF or an error. */
static bool
io_full(int fd, void *p, size_t n, bool out)
{
    uint8_t  *b = p;
    ssize_t   r;

    while (n > 0) {
        r = out ? write(fd, b, n) : read(fd, b, n);
        if (r <= 0) {
            return false;
        }
        b += r;
        n -= (size_t) r;
    }
    return true;
}

/* Write the answer to one request; false if the client has gone.  (No
 * cmocka asserts on this thread: they jump to the main thread's stack.) */
static bool
fake_answer(fake_broker_t *fb, int fd, int16_t api, int16_t ver, int32_t corr)
{
    samsa_buf_t                  frame = SAMSA_BUF_INIT;
    samsa_wr_t                   wr;
    samsa_ApiVersionsResponse_t  av;
    samsa_ApiVersion_t           keys[2];
    samsa_MetadataResponse_t     md;
    bool                         ok;

    samsa_wr_init(&wr, &frame);
    samsa_wr_i32(&wr, 0);
    samsa_resphdr_encode(&wr, api, ver, corr);
    if (api == SAMSA_API_ApiVersions) {
        samsa_ApiVersionsResponse_init(&av);
        keys[0] = (samsa_ApiVersion_t) { SAMSA_API_ApiVersions, 0, 3 };
        keys[1] = (samsa_ApiVersion_t) { SAMSA_API_Metadata, 0, 12 };
        av.ApiKeys = keys;
        av.ApiKeys_cnt = 2;
        samsa_ApiVersionsResponse_encode(&wr, ver, &av);
    } else {
        samsa_MetadataResponse_init(&md);
        md.ThrottleTimeMs = fb->throttle_ms;
        md.ControllerId = 1;
        samsa_MetadataResponse_encode(&wr, ver, &md);
    }
    samsa_store_be32(frame.data, (uint32_t) (frame.len - 4));
    ok = io_full(fd, frame.data, frame.len, true);
    samsa_buf_fini(&frame);
    return ok;
}

static void *
fake_run(void *arg)
{
    fake_broker_t  *fb = arg;
    int             fd = accept(fb->lfd, NULL, NULL);
    uint8_t         hdr[4], *payload;
    uint32_t        size;
    int16_t         api, ver;
    int32_t         corr;

    if (fd < 0) {
        return NULL;
    }
    while (io_full(fd, hdr, 4, false)) {
        size = samsa_load_be32(hdr);
        if (size < 8 || size > (1u << 20)) {
            break;
        }
        payload = malloc(size);
        if (payload == NULL || !io_full(fd, payload, size, false)) {
            free(payload);
            break;
        }
        api = (int16_t) samsa_load_be16(payload);
        ver = (int16_t) samsa_load_be16(payload + 2);
        corr = (int32_t) samsa_load_be32(payload + 4);
        free(payload);
        if (api == SAMSA_API_Metadata && fb->nmeta < MAX_REQS) {
            fb->meta_at[fb->nmeta] = samsa_now_ms();
        }
        if (!fake_answer(fb, fd, api, ver, corr)) {
            break;
        }
        if (api == SAMSA_API_Metadata && fb->nmeta < MAX_REQS) {
            fb->meta_answered[fb->nmeta++] = samsa_now_ms();
        }
    }
    close(fd);
    return NULL;
}

static void
fake_start(fake_broker_t *fb, int32_t throttle_ms)
{
    struct sockaddr_in  sa;
    socklen_t           len = sizeof(sa);

    memset(fb, 0, sizeof(*fb));
    fb->throttle_ms = throttle_ms;
    fb->lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fb->lfd >= 0);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fb->lfd, (struct sockaddr *) &sa, sizeof(sa)), 0);
    assert_int_equal(listen(fb->lfd, 4), 0);
    assert_int_equal(getsockname(fb->lfd, (struct sockaddr *) &sa, &len), 0);
    fb->port = ntohs(sa.sin_port);
    assert_int_equal(pthread_create(&fb->thread, NULL, fake_run, fb), 0);
}

static void
fake_stop(fake_broker_t *fb)
{
    pthread_join(fb->thread, NULL);
    close(fb->lfd);
}

typedef struct answer {
    bool         done;
    samsa_err_t  err;
} answer_t;

static void
on_answer(void *ctx, int32_t node, samsa_err_t err, samsa_rd_t *body,
          void *opaque)
{
    answer_t  *a = ctx;

    (void) node;
    (void) body;
    (void) opaque;
    a->done = true;
    a->err = err;
}

/* Send a Metadata request of version ver to node 1 without asking
 * samsa_netclient_ready (as the admin client's coordinator calls do) and
 * poll until it is answered. */
static void
metadata_roundtrip(samsa_netclient_t *nc, int16_t ver)
{
    samsa_buf_t              frame = SAMSA_BUF_INIT;
    samsa_wr_t               wr;
    samsa_MetadataRequest_t  req;
    answer_t                 a = { false, SAMSA_ERR_NONE };
    int64_t                  deadline = samsa_now_ms() + 10000;

    samsa_MetadataRequest_init(&req);
    samsa_netclient_frame_begin(nc, SAMSA_API_Metadata, ver, &frame, &wr);
    samsa_MetadataRequest_encode(&wr, ver, &req);
    assert_int_equal(samsa_netclient_send(nc, 1, &frame, SAMSA_API_Metadata,
                                          ver, true, on_answer, &a, NULL,
                                          samsa_now_ms()),
                     SAMSA_ERR_NONE);
    while (!a.done && samsa_now_ms() < deadline) {
        samsa_netclient_poll(nc, 100);
    }
    assert_true(a.done);
    assert_int_equal(a.err, SAMSA_ERR_NONE);
}

static samsa_netclient_t *
connect_to(const fake_broker_t *fb)
{
    samsa_nc_conf_t     conf = {
        .client_id = "throttle-test", .max_in_flight = 5,
        .request_timeout_ms = 30000, .reconnect_backoff_ms = 50,
        .reconnect_backoff_max_ms = 1000,
        .connection_setup_timeout_ms = 10000, .send_buffer_bytes = -1,
        .receive_buffer_bytes = -1, .log_name = "test",
    };
    samsa_netclient_t  *nc = samsa_netclient_new(&conf);
    int64_t             deadline = samsa_now_ms() + 10000;

    samsa_netclient_node_set(nc, 1, "127.0.0.1", fb->port);
    while (!samsa_netclient_ready(nc, 1, samsa_now_ms())
           && samsa_now_ms() < deadline) {
        samsa_netclient_poll(nc, 50);
    }
    assert_true(samsa_netclient_ready(nc, 1, samsa_now_ms()));
    return nc;
}

static void
test_throttled_response_holds_next_request(void **state)
{
    fake_broker_t       fb;
    samsa_netclient_t  *nc;
    int64_t             gap;

    (void) state;
    fake_start(&fb, THROTTLE_MS);
    nc = connect_to(&fb);
    metadata_roundtrip(nc, 12);
    assert_false(samsa_netclient_ready(nc, 1, samsa_now_ms()));
    metadata_roundtrip(nc, 12);
    samsa_netclient_free(nc);
    fake_stop(&fb);
    assert_int_equal(fb.nmeta, 2);
    gap = fb.meta_at[1] - fb.meta_answered[0];
    /* the client counts from when it read the response, after the
     * broker wrote it: the gap is at least the throttle, less a little
     * for clock granularity */
    assert_true(gap >= THROTTLE_MS - 20);
}

static void
test_old_version_is_not_held(void **state)
{
    fake_broker_t       fb;
    samsa_netclient_t  *nc;
    int64_t             gap;

    (void) state;
    fake_start(&fb, THROTTLE_MS);
    nc = connect_to(&fb);
    metadata_roundtrip(nc, 5);          /* the broker waited already */
    assert_true(samsa_netclient_ready(nc, 1, samsa_now_ms()));
    metadata_roundtrip(nc, 5);
    samsa_netclient_free(nc);
    fake_stop(&fb);
    assert_int_equal(fb.nmeta, 2);
    gap = fb.meta_at[1] - fb.meta_answered[0];
    assert_true(gap < THROTTLE_MS);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_throttled_response_holds_next_request),
        cmocka_unit_test(test_old_version_is_not_held),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
