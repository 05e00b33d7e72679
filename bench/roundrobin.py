#!/usr/bin/env python3
"""bench/roundrobin.py - a producer writing round-robin to many partitions
against the same producer writing to one (issue 22's cost-growth row),
samsa-server and Apache Kafka 4.4 side by side in one run.

Each broker gets topic `one` (1 partition) and topic `rr` (PARTS
partitions, default 9,999: CreateTopics refuses a 10,000-partition topic
on both, Kafka's 10,000-records-per-operation limit).  Rows, 1 KiB
records, acks=1, each producer at its defaults otherwise:

  java-one / java-rr  Kafka's kafka-producer-perf-test (the Java producer;
                      RoundRobinPartitioner on both rows), RECORDS records
  rdk-one / rdk-rr    rdk_perf produce (librdkafka), RECORDS_RDK records;
                      on rr with --round-robin: record i to partition i mod
                      PARTS.  librdkafka sends one partition per
                      ProduceRequest, so its rr row measures the brokers'
                      cost per request, not per partition.

RUNS runs (default 3), the brokers alternating which goes first; per row
and broker the median records/s with the range and the broker's CPU time
per record (utime+stime from /proc around each run).  samsa-server runs
with this process's RLIMIT_NOFILE raised to the hard limit (its
log.open.files.max default is half of it).

Usage: SAMSA_SERVER=build/samsa-server bench/roundrobin.py \\
           [PARTS RECORDS RECORDS_RDK RUNS]
(PEER=0 in the environment: samsa-server alone, no Kafka.)
Prints one JSON line; BENCHMARKS.md has the figures.
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
sys.path.insert(0, os.path.join(REPO, "tests", "diff"))
import kafka_broker                             # noqa: E402
import samsa_harness as h                       # noqa: E402
from scale import cpu_s                         # noqa: E402


def rdk_perf():
    return os.environ.get("RDK_PERF") or os.path.join(
        os.path.dirname(os.path.abspath(os.environ["SAMSA_SERVER"])),
        "rdk_perf")


def run(cmd, timeout=900):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("%s: rc %d: %s" % (" ".join(cmd), p.returncode,
                                              p.stderr.strip()[-2000:]))
    return p.stdout


def create(bootstrap, topic, parts):
    run([rdk_perf(), "create", "-b", bootstrap, "-t", topic, "-p",
         str(parts)], timeout=600)


def row_cmd(row, bootstrap, records, records_rdk):
    java = [sys.executable, os.path.join(HERE, "perf_json.py"),
            os.path.join(REPO, "scripts", "kafka-tool"), "producer-perf-test",
            "--num-records", str(records), "--record-size", "1024",
            "--throughput", "-1", "--producer-props",
            "bootstrap.servers=" + bootstrap, "acks=1",
            "partitioner.class="
            "org.apache.kafka.clients.producer.RoundRobinPartitioner"]
    rdk = [rdk_perf(), "produce", "-b", bootstrap, "-n", str(records_rdk),
           "-s", "1024", "-a", "1", "--json"]
    return {"java-one": java + ["--topic", "one"],
            "java-rr": java + ["--topic", "rr"],
            "rdk-one": rdk + ["-t", "one"],
            "rdk-rr": rdk + ["-t", "rr", "--round-robin"]}[row]


def measure(cmd, pid):
    c0 = cpu_s(pid)
    out = run(cmd)
    c1 = cpu_s(pid)
    r = json.loads(out.strip().splitlines()[-1])
    return r["records_per_sec"], (c1 - c0) * 1e6 / r["records"]


def main():
    parts = int(sys.argv[1]) if len(sys.argv) > 1 else 9999
    records = int(sys.argv[2]) if len(sys.argv) > 2 else 300000
    records_rdk = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    root = tempfile.mkdtemp(prefix="samsa-rr-")
    factory = h.ServerFactory(root)
    srv = factory.start()
    kb = None
    try:
        brokers = {"samsa": ("127.0.0.1:%d" % srv.port, srv.pid)}
        if os.environ.get("PEER", "1") != "0":
            kb = kafka_broker.KafkaBroker.start(timeout=180)
            brokers["kafka"] = (kb.bootstrap(), kb.proc.pid)
        for b, _ in brokers.values():
            create(b, "one", 1)
            create(b, "rr", parts)
        time.sleep(5)               # both settle after the creation
        rows = ["java-one", "java-rr", "rdk-one", "rdk-rr"]
        got = {r: {t: [] for t in brokers} for r in rows}
        for i in range(runs):
            order = sorted(brokers, reverse=i % 2 == 0)
            for row in rows:
                for tgt in order:
                    b, pid = brokers[tgt]
                    got[row][tgt].append(measure(
                        row_cmd(row, b, records, records_rdk), pid))
        out = {"partitions": parts, "records": records,
               "records_rdk": records_rdk, "runs": runs,
               "nofile_limit": hard}
        for row in rows:
            out[row] = {}
            for tgt in brokers:
                rps = sorted(x[0] for x in got[row][tgt])
                cpu = sorted(x[1] for x in got[row][tgt])
                out[row][tgt] = {
                    "records_per_sec_median": round(statistics.median(rps)),
                    "records_per_sec_range": [round(rps[0]), round(rps[-1])],
                    "broker_cpu_us_per_record_median":
                        round(statistics.median(cpu), 2)}
        for kind in ("java", "rdk"):
            for tgt in brokers:
                one = out[kind + "-one"][tgt]["records_per_sec_median"]
                rr = out[kind + "-rr"][tgt]["records_per_sec_median"]
                out["%s_rr_over_one_%s" % (kind, tgt)] = round(rr / one, 3)
        print(json.dumps(out))
    finally:
        if kb is not None:
            kb.stop()
        srv.stop(timeout=300)
        h.remove_tmp_root(root)


if __name__ == "__main__":
    main()
