"""Bad input to Produce, CreateTopics and Metadata: each is refused with
Kafka's error, nothing is appended, and the server stays up. Batches are
built by hand (kwire.encode_batch) so that each can be broken in one field.

One server per module with auto.create.topics.enable=false; its liveness is
checked after every test."""

import itertools
import os
import struct
import zlib

import pytest

import kwire
from samsa_harness import T

_names = itertools.count(1)


def topic_name(prefix):
    return "%s-%d-%d" % (prefix, os.getpid() % 1000, next(_names))


@pytest.fixture(scope="module")
def srv(samsa_module):
    return samsa_module.start({"auto.create.topics.enable": "false"})


@pytest.fixture
def conn(srv):
    with srv.connect(timeout=T(5), client_id="badinput") as c:
        yield c
    # the server stays up: a fresh connection still works
    assert srv.alive(), "samsa-server died:\n%s" % srv.stderr_tail()
    with srv.connect(timeout=T(5)) as c2:
        assert c2.api_versions(0)["error_code"] == 0


def make_topic(conn, name, partitions=1, configs=None):
    r = conn.create_topic(name, partitions, configs, timeout=T(10))
    assert r["error_code"] == 0, "%s %s" % (kwire.error_name(r["error_code"]), r["error_message"])
    conn.wait_topic(name, partitions, timeout=T(10))


def good_batch(tag="ok", n=2):
    return kwire.encode_batch([kwire.Record(b"%s-%d" % (tag.encode(), i), key=b"k")
                               for i in range(n)])


def end_offset(conn, name, partition=0):
    p = conn.list_offsets(name, partition, kwire.TS_LATEST)
    assert p["error_code"] == 0
    return p["offset"]


def assert_refused(conn, name, blob, expected, version=9):
    """Produces blob; asserts the error is one of `expected`, that nothing
    was appended, and that the connection still works."""
    before = end_offset(conn, name)
    p = conn.produce(name, 0, blob, version=version, timeout=T(5))
    expected = expected if isinstance(expected, (tuple, list, set)) else (expected,)
    assert p["error_code"] in expected, "got %s, expected %s (message %r)" % (
        kwire.error_name(p["error_code"]), [kwire.error_name(e) for e in expected],
        p.get("error_message"))
    assert p["base_offset"] == -1, "a refused batch got base offset %d" % p["base_offset"]
    assert end_offset(conn, name) == before, "a refused batch was appended"
    # and a good batch right after goes in at the old end
    q = conn.produce(name, 0, good_batch(), version=version, timeout=T(5))
    assert (q["error_code"], q["base_offset"]) == (0, before)
    f = conn.fetch(name, 0, before)
    assert [b["base_offset"] for b in f["batches"]] == [before] and f["batches"][0]["crc_ok"]
    return p


def test_corrupt_crc(conn):
    name = topic_name("crc")
    make_topic(conn, name)
    blob = bytearray(good_batch())
    blob[-1] ^= 0x01                         # flip a bit of the last record
    p = assert_refused(conn, name, bytes(blob), kwire.ERR_CORRUPT_MESSAGE)
    assert p["error_code"] == kwire.ERR_CORRUPT_MESSAGE
    bad = kwire.encode_batch([kwire.Record(b"x")], crc=0xDEADBEEF)
    assert_refused(conn, name, bad, kwire.ERR_CORRUPT_MESSAGE, version=3)
    # one bad batch among good ones: the whole request's batches are refused
    assert_refused(conn, name, good_batch() + bad + good_batch(), kwire.ERR_CORRUPT_MESSAGE)


def test_broken_sizes_and_counts(conn):
    name = topic_name("sizes")
    make_topic(conn, name)
    whole = good_batch()
    # the batch says it is longer than what was sent
    longer = kwire.encode_batch([kwire.Record(b"x")], length=500)
    assert_refused(conn, name, longer, (kwire.ERR_CORRUPT_MESSAGE, kwire.ERR_INVALID_RECORD))
    # cut in the middle
    assert_refused(conn, name, whole[:len(whole) - 5],
                   (kwire.ERR_CORRUPT_MESSAGE, kwire.ERR_INVALID_RECORD))
    # RecordsCount disagrees with LastOffsetDelta (CRC right)
    bad = kwire.encode_batch([kwire.Record(b"x"), kwire.Record(b"y")], records_count=3)
    assert_refused(conn, name, bad, (kwire.ERR_INVALID_RECORD, kwire.ERR_CORRUPT_MESSAGE))
    bad = kwire.encode_batch([kwire.Record(b"x"), kwire.Record(b"y")], last_offset_delta=5)
    assert_refused(conn, name, bad, (kwire.ERR_INVALID_RECORD, kwire.ERR_CORRUPT_MESSAGE))
    # a client's batch must say BaseOffset 0 (Kafka's UnifiedLog check)
    bad = kwire.encode_batch([kwire.Record(b"x")], base_offset=1000)
    assert_refused(conn, name, bad, kwire.ERR_INVALID_RECORD)
    # a record whose length runs past the batch (CRC right)
    rec = kwire.encode_record(0, 0, b"k", b"value")
    broken = kwire.varint(len(rec) + 40) + rec[1:]
    bad = kwire.encode_batch([kwire.Record(b"value", key=b"k")], records_blob=broken)
    assert_refused(conn, name, bad, (kwire.ERR_INVALID_RECORD, kwire.ERR_CORRUPT_MESSAGE))


def legacy_message(value, magic=1):
    """A magic-1 message set entry (offset, size, crc, magic, attrs, ts, key, value)."""
    body = struct.pack(">bbq", magic, 0, 0) + struct.pack(">i", -1) \
        + struct.pack(">i", len(value)) + value
    crc = zlib.crc32(body) & 0xFFFFFFFF
    msg = struct.pack(">I", crc) + body
    return struct.pack(">qi", 0, len(msg)) + msg


def test_old_message_format_refused(conn):
    name = topic_name("magic1")
    make_topic(conn, name)
    assert_refused(conn, name, legacy_message(b"old"),
                   (kwire.ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT, kwire.ERR_INVALID_RECORD,
                    kwire.ERR_CORRUPT_MESSAGE))


def test_message_too_large(conn):
    name = topic_name("big")
    make_topic(conn, name, configs={"max.message.bytes": "1000"})
    blob = kwire.encode_batch([kwire.Record(b"x" * 2000)])
    assert_refused(conn, name, blob, kwire.ERR_MESSAGE_TOO_LARGE)
    # just under the limit is fine
    small = kwire.encode_batch([kwire.Record(b"x" * 900)])
    assert len(small) <= 1000
    assert conn.produce(name, 0, small, timeout=T(5))["error_code"] == 0
    # without a topic override the broker's message.max.bytes (1048588) applies
    other = topic_name("big-default")
    make_topic(conn, other)
    blob = kwire.encode_batch([kwire.Record(os.urandom(1048588))])
    assert_refused(conn, other, blob, kwire.ERR_MESSAGE_TOO_LARGE)


def test_produce_to_missing_topic_or_partition(conn):
    name = topic_name("missing")
    p = conn.produce(name, 0, good_batch(), timeout=T(5))
    assert p["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION, kwire.error_name(p["error_code"])
    t = conn.topic_metadata(name)
    assert t["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION, \
        "a Produce (or Metadata with auto-creation off) created %s" % name
    t = conn.topic_metadata(name, allow_auto_topic_creation=True)
    assert t["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION, \
        "auto.create.topics.enable=false, yet Metadata created %s" % name
    make_topic(conn, name, 2)
    p = conn.produce(name, 2, good_batch(), timeout=T(5))
    assert p["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION


INVALID_NAMES = ["", ".", "..", "a" * 250, "has space", "slash/name", "star*",
                 "\u00fcmlaut", "tab\tname", "colon:name"]


def test_invalid_topic_names_create_topics(conn):
    for v in (2, 5, 7):
        for name in INVALID_NAMES:
            r = conn.create_topic(name, 1, version=v, timeout=T(10))
            assert r["error_code"] == kwire.ERR_INVALID_TOPIC_EXCEPTION, \
                "CreateTopics v%d %r: %s" % (v, name, kwire.error_name(r["error_code"]))
    # the longest legal name and every legal character
    for name in ("b" * 249, "Az09._-" + topic_name("x")):
        r = conn.create_topic(name, 1)
        assert r["error_code"] == 0, (name, kwire.error_name(r["error_code"]))
    # names that differ only in '.' against '_' collide
    base = topic_name("col")
    assert conn.create_topic(base + ".a_b", 1)["error_code"] == 0
    r = conn.create_topic(base + "_a.b", 1)
    assert r["error_code"] == kwire.ERR_INVALID_TOPIC_EXCEPTION, kwire.error_name(r["error_code"])


def test_invalid_topic_names_metadata(conn):
    for name in INVALID_NAMES[1:]:          # "" is refused as a request, not a name
        t = conn.topic_metadata(name, allow_auto_topic_creation=True)
        # Kafka answers INVALID_TOPIC_EXCEPTION; without auto-creation older
        # brokers say UNKNOWN_TOPIC_OR_PARTITION
        assert t["error_code"] in (kwire.ERR_INVALID_TOPIC_EXCEPTION,
                                   kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION), (name, t)
        assert not t["partitions"]


def test_invalid_topic_name_metadata_with_auto_creation(samsa):
    srv = samsa.start({"auto.create.topics.enable": "true"})
    with srv.connect(timeout=T(5)) as c:
        for name in ("has space", "a" * 250, ".."):
            t = c.topic_metadata(name, allow_auto_topic_creation=True)
            assert t["error_code"] == kwire.ERR_INVALID_TOPIC_EXCEPTION, (name, t)
        # a valid one is created
        ok = topic_name("auto")
        c.topic_metadata(ok, allow_auto_topic_creation=True)
        c.wait_topic(ok, timeout=T(10))


def test_produce_v0_to_v2_close_the_connection(srv):
    blob = good_batch()
    for v in (0, 1, 2):
        with srv.connect(timeout=T(5)) as c:
            body = kwire.Writer().i16(-1).i32(1000).array(
                [("t", [(0, blob)])],
                lambda w, t: w.string(t[0]).array(
                    t[1], lambda ww, p: ww.i32(p[0]).blob(p[1]))).bytes()
            c.send(kwire.encode_request(kwire.API_PRODUCE, v, 1, body))
            closed, extra = c.wait_closed(T(5))
            assert closed, "Produce v%d: connection still open" % v
            assert extra == b"", "Produce v%d: got an answer before the close" % v


def test_acks_zero(srv, conn):
    name = topic_name("acks0")
    make_topic(conn, name)
    with srv.connect(timeout=T(5)) as c:
        # a good batch: no answer at all; the next request's answer comes next
        assert c.produce(name, 0, good_batch("a0"), acks=0) is None
        corr = c.corr()
        c.send(kwire.api_versions_request(0, corr))
        payload = c.recv_frame(T(5))
        assert kwire.peek_correlation_id(payload) == corr, \
            "acks=0 Produce was answered (correlation id %d)" % kwire.peek_correlation_id(payload)
        assert kwire.decode_api_versions_response(payload, 0)["error_code"] == 0
    assert end_offset(conn, name) == 2
    # a bad batch with acks=0: the connection is closed, nothing appended
    small = topic_name("acks0-small")
    make_topic(conn, small, configs={"max.message.bytes": "1000"})
    for topic, blob, why in ((name, kwire.encode_batch([kwire.Record(b"x")], crc=1), "bad CRC"),
                             (small, kwire.encode_batch([kwire.Record(b"x" * 2000)]),
                              "too large")):
        with srv.connect(timeout=T(5)) as c:
            c.produce(topic, 0, blob, acks=0)
            closed, extra = c.wait_closed(T(5))
            assert closed, "acks=0 Produce (%s) left the connection open" % why
            assert extra == b"", "acks=0 failure (%s) was answered" % why
    assert end_offset(conn, name) == 2
    assert end_offset(conn, small) == 0
    # to a missing topic: closed too
    with srv.connect(timeout=T(5)) as c:
        c.produce("no-such-" + name, 0, good_batch(), acks=0)
        closed, extra = c.wait_closed(T(5))
        assert closed and extra == b""
