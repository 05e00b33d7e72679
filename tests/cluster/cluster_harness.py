"""A KRaft cluster of samsa-server processes on loopback ports, for the
tests of tests/cluster: every node is formatted with one cluster id
(`samsa-server format`), runs process.roles=broker,controller with the
same controller.quorum.voters, and is started and stopped through the
integration harness (samsa_harness.ServerFactory: SIGTERM at teardown,
sanitizer reports fail the test).  Every wait is bounded."""

import os
import signal
import subprocess
import time
import urllib.request

import kwire
import promtext
import samsa_harness
from samsa_harness import HOST, T


API_DESCRIBE_QUORUM = 55
kwire.FLEXIBLE_FROM.setdefault(API_DESCRIBE_QUORUM, 0)     # flexible from v0


def encode_describe_quorum_request(topic="__cluster_metadata", partition=0):
    w = kwire.Writer()

    def part(ww, p):
        ww.i32(p).tags()

    def top(ww, t):
        ww.string(t, flexible=True).array([partition], part, flexible=True).tags()
    w.array([topic], top, flexible=True)
    return w.tags().bytes()


def decode_describe_quorum_body(r, version):
    """Kafka's DescribeQuorumResponse v0-v2 as a dict."""
    out = {"error_code": r.i16()}
    if version >= 2:
        out["error_message"] = r.string(flexible=True, nullable=True)

    def replica(rr):
        x = {"replica_id": rr.i32()}
        if version >= 2:
            x["replica_directory_id"] = rr.uuid()
        x["log_end_offset"] = rr.i64()
        if version >= 1:
            x["last_fetch_timestamp"] = rr.i64()
            x["last_caught_up_timestamp"] = rr.i64()
        rr.tags()
        return x

    def partition(rr):
        p = {"partition_index": rr.i32(), "error_code": rr.i16()}
        if version >= 2:
            p["error_message"] = rr.string(flexible=True, nullable=True)
        p["leader_id"] = rr.i32()
        p["leader_epoch"] = rr.i32()
        p["high_watermark"] = rr.i64()
        p["current_voters"] = rr.array(replica, flexible=True)
        p["observers"] = rr.array(replica, flexible=True)
        rr.tags()
        return p

    def topic(rr):
        t = {"topic_name": rr.string(flexible=True),
             "partitions": rr.array(partition, flexible=True)}
        rr.tags()
        return t
    out["topics"] = r.array(topic, flexible=True)
    if version >= 2:
        def listener(rr):
            x = {"name": rr.string(flexible=True), "host": rr.string(flexible=True),
                 "port": int.from_bytes(rr._take(2), "big")}
            rr.tags()
            return x

        def node(rr):
            n = {"node_id": rr.i32(), "listeners": rr.array(listener, flexible=True)}
            rr.tags()
            return n
        out["nodes"] = r.array(node, flexible=True)
    r.tags()
    return out


def describe_quorum(conn, version=2, timeout=5.0, **kw):
    r = conn.request_raw(API_DESCRIBE_QUORUM, version,
                         encode_describe_quorum_request(**kw), timeout)
    out = decode_describe_quorum_body(r, version)
    r.done("DescribeQuorum v%d response" % version)
    return out


def run_cmd(args):
    r = subprocess.run([samsa_harness.server_binary()] + list(args),
                       env=samsa_harness.base_env(), stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=T(20))
    return r.returncode, r.stdout, r.stderr


def sigstop(proc, timeout=None):
    """SIGSTOP proc and wait (bounded) until every thread of it is stopped:
    kill() returns before the group stop has reached the threads, and on a
    loaded machine a follower's fetcher can still fetch a record produced
    right after it (seen: an acks=all answered by a "stopped" follower)."""
    proc.send_signal(signal.SIGSTOP)
    deadline = time.monotonic() + (timeout if timeout is not None else T(5))
    task_dir = "/proc/%d/task" % proc.pid
    while True:
        states = []
        for tid in os.listdir(task_dir):
            try:
                with open(os.path.join(task_dir, tid, "stat")) as f:
                    # the state follows the parenthesised command name
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
            except (FileNotFoundError, ProcessLookupError):
                continue                # a thread that just ended
        if states and all(st in ("T", "t") for st in states):
            return
        if time.monotonic() >= deadline:
            raise AssertionError("pid %d not stopped within the timeout: "
                                 "thread states %s" % (proc.pid, states))
        time.sleep(0.001)


def random_cluster_id():
    rc, out, err = run_cmd(["random-cluster-id"])
    assert rc == 0, err
    return out.strip()


def distinct_ports(n):
    ports = set()
    while len(ports) < n:
        ports.add(samsa_harness.free_port())
    return list(ports)


class Node:
    def __init__(self, node_id, workdir, overrides, ports, roles="broker,controller"):
        self.node_id = node_id
        self.workdir = workdir
        self.overrides = overrides
        self.ports = ports              # (broker, controller); None: no such listener
        self.roles = roles
        self.srv = None

    def alive(self):
        return self.srv is not None and self.srv.alive()

    def is_broker(self):
        return self.ports[0] is not None

    def connect(self, timeout=None, controller=False):
        return kwire.connect(HOST, self.ports[1 if controller else 0], timeout or T(5))


class Cluster:
    """n nodes; with brokers=0 (the default) n combined nodes
    (process.roles=broker,controller, node ids 1..n, all voters); with
    brokers=B, n controller-only nodes (process.roles=controller, only a
    CONTROLLER listener, node ids 1..n, the voters) and B broker-only nodes
    (process.roles=broker, only a PLAINTEXT listener, node ids n+1..n+B,
    quorum observers)."""

    def __init__(self, samsa, n=3, election_timeout_ms=1000, extra=None, brokers=0,
                 env=None):
        self.samsa = samsa
        self.env = env              # SAMSA_TEST_* hooks: samsa-server-faults
        self.cluster_id = random_cluster_id()
        ports = distinct_ports(2 * n + brokers)
        self.voters = ",".join("%d@%s:%d" % (i + 1, HOST, ports[2 * i + 1])
                               for i in range(n))
        self.nodes = {}
        for i in range(n + brokers):
            node_id = i + 1
            d = samsa.new_dir()
            if i >= n:
                roles = "broker"
                nports = (ports[2 * n + (i - n)], None)
                listeners = "PLAINTEXT://%s:%d" % (HOST, nports[0])
            elif brokers:
                roles = "controller"
                nports = (None, ports[2 * i + 1])
                listeners = "CONTROLLER://%s:%d" % (HOST, nports[1])
            else:
                roles = "broker,controller"
                nports = (ports[2 * i], ports[2 * i + 1])
                listeners = "PLAINTEXT://%s:%d,CONTROLLER://%s:%d" % (
                    HOST, nports[0], HOST, nports[1])
            o = {
                "process.roles": roles,
                "node.id": str(node_id),
                "controller.quorum.voters": self.voters,
                "listeners": listeners,
                "controller.listener.names": "CONTROLLER",
                "log.dirs": os.path.join(d, "data"),
                "controller.quorum.election.timeout.ms": str(election_timeout_ms),
            }
            o.update(extra or {})
            args = ["format", "--cluster-id", self.cluster_id]
            for k, v in o.items():
                args += ["--override", "%s=%s" % (k, v)]
            rc, _, err = run_cmd(args)
            assert rc == 0, err
            self.nodes[node_id] = Node(node_id, d, o, nports, roles)

    # -- life --------------------------------------------------------------
    def start(self, node_id):
        node = self.nodes[node_id]
        if node.roles == "broker,controller":
            node.srv = self.samsa.start(overrides=dict(node.overrides),
                                        workdir=node.workdir, use_ports=False,
                                        ports=node.ports, retries=1,
                                        env=self.env)
            return node
        # one listener only: the harness's wait_ready wants both
        node.srv = self.samsa.start(overrides=dict(node.overrides), workdir=node.workdir,
                                    use_ports=False, ports=node.ports, wait=False,
                                    env=self.env)
        deadline = time.monotonic() + T(15)
        last = None
        while time.monotonic() < deadline:
            if not node.srv.alive():
                raise samsa_harness.HarnessError("node %d exited before it was ready\n%s"
                                                 % (node_id, node.srv.describe()))
            try:
                with node.connect(timeout=1.0, controller=not node.is_broker()) as c:
                    r = c.api_versions(0, timeout=T(3))
                    assert r["error_code"] == 0, r
                return node
            except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout,
                    kwire.ProtocolError) as e:
                last = "%s: %s" % (type(e).__name__, e)
            time.sleep(0.05)
        raise samsa_harness.HarnessError("node %d not ready (last: %s)\n%s"
                                         % (node_id, last, node.srv.describe()))

    def start_all(self):
        # all launched first: none can be ready (answer) before it knows a
        # quorum exists, but wait_ready only needs the listeners
        for node_id in self.nodes:
            self.start(node_id)

    def kill(self, node_id):
        """SIGKILL (kill -9); the harness does not count it as a problem."""
        srv = self.nodes[node_id].srv
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait(timeout=T(10))
        srv.stopped = True

    def live(self):
        return [n for n in self.nodes.values() if n.alive()]

    def live_brokers(self):
        """The live nodes with a broker listener (they answer Metadata)."""
        return [n for n in self.live() if n.is_broker()]

    # -- the Kafka protocol view ------------------------------------------
    def metrics(self, node_id):
        """The node's /metrics, parsed (promtext.parse)."""
        url = self.nodes[node_id].srv.metrics_url("/metrics")
        with urllib.request.urlopen(url, timeout=T(10)) as r:
            return promtext.parse(r.read().decode())

    def metric(self, node_id, name, **labels):
        return self.metrics(node_id)[name].value(**labels)

    def metadata(self, node_id, topics=None):
        with self.nodes[node_id].connect() as c:
            return c.metadata(version=12, topics=topics)

    def controller_id(self, node_id):
        return self.metadata(node_id, topics=[])["controller_id"]

    def wait_leader(self, timeout, exclude=()):
        """The active controller every live node agrees on (Metadata's
        ControllerId), waited for at most timeout seconds."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                ids = {n.node_id: self.controller_id(n.node_id)
                       for n in self.live_brokers()}
                last = ids
                vals = set(ids.values())
                if len(vals) == 1:
                    leader = vals.pop()
                    if leader >= 0 and leader not in exclude:
                        return leader
            except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout,
                    kwire.ProtocolError) as e:
                last = "%s: %s" % (type(e).__name__, e)
            time.sleep(0.02)
        raise samsa_harness.HarnessError("no agreed leader within %.1f s (last: %s)"
                                         % (timeout, last))

    def wait_quorum_leader(self, timeout, exclude=()):
        """The raft leader (the active controller) every live broker's
        DescribeQuorum (forwarded to the active controller) agrees on, at
        most timeout seconds.  For clusters whose controllers are no
        brokers: their Metadata ControllerId is a broker (Kafka's)."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                ids = {}
                for n in self.live_brokers():
                    with n.connect() as c:
                        dq = describe_quorum(c, version=2)
                    ids[n.node_id] = (dq["topics"][0]["partitions"][0]["leader_id"]
                                      if dq["error_code"] == 0 else -1)
                last = ids
                vals = set(ids.values())
                if len(vals) == 1:
                    leader = vals.pop()
                    if leader >= 0 and leader not in exclude:
                        return leader
            except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout,
                    kwire.ProtocolError, IndexError) as e:
                last = "%s: %s" % (type(e).__name__, e)
            time.sleep(0.02)
        raise samsa_harness.HarnessError("no agreed quorum leader within %.1f s "
                                         "(last: %s)" % (timeout, last))

    def wait_unfenced(self, timeout):
        """Waits until every live node's Metadata lists every live node's
        broker (registered and unfenced by its first heartbeat)."""
        want = {n.node_id for n in self.live_brokers()}
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                last = {n.node_id: {b["node_id"] for b in
                                    self.metadata(n.node_id, topics=[])["brokers"]}
                        for n in self.live_brokers()}
                if all(want <= v for v in last.values()):
                    return
            except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout,
                    kwire.ProtocolError) as e:
                last = "%s: %s" % (type(e).__name__, e)
            time.sleep(0.05)
        raise samsa_harness.HarnessError("brokers not unfenced within %.1f s "
                                         "(last: %s)" % (timeout, last))

    def create_topic(self, node_id, name, partitions=1):
        with self.nodes[node_id].connect() as c:
            return c.create_topic(name, num_partitions=partitions, timeout=T(10))

    def topics(self, node_id):
        """{name: (topic_id, partition count)} of node's Metadata."""
        md = self.metadata(node_id, topics=None)
        return {t["name"]: (t["topic_id"], len(t["partitions"]))
                for t in md["topics"] if t["error_code"] == 0}

    def wait_topics_equal(self, names, timeout, nodes=None):
        """Waits until every node (live ones by default) lists the same id
        for each name; returns {name: id}."""
        deadline = time.monotonic() + timeout
        last = None
        nodes = nodes or [n.node_id for n in self.live_brokers()]
        while time.monotonic() < deadline:
            views = {i: self.topics(i) for i in nodes}
            last = views
            ok = True
            ids = {}
            for name in names:
                seen = {views[i].get(name, (None,))[0] for i in nodes}
                if len(seen) != 1 or None in seen:
                    ok = False
                    break
                ids[name] = seen.pop()
            if ok:
                return ids
            time.sleep(0.05)
        raise samsa_harness.HarnessError("topics %s not alike on nodes %s within "
                                         "%.1f s: %s" % (names, nodes, timeout, last))
