"""Raw-protocol helpers for the transaction tests (test_txn.py,
test_txn_protocol.py): the coordinator's requests, OffsetFetch v7, and a
summary of a partition's log (data batches and commit/abort markers) read
with a raw read_uncommitted Fetch."""

import time

import kwire
from kwire import Writer
from samsa_harness import T

OVERRIDES = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "200",
             "group.initial.rebalance.delay.ms": "0"}

FIND_COORDINATOR, INIT_PID, ADD_PARTITIONS, ADD_OFFSETS = 10, 22, 24, 25
END_TXN, TXN_OFFSET_COMMIT, OFFSET_FETCH = 26, 28, 9
DESCRIBE_TXNS, LIST_TXNS = 65, 66
kwire.FLEXIBLE_FROM.update({OFFSET_FETCH: 6, FIND_COORDINATOR: 3, INIT_PID: 2,
                            ADD_PARTITIONS: 3, ADD_OFFSETS: 3, END_TXN: 3,
                            TXN_OFFSET_COMMIT: 3, DESCRIBE_TXNS: 0,
                            LIST_TXNS: 0})
E = {"NONE": 0, "UNKNOWN_TOPIC_OR_PARTITION": 3, "INVALID_REQUEST": 42,
     "INVALID_PRODUCER_EPOCH": 47, "INVALID_TXN_STATE": 48,
     "INVALID_PRODUCER_ID_MAPPING": 49, "INVALID_TRANSACTION_TIMEOUT": 50,
     "CONCURRENT_TRANSACTIONS": 51, "OPERATION_NOT_ATTEMPTED": 55,
     "UNSTABLE_OFFSET_COMMIT": 88, "PRODUCER_FENCED": 90,
     "TRANSACTIONAL_ID_NOT_FOUND": 105}


# -- raw protocol --------------------------------------------------------------

def call(conn, key, version, body):
    return conn.request_raw(key, version, body, T(10))


def find_coordinator(conn, key, key_type=1, version=1):
    w = Writer().string(key).i8(key_type)
    r = call(conn, FIND_COORDINATOR, version, w.bytes())
    r.i32()
    err = r.i16()
    r.string(nullable=True)
    return err, r.i32(), r.string(), r.i32()


def init_pid(conn, txn_id, timeout_ms=60000, version=1):
    r = call(conn, INIT_PID, version,
             Writer().string(txn_id).i32(timeout_ms).bytes())
    r.i32()
    return r.i16(), r.i64(), r.i16()


def init_pid_kip360(conn, txn_id, pid, epoch, version=4):
    """InitProducerId v3+ (flexible) with the producer's id and epoch."""
    w = Writer().string(txn_id, flexible=True).i32(60000).i64(pid).i16(epoch)
    r = call(conn, INIT_PID, version, w.tags().bytes())
    r.i32()
    return r.i16(), r.i64(), r.i16()


def add_partitions(conn, txn_id, pid, epoch, topics, version=1):
    w = Writer().string(txn_id).i64(pid).i16(epoch)
    w.array(sorted(topics.items()), lambda ww, t: ww.string(t[0]).array(
        t[1], lambda w2, p: w2.i32(p)))
    r = call(conn, ADD_PARTITIONS, version, w.bytes())
    r.i32()
    out = {}
    for name, parts in r.array(lambda rr: (rr.string(), rr.array(
            lambda r2: (r2.i32(), r2.i16())))):
        for p, err in parts:
            out[(name, p)] = err
    return out


def end_txn(conn, txn_id, pid, epoch, commit, version=1):
    r = call(conn, END_TXN, version, Writer().string(txn_id).i64(pid).i16(epoch)
             .boolean(commit).bytes())
    r.i32()
    return r.i16()


def describe_txns(conn, ids):
    w = Writer().array(ids, lambda ww, s: ww.string(s, flexible=True),
                       flexible=True).tags()
    r = call(conn, DESCRIBE_TXNS, 0, w.bytes())
    r.i32()

    def topic(rr):
        t = (rr.string(flexible=True), rr.array(lambda r2: r2.i32(), flexible=True))
        rr.tags()
        return t

    def state(rr):
        s = {"error": rr.i16(), "id": rr.string(flexible=True),
             "state": rr.string(flexible=True), "timeout_ms": rr.i32(),
             "start_ms": rr.i64(), "pid": rr.i64(), "epoch": rr.i16(),
             "topics": dict(rr.array(topic, flexible=True))}
        rr.tags()
        return s
    return r.array(state, flexible=True)


def list_txns(conn, states=(), pids=()):
    w = Writer().array(list(states), lambda ww, s: ww.string(s, flexible=True),
                       flexible=True)
    w.array(list(pids), lambda ww, p: ww.i64(p), flexible=True).tags()
    r = call(conn, LIST_TXNS, 0, w.bytes())
    r.i32()
    err = r.i16()
    unknown = r.array(lambda rr: rr.string(flexible=True), flexible=True)

    def one(rr):
        t = (rr.string(flexible=True), rr.i64(), rr.string(flexible=True))
        rr.tags()
        return t
    return err, unknown, r.array(one, flexible=True)


def offset_fetch(conn, group, topics, require_stable=False):
    """{(topic, partition): (offset, error)} by OffsetFetch v7 (flexible)."""
    f = True

    def topic_w(ww, t):
        ww.string(t[0], flexible=f).array(t[1], lambda w2, p: w2.i32(p),
                                          flexible=f).tags()
    w = Writer().string(group, flexible=f)
    w.array(sorted(topics.items()), topic_w, flexible=f)
    w.boolean(require_stable).tags()
    r = call(conn, OFFSET_FETCH, 7, w.bytes())
    r.i32()
    out = {}

    def part(rr):
        p, o = rr.i32(), rr.i64()
        rr.i32()                                # leader epoch
        rr.string(flexible=f, nullable=True)
        err = rr.i16()
        rr.tags()
        return p, o, err

    def topic_r(rr):
        t = (rr.string(flexible=f), rr.array(part, flexible=f))
        rr.tags()
        return t
    for name, parts in r.array(topic_r, flexible=f):
        for p, o, err in parts:
            out[(name, p)] = (o, err)
    return out


def marker_type(batch):
    """0 abort, 1 commit (the control record's key)."""
    rec = batch["records"][0]
    assert len(rec["key"]) == 4 and rec["key"][:2] == b"\x00\x00"
    assert rec["value"][:2] == b"\x00\x00" and len(rec["value"]) == 6
    return int.from_bytes(rec["key"][2:4], "big")


def log_of(conn, topic, partition):
    """Every batch of a partition (read_uncommitted)."""
    batches, last = conn.fetch_all(topic, partition, 0, timeout=T(10))
    assert last["error_code"] == 0, kwire.error_name(last["error_code"])
    assert all(b["crc_ok"] for b in batches)
    return batches


def summary(batches):
    """[('data', values, pid, epoch) | ('commit'|'abort', pid, epoch)]."""
    out = []
    for b in batches:
        if b["control"]:
            assert b["transactional"] and b["base_sequence"] == -1
            assert b["records_count"] == 1
            out.append(("commit" if marker_type(b) else "abort",
                        b["producer_id"], b["producer_epoch"]))
        else:
            out.append(("data", [r["value"] for r in b["records"]],
                        b["producer_id"], b["producer_epoch"]))
    return out


def wait_for(what, fn, timeout):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError("timed out waiting for %s (last: %r)" % (what, last))


def create_topic(conn, name, parts):
    r = conn.create_topic(name, parts, timeout=T(10))
    assert r["error_code"] == 0, kwire.error_name(r["error_code"])
    conn.wait_topic(name, parts, timeout=T(10))


