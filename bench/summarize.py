#!/usr/bin/env python3
"""bench/summarize.py OUT_DIR - Markdown tables from bench/run.sh's raw output.

Reads OUT_DIR/raw/SECTION/ROW/TARGET.RUN.{json,rc,time} and prints, per
section, the median of the runs (with min-max), the ratio of the medians
against the section's peer, and the issue's target.  A run that failed
(rc != 0 or no JSON) is shown as FAILED and left out of the medians.
Python 3 standard library only.
"""
import glob
import json
import os
import statistics
import sys

MIB = 1024.0 * 1024.0


def load(out):
    """{(section, row, target): [result dict or None per run]}"""
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, "raw", "*", "*", "*.json"))):
        sec = path.split(os.sep)[-3]
        row = path.split(os.sep)[-2]
        target, run = os.path.basename(path)[:-5].rsplit(".", 1)
        if not run.isdigit():
            continue
        data = parse(path)
        rc_path = path[:-5] + ".rc"
        if os.path.exists(rc_path) and open(rc_path).read().strip() != "0":
            data = None
        for ext in (".time", ".cpu"):       # client CPU and RSS; broker CPU
            extra = path[:-5] + ext
            if data is None or not os.path.exists(extra):
                continue
            try:
                data.update(json.loads(open(extra).read().strip().splitlines()[-1]))
            except (ValueError, IndexError):
                pass
        runs.setdefault((sec, row, target), []).append(data)
    return runs


def parse(path):
    text = open(path).read().strip()
    if not text:
        return None
    try:
        return json.loads(text)                 # iperf3 -J, fio: one document
    except ValueError:
        pass
    for line in reversed(text.splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    return None


def values(runs, key, f=None):
    out = []
    for r in runs or []:
        if r is None:
            continue
        try:
            v = f(r) if f else r.get(key)
        except (KeyError, TypeError, IndexError):
            v = None
        if v is not None:
            out.append(v)
    return out


def med(vals):
    return statistics.median(vals) if vals else None


def cell(vals, fmt="{:,.0f}", n_runs=None):
    """'median (min-max)' or FAILED / n/a."""
    if not vals:
        return "FAILED" if n_runs else "n/a"
    m = fmt.format(med(vals))
    fails = (n_runs - len(vals)) if n_runs else 0
    extra = " (%s–%s)" % (fmt.format(min(vals)), fmt.format(max(vals))) if len(vals) > 1 else ""
    return m + extra + (" [%d failed]" % fails if fails else "")


def ratio(a, b):
    if not a or not b or med(b) == 0:
        return None
    return med(a) / med(b)


def verdict(r, target, higher_better=True):
    if r is None:
        return "?"
    ok = r >= target if higher_better else r <= target
    return "met" if ok else "**missed**"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(lines)


def row_keys(runs, sec):
    def order(row):
        parts = dict((p[0], p[1:]) for p in row.split("-"))
        return (int(parts.get("s", "0")), parts.get("a", ""), int(parts.get("p", "0")))
    return sorted({row for (s, row, _t) in runs if s == sec}, key=order)


def describe_row(row):
    parts = dict((p[0], p[1:]) for p in row.split("-"))
    size = int(parts["s"])
    return ["%s B" % size if size < 1024 else "%d KiB" % (size // 1024),
            parts["a"], parts["p"]]


def us_per_record(runs, what):
    """CPU microseconds per record: what='client' (user+sys of the client
    process) or 'server' (the broker's CPU time during the run)."""
    def f(r):
        n = r.get("records")
        if not n:
            return None
        if what == "client":
            return (r["user_s"] + r["sys_s"]) * 1e6 / n
        return r["server_cpu_ms"] * 1e3 / n
    return values(runs, None, f)


def ingest(runs):
    rows = []
    for row in row_keys(runs, "ingest"):
        s = runs.get(("ingest", row, "samsa"))
        m = runs.get(("ingest", row, "mock"))
        sv, mv = values(s, "records_per_sec"), values(m, "records_per_sec")
        r = ratio(sv, mv)
        rows.append(describe_row(row) + [
            cell(sv, n_runs=len(s or [])), cell(mv, n_runs=len(m or [])),
            "%.2f" % r if r else "?", verdict(r, 0.8),
            cell(values(s, "mb_per_sec"), "{:.1f}"),
            cell(values(s, "p99_ms"), "{:.0f}"), cell(values(m, "p99_ms"), "{:.0f}")])
    cpu_rows = []
    for row in row_keys(runs, "ingest"):
        s = runs.get(("ingest", row, "samsa"))
        m = runs.get(("ingest", row, "mock"))
        ss, ms = us_per_record(s, "server"), us_per_record(m, "server")
        cpu_rows.append(describe_row(row) + [
            cell(ss, "{:.2f}"), cell(ms, "{:.2f}"),
            "%.1f" % ratio(ss, ms) if ratio(ss, ms) else "?",
            cell(us_per_record(s, "client"), "{:.2f}"),
            cell(us_per_record(m, "client"), "{:.2f}")])
    return ("### Ingest: samsa-server vs librdkafka's mock (rdk_perf produce)\n\n" +
            table(["record", "acks", "partitions", "samsa records/s", "mock records/s",
                   "ratio", "target ≥ 0.8", "samsa MiB/s", "samsa p99 ms", "mock p99 ms"],
                  rows) +
            "\n\nCPU time per record (µs, user+sys, medians): the broker process "
            "during the run, and the rdk_perf client.\n\n" +
            table(["record", "acks", "partitions", "samsa-server", "mock", "samsa / mock",
                   "client (vs samsa)", "client (vs mock)"], cpu_rows))


def perf(runs):
    rows, eq = [], []
    for row in row_keys(runs, "perf"):
        s = runs.get(("perf", row, "libsamsa"))
        k = runs.get(("perf", row, "librdkafka"))
        b = runs.get(("perf", row, "libsamsa-b1m"))
        k16 = runs.get(("perf", row, "librdkafka-b16k"))
        sv, kv = values(s, "records_per_sec"), values(k, "records_per_sec")
        bv, k16v = values(b, "records_per_sec"), values(k16, "records_per_sec")
        sp, kp = values(s, "p99_ms"), values(k, "p99_ms")
        bp, k16p = values(b, "p99_ms"), values(k16, "p99_ms")
        r = ratio(sv, kv)
        rows.append(describe_row(row) + [
            cell(sv, n_runs=len(s or [])), cell(kv, n_runs=len(k or [])),
            "%.2f" % r if r else "?", verdict(r, 1.2),
            cell(sp, "{:.0f}"), cell(kp, "{:.0f}"), p99_verdict(sp, kp),
            cell([v / 1024 for v in values(s, "max_rss_kb")], "{:.0f}"),
            cell([v / 1024 for v in values(k, "max_rss_kb")], "{:.0f}")])
        base = runs.get(("perf", row, "libsamsa-base"))
        if base:
            rb = ratio(values(base, "records_per_sec"), kv)
            rows[-1] += [cell(values(base, "records_per_sec"), n_runs=len(base)),
                         "%.2f" % rb if rb else "?", cell(values(base, "p99_ms"), "{:.0f}")]
        r16, r1m = ratio(sv, k16v), ratio(bv, kv)
        eq.append(describe_row(row) + [
            cell(sv, n_runs=len(s or [])), cell(k16v, n_runs=len(k16 or [])),
            "%.2f" % r16 if r16 else "?", verdict(r16, 1.2),
            cell(sp, "{:.0f}"), cell(k16p, "{:.0f}"), p99_verdict(sp, k16p),
            cell(bv, n_runs=len(b or [])), cell(kv, n_runs=len(k or [])),
            "%.2f" % r1m if r1m else "?", verdict(r1m, 1.2),
            cell(bp, "{:.0f}"), cell(kp, "{:.0f}"), p99_verdict(bp, kp)])
    return ("### libsamsa (`samsa perf produce`) vs librdkafka (`rdk_perf produce`), "
            "linger.ms=5, same samsa-server: each at its default batch.size "
            "(libsamsa 16384, librdkafka 1000000)\n\n" +
            table(["record", "acks", "partitions", "libsamsa records/s",
                   "librdkafka records/s", "ratio", "target ≥ 1.2", "libsamsa p99 ms",
                   "librdkafka p99 ms", "p99 no worse", "libsamsa peak RSS MiB",
                   "rdk_perf peak RSS MiB"]
                  + (["before: libsamsa records/s", "its ratio", "its p99 ms"]
                     if any(len(r) > 12 for r in rows) else []), rows) +
            "\n\n### The same runs, both clients at the same batch.size\n\n" +
            table(["record", "acks", "partitions", "libsamsa b=16384 records/s",
                   "librdkafka b=16384 records/s", "ratio", "target ≥ 1.2", "libsamsa p99 ms",
                   "librdkafka p99 ms", "p99 no worse", "libsamsa b=1000000 records/s",
                   "librdkafka b=1000000 records/s", "ratio", "target ≥ 1.2",
                   "libsamsa p99 ms", "librdkafka p99 ms", "p99 no worse"], eq) +
            "\n\n" + perf_cpu(runs))


def p99_verdict(a, b):
    return "?" if not a or not b else ("met" if med(a) <= med(b) else "**missed**")


PERF_TARGETS = ("libsamsa", "librdkafka", "libsamsa-b1m", "librdkafka-b16k")


def perf_cpu(runs):
    rows = []
    for row in row_keys(runs, "perf"):
        cells = describe_row(row)
        for tgt in PERF_TARGETS:
            r = runs.get(("perf", row, tgt))
            cells.append(cell(us_per_record(r, "client"), "{:.2f}"))
        for tgt in PERF_TARGETS:
            r = runs.get(("perf", row, tgt))
            cells.append(cell(us_per_record(r, "server"), "{:.2f}"))
        rows.append(cells)
    return ("CPU time per record (µs, user+sys, medians) of the producing process "
            "(`samsa perf` / `rdk_perf`, statistics included) and of samsa-server "
            "meanwhile.\n\n" +
            table(["record", "acks", "partitions", "libsamsa b=16384", "librdkafka b=1000000",
                   "libsamsa b=1000000", "librdkafka b=16384", "server: libsamsa b=16384",
                   "server: librdkafka b=1000000", "server: libsamsa b=1000000",
                   "server: librdkafka b=16384"], rows))


def memory(runs):
    rows = []
    for row in sorted({r for (s, r, _t) in runs if s == "memory"}):
        s = runs.get(("memory", row, "libsamsa"))
        bm = int(row[2:])
        rss = [v / 1024 for v in values(s, "max_rss_kb")]
        rows.append(["%d MiB" % (bm >> 20), cell(rss, "{:.0f}", n_runs=len(s or [])),
                     cell(values(s, "records_per_sec")), cell(values(s, "p99_ms"), "{:.1f}")])
    return ("### libsamsa memory: peak RSS of `samsa perf produce` (200,000 × 1 KiB, "
            "acks=1, 1 partition)\n\n" +
            table(["buffer.memory", "peak RSS MiB", "records/s", "p99 ms"], rows))


def consume(runs):
    ip = runs.get(("consume", "iperf3", "iperf3"))
    iv = values(ip, None, lambda r: r["end"]["sum_received"]["bits_per_second"] / 8 / MIB)
    rows = [["iperf3, 1 stream, loopback", cell(iv, "{:.0f}", n_runs=len(ip or [])),
             "", "", "", "", ""]]
    for row in ("p1", "p6"):
        s = runs.get(("consume", row, "samsa"))
        sv = values(s, "mb_per_sec")
        r = ratio(sv, iv)
        rows.append(["samsa, 1 KiB records, %s partition(s)" % row[1:],
                     cell(sv, "{:.0f}", n_runs=len(s or [])),
                     cell(values(s, "records_per_sec")),
                     "%.2f" % r if r else "?", verdict(r, 0.8),
                     cell(us_per_record(s, "server"), "{:.2f}"),
                     cell(us_per_record(s, "client"), "{:.2f}")])
    return ("### Consume from the start vs one-stream loopback bandwidth\n\n" +
            table(["what", "MiB/s", "records/s", "ratio to iperf3", "target ≥ 0.8",
                   "server CPU µs/record", "client CPU µs/record"], rows))


def flush(runs):
    fo = runs.get(("flush", "fio", "fio"))
    fv = values(fo, None, lambda r: r["jobs"][0]["write"]["bw_bytes"] / MIB)
    rows = [["fio: 1 MiB writes + fdatasync, sequential",
             cell(fv, "{:.1f}", n_runs=len(fo or [])), "", "", "", "", ""]]
    for row in ("p1", "p6"):
        s = runs.get(("flush", row, "samsa"))
        sv = values(s, "mb_per_sec")
        r = ratio(sv, fv)
        rows.append(["samsa: flush.messages=1, acks=all, 1 KiB, %s partition(s)" % row[1:],
                     cell(sv, "{:.1f}", n_runs=len(s or [])), cell(values(s, "records_per_sec")),
                     cell(values(s, "p99_ms"), "{:.0f}"),
                     cell(us_per_record(s, "server"), "{:.2f}"),
                     "%.2f" % r if r else "?", verdict(r, 0.6)])
    return ("### Durable ingest (group commit) vs fio fdatasync bandwidth\n\n" +
            table(["what", "MiB/s", "records/s", "p99 ms", "server CPU µs/record",
                   "ratio to fio", "target ≥ 0.6"], rows))


def e2e(runs):
    rows = []
    for tgt, label in (("samsa", "samsa-server (fetch long-poll, defaults)"),
                       ("mock", "mock, fetch.wait.max.ms=0 (client + loopback floor)")):
        s = runs.get(("e2e", "r2000", tgt))
        p99 = values(s, "p99_ms")
        rows.append([label, cell(values(s, "p50_ms"), "{:.3f}", n_runs=len(s or [])),
                     cell(p99, "{:.3f}"), cell(values(s, "p999_ms"), "{:.3f}"),
                     cell(values(s, "max_ms"), "{:.3f}"),
                     verdict(med(p99), 1.0, False) if tgt == "samsa" else ""])
    return ("### End-to-end latency, 2,000 records/s, linger.ms=0, acks=all, 100 B, "
            "1 partition (ms)\n\n" +
            table(["target", "p50", "p99", "p99.9", "max", "target p99 ≤ 1 ms"], rows))


def startup(runs):
    s = runs.get(("startup", "empty", "samsa"))
    i = runs.get(("idle", "rss", "samsa"))
    api, md = values(s, "apiversions_ms"), values(s, "metadata_ms")
    rss = [v / 1024 for v in values(i, "rss_kb")]
    rows = [["start to first ApiVersions answer (empty data dir)",
             cell(api, "{:.1f}", n_runs=len(s or [])) + " ms", ""],
            ["start to first Metadata answer (empty data dir)", cell(md, "{:.1f}") + " ms",
             verdict(med(md), 50, False) if md else "?"],
            ["idle RSS, 2 s after start", cell(rss, "{:.1f}", n_runs=len(i or [])) + " MiB",
             verdict(med(rss), 20, False) if rss else "?"]]
    return ("### Start-up and idle memory of samsa-server\n\n" +
            table(["what", "median (min–max)", "target (≤ 50 ms, ≤ 20 MB)"], rows))


def metrics(runs, out):
    rows = []
    for row in row_keys(runs, "metrics"):
        q = runs.get(("metrics", row, "quiet"))
        sc = runs.get(("metrics", row, "scraped"))
        qv, sv = values(q, "records_per_sec"), values(sc, "records_per_sec")
        r = ratio(sv, qv)
        scr = []
        for path in sorted(glob.glob(os.path.join(out, "raw", "metrics-scrapes", row,
                                                  "scraped.*.out"))):
            d = parse(path)
            if d:
                scr.append(d)
        parts = dict((p[0], p[1:]) for p in row.split("-"))
        rows.append(describe_row(row)[:1] + [parts["p"],
            cell(qv, n_runs=len(q or [])), cell(sv, n_runs=len(sc or [])),
            "%.3f" % r if r else "?",
            cell(us_per_record(q, "server"), "{:.2f}"),
            cell(us_per_record(sc, "server"), "{:.2f}"),
            "%d" % sum(d.get("scrapes", 0) for d in scr),
            "%d" % sum(d.get("failures", 0) for d in scr),
            cell(values(scr, "median_ms"), "{:.1f}"),
            cell(values(scr, "max_ms"), "{:.1f}"),
            cell(values(scr, "bytes"), "{:,.0f}")])
    return ("### Ingest with /metrics scraped every second vs not (rdk_perf produce, acks=1)\n\n" +
            table(["record", "partitions", "quiet records/s", "scraped records/s",
                   "scraped / quiet", "broker µs/record quiet", "broker µs/record scraped",
                   "scrapes", "failed", "scrape median ms", "scrape max ms",
                   "exposition bytes"], rows))


def kafka(runs):
    """bench/run.sh kafka: samsa-server vs Apache Kafka, the same clients."""
    labels = {"rdk-s100-a1": "rdk_perf produce, 100 B, acks=1",
              "rdk-s100-aall": "rdk_perf produce, 100 B, acks=all",
              "rdk-s1024-a1": "rdk_perf produce, 1 KiB, acks=1",
              "rdk-s1024-aall": "rdk_perf produce, 1 KiB, acks=all",
              "java-s1024-a1": "kafka-producer-perf-test (Java producer), 1 KiB, acks=1",
              "consume-s1024": "rdk_perf consume from the start, 1 KiB"}
    rows = []
    for row in [r for r in labels if ("kafka", r, "samsa") in runs]:
        s, k = runs.get(("kafka", row, "samsa")), runs.get(("kafka", row, "kafka"))
        sv, kv = values(s, "records_per_sec"), values(k, "records_per_sec")
        r = ratio(sv, kv)
        ss, ks = us_per_record(s, "server"), us_per_record(k, "server")
        rc = ratio(ss, ks)
        rows.append([labels[row], cell(sv, n_runs=len(s or [])), cell(kv, n_runs=len(k or [])),
                     "%.2f" % r if r else "?", cell(ss, "{:.2f}"), cell(ks, "{:.2f}"),
                     "%.2f" % rc if rc else "?"])
    e_rows = []
    for tgt in ("samsa", "kafka"):
        e = runs.get(("kafka-e2e", "r2000", tgt))
        e_rows.append([tgt, cell(values(e, "p50_ms"), "{:.3f}", n_runs=len(e or [])),
                       cell(values(e, "p99_ms"), "{:.3f}"), cell(values(e, "max_ms"), "{:.3f}")])
    st = runs.get(("startup", "empty", "samsa"))
    idle = runs.get(("idle", "rss", "samsa"))
    ks = runs.get(("kafka-startup", "empty", "kafka"))
    s_rows = [["start to serving", cell(values(st, "metadata_ms"), "{:.1f}", n_runs=len(st or []))
               + " ms (first Metadata answer)",
               cell(values(ks, "startup_ms"), "{:,.0f}", n_runs=len(ks or []))
               + " ms (java started to serving, storage formatted before)"],
              ["idle RSS, 2 s after start",
               cell([v / 1024 for v in values(idle, "rss_kb")], "{:.1f}") + " MiB",
               cell([v / 1024 for v in values(ks, "rss_kb_idle")], "{:.0f}") + " MiB (-Xmx1g)"]]
    return ("### samsa-server vs Apache Kafka 4.4, same machine, same clients\n\n" +
            table(["what", "samsa records/s", "Kafka records/s", "samsa / Kafka",
                   "samsa CPU µs/record", "Kafka CPU µs/record", "CPU samsa / Kafka"], rows) +
            "\n\nEnd-to-end latency, 2,000 records/s, linger.ms=0, acks=all, 100 B (ms)\n\n" +
            table(["broker", "p50", "p99", "max"], e_rows) + "\n\n" +
            table(["what", "samsa-server", "Apache Kafka"], s_rows))


def main():
    out = sys.argv[1]
    runs = load(out)
    secs = {s for (s, _r, _t) in runs}
    print("<!-- generated by bench/summarize.py from %s -->\n" % out)
    machine = os.path.join(out, "machine.txt")
    if os.path.exists(machine):
        print("```\n" + open(machine).read().strip() + "\n```\n")
    for name, fn in (("ingest", ingest), ("perf", perf), ("memory", memory),
                     ("consume", consume), ("flush", flush), ("e2e", e2e),
                     ("startup", startup)):
        if name in secs and not (name == "startup" and "kafka" in secs):
            print(fn(runs) + "\n")
    if "metrics" in secs:
        print(metrics(runs, out) + "\n")
    if "kafka" in secs:
        print(kafka(runs) + "\n")
    after = os.path.join(out, "raw", "ingest", "server_rss_after.json")
    if os.path.exists(after):
        try:
            kb = json.load(open(after))["rss_kb"]
            print("samsa-server RSS after the ingest section, idle 2 s: %.1f MiB\n" % (kb / 1024))
        except (ValueError, KeyError):
            pass


if __name__ == "__main__":
    main()
