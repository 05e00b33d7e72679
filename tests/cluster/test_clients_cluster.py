"""The samsa CLI's contract on a three-node combined cluster (issue 18):
`samsa cluster info --json` (cluster id, the active controller agreed with
Metadata, the metadata quorum from DescribeQuorum with voters [1, 2, 3],
three unfenced brokers); `samsa topic create --partitions 6
--replication-factor 1` through a node that is not the active controller
(forwarded) and `samsa topic describe --json` with leaders on all three
brokers; `kcat -L` lists the three brokers; libsamsa (samsa produce /
samsa consume) produces to and reads back all six partitions through one
bootstrap address (idempotence off), and an idempotent `samsa produce`
through a node that is not the active controller finishes (its
InitProducerId gets ids from a block that node fetched with
AllocateProducerIds).

Consumer groups and transactions across the nodes (kafka-python, kafkajs,
confluent-kafka) are in test_coordinators_cluster.py."""

import subprocess
import time

import pytest

from cli_util import ok
from cluster_harness import Cluster
from samsa_harness import HOST, T

from test_broker_registration import REGISTERED_BOUND_S, wait_registered


@pytest.fixture
def cluster(samsa):
    c = Cluster(samsa, n=3)
    c.start_all()
    return c


def test_cli_contract_and_libsamsa_clients(cluster):
    leader = wait_registered(cluster, T(REGISTERED_BOUND_S))
    other = next(i for i in (1, 2, 3) if i != leader)
    bs = "%s:%d" % (HOST, cluster.nodes[other].ports[0])

    # cluster info: the quorum may still be settling right after the
    # registrations; bounded retry until DescribeQuorum answers
    deadline = time.monotonic() + T(10)
    while True:
        j = ok("cluster", "info", "--json", bootstrap=bs).json()
        if j["quorum"] is not None or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert j["quorum"] is not None, j
    md = cluster.metadata(other, topics=[])
    assert j["cluster_id"] == md["cluster_id"], (j, md)
    assert j["controller_id"] == md["controller_id"] == leader, (j, md)
    assert j["quorum"]["leader"] == leader, j
    assert j["quorum"]["voters"] == [1, 2, 3], j
    assert [b["id"] for b in j["brokers"]] == [1, 2, 3], j
    for b in j["brokers"]:
        assert b["host"] == HOST and b["port"] == cluster.nodes[b["id"]].ports[0], j
        assert b["fenced"] is False, j
    text = ok("cluster", "info", bootstrap=bs).out
    assert "Quorum: leader %d" % leader in text and "voters 1,2,3" in text, text

    # kcat over the same node
    out = subprocess.run(["kcat", "-b", bs, "-L"], capture_output=True,
                         text=True, timeout=T(30))
    assert out.returncode == 0, out.stderr
    assert " 3 brokers:" in out.stdout, out.stdout

    # topic create through a standby (forwarded), describe --json
    ok("topic", "create", "t-cli", "--partitions", "6",
       "--replication-factor", "1", "--config", "retention.ms=3600000",
       bootstrap=bs)
    cluster.wait_topics_equal(["t-cli"], T(10))
    d = ok("topic", "describe", "t-cli", "--json", bootstrap=bs).json()
    if isinstance(d, list):
        d = d[0]
    parts = sorted(d["partitions"], key=lambda p: p["partition"])
    assert [p["partition"] for p in parts] == list(range(6)), d
    assert {p["leader"] for p in parts} == {1, 2, 3}, d
    for p in parts:
        assert p["replicas"] == [p["leader"]] and p["isr"] == [p["leader"]], d
    assert d["configs"]["retention.ms"] == "3600000" or \
        d["configs"]["retention.ms"].get("value") == "3600000", d


def test_libsamsa_produce_consume_all_partitions(cluster):
    leader = wait_registered(cluster, T(REGISTERED_BOUND_S))
    other = next(i for i in (1, 2, 3) if i != leader)
    bs = "%s:%d" % (HOST, cluster.nodes[other].ports[0])
    ok("topic", "create", "t-lib", "--partitions", "6", bootstrap=bs)
    cluster.wait_topics_equal(["t-lib"], T(10))
    # libsamsa: produce to every partition and read each back, one bootstrap
    for part in range(6):
        lines = "".join("p%d-v%d\n" % (part, i) for i in range(10))
        # not idempotent: see test_libsamsa_idempotent_on_standby
        ok("produce", "t-lib", "--partition", str(part),
           "-X", "enable.idempotence=false", bootstrap=bs,
           stdin=lines, timeout=15)
    for part in range(6):
        r = ok("consume", "t-lib", "--partition", str(part), "--from-beginning",
               "--count", "10", "--exit-at-end", bootstrap=bs)
        assert r.out.split() == ["p%d-v%d" % (part, i) for i in range(10)], r


def test_libsamsa_idempotent_on_standby(cluster):
    """libsamsa's producer is idempotent by default: its InitProducerId on
    a node that is not the active controller is answered from a block of
    producer ids that node got with AllocateProducerIds (API 67)."""
    leader = wait_registered(cluster, T(REGISTERED_BOUND_S))
    other = next(i for i in (1, 2, 3) if i != leader)
    bs = "%s:%d" % (HOST, cluster.nodes[other].ports[0])
    ok("topic", "create", "t-idem", "--partitions", "1", bootstrap=bs)
    cluster.wait_topics_equal(["t-idem"], T(10))
    ok("produce", "t-idem", "--partition", "0", bootstrap=bs,
       stdin="a\nb\n", timeout=10)
