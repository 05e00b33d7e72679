"""Partition leadership follows broker fencing (issue 18), on a three-node
combined cluster with one replica per partition, as Kafka's KRaft
controller moves it (ReplicationControlManager):

- kill -9 of a broker that leads partitions: after broker.session.timeout.ms
  the controller fences it and, in the same batch, writes a
  PartitionChangeRecord per partition it led: another node's Metadata then
  answers those partitions LEADER_NOT_AVAILABLE with leader -1, the leader
  epoch bumped, the ISR still the one replica, which is offline; Produce,
  Fetch and ListOffsets there answer NOT_LEADER_OR_FOLLOWER; a new topic
  places nothing on the fenced broker.  Restarted, it registers, its
  heartbeat unfences it and it leads those partitions again (epoch bumped
  again): produce and fetch work, what it stored before the kill is still
  there, and a topic deleted while it was down is deleted there once it
  has caught up.  Killed and restarted at once (within the session
  timeout), its new, fenced registration moves leadership off it and the
  unfence gives it back.  While it is fenced, the active controller's
  samsa_offline_partitions, `samsa cluster info` and `samsa topic
  describe --unavailable-partitions` count and list its partitions.
- SIGTERM (controlled shutdown, KIP-631): the broker's heartbeat asks
  WantShutDown, the controller moves its leadership away and only then
  answers ShouldShutDown: the broker exits well within the session
  timeout (set long here, so that fencing by timeout cannot explain it)
  and its partitions are leader-less by the time it has exited.
- UnregisterBroker (API 64) at a forwarding node: leadership moves off the
  broker, its registration goes; again: BROKER_ID_NOT_REGISTERED.
Every wait is bounded; the delays are printed."""

import time

import pytest

import kwire
from cli_util import ok
from cluster_harness import Cluster
from samsa_harness import HOST, T

LEADER_NOT_AVAILABLE = 5
NOT_LEADER_OR_FOLLOWER = 6
HEARTBEAT_MS = 500
SLACK_S = 4.0
NPARTS = 6


def make_cluster(samsa, session_ms):
    c = Cluster(samsa, n=3, extra={"broker.session.timeout.ms": str(session_ms),
                                   "broker.heartbeat.interval.ms": str(HEARTBEAT_MS)})
    c.start_all()
    c.wait_unfenced(T(20))
    return c


def partitions(cluster, node_id, topic):
    """{partition: partition dict} of topic in node's Metadata."""
    md = cluster.metadata(node_id, topics=[topic])
    t = next(t for t in md["topics"] if t["name"] == topic)
    return {p["partition_index"]: p for p in t["partitions"]}


def wait_parts(cluster, node_ids, topic, pred, timeout, what):
    """Waits until pred(partitions) holds on every node of node_ids;
    returns the last view of the first node and the seconds waited."""
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


def wait_unlisted(cluster, node_ids, broker, timeout):
    """Waits until no node of node_ids lists broker in Metadata."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = {i: {b["node_id"] for b in cluster.metadata(i, topics=[])["brokers"]}
                for i in node_ids}
        if all(broker not in v for v in last.values()):
            return
        time.sleep(0.05)
    raise AssertionError("broker %d still listed after %.1f s: %s"
                         % (broker, timeout, last))


def setup_topic(cluster, topic):
    """Creates topic (NPARTS partitions, one replica each), waits until
    every node sees every partition led; returns (active controller, a
    non-controller broker that leads partitions, the initial view)."""
    leader = cluster.wait_leader(T(10))
    r = cluster.create_topic(leader, topic, partitions=NPARTS)
    assert r["error_code"] == 0, r
    view, _ = wait_parts(cluster, [1, 2, 3], topic,
                         lambda v: len(v) == NPARTS
                         and all(p["leader_id"] >= 0 for p in v.values()),
                         T(10), "partitions led")
    led = {}
    for p in view.values():
        led.setdefault(p["leader_id"], []).append(p["partition_index"])
    victims = [i for i in led if i != leader]
    assert victims, "every partition on the controller: %s" % view
    return leader, max(victims, key=lambda i: len(led[i])), view


def victim_parts(view, victim):
    return sorted(i for i, p in view.items() if p["leader_id"] == victim)


def leaderless(victim_ps, before, bump):
    def pred(v):
        for i in victim_ps:
            p = v[i]
            if p["leader_id"] != -1 or p["error_code"] != LEADER_NOT_AVAILABLE:
                return False
            if p["leader_epoch"] != before[i]["leader_epoch"] + bump:
                return False
        return True
    return pred


def led_by(victim, victim_ps, before, bump):
    def pred(v):
        return all(v[i]["leader_id"] == victim and v[i]["error_code"] == 0
                   and v[i]["leader_epoch"] == before[i]["leader_epoch"] + bump
                   for i in victim_ps)
    return pred


def produce_fetch(cluster, node_id, topic, part, value):
    """Produce value to the partition's leader node_id and read it back;
    retries (bounded) while the node has not applied the image that makes
    it the leader (UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER)."""
    deadline = time.monotonic() + T(10)
    with cluster.nodes[node_id].connect() as c:
        while True:
            r = c.produce(topic, part, kwire.encode_batch([kwire.Record(value)]),
                          timeout=T(10))
            if r["error_code"] not in (3, NOT_LEADER_OR_FOLLOWER) \
                    or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert r["error_code"] == 0, r
        f = c.fetch(topic, part, r["base_offset"], timeout=T(10))
        assert f["error_code"] == 0, f
        vals = [rec["value"] for rec in kwire.records_of(f["batches"])]
        assert value in vals, vals


def test_kill_fences_leadership_and_restart_restores_it(samsa):
    session_ms = 3000
    cluster = make_cluster(samsa, session_ms)
    topic = "lead-kill"
    leader, victim, before = setup_topic(cluster, topic)
    vps = victim_parts(before, victim)
    others = [i for i in (1, 2, 3) if i != victim]
    produce_fetch(cluster, victim, topic, vps[0], b"before")
    # a topic deleted while the broker is down: its log is a stray there
    with cluster.nodes[leader].connect() as c:
        r = c.create_topics([{"name": "lead-gone", "num_partitions": -1,
                              "replication_factor": -1, "configs": {},
                              "assignments": [(0, [victim])]}], timeout=T(10))
    assert r["topics"][0]["error_code"] == 0, r
    wait_parts(cluster, [victim], "lead-gone",
               lambda v: v and v[0]["leader_id"] == victim, T(10), "lead-gone")
    produce_fetch(cluster, victim, "lead-gone", 0, b"gone")

    cluster.kill(victim)
    with cluster.nodes[leader].connect() as c:
        r = c.delete_topics(["lead-gone"], timeout=T(10))
    assert r[0]["error_code"] == 0, r
    after, waited = wait_parts(cluster, others, topic,
                               leaderless(vps, before, 1),
                               session_ms / 1000 + SLACK_S, "leader-less")
    print("broker %d's %d partition(s) leader-less %.2f s after kill -9 "
          "(session timeout %d ms)" % (victim, len(vps), waited, session_ms))
    for i in vps:
        p = after[i]
        assert p["replica_nodes"] == [victim], p
        assert p["isr_nodes"] == [victim], p      # the last ISR member stays
        assert p["offline_replicas"] == [victim], p
    # the other partitions did not change
    for i, p in after.items():
        if i not in vps:
            assert p["leader_id"] == before[i]["leader_id"], (i, p)
            assert p["leader_epoch"] == before[i]["leader_epoch"], (i, p)

    # offline, as the operator sees it: the active controller's gauge,
    # `samsa cluster info` and `samsa topic describe --unavailable-...`
    ctl = cluster.wait_leader(T(10))
    assert cluster.metric(ctl, "samsa_offline_partitions") == len(vps)
    bs = "%s:%d" % (HOST, cluster.nodes[others[0]].ports[0])
    info = ok("cluster", "info", "--json", bootstrap=bs).json()
    assert info["offline_partitions"] == len(vps), info
    # the fenced broker is listed as such (DescribeCluster v2, KIP-1073),
    # only when asked
    with cluster.nodes[others[0]].connect() as c:
        dc = c.describe_cluster(2, include_fenced_brokers=True)
        assert {b["broker_id"]: b["is_fenced"] for b in dc["brokers"]} == {
            i: i == victim for i in (1, 2, 3)}, dc
        for v in (1, 2):
            dc = c.describe_cluster(v)
            assert sorted(b["broker_id"] for b in dc["brokers"]) == others, dc
    assert {b["id"]: b["fenced"] for b in info["brokers"]} == {
        i: i == victim for i in (1, 2, 3)}, info
    un = ok("topic", "describe", "--unavailable-partitions", "--json",
            bootstrap=bs).json()
    assert [(t["name"], [p["partition"] for p in t["partitions"]])
            for t in un] == [(topic, vps)], un

    # the partition APIs at a live node: NOT_LEADER_OR_FOLLOWER
    with cluster.nodes[others[0]].connect() as c:
        r = c.produce(topic, vps[0], kwire.encode_batch([kwire.Record(b"x")]),
                      timeout=T(10))
        assert r["error_code"] == NOT_LEADER_OR_FOLLOWER, r
        f = c.fetch(topic, vps[0], 0, timeout=T(10))
        assert f["error_code"] == NOT_LEADER_OR_FOLLOWER, f
        lo = c.list_offsets(topic, vps[0], -1, timeout=T(10))
        assert lo["error_code"] == NOT_LEADER_OR_FOLLOWER, lo
    # no new partition goes on the fenced broker
    leader = cluster.wait_leader(T(10))
    r = cluster.create_topic(leader, "lead-new", partitions=12)
    assert r["error_code"] == 0, r
    new, _ = wait_parts(cluster, others, "lead-new",
                        lambda v: len(v) == 12, T(10), "new topic")
    for p in new.values():
        assert victim not in p["replica_nodes"], p
        assert p["leader_id"] in others, p

    cluster.start(victim)
    back, waited = wait_parts(cluster, [1, 2, 3], topic,
                              led_by(victim, vps, before, 2), T(20),
                              "leader again")
    print("broker %d leads its partitions again %.2f s after restart"
          % (victim, waited))
    deadline = time.monotonic() + T(5)
    while cluster.metric(cluster.wait_leader(T(10)),
                         "samsa_offline_partitions") != 0:
        assert time.monotonic() < deadline, "partitions still offline"
        time.sleep(0.05)
    assert ok("topic", "describe", "--unavailable-partitions", "--json",
              bootstrap=bs).json() == []
    info = ok("cluster", "info", "--json", bootstrap=bs).json()
    assert not any(b["fenced"] for b in info["brokers"]), info
    for i in vps:
        assert back[i]["isr_nodes"] == [victim], back[i]
        assert back[i]["offline_replicas"] == [], back[i]
        produce_fetch(cluster, victim, topic, i, b"after-%d" % i)
    # what it stored before the kill is still there (its restart did not
    # take its logs for strays before it had caught up)
    with cluster.nodes[victim].connect() as c:
        f = c.fetch(topic, vps[0], 0, timeout=T(10))
        assert f["error_code"] == 0, f
        vals = [rec["value"] for rec in kwire.records_of(f["batches"])]
        assert vals[:1] == [b"before"], vals
    gone = "deleting the log of lead-gone-0: its topic or partition no longer exists"
    assert gone in cluster.nodes[victim].srv.stderr_text(), \
        cluster.nodes[victim].srv.stderr_tail()
    assert "deleting the log of %s-" % topic not in \
        cluster.nodes[victim].srv.stderr_text()

    # kill -9 and restart at once, within the session timeout: the new
    # registration is fenced, so leadership leaves the broker in its batch
    # (or the session timeout's, whichever comes first) and comes back on
    # the unfence: two more epochs either way
    cluster.kill(victim)
    cluster.start(victim)
    _, waited = wait_parts(cluster, [1, 2, 3], topic,
                           led_by(victim, vps, before, 4), T(20),
                           "leader again after a quick restart")
    print("quick restart: broker %d leads again %.2f s after it" % (victim, waited))
    produce_fetch(cluster, victim, topic, vps[0], b"quick")


def test_sigterm_moves_leadership_before_exit(samsa):
    session_ms = 30000          # fencing by timeout cannot explain a fast exit
    cluster = make_cluster(samsa, session_ms)
    topic = "lead-term"
    _, victim, before = setup_topic(cluster, topic)
    vps = victim_parts(before, victim)
    others = [i for i in (1, 2, 3) if i != victim]
    srv = cluster.nodes[victim].srv

    t0 = time.monotonic()
    srv.signal(__import__("signal").SIGTERM)
    rc = srv.wait_exit(T(10))
    took = time.monotonic() - t0
    assert rc == 0, (rc, srv.stderr_tail())
    srv.stopped = True
    print("broker %d exited %.2f s after SIGTERM (session timeout %d ms)"
          % (victim, took, session_ms))
    assert took < session_ms / 1000 / 2, took
    err = srv.stderr_text()
    assert "the controller approved the controlled shutdown" in err, \
        srv.stderr_tail()
    # the controller moved leadership before it approved: the committed
    # records reach the other nodes at once, no session timeout involved
    after, waited = wait_parts(cluster, others, topic,
                               leaderless(vps, before, 1), SLACK_S,
                               "leader-less after controlled shutdown")
    print("leader-less on the others %.2f s after the exit" % waited)
    for i in vps:
        assert after[i]["isr_nodes"] == [victim], after[i]
    # fenced too (Kafka's SHUTDOWN_NOW): soon not listed anywhere
    wait_unlisted(cluster, others, victim, SLACK_S)

    cluster.start(victim)
    _, waited = wait_parts(cluster, [1, 2, 3], topic,
                           led_by(victim, vps, before, 2), T(20),
                           "leader again after restart")
    print("broker %d leads again %.2f s after restart" % (victim, waited))
    produce_fetch(cluster, victim, topic, vps[0], b"back")


API_UNREGISTER_BROKER = 64
BROKER_ID_NOT_REGISTERED = 102
kwire.FLEXIBLE_FROM.setdefault(API_UNREGISTER_BROKER, 0)   # flexible from v0


def unregister_broker(cluster, node_id, broker_id):
    """UnregisterBroker v0 at node's broker listener: (error, message)."""
    with cluster.nodes[node_id].connect() as c:
        r = c.request_raw(API_UNREGISTER_BROKER, 0,
                          kwire.Writer().i32(broker_id).tags().bytes(), T(10))
        r.i32()                                         # ThrottleTimeMs
        err = r.i16()
        msg = r.string(flexible=True, nullable=True)
        r.tags()
        r.done("UnregisterBroker v0 response")
        return err, msg


def test_unregister_broker(samsa):
    """UnregisterBroker (API 64) at a node that forwards it to the active
    controller: leadership moves off the broker and its registration goes;
    a second one answers BROKER_ID_NOT_REGISTERED."""
    cluster = make_cluster(samsa, 3000)
    topic = "lead-unreg"
    leader, victim, before = setup_topic(cluster, topic)
    vps = victim_parts(before, victim)
    others = [i for i in (1, 2, 3) if i != victim]
    asker = next(i for i in others if i != leader)
    with cluster.nodes[asker].connect() as c:
        assert c.api_versions(version=3)["api_keys"][API_UNREGISTER_BROKER] == (0, 0)
    cluster.kill(victim)
    assert unregister_broker(cluster, asker, victim) == (0, "")   # Kafka's default
    wait_parts(cluster, others, topic, leaderless(vps, before, 1), T(10),
               "leader-less after UnregisterBroker")
    err, msg = unregister_broker(cluster, asker, victim)
    assert err == BROKER_ID_NOT_REGISTERED, (err, msg)
    wait_unlisted(cluster, others, victim, SLACK_S)
