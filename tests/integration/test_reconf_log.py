"""Dynamic log defaults (Kafka's DynamicLogConfig): log.retention.bytes,
log.retention.ms (and .minutes, .hours), log.segment.bytes and
message.max.bytes set on the BROKER resource at run time; every topic without an override of its own follows the new default
(its old segments go at the next retention pass), a topic with its own
override does not; DescribeConfigs shows the value with the
DYNAMIC_BROKER_CONFIG source on the broker and on the topics; bad values
are refused with Kafka's ConfigDef messages; the value survives a
restart."""

import os

import kwire
import samsa_harness
from samsa_harness import T, set_broker

BROKER, TOPIC = kwire.RESOURCE_BROKER, kwire.RESOURCE_TOPIC
SRC_DYNAMIC_BROKER, SRC_DEFAULT = 2, 5
SEGMENT_BYTES = 1048576
BIG = 262144
SERVER = {"log.retention.check.interval.ms": "200",
          "log.segment.delete.delay.ms": "0"}


def segments(srv, name):
    d = os.path.join(srv.data_dir, "%s-0" % name)
    return sorted((int(f[:20]), os.path.getsize(os.path.join(d, f)))
                  for f in os.listdir(d) if f.endswith(".log") and len(f) == 24)


def fill(conn, name, nbatches):
    for i in range(nbatches):
        p = conn.produce(name, 0, kwire.encode_batch(
            [kwire.Record(bytes([i % 251]) * BIG)]), timeout=T(10))
        assert p["error_code"] == 0, kwire.error_name(p["error_code"])


def log_start(conn, name):
    return conn.list_offsets(name, 0, kwire.TS_EARLIEST)["offset"]


def topic_entry(conn, name, key):
    res = conn.describe_configs([(TOPIC, name, [key])])[0]
    assert res["error_code"] == 0, res
    e = res["configs"][0]
    return e["value"], e["source"]


def test_log_retention_defaults_follow_the_broker(samsa):
    srv = samsa.start(SERVER)
    with srv.connect(timeout=T(10)) as c:
        for name, extra in (("follows", {}), ("own", {"retention.bytes": "-1"})):
            cfg = {"segment.bytes": str(SEGMENT_BYTES)}
            cfg.update(extra)
            assert c.create_topic(name, 1, cfg, timeout=T(10))["error_code"] == 0
            c.wait_topic(name, 1, timeout=T(10))
            fill(c, name, 14)
        segs = segments(srv, "follows")
        assert len(segs) >= 4, segs
        assert topic_entry(c, "follows", "retention.bytes") == ("-1", SRC_DEFAULT)

        # refused with Kafka's ConfigDef messages, nothing applied
        assert set_broker(c, "log.retention.bytes", "lots") == (
            kwire.ERR_INVALID_CONFIG, "Invalid value lots for configuration "
            "log.retention.bytes: Not a number of type LONG")
        assert set_broker(c, "log.retention.ms", "-2") == (
            kwire.ERR_INVALID_CONFIG, "Invalid value -2 for configuration "
            "log.retention.ms: Value must be at least -1")

        # the oldest two segments of the topic that follows the default go
        total = sum(s for _, s in segs)
        limit = total - segs[0][1] - segs[1][1]
        assert set_broker(c, "log.retention.bytes", str(limit)) == (0, None)
        assert samsa_harness.wait_until(
            lambda: log_start(c, "follows") == segs[2][0], T(10)), (
            log_start(c, "follows"), segs)
        assert topic_entry(c, "follows", "retention.bytes") == (
            str(limit), SRC_DYNAMIC_BROKER)
        # the topic with its own retention.bytes keeps everything
        assert log_start(c, "own") == 0
        assert topic_entry(c, "own", "retention.bytes")[0] == "-1"

        # log.retention.ms: the topics' retention.ms follows
        assert set_broker(c, "log.retention.ms", "3600000") == (0, None)
        assert samsa_harness.wait_until(
            lambda: topic_entry(c, "follows", "retention.ms") == (
                "3600000", SRC_DYNAMIC_BROKER), T(10))
        res = c.describe_configs([(BROKER, "1", ["log.retention.bytes"])])[0]
        e = res["configs"][0]
        assert (e["value"], e["source"], e["read_only"]) == (
            str(limit), SRC_DYNAMIC_BROKER, False)

    # kept in the metadata log: after a restart the topic still follows it
    assert srv.stop() == []
    over = {k: v for k, v in srv.overrides.items() if k != "listeners"}
    srv2 = samsa.start(overrides=over, workdir=srv.workdir)
    with srv2.connect(timeout=T(10)) as c:
        assert topic_entry(c, "follows", "retention.bytes") == (
            str(limit), SRC_DYNAMIC_BROKER)
        assert log_start(c, "follows") == segs[2][0]
        assert log_start(c, "own") == 0


def test_message_max_bytes_follows_the_broker(samsa):
    """message.max.bytes (topic synonym max.message.bytes): a batch the old
    default took is refused with MESSAGE_TOO_LARGE once the default is
    lowered, by a topic without an override only."""
    srv = samsa.start()
    big = kwire.encode_batch([kwire.Record(b"x" * 600000)])
    with srv.connect(timeout=T(10)) as c:
        for name, cfg in (("follows", None), ("own", {"max.message.bytes": "2000000"})):
            assert c.create_topic(name, 1, cfg, timeout=T(10))["error_code"] == 0
            c.wait_topic(name, 1, timeout=T(10))
        assert c.produce("follows", 0, big, timeout=T(10))["error_code"] == 0
        assert set_broker(c, "message.max.bytes", "500000") == (0, None)
        assert samsa_harness.wait_until(
            lambda: topic_entry(c, "follows", "max.message.bytes") == (
                "500000", SRC_DYNAMIC_BROKER), T(10))
        p = c.produce("follows", 0, big, timeout=T(10))
        assert p["error_code"] == kwire.ERR_MESSAGE_TOO_LARGE, kwire.error_name(
            p["error_code"])
        assert c.produce("own", 0, big, timeout=T(10))["error_code"] == 0
        assert set_broker(c, "message.max.bytes", "-1") == (
            kwire.ERR_INVALID_CONFIG, "Invalid value -1 for configuration "
            "message.max.bytes: Value must be at least 0")


def test_log_segment_bytes_follows_the_broker(samsa):
    """log.segment.bytes (topic synonym segment.bytes): a topic without an
    override rolls at the new size from the next append on."""
    srv = samsa.start()
    with srv.connect(timeout=T(10)) as c:
        assert c.create_topic("rolls", 1, None, timeout=T(10))["error_code"] == 0
        c.wait_topic("rolls", 1, timeout=T(10))
        fill(c, "rolls", 6)
        assert len(segments(srv, "rolls")) == 1     # the 1 GiB default
        assert set_broker(c, "log.segment.bytes", str(SEGMENT_BYTES)) == (0, None)
        assert samsa_harness.wait_until(
            lambda: topic_entry(c, "rolls", "segment.bytes") == (
                str(SEGMENT_BYTES), SRC_DYNAMIC_BROKER), T(10))
        fill(c, "rolls", 12)
        segs = segments(srv, "rolls")
        assert len(segs) >= 3, segs
        assert all(s <= SEGMENT_BYTES for _, s in segs[1:]), segs
        assert set_broker(c, "log.segment.bytes", "1000") == (
            kwire.ERR_INVALID_CONFIG, "Invalid value 1000 for configuration "
            "log.segment.bytes: Value must be at least %d" % SEGMENT_BYTES)
