"""Broker heartbeats and fencing on a three-node combined cluster
(broker.session.timeout.ms=3000, broker.heartbeat.interval.ms=500): every
broker is unfenced after start (its first caught-up BrokerHeartbeat
unfences it); after kill -9 of a node that is not the active controller
the others stop listing it in Metadata within the session timeout plus
slack (the delay is printed); restarted, it registers again and is listed
again; after kill -9 of the active controller the new one does not fence
the live brokers.  Partition leadership on fencing is
test_partition_leadership.py's."""

import time

import pytest

import kwire
from cluster_harness import Cluster
from samsa_harness import T

SESSION_MS = 3000
SLACK_S = 3.0


@pytest.fixture
def cluster(samsa):
    c = Cluster(samsa, n=3, extra={"broker.session.timeout.ms": str(SESSION_MS),
                                   "broker.heartbeat.interval.ms": "500"})
    c.start_all()
    return c


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


def unfenced_logged(node):
    return node.srv.stderr_text().count(
        "broker %d unfenced by the active controller" % node.node_id)


def test_fence_on_session_timeout_and_unfence_on_restart(cluster):
    wait_listed(cluster, {1, 2, 3}, T(15), [1, 2, 3])
    # registration leaves it fenced: the heartbeat unfenced each
    for n in cluster.nodes.values():
        assert unfenced_logged(n) == 1, n.srv.stderr_tail()
    leader = cluster.wait_leader(T(10))
    victim = next(i for i in (1, 2, 3) if i != leader)
    others = [i for i in (1, 2, 3) if i != victim]
    cluster.kill(victim)
    t0 = time.monotonic()
    wait_listed(cluster, set(others), SESSION_MS / 1000 + SLACK_S, others)
    print("broker %d fenced %.2f s after kill -9 (session timeout %d ms)"
          % (victim, time.monotonic() - t0, SESSION_MS))
    cluster.start(victim)
    wait_listed(cluster, {1, 2, 3}, T(15), [1, 2, 3])
    assert unfenced_logged(cluster.nodes[victim]) == 1, \
        cluster.nodes[victim].srv.stderr_tail()


def test_new_controller_keeps_live_brokers(cluster):
    wait_listed(cluster, {1, 2, 3}, T(15), [1, 2, 3])
    leader = cluster.wait_leader(T(10))
    cluster.kill(leader)
    others = [i for i in (1, 2, 3) if i != leader]
    new = cluster.wait_leader(T(10), exclude=(leader,))
    assert new in others
    # the dead one is fenced by the new controller after its session
    # timeout; the live ones stay listed throughout
    deadline = time.monotonic() + SESSION_MS / 1000 + SLACK_S
    fenced_dead = False
    while time.monotonic() < deadline:
        views = {i: listed(cluster, i) for i in others}
        for v in views.values():
            assert set(others) <= v, views
        if all(leader not in v for v in views.values()):
            fenced_dead = True
        time.sleep(0.1)
    assert fenced_dead, views
