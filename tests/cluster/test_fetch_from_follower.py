"""KIP-392, fetch from the closest replica (issue 19, docs/REPLICATION.md):
three combined nodes in racks r1, r2, r3 with
replica.selector.class=RackAwareReplicaSelector and
unstable.replication.enable=true; a topic of one partition on [A, B, C]
(A leads) holding 200 acks=all records.

- Fetch v11 to A with RackId = B's rack: PreferredReadReplica B, no
  records, the high watermark; with A's own rack, an unknown rack or no
  rack: A's records, no preferred replica; v10 carries no rack: records.
- Fetch v11 to B (a consumer, ReplicaId -1): B's records up to its high
  watermark; v10 to B: NOT_LEADER_OR_FOLLOWER, as before KIP-392.
- A follower that is out of the ISR is never chosen (C SIGSTOPped until
  it leaves the ISR, a consumer in C's rack is sent to the leader).
- confluent-kafka and libsamsa's consumer (`samsa consume`) with
  client.rack = B's rack consume every record, and their Fetches go to B
  (B's samsa_requests_total{request="Fetch"} grows; B leads nothing, so
  no replica fetches it).
Every wait is bounded."""

import signal
import time

import kwire
from cluster_harness import Cluster, sigstop
from samsa_harness import HOST, T
from test_replication_cluster import (produce_confluent, wait_parts,
                                      wait_same_logs)

TOPIC = "near"
N = 200
E_NOT_LEADER_OR_FOLLOWER = 6
RACKS = {1: "r1", 2: "r2", 3: "r3"}


def values_of(p, start=0):
    """The values from offset start (batches come whole)."""
    return [r["value"].decode() for b in p["batches"] for r in b["records"]
            if r["offset"] >= start]


def fetch(cluster, node_id, version, rack=None, offset=0):
    kw = {"rack_id": rack} if rack is not None else {}
    with cluster.nodes[node_id].connect() as c:
        return c.fetch(TOPIC, 0, offset, version=version, timeout=T(10), **kw)


def fetch_count(cluster, node_id):
    return cluster.metric(node_id, "samsa_requests_total", server="broker",
                          request="Fetch") or 0


def test_fetch_from_follower(samsa):
    extra = {"unstable.replication.enable": "true",
             "replica.selector.class":
                 "org.apache.kafka.common.replica.RackAwareReplicaSelector",
             "broker.session.timeout.ms": "20000",
             "broker.heartbeat.interval.ms": "300",
             "replica.lag.time.max.ms": "1500"}
    cluster = Cluster(samsa, n=3, extra=extra)
    for i, r in RACKS.items():
        cluster.nodes[i].overrides["broker.rack"] = r
    cluster.start_all()
    cluster.wait_unfenced(T(20))
    a = cluster.wait_leader(T(10))
    b, c = [i for i in (1, 2, 3) if i != a]
    with cluster.nodes[a].connect() as conn:
        r = conn.create_topics([{"name": TOPIC, "num_partitions": -1,
                                 "replication_factor": -1,
                                 "assignments": [(0, [a, b, c])],
                                 "configs": {"min.insync.replicas": "2"}}],
                               timeout=T(10))
        assert r["topics"][0]["error_code"] == 0, r
    wait_parts(cluster, [1, 2, 3], TOPIC,
               lambda v: v[0]["leader_id"] == a
               and sorted(v[0]["isr_nodes"]) == [1, 2, 3], T(15), "placed")
    values = ["n-%d" % i for i in range(N)]
    produce_confluent("%s:%d" % (HOST, cluster.nodes[a].ports[0]), TOPIC, values)
    wait_same_logs(cluster, [a, b, c], TOPIC, T(15), "replicated")

    # the leader names B for a consumer in B's rack, once B fetched at N
    deadline = time.monotonic() + T(10)
    while True:
        p = fetch(cluster, a, 11, rack=RACKS[b])
        if p["preferred_read_replica"] == b or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert p["error_code"] == 0 and p["preferred_read_replica"] == b, p
    assert p["batches"] == [] and p["high_watermark"] == N, p
    for rack, version in ((RACKS[a], 11), ("elsewhere", 11), ("", 11),
                          (None, 10)):
        p = fetch(cluster, a, version, rack=rack)
        assert p["error_code"] == 0 and p["preferred_read_replica"] == -1, (rack, p)
        assert values_of(p) == values, (rack, values_of(p)[:3])

    # B serves a consumer's Fetch v11 up to the high watermark A sent it
    # (with its next fetch's answer: it may lag the leader's, as Kafka's)
    deadline = time.monotonic() + T(10)
    while True:
        p = fetch(cluster, b, 11, rack=RACKS[b])
        assert p["error_code"] == 0, p
        if p["high_watermark"] == N or time.monotonic() > deadline:
            break
        assert values_of(p) == values[:p["high_watermark"]], p["high_watermark"]
        time.sleep(0.05)
    assert p["high_watermark"] == N and values_of(p) == values, p["high_watermark"]
    p = fetch(cluster, b, 12, offset=N // 2)
    assert p["error_code"] == 0 and values_of(p, N // 2) == values[N // 2:], p
    p = fetch(cluster, b, 10)
    assert p["error_code"] == E_NOT_LEADER_OR_FOLLOWER, p

    # confluent-kafka in B's rack reads from B
    from confluent_kafka import Consumer, TopicPartition
    before = fetch_count(cluster, b)
    cons = Consumer({"bootstrap.servers": "%s:%d" % (HOST, cluster.nodes[a].ports[0]),
                     "group.id": "near-g", "client.rack": RACKS[b],
                     "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    try:
        cons.assign([TopicPartition(TOPIC, 0, 0)])
        got = []
        deadline = time.monotonic() + T(30)
        while len(got) < N and time.monotonic() < deadline:
            m = cons.poll(0.5)
            if m is not None and m.error() is None:
                got.append(m.value().decode())
        assert got == values, (len(got), got[:3])
    finally:
        cons.close()
    after = fetch_count(cluster, b)
    print("B's Fetch requests (confluent-kafka): %s -> %s" % (before, after))
    assert after > before, (before, after)

    # so does libsamsa's consumer (samsa consume, client.rack)
    import cli_util
    before = after
    r = cli_util.run("consume", TOPIC, "--partition", "0", "--from-beginning",
                     "--exit-at-end", "--property", "client.rack=" + RACKS[b],
                     bootstrap="%s:%d" % (HOST, cluster.nodes[a].ports[0]))
    assert r.rc == 0, r
    assert r.out.split("\n")[:-1] == values, r
    after = fetch_count(cluster, b)
    print("B's Fetch requests (libsamsa): %s -> %s" % (before, after))
    assert after > before, (before, after)

    # a follower out of the ISR is never chosen (a stopped follower at the
    # leader's log end stays in sync, as Kafka's: so records go on)
    cproc = cluster.nodes[c].srv.proc
    sigstop(cproc)
    try:
        with cluster.nodes[a].connect() as conn:
            r = conn.produce(TOPIC, 0, kwire.encode_batch([kwire.Record(b"later")]),
                             acks=1)
        assert r["error_code"] == 0, r
        wait_parts(cluster, [a, b], TOPIC,
                   lambda v: c not in v[0]["isr_nodes"], T(15), "C out of the ISR")
        p = fetch(cluster, a, 11, rack=RACKS[c])
        assert p["error_code"] == 0 and p["preferred_read_replica"] == -1, p
        assert values_of(p) == values + ["later"]
    finally:
        cproc.send_signal(signal.SIGCONT)
