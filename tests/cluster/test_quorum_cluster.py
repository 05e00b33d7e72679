"""Three combined KRaft nodes (process.roles=broker,controller) run one
metadata quorum (issue 18): a leader is elected and every node names it
(Metadata ControllerId); CreateTopics on the active controller shows the
topic on every node with the same topic id, and so does CreateTopics on
any other node (its broker listener forwards it to the active
controller), while another node's CONTROLLER listener answers
NOT_CONTROLLER; after kill -9 of the active controller a new one is
elected within a bound (the time is printed) and a topic created then is
on every live node; the killed node catches up after a restart; a topic
created while the leader dies is on every node or on none."""

import threading
import time

import pytest

import kwire
from cluster_harness import Cluster
from samsa_harness import HOST, T

NOT_CONTROLLER = 41
TOPIC_ALREADY_EXISTS = 36
# controller.quorum.election.timeout.ms is 1000: a new leader within a few
# election timeouts (libraft randomises each node's timeout in [T, 2T])
FAILOVER_BOUND_S = 6.0


@pytest.fixture
def cluster(samsa):
    c = Cluster(samsa, n=3)
    c.start_all()
    return c


def test_leader_elected_and_topic_everywhere(cluster):
    t0 = time.monotonic()
    leader = cluster.wait_leader(T(20))
    cluster.wait_unfenced(T(15))
    print("first leader: node %d after %.2f s" % (leader, time.monotonic() - t0))
    r = cluster.create_topic(leader, "t-one", partitions=3)
    assert r["error_code"] == 0, r
    ids = cluster.wait_topics_equal(["t-one"], T(10))
    assert ids["t-one"] == r["topic_id"], (ids, r)
    for n in cluster.nodes:
        assert cluster.topics(n)["t-one"] == (r["topic_id"], 3)

    # another node's broker listener forwards it to the active controller
    other = next(n for n in cluster.nodes if n != leader)
    r2 = cluster.create_topic(other, "t-forwarded", partitions=2)
    assert r2["error_code"] == 0, r2
    ids = cluster.wait_topics_equal(["t-forwarded"], T(10))
    assert ids["t-forwarded"] == r2["topic_id"], (ids, r2)
    # a duplicate comes back with the active controller's answer
    r3 = cluster.create_topic(other, "t-forwarded")
    assert r3["error_code"] == TOPIC_ALREADY_EXISTS, r3


def test_not_controller_on_a_standby_controller_listener(cluster):
    """The CONTROLLER listener of a node that is not the active controller
    answers NOT_CONTROLLER, naming the active one (nothing is written)."""
    leader = cluster.wait_leader(T(20))
    cluster.wait_unfenced(T(15))
    other = next(n for n in cluster.nodes if n != leader)
    with kwire.connect(HOST, cluster.nodes[other].ports[1], T(5)) as c:
        r = c.create_topic("t-refused", timeout=T(10))
    assert r["error_code"] == NOT_CONTROLLER, r
    assert ("node %d" % leader) in (r.get("error_message") or ""), r
    with kwire.connect(HOST, cluster.nodes[leader].ports[1], T(5)) as c:
        r = c.create_topic("t-on-controller-listener", timeout=T(10))
    assert r["error_code"] == 0, r
    cluster.wait_topics_equal(["t-on-controller-listener"], T(10))
    for n in cluster.nodes:
        assert "t-refused" not in cluster.topics(n)


def test_failover_after_kill_and_catch_up(cluster):
    leader = cluster.wait_leader(T(20))
    cluster.wait_unfenced(T(15))
    r = cluster.create_topic(leader, "before-kill")
    assert r["error_code"] == 0, r
    cluster.wait_topics_equal(["before-kill"], T(10))
    t0 = time.monotonic()
    cluster.kill(leader)
    new = cluster.wait_leader(T(30), exclude=(leader,))
    took = time.monotonic() - t0
    print("failover: node %d killed, node %d active after %.2f s" % (leader, new, took))
    assert took < T(FAILOVER_BOUND_S), took
    r = cluster.create_topic(new, "after-kill", partitions=2)
    assert r["error_code"] == 0, r
    ids = cluster.wait_topics_equal(["before-kill", "after-kill"], T(10))
    assert ids["after-kill"] == r["topic_id"]
    # the killed node restarts from its raft log and catches up
    cluster.start(leader)
    r3 = cluster.create_topic(new, "after-restart")
    assert r3["error_code"] == 0, r3
    want = ["before-kill", "after-kill", "after-restart"]
    ids2 = cluster.wait_topics_equal(want, T(15), nodes=list(cluster.nodes))
    assert ids2["after-kill"] == ids["after-kill"]
    assert cluster.topics(leader)["after-kill"] == (ids["after-kill"], 2)
    assert cluster.wait_leader(T(10)) >= 0


def test_topic_created_during_failover_everywhere_or_nowhere(cluster):
    leader = cluster.wait_leader(T(20))
    cluster.wait_unfenced(T(15))
    results = {}

    def create():
        try:
            results["r"] = cluster.create_topic(leader, "racing", partitions=1)
        except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout,
                kwire.ProtocolError) as e:
            results["e"] = e

    th = threading.Thread(target=create)
    th.start()
    time.sleep(0.002)
    cluster.kill(leader)
    th.join(T(20))
    assert not th.is_alive()
    new = cluster.wait_leader(T(30), exclude=(leader,))
    # a barrier: once a later change is everywhere, so is all before it
    r = cluster.create_topic(new, "after-race")
    assert r["error_code"] == 0, r
    cluster.wait_topics_equal(["after-race"], T(10))
    views = [cluster.topics(n.node_id) for n in cluster.live()]
    have = [("racing" in v) for v in views]
    assert all(have) or not any(have), (views, results)
    if all(have):
        assert len({v["racing"][0] for v in views}) == 1, views
    if results.get("r", {}).get("error_code") == 0:
        # acknowledged: it must have survived the failover
        assert all(have), (views, results)
    # and the killed node agrees once it is back
    cluster.start(leader)
    cluster.wait_topics_equal(["after-race"], T(15), nodes=list(cluster.nodes))
    back = cluster.topics(leader)
    assert ("racing" in back) == all(have), (back, views)
    print("racing topic: %s (create answer: %s)" % (
        "committed" if all(have) else "lost", results))


def test_controller_listener_sniffing(cluster):
    """The CONTROLLER listener peeks at a new connection's first bytes: a
    Kafka request that trickles in byte by byte is still Kafka (its first
    byte cannot start the raft magic); bytes that start like the magic and
    then differ are read as Kafka (an absurd frame size: closed), and the
    raft connections keep working meanwhile."""
    leader = cluster.wait_leader(T(20))
    cluster.wait_unfenced(T(15))
    other = next(n for n in cluster.nodes if n != leader)
    port = cluster.nodes[other].ports[1]
    frame = kwire.api_versions_request(0, 7)
    with kwire.connect(HOST, port, T(5)) as c:
        for b in frame:
            c.sock.sendall(bytes([b]))
            time.sleep(0.005)
        payload = c.recv_frame(T(5))
        r = kwire.decode_api_versions_response(payload, 0)
        assert r["error_code"] == 0 and r["correlation_id"] == 7, r
    with kwire.connect(HOST, port, T(5)) as c:
        c.sock.sendall(b"\xd3SAM")      # a prefix of the raft magic: waits
        time.sleep(0.2)
        c.sock.sendall(b"XXXX")         # not the magic after all
        with pytest.raises(kwire.ConnectionClosed):
            c.recv_frame(T(3))
    # the quorum still commits
    r = cluster.create_topic(leader, "after-sniff")
    assert r["error_code"] == 0, r
    cluster.wait_topics_equal(["after-sniff"], T(10))
