#!/usr/bin/env python3
"""Ingest and consume over SSL vs PLAINTEXT (issue 21's benchmark).

One samsa-server with a PLAINTEXT and an SSL listener side by side (a
throwaway CA and server certificate made with the openssl command in a
temp dir), the same client (`samsa perf produce` / `samsa perf consume
--no-group`, libsamsa) over each listener in turn, RUNS runs; each run
produces N x SIZE-byte records into a fresh one-partition topic through
the listener under test (acks=1, linger.ms 5, batch.size 16384) and
consumes them back from the start through the same listener.  The
broker's CPU seconds (utime+stime of samsa-server) per phase are
recorded too.

Kernel TLS is not used: this kernel offers no `tls` ULP
(/proc/sys/net/ipv4/tcp_available_ulp), and samsa does not build it yet,
so the consume figure over SSL is the pread + SSL_write path.

Usage: SAMSA_SERVER=build/samsa-server SAMSA_CLI=build/samsa \
         bench/tls.py [RUNS [N [SIZE]]]     (default 3 200000 1024)
Prints one JSON line per run and a summary line of medians and ratios.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import samsa_harness as h                       # noqa: E402

CLI = os.environ.get("SAMSA_CLI", os.path.join(HERE, "..", "build", "samsa"))
TICK = os.sysconf("SC_CLK_TCK")


def sh(*args):
    subprocess.run(list(args), check=True, capture_output=True)


def make_certs(d):
    p = lambda n: os.path.join(d, n)           # noqa: E731
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
       p("ca.key"), "-out", p("ca.pem"), "-days", "2", "-subj", "/CN=bench CA")
    sh("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout",
       p("server.key"), "-out", p("server.csr"), "-subj", "/CN=localhost")
    with open(p("server.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    sh("openssl", "x509", "-req", "-in", p("server.csr"), "-CA", p("ca.pem"),
       "-CAkey", p("ca.key"), "-CAcreateserial", "-out", p("server.crt"),
       "-days", "2", "-extfile", p("server.ext"))
    with open(p("server.pem"), "w") as out:
        out.write(open(p("server.key")).read() + open(p("server.crt")).read())
    return p("server.pem"), p("ca.pem")


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def perf(pid, args):
    c0 = cpu_s(pid)
    p = subprocess.run([CLI, "perf"] + args + ["--json"], capture_output=True,
                       text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError("samsa perf %s: rc %d\n%s%s" % (" ".join(args),
                                                          p.returncode, p.stdout,
                                                          p.stderr))
    last = [ln for ln in p.stdout.splitlines() if ln.startswith("{")][-1]
    return json.loads(last), round(cpu_s(pid) - c0, 2)


def one(srv, pid, proto, port, ca, n, size, tag):
    bs = "%s:%d" % (h.HOST, port)
    props = ["bootstrap.servers=" + bs, "security.protocol=" + proto]
    if proto == "SSL":
        props += ["ssl.truststore.type=PEM", "ssl.truststore.location=" + ca]
    topic = "tls-bench-%s" % tag
    with srv.connect() as c:
        r = c.create_topic(topic, num_partitions=1, timeout=30)
        assert r["error_code"] == 0, r
    prod, pcpu = perf(pid, ["produce", "--topic", topic, "--num-records", str(n),
                            "--record-size", str(size), "--throughput", "-1",
                            "--producer-props", "acks=1", "linger.ms=5",
                            "batch.size=16384"] + props)
    cons, ccpu = perf(pid, ["consume", "--topic", topic, "--messages", str(n),
                            "--no-group", "-b", bs, "--consumer-props"] + props)
    return {"protocol": proto, "produce_mb_per_s": prod["mb_per_sec"],
            "produce_broker_cpu_s": pcpu,
            "consume_mb_per_s": cons.get("MB.sec", cons.get("mb_per_sec")),
            "consume_broker_cpu_s": ccpu}


def main():
    a = sys.argv[1:]
    runs = int(a[0]) if len(a) > 0 else 3
    n = int(a[1]) if len(a) > 1 else 200000
    size = int(a[2]) if len(a) > 2 else 1024
    root = tempfile.mkdtemp(prefix="samsa-bench-tls-")
    keystore, ca = make_certs(root)
    factory = h.ServerFactory(root)
    ports = set()
    while len(ports) < 3:
        ports.add(h.free_port())
    plain, ctl, tls = sorted(ports)
    d = factory.new_dir()
    o = {"listeners": "PLAINTEXT://%s:%d,CONTROLLER://%s:%d,SSL://%s:%d"
                      % (h.HOST, plain, h.HOST, ctl, h.HOST, tls),
         "ssl.keystore.type": "PEM", "ssl.keystore.location": keystore,
         "log.dirs": os.path.join(d, "data")}
    out = {"PLAINTEXT": [], "SSL": []}
    try:
        srv = factory.start(overrides=o, workdir=d, use_ports=False,
                            ports=(plain, ctl))
        for r in range(runs):
            for proto, port in (("PLAINTEXT", plain), ("SSL", tls)):
                res = one(srv, srv.pid, proto, port, ca, n, size,
                          "%s-%d" % (proto.lower(), r))
                print(json.dumps(res), flush=True)
                out[proto].append(res)
    finally:
        factory.stop_all()
    med = statistics.median
    s = {}
    for proto, rs in out.items():
        s[proto] = {k: med(x[k] for x in rs) for k in rs[0] if k != "protocol"}
    s["ingest_ratio_ssl_over_plaintext"] = round(
        s["SSL"]["produce_mb_per_s"] / s["PLAINTEXT"]["produce_mb_per_s"], 3)
    s["consume_ratio_ssl_over_plaintext"] = round(
        s["SSL"]["consume_mb_per_s"] / s["PLAINTEXT"]["consume_mb_per_s"], 3)
    print(json.dumps({"summary": s, "records": n, "record_bytes": size}),
          flush=True)


if __name__ == "__main__":
    main()
