"""The Java client (org.apache.kafka:kafka-clients 4.4.0, java/pom.xml)
against samsa-server, through java/SamsaJava.java (compiled here with
javac against the jars scripts/deps.sh fetched; see javakit.py):

- producer: every codec (none, gzip, snappy, lz4, zstd) round-trips, the
  stored batches carry the codec (raw Fetch); acks=0/1/all, idempotent;
  transactional commit and abort, read_committed sees only the committed
  records, read_uncommitted all of them;
- consumer: groups with group.protocol=classic and consumer (KIP-848),
  commits and resume; cooperative-sticky rebalancing (the first member gives
  up only the moved partitions), static membership (a restarted member with
  the same group.instance.id gets its partitions back with no rebalance of
  the other), for both protocols; seek, offsetsForTimes, beginning/end
  offsets;
- Admin: every call samsa serves, each checked on its result (topics,
  configs, partitions, offsets, records, log dirs, producers, consumer
  groups and their offsets, client quotas, transactions, fencing);
- more: headers and null/empty keys and values, listOffsets by time,
  consume-transform-produce (sendOffsetsToTransaction), an open
  transaction holding read_committed consumers and the LSO, removing a
  static member, describeConfigs with documentation, describeTopics by
  topic id and describeFeatures.

A missing java, javac or jar fails (HarnessError), never skips.
"""

import re

import pytest

import javakit
import kwire
from samsa_harness import T

MAIN = "SamsaJava"
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
CODEC_ID = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


@pytest.fixture(scope="module")
def cp(tmp_path_factory):
    return javakit.compile(tmp_path_factory.mktemp("java-classes"))


@pytest.fixture(scope="module")
def srv(samsa_module):
    # classic groups form at once (not after the 3 s initial delay), KIP-848
    # members reconcile within a second
    return samsa_module.start({"group.initial.rebalance.delay.ms": "0",
                               "group.consumer.heartbeat.interval.ms": "1000"})


def java(cp, *args, **kw):
    return javakit.run_java(cp, MAIN, *args, **kw)


def recs(r):
    """REC lines as (partition, offset, key, value)."""
    return [(int(p), int(o), k, v) for p, o, k, v in r.rows("REC")]


# -- producer ------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_codec_roundtrip(cp, srv, codec):
    topic = "j-codec-" + codec
    r = java(cp, "roundtrip", srv.bootstrap(), topic, 20, "all", codec, "true")
    assert [(int(p), int(o)) for p, o in r.rows("ACK")] == [(0, i) for i in range(20)], r
    assert recs(r) == [(0, i, "k-%d" % i, "%s-%d" % (codec, i)) for i in range(20)], r
    assert r.one("CONSUMED") == ["20"], r
    with srv.connect(timeout=T(5)) as c:
        batches, last = c.fetch_all(topic, 0, 0, timeout=T(10))
    assert last["error_code"] == 0, kwire.error_name(last["error_code"])
    assert {b["codec"] for b in batches} == {CODEC_ID[codec]}, batches
    assert all(b["crc_ok"] for b in batches)
    assert [rec["value"].decode()[:len(codec) + 3] for rec in kwire.records_of(batches)][:3] \
        == ["%s-%d-" % (codec, i) for i in range(3)]


@pytest.mark.parametrize("acks,idem", [("0", "false"), ("1", "false"),
                                       ("all", "false"), ("all", "true")])
def test_acks(cp, srv, acks, idem):
    topic = "j-acks-%s-%s" % (acks, idem)
    r = java(cp, "roundtrip", srv.bootstrap(), topic, 10, acks, "none", idem)
    offs = [int(o) for _, o in r.rows("ACK")]
    # acks=0: the client learns no offsets
    assert offs == ([-1] * 10 if acks == "0" else list(range(10))), r
    assert recs(r) == [(0, i, "k-%d" % i, "none-%d" % i) for i in range(10)], r
    with srv.connect(timeout=T(5)) as c:
        batches, _ = c.fetch_all(topic, 0, 0, timeout=T(10))
    pids = {b["producer_id"] for b in batches}
    if idem == "true":
        assert len(pids) == 1 and min(pids) >= 0, batches
        assert batches[0]["base_sequence"] == 0
    else:
        assert pids == {-1}, batches


def test_transactions_read_committed(cp, srv):
    topic = "j-txn"
    java(cp, "roundtrip", srv.bootstrap(), topic, 0, "all", "none", "true")  # creates it
    r = java(cp, "txn", srv.bootstrap(), topic, "j-txid")
    assert [s[0] for s in r.rows("STEP")] == ["init", "commit1", "abort", "commit2"], r
    committed = ["c-%d" % i for i in range(10)]
    rc = java(cp, "consume", srv.bootstrap(), topic, 10, "j-txn-rc", "classic", "read_committed")
    got = recs(rc)
    assert [v for _, _, _, v in got] == committed, rc
    # 5 committed, marker, 5 aborted, marker, 5 committed, marker
    assert [o for _, o, _, _ in got] == [0, 1, 2, 3, 4, 12, 13, 14, 15, 16], rc
    assert rc.rows("COMMITTED") == [["0", "18"]], rc
    ru = java(cp, "consume", srv.bootstrap(), topic, 15, "-", "classic", "read_uncommitted")
    assert [v for _, _, _, v in recs(ru)] == \
        committed[:5] + ["a-%d" % i for i in range(5)] + committed[5:], ru


# -- consumer ------------------------------------------------------------------

@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_group_commit_and_resume(cp, srv, protocol):
    topic, group = "j-grp-" + protocol, "j-grp-" + protocol
    java(cp, "produce", srv.bootstrap(), topic, 10, "all", "none", "true")
    r = java(cp, "consume", srv.bootstrap(), topic, 10, group, protocol, "read_uncommitted")
    assert recs(r) == [(0, i, "k-%d" % i, "none-%d" % i) for i in range(10)], r
    assert r.rows("COMMITTED") == [["0", "10"]], r
    java(cp, "produce", srv.bootstrap(), topic, 5, "all", "none", "true")
    r = java(cp, "consume", srv.bootstrap(), topic, 5, group, protocol, "read_uncommitted")
    # resumes at the commit: only the 5 new records
    assert [o for _, o, _, _ in recs(r)] == list(range(10, 15)), r
    assert r.rows("COMMITTED") == [["0", "15"]], r


def _sets(s):
    return s.split("=", 1)[1]


@pytest.mark.parametrize("protocol,assignor,static", [
    ("classic", "cooperative", False),
    ("classic", "range", True),
    ("consumer", "-", False),
    ("consumer", "-", True),
])
def test_group_rebalance(cp, srv, protocol, assignor, static):
    name = "j-reb-%s-%s-%s" % (protocol, assignor.strip("-") or "default", static)
    r = java(cp, "group", srv.bootstrap(), name, name, protocol, assignor,
             str(static).lower(), timeout=150)
    assert not r.rows("MEMBER_ERR"), r
    p1 = r.one("PHASE1")
    assert p1 == ["true", "m1=[0, 1, 2, 3]"], r
    p2 = r.one("PHASE2")
    assert p2[0] == "true", r
    m1, m2 = _sets(p2[1]), _sets(p2[2])
    assert len(m1.split(",")) == 2 and len(m2.split(",")) == 2, r
    ev = dict((e[0], e[1].split()) for e in r.rows("EVENTS"))
    moved = m2.strip("[]").replace(" ", "")
    if protocol == "consumer" or assignor == "cooperative":
        # incremental: m1 revokes only what m2 gets
        assert ev["m1"] == ["assigned:0,1,2,3", "revoked:" + moved], r
    else:
        # eager: m1 revokes everything, gets its half back
        assert ev["m1"][:2] == ["assigned:0,1,2,3", "revoked:0,1,2,3"], r
    assert ev["m2"] == ["assigned:" + moved], r
    d = r.one("DESCRIBE")
    assert d[:3] == ["Stable", "Classic" if protocol == "classic" else "Consumer", "2"], r
    assert d[3] == ("inst-1,inst-2" if static else "-,-"), r
    if static:
        p3 = r.one("PHASE3")
        assert p3[0] == "true", r
        assert _sets(p3[2]) == _sets(p3[3]), "the new inst-2 did not get inst-2's partitions: %r" % r
        assert r.one("M1_EVENTS_AFTER") == [""], "m1 rebalanced when inst-2 came back: %r" % r


def test_seek_and_offsets_for_times(cp, srv):
    r = java(cp, "seek", srv.bootstrap(), "j-seek")
    assert r.one("BEGIN") == ["0"] and r.one("END") == ["10"], r
    # the first record at or after T0 + 4.5 s: offset 5, at T0 + 5 s
    assert r.one("OFT") == ["5", "5000"], r
    assert r.one("OFT_LATE") == ["null"], r
    assert r.one("SEEK7") == ["v7,v8,v9"], r
    assert r.one("POS_BEGIN") == ["0"] and r.one("POS_END") == ["10"], r
    assert r.one("AT_TIME") == ["v5", "5000"], r


# -- Admin ---------------------------------------------------------------------

ADMIN = "ja"


@pytest.fixture(scope="module")
def admin_run(cp, srv):
    r = java(cp, "admin", srv.bootstrap(), ADMIN, timeout=120)
    steps = {}
    for status, name, detail in [l for l in r.lines if l[0] in ("OK", "ERR")]:
        steps[name] = (status, detail)
    return r, steps


ADMIN_EXPECT = [
    ("createTopics", r"created"),
    ("listTopics", r".*\bja-topic\b.*"),
    ("describeTopics", r"ja-topic partitions=3 leader=1 id=\S{22}"),
    ("describeCluster", r"nodes=1 node=1 controller=1 cluster=(?P<cluster>\S+)"),
    ("describeConfigs.topic", r"retention.ms=3600000 source=DYNAMIC_TOPIC_CONFIG entries=\d+"),
    ("describeConfigs.broker", r"num.partitions=1 entries=\d\d+"),
    ("incrementalAlterConfigs", r"retention.ms=7200000"),
    ("createPartitions", r"partitions=5"),
    ("produce", r"10"),
    ("listOffsets", r"earliest=0 latest=10 maxTimestamp=\d"),
    ("deleteRecords", r"lowWatermark=4 earliest=4"),
    ("describeLogDirs", r"dirs=1 p0size=[1-9]\d*"),
    ("describeProducers", r"producers=1 lastSequence=9"),
    ("commitOffsets", r"7"),
    ("listConsumerGroups", r".*\bja-group\b.*"),
    ("describeConsumerGroups", r"state=Empty members=0 type=Classic"),
    ("listConsumerGroupOffsets", r"p0=7 metadata=meta"),
    ("alterConsumerGroupOffsets", r"p0=3"),
    ("deleteConsumerGroupOffsets", r"left=\[0\]"),
    ("listConsumerGroups.inStates", r"ja-group:Empty"),
    # a group made by commits alone has no protocol type
    ("listGroups", r"ja-group:Classic:"),
    ("deleteConsumerGroups", r"listed=false"),
    ("alterClientQuotas", r"set"),
    ("describeClientQuotas", r"\{client-id=ja-client\}=\{producer_byte_rate=1048576.0\}"),
    ("transaction", r"committed"),
    ("listTransactions", r"ja-txid:CompleteCommit"),
    # InitProducerId bumps the epoch; the transaction is Empty again
    ("fenceProducers", r"fenced state=Empty"),
    ("deleteTopics", r"listed=false"),
    # ProducerEpoch is int16 (was int32 in samsa's schema: the Java
    # client's admin thread died on the two extra bytes)
    ("describeTransactions",
     # the timeout is the one fenceProducers' InitProducerId sent last
     # (the admin client's request timeout), not the producer's 60000
     r"state=Empty producerId=\d+ epoch=1 timeout=\d+ partitions=0"),
]


@pytest.mark.parametrize("call,want", ADMIN_EXPECT)
def test_admin(admin_run, srv, call, want):
    r, steps = admin_run
    assert call in steps, "no line for %s:\n%r" % (call, r)
    status, detail = steps[call]
    assert status == "OK", "%s failed: %s" % (call, detail)
    m = re.fullmatch(want, detail)
    assert m, "%s: %r does not match %r" % (call, detail, want)
    if "cluster" in m.groupdict():
        assert m.group("cluster") == srv.cluster_id()


# -- more of the client (SamsaJava extra) --------------------------------------

EXTRA = "jx"


@pytest.fixture(scope="module")
def extra_run(cp, srv):
    r = java(cp, "extra", srv.bootstrap(), EXTRA, timeout=120)
    return r, {name: (status, detail) for status, name, detail in
               [l for l in r.lines if l[0] in ("OK", "ERR")]}


EXTRA_EXPECT = [
    ("create", r"ok"),
    # key|value|headers: a null key, a null value, empty ones; a null header value
    ("headersAndNulls", r"null\|nokey\|h1=v1;h2=null,k\|null\|,\|\|"),
    ("listOffsetsByTime", r"future=-1 zero=0"),
    ("consumeTransformProduce", r"read=3 committed=3"),
    # the open transaction holds the LSO at its first record (4: three
    # copies and the commit marker before it); read_committed sees it only
    # after the commit
    ("readCommittedBlocksOnOpenTxn",
     r"before=\[copy-nokey, copy-null, copy-\] lso=4 hw=5 after=\[open\]"),
    ("removeMembers", r"members=0 state=Empty"),
    ("describeConfigsDoc", r"value=1073741824 type=INT doc=true synonyms=1"),
    # a TopicId with an empty (not null) Name, as the Java client sends it
    ("describeTopicsById", r"jx-topic partitions=1"),
    # ApiVersions v3+'s feature tags
    ("describeFeatures",
     r"finalized=\[.*\bmetadata\.version\b.*\] supported=\[.*\bmetadata\.version\b.*\]"),
]


@pytest.mark.parametrize("call,want", EXTRA_EXPECT)
def test_client_extra(extra_run, call, want):
    r, steps = extra_run
    assert call in steps, "no line for %s:\n%r" % (call, r)
    status, detail = steps[call]
    assert status == "OK", "%s failed: %s" % (call, detail)
    assert re.fullmatch(want, detail), "%s: %r does not match %r" % (call, detail, want)
