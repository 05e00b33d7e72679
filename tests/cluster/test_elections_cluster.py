"""Preferred-leader elections (issue 19 step 5, docs/REPLICATION.md) on a
three-node combined cluster with unstable.replication.enable=true and a
topic of RF 3, one partition, whose preferred replica P is its first:

- test_elect_leaders_preferred (auto.leader.rebalance.enable=false):
  kill -9 of P moves leadership to another ISR member; ElectLeaders
  PREFERRED (sent to a node that is not the active controller: it is
  forwarded) answers PREFERRED_LEADER_NOT_AVAILABLE while P is down;
  restarted, P catches up and rejoins the ISR (AlterPartition), and the
  next ElectLeaders makes it the leader again (error NONE, leader epoch
  +1), the one after that ELECTION_NOT_NEEDED; UNCLEAN on a partition
  with a leader is ELECTION_NOT_NEEDED; a producer and a consumer see all
  records across the move.
- test_auto_leader_rebalance (auto.leader.rebalance.enable=true,
  leader.imbalance.check.interval.seconds=1): after the same kill and
  restart the controller gives P its leadership back by itself.
Every wait is bounded."""

import time

import kwire
from cluster_harness import Cluster
from samsa_harness import HOST, T
from test_replication_cluster import partitions, wait_parts

E_NONE = 0
E_PREFERRED_LEADER_NOT_AVAILABLE = 80
E_ELECTION_NOT_NEEDED = 84
HEARTBEAT_MS = 300
SESSION_MS = 2000
TOPIC = "pref"


def make_cluster(samsa, auto):
    extra = {"unstable.replication.enable": "true",
             "broker.session.timeout.ms": str(SESSION_MS),
             "broker.heartbeat.interval.ms": str(HEARTBEAT_MS),
             "replica.lag.time.max.ms": "2000",
             "auto.leader.rebalance.enable": "true" if auto else "false",
             "leader.imbalance.check.interval.seconds": "1"}
    c = Cluster(samsa, n=3, extra=extra)
    c.start_all()
    c.wait_unfenced(T(20))
    return c


def elect(cluster, node_id, election_type, topics):
    body = kwire.encode_elect_leaders_request(2, topics, election_type)
    with cluster.nodes[node_id].connect() as c:
        r = c.request(kwire.API_ELECT_LEADERS, 2, body, T(10))
    assert r["error_code"] == 0, r
    return {t["topic"]: [(p["partition"], p["error_code"])
                         for p in t["partitions"]] for t in r["results"]}


def place_topic(cluster):
    """The topic, placed; returns (active controller, preferred replica,
    its first view)."""
    ctl = cluster.wait_leader(T(10))
    with cluster.nodes[ctl].connect() as c:
        r = c.create_topic(TOPIC, num_partitions=1, replication_factor=3,
                           configs={"min.insync.replicas": "1"},
                           timeout=T(10))
        assert r["error_code"] == 0, r
    view, _ = wait_parts(cluster, [1, 2, 3], TOPIC,
                         lambda v: len(v) == 1 and len(v[0]["isr_nodes"]) == 3
                         and v[0]["leader_id"] >= 0, T(10), "placed")
    p = view[0]
    assert p["leader_id"] == p["replica_nodes"][0], p
    return ctl, p["leader_id"], p


def produce(cluster, nodes, n, tag):
    import confluent_kafka as ck
    bs = ",".join("%s:%d" % (HOST, cluster.nodes[i].ports[0]) for i in nodes)
    p = ck.Producer({"bootstrap.servers": bs, "acks": "all",
                     "enable.idempotence": True, "linger.ms": 0})
    for i in range(n):
        p.produce(TOPIC, value=b"%s-%d" % (tag, i))
    assert p.flush(T(20)) == 0


def kill_and_return(cluster, pref, first):
    """kill -9 of pref: another ISR member leads; restarted, pref is back in
    the ISR.  Returns the live nodes other than pref."""
    others = [i for i in (1, 2, 3) if i != pref]
    cluster.kill(pref)
    view, took = wait_parts(cluster, others, TOPIC,
                            lambda v: v[0]["leader_id"] in others,
                            T(SESSION_MS / 1000 + 8), "a new leader")
    print("leader moved %d -> %d in %.2f s" % (pref, view[0]["leader_id"], took))
    assert view[0]["leader_epoch"] > first["leader_epoch"], view
    return others, view[0]


def test_elect_leaders_preferred(samsa):
    cluster = make_cluster(samsa, auto=False)
    ctl, pref, first = place_topic(cluster)
    produce(cluster, (1, 2, 3), 100, b"a")
    others, moved = kill_and_return(cluster, pref, first)
    asker = [i for i in others if i != cluster.wait_leader(T(10), exclude=(pref,))]
    asker = asker[0] if asker else others[0]
    got = elect(cluster, asker, 0, [(TOPIC, [0])])
    assert got == {TOPIC: [(0, E_PREFERRED_LEADER_NOT_AVAILABLE)]}, got
    produce(cluster, others, 100, b"b")
    cluster.start(pref)
    wait_parts(cluster, (1, 2, 3), TOPIC,
               lambda v: pref in v[0]["isr_nodes"], T(20), "preferred back in ISR")
    t0 = time.monotonic()
    got = elect(cluster, asker, 0, [(TOPIC, [0])])
    assert got == {TOPIC: [(0, E_NONE)]}, got
    view, _ = wait_parts(cluster, (1, 2, 3), TOPIC,
                         lambda v: v[0]["leader_id"] == pref, T(10),
                         "preferred leads again")
    print("preferred election answered and seen everywhere in %.2f s"
          % (time.monotonic() - t0))
    assert view[0]["leader_epoch"] == moved["leader_epoch"] + 1, (moved, view)
    assert elect(cluster, asker, 0, [(TOPIC, [0])]) == \
        {TOPIC: [(0, E_ELECTION_NOT_NEEDED)]}
    assert elect(cluster, asker, 1, [(TOPIC, [0])]) == \
        {TOPIC: [(0, E_ELECTION_NOT_NEEDED)]}
    # null: nothing needs an election any more
    assert all(v == [] for v in elect(cluster, asker, 0, None).values())
    # the new leader serves everything acknowledged, in order
    produce(cluster, (1, 2, 3), 100, b"c")
    import confluent_kafka as ck
    bs = ",".join("%s:%d" % (HOST, cluster.nodes[i].ports[0]) for i in (1, 2, 3))
    cons = ck.Consumer({"bootstrap.servers": bs, "group.id": "pref-check",
                        "auto.offset.reset": "earliest",
                        "enable.auto.commit": False})
    cons.assign([ck.TopicPartition(TOPIC, 0, 0)])
    got_values = []
    deadline = time.monotonic() + T(20)
    while len(got_values) < 300 and time.monotonic() < deadline:
        m = cons.poll(0.5)
        if m is not None and not m.error():
            got_values.append(m.value())
    cons.close()
    want = [b"%s-%d" % (tag, i) for tag in (b"a", b"b", b"c") for i in range(100)]
    assert got_values == want, (len(got_values), got_values[:3], got_values[-3:])


def test_auto_leader_rebalance(samsa):
    cluster = make_cluster(samsa, auto=True)
    ctl, pref, first = place_topic(cluster)
    others, moved = kill_and_return(cluster, pref, first)
    t0 = time.monotonic()
    cluster.start(pref)
    # rejoin the ISR needs records to fetch at the leader's end; then the
    # next balance (every second) moves the leadership back
    produce(cluster, others, 10, b"x")
    view, took = wait_parts(cluster, (1, 2, 3), TOPIC,
                            lambda v: v[0]["leader_id"] == pref, T(30),
                            "leadership back by itself")
    print("auto.leader.rebalance: preferred leads again %.2f s after its restart"
          % (time.monotonic() - t0))
    assert view[0]["leader_epoch"] == moved["leader_epoch"] + 1, (moved, view)
    assert pref in view[0]["isr_nodes"], view
    err = "".join(cluster.nodes[i].srv.stderr_text() for i in (1, 2, 3))
    assert "back to their preferred replica (auto.leader.rebalance.enable)" in err
