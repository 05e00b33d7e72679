/* Unit tests for broker/quota_mut.c: strict and permissive controller
 * mutation quotas (Kafka's StrictControllerMutationQuota and
 * PermissiveControllerMutationQuota over a TokenBucket), the levels and
 * the lock-free "no quota" path (the bucket math itself: test_tbucket.c). */
#include "unit.h"

#include <stdio.h>

#include "broker/quota_mut.h"
#include "meta/image.h"
#include "meta/meta.h"

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

typedef struct seen {
    int       n;
    char      user[32], client[32];
    double    quota, tokens;
    uint64_t  throttled, throttle_ms;
} seen_t;

static void
find_sensor(void *ctx, const samsa_mutquota_stat_t *st)
{
    seen_t  *s = ctx;

    if (strcmp(st->user, s->user) == 0
        && strcmp(st->client_id, s->client) == 0) {
        s->n++;
        s->quota = st->quota;
        s->tokens = st->tokens;
        s->throttled = st->throttled;
        s->throttle_ms = st->throttle_time_ms;
    }
}

static void
count_sensors(void *ctx, const samsa_mutquota_stat_t *st)
{
    (void) st;
    (*(int *) ctx)++;
}

/* No controller_mutation_rate anywhere (other keys do not count): every
 * request is unbounded and nothing is tracked. */
static void
test_mutquota_none(void **state)
{
    samsa_meta_t          *meta = samsa_meta_new();
    samsa_mutquota_mgr_t  *q = samsa_mutquota_mgr_new(meta, 2, 1);
    samsa_mutquota_t       mq;
    int                    nsensors = 0;

    (void) state;
    next_offset = 0;
    samsa_mutquota_begin(q, &mq, samsa_slice_cstr("x"), true);
    assert_null(samsa_mutquota_ctl(&mq));
    assert_true(samsa_mutquota_record(&mq, 1e9, T0));
    assert_int_equal(samsa_mutquota_end(&mq, T0), 0);
    set_quota(meta, NULL, "x", "producer_byte_rate", 10.0);
    samsa_mutquota_begin(q, &mq, samsa_slice_cstr("x"), true);
    assert_null(samsa_mutquota_ctl(&mq));
    /* a quota for another client id: x still has none */
    set_quota(meta, NULL, "y", "controller_mutation_rate", 1.0);
    samsa_mutquota_begin(q, &mq, samsa_slice_cstr("x"), true);
    assert_null(samsa_mutquota_ctl(&mq));
    samsa_mutquota_snapshot(q, T0, count_sensors, &nsensors);
    assert_int_equal(nsensors, 0);
    samsa_mutquota_mgr_free(q);
    samsa_meta_free(meta);
}

/* Strict: quota 2/s, 2 windows of 1 s, a burst of 4. */
static void
test_mutquota_strict(void **state)
{
    samsa_meta_t          *meta = samsa_meta_new();
    samsa_mutquota_mgr_t  *q = samsa_mutquota_mgr_new(meta, 2, 1);
    samsa_mutquota_t       mq;
    seen_t                 s = { .client = "x" };

    (void) state;
    next_offset = 0;
    set_quota(meta, NULL, "x", "controller_mutation_rate", 2.0);
    samsa_mutquota_begin(q, &mq, samsa_slice_cstr("x"), true);
    assert_non_null(samsa_mutquota_ctl(&mq));
    assert_true(samsa_mutquota_record(&mq, 2.0, T0));     /* 4 -> 2 */
    assert_true(samsa_mutquota_record(&mq, 10.0, T0));    /* 2 -> -8 */
    assert_false(samsa_mutquota_record(&mq, 1.0, T0));    /* refused */
    assert_false(samsa_mutquota_record(&mq, 1.0, T0 + 500));  /* -7 */
    /* the last refusal's 3500 ms, less the 100 ms since */
    assert_int_equal(samsa_mutquota_end(&mq, T0 + 600), 3400);

    /* a request that empties the bucket without a refusal has no throttle
     * time; the next one is refused */
    samsa_mutquota_begin(q, &mq, samsa_slice_cstr("x"), true);
    assert_true(samsa_mutquota_record(&mq, 1.0, T0 + 4000));  /* 0 -> -1 */
    assert_int_equal(samsa_mutquota_end(&mq, T0 + 4000), 0);
    samsa_mutquota_begin(q, &mq, samsa_slice_cstr("x"), true);
    assert_false(samsa_mutquota_record(&mq, 1.0, T0 + 4000));
    assert_int_equal(samsa_mutquota_end(&mq, T0 + 4000), 500);
    /* a throttle time that has passed is none */
    samsa_mutquota_begin(q, &mq, samsa_slice_cstr("x"), true);
    assert_false(samsa_mutquota_record(&mq, 1.0, T0 + 4200));  /* -0.6 */
    assert_int_equal(samsa_mutquota_end(&mq, T0 + 4700), 0);

    samsa_mutquota_snapshot(q, T0 + 4700, find_sensor, &s);
    assert_int_equal(s.n, 1);
    assert_true(s.quota == 2.0);
    assert_true(s.tokens > 0.39 && s.tokens < 0.41);   /* -0.6 + 0.5 s
                                                          * 2/s */
    assert_int_equal(s.throttled, 2);
    assert_int_equal(s.throttle_ms, 3900);

    /* removing the quota makes the next request unbounded */
    set_quota(meta, NULL, "x", "controller_mutation_rate", -1.0);
    samsa_mutquota_begin(q, &mq, samsa_slice_cstr("x"), true);
    assert_null(samsa_mutquota_ctl(&mq));
    samsa_mutquota_mgr_free(q);
    samsa_meta_free(meta);
}

/* Permissive: everything is accepted; the throttle time is that of the
 * last charge that left the bucket below zero. */
static void
test_mutquota_permissive(void **state)
{
    samsa_meta_t          *meta = samsa_meta_new();
    samsa_mutquota_mgr_t  *q = samsa_mutquota_mgr_new(meta, 2, 1);
    samsa_mutquota_t       mq;

    (void) state;
    next_offset = 0;
    set_quota(meta, NULL, DFLT, "controller_mutation_rate", 2.0);
    samsa_mutquota_begin(q, &mq, samsa_slice_cstr("x"), false);
    assert_true(samsa_mutquota_record(&mq, 4.0, T0));     /* 4 -> 0 */
    assert_int_equal(samsa_mutquota_end(&mq, T0), 0);
    samsa_mutquota_begin(q, &mq, samsa_slice_cstr("x"), false);
    assert_true(samsa_mutquota_record(&mq, 3.0, T0));     /* -3: 1500 */
    assert_true(samsa_mutquota_record(&mq, 2.0, T0));     /* -5: 2500 */
    assert_int_equal(samsa_mutquota_end(&mq, T0 + 200), 2300);
    /* the default client id's quota gives y a bucket of its own */
    samsa_mutquota_begin(q, &mq, samsa_slice_cstr("y"), true);
    assert_true(samsa_mutquota_record(&mq, 4.0, T0));
    assert_int_equal(samsa_mutquota_end(&mq, T0), 0);
    samsa_mutquota_mgr_free(q);
    samsa_meta_free(meta);
}

/* The user ANONYMOUS (level 3) beats client-id levels and its client ids
 * share one bucket (no client-id tag). */
static void
test_mutquota_levels(void **state)
{
    samsa_meta_t          *meta = samsa_meta_new();
    samsa_mutquota_mgr_t  *q = samsa_mutquota_mgr_new(meta, 11, 1);
    samsa_mutquota_t       mq;
    seen_t                 s = { .user = "ANONYMOUS" };

    (void) state;
    next_offset = 0;
    set_quota(meta, NULL, "x", "controller_mutation_rate", 100.0);
    set_quota(meta, "ANONYMOUS", NULL, "controller_mutation_rate", 1.0);
    samsa_mutquota_begin(q, &mq, samsa_slice_cstr("x"), true);
    assert_true(samsa_mutquota_record(&mq, 11.0, T0));    /* burst 11 */
    assert_true(samsa_mutquota_record(&mq, 1.0, T0));     /* 0 -> -1 */
    samsa_mutquota_begin(q, &mq, samsa_slice_cstr("y"), true);
    assert_false(samsa_mutquota_record(&mq, 1.0, T0));
    assert_int_equal(samsa_mutquota_end(&mq, T0), 1000);
    samsa_mutquota_snapshot(q, T0, find_sensor, &s);
    assert_int_equal(s.n, 1);
    assert_true(s.quota == 1.0);
    samsa_mutquota_mgr_free(q);
    samsa_meta_free(meta);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutquota_none),
        cmocka_unit_test(test_mutquota_strict),
        cmocka_unit_test(test_mutquota_permissive),
        cmocka_unit_test(test_mutquota_levels),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
