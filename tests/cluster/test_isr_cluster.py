"""ISR shrink and expansion by the partition leader through AlterPartition
(API 56, KIP-497; issue 19 step 4, docs/REPLICATION.md) on a three-node
combined cluster with unstable.replication.enable, replica.lag.time.max.ms
2000 and broker.session.timeout.ms 20000 (well above the lag, so the
controller does not fence a stopped broker: only its leader drops it):

- SIGSTOP a follower (neither the leader nor the active controller): the
  leader's isr-manager asks the controller to shrink the ISR once the
  follower has not caught up for the lag; an acks=all produce sent right
  after the stop is answered (no timeout) once the shrink commits, and
  the next ones at once, with min.insync.replicas=2; the ISR without it
  shows on Metadata and `samsa topic describe`.
- SIGCONT: it fetches again, catches up and the leader adds it back.
- /metrics follows (Kafka's gauges): the leader's
  samsa_under_replicated_partitions and the partition's
  samsa_partition_under_replicated are 1 while it is out, 0 once back;
  samsa_isr_shrinks_total / samsa_isr_expands_total count the two
  changes; samsa_active_controller_count is 1 on the active controller
  only, which alone reports the cluster's partitions and brokers;
  `samsa cluster info` counts the partition under-replicated and
  `samsa topic describe --under-replicated` lists it alone.
- kill -9 of that follower and a restart: it rejoins the ISR after its
  catch-up.
- A stale AlterPartition on the wire to the active controller's CONTROLLER
  listener: an old partition epoch is INVALID_UPDATE_VERSION, an old
  leader epoch FENCED_LEADER_EPOCH, a non-leader INVALID_REQUEST (Kafka's
  answers), a wrong broker epoch STALE_BROKER_EPOCH (top level); the
  other checks (ISR members, eligibility) are unit-tested
  (tests/unit/meta/controller/test_ctlisr.c).
ApiVersions lists AlterPartition v2-3 on the CONTROLLER listener only (as
Kafka 4).  Figures (shrink and rejoin times) are printed.  Every wait is bounded."""

import json
import re
import signal
import time
import urllib.request

import kwire
from cli_util import ok
from cluster_harness import Cluster, sigstop
from samsa_harness import HOST, T
from test_replication_cluster import partitions, wait_parts

API_ALTER_PARTITION = 56
kwire.FLEXIBLE_FROM.setdefault(API_ALTER_PARTITION, 0)     # flexible from v0

LAG_MS = 2000
SESSION_MS = 20000
HEARTBEAT_MS = 500
STALE_BROKER_EPOCH = 77
FENCED_LEADER_EPOCH = 74
INVALID_REQUEST = 42
INVALID_UPDATE_VERSION = 95


def make_cluster(samsa):
    c = Cluster(samsa, n=3, extra={
        "unstable.replication.enable": "true",
        "replica.lag.time.max.ms": str(LAG_MS),
        "broker.session.timeout.ms": str(SESSION_MS),
        "broker.heartbeat.interval.ms": str(HEARTBEAT_MS)})
    c.start_all()
    c.wait_unfenced(T(20))
    return c


def broker_epoch(cluster, node_id):
    """node_id's broker epoch: the last registration its log reports."""
    text = cluster.nodes[node_id].srv.stderr_text()
    found = re.findall(r"broker %d registered with the active controller "
                       r"\d+: .* broker epoch (\d+)" % node_id, text)
    assert found, "no registration of broker %d in its log" % node_id
    return int(found[-1])


def encode_alter_partition(broker_id, epoch, topic_id, leader_epoch,
                           partition_epoch, isr):
    """AlterPartition v3: one partition (index 0), isr as [(id, epoch)]."""
    w = kwire.Writer()
    w.i32(broker_id).i64(epoch)

    def member(ww, m):
        ww.i32(m[0]).i64(m[1]).tags()

    def part(ww, _):
        ww.i32(0).i32(leader_epoch)
        ww.array(isr, member, flexible=True)
        ww.i8(0).i32(partition_epoch).tags()

    def topic(ww, _):
        ww.uuid(topic_id).array([0], part, flexible=True).tags()
    w.array([0], topic, flexible=True)
    return w.tags().bytes()


def alter_partition(cluster, ctl, *args):
    """(top-level ErrorCode, the partition's answer) of AlterPartition v3
    sent to ctl's CONTROLLER listener."""
    with cluster.nodes[ctl].connect(controller=True) as c:
        r = c.request_raw(API_ALTER_PARTITION, 3, encode_alter_partition(*args),
                          T(10))
        _throttle, err = r.i32(), r.i16()

        def part(rr):
            p = {"partition_index": rr.i32(), "error_code": rr.i16(),
                 "leader_id": rr.i32(), "leader_epoch": rr.i32(),
                 "isr": rr.array(lambda x: x.i32(), flexible=True)}
            p["leader_recovery_state"] = rr.i8()
            p["partition_epoch"] = rr.i32()
            rr.tags()
            return p

        def topic(rr):
            t = {"topic_id": rr.uuid(), "partitions": rr.array(part, flexible=True)}
            rr.tags()
            return t
        topics = r.array(topic, flexible=True)
        r.tags()
        r.done("AlterPartition v3 response")
    return err, (topics[0]["partitions"][0] if topics else None)


def wait_metric(cluster, node_id, name, want, **labels):
    """Waits (bounded) until the node's metric reads want (the AlterPartition
    answer that counts an ISR change may come after the image shows it)."""
    deadline = time.monotonic() + T(5)
    while True:
        got = cluster.metric(node_id, name, **labels)
        if got == want:
            return
        assert time.monotonic() < deadline, (name, labels, got, want)
        time.sleep(0.05)


def produce_all(cluster, leader, value, timeout_ms):
    rec = kwire.encode_batch([kwire.Record(value=value)])
    with cluster.nodes[leader].connect() as c:
        t0 = time.monotonic()
        r = c.produce("isr", 0, rec, acks=-1, timeout_ms=timeout_ms,
                      timeout=timeout_ms / 1000 + T(5))
        return r, time.monotonic() - t0


def test_isr_shrinks_and_expands_through_alter_partition(samsa):
    cluster = make_cluster(samsa)
    ctl = cluster.wait_leader(T(10))
    # AlterPartition v2-3 (Kafka 4's) on the CONTROLLER listener only
    with cluster.nodes[ctl].connect(controller=True) as c:
        assert c.api_versions(3)["api_keys"][API_ALTER_PARTITION] == (2, 3)
    with cluster.nodes[ctl].connect() as c:
        assert API_ALTER_PARTITION not in c.api_versions(3)["api_keys"]
    with cluster.nodes[ctl].connect() as c:
        r = c.create_topic("isr", num_partitions=1, replication_factor=3,
                           configs={"min.insync.replicas": "2"}, timeout=T(10))
        assert r["error_code"] == 0, r
    p0, _ = wait_parts(cluster, [1, 2, 3], "isr",
                       lambda v: len(v[0]["isr_nodes"]) == 3
                       and v[0]["leader_id"] >= 0, T(10), "placed")
    leader = p0[0]["leader_id"]
    for i in range(20):
        r, _ = produce_all(cluster, leader, b"before-%d" % i, 10000)
        deadline = time.monotonic() + T(10)
        while (i == 0 and r["error_code"] == kwire.ERR_NOT_LEADER_OR_FOLLOWER
               and time.monotonic() < deadline):
            # the metadata shows the leader a moment before that node's
            # replica manager takes the partition (TSan: seen once); a
            # client retries the same way, and nothing was appended
            time.sleep(0.05)
            r, _ = produce_all(cluster, leader, b"before-%d" % i, 10000)
        assert r["error_code"] == 0, r

    # SIGSTOP a follower that is not the active controller: the leader
    # shrinks the ISR after the lag, and acks=all goes on
    victim = next(i for i in (1, 2, 3) if i not in (leader, ctl))
    live = [i for i in (1, 2, 3) if i != victim]
    m0 = cluster.metrics(leader)
    assert m0["samsa_under_replicated_partitions"].value() == 0
    assert m0["samsa_partition_under_replicated"].value(
        topic="isr", partition="0") == 0
    shrinks0 = m0["samsa_isr_shrinks_total"].value()
    expands0 = m0["samsa_isr_expands_total"].value()
    assert m0["samsa_leader_partitions"].value() >= 1
    for i in (1, 2, 3):
        if i != ctl:
            m = cluster.metrics(i)
            assert m["samsa_active_controller_count"].value() == 0, i
            assert m["samsa_global_partitions"].value() == 0, i
    mc = cluster.metrics(ctl)
    assert mc["samsa_active_controller_count"].value() == 1
    assert mc["samsa_active_brokers"].value() == 3
    assert mc["samsa_fenced_brokers"].value() == 0
    assert mc["samsa_offline_partitions"].value() == 0
    assert mc["samsa_global_partitions"].value() >= 1
    assert mc["samsa_global_topics"].value() >= 1
    vproc = cluster.nodes[victim].srv.proc
    sigstop(vproc)
    try:
        t0 = time.monotonic()
        r, took = produce_all(cluster, leader, b"during-stop", 15000)
        assert r["error_code"] == 0, r
        shrunk, _ = wait_parts(cluster, live, "isr",
                               lambda v: victim not in v[0]["isr_nodes"],
                               T(10), "ISR shrink")
        shrink_s = time.monotonic() - t0
        assert sorted(shrunk[0]["isr_nodes"]) == sorted(live), shrunk
        assert shrunk[0]["leader_id"] == leader, shrunk
        d = ok("topic", "describe", "isr", "--json",
               bootstrap="%s:%d" % (HOST, cluster.nodes[leader].ports[0])).json()
        d = d[0] if isinstance(d, list) else d
        assert victim not in d["partitions"][0]["isr"], d
        m = cluster.metrics(leader)
        assert m["samsa_under_replicated_partitions"].value() == 1
        assert m["samsa_partition_under_replicated"].value(
            topic="isr", partition="0") == 1
        wait_metric(cluster, leader, "samsa_isr_shrinks_total", shrinks0 + 1)
        # the status page's document says the same
        url = cluster.nodes[leader].srv.metrics_url("/api/status")
        with urllib.request.urlopen(url, timeout=T(10)) as resp:
            cl = json.loads(resp.read().decode())["cluster"]
        assert cl["node_id"] == leader and cl["controller_id"] == ctl, cl
        assert cl["under_replicated"] == 1 and cl["offline"] == 0, cl
        assert sorted(b["id"] for b in cl["brokers"]) == [1, 2, 3], cl
        # the CLI: the partition is under-replicated, nothing is offline
        bs = "%s:%d" % (HOST, cluster.nodes[leader].ports[0])
        info = ok("cluster", "info", "--json", bootstrap=bs).json()
        assert info["under_replicated_partitions"] == 1, info
        assert info["offline_partitions"] == 0, info
        ur = ok("topic", "describe", "--under-replicated", "--json",
                bootstrap=bs).json()
        assert [(t["name"], [p["partition"] for p in t["partitions"]])
                for t in ur] == [("isr", [0])], ur
        assert "Partitions: %d (under-replicated 1, offline 0)" % (
            info["partitions"]) in ok("cluster", "info", bootstrap=bs).out
        lat = []
        for i in range(10):
            r, s = produce_all(cluster, leader, b"stopped-%d" % i, 5000)
            assert r["error_code"] == 0, r
            lat.append(s * 1000)
        print("SIGSTOP of follower %d: acks=all answered after %.2f s, ISR "
              "without it on Metadata %.2f s after the stop "
              "(replica.lag.time.max.ms %d); then acks=all %.2f ms (median)"
              % (victim, took, shrink_s, LAG_MS, sorted(lat)[len(lat) // 2]))
        assert took < LAG_MS / 1000 * 1.5 + T(3), took
    finally:
        vproc.send_signal(signal.SIGCONT)

    # resumed: it catches up and the leader adds it back
    t0 = time.monotonic()
    back, _ = wait_parts(cluster, [1, 2, 3], "isr",
                         lambda v: sorted(v[0]["isr_nodes"]) == [1, 2, 3],
                         T(10), "ISR expansion after SIGCONT")
    print("SIGCONT: follower %d back in the ISR %.2f s later"
          % (victim, time.monotonic() - t0))
    assert back[0]["leader_id"] == leader, back
    wait_metric(cluster, leader, "samsa_under_replicated_partitions", 0)
    bs = "%s:%d" % (HOST, cluster.nodes[leader].ports[0])
    assert ok("topic", "describe", "--under-replicated-partitions", "--json",
              bootstrap=bs).json() == []
    assert ok("cluster", "info", "--json",
              bootstrap=bs).json()["under_replicated_partitions"] == 0
    wait_metric(cluster, leader, "samsa_isr_expands_total", expands0 + 1)
    assert cluster.metric(leader, "samsa_isr_shrinks_total") == shrinks0 + 1

    # a stale AlterPartition (the partition epoch before these changes)
    topic_id = cluster.topics(ctl)["isr"][0]
    epoch = broker_epoch(cluster, leader)
    le = back[0]["leader_epoch"]
    full = [(i, -1) for i in back[0]["isr_nodes"]]
    err, p = alter_partition(cluster, ctl, leader, epoch, topic_id, le, 0, full)
    assert err == 0 and p["error_code"] == INVALID_UPDATE_VERSION, (err, p)
    err, p = alter_partition(cluster, ctl, leader, epoch, topic_id, le - 1, 0,
                             full)
    assert err == 0 and p["error_code"] == FENCED_LEADER_EPOCH, (err, p)
    err, p = alter_partition(cluster, ctl, leader, epoch + 1000, topic_id, le,
                             0, full)
    assert err == STALE_BROKER_EPOCH and p is None, (err, p)
    err, p = alter_partition(cluster, ctl, victim, broker_epoch(cluster, victim),
                             topic_id, le, 0, full)
    assert err == 0 and p["error_code"] == INVALID_REQUEST, (err, p)

    # kill -9 and restart: out of the ISR once records arrive that it
    # lacks (a follower at the leader's LEO is caught up, as in Kafka),
    # then back once caught up.  The restarted node registers only once
    # the controller has fenced its old session (DUPLICATE_BROKER_
    # REGISTRATION until then, as Kafka's): up to SESSION_MS after the kill
    cluster.kill(victim)
    for i in range(200):
        r, _ = produce_all(cluster, leader, b"while-down-%d" % i, 15000)
        assert r["error_code"] == 0, r
    wait_parts(cluster, live, "isr", lambda v: victim not in v[0]["isr_nodes"],
               T(10), "ISR shrink after kill -9")
    t0 = time.monotonic()
    cluster.start(victim)
    wait_parts(cluster, [1, 2, 3], "isr",
               lambda v: sorted(v[0]["isr_nodes"]) == [1, 2, 3],
               T(SESSION_MS / 1000 + 15), "ISR expansion after restart")
    print("kill -9 and restart of follower %d: back in the ISR %.2f s after "
          "the restart began" % (victim, time.monotonic() - t0))
    assert partitions(cluster, ctl, "isr")[0]["leader_id"] == leader
