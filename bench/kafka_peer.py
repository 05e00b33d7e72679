#!/usr/bin/env python3
"""bench/kafka_peer.py INFO_FILE [HEAP] - Apache Kafka 4.4 as bench/run.sh's
peer: one KRaft combined node (tests/diff/kafka_broker.py: the jars that
scripts/deps.sh fetched, formatted with Kafka's StorageTool) on free
loopback ports, with Kafka's defaults but single-replica internal topics
and no topic auto-creation.  When it answers, INFO_FILE gets one JSON line
{"bootstrap", "pid" (the JVM's), "startup_s" (java started to serving),
"rss_kb_idle" (VmRSS 2 s later)}; it then waits for SIGTERM or SIGINT and
stops Kafka (and removes its data)."""

import json
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "diff"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))

import kafka_broker  # noqa: E402


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def main():
    info = sys.argv[1]
    heap = sys.argv[2] if len(sys.argv) > 2 else "-Xmx1g"
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    kb = kafka_broker.KafkaBroker.start(heap=heap, timeout=120)
    try:
        time.sleep(2)
        with open(info + ".tmp", "w") as f:
            json.dump({"bootstrap": kb.bootstrap(), "pid": kb.proc.pid,
                       "startup_s": kb.startup_seconds,
                       "rss_kb_idle": rss_kb(kb.proc.pid)}, f)
            f.write("\n")
        os.rename(info + ".tmp", info)
        while not stop and kb.alive():
            time.sleep(0.2)
    finally:
        kb.stop()


if __name__ == "__main__":
    main()
