"""Three controllers + three brokers (issue 18): nodes 1-3 run
process.roles=controller (a CONTROLLER listener only, the voters of
controller.quorum.voters), nodes 4-6 process.roles=broker (a PLAINTEXT
listener only): they are no voters; each registers with the active
controller, which adds it to the quorum as an observer (a raft standby
reached through the socket the broker dials in), so it follows the
metadata log, is unfenced once caught up, and serves clients.

One test, bounded (session timeout 3000 ms, heartbeat 500 ms):
the quorum elects and the three brokers are unfenced; Metadata from every
broker lists exactly brokers 4-6 (no controller-only node) and kcat -L
sees three brokers; DescribeQuorum (forwarded by a broker) names voters
1-3 and observers 4-6, all at the high watermark; a 6-partition topic is
placed on the three brokers only; confluent-kafka produces to and
consumes all six partitions; kill -9 of the active controller: a new one
within a bound (printed), a topic created then exists on every broker with
one id, and every broker's metadata log is at the same offset (the high
watermark, DescribeQuorum); kill -9 of a broker: fenced within the session
timeout plus slack (printed), its partitions leader-less; restarted it
rejoins (listed, at the high watermark, leading its partitions again).
Separately: a broker-only node named in controller.quorum.voters is
refused at start with Kafka's message."""

import subprocess
import time

import kwire
from cli_util import ok
from cluster_harness import Cluster, describe_quorum
from samsa_harness import HOST, T

SESSION_MS = 3000
SLACK_S = 3.0
ELECTION_BOUND_S = 6.0
CONTROLLERS = {1, 2, 3}
BROKERS = {4, 5, 6}


def listed(cluster, node_id):
    md = cluster.metadata(node_id, topics=[])
    return {b["node_id"] for b in md["brokers"]}


def wait_listed(cluster, want, timeout, nodes):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = {i: listed(cluster, i) for i in nodes}
            if all(v == want for v in last.values()):
                return
        except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout) as e:
            last = "%s: %s" % (type(e).__name__, e)
        time.sleep(0.05)
    raise AssertionError("brokers listed are not %s within %.1f s: %s"
                         % (want, timeout, last))


def quorum(cluster, via):
    with cluster.nodes[via].connect() as c:
        dq = describe_quorum(c, version=2)
    assert dq["error_code"] == 0, dq
    p = dq["topics"][0]["partitions"][0]
    assert p["error_code"] == 0, dq
    return p


def wait_caught_up(cluster, observers, timeout, via):
    """Waits until DescribeQuorum (asked of broker via, forwarded to the
    active controller) lists observers exactly and every live voter and
    every observer at the high watermark: the same last committed
    offset."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            p = quorum(cluster, via)
            last = p
            obs = {o["replica_id"]: o["log_end_offset"] for o in p["observers"]}
            live = {n.node_id for n in cluster.live()}
            voters = {v["replica_id"]: v["log_end_offset"] for v in p["current_voters"]
                      if v["replica_id"] in live}
            hw = p["high_watermark"]
            if (set(obs) == observers and hw > 0
                    and all(v == hw for v in obs.values())
                    and all(v == hw for v in voters.values())):
                return p
        except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout, AssertionError) as e:
            last = "%s: %s" % (type(e).__name__, e)
        time.sleep(0.05)
    raise AssertionError("quorum members not at one offset within %.1f s: %s"
                         % (timeout, last))


def leaders(cluster, node_id, topic):
    md = cluster.metadata(node_id, topics=[topic])
    t = md["topics"][0]
    return {p["partition_index"]: p["leader_id"] for p in t["partitions"]}


def produce_consume(bootstrap, topic, parts, tag, before=None):
    """Produces 10 records to each partition and reads every partition
    from offset 0: before's records (what earlier rounds sent), then
    these.  Returns everything sent so far."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    # idempotent: a plain producer with 5 requests in flight may write a
    # retried batch after the next one (seen once under TSan right after
    # the topic was made: [v5..v9, v0..v4]), and this test reads in order
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5,
                  "enable.idempotence": True})
    sent, errors = {}, []

    def dr(err, msg):
        if err is not None:
            errors.append(err)
    for part in range(parts):
        sent[part] = [("%s-p%d-v%d" % (tag, part, i)).encode() for i in range(10)]
        for v in sent[part]:
            p.produce(topic, value=v, partition=part, on_delivery=dr)
    assert p.flush(T(30)) == 0
    assert errors == [], errors
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "g-" + tag,
                  "enable.auto.commit": False})
    c.assign([TopicPartition(topic, part, 0) for part in range(parts)])
    got = {part: [] for part in range(parts)}
    want = sum(map(len, sent.values())) + sum(map(len, (before or {}).values()))
    deadline = time.monotonic() + T(30)
    while sum(map(len, got.values())) < want and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        assert m.error() is None, m.error()
        got[m.partition()].append(m.value())
    c.close()
    want_all = {part: (before or {}).get(part, []) + sent[part] for part in range(parts)}
    assert got == want_all
    return want_all


def test_three_controllers_three_brokers(samsa):
    t_start = time.monotonic()
    cluster = Cluster(samsa, n=3, brokers=3,
                      extra={"broker.session.timeout.ms": str(SESSION_MS),
                             "broker.heartbeat.interval.ms": "500"})
    assert {i for i, n in cluster.nodes.items() if n.roles == "controller"} == CONTROLLERS
    assert {i for i, n in cluster.nodes.items() if n.roles == "broker"} == BROKERS
    cluster.start_all()
    t0 = time.monotonic()
    leader = cluster.wait_quorum_leader(T(15))
    assert leader in CONTROLLERS
    wait_listed(cluster, BROKERS, T(15), sorted(BROKERS))
    print("3 controllers + 3 brokers: leader %d, brokers 4-6 unfenced %.2f s "
          "after the start" % (leader, time.monotonic() - t0))
    for i in BROKERS:
        log = cluster.nodes[i].srv.stderr_text()
        assert "broker %d unfenced by the active controller" % i in log, log[-3000:]
        assert "(an observer) following 3 voter(s)" in log, log[-3000:]
    p = wait_caught_up(cluster, BROKERS, T(10), 4)
    assert {v["replica_id"] for v in p["current_voters"]} == CONTROLLERS, p
    assert p["leader_id"] == leader, p

    # clients see the three brokers only
    out = subprocess.run(["kcat", "-b", "%s:%d" % (HOST, cluster.nodes[5].ports[0]), "-L"],
                         capture_output=True, text=True, timeout=T(30))
    assert out.returncode == 0, out.stderr
    assert " 3 brokers:" in out.stdout, out.stdout
    for i in BROKERS:
        assert "broker %d at %s:%d" % (i, HOST, cluster.nodes[i].ports[0]) in out.stdout, \
            out.stdout
    with cluster.nodes[6].connect() as c:
        dc = c.describe_cluster(version=0)
    assert {b["broker_id"] for b in dc["brokers"]} == BROKERS, dc
    # Kafka's KRaft brokers answer a live broker as ControllerId (clients
    # send admin requests there; it forwards them): here the node asked
    assert dc["controller_id"] == 6, dc
    for i in BROKERS:
        assert cluster.controller_id(i) == i

    # the CLI: controller_id is the active controller (DescribeQuorum's)
    j = ok("cluster", "info", "--json",
           bootstrap="%s:%d" % (HOST, cluster.nodes[4].ports[0])).json()
    assert j["controller_id"] == leader and j["quorum"]["leader"] == leader, j
    assert j["quorum"]["voters"] == [1, 2, 3], j
    assert [b["id"] for b in j["brokers"]] == [4, 5, 6], j

    # confluent-kafka's admin client sends CreateTopics to the ControllerId
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": "%s:%d" % (HOST, cluster.nodes[4].ports[0])})
    fs = admin.create_topics([NewTopic("obs-admin", 2, 1)], request_timeout=T(15))
    fs["obs-admin"].result(timeout=T(20))

    # placement: the brokers only; produce/consume across them
    r = cluster.create_topic(4, "obs-a", partitions=6)
    assert r["error_code"] == 0, r
    ids = cluster.wait_topics_equal(["obs-a"], T(10))
    ls = leaders(cluster, 5, "obs-a")
    assert sorted(ls) == list(range(6)), ls
    assert set(ls.values()) == BROKERS, ls
    bootstrap = "%s:%d" % (HOST, cluster.nodes[4].ports[0])
    sent = produce_consume(bootstrap, "obs-a", 6, "a")

    # kill -9 of the active controller
    cluster.kill(leader)
    t0 = time.monotonic()
    new = cluster.wait_quorum_leader(T(ELECTION_BOUND_S), exclude=(leader,))
    elapsed = time.monotonic() - t0
    assert new in CONTROLLERS - {leader}
    print("kill -9 of active controller %d: brokers name controller %d "
          "after %.2f s" % (leader, new, elapsed))
    r = cluster.create_topic(6, "obs-b", partitions=3)
    assert r["error_code"] == 0, r
    ids2 = cluster.wait_topics_equal(["obs-a", "obs-b", "obs-admin"], T(10))
    assert ids2["obs-a"] == ids["obs-a"]
    p = wait_caught_up(cluster, BROKERS, T(10), 5)
    assert p["leader_id"] == new, p
    assert {v["replica_id"] for v in p["current_voters"]} == CONTROLLERS, p
    # the brokers stay unfenced through the change
    wait_listed(cluster, BROKERS, T(5), sorted(BROKERS))

    # kill -9 of a broker: fenced within the session timeout
    victim = 5
    others = sorted(BROKERS - {victim})
    lost = [part for part, b in leaders(cluster, 4, "obs-a").items() if b == victim]
    assert lost
    cluster.kill(victim)
    t0 = time.monotonic()
    wait_listed(cluster, BROKERS - {victim}, SESSION_MS / 1000 + SLACK_S, others)
    print("broker %d fenced %.2f s after kill -9 (session timeout %d ms)"
          % (victim, time.monotonic() - t0, SESSION_MS))
    ls = leaders(cluster, 4, "obs-a")
    assert all(ls[part] == -1 for part in lost), ls

    # restart: it rejoins (its raft log names it an observer already)
    t0 = time.monotonic()
    cluster.start(victim)
    wait_listed(cluster, BROKERS, T(15), sorted(BROKERS))
    wait_caught_up(cluster, BROKERS, T(10), victim)
    print("broker %d rejoined %.2f s after its restart"
          % (victim, time.monotonic() - t0))
    deadline = time.monotonic() + T(10)
    while time.monotonic() < deadline:
        ls = leaders(cluster, victim, "obs-a")
        if all(ls[part] == victim for part in lost):
            break
        time.sleep(0.05)
    assert all(ls[part] == victim for part in lost), ls
    assert cluster.wait_topics_equal(["obs-a", "obs-b", "obs-admin"], T(10)) == ids2
    produce_consume("%s:%d" % (HOST, cluster.nodes[victim].ports[0]), "obs-a", 6, "b", sent)
    print("whole test: %.1f s" % (time.monotonic() - t_start))


def test_broker_only_voter_refused(samsa):
    """A process.roles=broker node whose id is in controller.quorum.voters
    is refused (Kafka's KafkaConfig check)."""
    rc, err, _ = samsa.run_to_exit(overrides={
        "process.roles": "broker", "node.id": "1",
        "controller.quorum.voters": "1@127.0.0.1:1",
        "controller.listener.names": "CONTROLLER",
        "listeners": "PLAINTEXT://127.0.0.1:0"}, use_ports=False)
    assert rc not in (0, None), err
    assert ("If process.roles contains just the 'broker' role, the node id 1 "
            "must not be included in the set of voters") in err, err


def test_unregistered_broker_leaves_quorum(samsa):
    """UnregisterBroker (API 64) of a broker that is down: the active
    controller removes its observer from the raft configuration, so
    DescribeQuorum no longer lists it (the live broker stays)."""
    from test_partition_leadership import unregister_broker
    cluster = Cluster(samsa, n=1, brokers=2,
                      extra={"broker.session.timeout.ms": str(SESSION_MS),
                             "broker.heartbeat.interval.ms": "500"})
    cluster.start_all()
    cluster.wait_quorum_leader(T(15))
    wait_listed(cluster, {2, 3}, T(15), [2, 3])
    wait_caught_up(cluster, {2, 3}, T(10), 2)
    cluster.kill(3)
    # still an observer while only fenced: its registration stays
    wait_listed(cluster, {2}, SESSION_MS / 1000 + SLACK_S, [2])
    assert {o["replica_id"] for o in quorum(cluster, 2)["observers"]} == {2, 3}
    t0 = time.monotonic()
    assert unregister_broker(cluster, 2, 3) == (0, "")
    deadline = time.monotonic() + T(10)
    while time.monotonic() < deadline:
        p = quorum(cluster, 2)
        if {o["replica_id"] for o in p["observers"]} == {2}:
            break
        time.sleep(0.05)
    assert {o["replica_id"] for o in p["observers"]} == {2}, p
    assert {v["replica_id"] for v in p["current_voters"]} == {1}, p
    print("observer 3 removed %.2f s after UnregisterBroker" % (time.monotonic() - t0))
    # the quorum still commits, and the removed broker is not added back
    r = cluster.create_topic(2, "unreg-after", partitions=1)
    assert r["error_code"] == 0, r
    wait_caught_up(cluster, {2}, T(10), 2)
