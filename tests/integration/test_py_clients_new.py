"""PyPI's newest Python clients against samsa-server, beside Debian's.

confluent-kafka 2.16.1 from PyPI (its wheel bundles librdkafka 2.16.0; the
rest of the suite runs Debian's python3-confluent-kafka 1.7.0 on librdkafka
2.0.2) and aiokafka 0.14.0, both from scripts/pyclients.txt in the venv
scripts/deps.sh builds (samsa_harness.pypi_python(); missing: the tests
fail). They run in that venv through pyclients_new.py, which prints what
it saw as JSON; the checks are here, some of them with Debian's
confluent-kafka reading what the PyPI clients wrote.
"""

import json
import os
import subprocess
import time
import uuid

import pytest

import samsa_harness
from samsa_harness import T

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, "pyclients_new.py")
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
OVERRIDES = {"group.initial.rebalance.delay.ms": "0"}


@pytest.fixture(scope="module")
def srv(samsa_module):
    return samsa_module.start(overrides=OVERRIDES)


def probe(srv, cmd, timeout=60, **args):
    args.setdefault("timeout", T(timeout))
    args["bootstrap"] = srv.bootstrap()
    argv = [samsa_harness.pypi_python(), PROBE, cmd, json.dumps(args)]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=T(timeout) + 30)
    if p.returncode != 0:
        pytest.fail("pyclients_new.py %s exited %d:\n%s" % (cmd, p.returncode, p.stderr[-6000:]),
                    pytrace=False)
    return json.loads(p.stdout)


def key(i):
    return "k%05d" % i


def value(tag, i):
    return "%s-%05d-%s" % (tag, i, "x" * (i % 50))


def by_partition(recs):
    out = {}
    for r in recs:
        out.setdefault(r["p"], []).append(r)
    return out


def check_produced(recs, tag, count, parts):
    assert len(recs) == count
    assert sorted(r["k"] for r in recs) == [key(i) for i in range(count)]
    for r in recs:
        i = int(r["k"][1:])
        assert r["p"] == i % parts and r["v"] == value(tag, i), r
    for p, rs in by_partition(recs).items():
        rs = sorted(rs, key=lambda r: r["o"])
        assert [r["o"] for r in rs] == list(range(len(rs))), (p, rs)
        assert [r["k"] for r in rs] == sorted(r["k"] for r in rs), (p, rs)


def check_consumed(got, produced):
    want = {(r["p"], r["o"]): (r["k"], r["v"]) for r in produced}
    have = {(r["p"], r["o"]): (r["k"], r["v"]) for r in got}
    assert len(got) == len(have), "duplicates in what was read"
    assert have == want
    for p, rs in by_partition(got).items():
        offs = [r["o"] for r in rs]
        assert offs == sorted(offs), (p, offs)


def check_group(out, parts, n, per_partition):
    before, after = out["owners_before"], out["owners_after"]
    assert sorted(p for ps in before for p in ps) == list(range(parts)), before
    assert all(before), before
    assert before == after, "a rebalance while consuming: %s -> %s" % (before, after)
    seen = []
    for m, owns in zip(out["members"], before):
        recs = m["records"]
        assert {r["p"] for r in recs} <= set(owns), (owns, {r["p"] for r in recs})
        for p, rs in by_partition(recs).items():
            assert [r["o"] for r in rs] == list(range(per_partition)), (p, rs)
        seen += recs
    check_consumed(seen, out["produced"])
    assert len(seen) == n
    assert out["committed"] == {str(p): per_partition for p in range(parts)}


def debian_read(srv, topic, n, isolation="read_uncommitted"):
    """Debian's confluent-kafka (librdkafka 2.0.2) reads the topic."""
    import confluent_kafka as ck
    c = ck.Consumer({"bootstrap.servers": srv.bootstrap(), "group.id": "deb-" + uuid.uuid4().hex,
                     "enable.auto.commit": False, "isolation.level": isolation,
                     "enable.partition.eof": True})
    parts = sorted(c.list_topics(topic, timeout=10).topics[topic].partitions)
    c.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in parts])
    got, eof = [], set()
    deadline = time.time() + T(30)
    while len(eof) < len(parts) or len(got) < n:
        assert time.time() < deadline, "Debian consumer: %d of %d" % (len(got), n)
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            if m.error().code() == ck.KafkaError._PARTITION_EOF:
                eof.add(m.partition())
                continue
            raise AssertionError(str(m.error()))
        got.append({"p": m.partition(), "o": m.offset(), "k": m.key().decode(),
                    "v": m.value().decode()})
    c.close()
    return got


def test_versions(srv):
    """The venv has what scripts/pyclients.txt pins."""
    v = probe(srv, "versions")
    assert v == {"confluent_kafka": "2.16.1", "librdkafka": "2.16.0", "aiokafka": "0.14.0"}


# -- confluent-kafka from PyPI ---------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_ck_produce_consume(srv, codec):
    """librdkafka 2.16's idempotent producer (acks=all) with each codec, 3
    partitions, 60 records; its consumer and Debian's librdkafka 2.0.2
    read them back."""
    t = "ck-%s" % codec
    out = probe(srv, "ck-produce", topic=t, partitions=3, n=60, codec=codec, acks="all",
                idempotent=True)
    check_produced(out["records"], codec, 60, 3)
    got = probe(srv, "ck-consume", topic=t, n=60, idle=0.5)["records"]
    check_consumed(got, out["records"])
    for r in got:
        assert r["h"] == {"i": str(int(r["k"][1:]))}
    check_consumed(debian_read(srv, t, 60), out["records"])


def test_ck_produce_acks1(srv):
    """acks=1, not idempotent, lz4."""
    out = probe(srv, "ck-produce", topic="ck-acks1", partitions=2, n=20, codec="lz4", acks="1",
                idempotent=False)
    check_produced(out["records"], "lz4", 20, 2)
    check_consumed(probe(srv, "ck-consume", topic="ck-acks1", n=20, idle=0.5)["records"],
                   out["records"])


@pytest.mark.parametrize("protocol,assignor", [
    ("classic", "range"),
    ("classic", "cooperative-sticky"),
    ("consumer", "range"),
    ("consumer", "uniform"),
])
def test_ck_group(srv, protocol, assignor):
    """Two librdkafka 2.16 members of one group, classic (client-side
    assignor) or KIP-848 (group.protocol=consumer, the broker's assignor by
    group.remote.assignor): they split 4 partitions, read 40 records once
    each in order, commit; the AdminClient describes and lists the group."""
    g = "ck-%s-%s" % (protocol, assignor)
    out = probe(srv, "ck-group", topic=g, group=g, partitions=4, n=40, members=2,
                protocol=protocol, assignor=assignor, timeout=90)
    check_group(out, 4, 40, 10)
    d = out["described"]
    assert d["state"] == "STABLE" and d["members"] == 2 and d["assignor"] == assignor, d
    assert d["type"] == ("CONSUMER" if protocol == "consumer" else "CLASSIC"), d
    assert out["listed"]["present"], out["listed"]


def test_ck_transactions(srv):
    """commit, abort, commit (10 records each over 2 partitions, zstd):
    read_committed readers (librdkafka 2.16 and Debian's 2.0.2) see only
    the committed ones; read_uncommitted sees all."""
    t = "ck-txn"
    out = probe(srv, "ck-txn", topic=t, partitions=2, n=10, txnid="ck-txn-1", codec="zstd")
    for p in (0, 1):
        assert sorted(r["o"] for r in out["commit1"] if r["p"] == p) == list(range(0, 5))
        assert sorted(r["o"] for r in out["abort"] if r["p"] == p) == list(range(6, 11))
        assert sorted(r["o"] for r in out["commit2"] if r["p"] == p) == list(range(12, 17))
    committed = out["commit1"] + out["commit2"]
    check_consumed(probe(srv, "ck-consume", topic=t, n=20, idle=1.0,
                         isolation="read_committed")["records"], committed)
    check_consumed(debian_read(srv, t, 20, "read_committed"), committed)
    check_consumed(probe(srv, "ck-consume", topic=t, n=30, idle=0.5)["records"],
                   committed + out["abort"])


def test_ck_admin(srv):
    """AdminClient of 2.16: topics (create, exists, RF 3, list, describe,
    partitions), configs (describe, incremental alter, a bad value), offsets
    (list_offsets, delete_records), group offsets and describe, the cluster,
    delete."""
    t = "ck-admin"
    d = probe(srv, "ck-admin", topic=t)
    assert d["create"] == "" and d["create_again"] == "TOPIC_ALREADY_EXISTS"
    assert d["create_rf3"] == "INVALID_REPLICATION_FACTOR"
    assert d["listed"] and d["metadata_partitions"] == [0, 1, 2]
    assert d["described"]["name"] == t
    assert [p["p"] for p in d["described"]["partitions"]] == [0, 1, 2]
    for p in d["described"]["partitions"]:
        assert p["leader"] == 1 and p["replicas"] == [1] and p["isr"] == [1]
    assert d["create_partitions"] == "" and d["create_partitions_lower"] == "INVALID_PARTITIONS"
    assert d["partitions_after"] == 5
    c = d["configs"]
    assert c["retention.ms"]["value"] == "3600000" and not c["retention.ms"]["default"]
    assert c["max.message.bytes"]["default"]
    assert d["incremental_alter"] == ""
    c = d["configs_after_incremental"]
    assert c["max.message.bytes"]["value"] == "300000" and not c["max.message.bytes"]["default"]
    assert c["retention.ms"]["default"]
    assert d["incremental_bad"] == "INVALID_CONFIG"
    assert d["earliest"] == {str(p): 0 for p in range(5)}
    assert d["latest"] == {str(p): 10 for p in range(5)}
    assert d["delete_records"] == {"0": 3, "1": 10}
    assert d["earliest_after_delete"] == dict(d["earliest"], **{"0": 3, "1": 10})
    assert d["group_offset"] == 7
    assert t + "-group" in d["groups"]
    assert d["group"] == {"state": "EMPTY", "members": 0}
    assert d["delete_group"] == ""
    cl = d["cluster"]
    assert cl["controller"] == 1 and len(cl["id"]) == 22
    assert cl["nodes"] == [{"id": 1, "host": "127.0.0.1", "port": srv.port}]
    assert d["delete"] == "" and d["listed_after_delete"] is False


# -- aiokafka ----------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_aiokafka_produce_consume(srv, codec):
    """AIOKafkaProducer (idempotent, acks=all) with each codec (snappy, lz4,
    zstd through cramjam), 3 partitions, 60 records; AIOKafkaConsumer and
    Debian's confluent-kafka read them back."""
    t = "aio-%s" % codec
    out = probe(srv, "aio-produce", topic=t, partitions=3, n=60, codec=codec, acks="all",
                idempotent=True)
    check_produced(out["records"], codec, 60, 3)
    got = probe(srv, "aio-consume", topic=t, n=60, idle=0.5)["records"]
    check_consumed(got, out["records"])
    for r in got:
        assert r["h"] == {"i": str(int(r["k"][1:]))}
    check_consumed(debian_read(srv, t, 60), out["records"])


def test_aiokafka_acks1(srv):
    out = probe(srv, "aio-produce", topic="aio-acks1", partitions=2, n=20, codec="gzip",
                acks="1", idempotent=False)
    check_produced(out["records"], "gzip", 20, 2)
    check_consumed(probe(srv, "aio-consume", topic="aio-acks1", n=20, idle=0.5)["records"],
                   out["records"])


def test_aiokafka_transactions(srv):
    """aiokafka's transactional producer: commit, abort, commit (10 records
    each over 2 partitions); its read_committed consumer and Debian's
    librdkafka see the committed ones only, read_uncommitted all."""
    t = "aio-txn"
    out = probe(srv, "aio-txn", topic=t, partitions=2, n=10, txnid="aio-txn-1")
    for p in (0, 1):
        assert sorted(r["o"] for r in out["commit1"] if r["p"] == p) == list(range(0, 5))
        assert sorted(r["o"] for r in out["abort"] if r["p"] == p) == list(range(6, 11))
        assert sorted(r["o"] for r in out["commit2"] if r["p"] == p) == list(range(12, 17))
    committed = out["commit1"] + out["commit2"]
    check_consumed(probe(srv, "aio-consume", topic=t, n=20, idle=1.0,
                         isolation="read_committed")["records"], committed)
    check_consumed(debian_read(srv, t, 20, "read_committed"), committed)
    check_consumed(probe(srv, "aio-consume", topic=t, n=30, idle=0.5)["records"],
                   committed + out["abort"])


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "sticky"])
def test_aiokafka_group(srv, assignor):
    """Two aiokafka group members split 4 partitions, read 40 records once
    each in order, commit."""
    g = "aio-group-%s" % assignor
    out = probe(srv, "aio-group", topic=g, group=g, partitions=4, n=40, members=2,
                assignor=assignor, timeout=90)
    check_group(out, 4, 40, 10)


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_ck_group_regex(srv, protocol):
    """librdkafka 2.16 subscribed by a regex (^ck-re-...): classic (the
    client matches) and KIP-848 (SubscribedTopicRegex: the broker does)."""
    g = "ck-re-%s" % protocol
    out = probe(srv, "ck-group", topic=g + "-a", regex="^%s-.*" % g, group=g, partitions=4,
                n=40, members=2, protocol=protocol, assignor="range", timeout=90)
    check_group(out, 4, 40, 10)
