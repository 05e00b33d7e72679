"""Metadata snapshots of the quorum (issue 18): with
metadata.log.max.record.bytes.between.snapshots=4096 (4 entries between
snapshots; at least 64 entries are kept behind each) the nodes snapshot
their image as records; a node stopped while 80 topics were created
restarts, is sent the leader's snapshot (the entries it lacks are gone
from the leader's log) and then lists every topic with the same id; a node restarted on its own snapshot loads it and
agrees too."""

import os
import re
import time

import pytest

from cluster_harness import Cluster
from samsa_harness import T


@pytest.fixture
def cluster(samsa):
    c = Cluster(samsa, n=3,
                extra={"metadata.log.max.record.bytes.between.snapshots": "4096"})
    c.start_all()
    return c


def snapshot_files(node):
    d = os.path.join(node.overrides["log.dirs"], "__raft_metadata")
    return [f for f in os.listdir(d) if f.startswith("snapshot-")]


def test_lagging_node_gets_a_snapshot_and_restart_loads_one(cluster):
    leader = cluster.wait_leader(T(20))
    cluster.wait_unfenced(T(15))
    first = ["s-%d" % i for i in range(3)]
    for name in first:
        assert cluster.create_topic(leader, name)["error_code"] == 0
    cluster.wait_topics_equal(first, T(10))
    lag = next(n for n in cluster.nodes if n != leader)
    lag_node = cluster.nodes[lag]
    assert not lag_node.srv.stop(), lag_node.srv.describe()
    more = ["m-%d" % i for i in range(80)]
    for name in more:
        r = cluster.create_topic(leader, name, partitions=2)
        assert r["error_code"] == 0, r
    ids = cluster.wait_topics_equal(first + more, T(10))
    assert snapshot_files(cluster.nodes[leader]), "the leader took no snapshot"
    cluster.start(lag)
    ids2 = cluster.wait_topics_equal(first + more, T(20), nodes=list(cluster.nodes))
    assert ids2 == ids
    # installed from the leader: loaded after the start, not only its own
    err = lag_node.srv.stderr_text()
    started = err.index("samsa-server 0.1.0 started")
    assert re.search(r"snapshot loaded at offset \d+", err[started:]), \
        lag_node.srv.stderr_tail()
    assert cluster.topics(lag)["m-79"] == (ids["m-79"], 2)
    # the leader restarts on its own snapshot (plus the entries after it)
    old = cluster.nodes[leader]
    assert not old.srv.stop(), old.srv.describe()
    cluster.start(leader)
    # the restart may move the raft leadership once more after the first
    # agreement: NOT_CONTROLLER (41) is asked again of the next leader
    deadline = time.monotonic() + T(20)
    while True:
        new = cluster.wait_leader(T(20))
        r = cluster.create_topic(new, "after-restarts")
        if r["error_code"] != 41 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert r["error_code"] == 0, r
    ids3 = cluster.wait_topics_equal(first + more + ["after-restarts"], T(20),
                                     nodes=list(cluster.nodes))
    assert {k: ids3[k] for k in ids} == ids
    assert re.search(r"snapshot loaded at offset \d+", old.srv.stderr_text()), \
        old.srv.stderr_tail()
