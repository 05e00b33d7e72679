/* Unit tests for meta/controller/ctlisr.c, AlterPartition's checks and
 * records (Kafka's ReplicationControlManager.alterPartition), on the
 * fixture image (ctl_fixture.h: brokers 1 and 2, p2 on both, led by 1):
 * a wrong broker epoch fails the whole request (STALE_BROKER_EPOCH, no
 * record); per partition an unknown topic id, an unknown partition, an
 * epoch ahead of the controller (NOT_CONTROLLER), an old leader epoch
 * (FENCED_LEADER_EPOCH), a sender that does not lead (INVALID_REQUEST),
 * an ISR without the leader, with a non-replica or a member twice, or
 * RECOVERING (INVALID_REQUEST) are refused without a record; a shrink of
 * p2 to [1] writes one PartitionChangeRecord (partition epoch 1, leader
 * and leader epoch unchanged) and answers it; then the old partition
 * epoch is INVALID_UPDATE_VERSION; an expansion with a fenced member or a
 * member of another broker epoch is INELIGIBLE_REPLICA; an unchanged ISR
 * writes nothing and answers the current state. */
#include "unit.h"

#include <string.h>

#include "meta/controller/controller_int.h"

#include "ctl_fixture.h"

/* One change of p (leader epoch le, partition epoch pe) to the n members
 * of ids (with epochs eps, NULL: -1 each) by broker from, with its broker
 * epoch epoch: the top-level error, *res the partition's. */
static samsa_err_t
alter(samsa_ctlbatch_t *b, samsa_arena_t *arena, int32_t from, int64_t epoch,
      int32_t p, int32_t le, int32_t pe, const int32_t *ids,
      const int64_t *eps, size_t n, samsa_controller_isr_result_t *res)
{
    samsa_controller_isr_member_t  m[8];
    samsa_controller_isr_change_t  c;
    size_t                         i;

    assert_true(n <= 8);
    for (i = 0; i < n; i++) {
        m[i].broker_id = ids[i];
        m[i].broker_epoch = eps != NULL ? eps[i] : -1;
    }
    memset(&c, 0, sizeof(c));
    c.topic_id = topic_id();
    c.partition = p;
    c.leader_epoch = le;
    c.partition_epoch = pe;
    c.isr = m;
    c.nisr = n;
    return samsa_ctlisr_alter(b, from, epoch, &c, 1, arena, res);
}

/* The answer of an accepted change: records written, its partition epoch
 * and ISR size. */
static void
accepted(const samsa_ctlbatch_t *b, const samsa_controller_isr_result_t *res,
         size_t nrecords, int32_t partition_epoch, size_t nisr)
{
    assert_int_equal(res->error, SAMSA_ERR_NONE);
    assert_int_equal(b->n, nrecords);
    assert_int_equal(res->leader_id, 1);
    assert_int_equal(res->leader_epoch, 0);
    assert_int_equal(res->partition_epoch, partition_epoch);
    assert_int_equal(res->nisr, nisr);
}

/* The partition error of a refused change (no record written). */
static samsa_err_t
refused(samsa_image_t *img, int32_t from, int64_t epoch, int32_t p,
        int32_t le, int32_t pe, const int32_t *ids, size_t n)
{
    samsa_controller_isr_result_t  res;
    samsa_ctlbatch_t               b;
    samsa_arena_t                  arena = SAMSA_ARENA_INIT;

    samsa_ctlbatch_init(&b, img, 7, NODE, NULL);
    assert_int_equal(alter(&b, &arena, from, epoch, p, le, pe, ids, NULL, n,
                           &res), SAMSA_ERR_NONE);
    assert_int_equal(b.n, 0);
    samsa_ctlbatch_fini(&b);
    samsa_arena_fini(&arena);
    return res.error;
}

static void
test_ctlisr_refusals(void **state)
{
    samsa_image_t                  *img = sample_image();
    samsa_controller_isr_result_t   res;
    samsa_controller_isr_change_t   c;
    samsa_ctlbatch_t                b;
    samsa_arena_t                   arena = SAMSA_ARENA_INIT;
    int32_t                         one[1] = { 1 }, two[1] = { 2 };
    int32_t                         bad[2] = { 1, 3 }, twice[2] = { 1, 1 };

    (void) state;
    samsa_ctlbatch_init(&b, img, 7, NODE, NULL);
    assert_int_equal(alter(&b, &arena, 1, 99, 2, 0, 0, one, NULL, 1, &res),
                     SAMSA_ERR_STALE_BROKER_EPOCH);
    assert_int_equal(b.n, 0);
    memset(&c, 0, sizeof(c));           /* an unknown topic id */
    c.topic_id.b[0] = 0x99;
    c.nisr = 0;
    assert_int_equal(samsa_ctlisr_alter(&b, 1, 1, &c, 1, &arena, &res),
                     SAMSA_ERR_NONE);
    assert_int_equal(res.error, SAMSA_ERR_UNKNOWN_TOPIC_ID);
    samsa_ctlbatch_fini(&b);
    samsa_arena_fini(&arena);

    assert_int_equal(refused(img, 1, 1, 7, 0, 0, one, 1),
                     SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_int_equal(refused(img, 1, 1, 2, 1, 0, one, 1),
                     SAMSA_ERR_NOT_CONTROLLER);
    assert_int_equal(refused(img, 1, 1, 2, 0, 1, one, 1),
                     SAMSA_ERR_NOT_CONTROLLER);
    assert_int_equal(refused(img, 1, 1, 2, -1, 0, one, 1),
                     SAMSA_ERR_FENCED_LEADER_EPOCH);
    assert_int_equal(refused(img, 2, 2, 2, 0, 0, two, 1),
                     SAMSA_ERR_INVALID_REQUEST);     /* 1 leads p2 */
    assert_int_equal(refused(img, 1, 1, 2, 0, 0, two, 1),
                     SAMSA_ERR_INVALID_REQUEST);     /* without the leader */
    assert_int_equal(refused(img, 1, 1, 2, 0, 0, bad, 2),
                     SAMSA_ERR_INVALID_REQUEST);     /* 3: no replica */
    assert_int_equal(refused(img, 1, 1, 2, 0, 0, twice, 2),
                     SAMSA_ERR_INVALID_REQUEST);
    assert_int_equal(refused(img, 1, 1, 2, 0, 0, NULL, 0),
                     SAMSA_ERR_INVALID_REQUEST);     /* empty */

    samsa_ctlbatch_init(&b, img, 7, NODE, NULL);
    memset(&c, 0, sizeof(c));           /* RECOVERED -> RECOVERING */
    c.topic_id = topic_id();
    c.partition = 2;
    c.leader_recovery_state = 1;
    c.isr = &(samsa_controller_isr_member_t) { 1, -1 };
    c.nisr = 1;
    assert_int_equal(samsa_ctlisr_alter(&b, 1, 1, &c, 1, &arena, &res),
                     SAMSA_ERR_NONE);
    assert_int_equal(res.error, SAMSA_ERR_INVALID_REQUEST);
    assert_int_equal(b.n, 0);
    samsa_ctlbatch_fini(&b);
    samsa_arena_fini(&arena);
    samsa_image_put(img);
}

static void
test_ctlisr_shrink_expand(void **state)
{
    samsa_image_t                  *img = sample_image(), *next;
    samsa_controller_isr_result_t   res;
    samsa_ctlbatch_t                b;
    samsa_arena_t                   arena = SAMSA_ARENA_INIT;
    const samsa_image_partition_t  *p;
    int32_t                         one[1] = { 1 }, both[2] = { 1, 2 };
    int64_t                         stale[2] = { 1, 77 }, good[2] = { 1, 2 };

    (void) state;
    /* the leader drops broker 2 from p2's ISR */
    samsa_ctlbatch_init(&b, img, 7, NODE, NULL);
    assert_int_equal(alter(&b, &arena, 1, 1, 2, 0, 0, one, good, 1, &res),
                     SAMSA_ERR_NONE);
    accepted(&b, &res, 1, 1, 1);
    assert_int_equal(res.isr[0], 1);
    p = part(&b, 2);
    assert_int_equal(p->nisr, 1);
    assert_int_equal(p->leader, 1);
    assert_int_equal(p->leader_epoch, 0);
    next = commit(&b);
    samsa_image_put(img);
    img = next;

    /* the old partition epoch is stale now */
    assert_int_equal(refused(img, 1, 1, 2, 0, 0, both, 2),
                     SAMSA_ERR_INVALID_UPDATE_VERSION);

    /* adding 2 back: not with another broker epoch, nor fenced */
    samsa_ctlbatch_init(&b, img, 8, NODE, NULL);
    assert_int_equal(alter(&b, &arena, 1, 1, 2, 0, 1, both, stale, 2, &res),
                     SAMSA_ERR_NONE);
    assert_int_equal(res.error, SAMSA_ERR_INELIGIBLE_REPLICA);
    assert_int_equal(b.n, 0);
    samsa_ctlbrokers_fence(&b, 2, 2, 1);        /* in the same batch */
    assert_int_equal(alter(&b, &arena, 1, 1, 2, 0, 1, both, NULL, 2, &res),
                     SAMSA_ERR_NONE);
    assert_int_equal(res.error, SAMSA_ERR_INELIGIBLE_REPLICA);
    samsa_ctlbatch_fini(&b);

    /* unfenced, with its epoch: back in the ISR, partition epoch 2 */
    samsa_ctlbatch_init(&b, img, 8, NODE, NULL);
    assert_int_equal(alter(&b, &arena, 1, 1, 2, 0, 1, both, good, 2, &res),
                     SAMSA_ERR_NONE);
    accepted(&b, &res, 1, 2, 2);
    assert_int_equal(res.isr[1], 2);
    next = commit(&b);
    samsa_image_put(img);
    img = next;

    /* the same ISR again: no record, the current state answered */
    samsa_ctlbatch_init(&b, img, 9, NODE, NULL);
    assert_int_equal(alter(&b, &arena, 1, 1, 2, 0, 2, both, NULL, 2, &res),
                     SAMSA_ERR_NONE);
    accepted(&b, &res, 0, 2, 2);
    samsa_ctlbatch_fini(&b);
    samsa_arena_fini(&arena);
    samsa_image_put(img);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_ctlisr_refusals),
        cmocka_unit_test(test_ctlisr_shrink_expand),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
