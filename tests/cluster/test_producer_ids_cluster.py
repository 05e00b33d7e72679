"""Producer ids on a three-node combined cluster (issue 18, KIP-730): a
node that is not the active controller gets its blocks of producer ids
with AllocateProducerIds (API 67) from the active controller, off the
handler path (broker/pidmgr.h), so InitProducerId answers on every node;
each node hands out ids from its own block (distinct blocks); the ids stay
unique after the active controller is killed and another takes over, also
once a node has moved on to a block allocated by the new controller.
AllocateProducerIds itself: NOT_CONTROLLER on a node that is not the
active controller, STALE_BROKER_EPOCH for a wrong broker epoch or a broker
that is not registered, a block of 1000 ids for the right epoch; it is
listed by ApiVersions on the CONTROLLER listener only."""

import re
import time

import pytest

import kwire
from cluster_harness import Cluster
from samsa_harness import HOST, T
from test_broker_registration import REGISTERED_BOUND_S, wait_registered

API_ALLOCATE_PRODUCER_IDS = 67
kwire.FLEXIBLE_FROM.setdefault(API_ALLOCATE_PRODUCER_IDS, 0)
COORDINATOR_LOAD_IN_PROGRESS = 14
NOT_CONTROLLER = 41
STALE_BROKER_EPOCH = 77
BLOCK = 1000
EPOCH_RE = re.compile(r"broker (\d+) registered with the active controller "
                      r"(\d+): \d+ endpoint\(s\), broker epoch (\d+)")


@pytest.fixture
def cluster(samsa):
    c = Cluster(samsa, n=3)
    c.start_all()
    return c


def allocate_producer_ids(node, broker_id, broker_epoch):
    """AllocateProducerIds v0 to node's CONTROLLER listener."""
    body = kwire.Writer().i32(broker_id).i64(broker_epoch).tags().bytes()
    with kwire.connect(HOST, node.ports[1], T(5)) as c:
        r = c.request_raw(API_ALLOCATE_PRODUCER_IDS, 0, body, T(10))
        out = {"throttle_time_ms": r.i32(), "error_code": r.i16(),
               "producer_id_start": r.i64(), "producer_id_len": r.i32()}
        r.tags()
        r.done("AllocateProducerIds v0 response")
        return out


def next_pid(conn, timeout):
    """One idempotent InitProducerId answered with an id, retrying
    COORDINATOR_LOAD_IN_PROGRESS (no block at hand yet) within timeout;
    returns (pid, retries)."""
    deadline = time.monotonic() + timeout
    retries = 0
    while True:
        r = kwire.init_producer_id(conn, version=4)
        if r["error_code"] == 0:
            assert r["producer_epoch"] == 0, r
            return r["producer_id"], retries
        assert r["error_code"] == COORDINATOR_LOAD_IN_PROGRESS, r
        assert time.monotonic() < deadline, \
            "no producer id within %.1f s: %s" % (timeout, r)
        retries += 1
        time.sleep(0.05)


def pids_from(cluster, node_id, n, timeout):
    with cluster.nodes[node_id].connect() as c:
        out = [next_pid(c, timeout)[0] for _ in range(n)]
    return out


def epoch_of(node):
    """The broker epoch node's log says it last registered with."""
    got = [int(m.group(3)) for m in EPOCH_RE.finditer(node.srv.stderr_text())]
    assert got, node.srv.stderr_tail()
    return got[-1]


def test_unique_ids_on_every_node_and_after_failover(cluster):
    leader = wait_registered(cluster, T(REGISTERED_BOUND_S))
    seen = {}
    first = {}
    for i in (1, 2, 3):
        ids = pids_from(cluster, i, 5, T(15))
        first[i] = ids[0]
        assert ids == list(range(ids[0], ids[0] + 5)), (i, ids)
        for p in ids:
            assert p not in seen, (p, i, seen.get(p))
            seen[p] = i
    blocks = {i: first[i] // BLOCK for i in first}
    print("controller %d; first ids per node %s" % (leader, first))
    assert len(set(blocks.values())) == 3, blocks

    cluster.kill(leader)
    new = cluster.wait_leader(T(15), exclude=(leader,))
    others = [i for i in (1, 2, 3) if i != leader]
    assert new in others
    # more than a block's worth per node: each moves on to blocks the new
    # controller allocates (prefetched at 90%)
    for i in others:
        ids = pids_from(cluster, i, BLOCK + 100, T(15))
        for p in ids:
            assert p not in seen, (p, i, seen.get(p))
            seen[p] = i
        assert len({p // BLOCK for p in ids}) >= 2, (i, ids[0], ids[-1])
    print("%d distinct producer ids; new controller %d" % (len(seen), new))


def test_allocate_producer_ids_errors(cluster):
    leader = wait_registered(cluster, T(REGISTERED_BOUND_S))
    ln = cluster.nodes[leader]
    other = next(n for n in cluster.nodes.values() if n.node_id != leader)
    epoch = epoch_of(other)

    r = allocate_producer_ids(other, other.node_id, epoch)
    assert r["error_code"] == NOT_CONTROLLER, r

    r = allocate_producer_ids(ln, other.node_id, epoch + 1000)
    assert r["error_code"] == STALE_BROKER_EPOCH, r
    r = allocate_producer_ids(ln, other.node_id, -1)
    assert r["error_code"] == STALE_BROKER_EPOCH, r
    r = allocate_producer_ids(ln, 99, epoch)        # never registered
    assert r["error_code"] == STALE_BROKER_EPOCH, r

    a = allocate_producer_ids(ln, other.node_id, epoch)
    assert a["error_code"] == 0, a
    assert a["producer_id_len"] == BLOCK, a
    b = allocate_producer_ids(ln, other.node_id, epoch)
    assert b["error_code"] == 0, b
    assert b["producer_id_start"] >= a["producer_id_start"] + BLOCK, (a, b)
    # the blocks the nodes hand out do not overlap the ones taken here
    for i in (1, 2, 3):
        p = pids_from(cluster, i, 1, T(15))[0]
        for blk in (a, b):
            assert not (blk["producer_id_start"] <= p
                        < blk["producer_id_start"] + BLOCK), (i, p, blk)

    with kwire.connect(HOST, ln.ports[1], T(5)) as c:
        keys = c.api_versions(version=3)["api_keys"]
    assert keys.get(API_ALLOCATE_PRODUCER_IDS) == (0, 0), keys
    with ln.connect() as c:
        keys = c.api_versions(version=3)["api_keys"]
    assert API_ALLOCATE_PRODUCER_IDS not in keys, keys
