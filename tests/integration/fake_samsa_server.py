#!/usr/bin/python3
"""A stand-in for samsa-server, in Python, for testing the tests.

It follows the contract the integration tests check (command line, config
keys, thread names, ApiVersions/Metadata/DescribeCluster, mute/unmute,
queued.max.requests, queued.max.request.bytes, connection quotas, idle
close, request log, SIGTERM) closely enough that the whole suite can be run
against it:

    SAMSA_SERVER=tests/integration/fake_samsa_server.py \
        /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/integration

It is not the product and not a reference implementation; it exists so that
a test bug shows up before the real server does. It also cross-checks
kwire's encoders against real clients (kcat, kafka-python, kafkajs).
"""

import base64
import ctypes
import json
import os
import queue
import re
import selectors
import signal
import socket
import struct
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kwire  # noqa: E402

# ---------------------------------------------------------------------------
# configuration
# ---------------------------------------------------------------------------


class ConfigError(Exception):
    pass


def _int(lo=None, hi=None):
    def conv(key, s):
        try:
            v = int(s.strip())
        except ValueError:
            raise ConfigError("invalid value '%s' for %s: not an integer" % (s, key))
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise ConfigError("invalid value '%s' for %s: out of range" % (s, key))
        return v
    return conv


def _bool(key, s):
    if s.strip().lower() in ("true", "false"):
        return s.strip().lower() == "true"
    raise ConfigError("invalid value '%s' for %s: not a boolean" % (s, key))


def _str(key, s):
    return s.strip()


def _listeners(key, s):
    out = []
    for item in s.split(","):
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)://([^:/]*):(\d+)", item.strip())
        if not m or int(m.group(3)) > 65535:
            raise ConfigError("invalid value '%s' for %s" % (s, key))
        out.append((m.group(1).upper(), m.group(2), int(m.group(3))))
    return out


def _overrides(key, s):
    out = {}
    for item in filter(None, (x.strip() for x in s.split(","))):
        host, _, n = item.rpartition(":")
        if not host or not n.isdigit():
            raise ConfigError("invalid value '%s' for %s" % (s, key))
        out[host] = int(n)
    return out


INTMAX = 2 ** 31 - 1

# Deliberate bugs, to check that the tests catch them:
# FAKE_SAMSA_BUGS=nomute,noidle,noquota,sigterm_rc,drop_inflight,keep_bad,
#                 noinfo,onepool,asan_report
BUGS = set(filter(None, os.environ.get("FAKE_SAMSA_BUGS", "").split(",")))
CONFIG = {
    "process.roles": (_str, "broker,controller"),
    "node.id": (_int(0), "1"),
    "listeners": (_listeners, "PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093"),
    "advertised.listeners": (_str, ""),
    "controller.listener.names": (_str, "CONTROLLER"),
    "log.dirs": (_str, "./samsa-data"),
    "num.network.threads": (_int(1), "3"),
    "num.io.threads": (_int(1), "8"),
    "queued.max.requests": (_int(1), "500"),
    "queued.max.request.bytes": (_int(-1), "-1"),
    "socket.request.max.bytes": (_int(1), "104857600"),
    "connections.max.idle.ms": (_int(-1), "600000"),
    "max.connections": (_int(0), str(INTMAX)),
    "max.connections.per.ip": (_int(0), str(INTMAX)),
    "max.connections.per.ip.overrides": (_overrides, ""),
    "request.log.enable": (_bool, "false"),
    "request.log.file": (_str, ""),
}


def warn(msg):
    sys.stderr.write("WARN %s\n" % msg)
    sys.stderr.flush()


def parse_args(argv):
    raw = {}
    i = 0
    if argv and not argv[0].startswith("--"):
        with open(argv[0]) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#") and "=" in line:
                    k, v = line.split("=", 1)
                    raw[k.strip()] = v.strip()
        i = 1
    while i < len(argv):
        if argv[i] == "--override" and i + 1 < len(argv) and "=" in argv[i + 1]:
            k, v = argv[i + 1].split("=", 1)
            raw[k.strip()] = v
            i += 2
        else:
            raise ConfigError("bad argument '%s'" % argv[i])
    conf = {}
    for k, (conv, default) in CONFIG.items():
        conf[k] = conv(k, raw.get(k, default))
    if 0 < conf["queued.max.request.bytes"] < conf["socket.request.max.bytes"]:
        raise ConfigError("invalid value '%s' for queued.max.request.bytes: must be -1 "
                          "or >= socket.request.max.bytes" % conf["queued.max.request.bytes"])
    for k in raw:
        if k not in CONFIG:
            warn("unknown configuration key '%s' ignored" % k)
    return conf


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

_libc = ctypes.CDLL(None)


def set_thread_name(name):
    _libc.prctl(15, name.encode()[:15], 0, 0, 0)   # PR_SET_NAME


def now_ns():
    return time.monotonic_ns()


def ms(ns):
    return round(ns / 1e6, 3)


def format_dirs(conf):
    dirs = [d.strip() for d in conf["log.dirs"].split(",") if d.strip()]
    cluster_id = None
    for d in dirs:
        p = os.path.join(d, "meta.properties")
        if os.path.exists(p):
            for line in open(p):
                if line.startswith("cluster.id="):
                    cluster_id = line.strip().split("=", 1)[1]
    if cluster_id is None:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    for d in dirs:
        os.makedirs(d, exist_ok=True)
        p = os.path.join(d, "meta.properties")
        if not os.path.exists(p):
            dir_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
            with open(p, "w") as f:
                f.write("#\n#Written by samsa (fake)\nversion=1\ncluster.id=%s\n"
                        "node.id=%d\ndirectory.id=%s\n" % (cluster_id, conf["node.id"], dir_id))
    return cluster_id, dirs


class MemoryPool:
    """Kafka's SimpleMemoryPool, non-strict: an allocation succeeds while
    any memory is left."""

    def __init__(self, size):
        self.size = size
        self.avail = size
        self.lock = threading.Lock()
        self.waiters = set()

    def try_alloc(self, n):
        if self.size < 0:
            return True
        with self.lock:
            if self.avail > 0:
                self.avail -= n
                return True
            return False

    def release(self, n):
        if self.size >= 0:
            with self.lock:
                self.avail += n
                waiters, self.waiters = self.waiters, set()
            for p in waiters:
                p.wake()


class Quotas:
    def __init__(self, conf):
        self.max_total = conf["max.connections"]
        self.per_ip = conf["max.connections.per.ip"]
        self.overrides = conf["max.connections.per.ip.overrides"]
        self.counts = {}
        self.total = 0
        self.lock = threading.Lock()

    def inc(self, ip):
        with self.lock:
            limit = self.overrides.get(ip, self.per_ip)
            if self.counts.get(ip, 0) >= limit or self.total >= self.max_total:
                return False
            self.counts[ip] = self.counts.get(ip, 0) + 1
            self.total += 1
            return True

    def dec(self, ip):
        with self.lock:
            self.counts[ip] -= 1
            self.total -= 1


# ---------------------------------------------------------------------------
# request path
# ---------------------------------------------------------------------------

SUPPORTED = {kwire.API_API_VERSIONS: (0, 4), kwire.API_METADATA: (0, 12),
             kwire.API_DESCRIBE_CLUSTER: (0, 1)}
CONTROLLER_SUPPORTED = {kwire.API_API_VERSIONS: (0, 4)}


class Request:
    __slots__ = ("conn", "header", "body", "size", "t_recv", "t_deq", "t_local",
                 "t_resp_deq", "response", "processor", "client_info")


class Conn:
    def __init__(self, sock, conn_id, ip):
        self.sock = sock
        self.id = conn_id
        self.ip = ip
        self.rbuf = bytearray()
        self.wbuf = b""
        self.muted = False          # a request of it is in flight
        self.pool_muted = False     # waiting for queued.max.request.bytes
        self.sending = None         # Request whose response is being written
        self.last_active = time.monotonic()
        self.client_info = ("unknown", "unknown")
        self.closed = False
        self.events = 0


class SocketServer:
    def __init__(self, broker, listeners, pool_name, supported):
        self.broker = broker
        self.conf = broker.conf
        self.supported = supported
        self.requests = queue.Queue(self.conf["queued.max.requests"])
        self.processors = []
        self.acceptors = []
        self.handlers = []
        pid = 0
        for (name, host, port, lsock) in listeners:
            procs = []
            for _ in range(self.conf["num.network.threads"]):
                p = Processor(self, pid, port, name)
                pid += 1
                procs.append(p)
            self.processors += procs
            self.acceptors.append(Acceptor(self, lsock, port, procs))
        for i in range(self.conf["num.io.threads"]):
            self.handlers.append(threading.Thread(target=self.handler_loop, args=(i,),
                                                  daemon=True))

    def start(self):
        for t in self.handlers:
            t.start()
        for p in self.processors:
            p.thread.start()
        for a in self.acceptors:
            a.thread.start()

    def handler_loop(self, hid):
        set_thread_name("handler-%d" % hid)
        delay_ms = int(os.environ.get("SAMSA_TEST_HANDLER_DELAY_MS", "0") or 0)
        delay_api = os.environ.get("SAMSA_TEST_HANDLER_DELAY_API")
        while True:
            try:
                req = self.requests.get(timeout=0.3)
            except queue.Empty:
                if self.broker.stopping.is_set() and self.broker.handlers_may_exit:
                    return
                continue
            req.t_deq = now_ns()
            if delay_ms and (delay_api is None or int(delay_api) == req.header["api_key"]):
                time.sleep(delay_ms / 1000.0)
            try:
                req.response = self.handle(req)
            except Exception as e:      # a bug here closes the connection
                warn("handler error: %r" % e)
                req.response = None
            self.broker.pool.release(req.size)
            req.t_local = now_ns()
            req.processor.enqueue_response(req)

    def handle(self, req):
        h = req.header
        key, ver, corr = h["api_key"], h["api_version"], h["correlation_id"]
        r = req.body
        if key == kwire.API_API_VERSIONS:
            lo, hi = self.supported[key]
            if not lo <= ver <= hi:
                return kwire.encode_response(key, 0, corr, kwire.encode_api_versions_response(
                    0, self.supported, error_code=kwire.ERR_UNSUPPORTED_VERSION))
            kwire.decode_api_versions_request(r, ver)
            return kwire.encode_response(key, ver, corr,
                                         kwire.encode_api_versions_response(ver, self.supported))
        b = self.broker
        brokers = [{"node_id": b.node_id, "host": b.adv_host, "port": b.adv_port, "rack": None}]
        if key == kwire.API_METADATA:
            m = kwire.decode_metadata_request(r, ver)
            topics = []
            for t in m["topics"] or []:
                topics.append({"error_code": kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION,
                               "name": t["name"], "partitions": []})
            return kwire.encode_response(key, ver, corr, kwire.encode_metadata_response(
                ver, brokers, b.cluster_id, b.node_id, topics))
        if key == kwire.API_DESCRIBE_CLUSTER:
            kwire.decode_describe_cluster_request(r, ver)
            return kwire.encode_response(key, ver, corr, kwire.encode_describe_cluster_response(
                ver, brokers, b.cluster_id, b.node_id))
        return None


class Acceptor:
    def __init__(self, server, lsock, port, processors):
        self.server = server
        self.lsock = lsock
        self.port = port
        self.processors = processors
        self.next = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        set_thread_name("acceptor-%d" % self.port)
        broker = self.server.broker
        sel = selectors.DefaultSelector()
        sel.register(self.lsock, selectors.EVENT_READ)
        while not broker.stopping.is_set():
            if not sel.select(0.1):
                continue
            while True:
                try:
                    sock, addr = self.lsock.accept()
                except OSError:
                    break
                if not broker.quotas.inc(addr[0]) and "noquota" not in BUGS:
                    sock.close()
                    continue
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                p = self.processors[self.next % len(self.processors)]
                self.next += 1
                p.new_conns.put((sock, addr))
                p.wake()
        sel.close()
        self.lsock.close()


class Processor:
    def __init__(self, server, pid, port, listener):
        self.server = server
        self.id = pid
        self.port = port
        self.listener = listener
        self.new_conns = queue.Queue(20)
        self.responses = queue.Queue()
        self.efd = os.eventfd(0, os.EFD_NONBLOCK)
        self.conns = {}
        self.seq = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def wake(self):
        try:
            os.eventfd_write(self.efd, 1)
        except OSError:
            pass

    def enqueue_response(self, req):
        self.responses.put(req)
        self.wake()

    def close(self, c):
        if c.closed:
            return
        c.closed = True
        if c.events:
            self.sel.unregister(c.sock)
        c.events = 0
        c.sock.close()
        self.conns.pop(c.id, None)
        self.server.broker.quotas.dec(c.ip)

    def interest(self, c):
        """(Re)registers c for reading unless muted, and for writing while
        a response is pending."""
        ev = 0
        if not c.muted and not c.pool_muted:
            ev |= selectors.EVENT_READ
        if c.wbuf:
            ev |= selectors.EVENT_WRITE
        if ev == c.events:
            return
        if c.events and ev:
            self.sel.modify(c.sock, ev, c)
        elif ev:
            self.sel.register(c.sock, ev, c)
        else:
            self.sel.unregister(c.sock)
        c.events = ev

    def run(self):
        set_thread_name("network-%d-%d" % (self.port, self.id))
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.efd, selectors.EVENT_READ, None)
        broker = self.server.broker
        idle_s = broker.conf["connections.max.idle.ms"] / 1000.0
        while True:
            if broker.stopping.is_set() and broker.drained(self):
                for c in list(self.conns.values()):
                    self.close(c)
                return
            while True:
                try:
                    sock, addr = self.new_conns.get_nowait()
                except queue.Empty:
                    break
                sock.setblocking(False)
                local = sock.getsockname()
                self.seq += 1
                cid = "%s:%d-%s:%d-%d-%d" % (local[0], local[1], addr[0], addr[1],
                                             self.id, self.seq)
                c = Conn(sock, cid, addr[0])
                self.conns[cid] = c
                self.interest(c)
            while True:
                try:
                    req = self.responses.get_nowait()
                except queue.Empty:
                    break
                self.start_send(req)
            for c in list(self.conns.values()):
                if c.pool_muted and not c.muted:
                    self.try_complete_receive(c)
            for key, ev in self.sel.select(0.3 if not broker.stopping.is_set() else 0.05):
                if key.data is None:
                    try:
                        os.eventfd_read(self.efd)
                    except OSError:
                        pass
                    continue
                c = key.data
                if c.closed:
                    continue
                if ev & selectors.EVENT_WRITE:
                    self.do_write(c)
                if ev & selectors.EVENT_READ and not c.closed:
                    self.do_read(c)
            if idle_s >= 0 and "noidle" not in BUGS:
                now = time.monotonic()
                for c in list(self.conns.values()):
                    if not c.muted and not c.wbuf and now - c.last_active > idle_s:
                        self.close(c)

    def do_read(self, c):
        try:
            data = c.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            self.close(c)
            return
        if not data:
            self.close(c)
            return
        c.last_active = time.monotonic()
        c.rbuf += data
        self.try_complete_receive(c)

    def try_complete_receive(self, c):
        """At most one request per connection in flight."""
        if (c.muted and "nomute" not in BUGS) or c.closed or len(c.rbuf) < 4:
            return
        size = struct.unpack(">i", c.rbuf[:4])[0]
        if size < 0 or size > self.server.conf["socket.request.max.bytes"]:
            self.close(c)
            return
        if len(c.rbuf) < 4 + size:
            return
        if not self.server.broker.pool.try_alloc(size):
            c.pool_muted = True
            self.server.broker.pool.waiters.add(self)
            self.interest(c)
            return
        if c.pool_muted:
            c.pool_muted = False
            self.interest(c)
        payload = bytes(c.rbuf[4:4 + size])
        del c.rbuf[:4 + size]
        try:
            header, body = kwire.decode_request_header(payload)
        except kwire.ProtocolError:
            self.server.broker.pool.release(size)
            self.close(c)
            return
        rng = self.server.supported.get(header["api_key"])
        if rng is None and "keep_bad" in BUGS:
            self.server.broker.pool.release(size)
            return
        if rng is None or (header["api_key"] != kwire.API_API_VERSIONS
                           and not rng[0] <= header["api_version"] <= rng[1]):
            self.server.broker.pool.release(size)
            self.close(c)
            return
        if header["api_key"] == kwire.API_API_VERSIONS and header["api_version"] >= 3 \
                and rng[0] <= header["api_version"] <= rng[1]:
            try:
                info = kwire.decode_api_versions_request(kwire.Reader(body.data, body.pos),
                                                         header["api_version"])
                next_info = (info["client_software_name"], info["client_software_version"])
            except kwire.ProtocolError:
                next_info = None
        else:
            next_info = None
        req = Request()
        req.conn, req.header, req.body, req.size = c, header, body, size
        req.t_recv = now_ns()
        req.processor = self
        req.client_info = c.client_info
        if next_info and "noinfo" not in BUGS:
            c.client_info = next_info
        c.muted = "nomute" not in BUGS
        self.interest(c)
        self.server.requests.put(req)      # blocks when full: back pressure
        if "nomute" in BUGS:
            self.try_complete_receive(c)

    def start_send(self, req):
        c = req.conn
        req.t_resp_deq = now_ns()
        if c.closed:
            return
        if req.response is None:
            self.close(c)
            return
        c.wbuf = req.response
        c.sending = req
        self.do_write(c)

    def do_write(self, c):
        try:
            n = c.sock.send(c.wbuf)
        except BlockingIOError:
            n = 0
        except OSError:
            self.close(c)
            return
        c.wbuf = c.wbuf[n:]
        if c.wbuf:
            self.interest(c)
            return
        req = c.sending
        c.sending = None
        c.last_active = time.monotonic()
        self.server.broker.log_request(req, now_ns())
        c.muted = False
        self.interest(c)
        self.try_complete_receive(c)


class Broker:
    def __init__(self, conf):
        self.conf = conf
        self.node_id = conf["node.id"]
        self.cluster_id, self.dirs = format_dirs(conf)
        self.stopping = threading.Event()
        self.handlers_may_exit = False
        self.pool = MemoryPool(conf["queued.max.request.bytes"])
        self.quotas = Quotas(conf)
        self.log_lock = threading.Lock()
        self.log_file = None
        if conf["request.log.enable"]:
            path = conf["request.log.file"] or os.path.join(self.dirs[0], "samsa-request.log")
            self.log_file = sys.stderr if path == "stderr" else open(path, "a")
        ctl_names = set(n.strip().upper() for n in conf["controller.listener.names"].split(","))
        broker_l, ctl_l = [], []
        for (name, host, port) in conf["listeners"]:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((host or "0.0.0.0", port))
            except OSError as e:
                sys.stderr.write("ERROR cannot bind %s:%d: %s\n" % (host, port, e))
                sys.exit(1)
            s.listen(50)
            s.setblocking(False)
            (ctl_l if name in ctl_names else broker_l).append((name, host, port, s))
            if name not in ctl_names and not hasattr(self, "adv_host"):
                self.adv_host = host or socket.gethostname()
                self.adv_port = port
        self.servers = [SocketServer(self, broker_l, "broker", SUPPORTED)]
        if ctl_l and "onepool" not in BUGS:
            self.servers.append(SocketServer(self, ctl_l, "controller", CONTROLLER_SUPPORTED))

    def drained(self, processor):
        """True when nothing is queued or in flight for this processor."""
        if not processor.server.requests.empty() or not processor.responses.empty():
            return False
        return not any(c.muted for c in processor.conns.values())

    def log_request(self, req, t_done):
        if not self.log_file:
            return
        h = req.header
        total = t_done - req.t_recv
        line = {
            "requestHeader": {"requestApiKey": h["api_key"], "requestApiVersion": h["api_version"],
                              "correlationId": h["correlation_id"], "clientId": h["client_id"],
                              "requestApiKeyName": kwire.API_NAMES.get(h["api_key"], "UNKNOWN")},
            "connection": req.conn.id,
            "totalTimeMs": ms(total),
            "requestQueueTimeMs": ms(req.t_deq - req.t_recv),
            "localTimeMs": ms(req.t_local - req.t_deq),
            "remoteTimeMs": 0.0,
            "throttleTimeMs": 0,
            "responseQueueTimeMs": ms(req.t_resp_deq - req.t_local),
            "sendTimeMs": ms(t_done - req.t_resp_deq),
            "securityProtocol": "PLAINTEXT",
            "principal": "User:ANONYMOUS",
            "listener": req.processor.listener,
            "clientInformation": {"softwareName": req.client_info[0],
                                  "softwareVersion": req.client_info[1]},
        }
        with self.log_lock:
            self.log_file.write(json.dumps(line) + "\n")
            self.log_file.flush()


def main(argv):
    set_thread_name("samsa-server")
    try:
        conf = parse_args(argv)
    except (ConfigError, OSError) as e:
        sys.stderr.write("ERROR %s\n" % e)
        return 1
    broker = Broker(conf)
    done = threading.Event()

    def on_signal(signum, frame):
        broker.stopping.set()
        done.set()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    for s in broker.servers:
        s.start()
    sys.stderr.write("INFO samsa-server (fake) started, cluster id %s\n" % broker.cluster_id)
    sys.stderr.flush()
    while not done.wait(0.5):
        pass
    if "drop_inflight" in BUGS:
        os._exit(0)
    deadline = time.monotonic() + 10
    for s in broker.servers:
        for p in s.processors:
            p.thread.join(max(0.1, deadline - time.monotonic()))
    broker.handlers_may_exit = True
    sys.stderr.write("INFO samsa-server (fake) stopped\n")
    if "asan_report" in BUGS:
        sys.stderr.write("==1==ERROR: AddressSanitizer: heap-use-after-free (fake)\n")
    return 1 if "sigterm_rc" in BUGS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
