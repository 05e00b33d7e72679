"""DescribeQuorum (API 55) on a three-node cluster: any broker listener
answers with the active controller's view (forwarded to it): leader,
epoch, high watermark, the three voters with the leader's log end, and
(v2) each voter's CONTROLLER endpoint; a standby's CONTROLLER listener
answers NOT_LEADER_OR_FOLLOWER naming the leader; another topic than
__cluster_metadata-0 is UNKNOWN_TOPIC_OR_PARTITION."""

import kwire
import pytest

from cluster_harness import Cluster, describe_quorum
from samsa_harness import HOST, T

NOT_LEADER_OR_FOLLOWER = 6
UNKNOWN_TOPIC_OR_PARTITION = 3


@pytest.fixture
def cluster(samsa):
    c = Cluster(samsa, n=3)
    c.start_all()
    return c


def test_describe_quorum(cluster):
    leader = cluster.wait_leader(T(20))
    assert cluster.create_topic(leader, "dq")["error_code"] == 0
    for node_id, node in cluster.nodes.items():
        for version in (0, 1, 2):
            with node.connect() as c:
                r = describe_quorum(c, version=version)
            assert r["error_code"] == 0, r
            p = r["topics"][0]["partitions"][0]
            assert r["topics"][0]["topic_name"] == "__cluster_metadata"
            assert p["error_code"] == 0, (node_id, p)
            assert p["leader_id"] == leader, p
            assert p["leader_epoch"] >= 1, p
            assert p["high_watermark"] > 0, p
            voters = {v["replica_id"]: v for v in p["current_voters"]}
            assert set(voters) == {1, 2, 3}, p
            assert voters[leader]["log_end_offset"] >= p["high_watermark"], p
            assert p["observers"] == []
            if version >= 2:
                nodes = {n["node_id"]: n["listeners"] for n in r["nodes"]}
                assert set(nodes) == {1, 2, 3}
                for i, ls in nodes.items():
                    assert ls == [{"name": "CONTROLLER", "host": HOST,
                                   "port": cluster.nodes[i].ports[1]}], nodes
    other = next(n for n in cluster.nodes if n != leader)
    with kwire.connect(HOST, cluster.nodes[other].ports[1], T(5)) as c:
        r = describe_quorum(c)
        p = r["topics"][0]["partitions"][0]
        assert p["error_code"] == NOT_LEADER_OR_FOLLOWER, p
        assert p["leader_id"] == leader, p
        r = describe_quorum(c, topic="other")
        assert r["error_code"] == UNKNOWN_TOPIC_OR_PARTITION, r
