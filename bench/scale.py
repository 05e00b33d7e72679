#!/usr/bin/env python3
"""Cost growth of one samsa-server (issue 22's targets): many partitions
and many idle connections.

  1. TOPICS topics x PARTS partitions (default 1,000 x 10), created through
     CreateTopics 100 topics at a time; seconds until Metadata lists them.
  2. Idle RSS and open descriptors 3 s after the last create.
  3. Metadata v12 for all topics, REQS requests (default 50), response read
     whole but not decoded: median and p99 in ms.
  4. Clean stop (SIGTERM) timed, then a start timed until ApiVersions
     answers, and Metadata lists every partition again.
  5. CONNS idle connections (default 10,000) to a second, empty broker
     (the partitions' descriptors and the connections would not both fit
     this machine's 20,000-descriptor hard limit), each having sent one
     ApiVersions (so the broker holds its per-connection state): the
     broker's RSS growth, per connection and in all.

  6. A producer writing round-robin to every partition against the same
     producer writing to one partition: librdkafka at its defaults
     (`rdk_perf produce`, RECORDS records of 1 KiB, acks=1; with
     --round-robin record i goes to the i-th partition of the TOPICS*PARTS,
     cycling), against the restarted broker holding all the partitions;
     RUNS runs of each, alternating, median and range of records/s, and
     the broker's CPU time per record (utime+stime from /proc around each
     run).  librdkafka sends one partition per ProduceRequest, so the
     round-robin rate here is the broker's request rate on one
     connection; bench/roundrobin.py has the Java producer's row (all the
     partitions a broker leads in one request) and Apache Kafka beside.

Usage: SAMSA_SERVER=build/samsa-server bench/scale.py \
           [TOPICS PARTS CONNS REQS RECORDS RUNS]
(CONNS 0 skips step 5, RECORDS 0 step 6.)
(RDK_PERF, default build/rdk_perf next to SAMSA_SERVER, is the producer.)
Prints one JSON line; BENCHMARKS.md has the figures.
"""
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import kwire                                    # noqa: E402
import samsa_harness as h                       # noqa: E402


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS for pid %d" % pid)


def nfds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def listed_partitions(srv):
    with srv.connect(timeout=60) as c:
        md = c.metadata(version=1, topics=None, timeout=60)
    return sum(len(t["partitions"]) for t in md["topics"]
               if t["name"].startswith("scale-"))


def wait_partitions(srv, want, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if listed_partitions(srv) >= want:
            return
        time.sleep(0.2)
    raise RuntimeError("Metadata did not list %d partitions in %d s"
                       % (want, timeout))


def create_all(srv, topics, parts):
    with srv.connect(timeout=120) as c:
        for first in range(0, topics, 100):
            batch = [{"name": "scale-%05d" % i, "num_partitions": parts,
                      "replication_factor": 1, "configs": {}}
                     for i in range(first, min(topics, first + 100))]
            r = c.create_topics(batch, timeout=120)
            bad = [t for t in r["topics"] if t["error_code"] != 0]
            assert not bad, bad[:3]


def metadata_latency(srv, reqs):
    body = kwire.encode_metadata_request(12, None)
    lat = []
    with srv.connect(timeout=60) as c:
        for _ in range(reqs):
            t0 = time.monotonic()
            c.request_raw(kwire.API_METADATA, 12, body, timeout=60)
            lat.append((time.monotonic() - t0) * 1000)
    lat.sort()
    return (round(statistics.median(lat), 2),
            round(lat[min(len(lat) - 1, int(len(lat) * 0.99))], 2))


def idle_connections(srv, conns):
    """Open conns connections, one ApiVersions each; RSS before and after."""
    api = kwire.encode_request(kwire.API_API_VERSIONS, 0, 1, b"", "scale")
    before = rss_kb(srv.pid)
    socks = []
    try:
        for i in range(conns):
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
            s.sendall(api)
            socks.append(s)
            if i % 500 == 499:
                for t in socks[-500:]:          # answered: state is there
                    t.settimeout(30)
                    size = int.from_bytes(recv_exactly(t, 4), "big")
                    recv_exactly(t, size)
        for t in socks[len(socks) - len(socks) % 500:]:
            size = int.from_bytes(recv_exactly(t, 4), "big")
            recv_exactly(t, size)
        time.sleep(2)
        after = rss_kb(srv.pid)
        return before, after, nfds(srv.pid)
    finally:
        for s in socks:
            s.close()


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rdk_produce(srv, args):
    rdk = os.environ.get("RDK_PERF") or os.path.join(
        os.path.dirname(os.path.abspath(os.environ["SAMSA_SERVER"])),
        "rdk_perf")
    cmd = [rdk, "produce", "-b", "127.0.0.1:%d" % srv.port, "--json"] + args
    c0 = cpu_s(srv.pid)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    c1 = cpu_s(srv.pid)
    if p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), p.stderr.strip()))
    r = json.loads(p.stdout.strip().splitlines()[-1])
    return r["records_per_sec"], (c1 - c0) * 1e6 / r["records"]


def round_robin_vs_one(srv, records, runs):
    with srv.connect(timeout=60) as c:
        r = c.create_topics([{"name": "one", "num_partitions": 1,
                              "replication_factor": 1, "configs": {}}],
                            timeout=60)
        assert r["topics"][0]["error_code"] == 0, r
    one, rr = [], []
    for _ in range(runs):
        one.append(rdk_produce(srv, ["-t", "one", "-n", str(records),
                                     "-s", "1024", "-a", "1"]))
        rr.append(rdk_produce(srv, ["-t", "scale-", "--round-robin",
                                    "-n", str(records), "-s", "1024",
                                    "-a", "1"]))

    def summary(rows):
        rps = sorted(x[0] for x in rows)
        cpu = sorted(x[1] for x in rows)
        return {"records_per_sec_median": round(statistics.median(rps)),
                "records_per_sec_range": [round(rps[0]), round(rps[-1])],
                "broker_cpu_us_per_record_median":
                    round(statistics.median(cpu), 2)}
    out = {"one_partition": summary(one), "round_robin": summary(rr)}
    out["ratio"] = round(out["round_robin"]["records_per_sec_median"]
                         / out["one_partition"]["records_per_sec_median"], 3)
    return out


def recv_exactly(s, n):
    b = b""
    while len(b) < n:
        try:
            chunk = s.recv(n - len(b))
        except socket.timeout:
            raise RuntimeError("no answer from the broker in 30 s")
        if not chunk:
            raise RuntimeError("connection closed by the broker")
        b += chunk
    return b


def main():
    topics = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    parts = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    conns = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
    reqs = int(sys.argv[4]) if len(sys.argv) > 4 else 50
    records = int(sys.argv[5]) if len(sys.argv) > 5 else 200000
    runs = int(sys.argv[6]) if len(sys.argv) > 6 else 3
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, conns + 40000))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))  # both of us
    root = tempfile.mkdtemp(prefix="samsa-scale-")
    factory = h.ServerFactory(root)
    out = {"topics": topics, "partitions": topics * parts,
           "connections": conns, "nofile_limit": want}
    srv = factory.start()
    try:
        out["rss_kb_empty"] = rss_kb(srv.pid)
        t0 = time.monotonic()
        create_all(srv, topics, parts)
        wait_partitions(srv, topics * parts, 300)
        out["create_and_list_s"] = round(time.monotonic() - t0, 2)
        time.sleep(3)
        out["rss_kb_idle"] = rss_kb(srv.pid)
        out["fds_idle"] = nfds(srv.pid)
        out["metadata_ms_median"], out["metadata_ms_p99"] = \
            metadata_latency(srv, reqs)
        t0 = time.monotonic()
        srv.stop(timeout=300)
        out["clean_stop_s"] = round(time.monotonic() - t0, 2)
        t0 = time.monotonic()
        srv = factory.start(workdir=srv.workdir)
        out["restart_serving_s"] = round(time.monotonic() - t0, 3)
        wait_partitions(srv, topics * parts, 300)
        out["restart_all_listed_s"] = round(time.monotonic() - t0, 3)
        out["rss_kb_after_restart"] = rss_kb(srv.pid)
        out["fds_after_restart"] = nfds(srv.pid)
        if records > 0:
            out["produce_1KiB_acks1"] = round_robin_vs_one(srv, records, runs)
            out["fds_after_produce"] = nfds(srv.pid)
        srv.stop(timeout=300)
        if conns > 0:
            srv = factory.start()
            before, after, fds = idle_connections(srv, conns)
            out["rss_kb_before_conns"] = before
            out["rss_kb_with_conns"] = after
            out["conn_rss_bytes_each"] = round((after - before) * 1024
                                               / conns)
            out["fds_with_conns"] = fds
            srv.stop(timeout=300)
    finally:
        srv.stop(timeout=300)
    print(json.dumps(out))
    h.remove_tmp_root(root)


if __name__ == "__main__":
    main()
