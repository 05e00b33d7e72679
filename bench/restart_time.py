#!/usr/bin/env python3
"""Restart time of samsa-server after a clean and after an unclean stop.

Fills one topic (8 partitions) with SIZE GiB of 1 KiB records in 1 MiB
produce requests (kwire, acks=1), then:
  1. SIGKILL right away, start again: seconds until ApiVersions answers
     (an unclean restart recovers every segment after the recovery-point
     checkpoint: here nearly all of the data);
  2. SIGTERM (timed), start again: seconds until ApiVersions answers (a
     clean restart skips recovery: the .kafka_cleanshutdown marker).
Usage: SAMSA_SERVER=build/samsa-server bench/restart_time.py GIB [DIR]
Prints one JSON line; docs/RELIABILITY.md has the figures.
"""
import json
import os
import signal
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import kwire                                    # noqa: E402
import samsa_harness as h                       # noqa: E402


def fill(srv, gib, parts=8):
    rec = kwire.encode_batch([kwire.Record(b"x" * 1000) for _ in range(1000)])
    total = int(gib * (1 << 30))
    done = [0]
    lock = threading.Lock()

    def worker(p):
        with srv.connect(timeout=30) as c:
            while True:
                with lock:
                    if done[0] >= total:
                        return
                    done[0] += len(rec)
                r = c.produce("restart", p, rec, acks=1, timeout=60)
                assert r["error_code"] == 0, kwire.error_name(r["error_code"])
    ths = [threading.Thread(target=worker, args=(p,)) for p in range(parts)]
    t0 = time.monotonic()
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    return time.monotonic() - t0


def timed_start(factory, workdir):
    t0 = time.monotonic()
    srv = factory.start(workdir=workdir)
    return srv, time.monotonic() - t0


def main():
    gib = float(sys.argv[1])
    root = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="samsa-restart-")
    factory = h.ServerFactory(root)
    srv = factory.start()
    with srv.connect(timeout=10) as c:
        assert c.create_topic("restart", 8, timeout=30)["error_code"] == 0
        c.wait_topic("restart", 8, timeout=30)
    fill_s = fill(srv, gib)
    # kill -9 right after the fill: everything after the last recovery
    # point checkpoint (written every 60 s) is scanned at the next start
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait()
    srv.stopped = True
    srv, unclean_s = timed_start(factory, srv.workdir)
    t0 = time.monotonic()
    srv.stop(timeout=300)
    stop_s = time.monotonic() - t0
    srv, clean_s = timed_start(factory, srv.workdir)
    srv.stop(timeout=300)
    print(json.dumps({"gib": gib, "fill_s": round(fill_s, 1),
                      "clean_stop_s": round(stop_s, 3),
                      "restart_after_clean_stop_s": round(clean_s, 3),
                      "restart_after_kill9_s": round(unclean_s, 3)}))
    h.remove_tmp_root(root)


if __name__ == "__main__":
    main()
