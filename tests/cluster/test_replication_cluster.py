"""Partition replication (issue 19, docs/REPLICATION.md) on a three-node
combined cluster with a replication factor above 1.

Step 1, the controller's side:
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
  the delay is printed.  Restarted, it is unfenced and rejoins the ISRs
  (each leader's AlterPartition once it caught up) but does not take its
  leadership back (no preferred election yet).
Steps 2 and 3 (test_rf3_followers_replicate_and_acks_all): followers copy
the leader's log byte for byte (the segment files of every node are
compared: followers refuse ListOffsets and consumer fetches), acks=all
waits for the ISR (a SIGSTOPped follower makes it time out),
min.insync.replicas gives NOT_ENOUGH_REPLICAS once a killed follower left
the ISR, a restarted follower catches up, and after kill -9 of the leader
the new leader serves every acknowledged record.  Figures are printed.
Every wait is bounded."""

import os
import signal
import subprocess
import time

import kwire
from cli_util import ok
from cluster_harness import Cluster, sigstop
from samsa_harness import HOST, T

INVALID_REPLICATION_FACTOR = 38
HEARTBEAT_MS = 500
SESSION_MS = 3000
SLACK_S = 4.0
NPARTS = 3


def make_cluster(samsa, replication, more=None, env=None):
    extra = {"broker.session.timeout.ms": str(SESSION_MS),
             "broker.heartbeat.interval.ms": str(HEARTBEAT_MS)}
    extra.update(more or {})
    if replication:
        extra["unstable.replication.enable"] = "true"
    c = Cluster(samsa, n=3, extra=extra, env=env)
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

    # restarted: unfenced again, and each leader adds it back to the ISR
    # once it has caught up (AlterPartition, test_isr_cluster.py); no
    # preferred election yet: the leaders stay as after the kill
    cluster.start(victim)
    cluster.wait_unfenced(T(20))
    again, _ = wait_parts(cluster, [1, 2, 3], "r3",
                          lambda v: all(p["offline_replicas"] == []
                                        and victim in p["isr_nodes"]
                                        for p in v.values()),
                          T(10), "replica online and back in the ISR")
    for i, p in again.items():
        assert p["leader_id"] == after[i]["leader_id"], (i, p)
        assert sorted(p["isr_nodes"]) == [1, 2, 3], (i, p)


# ---- issue 19 steps 2 and 3: followers fetch, the leader's HW and acks=all

NOT_ENOUGH_REPLICAS = 19
REQUEST_TIMED_OUT = 7
N_RECORDS = 2000
M_RECORDS = 20000       # written while a follower is down (~2 MB)


def log_bytes(cluster, node_id, topic, partition=0):
    """The partition's segment files on node_id, concatenated in offset
    order: what the node's log holds, byte for byte."""
    node = cluster.nodes[node_id]
    d = os.path.join(node.overrides["log.dirs"], "%s-%d" % (topic, partition))
    data = b""
    for name in sorted(f for f in os.listdir(d) if f.endswith(".log")):
        with open(os.path.join(d, name), "rb") as fp:
            data += fp.read()
    return data


def log_end(data):
    batches, tail = kwire.decode_batches(data, decode=False)
    assert tail == 0 or tail == len(data) - sum(b["size"] for b in batches)
    return batches[-1]["last_offset"] + 1 if batches else 0


def wait_same_logs(cluster, node_ids, topic, timeout, what):
    """Waits until every node of node_ids holds the same log bytes for
    topic-0; returns (their log end offset, the seconds waited)."""
    t0 = time.monotonic()
    last = None
    while time.monotonic() < t0 + timeout:
        logs = {i: log_bytes(cluster, i, topic) for i in node_ids}
        last = {i: (len(v), log_end(v)) for i, v in logs.items()}
        if len(set(logs.values())) == 1:
            return log_end(logs[node_ids[0]]), time.monotonic() - t0
        time.sleep(0.02)
    raise AssertionError("%s: logs differ after %.1f s: %s"
                         % (what, timeout, last))


def produce_confluent(bs, topic, values, **conf):
    """confluent-kafka, idempotent, acks=all: every value acknowledged (or
    the assertion says which failed)."""
    from confluent_kafka import Producer
    errors = []
    p = Producer(dict({"bootstrap.servers": bs, "enable.idempotence": True,
                       "acks": "all", "linger.ms": 5}, **conf))
    for v in values:
        p.produce(topic, value=v.encode(), partition=0,
                  on_delivery=lambda e, m: e and errors.append(str(e)))
        p.poll(0)
    assert p.flush(T(30)) == 0
    assert errors == [], errors[:5]


def acks_all_latency_ms(bs, topic, n=40):
    """Median produce-to-acknowledgement time of single records, acks=all
    (not idempotent: no InitProducerId in the way)."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bs, "acks": "all", "linger.ms": 0,
                  "enable.idempotence": False, "max.in.flight": 1})
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        p.produce(topic, value=b"lat-%d" % i, partition=0)
        assert p.flush(T(10)) == 0
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return times[len(times) // 2]


def read_values(cluster, node_id, topic):
    """Every record of topic-0 a consumer (ReplicaId -1) fetches from
    node_id up to its high watermark, in offset order."""
    with cluster.nodes[node_id].connect() as c:
        batches, last = c.fetch_all(topic, 0, timeout=T(20))
    assert last["error_code"] == 0, last
    vals = []
    for b in batches:
        for r in b["records"]:
            vals.append(r["value"].decode())
    return vals, last["high_watermark"]


def lead2_now(cluster, live):
    return partitions(cluster, live[0], "rep2")[0]["leader_id"]


def test_rf3_followers_replicate_and_acks_all(samsa):
    cluster = make_cluster(samsa, replication=True)
    ctl = cluster.wait_leader(T(10))
    bs = ",".join("%s:%d" % (HOST, n.ports[0])
                  for n in cluster.nodes.values())
    with cluster.nodes[ctl].connect() as c:
        for name, min_isr in (("rep2", "2"), ("rep3", "3")):
            r = c.create_topic(name, num_partitions=1, replication_factor=3,
                               configs={"min.insync.replicas": min_isr},
                               timeout=T(10))
            assert r["error_code"] == 0, r
        r = c.create_topic("rep1", num_partitions=1, timeout=T(10))
        assert r["error_code"] == 0, r
    for name in ("rep2", "rep3"):
        wait_parts(cluster, [1, 2, 3], name,
                   lambda v: len(v) == 1 and len(v[0]["isr_nodes"]) == 3
                   and v[0]["leader_id"] >= 0, T(10), name + " placed")
    lead2 = partitions(cluster, ctl, "rep2")[0]["leader_id"]
    lead3 = partitions(cluster, ctl, "rep3")[0]["leader_id"]

    # acks=all, idempotent: everything is acknowledged, read back from the
    # leader, and every replica's log is the leader's, byte for byte
    first = ["a-%d" % i for i in range(N_RECORDS)]
    produce_confluent(bs, "rep2", first)
    produce_confluent(bs, "rep3", ["b-%d" % i for i in range(100)])
    vals, hw = read_values(cluster, lead2, "rep2")
    assert vals == first, (len(vals), vals[:3], vals[-3:])
    assert hw == N_RECORDS, hw
    end2, _ = wait_same_logs(cluster, [1, 2, 3], "rep2", T(10), "rep2")
    end3, _ = wait_same_logs(cluster, [1, 2, 3], "rep3", T(10), "rep3")
    assert (end2, end3) == (N_RECORDS, 100), (end2, end3)

    # acks=all latency, RF 3 vs RF 1 (loopback, medians)
    rf3 = acks_all_latency_ms(bs, "rep2")
    rf1 = acks_all_latency_ms(bs, "rep1")
    print("acks=all single-record latency: RF 3 %.2f ms, RF 1 %.2f ms "
          "(medians of 40)" % (rf3, rf1))
    first += ["lat-%d" % i for i in range(40)]

    # SIGSTOP a follower of rep3 for less than the session timeout: it
    # stays in the ISR, so acks=all waits for it (REQUEST_TIMED_OUT at the
    # request's timeout) and consumers do not see the record; acks=1 is
    # answered at once; resumed, the HW passes both records
    cands = [i for i in (1, 2, 3) if i != lead3]
    victim = next((i for i in cands if i != ctl), cands[0])
    vproc = cluster.nodes[victim].srv.proc
    rec = kwire.encode_batch([kwire.Record(value=b"waits")])
    with cluster.nodes[lead3].connect() as c:
        sigstop(vproc)
        try:
            r = c.produce("rep3", 0, rec, acks=-1, timeout_ms=400)
            assert r["error_code"] == REQUEST_TIMED_OUT, r
            r = c.produce("rep3", 0, rec, acks=1)
            assert r["error_code"] == 0 and r["base_offset"] == 101, r
            p = c.fetch("rep3", 0, 0, max_bytes=64)
            assert p["high_watermark"] == 100, p["high_watermark"]
        finally:
            vproc.send_signal(signal.SIGCONT)
        deadline = time.monotonic() + T(5)
        while c.fetch("rep3", 0, 0, max_bytes=64)["high_watermark"] != 102:
            assert time.monotonic() < deadline, "rep3 HW stuck"
            time.sleep(0.02)

    # kill -9 that follower: fenced, out of the ISR; acks=all with
    # min.insync.replicas=3 is refused before the append, acks=1 works
    cluster.kill(victim)
    live = [i for i in (1, 2, 3) if i != victim]
    wait_parts(cluster, live, "rep3",
               lambda v: victim not in v[0]["isr_nodes"]
               and v[0]["leader_id"] in live, SESSION_MS / 1000 + SLACK_S,
               "rep3 ISR shrink")
    lead3 = partitions(cluster, live[0], "rep3")[0]["leader_id"]
    rec = kwire.encode_batch([kwire.Record(value=b"refused")])
    with cluster.nodes[lead3].connect() as c:
        r = c.produce("rep3", 0, rec, acks=-1)
        assert r["error_code"] == NOT_ENOUGH_REPLICAS, r
        r = c.produce("rep3", 0, rec, acks=1)
        assert r["error_code"] == 0, r

    # rep2 (min.insync.replicas=2) goes on with two replicas
    wait_parts(cluster, live, "rep2",
               lambda v: victim not in v[0]["isr_nodes"]
               and v[0]["leader_id"] in live, T(10), "rep2 ISR shrink")
    more = [("c-%d-" % i).ljust(100, "x") for i in range(M_RECORDS)]
    produce_confluent(",".join("%s:%d" % (HOST, cluster.nodes[i].ports[0])
                               for i in live), "rep2", more)
    acked = first + more

    # restarted, the follower catches up from the leader
    t0 = time.monotonic()
    cluster.start(victim)
    end2, waited = wait_same_logs(cluster, [1, 2, 3], "rep2", T(20),
                                  "rep2 catch-up")
    behind = len(log_bytes(cluster, lead2_now(cluster, live), "rep2"))
    print("restarted follower %d caught up to log end %d (log %.2f MB; "
          "%d records written while it was down) %.2f s after the restart "
          "began (%.2f s after it answered)"
          % (victim, end2, behind / 1e6, M_RECORDS,
             time.monotonic() - t0, waited))
    assert end2 == len(acked), (end2, len(acked))

    # kill -9 rep2's leader: a new leader from the ISR still serves every
    # acknowledged record
    # the restarted follower back in the ISR on every node first (its
    # AlterPartition may come after its catch-up; seen under ASan: the
    # ISR read here lacked it and it was then elected)
    view, _ = wait_parts(cluster, [1, 2, 3], "rep2",
                         lambda v: sorted(v[0]["isr_nodes"]) == [1, 2, 3],
                         T(10), "rep2 ISR full again")
    lead2 = view[0]["leader_id"]
    isr2 = view[0]["isr_nodes"]
    cluster.kill(lead2)
    rest = [i for i in (1, 2, 3) if i != lead2]
    after, waited = wait_parts(
        cluster, rest, "rep2",
        lambda v: v[0]["leader_id"] in rest and lead2 not in v[0]["isr_nodes"],
        SESSION_MS / 1000 + SLACK_S + T(5), "rep2 new leader")
    new = after[0]["leader_id"]
    assert new in isr2, (new, isr2)
    deadline = time.monotonic() + T(10)
    while True:
        vals, hw = read_values(cluster, new, "rep2")
        if len(vals) >= len(acked) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert vals == acked, (len(vals), len(acked), vals[-3:])
    print("kill -9 of rep2's leader %d: new leader %d (from the ISR %s) "
          "%.2f s later serves all %d acknowledged records"
          % (lead2, new, isr2, waited, len(acked)))


NOT_LEADER_OR_FOLLOWER = 6


def test_produce_refused_until_the_replica_manager_leads(samsa):
    """A node whose image says it leads a replicated partition before its
    replica manager has taken the partition (its log came after the
    image: SAMSA_TEST_REPL_SKIP_NEW leaves the first image of a new
    partition unapplied) answers NOT_LEADER_OR_FOLLOWER, retriable; it
    must not append and acknowledge an acks=all write as a lone log,
    which no follower fetches.  The next image applies it: the write is
    replicated."""
    cluster = make_cluster(samsa, replication=True,
                           env={"SAMSA_TEST_REPL_SKIP_NEW": "1"})
    ctl = cluster.wait_leader(T(10))
    with cluster.nodes[ctl].connect() as c:
        r = c.create_topic("late", num_partitions=1, replication_factor=3,
                           configs={"min.insync.replicas": "2"},
                           timeout=T(10))
        assert r["error_code"] == 0, r
    wait_parts(cluster, [1, 2, 3], "late",
               lambda v: len(v) == 1 and len(v[0]["isr_nodes"]) == 3
               and v[0]["leader_id"] >= 0, T(10), "late placed")
    leader = partitions(cluster, ctl, "late")[0]["leader_id"]
    rec = kwire.encode_batch([kwire.Record(value=b"early")])
    with cluster.nodes[leader].connect() as c:
        for acks in (-1, 1):
            r = c.produce("late", 0, rec, acks=acks, timeout_ms=2000)
            assert r["error_code"] == NOT_LEADER_OR_FOLLOWER, (acks, r)
        assert log_end(log_bytes(cluster, leader, "late")) == 0
    # any later image (here a topic of one replica) applies the partition
    with cluster.nodes[ctl].connect() as c:
        r = c.create_topic("bump", num_partitions=1, timeout=T(10))
        assert r["error_code"] == 0, r
    deadline = time.monotonic() + T(10)
    with cluster.nodes[leader].connect() as c:
        while True:
            r = c.produce("late", 0, rec, acks=-1, timeout_ms=int(T(5) * 1000))
            if r["error_code"] != NOT_LEADER_OR_FOLLOWER:
                break
            assert time.monotonic() < deadline, r
            time.sleep(0.05)
        assert r["error_code"] == 0 and r["base_offset"] == 0, r
    end, _ = wait_same_logs(cluster, [1, 2, 3], "late", T(10), "late")
    assert end == 1, end
