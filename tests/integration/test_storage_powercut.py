"""Power-cut test: with flush.messages=1 an acknowledged record is on the
disk, not only in the page cache.

test_storage_crash and test_fault_points kill the server with SIGKILL, which
keeps the page cache: they prove "written before the answer". Here
samsa-server runs with powercut_shim.c preloaded, which records what each
fsync/fdatasync under the data directory made durable; after the SIGKILL,
powercut.rollback() puts the data directory back to only that (files to
their last synced content, directories to the entries of their last fsync),
as a power cut would leave it, and the server is started on it again.

- test_shim_keeps_only_synced_data: the model itself, on a small Python
  child (write without a sync: gone; fdatasync: kept; a new name without
  the directory's fsync: gone; rename + directory fsync: kept).
- test_flush1_survives_power_cuts: a topic with flush.messages=1 and a short
  segment.ms (rolls, so new segment files and directory fsyncs), records
  produced one by one with acks=-1 or 1 (drawn per round), the power cut at a
  random moment, ROUNDS times: after each restart every acknowledged record
  is there once, at its acknowledged offset, in order.
- test_default_policy_loses_only_a_suffix: the same without flush.messages
  (Kafka's default: the OS decides; in this model it never writes back):
  the server recovers cleanly and what survives is a prefix of what was
  acknowledged; the loss is printed (-s), not asserted, since a roll's
  flush can make every acknowledged record durable just before the cut.
  A cut can also keep a roll's new segment file while its predecessor's
  unsynced tail is lost (a flush started before the roll fsyncs the
  directory after it): the log then ends in a gap, as Kafka's recovery
  leaves it, and read_log allows exactly that.
- test_roll_gap_reads_on: that state made by hand: the gap is fetched
  without error, no offset is given twice, a consumer in it reads on.

SAMSA_POWERCUT_SEED=<n> replays a run (the seed is printed on failure).
"""

import os
import random
import signal
import subprocess
import sys
import threading
import time

import kwire
import powercut
from samsa_harness import T, server_binary

ROUNDS = 4
TOPIC = "powercut"
ROLL = {"segment.ms": "150"}    # several rolls a round: new segment files, directory fsyncs


def seed():
    return int(os.environ.get("SAMSA_POWERCUT_SEED") or time.time_ns() % 1000000)


# -- the shim alone -------------------------------------------------------------

CHILD = r"""
import os, signal, sys
r = sys.argv[1]
def w(name, data, sync=False, mode="wb"):
    with open(os.path.join(r, name), mode) as f:
        f.write(data)
        f.flush()
        if sync:
            os.fdatasync(f.fileno())
def fsync_dir(p):
    fd = os.open(p, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(fd)
    os.close(fd)
w("unsynced", b"lost")
w("synced", b"kept", sync=True)
w("ckpt.tmp", b"renamed", sync=True)
os.rename(os.path.join(r, "ckpt.tmp"), os.path.join(r, "ckpt"))
w("old-overwritten", b"new", mode="r+b")
w("old-appended", b"+new", sync=True, mode="ab")
os.mkdir(os.path.join(r, "sub"))
w("sub/x", b"x", sync=True)
fsync_dir(os.path.join(r, "sub"))
fsync_dir(r)
w("no-entry", b"synced, but the directory was not", sync=True)
os.truncate(os.path.join(r, "old-truncated"), 5)
w("synced", b"+unsynced", mode="ab")
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_shim_keeps_only_synced_data(tmp_path):
    root, shadow = tmp_path / "root", tmp_path / "shadow"
    root.mkdir()
    for name, data in (("old-overwritten", b"old"), ("old-appended", b"old"),
                       ("old-truncated", b"0123456789")):
        (root / name).write_bytes(data)
    powercut.baseline(str(root), str(shadow))
    env = dict(os.environ)
    env.update(powercut.env(str(root), str(shadow), server_binary()))
    # a plain Python child: no sanitizer runtime before the shim
    env["LD_PRELOAD"] = powercut.shim_path(server_binary())
    p = subprocess.run([sys.executable, "-c", CHILD, str(root)], env=env,
                       capture_output=True, text=True, timeout=T(30))
    assert p.returncode == -signal.SIGKILL, p.stderr
    # before the cut everything is there, as the page cache has it
    assert (root / "unsynced").read_bytes() == b"lost"
    assert (root / "no-entry").exists()
    powercut.rollback(str(root), str(shadow))
    got = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                got[os.path.relpath(path, root)] = f.read()
    assert got == {
        "unsynced": b"",                # its name was fsynced, its data never
        "synced": b"kept",              # the append after the sync is gone
        "ckpt": b"renamed",             # synced as ckpt.tmp, renamed, dir fsynced
        "old-overwritten": b"old",
        "old-appended": b"old+new",
        "old-truncated": b"0123456789",
        os.path.join("sub", "x"): b"x",
    }, got


# -- samsa-server under the shim ----------------------------------------------------

class Cut:
    """One server life under the shim, ended by a power cut."""

    def __init__(self, samsa, workdir, first):
        self.samsa = samsa
        self.workdir = workdir
        self.data = os.path.join(workdir, "samsa-data")
        self.shadow = os.path.join(workdir, "shadow")
        if first:
            os.makedirs(self.data)
        powercut.baseline(self.data, self.shadow)
        self.srv = samsa.start(workdir=workdir,
                               env=powercut.env(self.data, self.shadow, server_binary()))

    def cut(self):
        self.srv.proc.send_signal(signal.SIGKILL)
        self.srv.proc.wait(timeout=T(10))
        self.srv.stopped = True         # killed on purpose
        return powercut.rollback(self.data, self.shadow)


def read_log(srv, context, files, gaps):
    """[(offset, seq)] of the partition, checking that it reads cleanly.

    A power cut may leave a roll's new, empty segment whose predecessor
    lost its unsynced tail: the log then ends in a gap, from the last record
    to the new segment's base, as Kafka's recovery leaves it (the offsets
    in it are never given again). That is allowed only there: the high
    watermark is the base of an empty segment, a fetch in the gap is
    answered without error, and later rounds read on past it. gaps holds
    (end, high watermark) of the earlier rounds' gaps; a new one is added."""
    with srv.connect(timeout=T(5)) as c:
        try:
            c.wait_topic(TOPIC, 1, timeout=T(10))
        except kwire.ProtocolError as e:
            raise AssertionError("topic %s gone after a power cut, though CreateTopics "
                                 "was answered: %s\n%s" % (TOPIC, e, context)) from None
        batches, last = c.fetch_all(TOPIC, 0, 0, timeout=T(30))
        assert last["error_code"] == 0, kwire.error_name(last["error_code"])
        assert all(b["crc_ok"] for b in batches), "a stored batch fails its CRC"
        records = kwire.records_of(batches)
        hw = last["high_watermark"]
        expected = 0
        for x in records:
            o = x["offset"]
            assert o == expected or any(e == expected and o >= h for e, h in gaps), \
                "offset %d follows %d, and no power cut left a gap there (gaps %s)\n%s" % (
                    o, expected - 1, gaps, context)
            expected = o + 1
        if expected != hw:
            empty = ["%s/%020d.log" % (TOPIC + "-0", hw)]
            assert expected < hw and [p for p, n in files if p in empty and n == 0], \
                "high watermark %d after the power cut, but the records read end at %d, " \
                "and %s is not an empty segment\n%s" % (hw, expected, empty, context)
            p = c.fetch(TOPIC, 0, expected, max_wait_ms=0, timeout=T(5))
            assert (p["error_code"], p["batches"]) == (0, []), (p["error_code"], context)
            gaps.append((expected, hw))
    return [(x["offset"], int(x["value"])) for x in records]


def produce_until_cut(cut, rng, seq, acked, log):
    """Produces seq, seq+1, ... one at a time, each acknowledged before the
    next; a timer cuts the power at a random moment. Returns the next seq
    and the seq that was in flight at the cut (or None)."""
    when = rng.uniform(0.3, 1.5) * (3 if os.environ.get("SAMSA_SANITIZE") else 1)
    acks = rng.choice((-1, 1))
    files = []
    timer = threading.Timer(when, lambda: files.append(cut.cut()))
    in_flight = None
    n0 = len(acked)
    with cut.srv.connect(timeout=T(5)) as c:
        timer.start()
        try:
            while True:
                in_flight = seq
                r = c.produce(TOPIC, 0, kwire.encode_batch([kwire.Record(b"%d" % seq, key=b"k")]),
                              acks=acks, timeout=T(10))
                assert r["error_code"] == 0, kwire.error_name(r["error_code"])
                acked.append((r["base_offset"], seq))
                in_flight = None
                seq += 1
        except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout):
            pass                        # the cut closed the connection
        except Exception as e:          # noqa: BLE001 - only a closed socket
            if cut.srv.alive():
                raise
            log.append("round %d: produce ended with %r" % (len(log), e))
    timer.join()
    if in_flight is not None and in_flight >= seq:
        seq = in_flight + 1
    assert files, "the timer did not cut the power"
    segs = [(p, n) for p, n in files[0] if p.startswith(TOPIC) and p.endswith(".log")]
    log.append("round %d: acks=%d, cut %.2f s in, %d acknowledged; after the cut "
               "%d segments, the last three %s" % (len(log), acks, when, len(acked) - n0,
                                             len(segs), segs[-3:]))
    return seq, in_flight, files[0]


def create_topic(srv, configs):
    with srv.connect(timeout=T(5)) as c:
        r = c.create_topic(TOPIC, 1, configs, timeout=T(10))
        assert r["error_code"] == 0, kwire.error_name(r["error_code"])
        c.wait_topic(TOPIC, 1, timeout=T(10))


def run_rounds(samsa, configs, check):
    seed_value = seed()
    rng = random.Random(seed_value)
    workdir = samsa.new_dir()
    log = ["seed %d" % seed_value]
    cut = Cut(samsa, workdir, first=True)
    create_topic(cut.srv, configs)
    acked = []                          # [(offset, seq)] acknowledged, all rounds
    seq = 0
    survivors = []
    gaps = []
    for _ in range(ROUNDS):
        seq, in_flight, files = produce_until_cut(cut, rng, seq, acked, log)
        cut = Cut(samsa, workdir, first=False)
        now = read_log(cut.srv, "\n".join(log), files, gaps)
        check(survivors, acked, in_flight, now, "\n".join(log))
        survivors = now
        in_log = set(now)
        acked = [a for a in acked if a in in_log]
    return log


def test_flush1_survives_power_cuts(samsa):
    def check(before, acked, in_flight, now, context):
        seqs = [s for _, s in now]
        assert len(set(seqs)) == len(seqs), "duplicates: %s\n%s" % (now, context)
        in_log = set(now)
        missing = [a for a in acked if a not in in_log]
        assert not missing, "%d acknowledged records lost or moved after a power cut " \
            "(offset, seq), e.g. %s; the log holds %d records, ends %s\n%s" % (
                len(missing), missing[:5], len(now), now[-3:], context)
        known = set(acked) | set(before)
        extra = [r for r in now if r not in known]
        assert all(s == in_flight for _, s in extra), \
            "records never acknowledged nor in flight: %s\n%s" % (extra, context)

    log = run_rounds(samsa, dict(ROLL, **{"flush.messages": "1"}),
                     check)
    print("\n".join(log))


def test_default_policy_loses_only_a_suffix(samsa):
    lost = []

    def check(before, acked, in_flight, now, context):
        promised = sorted(set(before) | set(acked))
        n = len(now)
        assert now[:len(promised)] == promised[:n], \
            "what survived the power cut is not a prefix of what was acknowledged:" \
            "\n now %s\n acknowledged %s\n%s" % (now[-5:], promised[-5:], context)
        assert all(s == in_flight for _, s in now[len(promised):]), \
            "records never acknowledged nor in flight: %s\n%s" % (now[len(promised):], context)
        assert before == now[:len(before)], "a power cut took records from before the round"
        lost.append((len(promised) - min(n, len(promised)), len(promised) - len(before)))

    log = run_rounds(samsa, ROLL, check)
    log.append("default policy: lost/acknowledged per round: %s" % (
        ", ".join("%d/%d" % x for x in lost)))
    print("\n".join(log))


def test_roll_gap_reads_on(samsa):
    """The state a power cut leaves after a roll, made by hand: the last two
    segments lose their unsynced data (the new one was created, its
    predecessor never synced). The log ends in a gap at the new segment's
    base; a fetch there is answered; the next record takes the next offset
    (none is given twice) and a consumer in the gap reads it."""
    srv = samsa.start()
    workdir = srv.workdir
    with srv.connect(timeout=T(5)) as c:
        r = c.create_topic(TOPIC, 1, {"segment.ms": "100"}, timeout=T(10))
        assert r["error_code"] == 0, kwire.error_name(r["error_code"])
        c.wait_topic(TOPIC, 1, timeout=T(10))
        for seq in range(20):
            if seq % 5 == 0:
                time.sleep(0.25)        # the next append rolls (segment.ms)
            r = c.produce(TOPIC, 0, kwire.encode_batch([kwire.Record(b"%d" % seq, key=b"k")]),
                          acks=1, timeout=T(10))
            assert r["error_code"] == 0, kwire.error_name(r["error_code"])
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait(timeout=T(10))
    srv.stopped = True
    pdir = os.path.join(workdir, "samsa-data", TOPIC + "-0")
    bases = sorted(int(n[:-4]) for n in os.listdir(pdir) if n.endswith(".log"))
    assert len(bases) >= 3, bases
    for b in bases[-2:]:
        os.truncate(os.path.join(pdir, "%020d.log" % b), 0)
    gap, end = bases[-2], bases[-1]

    srv = samsa.start(workdir=workdir)
    with srv.connect(timeout=T(5)) as c:
        c.wait_topic(TOPIC, 1, timeout=T(10))
        batches, last = c.fetch_all(TOPIC, 0, 0, timeout=T(30))
        assert (last["error_code"], last["high_watermark"]) == (0, end), last
        assert [x["offset"] for x in kwire.records_of(batches)] == list(range(gap))
        p = c.fetch(TOPIC, 0, gap, max_wait_ms=0, timeout=T(5))
        assert (p["error_code"], p["batches"]) == (0, []), p
        r = c.produce(TOPIC, 0, kwire.encode_batch([kwire.Record(b"after", key=b"k")]),
                      acks=-1, timeout=T(10))
        assert (r["error_code"], r["base_offset"]) == (0, end), r
        p = c.fetch(TOPIC, 0, gap, max_wait_ms=0, timeout=T(5))
        assert p["error_code"] == 0, p
        assert [(x["offset"], x["value"]) for x in kwire.records_of(p["batches"])] == \
            [(end, b"after")], p
