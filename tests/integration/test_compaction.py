"""Log compaction and offsets retention, end to end.

- A compacted topic created by confluent_kafka's AdminClient (small
  segment.ms, min.cleanable.dirty.ratio and delete.retention.ms) gets many
  updates per key from a confluent_kafka producer; once the cleaner has run
  (polled through cleaner-offset-checkpoint, bounded), a consumer reading
  from the beginning sees at most one record per key below the cleaned
  offset, each at its original offset with the value produced there, and
  the latest value of every key; tombstones are gone after
  delete.retention.ms.  A keyless record is refused with INVALID_RECORD.
- __consumer_offsets stays small under thousands of commits of the same
  offsets, and the compacted offsets survive a restart.
- A commit with a retention time (OffsetCommit v2) expires: OffsetFetch
  answers -1, the group is gone, tombstones for the offset and the group are
  in __consumer_offsets (offsets.retention.minutes itself is tested with an
  injected clock in tests/unit/broker/group/test_grp.c: it is in minutes).
"""

import os
import time

import pytest

import kwire
import samsa_harness
from kwire import Writer
from samsa_harness import T, cleaner_offset

OFFSET_COMMIT, OFFSET_FETCH, LIST_GROUPS = 8, 9, 16

BASE = {"log.cleaner.backoff.ms": "100",
        "log.segment.delete.delay.ms": "0",
        "group.initial.rebalance.delay.ms": "0"}


def log_bytes(srv, topic, part=0):
    """Bytes of the partition's .log files (deleted ones still there count)."""
    d = os.path.join(srv.data_dir, "%s-%d" % (topic, part))
    return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)
               if ".log" in f)


def consume_all(bs, topic, end):
    """Every record of partition 0 from the beginning up to offset end:
    [(offset, key, value)]."""
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bs, "group.id": "reader-%d" % time.time_ns(),
                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    c.assign([TopicPartition(topic, 0, 0)])
    out, deadline = [], time.monotonic() + T(20)
    try:
        while time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is None or m.error():
                if out and out[-1][0] >= end - 1:
                    break
                continue
            out.append((m.offset(), m.key(), m.value()))
            if m.offset() >= end - 1:
                break
    finally:
        c.close()
    return out


def test_compacted_topic_confluent(samsa):
    from confluent_kafka import KafkaException, Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    srv = samsa.start(overrides=BASE)
    bs = srv.bootstrap()
    topic = "compacted"
    # long enough to see the tombstones kept after the first cleaning, on
    # a loaded machine too
    retention_s = T(6)
    admin = AdminClient({"bootstrap.servers": bs})
    admin.create_topics([NewTopic(topic, 1, 1, config={
        "cleanup.policy": "compact", "segment.ms": "100",
        "min.cleanable.dirty.ratio": "0.01",
        "delete.retention.ms": str(int(retention_s * 1000)),
        "min.compaction.lag.ms": "0"})])[topic].result(T(20))

    produced = {}                       # offset -> (key, value)
    p = Producer({"bootstrap.servers": bs, "linger.ms": 2,
                  "compression.type": "lz4"})

    def report(err, msg):
        assert err is None, err
        produced[msg.offset()] = (msg.key(), msg.value())

    def burst(keys, tag, tombstone=False):
        for k in keys:
            p.produce(topic, key=b"k%d" % k,
                      value=None if tombstone else b"%s-k%d" % (tag, k),
                      partition=0, on_delivery=report)
        assert p.flush(T(20)) == 0
        time.sleep(0.15)                # past segment.ms: the next roll

    for r in range(12):                 # 12 rounds x 20 keys
        burst(range(20), b"r%d" % r)
    burst([0, 1, 2], b"gone", tombstone=True)
    # No cleaning that covers the tombstones starts before this: they are
    # still in the active segment.  Their delete horizon (KIP-534) is set
    # by the first such cleaning, so they must stay until this time plus
    # delete.retention.ms at least.
    keep_until = time.monotonic() + retention_s
    for r in range(4):                  # roll the tombstones out of the
        burst(range(100, 105), b"x%d" % r)      # active segment
    end = max(produced) + 1

    # keyless records are refused (Kafka's INVALID_RECORD)
    errs = []
    p.produce(topic, value=b"no key", partition=0,
              on_delivery=lambda err, msg: errs.append(err))
    p.flush(T(20))
    assert len(errs) == 1 and errs[0] is not None
    assert errs[0].code() == 87, errs[0]            # INVALID_RECORD

    tomb_offsets = {o for o, (k, v) in produced.items() if v is None}
    latest = {}
    for o in sorted(produced):
        latest[produced[o][0]] = o

    def check(records, cleaned):
        seen = {}
        for o, k, v in records:
            assert produced[o] == (k, v), "offset %d changed" % o
            if o < cleaned:
                assert k not in seen, "key %r twice below %d" % (k, cleaned)
                seen[k] = o
        offs = {o for o, _, _ in records}
        for k, o in latest.items():
            if produced[o][1] is not None:
                assert o in offs, "latest of %r (offset %d) missing" % (k, o)
        return offs

    # the cleaner runs and compacts everything below the tombstones' rolls
    last_tomb = max(tomb_offsets)
    assert samsa_harness.wait_until(
        lambda: cleaner_offset(srv, topic) > last_tomb, T(20)), \
        "cleaner did not get past offset %d: %d" % (last_tomb, cleaner_offset(srv, topic))
    cleaned = cleaner_offset(srv, topic)
    offs = check(consume_all(bs, topic, end), cleaned)
    read_done = time.monotonic()
    assert len(offs) < len(produced) / 3
    # the first cleaning past them kept the tombstones (their horizon had
    # not passed); a read that ends too late to tell fails, it never passes
    assert read_done < keep_until, \
        "too slow to check the tombstones before delete.retention.ms (%.1f s late)" \
        % (read_done - keep_until)
    assert tomb_offsets <= offs, "tombstones %s removed before delete.retention.ms" \
        % sorted(tomb_offsets - offs)

    # tombstones go once delete.retention.ms has passed (the cleaner comes
    # back by itself for them)
    def tombstones_gone():
        offs = {o for o, _, _ in consume_all(bs, topic, end)}
        return not (offs & tomb_offsets)
    assert samsa_harness.wait_until(tombstones_gone, retention_s + T(20), interval=0.5)
    # and not before their horizon: each check above ran after keep_until
    # or saw them
    assert time.monotonic() >= keep_until
    records = consume_all(bs, topic, end)
    check(records, cleaner_offset(srv, topic))
    assert not {k for _, k, _ in records} & {b"k0", b"k1", b"k2"}

    # the topic's compaction configs are validated and shown
    res = admin.describe_configs([__import__("confluent_kafka").admin.ConfigResource(
        "topic", topic)])
    cfg = list(res.values())[0].result(T(10))
    assert cfg["min.cleanable.dirty.ratio"].value == "0.01"
    assert cfg["delete.retention.ms"].value == str(int(retention_s * 1000))
    bad = admin.create_topics([NewTopic("bad", 1, 1, config={
        "cleanup.policy": "compact", "min.compaction.lag.ms": "10",
        "max.compaction.lag.ms": "5"})])["bad"]
    with pytest.raises(KafkaException) as ei:
        bad.result(T(10))
    assert ei.value.args[0].code() == 40                # INVALID_CONFIG


def test_compaction_turned_on_at_run_time(samsa):
    """A delete-policy topic is left alone by the cleaner; AlterConfigs to
    cleanup.policy=compact makes the running log compacted."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic
    srv = samsa.start(overrides=BASE)
    bs = srv.bootstrap()
    admin = AdminClient({"bootstrap.servers": bs})
    admin.create_topics([NewTopic("later", 1, 1, config={
        "segment.ms": "100"})])["later"].result(T(20))
    p = Producer({"bootstrap.servers": bs, "linger.ms": 2})
    for r in range(6):
        for k in range(10):
            p.produce("later", key=b"k%d" % k, value=b"r%d" % r, partition=0)
        assert p.flush(T(20)) == 0
        time.sleep(0.15)
    time.sleep(0.5)
    assert cleaner_offset(srv, "later") == -1       # not compacted
    before = log_bytes(srv, "later")
    res = admin.alter_configs([ConfigResource("topic", "later", set_config={
        "cleanup.policy": "compact", "segment.ms": "100",
        "min.cleanable.dirty.ratio": "0.01"})])
    list(res.values())[0].result(T(10))
    p.produce("later", key=b"k0", value=b"last", partition=0)   # a roll
    assert p.flush(T(20)) == 0
    assert samsa_harness.wait_until(
        lambda: cleaner_offset(srv, "later") > 0, T(20), interval=0.1)
    assert samsa_harness.wait_until(
        lambda: log_bytes(srv, "later") < before, T(10), interval=0.1)

    # cleaner-offset-checkpoint is read back at start: after a restart the
    # cleaner resumes from the same offset (and the file keeps it)
    done = cleaner_offset(srv, "later")
    assert srv.stop() == []
    over = {k: v for k, v in srv.overrides.items() if k != "listeners"}
    over["log.cleaner.enable"] = "false"    # only the loaded value is kept
    srv2 = samsa.start(overrides=over, workdir=srv.workdir)
    assert srv2.stop() == []
    assert cleaner_offset(srv2, "later") == done


def simple_commit(conn, group, offsets, retention_ms=-1, version=2):
    w = Writer().string(group).i32(-1).string("").i64(retention_ms)
    topics = {}
    for (t, p), o in offsets.items():
        topics.setdefault(t, []).append((p, o))
    w.array(sorted(topics.items()), lambda ww, t: ww.string(t[0]).array(
        t[1], lambda w2, po: w2.i32(po[0]).i64(po[1]).string("")))
    r = conn_call(conn, OFFSET_COMMIT, version, w.bytes())
    out = {}
    for t, parts in r.array(lambda rr: (rr.string(), rr.array(
            lambda r2: (r2.i32(), r2.i16())))):
        for p, e in parts:
            out[(t, p)] = e
    return out


def fetch_offsets(conn, group, topic, parts):
    w = Writer().string(group).array([topic], lambda ww, t: ww.string(t).array(
        parts, lambda w2, p: w2.i32(p)))
    r = conn_call(conn, OFFSET_FETCH, 2, w.bytes())
    out = {}
    for t, ps in r.array(lambda rr: (rr.string(), rr.array(
            lambda r2: (r2.i32(), r2.i64(), r2.string(nullable=True), r2.i16())))):
        for p, o, _, e in ps:
            out[p] = (o, e)
    return out


def list_groups(conn):
    r = conn_call(conn, LIST_GROUPS, 0, b"")
    r.i16()
    return [g for g, _ in r.array(lambda rr: (rr.string(), rr.string()))]


def conn_call(conn, key, version, body):
    c = conn.corr()
    conn.send(kwire.encode_request(key, version, c, body, conn.client_id), T(5))
    corr, r = kwire.decode_response_header(conn.recv_frame(T(10)), key, version)
    assert corr == c
    return r


def test_consumer_offsets_stays_small(samsa):
    over = dict(BASE, **{"offsets.topic.num.partitions": "1",
                         "log.roll.ms": "200"})
    srv = samsa.start(overrides=over)
    with srv.connect() as conn:
        r = conn.create_topic("t", 3, None, timeout=T(10))
        assert r["error_code"] == 0
        conn.wait_topic("t", 3, timeout=T(10))
        for i in range(3000):               # the same three offsets again
            assert simple_commit(conn, "busy", {("t", 0): i, ("t", 1): i + 1,
                                                ("t", 2): 7}) == \
                {("t", 0): 0, ("t", 1): 0, ("t", 2): 0}
        # the segment the last commits went to is the active one, which is
        # never cleaned: one more commit after log.roll.ms rolls it, so what
        # is left to clean does not depend on how fast the loop ran
        time.sleep(0.3)
        assert simple_commit(conn, "busy", {("t", 0): 2999, ("t", 1): 3000,
                                            ("t", 2): 7}) == \
            {("t", 0): 0, ("t", 1): 0, ("t", 2): 0}
        written = 3000 * 3 * 60             # at least ~60 bytes a record
        assert samsa_harness.wait_until(
            lambda: log_bytes(srv, "__consumer_offsets") < 64 * 1024, T(20),
            interval=0.2), "__consumer_offsets-0 holds %d bytes" % log_bytes(
                srv, "__consumer_offsets")
        assert log_bytes(srv, "__consumer_offsets") < written / 8
        assert fetch_offsets(conn, "busy", "t", [0, 1, 2]) == \
            {0: (2999, 0), 1: (3000, 0), 2: (7, 0)}
    assert srv.stop() == []
    srv2 = samsa.start(overrides={k: v for k, v in srv.overrides.items()
                                  if k != "listeners"}, workdir=srv.workdir)
    with srv2.connect() as conn:
        assert fetch_offsets(conn, "busy", "t", [0, 1, 2]) == \
            {0: (2999, 0), 1: (3000, 0), 2: (7, 0)}


def test_offsets_expire_with_retention(samsa):
    over = dict(BASE, **{"offsets.topic.num.partitions": "1",
                         "offsets.retention.check.interval.ms": "200"})
    srv = samsa.start(overrides=over)
    with srv.connect() as conn:
        r = conn.create_topic("t", 1, None, timeout=T(10))
        assert r["error_code"] == 0
        conn.wait_topic("t", 1, timeout=T(10))
        assert simple_commit(conn, "short", {("t", 0): 42},
                             retention_ms=1000) == {("t", 0): 0}
        assert simple_commit(conn, "long", {("t", 0): 43}) == {("t", 0): 0}
        assert fetch_offsets(conn, "short", "t", [0]) == {0: (42, 0)}
        assert "short" in list_groups(conn)
        assert samsa_harness.wait_until(
            lambda: fetch_offsets(conn, "short", "t", [0]) == {0: (-1, 0)},
            T(10), interval=0.1)
        assert samsa_harness.wait_until(
            lambda: "short" not in list_groups(conn), T(5), interval=0.1)
        assert fetch_offsets(conn, "long", "t", [0]) == {0: (43, 0)}
        # the offset and the group got tombstones (null values)
        batches, last = conn.fetch_all("__consumer_offsets", 0, 0, timeout=T(10))
        assert last["error_code"] == 0
        nulls = [rec for b in batches for rec in (b["records"] or [])
                 if rec["value"] is None]
        assert len(nulls) >= 2, nulls
        assert {struct_version(rec["key"]) for rec in nulls} >= {1, 2}


def struct_version(key):
    return int.from_bytes(key[:2], "big")
