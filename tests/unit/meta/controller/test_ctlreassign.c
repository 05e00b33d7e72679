/* Unit tests for meta/controller/ctlreassign.c, partition reassignments
 * (Kafka's ReplicationControlManager.alterPartitionReassignments and
 * PartitionChangeBuilder's completeReassignmentIfNeeded), on the fixture
 * image (ctl_fixture.h) plus a registered broker 3: an unknown topic or
 * partition (UNKNOWN_TOPIC_OR_PARTITION), an empty target, a broker twice
 * or one not registered (INVALID_REPLICA_ASSIGNMENT), a cancel with none
 * in progress (NO_REASSIGNMENT_IN_PROGRESS) write nothing and answer
 * Kafka's messages; p2 [1,2] to [2,3] writes Replicas [2,3,1], Adding
 * [3], Removing [1], ISR and leader unchanged; the leader's AlterPartition
 * bringing 3 into the ISR completes it in the same record (Replicas and
 * ISR [2,3], leader 2, NEW_LEADER_ELECTED to the old leader); a cancel
 * instead takes 3 out (Replicas [2,1], ISR [1,2]); a subset target [2] completes at once. */
#include "unit.h"

#include <string.h>

#include "meta/controller/controller_int.h"

#include "ctl_fixture.h"

/* The fixture with broker 3 registered (epoch 8, unfenced). */
static samsa_image_t *
three_brokers(void)
{
    samsa_image_t                *base = sample_image(), *img;
    samsa_image_delta_t          *d = samsa_image_delta_new(base);
    samsa_MetadataRecords_any_t   rec;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_RegisterBrokerRecord;
    rec.version = 1;
    samsa_RegisterBrokerRecord_init(&rec.u.RegisterBrokerRecord);
    rec.u.RegisterBrokerRecord.BrokerId = 3;
    rec.u.RegisterBrokerRecord.BrokerEpoch = 8;
    rec.u.RegisterBrokerRecord.Fenced = false;
    replay(d, &rec, 8);
    img = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);
    samsa_image_put(base);
    return img;
}

/* One reassignment of topic/partition to the n replicas of ids (NULL:
 * cancel) in b, keeping the replication factor if keep_rf (KIP-860);
 * *res its answer. */
static void
reassign_rf(samsa_ctlbatch_t *b, samsa_arena_t *arena, const char *topic,
            int32_t partition, const int32_t *ids, int32_t n, bool keep_rf,
            samsa_controller_result_t *res)
{
    samsa_controller_reassign_t  r;

    memset(&r, 0, sizeof(r));
    r.topic = samsa_slice_cstr(topic);
    r.partition = partition;
    r.replicas = ids;
    r.nreplicas = n;
    r.keep_replication_factor = keep_rf;
    samsa_ctlreassign_alter(b, &r, 1, arena, res);
}

static void
reassign(samsa_ctlbatch_t *b, samsa_arena_t *arena, const char *topic,
         int32_t partition, const int32_t *ids, int32_t n,
         samsa_controller_result_t *res)
{
    reassign_rf(b, arena, topic, partition, ids, n, false, res);
}

/* The error of a refused reassignment, with its message (no record). */
static void
refused(samsa_image_t *img, const char *topic, int32_t partition,
        const int32_t *ids, int32_t n, samsa_err_t err, const char *msg)
{
    samsa_controller_result_t  res;
    samsa_ctlbatch_t           b;
    samsa_arena_t              arena = SAMSA_ARENA_INIT;

    samsa_ctlbatch_init(&b, img, 9, NODE, NULL);
    reassign(&b, &arena, topic, partition, ids, n, &res);
    assert_int_equal(res.error, err);
    if (msg != NULL) {
        assert_non_null(res.message);
        assert_string_equal(res.message, msg);
    }
    assert_int_equal(b.n, 0);
    samsa_ctlbatch_fini(&b);
    samsa_arena_fini(&arena);
}

static void
ints_equal(const int32_t *v, int32_t n, const int32_t *want, int32_t nwant)
{
    int32_t  i;

    assert_int_equal(n, nwant);
    for (i = 0; i < n; i++) {
        assert_int_equal(v[i], want[i]);
    }
}

static void
test_ctlreassign_refusals(void **state)
{
    samsa_image_t  *img = three_brokers();
    int32_t         twice[2] = { 2, 2 }, unknown[2] = { 7, 2 };

    (void) state;
    refused(img, "x", 0, twice, 1, SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION,
            "Unable to find a topic named x.");
    refused(img, "t", 9, twice, 1, SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION,
            "Unable to find partition t:9.");
    refused(img, "t", 2, twice, 0, SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes an empty replica "
            "list.");
    refused(img, "t", 2, twice, 2, SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes the broker 2 more "
            "than once.");
    refused(img, "t", 2, unknown, 2, SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes broker 7, but no "
            "such broker is registered.");
    refused(img, "t", 2, NULL, 0, SAMSA_ERR_NO_REASSIGNMENT_IN_PROGRESS,
            NULL);
    samsa_image_put(img);
}

/* p2 [1,2] to [2,3]: the first record; the image after it. */
static samsa_image_t *
start_2_3(samsa_image_t *img)
{
    samsa_controller_result_t       res;
    samsa_ctlbatch_t                b;
    samsa_arena_t                   arena = SAMSA_ARENA_INIT;
    const samsa_image_partition_t  *p;
    int32_t                         target[2] = { 2, 3 };
    int32_t                         reps[3] = { 2, 3, 1 }, isr[2] = { 1, 2 };
    int32_t                         three[1] = { 3 }, one[1] = { 1 };

    samsa_ctlbatch_init(&b, img, 9, NODE, NULL);
    reassign(&b, &arena, "t", 2, target, 2, &res);
    assert_int_equal(res.error, SAMSA_ERR_NONE);
    assert_int_equal(b.n, 1);
    p = part(&b, 2);
    ints_equal(p->replicas, p->nreplicas, reps, 3);
    ints_equal(p->adding, p->nadding, three, 1);
    ints_equal(p->removing, p->nremoving, one, 1);
    ints_equal(p->isr, p->nisr, isr, 2);
    assert_int_equal(p->leader, 1);
    assert_int_equal(p->leader_epoch, 0);
    assert_int_equal(p->partition_epoch, 1);
    samsa_arena_fini(&arena);
    return commit(&b);
}

/* KIP-860: AllowReplicationFactorChange=false refuses a target of another
 * size than the partition's replication factor, or than the one a
 * reassignment in progress moves it to (replicas less removing ones). */
static void
test_ctlreassign_keep_replication_factor(void **state)
{
    samsa_image_t              *img = three_brokers(), *mid;
    samsa_controller_result_t   res;
    samsa_ctlbatch_t            b;
    samsa_arena_t               arena = SAMSA_ARENA_INIT;
    int32_t                     all[3] = { 1, 2, 3 }, two[2] = { 3, 1 };

    (void) state;
    samsa_ctlbatch_init(&b, img, 9, NODE, NULL);
    reassign_rf(&b, &arena, "t", 2, all, 3, true, &res);
    assert_int_equal(res.error, SAMSA_ERR_INVALID_REPLICATION_FACTOR);
    assert_string_equal(res.message,
                        "The replication factor is changed from 2 to 3");
    assert_int_equal(b.n, 0);
    /* the same size is a move; a change of size is allowed by default */
    reassign_rf(&b, &arena, "t", 2, two, 2, true, &res);
    assert_int_equal(res.error, SAMSA_ERR_NONE);
    assert_int_equal(b.n, 1);
    samsa_ctlbatch_fini(&b);
    samsa_ctlbatch_init(&b, img, 9, NODE, NULL);
    reassign_rf(&b, &arena, "t", 2, all, 3, false, &res);
    assert_int_equal(res.error, SAMSA_ERR_NONE);
    samsa_ctlbatch_fini(&b);
    /* in progress, [1,2] to [2,3]: replicas [2,3,1], removing [1] */
    mid = start_2_3(img);
    samsa_ctlbatch_init(&b, mid, 10, NODE, NULL);
    reassign_rf(&b, &arena, "t", 2, all, 1, true, &res);
    assert_int_equal(res.error, SAMSA_ERR_INVALID_REPLICATION_FACTOR);
    assert_string_equal(res.message,
                        "The replication factor is changed from 2 to 1");
    reassign_rf(&b, &arena, "t", 2, all, 3, true, &res);
    assert_int_equal(res.error, SAMSA_ERR_INVALID_REPLICATION_FACTOR);
    assert_string_equal(res.message,
                        "The replication factor is changed from 2 to 3");
    reassign_rf(&b, &arena, "t", 2, two, 2, true, &res);
    assert_int_equal(res.error, SAMSA_ERR_NONE);
    samsa_ctlbatch_fini(&b);
    samsa_arena_fini(&arena);
    samsa_image_put(mid);
    samsa_image_put(img);
}

static void
test_ctlreassign_complete(void **state)
{
    samsa_image_t                  *img = three_brokers(), *mid;
    samsa_controller_isr_member_t   m[3] = { { 1, 1 }, { 2, 2 }, { 3, 8 } };
    samsa_controller_isr_change_t   c;
    samsa_controller_isr_result_t   res;
    samsa_ctlbatch_t                b;
    samsa_arena_t                   arena = SAMSA_ARENA_INIT;
    const samsa_image_partition_t  *p;
    int32_t                         target[2] = { 2, 3 };

    (void) state;
    mid = start_2_3(img);
    samsa_image_put(img);
    /* the leader's expansion to [1,2,3] completes it */
    memset(&c, 0, sizeof(c));
    c.topic_id = topic_id();
    c.partition = 2;
    c.leader_epoch = 0;
    c.partition_epoch = 1;
    c.isr = m;
    c.nisr = 3;
    samsa_ctlbatch_init(&b, mid, 10, NODE, NULL);
    assert_int_equal(samsa_ctlisr_alter(&b, 1, 1, &c, 1, &arena, &res),
                     SAMSA_ERR_NONE);
    assert_int_equal(res.error, SAMSA_ERR_NEW_LEADER_ELECTED);
    assert_int_equal(b.n, 1);
    p = part(&b, 2);
    ints_equal(p->replicas, p->nreplicas, target, 2);
    ints_equal(p->isr, p->nisr, target, 2);
    assert_int_equal(p->nadding, 0);
    assert_int_equal(p->nremoving, 0);
    assert_int_equal(p->leader, 2);
    assert_int_equal(p->leader_epoch, 1);
    assert_int_equal(res.leader_id, 2);
    assert_int_equal(res.nisr, 2);
    samsa_ctlbatch_fini(&b);
    /* an expansion that does not hold the whole target: ISR only */
    c.nisr = 2;
    m[1] = m[0];
    m[0].broker_id = 3;
    m[0].broker_epoch = 8;              /* [3, 1]: 2 missing */
    samsa_ctlbatch_init(&b, mid, 10, NODE, NULL);
    assert_int_equal(samsa_ctlisr_alter(&b, 1, 1, &c, 1, &arena, &res),
                     SAMSA_ERR_NONE);
    assert_int_equal(res.error, SAMSA_ERR_NONE);
    p = part(&b, 2);
    assert_int_equal(p->nadding, 1);
    assert_int_equal(p->nreplicas, 3);
    assert_int_equal(p->leader, 1);
    samsa_ctlbatch_fini(&b);
    samsa_arena_fini(&arena);
    samsa_image_put(mid);
}

static void
test_ctlreassign_cancel_subset(void **state)
{
    samsa_image_t                  *img = three_brokers(), *mid;
    samsa_controller_result_t       res;
    samsa_ctlbatch_t                b;
    samsa_arena_t                   arena = SAMSA_ARENA_INIT;
    const samsa_image_partition_t  *p;
    int32_t                         both[2] = { 1, 2 }, two[1] = { 2 };
    int32_t                         orig[2] = { 2, 1 };

    (void) state;
    /* a cancel takes the adding replica out (Kafka's originalReplicas:
     * [2,3,1] - [3] = [2,1]), ISR [1,2], leader 1 */
    mid = start_2_3(img);
    samsa_ctlbatch_init(&b, mid, 10, NODE, NULL);
    reassign(&b, &arena, "t", 2, NULL, 0, &res);
    assert_int_equal(res.error, SAMSA_ERR_NONE);
    assert_int_equal(b.n, 1);
    p = part(&b, 2);
    ints_equal(p->replicas, p->nreplicas, orig, 2);
    ints_equal(p->isr, p->nisr, both, 2);
    assert_int_equal(p->nadding, 0);
    assert_int_equal(p->nremoving, 0);
    assert_int_equal(p->leader, 1);
    assert_int_equal(p->leader_epoch, 0);
    samsa_ctlbatch_fini(&b);
    samsa_image_put(mid);
    /* [1,2] to [2]: nothing to add, complete at once, 2 leads */
    samsa_ctlbatch_init(&b, img, 9, NODE, NULL);
    reassign(&b, &arena, "t", 2, two, 1, &res);
    assert_int_equal(res.error, SAMSA_ERR_NONE);
    assert_int_equal(b.n, 1);
    p = part(&b, 2);
    ints_equal(p->replicas, p->nreplicas, two, 1);
    ints_equal(p->isr, p->nisr, two, 1);
    assert_int_equal(p->nadding, 0);
    assert_int_equal(p->nremoving, 0);
    assert_int_equal(p->leader, 2);
    assert_int_equal(p->leader_epoch, 1);
    samsa_ctlbatch_fini(&b);
    samsa_arena_fini(&arena);
    samsa_image_put(img);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_ctlreassign_refusals),
        cmocka_unit_test(test_ctlreassign_keep_replication_factor),
        cmocka_unit_test(test_ctlreassign_complete),
        cmocka_unit_test(test_ctlreassign_cancel_subset),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
