#!/usr/bin/env python3
"""bench/perf_json.py CMD... - run Kafka's kafka-producer-perf-test (or
anything printing its summary line) and print that summary as one JSON
line for bench/summarize.py:

  200000 records sent, 94206.3 records/sec (92.00 MB/sec), 250.31 ms avg
  latency, 560.00 ms max latency, 241 ms 50th, 499 ms 95th, 541 ms 99th,
  559 ms 99.9th.

-> {"records": 200000, "records_per_sec": 94206.3, "mb_per_sec": 92.0,
    "avg_ms": 250.31, "max_ms": 560.0, "p50_ms": 241, "p95_ms": 499,
    "p99_ms": 541, "p999_ms": 559}.  Exits with the command's status, 3
when no summary line came."""

import json
import re
import subprocess
import sys

LINE = re.compile(
    r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), "
    r"([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, "
    r"(\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th")


def main():
    p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, text=True)
    sys.stderr.write(p.stdout)
    found = [m for m in map(LINE.search, p.stdout.splitlines()) if m]
    if p.returncode != 0:
        return p.returncode
    if not found:
        return 3
    m = found[-1]
    keys = ("records", "records_per_sec", "mb_per_sec", "avg_ms", "max_ms",
            "p50_ms", "p95_ms", "p99_ms", "p999_ms")
    out = {k: float(v) for k, v in zip(keys, m.groups())}
    out["records"] = int(out["records"])
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
