"""Disk faults: a full log device and a read-only one.

The partition data lives on a small tmpfs mounted for the test (the
metadata log stays on the normal disk through metadata.log.dir, as an
operator would place it), so the device can be filled, grown back and made
read-only without touching the rest of the machine.

- Full device: produces are answered KAFKA_STORAGE_ERROR (never a crash,
  never a half-written batch); every acknowledged record reads back; when
  space returns (the tmpfs is grown) the same partition takes appends again
  without a restart; after a restart recovery finds every segment whole.
- Read-only device: produces get KAFKA_STORAGE_ERROR, the server keeps
  answering other requests; after the device is writable again and the
  server restarted, everything acknowledged is there.

Mounting needs CAP_SYS_ADMIN (CI runs as root); without it the tests are
skipped with that reason.
"""

import os
import subprocess

import pytest

import kwire
from samsa_harness import T

TOPIC = "diskfull"
KAFKA_STORAGE_ERROR = 56


def _mount(path, opts):
    return subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", path],
                          capture_output=True, text=True)


def _remount(path, opts):
    r = subprocess.run(["mount", "-o", "remount," + opts, path],
                       capture_output=True, text=True)
    assert r.returncode == 0, "remount %s %s: %s" % (path, opts, r.stderr)


@pytest.fixture
def tmpfs(tmp_path):
    path = str(tmp_path / "logdev")
    os.makedirs(path)
    r = _mount(path, "size=4m,mode=0755")
    if r.returncode != 0:
        pytest.skip("cannot mount a tmpfs (needs root/CAP_SYS_ADMIN): %s"
                    % r.stderr.strip())
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", path], capture_output=True)


def _start(samsa, tmpfs, workdir=None):
    return samsa.start(overrides={
        "log.dirs": os.path.join(tmpfs, "data"),
        "metadata.log.dir": os.path.join(workdir or samsa.new_dir(), "meta"),
    }, workdir=workdir)


def _batch(seq, size=4000):
    val = (b"%08d:" % seq) + b"x" * (size - 9)
    return kwire.encode_batch([kwire.Record(val, key=b"k%d" % seq)])


def _fill(c, acked, limit=2000):
    """Produces single-record batches until the device is full; returns
    the error code that stopped it.  acked: seq -> offset."""
    for _ in range(limit):
        seq = len(acked)
        p = c.produce(TOPIC, 0, _batch(seq), timeout=T(10))
        if p["error_code"] != 0:
            return p["error_code"]
        acked[seq] = p["base_offset"]
    raise AssertionError("the 4 MiB device never filled after %d records" % limit)


def _read_back(c, acked):
    batches, last = c.fetch_all(TOPIC, 0, 0, timeout=T(30))
    assert last["error_code"] == 0, kwire.error_name(last["error_code"])
    assert all(b["crc_ok"] for b in batches), "a stored batch fails its CRC"
    recs = kwire.records_of(batches)
    got = {int(r["value"][:8]): r["offset"] for r in recs}
    missing = [s for s in acked if got.get(s) != acked[s]]
    assert not missing, "acknowledged records lost or moved: %s" % missing[:10]
    assert [r["offset"] for r in recs] == list(range(len(recs))), "offsets not dense"
    return len(recs)


def test_disk_full_refuses_then_resumes(samsa, tmpfs):
    workdir = samsa.new_dir()
    srv = _start(samsa, tmpfs, workdir)
    acked = {}
    with srv.connect(timeout=T(5)) as c:
        # small segments: the device fills across several rolls
        r = c.create_topic(TOPIC, 1, {"segment.bytes": str(1024 * 1024)},
                           timeout=T(10))
        assert r["error_code"] == 0, kwire.error_name(r["error_code"])
        c.wait_topic(TOPIC, 1, timeout=T(10))
        err = _fill(c, acked)
        assert err == KAFKA_STORAGE_ERROR, kwire.error_name(err)
        assert len(acked) > 100, "only %d records fitted" % len(acked)
        # still full: refused again, and the server keeps serving reads
        p = c.produce(TOPIC, 0, _batch(999999), timeout=T(10))
        assert p["error_code"] == KAFKA_STORAGE_ERROR
        n = _read_back(c, acked)
        assert n == len(acked), "%d records in the log, %d acknowledged" % (n, len(acked))
        c.api_versions()

        # space returns: the same partition takes appends without a restart
        _remount(tmpfs, "size=16m")
        for seq in range(500000, 500050):
            p = c.produce(TOPIC, 0, _batch(seq), timeout=T(10))
            assert p["error_code"] == 0, "after space returned: %s" % kwire.error_name(p["error_code"])
            acked[seq] = p["base_offset"]
        _read_back(c, acked)
    assert srv.alive(), srv.describe()

    # a restart finds every segment whole: nothing to truncate
    srv.stop()
    srv = _start(samsa, tmpfs, workdir)
    with srv.connect(timeout=T(5)) as c:
        c.wait_topic(TOPIC, 1, timeout=T(10))
        assert _read_back(c, acked) == len(acked)
    assert "truncat" not in srv.stderr_text().lower(), srv.stderr_tail()


def test_read_only_device(samsa, tmpfs):
    """Linux refuses to remount a device read-only while files on it are
    open for writing, so the device turns read-only between two runs:
    the server must then refuse to start, naming the directory, rather
    than run with logs it cannot append to; once the device is writable
    again everything acknowledged is there."""
    workdir = samsa.new_dir()
    srv = _start(samsa, tmpfs, workdir)
    acked = {}
    with srv.connect(timeout=T(5)) as c:
        r = c.create_topic(TOPIC, 1, timeout=T(10))
        assert r["error_code"] == 0, kwire.error_name(r["error_code"])
        c.wait_topic(TOPIC, 1, timeout=T(10))
        for seq in range(50):
            p = c.produce(TOPIC, 0, _batch(seq, 500), timeout=T(10))
            assert p["error_code"] == 0, kwire.error_name(p["error_code"])
            acked[seq] = p["base_offset"]
    srv.stop()
    _remount(tmpfs, "ro")
    rc, err, _ = samsa.run_to_exit(overrides={
        "log.dirs": os.path.join(tmpfs, "data"),
        "metadata.log.dir": os.path.join(workdir, "meta"),
    }, timeout=T(20))
    assert rc is not None and rc != 0, "ran on a read-only log dir (rc %s)" % rc
    assert os.path.join(tmpfs, "data") in err, err[-2000:]
    assert "read-only" in err.lower(), err[-2000:]
    _remount(tmpfs, "rw")
    srv = _start(samsa, tmpfs, workdir)
    with srv.connect(timeout=T(5)) as c:
        c.wait_topic(TOPIC, 1, timeout=T(10))
        assert _read_back(c, acked) == len(acked)
        p = c.produce(TOPIC, 0, _batch(51, 500), timeout=T(10))
        assert p["error_code"] == 0, kwire.error_name(p["error_code"])
