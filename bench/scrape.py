#!/usr/bin/env python3
"""bench/scrape.py URL INTERVAL_S - GET URL every INTERVAL_S seconds (what a
Prometheus scrape does) until SIGTERM, then print one JSON line: scrapes,
failures, median and max scrape time in ms, and the last body's size.
Standard library only; used by bench/run.sh's metrics section."""
import json
import signal
import statistics
import sys
import time
import urllib.request

stop = False


def on_term(*_):
    global stop
    stop = True


def main():
    url, interval = sys.argv[1], float(sys.argv[2])
    signal.signal(signal.SIGTERM, on_term)
    times, fails, size = [], 0, 0
    nxt = time.monotonic()
    while not stop:
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                size = len(r.read())
            times.append((time.monotonic() - t0) * 1000)
        except OSError:
            fails += 1
        nxt += interval
        while not stop and time.monotonic() < nxt:
            time.sleep(min(0.05, max(0.0, nxt - time.monotonic())))
    print(json.dumps({"scrapes": len(times), "failures": fails,
                      "median_ms": statistics.median(times) if times else None,
                      "max_ms": max(times) if times else None, "bytes": size}))


if __name__ == "__main__":
    main()
