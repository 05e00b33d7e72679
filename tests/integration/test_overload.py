"""Overload and misbehaving clients (issue 9, item 3).

Each scenario runs a *probe* next to the misbehaving load: a well-behaved
client that sends an ApiVersions request every 50 ms on its own connection
and a one-record produce every 200 ms, recording each round trip.  The
promise under test: the probe keeps being served with bounded latency,
samsa-server's resident memory stays under a stated bound (with
queued.max.request.bytes set), and every acknowledged record reads back.

Scenarios:
- 5 000 idle connections plus 50 producing connections;
- clients that pipeline Fetch requests and never read the responses;
- slowloris: connections that announce a 1 MiB request and trickle it;
- a flood of connects and disconnects;
- one connection pipelining far more requests than queued.max.requests.

Bounds: the probe's worst round trip must stay under PROBE_MAX_S (scaled
for sanitizer builds by T()), and RSS under RSS_BOUND (normal builds only:
sanitizer runtimes add hundreds of MiB of their own).
"""

import os
import resource
import socket
import struct
import threading
import time

import pytest

import kwire
from samsa_harness import T, HOST

POOL_BYTES = 16 * 1024 * 1024
RSS_BOUND = 256 * 1024 * 1024
PROBE_MAX_S = 2.0
TOPIC = "overload"


def sanitized():
    return bool(os.environ.get("SAMSA_SANITIZE"))


def raise_fd_limit(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < n:
        pytest.skip("RLIMIT_NOFILE hard limit %d < %d" % (hard, n))
    if soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, hard))


def start(samsa, extra=None):
    o = {"queued.max.request.bytes": str(POOL_BYTES),
         "socket.request.max.bytes": str(POOL_BYTES)}
    o.update(extra or {})
    srv = samsa.start(overrides=o)
    with srv.connect(timeout=T(5)) as c:
        r = c.create_topic(TOPIC, 2, timeout=T(10))
        assert r["error_code"] == 0, kwire.error_name(r["error_code"])
        c.wait_topic(TOPIC, 2, timeout=T(10))
    return srv


def batch(tag, seq, size=100):
    val = (b"%s:%08d:" % (tag, seq)).ljust(size, b".")
    return kwire.encode_batch([kwire.Record(val)])


class Probe(threading.Thread):
    """The well-behaved client: round trips and acknowledged records."""

    def __init__(self, srv):
        super().__init__(daemon=True)
        self.srv = srv
        self.stop_ev = threading.Event()
        self.rtts = []
        self.acked = {}             # value -> (partition, offset)
        self.errors = []
        self.max_rss = 0

    def run(self):
        try:
            with self.srv.connect(timeout=T(10)) as c:
                n = 0
                while not self.stop_ev.is_set():
                    t0 = time.monotonic()
                    c.api_versions(timeout=T(30))
                    if n % 4 == 0:
                        p = c.produce(TOPIC, n % 2, batch(b"probe", n), timeout=T(30))
                        if p["error_code"] == 0:
                            self.acked[b"probe:%08d:" % n] = (n % 2, p["base_offset"])
                        else:
                            self.errors.append(kwire.error_name(p["error_code"]))
                    self.rtts.append(time.monotonic() - t0)
                    self.max_rss = max(self.max_rss, self.srv.rss_bytes())
                    n += 1
                    self.stop_ev.wait(0.05)
        except Exception as e:          # reported by check()
            self.errors.append("probe failed: %r" % e)

    def check(self, what):
        # a scenario may finish quicker than five probe round trips: let
        # the probe make them (it runs next to what is left of the load)
        deadline = time.monotonic() + T(10)
        while len(self.rtts) < 5 and not self.errors and self.is_alive() \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        self.stop_ev.set()
        self.join(T(60))
        assert not self.is_alive(), "%s: the probe is stuck" % what
        assert not self.errors, "%s: probe errors %s" % (what, self.errors[:5])
        assert len(self.rtts) >= 5, "%s: only %d probe round trips" % (what, len(self.rtts))
        worst = max(self.rtts)
        srt = sorted(self.rtts)
        p99 = srt[min(len(srt) - 1, int(len(srt) * 0.99))]
        print("%s: %d probe round trips, p99 %.1f ms, max %.1f ms, max RSS %.0f MiB" % (
            what, len(srt), p99 * 1e3, worst * 1e3, self.max_rss / 2**20))
        assert worst < T(PROBE_MAX_S), "%s: a probe round trip took %.2f s" % (what, worst)
        if not sanitized():
            assert self.max_rss < RSS_BOUND, "%s: RSS %d MiB over the %d MiB bound" % (
                what, self.max_rss >> 20, RSS_BOUND >> 20)


def read_back(srv, acked):
    """Every acknowledged value is in its partition at its offset."""
    with srv.connect(timeout=T(5)) as c:
        found = {}
        for part in (0, 1):
            batches, last = c.fetch_all(TOPIC, part, 0, timeout=T(60))
            assert last["error_code"] == 0, kwire.error_name(last["error_code"])
            for r in kwire.records_of(batches):
                key = r["value"].split(b".", 1)[0]
                key = key[:key.rindex(b":") + 1] if b":" in key else key
                found[key] = (part, r["offset"])
    missing = [k for k, v in acked.items() if found.get(k) != v]
    assert not missing, "acknowledged records missing or moved: %s" % missing[:5]


def open_idle(n):
    socks = []
    for _ in range(n):
        for attempt in range(50):
            try:
                s = socket.create_connection((HOST, PORT[0]), timeout=T(10))
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise AssertionError("could not open idle connection %d" % len(socks))
        socks.append(s)
    return socks


PORT = [0]


def test_5000_idle_connections_and_50_producers(samsa):
    raise_fd_limit(12000)
    srv = start(samsa)
    PORT[0] = srv.port
    idle = open_idle(5000)
    try:
        probe = Probe(srv)
        probe.start()
        acked = {}
        errs = []
        lock = threading.Lock()

        def producer(i):
            try:
                with srv.connect(timeout=T(10)) as c:
                    for n in range(40):
                        p = c.produce(TOPIC, n % 2, batch(b"p%02d" % i, n), timeout=T(30))
                        if p["error_code"] != 0:
                            errs.append(kwire.error_name(p["error_code"]))
                            continue
                        with lock:
                            acked[b"p%02d:%08d:" % (i, n)] = (n % 2, p["base_offset"])
            except Exception as e:
                errs.append(repr(e))
        ths = [threading.Thread(target=producer, args=(i,)) for i in range(50)]
        for t in ths:
            t.start()
        for t in ths:
            t.join(T(120))
        assert not errs, errs[:5]
        assert len(acked) == 50 * 40
        # the idle connections are all still open
        assert srv.alive()
        probe.check("5000 idle + 50 producers")
        acked.update(probe.acked)
        read_back(srv, acked)
    finally:
        for s in idle:
            s.close()


def test_clients_that_never_read(samsa):
    srv = start(samsa, {"socket.send.buffer.bytes": "16384"})
    with srv.connect(timeout=T(5)) as c:
        for n in range(64):
            p = c.produce(TOPIC, 0, batch(b"fill", n, 16000), timeout=T(10))
            assert p["error_code"] == 0
    probe = Probe(srv)
    probe.start()
    sinks = []
    for i in range(20):
        s = socket.create_connection((HOST, srv.port), timeout=T(10))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.setblocking(False)
        sinks.append(s)
    # each pipelines 200 fetches of the whole partition and never reads
    reqs = b"".join(kwire.fetch_request(4, 1000 + k, [(TOPIC, [(0, 0, 1 << 20)])],
                                        max_wait_ms=0)
                    for k in range(200))
    sent = [0] * len(sinks)
    deadline = time.monotonic() + T(6)
    while time.monotonic() < deadline:
        for i, s in enumerate(sinks):
            if sent[i] < len(reqs):
                try:
                    sent[i] += s.send(reqs[sent[i]:sent[i] + 65536])
                except (BlockingIOError, InterruptedError):
                    pass
        time.sleep(0.01)
    try:
        assert srv.alive()
        probe.check("20 clients that never read")
        read_back(srv, probe.acked)
    finally:
        for s in sinks:
            s.close()


def test_slowloris(samsa):
    srv = start(samsa)
    probe = Probe(srv)
    probe.start()
    slow = []
    for i in range(50):
        s = socket.create_connection((HOST, srv.port), timeout=T(10))
        s.sendall(struct.pack(">i", 1 << 20))     # announces 1 MiB
        slow.append(s)
    try:
        for _ in range(5):                        # a byte a second each
            for s in slow:
                s.send(b"\x00")
            time.sleep(1)
        assert srv.alive()
        probe.check("50 slowloris connections")
        read_back(srv, probe.acked)
    finally:
        for s in slow:
            s.close()


def test_connect_disconnect_flood(samsa):
    srv = start(samsa)
    probe = Probe(srv)
    probe.start()
    stop = time.monotonic() + 5
    counts = [0]
    errs = []

    def flood():
        while time.monotonic() < stop:
            try:
                s = socket.create_connection((HOST, srv.port), timeout=T(10))
                if counts[0] % 3 == 0:
                    s.sendall(kwire.api_versions_request(0, 1))
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                             struct.pack("ii", 1, 0))    # RST half the time
                s.close()
                counts[0] += 1
            except OSError as e:
                errs.append(repr(e))
    ths = [threading.Thread(target=flood) for _ in range(4)]
    for t in ths:
        t.start()
    for t in ths:
        t.join(T(60))
    assert counts[0] > 200, "only %d connects" % counts[0]
    assert len(errs) < counts[0] // 10, errs[:5]
    assert srv.alive()
    probe.check("%d connects/disconnects" % counts[0])
    read_back(srv, probe.acked)


def test_pipelining_far_beyond_queued_max_requests(samsa):
    srv = start(samsa, {"queued.max.requests": "16"})
    probe = Probe(srv)
    probe.start()
    n = 3000
    with srv.connect(timeout=T(10)) as c:
        data = b"".join(kwire.encode_request(kwire.API_PRODUCE, 9, 10 + k,
                        kwire.encode_produce_request(9, [(TOPIC, [(k % 2, batch(b"pipe", k))])]),
                        "pipe") for k in range(n))
        sender = threading.Thread(target=c.sock.sendall, args=(data,), daemon=True)
        c.sock.settimeout(T(60))
        sender.start()
        acked = {}
        for k in range(n):
            payload = c.recv_frame(timeout=T(30))
            assert kwire.peek_correlation_id(payload) == 10 + k, "out of order"
            r = kwire.decode_response(payload, kwire.API_PRODUCE, 9)
            p = r["topics"][0]["partitions"][0]
            assert p["error_code"] == 0, kwire.error_name(p["error_code"])
            acked[b"pipe:%08d:" % k] = (k % 2, p["base_offset"])
        sender.join(T(30))
    probe.check("%d pipelined produces" % n)
    acked.update(probe.acked)
    read_back(srv, acked)
