"""Partition reassignments (KIP-455, issue 19 item 4, docs/REPLICATION.md)
on a three-node combined cluster with unstable.replication.enable=true.
A topic of one partition is placed by hand on [A, B] (A the active
controller, so the third node C is never it) and holds 500 acks=all
records; C is SIGSTOPped so that a reassignment to [B, C] stays in
progress while it is looked at:

- AlterPartitionReassignments v0 (raw, sent to B: forwarded to the
  active controller) to [B, C]: Metadata shows Replicas [B, C, A],
  ListPartitionReassignments Adding [C], Removing [A];
- a cancel (null replicas) takes C out again (Replicas [B, A]) and the
  list is empty; a second cancel is NO_REASSIGNMENT_IN_PROGRESS; a broker
  that is not registered is INVALID_REPLICA_ASSIGNMENT;
- reassigned again and C continued: C catches up, joins the ISR, and the
  controller completes the move: Replicas [B, C], leader B (A was
  removed), nothing listed; C's log is byte-identical to B's, A's log
  directory for the partition is gone, and every record reads back.
test_reassign_with_kafka_tool: Kafka 4.4's kafka-reassign-partitions
--execute and --verify do the same move.
test_reassign_keeps_replication_factor: v1 (KIP-860) with
AllowReplicationFactorChange=false refuses [A, B] to [A, B, C]
(INVALID_REPLICATION_FACTOR, Kafka's message) and accepts [B, C]; so does
kafka-reassign-partitions --disallow-replication-factor-change.
Every wait is bounded."""

import os
import signal
import time

import kwire
from cluster_harness import Cluster, sigstop
from samsa_harness import HOST, T
from test_replication_cluster import (produce_confluent, read_values,
                                      wait_parts, wait_same_logs)

API_ALTER_PARTITION_REASSIGNMENTS = 45
kwire.FLEXIBLE_FROM.setdefault(API_ALTER_PARTITION_REASSIGNMENTS, 0)
E_NONE = 0
E_INVALID_REPLICATION_FACTOR = 38
E_INVALID_REPLICA_ASSIGNMENT = 39
E_NO_REASSIGNMENT_IN_PROGRESS = 85
TOPIC = "mv"
NRECORDS = 500


def encode_alter_reassignments(parts, timeout_ms=30000, version=0,
                               allow_rf_change=True):
    """parts: [(topic, partition, [replicas] or None)]; v1 carries
    AllowReplicationFactorChange (KIP-860)."""
    w = kwire.Writer().i32(timeout_ms)
    if version >= 1:
        w.i8(1 if allow_rf_change else 0)
    topics = {}
    for t, p, reps in parts:
        topics.setdefault(t, []).append((p, reps))

    def part(ww, pr):
        ww.i32(pr[0])
        if pr[1] is None:
            ww.uvarint(0)                       # null: cancel
        else:
            ww.array(pr[1], lambda www, x: www.i32(x), flexible=True)
        ww.tags()

    def topic(ww, t):
        ww.string(t[0], flexible=True).array(t[1], part, flexible=True).tags()
    w.array(list(topics.items()), topic, flexible=True)
    return w.tags().bytes()


def alter_reassignments(cluster, node_id, parts, version=0,
                        allow_rf_change=True):
    """{(topic, partition): (error code, message)}; the top level must be
    NONE (and v1's answer echo allow_rf_change)."""
    with cluster.nodes[node_id].connect() as c:
        r = c.request_raw(API_ALTER_PARTITION_REASSIGNMENTS, version,
                          encode_alter_reassignments(
                              parts, version=version,
                              allow_rf_change=allow_rf_change), T(10))
    r.i32()                                     # throttle
    if version >= 1:
        assert r.i8() == (1 if allow_rf_change else 0)
    top = (r.i16(), r.string(flexible=True, nullable=True))
    assert top == (0, None), top
    out = {}

    def part(rr):
        p = rr.i32()
        out[p] = (rr.i16(), rr.string(flexible=True, nullable=True))
        rr.tags()

    def topic(rr):
        name = rr.string(flexible=True)
        before = set(out)
        rr.array(part, flexible=True)
        for p in set(out) - before:
            out[(name, p)] = out.pop(p)
        rr.tags()
    r.array(topic, flexible=True)
    return out


def listed(cluster, node_id):
    """ListPartitionReassignments (every topic): {(topic, partition):
    (replicas, adding, removing)}."""
    with cluster.nodes[node_id].connect() as c:
        r = c.request(kwire.API_LIST_PARTITION_REASSIGNMENTS, 0,
                      kwire.encode_list_partition_reassignments_request(0, None),
                      T(10))
    assert r["error_code"] == 0, r
    return {(t["name"], p["partition"]): (p["replicas"], p["adding"], p["removing"])
            for t in r["topics"] for p in t["partitions"]}


def cluster_on_ab(samsa, topic, values):
    """Three nodes, the gate on; topic's one partition placed on [A, B] (A
    the active controller) holding values (acks=all).  Returns (cluster,
    A, B, C)."""
    extra = {"unstable.replication.enable": "true",
             "broker.session.timeout.ms": "20000",
             "broker.heartbeat.interval.ms": "300",
             "replica.lag.time.max.ms": "2000"}
    cluster = Cluster(samsa, n=3, extra=extra)
    cluster.start_all()
    cluster.wait_unfenced(T(20))
    a = cluster.wait_leader(T(10))
    b, c = [i for i in (1, 2, 3) if i != a]
    with cluster.nodes[a].connect() as conn:
        r = conn.create_topics([{"name": topic, "num_partitions": -1,
                                 "replication_factor": -1,
                                 "assignments": [(0, [a, b])],
                                 "configs": {"min.insync.replicas": "1"}}],
                               timeout=T(10))
        assert r["topics"][0]["error_code"] == 0, r
    wait_parts(cluster, [1, 2, 3], topic,
               lambda v: v[0]["replica_nodes"] == [a, b]
               and sorted(v[0]["isr_nodes"]) == sorted([a, b])
               and v[0]["leader_id"] == a, T(10), "placed on [A, B]")
    bs = ",".join("%s:%d" % (HOST, cluster.nodes[i].ports[0]) for i in (a, b))
    produce_confluent(bs, topic, values)
    return cluster, a, b, c


def test_reassign_add_catch_up_switch_remove(samsa):
    values = ["r-%d" % i for i in range(NRECORDS)]
    cluster, a, b, c = cluster_on_ab(samsa, TOPIC, values)
    cdir = os.path.join(cluster.nodes[c].overrides["log.dirs"], "%s-0" % TOPIC)
    adir = os.path.join(cluster.nodes[a].overrides["log.dirs"], "%s-0" % TOPIC)
    assert not os.path.exists(cdir), "C keeps a log of a partition it does not replicate"
    assert os.path.isdir(adir)

    cproc = cluster.nodes[c].srv.proc
    sigstop(cproc)
    try:
        got = alter_reassignments(cluster, b, [(TOPIC, 0, [b, c])])
        assert got == {(TOPIC, 0): (E_NONE, None)}, got
        wait_parts(cluster, [a, b], TOPIC,
                   lambda v: v[0]["replica_nodes"] == [b, c, a], T(10),
                   "Replicas = target then the removed")
        assert listed(cluster, b) == {(TOPIC, 0): ([b, c, a], [c], [a])}
        assert listed(cluster, a) == {(TOPIC, 0): ([b, c, a], [c], [a])}

        # refusals, then a cancel of the move in progress
        got = alter_reassignments(cluster, a, [(TOPIC, 0, [b, 99]),
                                               ("nosuch", 0, [b])])
        assert got[(TOPIC, 0)] == (
            E_INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment "
            "includes broker 99, but no such broker is registered."), got
        assert got[("nosuch", 0)][0] == 3, got          # UNKNOWN_TOPIC_OR_PARTITION
        got = alter_reassignments(cluster, b, [(TOPIC, 0, None)])
        assert got == {(TOPIC, 0): (E_NONE, None)}, got
        wait_parts(cluster, [a, b], TOPIC,
                   lambda v: v[0]["replica_nodes"] == [b, a]
                   and v[0]["leader_id"] == a, T(10), "cancelled")
        assert listed(cluster, b) == {}
        got = alter_reassignments(cluster, b, [(TOPIC, 0, None)])
        assert got[(TOPIC, 0)][0] == E_NO_REASSIGNMENT_IN_PROGRESS, got

        # again, and this time let C catch up
        got = alter_reassignments(cluster, b, [(TOPIC, 0, [b, c])])
        assert got == {(TOPIC, 0): (E_NONE, None)}, got
        wait_parts(cluster, [a, b], TOPIC,
                   lambda v: v[0]["replica_nodes"] == [b, c, a], T(10),
                   "reassigned again")
        assert listed(cluster, b) == {(TOPIC, 0): ([b, c, a], [c], [a])}
    finally:
        cproc.send_signal(signal.SIGCONT)
    t0 = time.monotonic()
    # records after the switch need a leader that has them all
    view, took = wait_parts(cluster, [1, 2, 3], TOPIC,
                            lambda v: v[0]["replica_nodes"] == [b, c]
                            and sorted(v[0]["isr_nodes"]) == sorted([b, c])
                            and v[0]["leader_id"] == b, T(20),
                            "reassignment complete")
    print("reassignment [A,B] -> [B,C] of %d records complete %.2f s after "
          "SIGCONT of C" % (NRECORDS, took))
    assert listed(cluster, c) == {}
    end, _ = wait_same_logs(cluster, [b, c], TOPIC, T(10), "B and C")
    assert end == NRECORDS, end
    deadline = time.monotonic() + T(10)
    while os.path.exists(adir) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(adir), "A's log of the partition is still there"
    print("A's log directory gone %.2f s after SIGCONT" % (time.monotonic() - t0))
    got, hw = read_values(cluster, b, TOPIC)
    assert got == values and hw == NRECORDS, (len(got), hw)
    # the new leader goes on taking records
    produce_confluent(",".join("%s:%d" % (HOST, cluster.nodes[i].ports[0])
                               for i in (b, c)), TOPIC, ["after"])
    got, hw = read_values(cluster, b, TOPIC)
    assert got == values + ["after"], (len(got), got[-2:])


def test_reassign_with_kafka_tool(samsa, tmp_path):
    """Kafka's own kafka-reassign-partitions (4.4) against the cluster:
    --execute moves a partition of [A, B] to [B, C], --verify reports it
    complete, Metadata shows [B, C]."""
    import json
    from javakit import kafka_tool
    values = ["k-%d" % i for i in range(100)]
    cluster, a, b, c = cluster_on_ab(samsa, "mv2", values)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "mv2", "partition": 0, "replicas": [b, c]}]}))
    bs = ["--bootstrap-server", "%s:%d" % (HOST, cluster.nodes[b].ports[0])]
    t0 = time.monotonic()
    r = kafka_tool("kafka-reassign-partitions", *bs, "--execute",
                   "--reassignment-json-file", plan)
    assert "Successfully started partition reassignment for mv2-0" in r.out, r
    wait_parts(cluster, [1, 2, 3], "mv2",
               lambda v: v[0]["replica_nodes"] == [b, c]
               and v[0]["leader_id"] == b, T(20), "moved by the tool")
    r = kafka_tool("kafka-reassign-partitions", *bs, "--verify",
                   "--reassignment-json-file", plan)
    assert "Reassignment of partition mv2-0 is completed." in r.out, r
    print("kafka-reassign-partitions --execute and --verify: %.2f s"
          % (time.monotonic() - t0))
    vals, hw = read_values(cluster, b, "mv2")
    assert hw == 100 and vals == values, (hw, vals[:2])


def test_reassign_keeps_replication_factor(samsa, tmp_path):
    import json
    from javakit import kafka_tool
    cluster, a, b, c = cluster_on_ab(samsa, "rf", ["v-%d" % i for i in range(10)])
    grow = [("rf", 0, [a, b, c])]
    got = alter_reassignments(cluster, b, grow, version=1, allow_rf_change=False)
    assert got == {("rf", 0): (E_INVALID_REPLICATION_FACTOR, "The replication "
                               "factor is changed from 2 to 3")}, got
    plan = tmp_path / "grow.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "rf", "partition": 0, "replicas": [a, b, c]}]}))
    bs = ["--bootstrap-server", "%s:%d" % (HOST, cluster.nodes[b].ports[0])]
    r = kafka_tool("kafka-reassign-partitions", *bs, "--execute",
                   "--disallow-replication-factor-change",
                   "--reassignment-json-file", plan, check=False)
    assert "The replication factor is changed from 2 to 3" in r.out + r.err, r
    assert "Successfully started" not in r.out, r
    wait_parts(cluster, [1, 2, 3], "rf",
               lambda v: v[0]["replica_nodes"] == [a, b], T(5), "unchanged")
    # the same size is a move, allowed
    got = alter_reassignments(cluster, a, [("rf", 0, [b, c])], version=1,
                              allow_rf_change=False)
    assert got == {("rf", 0): (E_NONE, None)}, got
    wait_parts(cluster, [1, 2, 3], "rf",
               lambda v: v[0]["replica_nodes"] == [b, c], T(20), "moved")
