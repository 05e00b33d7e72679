"""Broker registration on a three-node combined cluster: each node's
broker-lifecycle thread sends BrokerRegistration (API 62) to the active
controller's CONTROLLER listener, so within a bound Metadata from every
node lists all three brokers with their PLAINTEXT endpoints and one
ControllerId; kcat sees three brokers; a six-partition topic gets leaders
on every node and confluent-kafka produces to and consumes from all six
partitions through one bootstrap address; BrokerRegistration answers
INCONSISTENT_CLUSTER_ID for another cluster id and NOT_CONTROLLER on a
standby; a restarted node registers again (a new broker epoch) and is
still listed; a node with no leader to register with still stops cleanly.
DUPLICATE_BROKER_REGISTRATION (Kafka's ClusterControlManager): another
incarnation of a registered, unfenced node.id with a valid session is
refused (the live broker keeps its epoch and endpoint); a node killed and
restarted at once registers only after its old session is fenced, a
cleanly stopped one at once."""

import re
import subprocess
import time
import uuid

import pytest

import kwire
from cluster_harness import Cluster
from samsa_harness import HOST, T

API_BROKER_REGISTRATION = 62
NOT_CONTROLLER = 41
DUPLICATE_BROKER_REGISTRATION = 101
INCONSISTENT_CLUSTER_ID = 104
# the duplicate tests: a session long enough (and heartbeats frequent
# enough) that a node killed and restarted at once always finds its old
# session valid, even under a sanitizer's slow start
SESSION_MS = 6000
DUP_EXTRA = {"broker.session.timeout.ms": str(SESSION_MS),
             "broker.heartbeat.interval.ms": "500"}
REGISTERED_BOUND_S = 15.0
kwire.FLEXIBLE_FROM.setdefault(API_BROKER_REGISTRATION, 0)
EPOCH_RE = re.compile(r"broker (\d+) registered with the active controller "
                      r"(\d+): \d+ endpoint\(s\), broker epoch (\d+)")


@pytest.fixture
def cluster(samsa):
    c = Cluster(samsa, n=3)
    c.start_all()
    return c


def encode_broker_registration(broker_id, cluster_id, port, version=4):
    w = kwire.Writer()
    w.i32(broker_id)
    w.string(cluster_id, flexible=True)
    w.uuid(uuid.uuid4().bytes)

    def listener(ww, item):
        ww.string("PLAINTEXT", flexible=True)
        ww.string(HOST, flexible=True)
        ww.raw(port.to_bytes(2, "big"))
        ww.i16(0)
        ww.tags()
    w.array([port], listener, flexible=True)
    w.array([], lambda ww, x: None, flexible=True)      # Features
    w.uvarint(0)                                        # Rack: null
    if version >= 1:
        w.boolean(False)
    if version >= 2:
        w.array([], lambda ww, x: None, flexible=True)  # LogDirs
    if version >= 3:
        w.i64(-1)
    w.tags()
    return w.bytes()


def broker_registration(node, body, version=4):
    with kwire.connect(HOST, node.ports[1], T(5)) as c:
        r = c.request_raw(API_BROKER_REGISTRATION, version, body, T(10))
        out = {"throttle_time_ms": r.i32(), "error_code": r.i16(),
               "broker_epoch": r.i64()}
        r.tags()
        r.done("BrokerRegistration v%d response" % version)
        return out


def wait_registered(cluster, timeout):
    """Every live node's Metadata lists every node's PLAINTEXT endpoint and
    the same ControllerId; returns that id."""
    want = {(n.node_id, HOST, n.ports[0]) for n in cluster.nodes.values()}
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            views = {n.node_id: cluster.metadata(n.node_id, topics=[])
                     for n in cluster.live()}
            last = views
            got = {i: {(b["node_id"], b["host"], b["port"]) for b in md["brokers"]}
                   for i, md in views.items()}
            ctrls = {md["controller_id"] for md in views.values()}
            if all(g == want for g in got.values()) and len(ctrls) == 1 \
                    and min(ctrls) >= 0:
                return ctrls.pop()
        except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout) as e:
            last = "%s: %s" % (type(e).__name__, e)
        time.sleep(0.05)
    raise AssertionError("not all brokers registered within %.1f s: %s"
                         % (timeout, last))


def epochs(node):
    """The broker epochs node's log says it registered with, per start."""
    return [int(m.group(3)) for m in EPOCH_RE.finditer(node.srv.stderr_text())]


def test_registered_everywhere_and_usable(cluster):
    from confluent_kafka import Consumer, Producer, TopicPartition

    t0 = time.monotonic()
    leader = wait_registered(cluster, T(REGISTERED_BOUND_S))
    print("all 3 brokers registered after %.2f s; controller %d"
          % (time.monotonic() - t0, leader))
    for n in cluster.nodes.values():
        assert len(epochs(n)) == 1, n.srv.stderr_tail()

    # kcat over any node
    n1 = cluster.nodes[1]
    out = subprocess.run(["kcat", "-b", "%s:%d" % (HOST, n1.ports[0]), "-L"],
                         capture_output=True, text=True, timeout=T(30))
    assert out.returncode == 0, out.stderr
    assert " 3 brokers:" in out.stdout, out.stdout
    for n in cluster.nodes.values():
        assert "broker %d at %s:%d" % (n.node_id, HOST, n.ports[0]) in out.stdout, out.stdout

    # placement over the registered brokers
    r = cluster.create_topic(leader, "t-reg", partitions=6)
    assert r["error_code"] == 0, r
    cluster.wait_topics_equal(["t-reg"], T(10))
    md = cluster.metadata(2, topics=["t-reg"])
    leaders = {p["partition_index"]: p["leader_id"] for p in md["topics"][0]["partitions"]}
    assert sorted(leaders) == list(range(6)), md
    assert set(leaders.values()) == {1, 2, 3}, leaders

    bootstrap = "%s:%d" % (HOST, cluster.nodes[3].ports[0])
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all",
                  "linger.ms": 5})
    sent = {}
    errors = []

    def dr(err, msg):
        if err is not None:
            errors.append(err)
    for part in range(6):
        sent[part] = [("p%d-v%d" % (part, i)).encode() for i in range(20)]
        for v in sent[part]:
            p.produce("t-reg", value=v, partition=part, on_delivery=dr)
    assert p.flush(T(30)) == 0
    assert errors == [], errors

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "g-reg",
                  "enable.auto.commit": False})
    c.assign([TopicPartition("t-reg", part, 0) for part in range(6)])
    got = {part: [] for part in range(6)}
    deadline = time.monotonic() + T(30)
    while sum(map(len, got.values())) < 120 and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        assert m.error() is None, m.error()
        got[m.partition()].append(m.value())
    c.close()
    assert got == sent


def test_registration_errors(cluster):
    leader = wait_registered(cluster, T(REGISTERED_BOUND_S))
    ln = cluster.nodes[leader]
    other = next(n for n in cluster.nodes.values() if n.node_id != leader)
    r = broker_registration(ln, encode_broker_registration(
        1, "AAAAAAAAAAAAAAAAAAAAAA", cluster.nodes[1].ports[0]))
    assert r["error_code"] == INCONSISTENT_CLUSTER_ID, r
    assert r["broker_epoch"] == -1, r
    for v in (0, 4):
        r = broker_registration(other, encode_broker_registration(
            other.node_id, cluster.cluster_id, other.ports[0], v), v)
        assert r["error_code"] == NOT_CONTROLLER, r


def test_restart_registers_again(cluster):
    wait_registered(cluster, T(REGISTERED_BOUND_S))
    n2 = cluster.nodes[2]
    before = epochs(n2)
    assert len(before) == 1, n2.srv.stderr_tail()
    assert n2.srv.stop() == []          # a clean shutdown, lifecycle included
    cluster.start(2)
    wait_registered(cluster, T(REGISTERED_BOUND_S))
    deadline = time.monotonic() + T(10)
    while not epochs(n2) and time.monotonic() < deadline:
        time.sleep(0.05)
    after = epochs(n2)
    assert len(after) == 1, n2.srv.stderr_tail()
    assert after[0] > before[0], (before, after)
    with n2.connect() as c:
        dc = c.describe_cluster(version=0)
    assert {b["broker_id"] for b in dc["brokers"]} == {1, 2, 3}, dc


def test_duplicate_registration_refused(samsa):
    """A registration for broker 2 with another incarnation while broker 2
    heartbeats: DUPLICATE_BROKER_REGISTRATION, and broker 2 keeps its
    epoch and its endpoint in every node's Metadata."""
    c = Cluster(samsa, n=3, extra=DUP_EXTRA)
    c.start_all()
    wait_registered(c, T(REGISTERED_BOUND_S))
    leader = c.nodes[c.wait_leader(T(10))]
    before = epochs(c.nodes[2])
    assert len(before) == 1, c.nodes[2].srv.stderr_tail()
    for _ in range(3):      # and again, past no session expiry: refused each time
        r = broker_registration(leader, encode_broker_registration(
            2, c.cluster_id, 1))
        assert r["error_code"] == DUPLICATE_BROKER_REGISTRATION, r
        time.sleep(1.0)
    assert "refusing the registration of broker 2" in leader.srv.stderr_text()
    wait_registered(c, T(5))        # port 1 never replaced broker 2's
    assert epochs(c.nodes[2]) == before
    # an id nobody has registers as before
    r = broker_registration(leader, encode_broker_registration(
        9, c.cluster_id, 1))
    assert r["error_code"] == 0 and r["broker_epoch"] > 0, r


def test_kill_and_restart_waits_for_the_old_session(samsa):
    """Node 3 killed (kill -9) and restarted at once: the active controller
    still holds its old session, so the new incarnation is refused
    (DUPLICATE_BROKER_REGISTRATION, logged once by the node) until the
    controller fences the old one after broker.session.timeout.ms; then it
    registers with a new epoch.  A clean stop and restart registers at
    once, with no refusal (the controlled shutdown ended fenced)."""
    c = Cluster(samsa, n=3, extra=DUP_EXTRA)
    c.start_all()
    wait_registered(c, T(REGISTERED_BOUND_S))
    leader_id = c.wait_leader(T(10))
    victim = 3 if leader_id != 3 else 2
    node = c.nodes[victim]
    before = epochs(node)
    c.kill(victim)
    t0 = time.monotonic()
    c.start(victim)
    deadline = time.monotonic() + T(SESSION_MS / 1000.0 + 15)
    while not epochs(node) and time.monotonic() < deadline:
        time.sleep(0.05)
    took = time.monotonic() - t0
    after = epochs(node)
    err = node.srv.stderr_text()
    assert len(after) == 1, node.srv.stderr_tail()
    assert after[0] > before[0], (before, after)
    assert err.count("DUPLICATE_BROKER_REGISTRATION") == 1, node.srv.stderr_tail()
    # by whichever node leads the quorum by then: fenced by the expiry
    # timer, or replaced by the registration that came first after expiry
    ended = re.compile(r"fencing broker %d |broker %d \(incarnation \S+, "
                       r"broker epoch \d+\) has not been heard from"
                       % (victim, victim))
    assert any(ended.search(n.srv.stderr_text())
               for n in c.nodes.values() if n.node_id != victim), \
        [n.srv.stderr_tail() for n in c.nodes.values()]
    print("killed node %d registered again after %.2f s (session %d ms)"
          % (victim, took, SESSION_MS))
    wait_registered(c, T(REGISTERED_BOUND_S))
    # a clean stop: registers at once, nothing refused
    before = epochs(node)
    assert node.srv.stop() == []
    t0 = time.monotonic()
    c.start(victim)
    deadline = time.monotonic() + T(10)
    while not epochs(node) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(epochs(node)) == 1, node.srv.stderr_tail()
    assert "DUPLICATE_BROKER_REGISTRATION" not in node.srv.stderr_text()
    print("cleanly stopped node %d registered again after %.2f s"
          % (victim, time.monotonic() - t0))


def test_stop_while_no_leader(samsa):
    """One node of three: no leader, so broker-lifecycle keeps retrying;
    SIGTERM still stops the node cleanly and promptly."""
    c = Cluster(samsa, n=3)
    n1 = c.start(1)
    time.sleep(1.5)
    md = c.metadata(1, topics=[])
    assert md["brokers"] == [] and md["controller_id"] == -1, md
    t0 = time.monotonic()
    assert n1.srv.stop() == []
    took = time.monotonic() - t0
    print("stopped in %.2f s while registration was retrying" % took)
    assert took < T(8), took


def test_broker_rack(samsa):
    """broker.rack: racks ra, ra, rb.  Metadata and DescribeCluster list
    each broker's rack, `samsa cluster info` shows it, and the striped
    placer puts one replica of every RF-2 partition on rb, the rack of
    one broker (Kafka's rack-aware placement: racks in turn)."""
    import cli_util
    from test_replication_cluster import partitions, wait_parts
    racks = {1: "ra", 2: "ra", 3: "rb"}
    c = Cluster(samsa, n=3, extra={"unstable.replication.enable": "true"})
    for i, r in racks.items():
        c.nodes[i].overrides["broker.rack"] = r
    c.start_all()
    c.wait_unfenced(T(20))
    ctl = c.wait_leader(T(10))
    for i in (1, 2, 3):
        md = c.metadata(i)
        assert {b["node_id"]: b["rack"] for b in md["brokers"]} == racks, md
        with c.nodes[i].connect() as conn:
            dc = conn.describe_cluster(version=0)
        assert {b["broker_id"]: b["rack"] for b in dc["brokers"]} == racks, dc
    with c.nodes[ctl].connect() as conn:
        r = conn.create_topic("racked", num_partitions=8, replication_factor=2,
                              timeout=T(10))
    assert r["error_code"] == 0, r
    v, _ = wait_parts(c, [1, 2, 3], "racked", lambda v: len(v) == 8, T(10),
                      "created")
    for p in v.values():
        assert sorted(racks[n] for n in p["replica_nodes"]) == ["ra", "rb"], v
    bs = "%s:%d" % (HOST, c.nodes[1].ports[0])
    out = cli_util.run("cluster", "info", "--json", bootstrap=bs)
    assert out.rc == 0, out
    got = {b["id"]: b["rack"] for b in out.json()["brokers"]}
    assert got == racks, out
