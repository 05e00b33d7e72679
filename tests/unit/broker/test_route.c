/* Unit tests for broker/route.c over images built from metadata records,
 * as a second node would appear in them once the quorum carries its
 * registration: the brokers a client is told about (unfenced, with the
 * request's listener, in id order), and the leader check of the partition
 * APIs with the KIP-951 hint of the current leader and its endpoint. */
#include "unit.h"

#include <stdio.h>
#include <string.h>

#include "broker/route.h"
#include "util/arena.h"

#define SELF   1
#define OTHER  2

static samsa_uuid_t
topic_id(void)
{
    samsa_uuid_t  id;

    memset(&id, 0, sizeof(id));
    id.b[0] = 0x40;
    id.b[15] = 7;
    return id;
}

static void
replay_ok(samsa_image_delta_t *d, const samsa_MetadataRecords_any_t *rec,
          int64_t offset)
{
    char  err[512];

    err[0] = '\0';
    if (samsa_image_delta_replay(d, rec, offset, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        fail_msg("replay failed: %s", err);
    }
}

/* Broker id registered with one endpoint on listener (host h<id>, port
 * 9000 + id), fenced or not, in rack (NULL: none). */
static void
add_broker(samsa_image_delta_t *d, int32_t id, const char *listener,
           bool fenced, const char *rack, int64_t offset)
{
    samsa_MetadataRecords_any_t     rec;
    samsa_RegisterBrokerEndpoint_t  ep;
    char                            host[16];

    snprintf(host, sizeof(host), "h%d", (int) id);
    samsa_RegisterBrokerEndpoint_init(&ep);
    ep.Name = samsa_slice_cstr(listener);
    ep.Host = samsa_slice_cstr(host);
    ep.Port = (uint16_t) (9000 + id);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_RegisterBrokerRecord;
    rec.version = 1;
    samsa_RegisterBrokerRecord_init(&rec.u.RegisterBrokerRecord);
    rec.u.RegisterBrokerRecord.BrokerId = id;
    rec.u.RegisterBrokerRecord.BrokerEpoch = offset;
    rec.u.RegisterBrokerRecord.EndPoints = &ep;
    rec.u.RegisterBrokerRecord.EndPoints_cnt = 1;
    rec.u.RegisterBrokerRecord.Rack = rack != NULL ? samsa_slice_cstr(rack)
                                                   : SAMSA_SLICE_NULL;
    rec.u.RegisterBrokerRecord.Fenced = fenced;
    replay_ok(d, &rec, offset);
}

/* Topic "t" with one partition per entry of leaders (its leader), leader
 * epoch 3 each. */
static void
add_topic(samsa_image_delta_t *d, const int32_t *leaders, int n,
          int64_t offset)
{
    static const int32_t         replicas[] = { SELF, OTHER };
    samsa_MetadataRecords_any_t  rec;
    int                          p;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_TopicRecord;
    samsa_TopicRecord_init(&rec.u.TopicRecord);
    rec.u.TopicRecord.Name = samsa_slice_cstr("t");
    rec.u.TopicRecord.TopicId = topic_id();
    replay_ok(d, &rec, offset++);
    for (p = 0; p < n; p++) {
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_PartitionRecord;
        samsa_PartitionRecord_init(&rec.u.PartitionRecord);
        rec.u.PartitionRecord.PartitionId = p;
        rec.u.PartitionRecord.TopicId = topic_id();
        rec.u.PartitionRecord.Replicas = (int32_t *) replicas;
        rec.u.PartitionRecord.Replicas_cnt = 2;
        rec.u.PartitionRecord.Isr = (int32_t *) replicas;
        rec.u.PartitionRecord.Isr_cnt = 2;
        rec.u.PartitionRecord.Leader = leaders[p];
        rec.u.PartitionRecord.LeaderEpoch = 3;
        rec.u.PartitionRecord.PartitionEpoch = 0;
        replay_ok(d, &rec, offset++);
    }
}

/* Two nodes on PLAINTEXT (this one and OTHER, in rack r2), a fenced third
 * and a fourth with another listener only; "t" has partitions led by
 * SELF, OTHER, nobody, and broker 5 (not registered). */
static samsa_image_t *
two_node_image(void)
{
    static const int32_t  leaders[] = { SELF, OTHER, -1, 5 };
    samsa_image_t        *empty = samsa_image_new_empty(), *img;
    samsa_image_delta_t  *d = samsa_image_delta_new(empty);

    add_broker(d, 4, "INTERNAL", false, NULL, 10);
    add_broker(d, OTHER, "PLAINTEXT", false, "r2", 11);
    add_broker(d, 3, "PLAINTEXT", true, NULL, 12);
    add_broker(d, SELF, "PLAINTEXT", false, NULL, 13);
    add_topic(d, leaders, 4, 20);
    img = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);
    samsa_image_put(empty);
    return img;
}

/* Metadata's and DescribeCluster's brokers: unfenced, with the listener,
 * in id order; fenced ones only when asked; copies in the arena. */
static void
test_route_alive_nodes(void **state)
{
    samsa_image_t       *img = two_node_image();
    samsa_route_node_t  *nodes, *internal;
    samsa_route_node_t   node;
    samsa_arena_t        arena;
    size_t               n;

    (void) state;
    samsa_arena_init(&arena);
    n = samsa_route_alive_nodes(img, "plaintext", false, &arena, &nodes);
    assert_int_equal(n, 2);
    assert_int_equal(nodes[0].id, SELF);
    assert_int_equal(nodes[1].id, OTHER);
    assert_string_equal(nodes[1].host, "h2");
    assert_int_equal(nodes[1].port, 9002);
    assert_string_equal(nodes[1].rack, "r2");
    assert_null(nodes[0].rack);
    n = samsa_route_alive_nodes(img, "PLAINTEXT", true, &arena, &nodes);
    assert_int_equal(n, 3);
    assert_int_equal(nodes[1].id, 2);
    assert_int_equal(nodes[2].id, 3);
    n = samsa_route_alive_nodes(img, "INTERNAL", false, &arena, &internal);
    assert_int_equal(n, 1);
    assert_int_equal(internal[0].id, 4);
    assert_int_equal(samsa_route_alive_nodes(img, "NONE", true, &arena,
                                             &nodes), 0);
    assert_true(samsa_route_alive_node(img, OTHER, "PLAINTEXT", &arena,
                                       &node));
    assert_int_equal(node.port, 9002);
    assert_false(samsa_route_alive_node(img, 3, "PLAINTEXT", &arena,
                                        &node));         /* fenced */
    assert_false(samsa_route_alive_node(img, 4, "PLAINTEXT", &arena,
                                        &node));         /* no listener */
    assert_false(samsa_route_alive_node(img, 9, "PLAINTEXT", &arena, &node));
    samsa_image_put(img);
    /* the copies outlive the image */
    assert_string_equal(node.host, "h2");
    assert_string_equal(internal[0].host, "h4");
    samsa_arena_fini(&arena);
}

/* A partition led here passes; one led by OTHER is NOT_LEADER_OR_FOLLOWER
 * with OTHER and its epoch as the hint and OTHER's endpoint collected
 * once; one with no leader, or led by a broker not registered, is
 * NOT_LEADER_OR_FOLLOWER with no endpoint. */
static void
test_route_check(void **state)
{
    samsa_image_t               *img = two_node_image();
    const samsa_image_topic_t   *t = samsa_image_topic_find(img, "t", 1);
    samsa_route_leaders_t        leaders;
    samsa_arena_t                arena;
    int32_t                      id = 99, epoch = 99;

    (void) state;
    samsa_arena_init(&arena);
    memset(&leaders, 0, sizeof(leaders));
    assert_non_null(t);
    assert_int_equal(samsa_route_check(img, &t->partitions[0], SELF,
                                       "PLAINTEXT", &arena, &leaders, &id,
                                       &epoch), SAMSA_ERR_NONE);
    assert_int_equal(id, 99);                   /* untouched */
    assert_int_equal(leaders.n, 0);
    assert_int_equal(samsa_route_check(img, &t->partitions[1], SELF,
                                       "PLAINTEXT", &arena, &leaders, &id,
                                       &epoch),
                     SAMSA_ERR_NOT_LEADER_OR_FOLLOWER);
    assert_int_equal(id, OTHER);
    assert_int_equal(epoch, 3);
    assert_int_equal(samsa_route_check(img, &t->partitions[1], SELF,
                                       "PLAINTEXT", &arena, &leaders, &id,
                                       &epoch),
                     SAMSA_ERR_NOT_LEADER_OR_FOLLOWER);
    assert_int_equal(leaders.n, 1);             /* once per leader */
    assert_int_equal(leaders.nodes[0].id, OTHER);
    assert_string_equal(leaders.nodes[0].host, "h2");
    assert_int_equal(leaders.nodes[0].port, 9002);
    assert_string_equal(leaders.nodes[0].rack, "r2");
    assert_int_equal(samsa_route_check(img, &t->partitions[2], SELF,
                                       "PLAINTEXT", &arena, &leaders, &id,
                                       &epoch),
                     SAMSA_ERR_NOT_LEADER_OR_FOLLOWER);
    assert_int_equal(id, -1);
    assert_int_equal(epoch, 3);
    assert_int_equal(samsa_route_check(img, &t->partitions[3], SELF,
                                       "PLAINTEXT", &arena, &leaders, &id,
                                       &epoch),
                     SAMSA_ERR_NOT_LEADER_OR_FOLLOWER);
    assert_int_equal(id, 5);
    assert_int_equal(leaders.n, 1);             /* 5 is not registered */
    /* seen from OTHER, partition 1 is its own and 0 is SELF's */
    assert_int_equal(samsa_route_check(img, &t->partitions[1], OTHER,
                                       "PLAINTEXT", &arena, NULL, &id,
                                       &epoch), SAMSA_ERR_NONE);
    assert_int_equal(samsa_route_check(img, &t->partitions[0], OTHER,
                                       "PLAINTEXT", &arena, &leaders, &id,
                                       &epoch),
                     SAMSA_ERR_NOT_LEADER_OR_FOLLOWER);
    assert_int_equal(leaders.n, 2);
    assert_int_equal(leaders.nodes[1].id, SELF);
    samsa_image_put(img);
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_route_alive_nodes),
        cmocka_unit_test(test_route_check),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
