"""A broker restarted before its session timeout (issue 19,
docs/REPLICATION.md bug 3) on a three-node combined cluster with
unstable.replication.enable=true, a topic of one partition, RF 3,
min.insync.replicas=2, auto.leader.rebalance.enable=false.

kill -9 of the partition's leader and a restart at once (well within the
session timeout), twice: its new registration ends its old leadership
(the controller's batch moves it to another ISR member, as a fence would,
before any session timeout); until it has registered and caught up with
the metadata log it neither leads nor follows, so a Produce (acks=1) sent
to it from its start until the ISR is full again never succeeds (each
answer NOT_LEADER_OR_FOLLOWER, retriable; before the fix the replayed
image made it lead in its old epoch and take writes, bug 3); and every
record acknowledged (acks=all) before and after is in the final log, once.
The replica manager's gate itself is unit-tested (tests/unit/broker/
test_replica.c: no leadership before samsa_replmgr_caught_up).
Every wait is bounded."""

import time

import kwire
from samsa_harness import T
from test_replication_cluster import make_cluster, partitions, read_values, wait_parts

TOPIC = "rejoin"
NOT_LEADER_OR_FOLLOWER = 6
NET_ERRORS = (OSError, kwire.ConnectionClosed, kwire.FrameTimeout,
              kwire.ProtocolError)


def full_isr(v):
    return (len(v) == 1 and sorted(v[0]["isr_nodes"]) == [1, 2, 3]
            and v[0]["leader_id"] > 0)


def produce_acked(cluster, values, timeout):
    """Produces each value (acks=all) to the partition's current leader,
    retrying a retriable answer until timeout; returns the values
    acknowledged (all of them, or the assertion fails)."""
    deadline = time.monotonic() + timeout
    acked = []
    for v in values:
        rec = kwire.encode_batch([kwire.Record(value=v.encode())])
        while True:
            assert time.monotonic() < deadline, "not acknowledged: %s" % v
            try:
                lead = wait_parts(cluster, [n.node_id for n in cluster.live_brokers()],
                                  TOPIC, full_isr, T(20), "ISR full")[0][0]["leader_id"]
                with cluster.nodes[lead].connect() as c:
                    r = c.produce(TOPIC, 0, rec, acks=-1, timeout_ms=5000)
            except NET_ERRORS:
                time.sleep(0.05)
                continue
            if r["error_code"] == 0:
                acked.append(v)
                break
            time.sleep(0.05)
    return acked


def check_all_there(cluster, acked):
    lead = partitions(cluster, cluster.live_brokers()[0].node_id, TOPIC)[0]["leader_id"]
    vals, _ = read_values(cluster, lead, TOPIC)
    lost = [v for v in acked if v not in vals]
    assert not lost, "acknowledged records lost: %s" % lost[:10]
    assert len(vals) == len(set(vals)), "duplicates in the log"


def probe_until_healed(cluster, node_id, epoch, timeout):
    """Sends acks=1 Produces to node_id until every node shows the
    partition with a full ISR in a leader epoch above epoch; returns the
    answers' error codes (None: no connection yet) and the final view."""
    rec = kwire.encode_batch([kwire.Record(value=b"to-the-restarted-node")])
    deadline = time.monotonic() + timeout
    codes = []
    while time.monotonic() < deadline:
        try:
            with cluster.nodes[node_id].connect(timeout=1.0) as c:
                codes.append(c.produce(TOPIC, 0, rec, acks=1,
                                       timeout_ms=1000)["error_code"])
        except NET_ERRORS:
            codes.append(None)
        try:
            views = [partitions(cluster, i, TOPIC) for i in (1, 2, 3)]
        except NET_ERRORS + (StopIteration, KeyError):
            views = []
        if views and all(full_isr(v) and v[0]["leader_epoch"] > epoch
                         for v in views):
            return codes, views[0]
        time.sleep(0.02)
    raise AssertionError("not healed within %.1f s; answers %s"
                         % (timeout, codes[-20:]))


def test_leader_restarted_within_session_timeout(samsa):
    cluster = make_cluster(samsa, replication=True,
                           more={"auto.leader.rebalance.enable": "false"})
    ctl = cluster.wait_leader(T(10))
    with cluster.nodes[ctl].connect() as c:
        r = c.create_topic(TOPIC, num_partitions=1, replication_factor=3,
                           configs={"min.insync.replicas": "2"}, timeout=T(10))
        assert r["error_code"] == 0, r
    wait_parts(cluster, [1, 2, 3], TOPIC, full_isr, T(15), "placed")
    acked = produce_acked(cluster, ["a-%d" % i for i in range(50)], T(30))
    for rnd in range(2):
        p = partitions(cluster, ctl, TOPIC)[0]
        lead, epoch = p["leader_id"], p["leader_epoch"]
        t0 = time.monotonic()
        cluster.kill(lead)
        cluster.start(lead)
        codes, v = probe_until_healed(cluster, lead, epoch, T(30))
        took = time.monotonic() - t0
        print("round %d: node %d killed and restarted, leadership moved to "
              "%d (epoch %d -> %d), ISR full %.2f s after the kill; "
              "answers to it: %s" % (rnd, lead, v[0]["leader_id"], epoch,
                                     v[0]["leader_epoch"], took,
                                     sorted(set(map(str, codes)))))
        assert v[0]["leader_id"] != lead, v
        assert 0 not in codes, "the restarted node took a write: %s" % codes
        acked += produce_acked(cluster, ["%s-%d" % ("bc"[rnd], i)
                                         for i in range(50)], T(30))
        check_all_there(cluster, acked)
