"""What survives a restart and what retention removes.

- A clean restart keeps topics, topic ids, configs and every byte of data,
  and the log dir is in Kafka's layout (segment, index and checkpoint files).
- An unclean stop (SIGKILL) plus a torn tail and a lost index: the server
  recovers by itself, keeping every whole batch.
- retention.bytes and retention.ms (set with IncrementalAlterConfigs, so the
  altered config takes effect) delete whole old segments, by Kafka's rules;
  the log start offset moves to the first segment left.
- DeleteRecords moves the log start offset; fetches below it get
  OFFSET_OUT_OF_RANGE; the new start survives a restart.
"""

import itertools
import os
import signal
import struct
import time


import kwire
import samsa_harness
from samsa_harness import T

_names = itertools.count(1)
SEGMENT_BYTES = 1048576              # the smallest segment.bytes Kafka 4 allows
BIG = 262144                         # 4 batches of this much make more than a segment


def topic_name(prefix):
    return "%s-%d-%d" % (prefix, os.getpid() % 1000, next(_names))


def make_topic(conn, name, partitions=1, configs=None):
    r = conn.create_topic(name, partitions, configs, timeout=T(10))
    assert r["error_code"] == 0, "%s %s" % (kwire.error_name(r["error_code"]), r["error_message"])
    conn.wait_topic(name, partitions, timeout=T(10))
    return r["topic_id"]


def produce(conn, name, part, records, **kw):
    p = conn.produce(name, part, kwire.encode_batch(records, **kw), timeout=T(10))
    assert p["error_code"] == 0, kwire.error_name(p["error_code"])
    return p


def raw_log(conn, name, part, offset=0):
    batches, last = conn.fetch_all(name, part, offset, timeout=T(10))
    assert last["error_code"] == 0, kwire.error_name(last["error_code"])
    return batches


def read_checkpoint(path):
    with open(path) as f:
        lines = f.read().split("\n")
    assert lines[0] == "0", "%s: version line %r" % (path, lines[0])
    n = int(lines[1])
    entries = [ln.split() for ln in lines[2:2 + n]]
    assert all(len(e) in (2, 3) for e in entries), entries
    assert [ln for ln in lines[2 + n:] if ln.strip()] == [], "%s: extra lines" % path
    return entries


def segments(srv, name, part):
    """[(base offset, size)] of the partition's live .log files, oldest first."""
    d = os.path.join(srv.data_dir, "%s-%d" % (name, part))
    out = []
    for f in os.listdir(d):
        if f.endswith(".log") and len(f) == 24:
            out.append((int(f[:20]), os.path.getsize(os.path.join(d, f))))
    return sorted(out)


# -- restart ------------------------------------------------------------------

def check_index_files(d, log_bytes):
    """The .index (8-byte entries: relative offset, position of the batch whose
    last offset it is) and .timeindex (12-byte entries) of the first segment
    agree with the batches in log_bytes."""
    batches, tail = kwire.decode_batches(log_bytes, decode=False)
    assert tail == 0, "the .log ends with %d bytes of a partial batch" % tail
    by_pos = {}
    pos = 0
    for b in batches:
        by_pos[pos] = b
        pos += b["size"]
    with open(os.path.join(d, "00000000000000000000.index"), "rb") as f:
        idx = f.read()
    assert len(idx) % 8 == 0, ".index size %d is not a multiple of 8" % len(idx)
    used = -(-len(idx.rstrip(b"\0")) // 8) * 8        # preallocated slots are zeros
    entries = [struct.unpack(">ii", idx[i:i + 8]) for i in range(0, used, 8)]
    assert any(p > 0 for _, p in entries), \
        ".index has no entry past the first batch although index.interval.bytes=0: %s" % entries
    last = -1
    for rel, p in entries:
        assert p in by_pos, ".index entry (%d, %d) is not at a batch start" % (rel, p)
        b = by_pos[p]
        assert b["base_offset"] <= rel <= b["last_offset"], (rel, p, b["base_offset"])
        assert rel > last, ".index entries not increasing"
        last = rel
    with open(os.path.join(d, "00000000000000000000.timeindex"), "rb") as f:
        tix = f.read()
    assert len(tix) % 12 == 0, ".timeindex size %d is not a multiple of 12" % len(tix)
    last_ts = -1
    for i in range(0, -(-len(tix.rstrip(b"\0")) // 12) * 12, 12):
        ts, rel = struct.unpack(">qi", tix[i:i + 12])
        if (ts, rel) == (0, 0):
            continue
        assert ts >= last_ts, ".timeindex timestamps not increasing"
        last_ts = ts
        assert any(b["base_offset"] <= rel <= b["last_offset"] for b in batches), (ts, rel)


def test_restart_keeps_topics_ids_configs_and_data(samsa):
    srv = samsa.start()
    a, b = topic_name("keep-a"), topic_name("keep-b")
    with srv.connect(timeout=T(5)) as c:
        ida = make_topic(c, a, 2, {"retention.ms": "123456789", "max.message.bytes": "2000000",
                                  "index.interval.bytes": "0"})
        idb = make_topic(c, b, 1, {"message.timestamp.type": "LogAppendTime"})
        for i in range(6):
            produce(c, a, i % 2, [kwire.Record(b"a%d-%d" % (i, j), key=b"k%d" % j,
                                               headers=[("h", b"%d" % j)]) for j in range(3)])
        produce(c, b, 0, [kwire.Record(b"b")])
        before = {(t, p): [x["raw"] for x in raw_log(c, t, p)]
                  for t, p in ((a, 0), (a, 1), (b, 0))}
        md_before = {t: c.topic_metadata(t) for t in (a, b)}
        cfg_before = {t: {k: (e["value"], e["source"]) for k, e in c.topic_configs(t).items()}
                      for t in (a, b)}
    assert md_before[a]["topic_id"] == ida and md_before[b]["topic_id"] == idb
    data = srv.data_dir
    problems = srv.stop()
    assert problems == [], "clean stop failed: %s\n%s" % (problems, srv.stderr_tail())

    # Kafka's layout, as a clean shutdown leaves it (indexes trimmed)
    assert os.path.isfile(os.path.join(data, "meta.properties"))
    assert os.path.isdir(os.path.join(data, "__cluster_metadata-0"))
    rp = read_checkpoint(os.path.join(data, "recovery-point-offset-checkpoint"))
    ls = read_checkpoint(os.path.join(data, "log-start-offset-checkpoint"))
    rp = {(e[0], int(e[1])): int(e[2]) for e in rp}
    ls = {(e[0], int(e[1])): int(e[2]) for e in ls}
    for (t, p), raws in before.items():
        leo = sum(kwire.decode_batches(r, decode=False)[0][0]["records_count"] for r in raws)
        assert rp.get((t, p)) == leo, "recovery point of %s-%d: %s, LEO %d" % (
            t, p, rp.get((t, p)), leo)
        assert ls.get((t, p), 0) == 0
        d = os.path.join(data, "%s-%d" % (t, p))
        files = set(os.listdir(d))
        for f in ("00000000000000000000.log", "00000000000000000000.index",
                  "00000000000000000000.timeindex", "leader-epoch-checkpoint",
                  "partition.metadata"):
            assert f in files, "%s lacks %s: %s" % (d, f, sorted(files))
        with open(os.path.join(d, "00000000000000000000.log"), "rb") as f:
            log_bytes = f.read()
        assert log_bytes == b"".join(raws), "%s: .log is not the fetched batches back to back" % d
        with open(os.path.join(d, "partition.metadata")) as f:
            pm = f.read()
        tid = ida if t == a else idb
        assert pm.splitlines()[:2] == ["version: 0", "topic_id: %s" % kwire.uuid_str(tid)], pm
        epochs = read_checkpoint(os.path.join(d, "leader-epoch-checkpoint"))
        assert epochs and int(epochs[0][1]) == 0, "leader epochs %s" % epochs
        if t == a:
            check_index_files(d, log_bytes)

    srv2 = samsa.start(workdir=srv.workdir)
    with srv2.connect(timeout=T(5)) as c:
        for t in (a, b):
            md = c.wait_topic(t, timeout=T(10))
            assert md["topic_id"] == md_before[t]["topic_id"], "topic id of %s changed" % t
            assert sorted(p["partition_index"] for p in md["partitions"]) == \
                sorted(p["partition_index"] for p in md_before[t]["partitions"])
            cfg = {k: (e["value"], e["source"]) for k, e in c.topic_configs(t).items()}
            assert cfg == cfg_before[t], "configs of %s changed: %s" % (
                t, {k: (cfg_before[t].get(k), cfg.get(k)) for k in set(cfg) | set(cfg_before[t])
                    if cfg.get(k) != cfg_before[t].get(k)})
        for (t, p), raws in before.items():
            assert [x["raw"] for x in raw_log(c, t, p)] == raws, "data of %s-%d changed" % (t, p)
        # appends go on where they were
        q = produce(c, a, 0, [kwire.Record(b"after")])
        assert q["base_offset"] == 9
        t = c.create_topic(a, 1)
        assert t["error_code"] == kwire.ERR_TOPIC_ALREADY_EXISTS


def test_unclean_stop_torn_tail_and_lost_index_recovered(samsa):
    srv = samsa.start()
    name = topic_name("torn")
    with srv.connect(timeout=T(5)) as c:
        make_topic(c, name, 1, {"index.interval.bytes": "0"})
        for i in range(8):
            produce(c, name, 0, [kwire.Record(b"r%d-%d" % (i, j)) for j in range(2)])
        before = [x["raw"] for x in raw_log(c, name, 0)]
    d = os.path.join(srv.data_dir, "%s-0" % name)
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait(timeout=T(10))
    srv.stopped = True
    # a torn tail: half of one more batch, as if the write had been cut
    torn = kwire.encode_batch([kwire.Record(b"torn" * 50)], base_offset=16)
    with open(os.path.join(d, "00000000000000000000.log"), "ab") as f:
        f.write(torn[:len(torn) // 2])
    os.unlink(os.path.join(d, "00000000000000000000.index"))
    srv2 = samsa.start(workdir=srv.workdir)
    with srv2.connect(timeout=T(5)) as c:
        c.wait_topic(name, timeout=T(10))
        assert c.list_offsets(name, 0, kwire.TS_LATEST)["offset"] == 16
        assert [x["raw"] for x in raw_log(c, name, 0)] == before
        # lookups by offset in the middle use the rebuilt index
        f = c.fetch(name, 0, 9)
        assert f["batches"][0]["base_offset"] == 8
        q = produce(c, name, 0, [kwire.Record(b"next")])
        assert q["base_offset"] == 16
        assert [x["raw"] for x in raw_log(c, name, 0)][:8] == before
    with open(os.path.join(d, "00000000000000000000.log"), "rb") as f:
        data = f.read()
    batches, tail = kwire.decode_batches(data)
    assert tail == 0 and [b["base_offset"] for b in batches] == list(range(0, 18, 2))
    assert os.path.isfile(os.path.join(d, "00000000000000000000.index")), "index not rebuilt"


# -- retention ------------------------------------------------------------------

RETENTION_SERVER = {"log.retention.check.interval.ms": "200",
                    "log.segment.delete.delay.ms": "0"}


def fill_segments(conn, name, nbatches, ts=None):
    for i in range(nbatches):
        produce(conn, name, 0, [kwire.Record(bytes([i % 251]) * BIG,
                                             timestamp=None if ts is None else ts + i)])


def wait_log_start(conn, name, expected, timeout):
    ok = samsa_harness.wait_until(
        lambda: conn.list_offsets(name, 0, kwire.TS_EARLIEST)["offset"] == expected, timeout, 0.1)
    got = conn.list_offsets(name, 0, kwire.TS_EARLIEST)["offset"]
    assert ok, "log start offset %d, expected %d" % (got, expected)


def check_after_retention(srv, conn, name, segs_before, start, leo, raws_before):
    # whole segments went: the live ones are exactly those from `start` on
    def live():
        return [s for s in segments(srv, name, 0)]
    kept = [s for s in segs_before if s[0] >= start]
    assert samsa_harness.wait_until(lambda: live()[:len(kept)] == kept, T(5)), \
        "segments %s, expected %s to stay" % (live(), kept)
    d = os.path.join(srv.data_dir, "%s-0" % name)
    assert samsa_harness.wait_until(
        lambda: not [f for f in os.listdir(d) if f.endswith(".deleted")], T(10)), \
        "deleted segment files linger: %s" % sorted(os.listdir(d))
    assert conn.list_offsets(name, 0, kwire.TS_LATEST)["offset"] == leo
    f = conn.fetch(name, 0, 0)
    assert f["error_code"] == kwire.ERR_OFFSET_OUT_OF_RANGE, kwire.error_name(f["error_code"])
    f = conn.fetch(name, 0, start, version=12)
    assert f["error_code"] == 0 and f["log_start_offset"] == start
    got = [x["raw"] for x in raw_log(conn, name, 0, start)]
    assert got == raws_before[start:], "the batches from the new start changed"


def test_retention_bytes_deletes_whole_old_segments(samsa):
    srv = samsa.start(RETENTION_SERVER)
    name = topic_name("rbytes")
    with srv.connect(timeout=T(5)) as c:
        make_topic(c, name, 1, {"segment.bytes": str(SEGMENT_BYTES)})
        fill_segments(c, name, 14)
        raws = [x["raw"] for x in raw_log(c, name, 0)]
        segs = segments(srv, name, 0)
        assert len(segs) >= 4, "segment.bytes=%d but only segments %s" % (SEGMENT_BYTES, segs)
        assert all(s <= SEGMENT_BYTES for _, s in segs), segs
        total = sum(s for _, s in segs)
        time.sleep(0.5)   # a retention pass with retention.bytes=-1 deletes nothing
        assert c.list_offsets(name, 0, kwire.TS_EARLIEST)["offset"] == 0
        # Kafka's rule: delete the oldest while the rest stays >= retention.bytes;
        # this limit lets exactly the first two go.
        limit = total - segs[0][1] - segs[1][1]
        r = c.incremental_alter_configs([(kwire.RESOURCE_TOPIC, name,
                                          [("retention.bytes", kwire.OP_SET, str(limit))])])
        assert r[0]["error_code"] == 0
        wait_log_start(c, name, segs[2][0], T(10))
        check_after_retention(srv, c, name, segs, segs[2][0], 14, raws)
        time.sleep(0.5)   # and no more than that
        assert c.list_offsets(name, 0, kwire.TS_EARLIEST)["offset"] == segs[2][0]
        sizes = c.describe_log_dirs([(name, [0])])["results"][0]["topics"][0]["partitions"]
        assert sizes[0]["size"] == total - segs[0][1] - segs[1][1]


def test_retention_ms_deletes_whole_old_segments(samsa):
    srv = samsa.start(RETENTION_SERVER)
    name = topic_name("rms")
    now = int(time.time() * 1000)
    with srv.connect(timeout=T(5)) as c:
        make_topic(c, name, 1, {"segment.bytes": str(SEGMENT_BYTES), "retention.ms": "-1"})
        fill_segments(c, name, 7, ts=now - 3 * 86400 * 1000)   # three days old
        fill_segments(c, name, 7)                               # now
        raws = [x["raw"] for x in raw_log(c, name, 0)]
        segs = segments(srv, name, 0)
        assert len(segs) >= 4, segs
        # the first segment holding a recent batch (offset 7 on) stays, with all after it
        first_kept = max(base for base, _ in segs if base <= 7)
        assert first_kept > 0, segs
        r = c.incremental_alter_configs([(kwire.RESOURCE_TOPIC, name,
                                          [("retention.ms", kwire.OP_SET, str(86400 * 1000))])])
        assert r[0]["error_code"] == 0
        wait_log_start(c, name, first_kept, T(10))
        check_after_retention(srv, c, name, segs, first_kept, 14, raws)


def test_retention_ms_can_empty_the_log(samsa):
    srv = samsa.start(RETENTION_SERVER)
    name = topic_name("rall")
    old = int(time.time() * 1000) - 3 * 86400 * 1000
    with srv.connect(timeout=T(5)) as c:
        make_topic(c, name, 1, {"retention.ms": "86400000"})
        for i in range(3):
            produce(c, name, 0, [kwire.Record(b"old-%d" % i, timestamp=old + i)])
        # even the active segment goes (rolled first); the log keeps its end
        wait_log_start(c, name, 3, T(10))
        assert c.list_offsets(name, 0, kwire.TS_LATEST)["offset"] == 3
        assert produce(c, name, 0, [kwire.Record(b"new")])["base_offset"] == 3
        assert [r["value"] for r in kwire.records_of(raw_log(c, name, 0, 3))] == [b"new"]


# -- DeleteRecords -----------------------------------------------------------------

def test_delete_records_moves_the_log_start(samsa):
    srv = samsa.start()
    name = topic_name("delrec")
    with srv.connect(timeout=T(5)) as c:
        make_topic(c, name, 2)
        for i in range(10):
            produce(c, name, 0, [kwire.Record(b"%d" % i)])
        expect = 0
        for v, off, low in ((0, 3, 3), (1, 2, 3), (2, 6, 6)):
            p = c.delete_records(name, 0, off, version=v)
            assert (p["error_code"], p["low_watermark"]) == (0, low), (v, off, p)
            expect = low
            assert c.list_offsets(name, 0, kwire.TS_EARLIEST)["offset"] == expect
            f = c.fetch(name, 0, expect - 1)
            assert f["error_code"] == kwire.ERR_OFFSET_OUT_OF_RANGE, \
                "fetch below the log start: %s" % kwire.error_name(f["error_code"])
            f = c.fetch(name, 0, expect, version=12)
            assert f["error_code"] == 0 and f["log_start_offset"] == expect
            assert f["batches"][0]["base_offset"] == expect
        q = produce(c, name, 0, [kwire.Record(b"x")])
        assert q["log_start_offset"] == 6, "Produce v9 LogStartOffset %d" % q["log_start_offset"]
        p = c.delete_records(name, 0, 12)
        assert p["error_code"] == kwire.ERR_OFFSET_OUT_OF_RANGE, kwire.error_name(p["error_code"])
        p = c.delete_records(name, 0, -1)            # -1: up to the high watermark
        assert (p["error_code"], p["low_watermark"]) == (0, 11), p
        p = c.delete_records(name, 5, 0)
        assert p["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION
        p = c.delete_records("no-such-" + name, 0, 0)
        assert p["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION
        assert c.list_offsets(name, 1, kwire.TS_EARLIEST)["offset"] == 0, "other partition moved"
    srv2 = samsa.restart(srv)
    with srv2.connect(timeout=T(5)) as c:
        c.wait_topic(name, timeout=T(10))
        assert c.list_offsets(name, 0, kwire.TS_EARLIEST)["offset"] == 11, \
            "log start offset lost in the restart"
        assert c.fetch(name, 0, 10)["error_code"] == kwire.ERR_OFFSET_OUT_OF_RANGE
        assert produce(c, name, 0, [kwire.Record(b"y")])["base_offset"] == 11
