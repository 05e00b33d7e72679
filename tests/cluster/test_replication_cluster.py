"""Partition replication, first landing (issue 19, step 1 of docs/REPLICATION.md):
what a three-node combined cluster does with a replication factor above 1
today.  Only the controller's side exists: followers do not fetch yet, so
the data of a partition is on its leader alone (docs/REPLICATION.md).

- With unstable.replication.enable=false (the default) the controller
  refuses RF 3 with INVALID_REPLICATION_FACTOR, as before.
- With it true, CreateTopics RF 3 places 3 distinct replicas per partition
  (striped: the leaders spread over the 3 brokers), ISR = the replicas,
  leader = the first replica, on every node's Metadata, `samsa topic
  describe --json` and `kcat -L`; RF 4 is refused with Kafka's placer
  message (only 3 brokers).
- kill -9 of a broker that leads a partition: once it is fenced
  (broker.session.timeout.ms) the controller elects the next live ISR
  member (leader epoch +1) and drops the broker from every ISR it was in;
  the delay is printed.  Restarted, it is unfenced but does not rejoin the
  ISRs (that needs AlterPartition from a leader, not built yet) and does
  not take its leadership back (no preferred election yet).
Every wait is bounded."""

import subprocess
import time

import kwire
from cli_util import ok
from cluster_harness import Cluster
from samsa_harness import HOST, T

INVALID_REPLICATION_FACTOR = 38
HEARTBEAT_MS = 500
SESSION_MS = 3000
SLACK_S = 4.0
NPARTS = 3


def make_cluster(samsa, replication):
    extra = {"broker.session.timeout.ms": str(SESSION_MS),
             "broker.heartbeat.interval.ms": str(HEARTBEAT_MS)}
    if replication:
        extra["unstable.replication.enable"] = "true"
    c = Cluster(samsa, n=3, extra=extra)
    c.start_all()
    c.wait_unfenced(T(20))
    return c


def partitions(cluster, node_id, topic):
    md = cluster.metadata(node_id, topics=[topic])
    t = next(t for t in md["topics"] if t["name"] == topic)
    return {p["partition_index"]: p for p in t["partitions"]}


def wait_parts(cluster, node_ids, topic, pred, timeout, what):
    """Waits until pred(partitions) holds on every node of node_ids;
    returns the first node's view and the seconds waited."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            views = {i: partitions(cluster, i, topic) for i in node_ids}
            last = views
            if all(pred(v) for v in views.values()):
                return views[node_ids[0]], time.monotonic() - t0
        except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout,
                kwire.ProtocolError, StopIteration, KeyError) as e:
            last = "%s: %s" % (type(e).__name__, e)
        time.sleep(0.05)
    raise AssertionError("%s: not within %.1f s: %s" % (what, timeout, last))


def test_rf3_refused_without_the_gate(samsa):
    cluster = make_cluster(samsa, replication=False)
    leader = cluster.wait_leader(T(10))
    with cluster.nodes[leader].connect() as c:
        r = c.create_topic("r3-off", num_partitions=1, replication_factor=3,
                           timeout=T(10))
    assert r["error_code"] == INVALID_REPLICATION_FACTOR, r
    assert "the replication factor must be 1" in r["error_message"], r


def placed(v):
    """Every partition: 3 distinct replicas, ISR = replicas, leader =
    replicas[0], no error."""
    if len(v) != NPARTS:
        return False
    for p in v.values():
        reps = p["replica_nodes"]
        if (len(reps) != 3 or len(set(reps)) != 3 or p["isr_nodes"] != reps
                or p["leader_id"] != reps[0] or p["error_code"] != 0):
            return False
    return True


def test_rf3_placement_election_and_isr_on_fencing(samsa):
    cluster = make_cluster(samsa, replication=True)
    ctl = cluster.wait_leader(T(10))
    other = next(i for i in (1, 2, 3) if i != ctl)
    bs = "%s:%d" % (HOST, cluster.nodes[other].ports[0])

    # RF 4 over 3 brokers: Kafka's placer message
    with cluster.nodes[other].connect() as c:
        r = c.create_topic("r4", num_partitions=1, replication_factor=4,
                           timeout=T(10))
    assert r["error_code"] == INVALID_REPLICATION_FACTOR, r
    assert "only 3 broker(s) are registered" in r["error_message"], r

    # RF 3 through a node that is not the active controller (forwarded)
    with cluster.nodes[other].connect() as c:
        r = c.create_topic("r3", num_partitions=NPARTS, replication_factor=3,
                           timeout=T(10))
    assert r["error_code"] == 0, r
    before, _ = wait_parts(cluster, [1, 2, 3], "r3", placed, T(10), "placed")
    assert {p["leader_id"] for p in before.values()} == {1, 2, 3}, before

    # the CLI and kcat see the same replicas and ISR
    d = ok("topic", "describe", "r3", "--json", bootstrap=bs).json()
    if isinstance(d, list):
        d = d[0]
    for p in d["partitions"]:
        b = before[p["partition"]]
        assert p["leader"] == b["leader_id"], (p, b)
        assert p["replicas"] == b["replica_nodes"], (p, b)
        assert p["isr"] == b["isr_nodes"], (p, b)
    out = subprocess.run(["kcat", "-b", bs, "-L", "-t", "r3"],
                         capture_output=True, text=True, timeout=T(30))
    assert out.returncode == 0, out.stderr
    for i, b in before.items():
        reps = ",".join(str(x) for x in b["replica_nodes"])
        line = "partition %d, leader %d, replicas: %s, isrs: %s" % (
            i, b["leader_id"], reps, reps)
        assert line in out.stdout, (line, out.stdout)

    # kill -9 a broker that is not the active controller (it leads one
    # partition and follows the other two)
    victim = other
    others = [i for i in (1, 2, 3) if i != victim]
    led = [i for i, p in before.items() if p["leader_id"] == victim]
    assert len(led) == 1, before
    cluster.kill(victim)

    def moved(v):
        for i, p in v.items():
            b = before[i]
            want_isr = [x for x in b["isr_nodes"] if x != victim]
            if p["isr_nodes"] != want_isr:
                return False
            if i in led:
                # the first live ISR member in replica order, epoch + 1
                if (p["leader_id"] != want_isr[0]
                        or p["leader_epoch"] != b["leader_epoch"] + 1
                        or p["error_code"] != 0):
                    return False
            elif (p["leader_id"] != b["leader_id"]
                  or p["leader_epoch"] != b["leader_epoch"]):
                return False
            if p["replica_nodes"] != b["replica_nodes"]:
                return False
        return True

    after, waited = wait_parts(cluster, others, "r3", moved,
                               SESSION_MS / 1000 + SLACK_S, "new leader")
    print("partition %d: new leader %d from the ISR %.2f s after kill -9 of "
          "leader %d (session timeout %d ms)"
          % (led[0], after[led[0]]["leader_id"], waited, victim, SESSION_MS))
    for p in after.values():
        assert p["offline_replicas"] == [victim], p

    # restarted: unfenced again, but no ISR expansion (AlterPartition) and
    # no preferred election yet: the view stays as after the kill
    cluster.start(victim)
    cluster.wait_unfenced(T(20))
    time.sleep(2 * HEARTBEAT_MS / 1000)
    again, _ = wait_parts(cluster, [1, 2, 3], "r3",
                          lambda v: all(p["offline_replicas"] == []
                                        for p in v.values()),
                          T(10), "replica online")
    for i, p in again.items():
        assert p["leader_id"] == after[i]["leader_id"], (i, p)
        assert p["isr_nodes"] == after[i]["isr_nodes"], (i, p)
