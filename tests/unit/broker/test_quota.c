/* Unit tests for broker/quota.c: which of Kafka's eight user/client-id
 * levels applies, which clients share a sensor, and the throttle time the
 * manager hands out, for byte rates and request time (the rate math
 * itself: test_qrate.c). */
#include "unit.h"

#include <stdio.h>

#include "broker/quota.h"
#include "meta/image.h"
#include "meta/meta.h"
#include "util/time.h"

#define DFLT     ((const char *) 1)     /* the default entity */

static int64_t  next_offset;

/* Publish the current image plus one ClientQuotaRecord.  user/client:
 * NULL absent, DFLT the default, else a name. */
static void
set_quota(samsa_meta_t *meta, const char *user, const char *client,
          const char *key, double value)
{
    samsa_MetadataRecords_any_t       rec;
    samsa_ClientQuotaRecordEntity_t   ent[2];
    samsa_image_t                    *base = samsa_meta_image_get(meta);
    samsa_image_delta_t              *d = samsa_image_delta_new(base);
    char                              err[256];
    int                               n = 0;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_ClientQuotaRecord;
    samsa_ClientQuotaRecord_init(&rec.u.ClientQuotaRecord);
    if (user != NULL) {
        samsa_ClientQuotaRecordEntity_init(&ent[n]);
        ent[n].EntityType = samsa_slice_cstr("user");
        ent[n++].EntityName = samsa_slice_cstr(user == DFLT ? NULL : user);
    }
    if (client != NULL) {
        samsa_ClientQuotaRecordEntity_init(&ent[n]);
        ent[n].EntityType = samsa_slice_cstr("client-id");
        ent[n++].EntityName = samsa_slice_cstr(client == DFLT ? NULL : client);
    }
    rec.u.ClientQuotaRecord.Entity = ent;
    rec.u.ClientQuotaRecord.Entity_cnt = n;
    rec.u.ClientQuotaRecord.Key = samsa_slice_cstr(key);
    rec.u.ClientQuotaRecord.Value = value;
    assert_int_equal(samsa_image_delta_replay(d, &rec, next_offset++, err,
                                              sizeof(err)),
                     SAMSA_ERR_NONE);
    samsa_meta_publish(meta, samsa_image_delta_apply(d));
    samsa_image_delta_free(d);
    samsa_image_put(base);
}

typedef struct seen {
    int     n;
    char    user[32], client[32];
    double  quota;
} seen_t;

static void
find_sensor(void *ctx, const samsa_quota_stat_t *st)
{
    seen_t  *s = ctx;

    if (st->type == SAMSA_QUOTA_PRODUCE && strcmp(st->user, s->user) == 0
        && strcmp(st->client_id, s->client) == 0) {
        s->n++;
        s->quota = st->quota;
    }
}

static void
count_sensors(void *ctx, const samsa_quota_stat_t *st)
{
    (void) st;
    (*(int *) ctx)++;
}

static int32_t
rec(samsa_quota_mgr_t *q, const char *client, double bytes, int64_t now)
{
    return samsa_quota_record(q, SAMSA_QUOTA_PRODUCE, samsa_slice_cstr(client),
                              bytes, now);
}

static void
test_quota_levels(void **state)
{
    samsa_meta_t       *meta = samsa_meta_new();
    samsa_quota_mgr_t  *q = samsa_quota_mgr_new(meta, 11, 1);
    seen_t              s = { 0 };
    int                 nsensors = 0;

    (void) state;
    next_offset = 0;
    /* no quota at all: nothing recorded, never throttled */
    assert_int_equal(rec(q, "x", 1e9, 0), 0);
    samsa_quota_snapshot(q, 0, count_sensors, &nsensors);
    assert_int_equal(nsensors, 0);

    /* default client-id (level 8): 100 B/s; 2000 B over the 10 s minimum
     * span is 200 B/s: (200 - 100) / 100 * 10 s */
    set_quota(meta, NULL, DFLT, "producer_byte_rate", 100.0);
    assert_int_equal(rec(q, "x", 2000.0, 0), 10000);
    snprintf(s.client, sizeof(s.client), "x");
    samsa_quota_snapshot(q, 0, find_sensor, &s);
    assert_int_equal(s.n, 1);
    assert_true(s.quota == 100.0);
    /* a consumer quota does not touch producers */
    set_quota(meta, "ANONYMOUS", NULL, "consumer_byte_rate", 1.0);
    assert_int_equal(rec(q, "y", 1500.0, 0), 5000);

    /* the user ANONYMOUS (level 3) beats client-id levels, and all of the
     * user's client ids share one sensor (no client-id tag) */
    set_quota(meta, "ANONYMOUS", NULL, "producer_byte_rate", 1000.0);
    assert_int_equal(rec(q, "x", 2000.0, 0), 0);
    assert_int_equal(rec(q, "y", 9000.0, 0), 1000);
    memset(&s, 0, sizeof(s));
    snprintf(s.user, sizeof(s.user), "ANONYMOUS");
    samsa_quota_snapshot(q, 0, find_sensor, &s);
    assert_int_equal(s.n, 1);
    assert_true(s.quota == 1000.0);

    /* default user + client-id x is level 4: the user alone (level 3)
     * still wins, x stays on the shared sensor (11001 B: 1001 ms) */
    set_quota(meta, DFLT, "x", "producer_byte_rate", 10.0);
    assert_int_equal(rec(q, "x", 1.0, 0), 1001);

    /* user + client-id x (level 1) beats everything for x only */
    set_quota(meta, "ANONYMOUS", "x", "producer_byte_rate", 50.0);
    assert_int_equal(rec(q, "x", 1000.0, 0), 10000);
    assert_int_equal(rec(q, "y", 1.0, 0), 1002);   /* 11002 B */

    samsa_quota_mgr_free(q);
    samsa_meta_free(meta);
}

/* A request a handler took at 0 and finished thread_ms later. */
static int32_t
rec_request(samsa_quota_mgr_t *q, samsa_req_t *req, const char *client,
            int64_t thread_ms)
{
    memset(req, 0, sizeof(*req));
    req->hdr.ClientId = samsa_slice_cstr(client);
    req->dequeue_ns = 1;
    req->local_done_ns = 1 + thread_ms * 1000000;
    return samsa_quota_record_request(q, req);
}

static void
find_request_sensor(void *ctx, const samsa_quota_stat_t *st)
{
    seen_t  *s = ctx;

    if (st->type == SAMSA_QUOTA_REQUEST
        && strcmp(st->client_id, s->client) == 0) {
        s->n++;
        s->quota = st->byte_rate;       /* the percentage, here */
    }
}

static void
test_quota_request(void **state)
{
    samsa_meta_t       *meta = samsa_meta_new();
    samsa_quota_mgr_t  *q = samsa_quota_mgr_new(meta, 11, 2);
    samsa_req_t         req;
    seen_t              s = { 0 };

    (void) state;
    next_offset = 0;
    /* no client quota: nothing recorded, by the network thread neither */
    assert_int_equal(rec_request(q, &req, "v", 5000), 0);
    assert_true(req.request_quota_done);
    assert_false(req.request_quota_net);
    /* a byte-rate quota does not limit request time */
    set_quota(meta, NULL, DFLT, "producer_byte_rate", 1.0);
    assert_int_equal(rec_request(q, &req, "v", 5000), 0);
    assert_true(req.request_quota_net);

    /* request_percentage 1 on client-id x: 100 ms of handler time is 10
     * (percent of a thread for a second); over the 20 s minimum span (10
     * windows of 2 s) that is 0.5 %: within */
    set_quota(meta, NULL, "x", "request_percentage", 1.0);
    assert_int_equal(rec_request(q, &req, "x", 100), 0);
    snprintf(s.client, sizeof(s.client), "x");
    samsa_quota_snapshot(q, samsa_now_ms(), find_request_sensor, &s);
    assert_int_equal(s.n, 1);
    assert_true(s.quota > 0.49 && s.quota < 0.51);
    /* 200 ms more is 1.5 %: (1.5 - 1) / 1 * 20 s = 10 s, capped at one
     * window (Kafka's ClientRequestQuotaManager): 2 s */
    assert_int_equal(rec_request(q, &req, "x", 200), 2000);
    /* another client id has no request quota */
    assert_int_equal(rec_request(q, &req, "y", 10000), 0);
    /* a fractional percentage applies too: 0.01 % of a thread */
    set_quota(meta, NULL, "w", "request_percentage", 0.01);
    assert_int_equal(rec_request(q, &req, "w", 1), 0);  /* 0.005 % */
    assert_int_equal(rec_request(q, &req, "w", 2), 2000); /* 0.015 % */

    /* the network thread's time counts without throttling (Kafka's
     * recordNoThrottle), and throttles the next request: 1 s more is
     * 100 / 20 s = 5 % on w */
    assert_true(req.request_quota_net);
    samsa_quota_record_request_net(q, &req, 1000000000);
    memset(&s, 0, sizeof(s));
    snprintf(s.client, sizeof(s.client), "w");
    samsa_quota_snapshot(q, samsa_now_ms(), find_request_sensor, &s);
    assert_true(s.quota > 5.0 && s.quota < 5.1);
    assert_int_equal(rec_request(q, &req, "w", 0), 2000);

    /* not yet marked done: the time runs to now */
    memset(&req, 0, sizeof(req));
    req.hdr.ClientId = samsa_slice_cstr("z");
    req.dequeue_ns = samsa_now_ns();
    assert_int_equal(samsa_quota_record_request(q, &req), 0);
    assert_true(req.local_done_ns >= req.dequeue_ns);

    samsa_quota_mgr_free(q);
    samsa_meta_free(meta);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quota_levels),
        cmocka_unit_test(test_quota_request),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
