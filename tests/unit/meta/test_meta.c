/* Unit tests for meta/meta.c: publishing images while reader threads take
 * and release them (run under TSan and ASan by the sanitizer builds):
 * every image a reader gets is whole and at least as new as the one before
 * it, and listeners see each change once, in order.  With the publisher's
 * wait for pinned readers removed, the ASan build of this test reports a
 * heap-use-after-free within a few runs (checked by hand). */
#include "unit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "meta/meta.h"

#define READERS     4
#define IMAGES      20000

typedef struct reader {
    samsa_meta_t  *meta;
    atomic_bool   *stop;
    long           gets;
    bool           ok;
} reader_t;

static samsa_uuid_t
id_of(int64_t k)
{
    samsa_uuid_t  id;

    memset(&id, 0, sizeof(id));
    id.b[0] = 0x40;
    memcpy(&id.b[8], &k, sizeof(k));
    return id;
}

/* Image k (k >= 1) holds exactly topic "t<k>" with id_of(k), with one
 * partition, at offset k; the start image is empty. */
static bool
image_is_whole(const samsa_image_t *img)
{
    const samsa_image_topic_t  *t;
    int64_t                     k = samsa_image_offset(img);
    char                        name[32];

    if (k < 0) {
        return samsa_image_topic_count(img) == 0;
    }
    snprintf(name, sizeof(name), "t%lld", (long long) k);
    t = samsa_image_topic_find(img, name, strlen(name));
    return samsa_image_topic_count(img) == 1 && t != NULL
           && t == samsa_image_topic_at(img, 0)
           && samsa_uuid_eq(t->id, id_of(k)) && t->npartitions == 1
           && t->partitions[0].leader == 1;
}

static void *
reader_main(void *arg)
{
    reader_t  *r = arg;
    int64_t    last = -1;

    r->ok = true;
    while (!atomic_load(r->stop)) {
        samsa_image_t  *img = samsa_meta_image_get(r->meta);

        if (samsa_image_offset(img) < last || !image_is_whole(img)) {
            r->ok = false;
        }
        last = samsa_image_offset(img);
        samsa_image_put(img);
        r->gets++;
    }
    return NULL;
}

typedef struct listen_state {
    int      calls;
    int64_t  last;
    bool     ok;
} listen_state_t;

static void
on_change(void *ctx, const samsa_image_t *old_img,
          const samsa_image_t *new_img)
{
    listen_state_t  *s = ctx;

    if (samsa_image_offset(old_img) != s->last
        || samsa_image_offset(new_img) <= s->last) {
        s->ok = false;
    }
    s->last = samsa_image_offset(new_img);
    s->calls++;
}

static void
replay(samsa_image_delta_t *d, samsa_MetadataRecords_any_t *rec, int64_t k)
{
    char  err[256];

    assert_int_equal(samsa_image_delta_replay(d, rec, k, err, sizeof(err)),
                     SAMSA_ERR_NONE);
}

/* Image k from image k-1: topic t<k-1> removed, t<k> added. */
static samsa_image_t *
next_image(samsa_image_t *prev, int64_t k)
{
    samsa_image_delta_t          *d = samsa_image_delta_new(prev);
    samsa_MetadataRecords_any_t   rec;
    char                          name[32];
    int32_t                       node = 1;
    samsa_image_t                *img;

    memset(&rec, 0, sizeof(rec));
    if (k > 1) {
        rec.type = SAMSA_MetadataRecords_RemoveTopicRecord;
        rec.u.RemoveTopicRecord.TopicId = id_of(k - 1);
        replay(d, &rec, k);
    }
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_TopicRecord;
    snprintf(name, sizeof(name), "t%lld", (long long) k);
    rec.u.TopicRecord.Name = samsa_slice_cstr(name);
    rec.u.TopicRecord.TopicId = id_of(k);
    replay(d, &rec, k);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_PartitionRecord;
    samsa_PartitionRecord_init(&rec.u.PartitionRecord);
    rec.u.PartitionRecord.TopicId = id_of(k);
    rec.u.PartitionRecord.PartitionId = 0;
    rec.u.PartitionRecord.Replicas = &node;
    rec.u.PartitionRecord.Replicas_cnt = 1;
    rec.u.PartitionRecord.Isr = &node;
    rec.u.PartitionRecord.Isr_cnt = 1;
    rec.u.PartitionRecord.Leader = 1;
    replay(d, &rec, k);
    img = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);
    return img;
}

static void
test_meta_publish_under_readers(void **state)
{
    samsa_meta_t    *meta = samsa_meta_new();
    reader_t         readers[READERS];
    pthread_t        threads[READERS];
    atomic_bool      stop;
    listen_state_t   ls = { 0, -1, true };
    samsa_image_t   *img, *prev;
    int              i;
    int64_t          k;

    (void) state;
    atomic_init(&stop, false);
    samsa_meta_listen(meta, on_change, &ls);
    for (i = 0; i < READERS; i++) {
        readers[i] = (reader_t) { meta, &stop, 0, false };
        assert_int_equal(pthread_create(&threads[i], NULL, reader_main,
                                        &readers[i]), 0);
    }
    prev = samsa_meta_image_get(meta);         /* the empty image */
    for (k = 1; k < IMAGES; k++) {
        img = next_image(prev, k);
        samsa_image_put(prev);
        prev = samsa_image_ref(img);
        samsa_meta_publish(meta, img);
    }
    samsa_image_put(prev);
    atomic_store(&stop, true);
    for (i = 0; i < READERS; i++) {
        pthread_join(threads[i], NULL);
        assert_true(readers[i].ok);
        assert_true(readers[i].gets > 0);
    }
    assert_true(ls.ok);
    assert_int_equal(ls.calls, IMAGES - 1);
    img = samsa_meta_image_get(meta);
    assert_int_equal(samsa_image_offset(img), IMAGES - 1);
    assert_true(image_is_whole(img));
    samsa_image_put(img);
    samsa_meta_free(meta);
}

/* A reader's reference outlives the publication point. */
static void
test_meta_reference_outlives(void **state)
{
    samsa_meta_t   *meta = samsa_meta_new();
    samsa_image_t  *img = samsa_meta_image_get(meta), *first;

    (void) state;
    first = samsa_image_new_empty();
    samsa_image_put(img);
    img = next_image(first, 1);
    samsa_image_put(first);
    samsa_meta_publish(meta, img);
    img = samsa_meta_image_get(meta);
    samsa_meta_free(meta);
    assert_int_equal(samsa_image_topic_count(img), 1);
    samsa_image_put(img);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_meta_publish_under_readers),
        cmocka_unit_test(test_meta_reference_outlives),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
