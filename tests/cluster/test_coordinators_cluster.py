"""Group and transaction coordinators on a three-node cluster (issue 18):

- FindCoordinator (v1 and batched v4) asked of every node answers the same
  broker for a group and for a transactional id, and that broker is the
  leader (Metadata) of partition abs(hashCode(key)) % n of
  __consumer_offsets / __transaction_state;
- group APIs (Heartbeat, JoinGroup, OffsetFetch, DescribeGroups) and
  InitProducerId with a transactional id sent to a node that is not the
  coordinator answer NOT_COORDINATOR; ListGroups on each node lists only
  the groups it coordinates;
- confluent-kafka, kafka-python and kafkajs consumer groups: two members
  share a 6-partition topic whose partitions are on all three nodes,
  commit, and a new consumer of the group resumes right after the
  committed offsets;
- a coordinator's broker restarted keeps its groups' committed offsets;
- a confluent-kafka transactional producer commits a transaction and a
  read_committed consumer sees only the committed records.  The topic's
  partition is placed on the transaction coordinator's broker: markers are
  written to local partitions only (WriteTxnMarkers to other brokers is
  not done, docs/CLUSTER.md)."""

import time

import pytest

import kwire
from kwire import Writer
from cluster_harness import Cluster
from samsa_harness import HOST, T

from test_broker_registration import REGISTERED_BOUND_S, wait_registered
from test_groups import ADAPTERS, CLIENTS, need, poll_until, values
from test_groups_protocol import (FIND_COORDINATOR, LIST_GROUPS, call, commit,
                                  describe, fetch_offsets, heartbeat, join)

E_NONE, E_COORD_NA, E_NOT_COORD = 0, 15, 16
INIT_PRODUCER_ID = 22
PARTS = 6
NPARTS_INTERNAL = 6
OVERRIDES = {"group.initial.rebalance.delay.ms": "200",
             "group.min.session.timeout.ms": "1000",
             "offsets.topic.num.partitions": str(NPARTS_INTERNAL),
             "transaction.state.log.num.partitions": str(NPARTS_INTERNAL),
             "transaction.state.log.replication.factor": "1",
             "transaction.state.log.min.isr": "1"}


def partition_for(key, n):
    """Kafka's Utils.abs(key.hashCode()) % n (Java's String.hashCode over
    UTF-16 code units)."""
    h = 0
    b = key.encode("utf-16-be")
    for i in range(0, len(b), 2):
        h = (31 * h + (b[i] << 8 | b[i + 1])) & 0xffffffff
    if h >= 1 << 31:
        h -= 1 << 32
    h = 0 if h == -(1 << 31) else abs(h)
    return h % n


@pytest.fixture
def cluster(samsa):
    c = Cluster(samsa, n=3, extra=OVERRIDES)
    c.start_all()
    wait_registered(c, T(REGISTERED_BOUND_S))
    c.wait_unfenced(T(20))
    return c


def find_v1(conn, key, key_type):
    r = call(conn, FIND_COORDINATOR, 1, Writer().string(key).i8(key_type).bytes())
    r.i32()
    err = r.i16()
    r.string(nullable=True)
    return err, r.i32(), r.string(), r.i32()


def find_v4(conn, keys, key_type):
    w = Writer().i8(key_type).array(keys, lambda ww, k: ww.string(k, True), True).tags()
    r = call(conn, FIND_COORDINATOR, 4, w.bytes())
    r.i32()
    cs = r.array(lambda rr: (rr.string(flexible=True), rr.i32(),
                             rr.string(flexible=True), rr.i32(), rr.i16(),
                             rr.string(flexible=True, nullable=True), rr.tags()),
                 flexible=True)
    return {c[0]: (c[4], c[1], c[2], c[3]) for c in cs}


def find(cluster, node_id, key, key_type, timeout=None):
    """FindCoordinator v1 at node_id, retried while the internal topic is
    being created (COORDINATOR_NOT_AVAILABLE); (node, host, port)."""
    deadline = time.monotonic() + (timeout or T(20))
    while True:
        with cluster.nodes[node_id].connect() as conn:
            err, node, host, port = find_v1(conn, key, key_type)
        if err == E_NONE:
            return node, host, port
        assert err == E_COORD_NA, err
        assert time.monotonic() < deadline, "no coordinator for %s" % key
        time.sleep(0.1)


def warm(cluster, key_type):
    """Creates the internal topic (FindCoordinator at node 1) and waits
    until every node's image has it: a node whose image does not have it
    yet answers NOT_COORDINATOR, as Kafka's before it loaded."""
    topic = ("__consumer_offsets", "__transaction_state")[key_type]
    find(cluster, 1, "warm", key_type)
    deadline = time.monotonic() + T(10)
    for i in (1, 2, 3):
        while True:
            md = cluster.metadata(i, topics=[topic])
            t = [x for x in md["topics"] if x["name"] == topic]
            if t and t[0]["error_code"] == 0:
                break
            assert time.monotonic() < deadline, "node %d lacks %s" % (i, topic)
            time.sleep(0.05)


def leader_of(cluster, node_id, topic, key):
    md = cluster.metadata(node_id, topics=[topic])
    t = [x for x in md["topics"] if x["name"] == topic][0]
    assert t["error_code"] == 0, t
    n = len(t["partitions"])
    assert n == NPARTS_INTERNAL, t
    p = [x for x in t["partitions"] if x["partition_index"] == partition_for(key, n)][0]
    return p["leader_id"]


def endpoint(cluster, node_id):
    return node_id, HOST, cluster.nodes[node_id].ports[0]


def key_not_on(cluster, topic, node_id, prefix):
    """A key whose coordinator partition another node than node_id leads."""
    for i in range(200):
        k = "%s-%d" % (prefix, i)
        if leader_of(cluster, node_id, topic, k) != node_id:
            return k
    raise AssertionError("every key on node %d" % node_id)


def test_find_coordinator_agrees_with_metadata(cluster):
    # asked first of a node that is not the active controller: it creates
    # the internal topic through the active controller
    ctl = cluster.wait_leader(T(10))
    asker = next(i for i in (1, 2, 3) if i != ctl)
    for key_type, topic, key in ((0, "__consumer_offsets", "g-find"),
                                 (1, "__transaction_state", "t-find")):
        first = find(cluster, asker, key, key_type)
        # every node knows the topic now; each gives the same answer
        answers = {i: find(cluster, i, key, key_type) for i in (1, 2, 3)}
        assert set(answers.values()) == {first}, answers
        leaders = {leader_of(cluster, i, topic, key) for i in (1, 2, 3)}
        assert leaders == {first[0]}, (leaders, first)
        assert first == endpoint(cluster, first[0]), first
        # batched (v4): the same, key by key
        keys = ["%s-%d" % (key, i) for i in range(8)]
        for i in (1, 2, 3):
            with cluster.nodes[i].connect() as conn:
                got = find_v4(conn, keys, key_type)
            for k in keys:
                want = leader_of(cluster, i, topic, k)
                assert got[k] == (E_NONE,) + endpoint(cluster, want), (i, k, got[k])
        # the partitions are on more than one broker, so the keys are too
        assert len({leader_of(cluster, 1, topic, k) for k in keys}) > 1


def list_groups(conn):
    r = call(conn, LIST_GROUPS, 2, b"")
    r.i32()
    assert r.i16() == E_NONE
    return {g for g, _ in r.array(lambda rr: (rr.string(), rr.string()))}


def test_not_coordinator_answers(cluster):
    warm(cluster, 0)
    group = key_not_on(cluster, "__consumer_offsets", 1, "g-nc")
    coord = find(cluster, 1, group, 0)[0]
    assert coord != 1
    with cluster.nodes[1].connect() as conn:
        assert heartbeat(conn, group, 1, "m") == E_NOT_COORD
        assert join(conn, group, version=4)["error"] == E_NOT_COORD
        err, offs = fetch_offsets(conn, group, [("t", [0, 1])], version=5)
        assert err == E_NOT_COORD, (err, offs)
        assert describe(conn, group)["error"] == E_NOT_COORD
    with cluster.nodes[coord].connect() as conn:
        j = join(conn, group, version=4)        # MEMBER_ID_REQUIRED: no error
        assert j["error"] not in (E_NOT_COORD, E_COORD_NA), j
        j = join(conn, group, member=j["member"], version=4)
        assert j["error"] == E_NONE, j
    # each broker lists only what it coordinates
    for i in (1, 2, 3):
        with cluster.nodes[i].connect() as conn:
            listed = list_groups(conn)
        assert (group in listed) == (i == coord), (i, coord, listed)

    # InitProducerId with a transactional id at a node that is not its
    # coordinator
    warm(cluster, 1)
    txn = key_not_on(cluster, "__transaction_state", 1, "t-nc")
    assert find(cluster, 1, txn, 1)[0] != 1
    kwire.FLEXIBLE_FROM.setdefault(INIT_PRODUCER_ID, 2)
    with cluster.nodes[1].connect() as conn:
        r = call(conn, INIT_PRODUCER_ID, 1,
                 Writer().string(txn).i32(10000).bytes())
        r.i32()
        assert r.i16() == E_NOT_COORD


def produce6(bs, topic, start, n):
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bs, "linger.ms": 5})
    vals = []
    for i in range(start, start + n):
        p.produce(topic, key=b"k%d" % i, value=b"v%d" % i, partition=i % PARTS)
        vals.append("v%d" % i)
    assert p.flush(T(30)) == 0
    return vals


def settled6(cs):
    sets = [c.assigned for c in cs]
    return (all(sets) and set().union(*sets) == set(range(PARTS))
            and sum(len(s) for s in sets) == PARTS)


@pytest.mark.parametrize("client", CLIENTS)
def test_consumer_group_commit_resume(cluster, client):
    need(client)
    bs = "%s:%d" % (HOST, cluster.nodes[1].ports[0])
    topic = "cg6-" + client
    with cluster.nodes[1].connect() as conn:
        conn.create_topic(topic, num_partitions=PARTS, timeout=T(10))
    cluster.wait_topics_equal([topic], T(10))
    md = cluster.metadata(1, topics=[topic])
    assert len({p["leader_id"] for p in md["topics"][0]["partitions"]}) == 3, md
    warm(cluster, 0)
    group = key_not_on(cluster, "__consumer_offsets", 1, "g-cluster-" + client)
    first = produce6(bs, topic, 0, 120)
    cs = [ADAPTERS[client](bs, group, topic) for _ in range(2)]
    try:
        assert poll_until(cs, lambda: settled6(cs), T(60)), \
            "assignments %s" % [c.assigned for c in cs]
        assert poll_until(cs, lambda: len(values(cs)) >= 120, T(60)), \
            "read %d of 120" % len(values(cs))
        for c in cs:
            c.commit()
        poll_until(cs, lambda: False, 0.5)
    finally:
        for c in cs:
            c.close()
    assert sorted(values(cs)) == sorted(first)
    for c in cs:
        assert {p for p, _, _ in c.seen} <= c.assigned or not c.assigned
    second = produce6(bs, topic, 120, 60)
    c2 = ADAPTERS[client](bs, group, topic)
    try:
        assert poll_until([c2], lambda: len(c2.seen) >= 60, T(60)), \
            "read %d of 60" % len(c2.seen)
        poll_until([c2], lambda: False, 1.0)
        assert sorted(values([c2])) == sorted(second), "re-read or lost records"
        assert min(o for _, o, _ in c2.seen) == 20      # 20 per partition before
    finally:
        c2.close()


def test_transaction_commit_read_committed(cluster):
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic
    bs = "%s:%d" % (HOST, cluster.nodes[1].ports[0])
    warm(cluster, 1)
    txn_id = key_not_on(cluster, "__transaction_state", 1, "tx-cluster")
    coord = find(cluster, 1, txn_id, 1)[0]
    a = AdminClient({"bootstrap.servers": bs})
    a.create_topics([NewTopic("txc", 1, replica_assignment=[[coord]])])["txc"].result(T(20))
    cluster.wait_topics_equal(["txc"], T(10))
    md = cluster.metadata(1, topics=["txc"])
    assert md["topics"][0]["partitions"][0]["leader_id"] == coord, md
    p = Producer({"bootstrap.servers": bs, "transactional.id": txn_id,
                  "linger.ms": 5})
    p.init_transactions(T(30))
    p.begin_transaction()
    p.produce("txc", value=b"yes1", partition=0)
    p.commit_transaction(T(30))
    p.begin_transaction()
    p.produce("txc", value=b"no", partition=0)
    assert p.flush(T(20)) == 0
    p.abort_transaction(T(30))
    p.begin_transaction()
    p.produce("txc", value=b"yes2", partition=0)
    p.commit_transaction(T(30))
    c = Consumer({"bootstrap.servers": bs, "group.id": "g-txc",
                  "isolation.level": "read_committed", "enable.auto.commit": False})
    c.assign([TopicPartition("txc", 0, 0)])
    vals, end = [], time.monotonic() + T(15)
    while time.monotonic() < end and len(vals) < 2:
        m = c.poll(0.2)
        if m is not None and not m.error():
            vals.append(m.value())
    poll_end = time.monotonic() + 1.0
    while time.monotonic() < poll_end:
        m = c.poll(0.2)
        if m is not None and not m.error():
            vals.append(m.value())
    c.close()
    assert vals == [b"yes1", b"yes2"]


def test_coordinator_restart_keeps_committed_offsets(cluster):
    """A coordinator's broker restarted (SIGTERM) loads its groups from its
    __consumer_offsets partitions once its image has the topic again (its
    logs are not taken for strays of an image still replaying)."""
    with cluster.nodes[1].connect() as conn:
        conn.create_topic("rs", num_partitions=1, timeout=T(10))
    warm(cluster, 0)
    group = key_not_on(cluster, "__consumer_offsets", 1, "g-restart")
    coord = find(cluster, 1, group, 0)[0]
    deadline = time.monotonic() + T(10)
    while True:                     # the coordinator's image has the topic
        with cluster.nodes[coord].connect() as conn:
            r = commit(conn, group, -1, "", {("rs", 0): 7}, version=2)
        if r == {("rs", 0): E_NONE} or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert r == {("rs", 0): E_NONE}, r
    cluster.nodes[coord].srv.stop()
    cluster.start(coord)
    cluster.wait_unfenced(T(30))
    assert find(cluster, 1, group, 0)[0] == coord
    deadline = time.monotonic() + T(10)
    while True:
        with cluster.nodes[coord].connect() as conn:
            err, offs = fetch_offsets(conn, group, [("rs", [0])], version=5)
        if (err, offs) == (E_NONE, {("rs", 0): (7, E_NONE)}) \
                or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert (err, offs) == (E_NONE, {("rs", 0): (7, E_NONE)})
