"""Produce, Fetch and ListOffsets on the wire (raw sockets, kwire): every
version, per-partition errors, LogAppendTime, max bytes and the first
batch whole, the long poll (MaxWaitMs / MinBytes) and its wake-up by a
Produce, and the seed's example 3 with a Fetch long poll."""

import itertools
import json
import os
import statistics
import time

import pytest

import kwire
import samsa_harness
from samsa_harness import T, timeout_scale

_names = itertools.count(1)


def topic_name(prefix):
    return "%s-%d-%d" % (prefix, os.getpid() % 1000, next(_names))


def make_topic(conn, name, partitions=1, configs=None):
    """CreateTopics v7, then waits for Metadata to show it led; returns its id."""
    r = conn.create_topic(name, partitions, configs, timeout=T(10))
    assert r["error_code"] == 0, "CreateTopics %s: %s %s" % (
        name, kwire.error_name(r["error_code"]), r["error_message"])
    conn.wait_topic(name, partitions, timeout=T(10))
    return r["topic_id"]


def recs(n, tag, ts=None, value_size=0):
    now = int(time.time() * 1000) if ts is None else ts
    return [kwire.Record(("%s-v%d" % (tag, i)).encode() + b"." * value_size,
                         key=("%s-k%d" % (tag, i)).encode(),
                         headers=[("i", str(i).encode())], timestamp=now + i)
            for i in range(n)]


def produce_ok(conn, topic, partition, records, version=9, acks=-1, **kw):
    p = conn.produce(topic, partition, kwire.encode_batch(records, **kw),
                     version=version, acks=acks, timeout=T(10))
    assert p["error_code"] == 0, "Produce v%d to %s-%d: %s %s" % (
        version, topic, partition, kwire.error_name(p["error_code"]), p["error_message"])
    return p


def as_tuples(records):
    return [(r.key, r.value, list(r.headers), r.timestamp) for r in records]


def fetched_tuples(batches):
    return [(r["key"], r["value"], r["headers"], r["timestamp"])
            for r in kwire.records_of(batches)]


@pytest.fixture(scope="module")
def srv(samsa_module):
    return samsa_module.start()


@pytest.fixture
def conn(srv):
    with srv.connect(timeout=T(5), client_id="storage-proto") as c:
        yield c


# -- ApiVersions ------------------------------------------------------------

CONTRACT = {  # api key: (lowest version we need, highest)
    0: (3, 11), 1: (4, 16), 2: (1, 9), 3: (0, 12), 19: (2, 7), 20: (1, 6),
    21: (0, 2), 23: (2, 4), 32: (0, 4), 33: (0, 2), 35: (0, 4), 37: (0, 3), 44: (0, 1),
}


def test_api_versions_advertise_storage_apis(conn):
    keys = conn.api_versions(3)["api_keys"]
    for key, (lo, hi) in CONTRACT.items():
        assert key in keys, "ApiVersions lacks %s (%d)" % (kwire.API_NAMES.get(key), key)
        amin, amax = keys[key]
        assert amin <= lo and amax >= hi, "%s advertised %d-%d, need %d-%d" % (
            kwire.API_NAMES.get(key, key), amin, amax, lo, hi)
    # librdkafka compresses only if Produce v0 is advertised (CLIENTS.md)
    assert keys[0][0] == 0, "Produce must be advertised from v0: %s" % (keys[0],)


# -- Produce and Fetch, every version -----------------------------------------------

def test_produce_and_fetch_every_version(conn):
    name = topic_name("every")
    tid = make_topic(conn, name)
    assert tid and tid != bytes(16), "CreateTopics v7 returned no topic id"
    md = conn.topic_metadata(name, version=12)
    assert md["topic_id"] == tid, "Metadata's topic id differs from CreateTopics'"
    sent = []
    for v in range(3, 12):
        rs = recs(3, "pv%d" % v)
        # the broker assigns offsets (a client's batch says BaseOffset 0)
        p = produce_ok(conn, name, 0, rs, version=v)
        assert p["base_offset"] == len(sent), "Produce v%d base offset %d, expected %d" % (
            v, p["base_offset"], len(sent))
        if v >= 5:
            assert p["log_start_offset"] == 0, p
        assert p["log_append_time_ms"] == -1, "CreateTime topic: LogAppendTime must be -1"
        sent += rs
    total = len(sent)
    for v in range(4, 17):
        ref = tid if v >= 13 else name
        p = conn.fetch(ref, 0, 0, version=v, timeout=T(5))
        assert p["error_code"] == 0, "Fetch v%d: %s" % (v, kwire.error_name(p["error_code"]))
        assert p["high_watermark"] == total
        assert p["last_stable_offset"] == total, "Fetch v%d LastStableOffset" % v
        if v >= 5:
            assert p["log_start_offset"] == 0
        assert not p["aborted_transactions"]
        if v >= 7:
            assert p["response"]["session_id"] == 0 and p["response"]["error_code"] == 0
        if v >= 11:
            assert p["preferred_read_replica"] == -1
        batches = p["batches"]
        assert p["tail"] == 0, "Fetch v%d ends with a partial batch" % v
        assert [b["base_offset"] for b in batches] == list(range(0, total, 3))
        for b in batches:
            assert b["crc_ok"] and b["magic"] == 2
            assert b["partition_leader_epoch"] >= 0, "leader epoch not set on append"
        assert fetched_tuples(batches) == as_tuples(sent), "Fetch v%d records" % v
        assert [r["offset"] for r in kwire.records_of(batches)] == list(range(total))


def test_produce_several_partitions_and_topics_in_one_request(conn):
    a, b = topic_name("multi-a"), topic_name("multi-b")
    make_topic(conn, a, 2)
    make_topic(conn, b, 1)
    blob = kwire.encode_batch(recs(2, "m"))
    body = kwire.encode_produce_request(
        9, [(a, [(0, blob), (1, blob), (7, blob)]), (b, [(0, blob)]),
            ("no-such-topic-" + a, [(0, blob)])], acks=-1, timeout_ms=10000)
    r = conn.request(kwire.API_PRODUCE, 9, body, timeout=T(10))
    got = {(t["name"], p["partition"]): p["error_code"]
           for t in r["topics"] for p in t["partitions"]}
    assert got == {(a, 0): 0, (a, 1): 0, (a, 7): kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION,
                   (b, 0): 0,
                   ("no-such-topic-" + a, 0): kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION}, got
    for t, part in ((a, 0), (a, 1), (b, 0)):
        assert conn.list_offsets(t, part, kwire.TS_LATEST)["offset"] == 2


def test_acks_one_all_and_invalid(conn):
    name = topic_name("acks")
    make_topic(conn, name)
    assert produce_ok(conn, name, 0, recs(1, "a1"), acks=1)["base_offset"] == 0
    assert produce_ok(conn, name, 0, recs(1, "a-1"), acks=-1)["base_offset"] == 1
    p = conn.produce(name, 0, kwire.encode_batch(recs(1, "a2")), acks=2, timeout=T(5))
    assert p["error_code"] == kwire.ERR_INVALID_REQUIRED_ACKS, kwire.error_name(p["error_code"])
    assert conn.list_offsets(name, 0, kwire.TS_LATEST)["offset"] == 2


def test_log_append_time_rewrites_timestamps_and_crc(conn):
    name = topic_name("lat")
    make_topic(conn, name, configs={"message.timestamp.type": "LogAppendTime"})
    old = int(time.time() * 1000) - 3600 * 1000
    t0 = int(time.time() * 1000)
    p = produce_ok(conn, name, 0, recs(3, "lat", ts=old))
    t1 = int(time.time() * 1000)
    assert t0 - 5 <= p["log_append_time_ms"] <= t1 + 5, \
        "LogAppendTimeMs %d not within [%d, %d]" % (p["log_append_time_ms"], t0, t1)
    f = conn.fetch(name, 0, 0)
    (b,) = f["batches"]
    assert b["log_append_time"], "timestamp type bit not set on a LogAppendTime topic"
    assert b["max_timestamp"] == p["log_append_time_ms"]
    assert b["crc_ok"], "CRC not recomputed after rewriting the batch"
    assert all(r["timestamp"] == p["log_append_time_ms"] for r in b["records"])
    # ListOffsets by time sees the append time, not the producer's
    lo = conn.list_offsets(name, 0, old + 10)
    assert lo["offset"] == 0 and lo["timestamp"] == p["log_append_time_ms"], lo


def test_create_time_max_timestamp_is_the_records_largest(conn):
    name = topic_name("maxts")
    make_topic(conn, name)
    now = int(time.time() * 1000)
    rs = [kwire.Record(b"a", timestamp=now), kwire.Record(b"b", timestamp=now + 500),
          kwire.Record(b"c", timestamp=now + 100)]
    produce_ok(conn, name, 0, rs, max_timestamp=now)     # a producer's wrong MaxTimestamp
    (b,) = conn.fetch(name, 0, 0)["batches"]
    assert not b["log_append_time"]
    assert b["max_timestamp"] == now + 500 and b["crc_ok"]
    assert [r["timestamp"] for r in b["records"]] == [now, now + 500, now + 100]


# -- ListOffsets ------------------------------------------------------------------

def test_list_offsets_every_version(conn):
    name = topic_name("lo")
    make_topic(conn, name)
    base = int(time.time() * 1000) - 60000
    for i in range(3):  # 3 batches of 2 records, at base + 1000 i (+0, +10)
        produce_ok(conn, name, 0, [kwire.Record(b"x", timestamp=base + 1000 * i),
                                   kwire.Record(b"y", timestamp=base + 1000 * i + 10)])
    for v in range(1, 10):
        def lo(ts):
            p = conn.list_offsets(name, 0, ts, version=v)
            assert p["error_code"] == 0, "ListOffsets v%d ts %d: %s" % (
                v, ts, kwire.error_name(p["error_code"]))
            return p["offset"], p["timestamp"]
        assert lo(kwire.TS_EARLIEST)[0] == 0, "v%d earliest" % v
        assert lo(kwire.TS_LATEST)[0] == 6, "v%d latest" % v
        assert lo(base - 5000) == (0, base), "v%d before everything" % v
        assert lo(base + 500) == (2, base + 1000), "v%d by time" % v
        assert lo(base + 1005) == (3, base + 1010), "v%d by time inside a batch" % v
        assert lo(base + 2010) == (5, base + 2010), "v%d by exact time" % v
        assert lo(base + 99999) == (-1, -1), "v%d after everything" % v
        if v >= 7:
            assert lo(kwire.TS_MAX_TIMESTAMP) == (5, base + 2010), "v%d max timestamp" % v
        if v >= 4:
            p = conn.list_offsets(name, 0, base + 500, version=v)
            assert p["leader_epoch"] >= 0, "v%d leader epoch of a found offset" % v
    p = conn.list_offsets(name, 3, kwire.TS_LATEST)
    assert p["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION
    p = conn.list_offsets("no-such-" + name, 0, kwire.TS_LATEST)
    assert p["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION


def test_list_offsets_empty_partition(conn):
    name = topic_name("lo-empty")
    make_topic(conn, name)
    for ts in (kwire.TS_EARLIEST, kwire.TS_LATEST):
        p = conn.list_offsets(name, 0, ts)
        assert (p["error_code"], p["offset"]) == (0, 0), p
    p = conn.list_offsets(name, 0, 12345)
    assert (p["error_code"], p["offset"], p["timestamp"]) == (0, -1, -1), p


# -- Fetch limits and errors ------------------------------------------------------

def test_fetch_max_bytes_first_batch_whole(conn):
    name = topic_name("maxb")
    make_topic(conn, name, 2)
    sizes = []
    for i in range(3):
        blob = kwire.encode_batch([kwire.Record(b"%d" % i + b"z" * 10000)])
        sizes.append(len(blob))
        assert conn.produce(name, 0, blob, timeout=T(5))["error_code"] == 0
    assert conn.produce(name, 1, blob, timeout=T(5))["error_code"] == 0
    # a partition limit below the first batch: that batch, whole, and nothing more
    p = conn.fetch(name, 0, 0, partition_max_bytes=100)
    assert [b["base_offset"] for b in p["batches"]] == [0] and p["tail"] == 0, \
        "PartitionMaxBytes=100: %d batches, %d tail bytes" % (len(p["batches"]), p["tail"])
    # a response limit below the first batch: the same
    p = conn.fetch(name, 0, 0, max_bytes=100)
    assert [b["base_offset"] for b in p["batches"]] == [0] and p["tail"] == 0
    # two and a half batches: two whole ones, the rest cut (or left out)
    limit = sizes[0] + sizes[1] + sizes[2] // 2
    p = conn.fetch(name, 0, 0, partition_max_bytes=limit)
    assert [b["base_offset"] for b in p["batches"]] == [0, 1]
    assert len(p["records"]) <= limit, "%d bytes > PartitionMaxBytes %d" % (len(p["records"]), limit)
    # offset inside the log: from that batch on
    p = conn.fetch(name, 0, 2)
    assert [b["base_offset"] for b in p["batches"]] == [2]
    # KIP-74: the response limit is used up by the first partition
    body = kwire.encode_fetch_request(12, [(name, [(0, 0, 1 << 20), (1, 0, 1 << 20)])],
                                      max_wait_ms=0, max_bytes=100)
    r = conn.request(kwire.API_FETCH, 12, body, timeout=T(5))
    parts = {x["partition"]: x for x in r["topics"][0]["partitions"]}
    assert set(parts) == {0, 1}
    b0, _ = kwire.decode_batches(parts[0]["records"])
    b1, _ = kwire.decode_batches(parts[1]["records"])
    assert len(b0) == 1 and not b1, "MaxBytes=100 over two partitions: %d and %d batches" % (
        len(b0), len(b1))
    assert parts[1]["high_watermark"] == 1 and parts[1]["error_code"] == 0
    # a later partition whose first batch is over its own limit gets no
    # bytes at all, not a cut batch (Kafka's Fetch v3+: the consumer makes
    # no progress there this round instead of failing as too large)
    body = kwire.encode_fetch_request(12, [(name, [(0, 0, 100), (1, 0, 100)])],
                                      max_wait_ms=0)
    r = conn.request(kwire.API_FETCH, 12, body, timeout=T(5))
    parts = {x["partition"]: x for x in r["topics"][0]["partitions"]}
    b0, t0 = kwire.decode_batches(parts[0]["records"])
    b1, t1 = kwire.decode_batches(parts[1]["records"])
    assert len(b0) == 1 and t0 == 0
    assert not b1 and t1 == 0 and not parts[1]["records"], \
        "partition 1: %d batches, %d tail bytes" % (len(b1), t1)


def test_fetch_errors(conn):
    name = topic_name("ferr")
    tid = make_topic(conn, name)
    produce_ok(conn, name, 0, recs(2, "fe"))
    p = conn.fetch(name, 0, 3)
    assert p["error_code"] == kwire.ERR_OFFSET_OUT_OF_RANGE, kwire.error_name(p["error_code"])
    p = conn.fetch(name, 0, 2)
    assert p["error_code"] == 0 and not p["batches"] and p["high_watermark"] == 2
    p = conn.fetch(name, 0, -5)
    assert p["error_code"] == kwire.ERR_OFFSET_OUT_OF_RANGE
    p = conn.fetch(name, 4, 0)
    assert p["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION
    p = conn.fetch("no-such-" + name, 0, 0)
    assert p["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION
    p = conn.fetch(bytes(reversed(tid)), 0, 0, version=13)
    assert p["error_code"] == kwire.ERR_UNKNOWN_TOPIC_ID, kwire.error_name(p["error_code"])
    assert conn.fetch(tid, 0, 0, version=16)["error_code"] == 0


# -- the long poll ------------------------------------------------------------

def test_fetch_waits_max_wait_on_an_empty_partition(conn):
    name = topic_name("wait")
    make_topic(conn, name)
    t0 = time.monotonic()
    p = conn.fetch(name, 0, 0, max_wait_ms=600, min_bytes=1, timeout=T(5))
    dt = time.monotonic() - t0
    assert p["error_code"] == 0 and not p["batches"]
    assert 0.58 <= dt <= 0.6 + T(0.5), "MaxWaitMs=600 answered after %.3f s" % dt


def test_fetch_min_bytes_holds_until_enough(srv, conn):
    name = topic_name("minb")
    make_topic(conn, name)
    with srv.connect(timeout=T(5)) as a:
        t0 = time.monotonic()
        a.send(kwire.fetch_request(12, 1, [(name, [(0, 0, 1 << 20)])],
                                   max_wait_ms=1000, min_bytes=100000))
        time.sleep(0.1)
        produce_ok(conn, name, 0, recs(1, "small"))
        assert a.is_open(0.2) and not a.buf, "answered before MinBytes or MaxWaitMs"
        r = kwire.decode_fetch_response(a.recv_frame(T(5)), 12)
        dt = time.monotonic() - t0
        p = r["topics"][0]["partitions"][0]
        assert 0.95 <= dt <= 1.0 + T(0.5), "answered after %.3f s" % dt
        batches, _ = kwire.decode_batches(p["records"])
        assert len(batches) == 1, "the data that was there at expiry is returned"


def test_long_poll_woken_by_produce(srv, conn):
    """A Fetch parked on an empty partition is answered within a few ms of a
    Produce to it (woken by the append, not by its MaxWaitMs)."""
    name = topic_name("wake")
    make_topic(conn, name)
    lat = []
    with srv.connect(timeout=T(5), client_id="poller") as a:
        for i in range(6):
            a.send(kwire.fetch_request(12, 100 + i, [(name, [(0, i, 1 << 20)])],
                                       max_wait_ms=int(T(10) * 1000), min_bytes=1))
            time.sleep(0.15)
            assert not a.buf and a.is_open(0.01), "Fetch answered before any Produce"
            blob = kwire.encode_batch([kwire.Record(b"wake-%d" % i)])
            body = kwire.encode_produce_request(9, [(name, [(0, blob)])], acks=1)
            t0 = time.monotonic()
            conn.send(kwire.encode_request(kwire.API_PRODUCE, 9, conn.corr(), body))
            payload = a.recv_frame(T(5))
            lat.append(time.monotonic() - t0)
            pr = kwire.decode_produce_response(conn.recv_frame(T(5)), 9)
            assert pr["topics"][0]["partitions"][0]["error_code"] == 0
            r = kwire.decode_fetch_response(payload, 12)
            assert r["correlation_id"] == 100 + i
            batches, _ = kwire.decode_batches(r["topics"][0]["partitions"][0]["records"])
            assert [x["value"] for x in kwire.records_of(batches)] == [b"wake-%d" % i]
    med = statistics.median(lat)
    print("wake-up latencies (ms):", ["%.1f" % (x * 1000) for x in lat])
    assert med < 0.05 * timeout_scale(), \
        "median wake-up %.1f ms (all: %s)" % (med * 1000, ["%.1f" % (x * 1000) for x in lat])
    assert max(lat) < 0.5 * timeout_scale(), "slowest wake-up %.1f ms" % (max(lat) * 1000)


# -- seed example 3 with a Fetch long poll -------------------------------------------

def read_log(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        lines = f.read().split("\n")
    return [json.loads(x) for x in lines[:-1] if x.strip()]


def test_seed_example_3_fetch_long_poll(samsa, tmp_path):
    log = str(tmp_path / "req.log")
    srv = samsa.start({"request.log.enable": "true", "request.log.file": log})
    with srv.connect(client_id="setup") as c:
        name = topic_name("ex3")
        make_topic(c, name)
    with srv.connect(client_id="conn-a") as a, srv.connect(client_id="conn-b") as b:
        a.api_versions(0)
        b.api_versions(0)
        t0 = time.monotonic()
        a.send(kwire.fetch_request(12, 11, [(name, [(0, 0, 1 << 20)])], "conn-a",
                                   max_wait_ms=2000, min_bytes=1)
               + kwire.api_versions_request(3, 12, "conn-a"))
        time.sleep(0.1)
        tb = time.monotonic()
        b.send(kwire.api_versions_request(3, 21, "conn-b"))
        rb = kwire.decode_api_versions_response(b.recv_frame(T(5)), 3)
        t_b = time.monotonic() - tb
        assert rb["correlation_id"] == 21 and rb["error_code"] == 0
        assert t_b < 0.2 * timeout_scale(), "B answered after %.3f s" % t_b
        f = a.recv_frame(T(6))
        t_f = time.monotonic() - t0
        v = a.recv_frame(T(2))
        t_v = time.monotonic() - t0
        rf = kwire.decode_fetch_response(f, 12)
        rv = kwire.decode_api_versions_response(v, 3)
        assert (rf["correlation_id"], rv["correlation_id"]) == (11, 12), "out of order"
        assert rf["topics"][0]["partitions"][0]["error_code"] == 0
        assert 1.95 <= t_f <= 2.0 + T(0.5), "A's Fetch answered after %.3f s" % t_f
        assert t_v - t_f < 0.1 * timeout_scale(), \
            "A's ApiVersions came %.3f s after its Fetch" % (t_v - t_f)

    def mine(lines):
        return [x for x in lines if x["requestHeader"]["clientId"] in ("conn-a", "conn-b")
                and x["requestHeader"]["correlationId"] in (11, 12, 21)]
    ok = samsa_harness.wait_until(lambda: len(mine(read_log(log))) >= 3, T(5), 0.05)
    lines = mine(read_log(log))
    assert ok, "request log lacks the 3 requests: %s" % lines
    by = {x["requestHeader"]["correlationId"]: x for x in lines}
    fetch = by[11]
    assert fetch["requestHeader"]["requestApiKeyName"] == "FETCH"
    assert 1950 <= fetch["remoteTimeMs"] <= 2000 + T(0.5) * 1000, fetch
    assert by[12]["requestHeader"]["requestApiKeyName"] == "API_VERSIONS"
    for corr in (12, 21):
        assert by[corr]["totalTimeMs"] < 100 * timeout_scale(), by[corr]
    assert by[12]["connection"] == fetch["connection"] != by[21]["connection"]
