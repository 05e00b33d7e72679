/* Unit tests for broker/quota.c: which of Kafka's eight user/client-id
 * levels applies, which clients share a sensor, each type's own
 * enablement, and the throttle time the manager hands out, for byte rates,
 * request time (and the fetch window's bound and a fetch's unrecording)
 * and strict and permissive controller mutation quotas
 * (Kafka's StrictControllerMutationQuota and
 * PermissiveControllerMutationQuota over a TokenBucket) (the rate and
 * bucket math itself: test_qrate.c, test_tbucket.c). */
#include "unit.h"

#include <stdio.h>

#include "broker/quota.h"
#include "meta/image.h"
#include "meta/meta.h"
#include "util/time.h"

#define DFLT     ((const char *) 1)     /* the default entity */
#define T0       1000000                /* ms: any start */

static int64_t  next_offset;

/* Publish the current image plus one ClientQuotaRecord setting (or, when
 * value < 0, removing) key.  user/client: NULL absent, DFLT the default,
 * else a name. */
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
    rec.u.ClientQuotaRecord.Value = value < 0.0 ? 0.0 : value;
    rec.u.ClientQuotaRecord.Remove = value < 0.0;
    assert_int_equal(samsa_image_delta_replay(d, &rec, next_offset++, err,
                                              sizeof(err)),
                     SAMSA_ERR_NONE);
    samsa_meta_publish(meta, samsa_image_delta_apply(d));
    samsa_image_delta_free(d);
    samsa_image_put(base);
}

/* What find_sensor saw of the sensor of type with these tags. */
typedef struct seen {
    samsa_quota_type_t  type;
    int                 n;
    char                user[32], client[32];
    double              quota, rate, tokens;
    uint64_t            throttled, throttle_ms;
} seen_t;

static void
find_sensor(void *ctx, const samsa_quota_stat_t *st)
{
    seen_t  *s = ctx;

    if (st->type == s->type && strcmp(st->user, s->user) == 0
        && strcmp(st->client_id, s->client) == 0) {
        s->n++;
        s->quota = st->quota;
        s->rate = st->rate;
        s->tokens = st->tokens;
        s->throttled = st->throttled;
        s->throttle_ms = st->throttle_time_ms;
    }
}

/* Counts the sensors, by type. */
static void
count_sensors(void *ctx, const samsa_quota_stat_t *st)
{
    ((int *) ctx)[st->type]++;
}

static int
count_all(const int *n)
{
    return n[SAMSA_QUOTA_PRODUCE] + n[SAMSA_QUOTA_FETCH]
           + n[SAMSA_QUOTA_REQUEST] + n[SAMSA_QUOTA_MUTATION];
}

static int32_t
rec(samsa_quota_mgr_t *q, const char *client, double bytes, int64_t now)
{
    return samsa_quota_record(q, SAMSA_QUOTA_PRODUCE, NULL,
                              samsa_slice_cstr(client), bytes, now);
}

static int32_t
rec_user(samsa_quota_mgr_t *q, const char *user, const char *client,
         double bytes, int64_t now)
{
    return samsa_quota_record(q, SAMSA_QUOTA_PRODUCE, user,
                              samsa_slice_cstr(client), bytes, now);
}

/* Authenticated users: the principal's name selects the user levels, one
 * sensor per user (tagged with its name), the default user for the rest;
 * the same client id under two users is two clients. */
static void
test_quota_users(void **state)
{
    samsa_meta_t       *meta = samsa_meta_new();
    samsa_quota_mgr_t  *q = samsa_quota_mgr_new(meta, 11, 1, 11, 1);
    seen_t              s = { .type = SAMSA_QUOTA_PRODUCE };

    (void) state;
    next_offset = 0;
    assert_string_equal(samsa_quota_user("User:alice"), "alice");
    assert_string_equal(samsa_quota_user("User:CN=a,O=b"), "CN=a,O=b");
    assert_string_equal(samsa_quota_user("User:ANONYMOUS"), "ANONYMOUS");
    assert_string_equal(samsa_quota_user(NULL), "ANONYMOUS");
    set_quota(meta, "alice", NULL, "producer_byte_rate", 100.0);
    set_quota(meta, "bob", NULL, "producer_byte_rate", 1000.0);
    set_quota(meta, DFLT, NULL, "producer_byte_rate", 10.0);
    /* 2000 B over the 10 s span: alice (100 B/s) 10 s, bob none */
    assert_int_equal(rec_user(q, "alice", "c", 2000.0, 0), 10000);
    assert_int_equal(rec_user(q, "bob", "c", 2000.0, 0), 0);
    /* carol and ANONYMOUS fall to the default user (10 B/s), each with
     * a sensor of its own (Kafka tags a default-user sensor with the
     * user): 200 B each, 10 s each */
    assert_int_equal(rec_user(q, "carol", "c", 200.0, 0), 10000);
    assert_int_equal(rec(q, "c", 200.0, 0), 10000);
    snprintf(s.user, sizeof(s.user), "alice");
    samsa_quota_snapshot(q, 0, find_sensor, &s);
    assert_int_equal(s.n, 1);
    assert_true(s.quota == 100.0);
    memset(&s, 0, sizeof(s));
    s.type = SAMSA_QUOTA_PRODUCE;
    snprintf(s.user, sizeof(s.user), "bob");
    samsa_quota_snapshot(q, 0, find_sensor, &s);
    assert_int_equal(s.n, 1);
    assert_true(s.quota == 1000.0);
    /* alice + client-id c (level 1) beats alice's own quota for c only;
     * d stays on alice's sensor: 2001 B, 10.01 s */
    set_quota(meta, "alice", "c", "producer_byte_rate", 1e6);
    assert_int_equal(rec_user(q, "alice", "c", 2000.0, 0), 0);
    assert_int_equal(rec_user(q, "alice", "d", 1.0, 0), 10010);
    samsa_quota_mgr_free(q);
    samsa_meta_free(meta);
}

static void
test_quota_levels(void **state)
{
    samsa_meta_t       *meta = samsa_meta_new();
    samsa_quota_mgr_t  *q = samsa_quota_mgr_new(meta, 11, 1, 11, 1);
    seen_t              s = { .type = SAMSA_QUOTA_PRODUCE };
    int                 nsensors[SAMSA_QUOTA__NTYPES] = { 0 };

    (void) state;
    next_offset = 0;
    /* no quota at all: nothing recorded, never throttled */
    assert_int_equal(rec(q, "x", 1e9, 0), 0);
    samsa_quota_snapshot(q, 0, count_sensors, nsensors);
    assert_int_equal(count_all(nsensors), 0);

    /* default client-id (level 8): 100 B/s; 2000 B over the 10 s minimum
     * span is 200 B/s: (200 - 100) / 100 * 10 s */
    set_quota(meta, NULL, DFLT, "producer_byte_rate", 100.0);
    assert_int_equal(rec(q, "x", 2000.0, 0), 10000);
    snprintf(s.client, sizeof(s.client), "x");
    samsa_quota_snapshot(q, 0, find_sensor, &s);
    assert_int_equal(s.n, 1);
    assert_true(s.quota == 100.0);
    /* only Produce is enabled: a fetch records nothing, and no sensor of
     * another type exists */
    assert_int_equal(samsa_quota_record(q, SAMSA_QUOTA_FETCH, NULL,
                                        samsa_slice_cstr("x"), 1e9, 0), 0);
    samsa_quota_snapshot(q, 0, count_sensors, nsensors);
    assert_int_equal(nsensors[SAMSA_QUOTA_PRODUCE], 1);
    assert_int_equal(count_all(nsensors), 1);
    /* a consumer quota does not touch producers */
    set_quota(meta, "ANONYMOUS", NULL, "consumer_byte_rate", 1.0);
    assert_int_equal(rec(q, "y", 1500.0, 0), 5000);

    /* the user ANONYMOUS (level 3) beats client-id levels, and all of the
     * user's client ids share one sensor (no client-id tag) */
    set_quota(meta, "ANONYMOUS", NULL, "producer_byte_rate", 1000.0);
    assert_int_equal(rec(q, "x", 2000.0, 0), 0);
    assert_int_equal(rec(q, "y", 9000.0, 0), 1000);
    memset(&s, 0, sizeof(s));
    s.type = SAMSA_QUOTA_PRODUCE;
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
test_quota_request(void **state)
{
    samsa_meta_t       *meta = samsa_meta_new();
    samsa_quota_mgr_t  *q = samsa_quota_mgr_new(meta, 11, 2, 11, 1);
    samsa_req_t         req;
    seen_t              s = { .type = SAMSA_QUOTA_REQUEST };
    int                 nsensors[SAMSA_QUOTA__NTYPES] = { 0 };

    (void) state;
    next_offset = 0;
    /* no client quota: nothing recorded, by the network thread neither */
    assert_int_equal(rec_request(q, &req, "v", 5000), 0);
    assert_true(req.request_quota_done);
    assert_false(req.request_quota_net);
    /* a byte-rate quota does not enable request quotas (Kafka enables each
     * type on its own): nothing is recorded, by the network thread
     * neither, and no Request sensor exists */
    set_quota(meta, NULL, DFLT, "producer_byte_rate", 1.0);
    assert_int_equal(rec_request(q, &req, "v", 5000), 0);
    assert_false(req.request_quota_net);
    samsa_quota_record_request_net(q, &req, 1000000000);
    samsa_quota_snapshot(q, samsa_now_ms(), count_sensors, nsensors);
    assert_int_equal(count_all(nsensors), 0);

    /* request_percentage 1 on client-id x: 100 ms of handler time is 10
     * (percent of a thread for a second); over the 20 s minimum span (10
     * windows of 2 s) that is 0.5 %: within */
    set_quota(meta, NULL, "x", "request_percentage", 1.0);
    assert_int_equal(rec_request(q, &req, "x", 100), 0);
    snprintf(s.client, sizeof(s.client), "x");
    samsa_quota_snapshot(q, samsa_now_ms(), find_sensor, &s);
    assert_int_equal(s.n, 1);
    assert_true(s.rate > 0.49 && s.rate < 0.51);
    /* 200 ms more is 1.5 %: (1.5 - 1) / 1 * 20 s = 10 s, capped at one
     * window (Kafka's ClientRequestQuotaManager): 2 s */
    assert_int_equal(rec_request(q, &req, "x", 200), 2000);
    /* another client id has no request quota, but request quotas are
     * enabled now: its time is recorded (limit 0) */
    assert_int_equal(rec_request(q, &req, "y", 10000), 0);
    assert_true(req.request_quota_net);
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
    s.type = SAMSA_QUOTA_REQUEST;
    snprintf(s.client, sizeof(s.client), "w");
    samsa_quota_snapshot(q, samsa_now_ms(), find_sensor, &s);
    assert_true(s.rate > 5.0 && s.rate < 5.1);
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

static int32_t
rec_fetch(samsa_quota_mgr_t *q, const char *client, double bytes, int64_t now)
{
    return samsa_quota_record(q, SAMSA_QUOTA_FETCH, NULL,
                              samsa_slice_cstr(client),
                              bytes, now);
}

/* Kafka's getMaxValueInQuotaWindow: quota * (quota.window.num - 1) *
 * quota.window.size.seconds where a quota applies, else unbounded. */
static void
test_quota_max_in_window(void **state)
{
    samsa_meta_t       *meta = samsa_meta_new();
    samsa_quota_mgr_t  *q = samsa_quota_mgr_new(meta, 11, 1, 11, 1);
    samsa_quota_mgr_t  *q2 = samsa_quota_mgr_new(meta, 3, 2, 11, 1);

    (void) state;
    next_offset = 0;
    assert_true(samsa_quota_max_in_window(q, SAMSA_QUOTA_FETCH, NULL,
                                          samsa_slice_cstr("c"))
                == INT64_MAX);
    set_quota(meta, NULL, "c", "consumer_byte_rate", 10000.0);
    assert_true(samsa_quota_max_in_window(q, SAMSA_QUOTA_FETCH, NULL,
                                          samsa_slice_cstr("c"))
                == 100000);
    /* 3 windows of 2 s: 10000 * 2 * 2 */
    assert_true(samsa_quota_max_in_window(q2, SAMSA_QUOTA_FETCH, NULL,
                                          samsa_slice_cstr("c"))
                == 40000);
    /* the type is enabled but no level applies to d */
    assert_true(samsa_quota_max_in_window(q, SAMSA_QUOTA_FETCH, NULL,
                                          samsa_slice_cstr("d"))
                == INT64_MAX);
    /* Produce is not enabled */
    assert_true(samsa_quota_max_in_window(q, SAMSA_QUOTA_PRODUCE, NULL,
                                          samsa_slice_cstr("c"))
                == INT64_MAX);
    /* a default client-id quota bounds d too, and c keeps its own */
    set_quota(meta, NULL, DFLT, "consumer_byte_rate", 500.0);
    assert_true(samsa_quota_max_in_window(q, SAMSA_QUOTA_FETCH, NULL,
                                          samsa_slice_cstr("d"))
                == 5000);
    assert_true(samsa_quota_max_in_window(q, SAMSA_QUOTA_FETCH, NULL,
                                          samsa_slice_cstr("c"))
                == 100000);
    samsa_quota_mgr_free(q2);
    samsa_quota_mgr_free(q);
    samsa_meta_free(meta);
}

/* Kafka's unrecordQuotaSensor: a throttled fetch's bytes come back out of
 * the rate, so the next fetch is judged as if it had not been. */
static void
test_quota_unrecord(void **state)
{
    samsa_meta_t       *meta = samsa_meta_new();
    samsa_quota_mgr_t  *q = samsa_quota_mgr_new(meta, 11, 1, 11, 1);
    seen_t              s = { .type = SAMSA_QUOTA_FETCH };

    (void) state;
    next_offset = 0;
    /* nothing enabled: a no-op */
    samsa_quota_unrecord(q, SAMSA_QUOTA_FETCH, NULL, samsa_slice_cstr("c"),
                         5.0, T0);
    set_quota(meta, NULL, "c", "consumer_byte_rate", 10000.0);
    /* 100000 B over the 10 s minimum span: right at the quota */
    assert_int_equal(rec_fetch(q, "c", 100000.0, T0), 0);
    /* 1000 B more: (10100 - 10000) / 10000 * 10 s */
    assert_int_equal(rec_fetch(q, "c", 1000.0, T0), 100);
    samsa_quota_unrecord(q, SAMSA_QUOTA_FETCH, NULL, samsa_slice_cstr("c"),
                         1000.0, T0);
    snprintf(s.client, sizeof(s.client), "c");
    samsa_quota_snapshot(q, T0, find_sensor, &s);
    assert_int_equal(s.n, 1);
    assert_true(s.rate > 9999.9 && s.rate < 10000.1);
    /* the throttle it earned stays counted */
    assert_int_equal(s.throttled, 1);
    assert_int_equal(s.throttle_ms, 100);
    /* the same 1000 B again earns the same, not (10200 - 10000) ... */
    assert_int_equal(rec_fetch(q, "c", 1000.0, T0), 100);
    /* and taking back all lets the window's worth through again */
    samsa_quota_unrecord(q, SAMSA_QUOTA_FETCH, NULL, samsa_slice_cstr("c"),
                         101000.0, T0);
    assert_int_equal(rec_fetch(q, "c", 100000.0, T0), 0);
    samsa_quota_mgr_free(q);
    samsa_meta_free(meta);
}

/* No controller_mutation_rate anywhere (other keys do not count): every
 * request is unbounded and nothing is tracked. */
static void
test_quota_mutation_none(void **state)
{
    samsa_meta_t           *meta = samsa_meta_new();
    samsa_quota_mgr_t      *q = samsa_quota_mgr_new(meta, 11, 1, 2, 1);
    samsa_quota_mutation_t  mq;
    int                     nsensors[SAMSA_QUOTA__NTYPES] = { 0 };

    (void) state;
    next_offset = 0;
    samsa_quota_mutation_begin(q, &mq, NULL, samsa_slice_cstr("x"), true);
    assert_null(samsa_quota_mutation_ctl(&mq));
    assert_true(samsa_quota_mutation_record(&mq, 1e9, T0));
    assert_int_equal(samsa_quota_mutation_end(&mq, T0), 0);
    set_quota(meta, NULL, "x", "producer_byte_rate", 10.0);
    samsa_quota_mutation_begin(q, &mq, NULL, samsa_slice_cstr("x"), true);
    assert_null(samsa_quota_mutation_ctl(&mq));
    /* a quota for another client id: x still has none */
    set_quota(meta, NULL, "y", "controller_mutation_rate", 1.0);
    samsa_quota_mutation_begin(q, &mq, NULL, samsa_slice_cstr("x"), true);
    assert_null(samsa_quota_mutation_ctl(&mq));
    samsa_quota_snapshot(q, T0, count_sensors, nsensors);
    assert_int_equal(count_all(nsensors), 0);
    samsa_quota_mgr_free(q);
    samsa_meta_free(meta);
}

/* Strict: quota 2/s, 2 windows of 1 s, a burst of 4. */
static void
test_quota_mutation_strict(void **state)
{
    samsa_meta_t           *meta = samsa_meta_new();
    samsa_quota_mgr_t      *q = samsa_quota_mgr_new(meta, 11, 1, 2, 1);
    samsa_quota_mutation_t  mq;
    seen_t                  s = { .type = SAMSA_QUOTA_MUTATION,
                                  .client = "x" };

    (void) state;
    next_offset = 0;
    set_quota(meta, NULL, "x", "controller_mutation_rate", 2.0);
    samsa_quota_mutation_begin(q, &mq, NULL, samsa_slice_cstr("x"), true);
    assert_non_null(samsa_quota_mutation_ctl(&mq));
    assert_true(samsa_quota_mutation_record(&mq, 2.0, T0));     /* 4 -> 2 */
    assert_true(samsa_quota_mutation_record(&mq, 10.0, T0));    /* 2 -> -8 */
    assert_false(samsa_quota_mutation_record(&mq, 1.0, T0));    /* refused */
    assert_false(samsa_quota_mutation_record(&mq, 1.0, T0 + 500));  /* -7 */
    /* the last refusal's 3500 ms, less the 100 ms since */
    assert_int_equal(samsa_quota_mutation_end(&mq, T0 + 600), 3400);

    /* a request that empties the bucket without a refusal has no throttle
     * time; the next one is refused */
    samsa_quota_mutation_begin(q, &mq, NULL, samsa_slice_cstr("x"), true);
    assert_true(samsa_quota_mutation_record(&mq, 1.0, T0 + 4000)); /* 0 -> -1 */
    assert_int_equal(samsa_quota_mutation_end(&mq, T0 + 4000), 0);
    samsa_quota_mutation_begin(q, &mq, NULL, samsa_slice_cstr("x"), true);
    assert_false(samsa_quota_mutation_record(&mq, 1.0, T0 + 4000));
    assert_int_equal(samsa_quota_mutation_end(&mq, T0 + 4000), 500);
    /* a throttle time that has passed is none */
    samsa_quota_mutation_begin(q, &mq, NULL, samsa_slice_cstr("x"), true);
    assert_false(samsa_quota_mutation_record(&mq, 1.0, T0 + 4200));  /* -0.6 */
    assert_int_equal(samsa_quota_mutation_end(&mq, T0 + 4700), 0);

    samsa_quota_snapshot(q, T0 + 4700, find_sensor, &s);
    assert_int_equal(s.n, 1);
    assert_true(s.quota == 2.0);
    assert_true(s.tokens > 0.39 && s.tokens < 0.41);   /* -0.6 + 0.5 s
                                                          * 2/s */
    assert_int_equal(s.throttled, 2);
    assert_int_equal(s.throttle_ms, 3900);

    /* removing the quota makes the next request unbounded */
    set_quota(meta, NULL, "x", "controller_mutation_rate", -1.0);
    samsa_quota_mutation_begin(q, &mq, NULL, samsa_slice_cstr("x"), true);
    assert_null(samsa_quota_mutation_ctl(&mq));
    samsa_quota_mgr_free(q);
    samsa_meta_free(meta);
}

/* Permissive: everything is accepted; the throttle time is that of the
 * last charge that left the bucket below zero. */
static void
test_quota_mutation_permissive(void **state)
{
    samsa_meta_t           *meta = samsa_meta_new();
    samsa_quota_mgr_t      *q = samsa_quota_mgr_new(meta, 11, 1, 2, 1);
    samsa_quota_mutation_t  mq;

    (void) state;
    next_offset = 0;
    set_quota(meta, NULL, DFLT, "controller_mutation_rate", 2.0);
    samsa_quota_mutation_begin(q, &mq, NULL, samsa_slice_cstr("x"), false);
    assert_true(samsa_quota_mutation_record(&mq, 4.0, T0));     /* 4 -> 0 */
    assert_int_equal(samsa_quota_mutation_end(&mq, T0), 0);
    samsa_quota_mutation_begin(q, &mq, NULL, samsa_slice_cstr("x"), false);
    assert_true(samsa_quota_mutation_record(&mq, 3.0, T0));     /* -3: 1500 */
    assert_true(samsa_quota_mutation_record(&mq, 2.0, T0));     /* -5: 2500 */
    assert_int_equal(samsa_quota_mutation_end(&mq, T0 + 200), 2300);
    /* the default client id's quota gives y a bucket of its own */
    samsa_quota_mutation_begin(q, &mq, NULL, samsa_slice_cstr("y"), true);
    assert_true(samsa_quota_mutation_record(&mq, 4.0, T0));
    assert_int_equal(samsa_quota_mutation_end(&mq, T0), 0);
    samsa_quota_mgr_free(q);
    samsa_meta_free(meta);
}

/* The user ANONYMOUS (level 3) beats client-id levels and its client ids
 * share one bucket (no client-id tag). */
static void
test_quota_mutation_levels(void **state)
{
    samsa_meta_t           *meta = samsa_meta_new();
    samsa_quota_mgr_t      *q = samsa_quota_mgr_new(meta, 11, 1, 11, 1);
    samsa_quota_mutation_t  mq;
    seen_t                  s = { .type = SAMSA_QUOTA_MUTATION,
                                  .user = "ANONYMOUS" };

    (void) state;
    next_offset = 0;
    set_quota(meta, NULL, "x", "controller_mutation_rate", 100.0);
    set_quota(meta, "ANONYMOUS", NULL, "controller_mutation_rate", 1.0);
    samsa_quota_mutation_begin(q, &mq, NULL, samsa_slice_cstr("x"), true);
    assert_true(samsa_quota_mutation_record(&mq, 11.0, T0));    /* burst 11 */
    assert_true(samsa_quota_mutation_record(&mq, 1.0, T0));     /* 0 -> -1 */
    samsa_quota_mutation_begin(q, &mq, NULL, samsa_slice_cstr("y"), true);
    assert_false(samsa_quota_mutation_record(&mq, 1.0, T0));
    assert_int_equal(samsa_quota_mutation_end(&mq, T0), 1000);
    samsa_quota_snapshot(q, T0, find_sensor, &s);
    assert_int_equal(s.n, 1);
    assert_true(s.quota == 1.0);
    samsa_quota_mgr_free(q);
    samsa_meta_free(meta);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quota_levels),
        cmocka_unit_test(test_quota_users),
        cmocka_unit_test(test_quota_request),
        cmocka_unit_test(test_quota_max_in_window),
        cmocka_unit_test(test_quota_unrecord),
        cmocka_unit_test(test_quota_mutation_none),
        cmocka_unit_test(test_quota_mutation_strict),
        cmocka_unit_test(test_quota_mutation_permissive),
        cmocka_unit_test(test_quota_mutation_levels),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
