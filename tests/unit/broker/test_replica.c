/* Unit tests for broker/replica.c's start-up gate (docs/REPLICATION.md
 * bug 3): a cluster node's replica manager applies no image before
 * samsa_replmgr_caught_up (the active controller said IsCaughtUp since
 * this node registered), so the image it replayed at start, which names
 * it leader of partition t-2 (two replicas, ctl_fixture.h), does not make
 * it lead: samsa_replmgr_leads is false (Produce and Fetch answer
 * NOT_LEADER_OR_FOLLOWER, samsa_broker_route_check) until then, and true
 * after it, in the image's leader epoch only.  A one-node server (no
 * process.roles) leads at once; with unstable.replication.enable off
 * samsa_replmgr_leads leaves the image's word alone (true). */
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#include "broker/purgatory.h"
#include "broker/replica.h"
#include "config/config.h"
#include "log/batchgen.h"
#include "log/log_config.h"
#include "log/logmgr.h"
#include "meta/meta.h"

#include "meta/controller/ctl_fixture.h"

typedef struct rm_fixture {
    char               *dir;
    samsa_config_t      cfg;
    samsa_logmgr_t     *logs;
    samsa_meta_t       *meta;
    samsa_purgatory_t  *produce;
    samsa_purgatory_t  *fetch;
    samsa_replmgr_t    *rm;
} rm_fixture_t;

/* A manager for node 1 under the n arguments overrides ("--override",
 * "k=v" pairs), with a log of t-2 and the image listener on. */
static void
rm_open(rm_fixture_t *f, char **overrides, int n)
{
    char                   *argv[16] = { "samsa-server" };
    const char             *dirs[1];
    samsa_logmgr_config_t   lcfg;
    samsa_log_config_t      lc;
    samsa_replmgr_conf_t    rcfg;
    char                    errstr[512] = "";
    int                     i;

    memset(f, 0, sizeof(*f));
    for (i = 0; i < n; i++) {
        argv[i + 1] = overrides[i];
    }
    assert_int_equal(samsa_config_from_args(&f->cfg, n + 1, argv, errstr,
                                            sizeof(errstr)),
                     SAMSA_ERR_NONE);
    f->dir = bg_tmpdir();
    assert_non_null(f->dir);
    dirs[0] = f->dir;
    samsa_logmgr_config_defaults(&lcfg);
    lcfg.dirs = dirs;
    lcfg.ndirs = 1;
    assert_int_equal(samsa_logmgr_open(&lcfg, &f->logs, errstr,
                                       sizeof(errstr)),
                     SAMSA_ERR_NONE);
    samsa_log_config_defaults(&lc);
    assert_int_equal(samsa_logmgr_plog_create(f->logs, "t", 2, topic_id(),
                                              &lc, NULL),
                     SAMSA_ERR_NONE);
    f->meta = samsa_meta_new();
    f->produce = samsa_purgatory_new("produce",
                                     SAMSA_PURGATORY_PURGE_INTERVAL_DEFAULT);
    f->fetch = samsa_purgatory_new("fetch",
                                   SAMSA_PURGATORY_PURGE_INTERVAL_DEFAULT);
    memset(&rcfg, 0, sizeof(rcfg));
    rcfg.cfg = &f->cfg;
    rcfg.node_id = NODE;
    rcfg.meta = f->meta;
    rcfg.logs = f->logs;
    rcfg.produce = f->produce;
    rcfg.fetch = f->fetch;
    samsa_replmgr_new(&rcfg, &f->rm);
    samsa_meta_listen(f->meta, samsa_replmgr_on_image, f->rm);
}

static void
rm_close(rm_fixture_t *f)
{
    samsa_replmgr_free(f->rm);
    samsa_purgatory_free(f->produce);
    samsa_purgatory_free(f->fetch);
    samsa_meta_free(f->meta);
    samsa_logmgr_close(f->logs);
    samsa_config_fini(&f->cfg);
    bg_rmrf(f->dir);
}

static bool
rm_leads(rm_fixture_t *f, int32_t partition, int32_t leader_epoch)
{
    return samsa_replmgr_leads(f->rm, "t", 1, partition, leader_epoch);
}

static char *cluster_args[] = {
    "--override", "process.roles=broker,controller",
    "--override", "node.id=1",
    "--override", "controller.quorum.voters=1@127.0.0.1:19093",
    "--override",
    "listeners=PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093",
    "--override", "controller.listener.names=CONTROLLER",
    "--override", "unstable.replication.enable=true",
};

static void
test_replica_cluster_node_leads_after_catch_up(void **state)
{
    rm_fixture_t  f;
    size_t        nisr = 0;
    int32_t       min_isr = 0, epoch = -1;

    (void) state;
    rm_open(&f, cluster_args, 12);
    /* the replayed image: node 1 leads t-2 (leader epoch 0) */
    samsa_meta_publish(f.meta, sample_image());
    assert_false(rm_leads(&f, 2, 0));
    assert_false(samsa_replmgr_leader_isr(f.rm, "t", 1, 2, &nisr, &min_isr,
                                          &epoch));
    samsa_replmgr_caught_up(f.rm);
    assert_true(rm_leads(&f, 2, 0));
    assert_false(rm_leads(&f, 2, 1));   /* another epoch: not that one */
    assert_true(samsa_replmgr_leader_isr(f.rm, "t", 1, 2, &nisr, &min_isr,
                                         &epoch));
    assert_int_equal(nisr, 2);
    assert_int_equal(epoch, 0);
    samsa_replmgr_caught_up(f.rm);      /* idempotent */
    assert_true(rm_leads(&f, 2, 0));
    rm_close(&f);
}

static void
test_replica_one_node_leads_at_once(void **state)
{
    char          *args[] = { "--override", "unstable.replication.enable=true" };
    rm_fixture_t   f;

    (void) state;
    rm_open(&f, args, 2);
    samsa_meta_publish(f.meta, sample_image());
    assert_true(rm_leads(&f, 2, 0));
    rm_close(&f);
}

static void
test_replica_gate_off_leaves_the_image(void **state)
{
    rm_fixture_t  f;

    (void) state;
    rm_open(&f, cluster_args, 10);      /* without the gate's override */
    samsa_meta_publish(f.meta, sample_image());
    assert_true(rm_leads(&f, 2, 0));
    assert_true(rm_leads(&f, 2, 7));
    rm_close(&f);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_replica_cluster_node_leads_after_catch_up),
        cmocka_unit_test(test_replica_one_node_leads_at_once),
        cmocka_unit_test(test_replica_gate_off_leaves_the_image),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
