"""Topic administration on the wire (kwire): CreateTopics (validate_only,
defaults, Kafka's errors), DescribeConfigs (sources and synonyms, topic and
broker), AlterConfigs and IncrementalAlterConfigs, CreatePartitions,
DeleteTopics (by name and id; the partition directories go), DescribeLogDirs
(sizes as on disk) and auto-creation through Metadata.

(That altered retention takes effect is in test_storage_retention.py.)"""

import itertools
import os
import re

import pytest

import kwire
import samsa_harness
from samsa_harness import T

_names = itertools.count(1)

STATIC_RETENTION_BYTES = "987654321"


def topic_name(prefix):
    return "%s-%d-%d" % (prefix, os.getpid() % 1000, next(_names))


@pytest.fixture(scope="module")
def srv(samsa_module):
    return samsa_module.start({"auto.create.topics.enable": "false",
                               "num.partitions": "3",
                               "log.retention.bytes": STATIC_RETENTION_BYTES,
                               "log.segment.delete.delay.ms": "0"})


@pytest.fixture
def conn(srv):
    with srv.connect(timeout=T(5), client_id="storage-admin") as c:
        yield c
    assert srv.alive(), "samsa-server died:\n%s" % srv.stderr_tail()


def err(code):
    return kwire.error_name(code)


def make_topic(conn, name, partitions=1, configs=None):
    r = conn.create_topic(name, partitions, configs, timeout=T(10))
    assert r["error_code"] == 0, "%s %s" % (err(r["error_code"]), r["error_message"])
    conn.wait_topic(name, partitions, timeout=T(10))
    return r


def partition_dirs(srv, name):
    """Directories of the topic's partitions (live or marked for deletion)."""
    pat = re.compile(re.escape(name) + r"-\d+($|\.)")
    try:
        return sorted(d for d in os.listdir(srv.data_dir) if pat.match(d))
    except FileNotFoundError:
        return []


# -- CreateTopics -------------------------------------------------------------

def test_create_topics_validate_only(srv, conn):
    name = topic_name("validate")
    for v in (2, 5, 7):
        r = conn.create_topic(name, 4, {"retention.ms": "1000"}, version=v, validate_only=True)
        assert r["error_code"] == 0, "v%d: %s %s" % (v, err(r["error_code"]), r["error_message"])
        if v >= 5:
            assert (r["num_partitions"], r["replication_factor"]) == (4, 1), r
    assert conn.topic_metadata(name)["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION, \
        "validate_only created the topic"
    assert partition_dirs(srv, name) == []
    # an invalid request is still refused with validate_only
    r = conn.create_topic(name, 1, replication_factor=3, validate_only=True)
    assert r["error_code"] == kwire.ERR_INVALID_REPLICATION_FACTOR, err(r["error_code"])


def test_create_topics_defaults_and_result(srv, conn):
    name = topic_name("defaults")
    r = conn.create_topics([{"name": name, "num_partitions": -1, "replication_factor": -1,
                             "configs": {"retention.ms": "3600000"}}], version=7)["topics"][0]
    assert r["error_code"] == 0, (err(r["error_code"]), r["error_message"])
    assert (r["num_partitions"], r["replication_factor"]) == (3, 1), \
        "num.partitions=3 is the default: %s" % r
    assert r["topic_id"] != bytes(16)
    assert r["configs"] is not None, "CreateTopics v5+ returns the topic's configs"
    cfg = {c["name"]: c for c in r["configs"]}
    assert cfg["retention.ms"]["value"] == "3600000"
    assert cfg["retention.ms"]["config_source"] == kwire.SOURCE_DYNAMIC_TOPIC_CONFIG
    t = conn.wait_topic(name, 3, timeout=T(10))
    assert t["topic_id"] == r["topic_id"]
    assert sorted(p["partition_index"] for p in t["partitions"]) == [0, 1, 2]
    for p in t["partitions"]:
        assert p["leader_id"] == 1 and p["replica_nodes"] == [1] and p["isr_nodes"] == [1]
    assert samsa_harness.wait_until(lambda: len(partition_dirs(srv, name)) == 3, T(5)), \
        partition_dirs(srv, name)
    for p in range(3):
        d = os.path.join(srv.data_dir, "%s-%d" % (name, p))
        assert os.path.isfile(os.path.join(d, "00000000000000000000.log")), os.listdir(d)
        with open(os.path.join(d, "partition.metadata")) as f:
            text = f.read()
        assert "topic_id: %s" % kwire.uuid_str(r["topic_id"]) in text, text


def test_create_topics_errors(conn):
    taken = topic_name("taken")
    make_topic(conn, taken)
    cases = [
        ({"name": topic_name("rf3"), "replication_factor": 3}, kwire.ERR_INVALID_REPLICATION_FACTOR),
        ({"name": topic_name("rf0"), "replication_factor": 0}, kwire.ERR_INVALID_REPLICATION_FACTOR),
        ({"name": topic_name("p0"), "num_partitions": 0}, kwire.ERR_INVALID_PARTITIONS),
        ({"name": topic_name("pneg"), "num_partitions": -7}, kwire.ERR_INVALID_PARTITIONS),
        ({"name": taken}, kwire.ERR_TOPIC_ALREADY_EXISTS),
        ({"name": topic_name("badval"), "configs": {"retention.ms": "soon"}}, kwire.ERR_INVALID_CONFIG),
        ({"name": topic_name("badkey"), "configs": {"no.such.config": "1"}}, kwire.ERR_INVALID_CONFIG),
        ({"name": topic_name("segsmall"), "configs": {"segment.bytes": "1000"}}, kwire.ERR_INVALID_CONFIG),
        ({"name": topic_name("tstype"), "configs": {"message.timestamp.type": "Wall"}},
         kwire.ERR_INVALID_CONFIG),
    ]
    for v in (2, 4, 5, 7):
        for topic, code in cases:
            t = dict({"num_partitions": 1, "replication_factor": 1}, **topic)
            r = conn.create_topics([t], version=v)["topics"][0]
            assert r["error_code"] == code, "v%d %s: got %s, expected %s (%s)" % (
                v, topic, err(r["error_code"]), err(code), r["error_message"])
            if v >= 1:
                assert r["error_message"], "v%d %s: no error message" % (v, topic)
            if t["name"] != taken:
                assert conn.topic_metadata(t["name"])["error_code"] == \
                    kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION, "%s was created" % t["name"]
    # the same name twice in one request: both refused
    dup = topic_name("dup")
    r = conn.create_topics([{"name": dup}, {"name": dup}], version=7)["topics"]
    assert [x["error_code"] for x in r] == [kwire.ERR_INVALID_REQUEST] * 2, \
        [err(x["error_code"]) for x in r]
    # one bad topic does not spoil the others
    good = topic_name("good")
    r = conn.create_topics([{"name": good}, {"name": taken}], version=7)["topics"]
    assert {x["name"]: x["error_code"] for x in r} == {
        good: 0, taken: kwire.ERR_TOPIC_ALREADY_EXISTS}


# -- DescribeConfigs ------------------------------------------------------------

REQUIRED_TOPIC_CONFIGS = ("retention.ms", "retention.bytes", "segment.bytes", "segment.ms",
                          "flush.messages", "max.message.bytes", "message.timestamp.type",
                          "cleanup.policy")


def test_describe_configs_sources_and_synonyms(conn):
    name = topic_name("desc")
    make_topic(conn, name, configs={"retention.ms": "86400000", "cleanup.policy": "delete",
                                    "segment.bytes": "2097152"})
    for v in range(0, 5):
        res = conn.describe_configs([(kwire.RESOURCE_TOPIC, name, None)], version=v,
                                    include_synonyms=True)
        assert len(res) == 1 and res[0]["error_code"] == 0, res
        assert (res[0]["resource_type"], res[0]["resource_name"]) == (kwire.RESOURCE_TOPIC, name)
        cfg = {e["name"]: e for e in res[0]["configs"]}
        missing = [k for k in REQUIRED_TOPIC_CONFIGS if k not in cfg]
        assert not missing, "v%d lacks %s" % (v, missing)
        for key, value in (("retention.ms", "86400000"), ("cleanup.policy", "delete"),
                           ("segment.bytes", "2097152")):
            e = cfg[key]
            assert e["value"] == value and not e["read_only"] and not e["is_sensitive"], e
            if v == 0:
                assert e["is_default"] is False, e
            else:
                assert e["source"] == kwire.SOURCE_DYNAMIC_TOPIC_CONFIG, (v, e)
                assert e["synonyms"][0] == {"name": key, "value": value,
                                            "source": kwire.SOURCE_DYNAMIC_TOPIC_CONFIG}, e
        e = cfg["retention.bytes"]
        assert e["value"] == STATIC_RETENTION_BYTES, e
        e = cfg["max.message.bytes"]
        assert e["value"] == "1048588", e
        e = cfg["message.timestamp.type"]
        assert e["value"] == "CreateTime", e
        if v == 0:
            assert cfg["max.message.bytes"]["is_default"] is True
        else:
            assert cfg["retention.bytes"]["source"] == kwire.SOURCE_STATIC_BROKER_CONFIG
            assert {"name": "log.retention.bytes", "value": STATIC_RETENTION_BYTES,
                    "source": kwire.SOURCE_STATIC_BROKER_CONFIG} in cfg["retention.bytes"]["synonyms"]
            assert cfg["max.message.bytes"]["source"] == kwire.SOURCE_DEFAULT_CONFIG
            assert cfg["message.timestamp.type"]["source"] == kwire.SOURCE_DEFAULT_CONFIG
            # the broker's synonym with its default (Kafka's ConfigHelper lists it)
            assert {"name": "message.max.bytes", "value": "1048588",
                    "source": kwire.SOURCE_DEFAULT_CONFIG} in cfg["max.message.bytes"]["synonyms"], \
                cfg["max.message.bytes"]["synonyms"]
        if v >= 3:
            assert cfg["retention.ms"]["config_type"] == 5, "ConfigType LONG is 5"
    # without synonyms, and only the keys asked for
    res = conn.describe_configs([(kwire.RESOURCE_TOPIC, name, ["retention.ms", "segment.ms"])],
                                version=4)
    assert sorted(e["name"] for e in res[0]["configs"]) == ["retention.ms", "segment.ms"]
    assert all(e["synonyms"] == [] for e in res[0]["configs"])
    res = conn.describe_configs([(kwire.RESOURCE_TOPIC, "no-such-" + name, None)], version=4)
    assert res[0]["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION, err(res[0]["error_code"])


def test_describe_broker_configs(conn):
    for v in (1, 4):
        res = conn.describe_configs([(kwire.RESOURCE_BROKER, "1", None)], version=v,
                                    include_synonyms=True)
        assert res[0]["error_code"] == 0, res[0]
        cfg = {e["name"]: e for e in res[0]["configs"]}
        for key, value in (("log.retention.bytes", STATIC_RETENTION_BYTES),
                           ("num.partitions", "3"), ("auto.create.topics.enable", "false")):
            assert cfg[key]["value"] == value, cfg.get(key)
            assert cfg[key]["source"] == kwire.SOURCE_STATIC_BROKER_CONFIG, cfg[key]
        assert cfg["log.retention.hours"]["source"] == kwire.SOURCE_DEFAULT_CONFIG
        assert cfg["log.retention.hours"]["value"] == "168"
        assert cfg["message.max.bytes"]["value"] == "1048588"


# -- AlterConfigs and IncrementalAlterConfigs ---------------------------------------

def values(conn, name):
    return {k: (e["value"], e["source"]) for k, e in conn.topic_configs(name).items()}


def test_alter_configs_replaces_the_set(conn):
    name = topic_name("alter")
    make_topic(conn, name, configs={"retention.ms": "100000", "segment.bytes": "2097152"})
    for v in (0, 1, 2):
        ms = str(200000 + v)
        r = conn.alter_configs([(kwire.RESOURCE_TOPIC, name, {"retention.ms": ms})], version=v)
        assert r[0]["error_code"] == 0, (v, err(r[0]["error_code"]), r[0]["error_message"])
        got = values(conn, name)
        assert got["retention.ms"] == (ms, kwire.SOURCE_DYNAMIC_TOPIC_CONFIG)
        # AlterConfigs replaces the whole set: segment.bytes is back to its default
        assert got["segment.bytes"] == ("1073741824", kwire.SOURCE_DEFAULT_CONFIG), got["segment.bytes"]
    before = values(conn, name)
    r = conn.alter_configs([(kwire.RESOURCE_TOPIC, name, {"retention.ms": "5"})],
                           validate_only=True)
    assert r[0]["error_code"] == 0
    assert values(conn, name) == before, "validate_only changed the configs"
    r = conn.alter_configs([(kwire.RESOURCE_TOPIC, name, {"retention.ms": "often"})])
    assert r[0]["error_code"] == kwire.ERR_INVALID_CONFIG, err(r[0]["error_code"])
    r = conn.alter_configs([(kwire.RESOURCE_TOPIC, name, {"bogus.key": "1"})])
    assert r[0]["error_code"] == kwire.ERR_INVALID_CONFIG, err(r[0]["error_code"])
    assert values(conn, name) == before, "a refused AlterConfigs changed the configs"
    r = conn.alter_configs([(kwire.RESOURCE_TOPIC, "no-such-" + name, {"retention.ms": "5"})])
    assert r[0]["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION, err(r[0]["error_code"])


def test_incremental_alter_configs(conn):
    name = topic_name("incr")
    make_topic(conn, name, configs={"retention.ms": "100000", "segment.bytes": "2097152"})
    for v in (0, 1):
        r = conn.incremental_alter_configs(
            [(kwire.RESOURCE_TOPIC, name, [("segment.ms", kwire.OP_SET, str(3600000 + v))])],
            version=v)
        assert r[0]["error_code"] == 0, (v, err(r[0]["error_code"]), r[0]["error_message"])
        got = values(conn, name)
        assert got["segment.ms"] == (str(3600000 + v), kwire.SOURCE_DYNAMIC_TOPIC_CONFIG)
        # the others stay
        assert got["segment.bytes"] == ("2097152", kwire.SOURCE_DYNAMIC_TOPIC_CONFIG)
        assert got["retention.ms"] == ("100000", kwire.SOURCE_DYNAMIC_TOPIC_CONFIG)
    r = conn.incremental_alter_configs(
        [(kwire.RESOURCE_TOPIC, name, [("retention.ms", kwire.OP_DELETE, None)])])
    assert r[0]["error_code"] == 0
    assert values(conn, name)["retention.ms"] == ("604800000", kwire.SOURCE_DEFAULT_CONFIG)
    r = conn.incremental_alter_configs(
        [(kwire.RESOURCE_TOPIC, name, [("cleanup.policy", kwire.OP_APPEND, "compact")])])
    assert r[0]["error_code"] == 0, (err(r[0]["error_code"]), r[0]["error_message"])
    assert values(conn, name)["cleanup.policy"][0] in ("delete,compact", "compact,delete")
    r = conn.incremental_alter_configs(
        [(kwire.RESOURCE_TOPIC, name, [("cleanup.policy", kwire.OP_SUBTRACT, "compact")])])
    assert r[0]["error_code"] == 0
    assert values(conn, name)["cleanup.policy"][0] == "delete"
    before = values(conn, name)
    for ops in ([("retention.ms", kwire.OP_APPEND, "5")],        # not a list config
                [("retention.ms", kwire.OP_SET, "x")],
                [("no.such", kwire.OP_SET, "1")]):
        r = conn.incremental_alter_configs([(kwire.RESOURCE_TOPIC, name, ops)])
        assert r[0]["error_code"] == kwire.ERR_INVALID_CONFIG, (ops, err(r[0]["error_code"]))
    r = conn.incremental_alter_configs(
        [(kwire.RESOURCE_TOPIC, name, [("segment.ms", kwire.OP_SET, "1")])], validate_only=True)
    assert r[0]["error_code"] == 0
    assert values(conn, name) == before


# -- CreatePartitions -------------------------------------------------------------

def test_create_partitions(srv, conn):
    name = topic_name("grow")
    make_topic(conn, name, 1)
    count = 1
    for v in range(0, 4):
        count += 1
        r = conn.create_partitions([(name, count, None)], version=v)
        assert r[0]["error_code"] == 0, (v, err(r[0]["error_code"]), r[0]["error_message"])
        t = conn.wait_topic(name, count, timeout=T(10))
        assert len(t["partitions"]) == count
    p = conn.produce(name, count - 1, kwire.encode_batch([kwire.Record(b"new")]), timeout=T(5))
    assert (p["error_code"], p["base_offset"]) == (0, 0)
    assert samsa_harness.wait_until(lambda: len(partition_dirs(srv, name)) == count, T(5)), \
        partition_dirs(srv, name)
    for n in (count - 1, count):
        r = conn.create_partitions([(name, n, None)])
        assert r[0]["error_code"] == kwire.ERR_INVALID_PARTITIONS, (n, err(r[0]["error_code"]))
        assert r[0]["error_message"]
    r = conn.create_partitions([(name, count + 3, None)], validate_only=True)
    assert r[0]["error_code"] == 0
    assert len(conn.topic_metadata(name)["partitions"]) == count, "validate_only added partitions"
    r = conn.create_partitions([("no-such-" + name, 5, None)])
    assert r[0]["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION


# -- DeleteTopics -----------------------------------------------------------------

def test_delete_topics_by_name_and_id(srv, conn):
    made = {}
    for v in range(1, 7):
        name = topic_name("del%d" % v)
        made[v] = (name, make_topic(conn, name, 2)["topic_id"])
        for part in (0, 1):
            assert conn.produce(name, part, kwire.encode_batch([kwire.Record(b"x")]),
                                timeout=T(5))["error_code"] == 0
    assert samsa_harness.wait_until(
        lambda: all(len(partition_dirs(srv, n)) == 2 for n, _ in made.values()), T(5))
    for v, (name, tid) in made.items():
        ref = tid if v == 6 else name
        res = conn.delete_topics([ref], version=v)
        assert len(res) == 1 and res[0]["error_code"] == 0, (v, res)
        assert res[0]["name"] == name, "v%d names the topic it deleted: %s" % (v, res[0])
        if v == 6:
            assert res[0]["topic_id"] == tid
    for v, (name, tid) in made.items():
        assert samsa_harness.wait_until(
            lambda: conn.topic_metadata(name)["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION,
            T(5)), "topic %s still in Metadata after DeleteTopics v%d" % (name, v)
        p = conn.produce(name, 0, kwire.encode_batch([kwire.Record(b"x")]), timeout=T(5))
        assert p["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION
    for v, (name, tid) in made.items():
        assert samsa_harness.wait_until(lambda: partition_dirs(srv, name) == [], T(10)), \
            "partition directories left after DeleteTopics v%d: %s" % (v, partition_dirs(srv, name))
    # a re-created topic is a new topic: new id, empty log
    name, tid = made[6]
    again = make_topic(conn, name, 1)
    assert again["topic_id"] != tid
    assert conn.list_offsets(name, 0, kwire.TS_LATEST)["offset"] == 0
    res = conn.delete_topics(["no-such-" + name], version=4)
    assert res[0]["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION
    res = conn.delete_topics([bytes(range(1, 17))], version=6)
    assert res[0]["error_code"] == kwire.ERR_UNKNOWN_TOPIC_ID, err(res[0]["error_code"])


# -- DescribeLogDirs ---------------------------------------------------------------

def test_describe_log_dirs_sizes(srv, conn):
    name = topic_name("logdirs")
    make_topic(conn, name, 2)
    sizes = {0: 0, 1: 0}
    for i in range(5):
        part = i % 2
        blob = kwire.encode_batch([kwire.Record(b"v" * (100 * (i + 1)))])
        assert conn.produce(name, part, blob, timeout=T(5))["error_code"] == 0
        sizes[part] += len(blob)
    real = os.path.realpath(srv.data_dir)
    for v in range(0, 5):
        for topics in (None, [(name, [0, 1])]):
            r = conn.describe_log_dirs(topics, version=v)
            assert r["error_code"] == 0
            dirs = [x for x in r["results"] if os.path.realpath(x["log_dir"]) == real]
            assert len(dirs) == 1, "v%d: log dirs %s, expected %s" % (
                v, [x["log_dir"] for x in r["results"]], real)
            d = dirs[0]
            assert d["error_code"] == 0 and os.path.isabs(d["log_dir"])
            mine = [t for t in d["topics"] if t["name"] == name]
            assert len(mine) == 1, "v%d: topic %s not listed" % (v, name)
            got = {p["partition"]: p for p in mine[0]["partitions"]}
            assert sorted(got) == [0, 1]
            for part in (0, 1):
                on_disk = sum(os.path.getsize(os.path.join(srv.data_dir, "%s-%d" % (name, part), f))
                              for f in os.listdir(os.path.join(srv.data_dir, "%s-%d" % (name, part)))
                              if f.endswith(".log"))
                assert got[part]["size"] == sizes[part] == on_disk, \
                    "v%d partition %d: size %d, produced %d, on disk %d" % (
                        v, part, got[part]["size"], sizes[part], on_disk)
                assert got[part]["offset_lag"] == 0 and got[part]["is_future"] is False
            if topics is not None:
                assert [t["name"] for t in d["topics"]] == [name]
            if v >= 4:
                assert d["total_bytes"] > 0 and 0 < d["usable_bytes"] <= d["total_bytes"], d


# -- auto-creation -----------------------------------------------------------------

def test_metadata_auto_creation_uses_num_partitions(samsa):
    srv = samsa.start({"auto.create.topics.enable": "true", "num.partitions": "4"})
    with srv.connect(timeout=T(5)) as c:
        name = topic_name("auto")
        t = c.topic_metadata(name, allow_auto_topic_creation=False)
        assert t["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION, \
            "created although the request said allow_auto_topic_creation=false"
        t = c.topic_metadata(name, allow_auto_topic_creation=True)
        assert t["error_code"] in (0, kwire.ERR_LEADER_NOT_AVAILABLE), t
        t = c.wait_topic(name, timeout=T(10))
        assert len(t["partitions"]) == 4
        p = c.produce(name, 3, kwire.encode_batch([kwire.Record(b"auto")]), timeout=T(5))
        assert p["error_code"] == 0
        # Metadata v0 (no allow flag) also creates
        name0 = topic_name("auto0")
        c.metadata(0, [name0])
        c.wait_topic(name0, 4, timeout=T(10))
