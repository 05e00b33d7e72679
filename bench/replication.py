#!/usr/bin/env python3
"""Replication cost (issue 19): acks=all at RF 3 on three local brokers vs
acks=1 at RF 1, and the replication path's broker CPU per byte vs the
consume path's.  Three combined nodes of tests/cluster's harness on
loopback, `unstable.replication.enable=true`; the client is `samsa perf
produce` / `samsa perf consume` (libsamsa).

For each record size (100 B and 1 KiB) and each of RUNS runs, on the one
cluster, two fresh topics of PARTITIONS partitions (the leaders spread
over the brokers):
  rf3: replication.factor 3, min.insync.replicas 2, produced with acks=all;
  rf1: replication.factor 1, produced with acks=1;
then the rf1 topic is consumed from the start (--no-group).  Each phase
records the client's figures and the CPU seconds (utime + stime from
/proc/PID/stat) of all three samsa-server processes.

CPU per byte:
  produce_rf1 = CPU(rf1 produce) / bytes           (one leader's append)
  replication = (CPU(rf3 produce) - CPU(rf1 produce)) / (2 * bytes)
                (what two followers' copies cost: the leader serving the
                follower fetches plus the followers' appends, per copied
                byte; it also holds the leader's extra acks=all work)
  consume     = CPU(consume) / bytes
The issue's targets: rate(rf3 acks=all) >= 0.5 x rate(rf1 acks=1), and
replication per byte <= 1.5 x consume per byte.

Usage: SAMSA_SERVER=build/samsa-server SAMSA_CLI=build/samsa \
         [PARTITIONS=1] [PRODUCER_PROPS="linger.ms=5 batch.size=16384"] \
         bench/replication.py [RUNS [N100 [N1K]]]   (default 3 300000 100000)
Prints one JSON line per run and a summary line of medians and ratios.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cluster"))
import samsa_harness as h                       # noqa: E402
from cluster_harness import Cluster             # noqa: E402

CLI = os.environ.get("SAMSA_CLI", os.path.join(HERE, "..", "build", "samsa"))
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pids):
    total = 0
    for pid in pids:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])     # utime, stime
    return total / TICK


def run_perf(args):
    t0 = time.monotonic()
    p = subprocess.run([CLI, "perf"] + args + ["--json"], capture_output=True,
                       text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError("samsa perf %s: rc %d\n%s%s" % (" ".join(args), p.returncode,
                                                          p.stdout, p.stderr))
    last = [ln for ln in p.stdout.splitlines() if ln.startswith("{")][-1]
    return json.loads(last), time.monotonic() - t0


def phase(pids, args):
    c0 = [cpu_s([p]) for p in pids]
    res, wall = run_perf(args)
    per = [round(cpu_s([p]) - c, 2) for p, c in zip(pids, c0)]
    return res, wall, per


def create(cluster, ctl, name, rf, configs, parts=1):
    with cluster.nodes[ctl].connect(timeout=30) as c:
        r = c.create_topic(name, num_partitions=parts, replication_factor=rf,
                           configs=configs, timeout=30)
        assert r["error_code"] == 0, r
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        ok = True
        for i in cluster.nodes:
            md = cluster.metadata(i, topics=[name])
            t = [t for t in md["topics"] if t["name"] == name]
            if not t or len(t[0]["partitions"]) != parts or any(
                    len(p["isr_nodes"]) != rf or p["leader_id"] < 0
                    for p in t[0]["partitions"]):
                ok = False
        if ok:
            return
        time.sleep(0.05)
    raise AssertionError("%s not placed on every node" % name)


def one_run(cluster, ctl, bs, pids, size, n, tag, parts, props):
    rf3, rf1 = "rf3-%s" % tag, "rf1-%s" % tag
    create(cluster, ctl, rf3, 3, {"min.insync.replicas": "2"}, parts)
    create(cluster, ctl, rf1, 1, {}, parts)
    common = ["--num-records", str(n), "--record-size", str(size), "--throughput", "-1",
              "--producer-props", "bootstrap.servers=" + bs] + props
    out = {"record_bytes": size, "records": n, "bytes": size * n, "partitions": parts,
           "producer_props": props}
    res, wall, cpu = phase(pids, ["produce", "--topic", rf3] + common + ["acks=all"])
    out["rf3_acks_all"] = {"records_per_s": res["records_per_sec"],
                           "mb_per_s": res["mb_per_sec"], "cpu_s": round(sum(cpu), 2),
                           "cpu_s_by_node": cpu}
    res, wall, cpu = phase(pids, ["produce", "--topic", rf1] + common + ["acks=1"])
    out["rf1_acks_1"] = {"records_per_s": res["records_per_sec"],
                         "mb_per_s": res["mb_per_sec"], "cpu_s": round(sum(cpu), 2),
                           "cpu_s_by_node": cpu}
    res, wall, cpu = phase(pids, ["consume", "--topic", rf1, "--messages", str(n),
                                  "--no-group", "-b", bs])
    out["consume_rf1"] = {"mb_per_s": res.get("MB.sec", res.get("mb_per_sec")),
                          "cpu_s": round(sum(cpu), 2), "cpu_s_by_node": cpu}
    b = out["bytes"]
    out["rate_ratio_rf3_over_rf1"] = round(out["rf3_acks_all"]["records_per_s"]
                                           / out["rf1_acks_1"]["records_per_s"], 3)
    out["cpu_ns_per_byte"] = {
        "produce_rf1": round(out["rf1_acks_1"]["cpu_s"] / b * 1e9, 2),
        "replication": round((out["rf3_acks_all"]["cpu_s"] - out["rf1_acks_1"]["cpu_s"])
                             / (2 * b) * 1e9, 2),
        "consume": round(out["consume_rf1"]["cpu_s"] / b * 1e9, 2),
    }
    c = out["cpu_ns_per_byte"]
    out["cpu_ratio_replication_over_consume"] = round(c["replication"] / c["consume"], 3) \
        if c["consume"] > 0 else None
    return out


def main():
    a = sys.argv[1:]
    runs = int(a[0]) if len(a) > 0 else 3
    sizes = ((100, int(a[1]) if len(a) > 1 else 300000),
             (1024, int(a[2]) if len(a) > 2 else 100000))
    parts = int(os.environ.get("PARTITIONS", "1"))
    props = os.environ.get("PRODUCER_PROPS", "linger.ms=5 batch.size=16384").split()
    root = tempfile.mkdtemp(prefix="samsa-bench-repl-")
    factory = h.ServerFactory(root)
    extra = {"unstable.replication.enable": "true",
             "broker.session.timeout.ms": "9000",
             "broker.heartbeat.interval.ms": "500"}
    cluster = Cluster(factory, n=3, extra=extra)
    results = {}
    try:
        cluster.start_all()
        cluster.wait_unfenced(60)
        ctl = cluster.wait_leader(30)
        bs = ",".join("%s:%d" % (h.HOST, node.ports[0]) for node in cluster.nodes.values())
        pids = [node.srv.pid for node in cluster.nodes.values()]
        for size, n in sizes:
            for r in range(runs):
                out = one_run(cluster, ctl, bs, pids, size, n, "%d-%d" % (size, r),
                              parts, props)
                print(json.dumps(out), flush=True)
                results.setdefault(size, []).append(out)
    finally:
        factory.stop_all()
    summary = {}
    for size, outs in results.items():
        med = statistics.median
        summary[str(size)] = {
            "rf3_acks_all_records_per_s": med(o["rf3_acks_all"]["records_per_s"] for o in outs),
            "rf1_acks_1_records_per_s": med(o["rf1_acks_1"]["records_per_s"] for o in outs),
            "rate_ratio_median": med(o["rate_ratio_rf3_over_rf1"] for o in outs),
            "replication_ns_per_byte": med(o["cpu_ns_per_byte"]["replication"] for o in outs),
            "consume_ns_per_byte": med(o["cpu_ns_per_byte"]["consume"] for o in outs),
            "produce_rf1_ns_per_byte": med(o["cpu_ns_per_byte"]["produce_rf1"] for o in outs),
            "cpu_ratio_median": med(o["cpu_ratio_replication_over_consume"] for o in outs),
        }
    print(json.dumps({"summary": summary, "partitions": parts, "producer_props": props}),
          flush=True)


if __name__ == "__main__":
    main()
