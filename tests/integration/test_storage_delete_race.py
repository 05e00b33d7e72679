"""DeleteRecords racing readers under a tiny descriptor budget (the kadm
crash): DeleteRecords up to the high watermark (the active segment rolls:
every produce makes a new segment), a
log.open.files.max of 4 (SAMSA_LOG_OPEN_FILES_MAX: every segment touched
evicts another), and DeleteRecords moving the log start (segments renamed
to .deleted and dropped from the list) while other connections Fetch from
the log start and ListOffsets (earliest, latest, max timestamp, by time)
on the same partition.  A segment freed while the descriptor cache still
links or pins it, or while a reader uses it, is a sanitizer report or a
crash; the harness fails the test on either.  Bounded: ~10 s of racing.
"""

import os
import threading
import time

import kwire
from samsa_harness import T
from test_storage_fds import metrics

ROUNDS_S = 10.0
TOPIC = "delrace-%d" % (os.getpid() % 1000)


def test_delete_records_races_fetch_and_list_offsets(samsa):
    srv = samsa.start({"log.open.files.max": "4"},
                      env={"SAMSA_LOG_OPEN_FILES_MAX": "4"})
    with srv.connect(timeout=T(30)) as c:
        r = c.create_topic(TOPIC, 2, {"segment.bytes": str(1 << 20)},
                           timeout=T(30))
        assert r["error_code"] == 0, r
    stop = threading.Event()
    errors = []
    counts = {"produced": 0, "deleted": 0, "fetched": 0, "listed": 0}

    def writer(part):
        try:
            with srv.connect(timeout=T(30)) as w:
                n = 0
                while not stop.is_set():
                    vals = [(b"v%06d-" % (n + i)) * 40 for i in range(3)]
                    p = w.produce(TOPIC, part, kwire.encode_batch(
                        [kwire.Record(v) for v in vals]), timeout=T(20))
                    assert p["error_code"] == 0, kwire.error_name(p["error_code"])
                    n += 3
                    counts["produced"] += 3
                    # to the high watermark: the active segment rolls and
                    # every older one goes; else one batch stays
                    d = w.delete_records(TOPIC, part, -1 if n % 2 else n - 3,
                                         timeout=T(20))
                    assert d["error_code"] == 0, kwire.error_name(d["error_code"])
                    counts["deleted"] += 1
        except Exception as e:          # noqa: BLE001 - reported below
            errors.append("writer %d: %r" % (part, e))
            stop.set()

    def reader(part):
        try:
            with srv.connect(timeout=T(30)) as rd:
                while not stop.is_set():
                    lo = rd.list_offsets(TOPIC, part, -2, timeout=T(20))
                    for ts in (-1, -3, 0):
                        rd.list_offsets(TOPIC, part, ts, timeout=T(20))
                    counts["listed"] += 4
                    for off in (lo["offset"], lo["offset"] + 1, 0):
                        f = rd.fetch(TOPIC, part, max(off, 0), timeout=T(20),
                                     partition_max_bytes=512)
                        # OFFSET_OUT_OF_RANGE is fine: the start moved
                        assert f["error_code"] in (0, 1), kwire.error_name(f["error_code"])
                        counts["fetched"] += 1
        except Exception as e:          # noqa: BLE001 - reported below
            errors.append("reader %d: %r" % (part, e))
            stop.set()

    threads = [threading.Thread(target=writer, args=(p,)) for p in (0, 1)]
    threads += [threading.Thread(target=reader, args=(p % 2,)) for p in range(6)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + ROUNDS_S
    while time.monotonic() < deadline and not stop.is_set():
        time.sleep(0.1)
    stop.set()
    for t in threads:
        t.join(T(60))
    assert not errors, errors
    assert srv.alive(), "samsa-server died:\n" + srv.stderr_text()[-4000:]
    m = metrics(srv)
    print("counts", counts, m)
    assert m["samsa_log_open_files_max"] == 4, m
    assert m["samsa_log_fd_evictions_total"] > 0, m
    assert counts["deleted"] > 5 and counts["fetched"] > 20, counts
