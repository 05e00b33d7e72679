"""Start and stop a single-node Apache Kafka (4.4, KRaft combined mode) for
the differential tests (tests/diff) and for benchmarks that want the
reference broker beside samsa-server.

The broker runs from the jars that scripts/deps.sh fetched with Maven
(tests/diff/pom.xml: kafka_2.13 4.4.0 and what it needs, scala-library
included) into ${SAMSA_CACHE:-~/.cache/samsa}/maven/kafka-lib, with the
java on PATH.  Each broker gets a temporary directory with its
server.properties, a log4j2 configuration writing kafka.log, and its
log.dirs; it is formatted with Kafka's own StorageTool
(kafka.tools.StorageTool format, a random cluster id) and started as
kafka.Kafka on two free loopback ports (broker and controller listeners),
with a small heap.  start() waits until the broker answers ApiVersions and
Metadata lists it; stop() is SIGTERM, a bounded wait, then SIGKILL.  The
directory is removed after a clean stop unless keep=True (or
SAMSA_TEST_KEEP_DIRS is set); describe() gives the log's tail for a
failure report.

    kb = KafkaBroker.start(overrides={"auto.create.topics.enable": "false"})
    with kb.connect() as c:      # a kwire.Conn
        ...
    kb.stop()
"""

import base64
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "integration"))

import kwire  # noqa: E402
from samsa_harness import HOST, HarnessError, T, free_port  # noqa: E402

KAFKA_VERSION = "4.4.0"
HEAP = "-Xmx512m"

# Broker settings for a single quick node: one replica everywhere, no
# rebalance delay.  Callers add or replace keys with overrides.
DEFAULTS = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "num.partitions": "1",
    "default.replication.factor": "1",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
    "auto.create.topics.enable": "false",
}

LOG4J2 = """status = warn
appender.f.type = File
appender.f.name = F
appender.f.fileName = {log}
appender.f.layout.type = PatternLayout
appender.f.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.f.ref = F
"""


def cache_root():
    return os.environ.get("SAMSA_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "samsa")


def kafka_lib():
    """The folder of the broker's jars; a missing one fails the caller
    with what to run."""
    lib = os.path.join(cache_root(), "maven", "kafka-lib")
    if not glob.glob(os.path.join(lib, "kafka_2.13-%s.jar" % KAFKA_VERSION)):
        raise HarnessError("no kafka_2.13-%s.jar in %s: run scripts/deps.sh (it "
                           "fetches Apache Kafka's broker, tests/diff/pom.xml, "
                           "from Maven Central)" % (KAFKA_VERSION, lib))
    return lib


def java():
    path = shutil.which("java")
    if not path:
        raise HarnessError("no java on PATH: run scripts/deps.sh (it installs "
                           "openjdk-17-jdk-headless)")
    return path


def random_cluster_id():
    # Kafka's Uuid.randomUuid().toString(): URL-safe base64 of 16 bytes,
    # drawn again when it starts with '-' (as Kafka's does: a command line
    # would read it as an option)
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid


class KafkaBroker:
    """One Apache Kafka process in its own directory."""

    def __init__(self, workdir, overrides=None, heap=HEAP):
        self.workdir = workdir
        self.overrides = dict(overrides or {})
        self.heap = heap
        self.proc = None
        self.port = self.controller_port = None
        self.cluster_id = random_cluster_id()
        self.node_id = int(self.overrides.get("node.id", DEFAULTS["node.id"]))
        self.log_path = os.path.join(workdir, "kafka.log")
        self.out_path = os.path.join(workdir, "stdout.log")
        self.startup_seconds = None
        self.stopped = False
        self.keep = False

    # -- start ----------------------------------------------------------------
    @classmethod
    def start(cls, overrides=None, heap=HEAP, timeout=None, retries=3, tmp_root=None):
        """Formats and starts a broker on free ports; waits until it
        answers.  Returns the KafkaBroker, or raises HarnessError with the
        log's tail (the directory is kept)."""
        lib, jv = kafka_lib(), java()
        last = None
        for _ in range(retries):
            kb = cls(tempfile.mkdtemp(prefix="samsa-kafka-", dir=tmp_root),
                     overrides, heap)
            why = kb._launch(lib, jv, timeout or T(60))
            if why is None:
                return kb
            kb.keep = True
            kb.stop()
            last = "Apache Kafka did not start: %s\n%s" % (why, kb.describe())
            if "Address already in use" not in kb.log_text():
                break
        raise HarnessError(last)

    def _props(self):
        p = dict(DEFAULTS)
        p.update({
            "node.id": str(self.node_id),
            "controller.quorum.voters": "%d@%s:%d" % (self.node_id, HOST,
                                                      self.controller_port),
            "listeners": "PLAINTEXT://%s:%d,CONTROLLER://%s:%d" % (
                HOST, self.port, HOST, self.controller_port),
            "advertised.listeners": "PLAINTEXT://%s:%d" % (HOST, self.port),
            "log.dirs": os.path.join(self.workdir, "data"),
        })
        p.update(self.overrides)
        return p

    # hooks for a broker with more listeners (kafka_sasl.py): ports to
    # draw after the two above, and StorageTool format arguments
    def _more_ports(self):
        pass

    def format_args(self):
        return []

    def java_cmd(self, main, *args):
        log4j = os.path.join(self.workdir, "log4j2.properties")
        return [java(), self.heap, "-Xms64m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
                "-Dlog4j2.configurationFile=" + log4j,
                "-cp", os.path.join(kafka_lib(), "*"), main] + list(args)

    def _launch(self, lib, jv, timeout):
        t0 = time.monotonic()
        self.port = free_port()
        self.controller_port = free_port()
        while self.controller_port == self.port:
            self.controller_port = free_port()
        self._more_ports()
        props = os.path.join(self.workdir, "server.properties")
        with open(props, "w") as f:
            for k, v in sorted(self._props().items()):
                f.write("%s=%s\n" % (k, v))
        with open(os.path.join(self.workdir, "log4j2.properties"), "w") as f:
            f.write(LOG4J2.format(log=self.log_path))
        fmt = subprocess.run(
            self.java_cmd("kafka.tools.StorageTool", "format", "--cluster-id=" + self.cluster_id,
                          "-c", props, "--ignore-formatted", *self.format_args()),
            cwd=self.workdir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, timeout=T(60))
        with open(os.path.join(self.workdir, "format.log"), "wb") as f:
            f.write(fmt.stdout)
        if fmt.returncode != 0:
            return "StorageTool format exited %d: %s" % (
                fmt.returncode, fmt.stdout.decode(errors="replace")[-2000:])
        with open(self.out_path, "wb") as out:
            self.proc = subprocess.Popen(self.java_cmd("kafka.Kafka", props),
                                         cwd=self.workdir, stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=subprocess.STDOUT)
        why = self.wait_ready(timeout)
        self.startup_seconds = time.monotonic() - t0
        return why

    def wait_ready(self, timeout):
        """ApiVersions answers and Metadata lists this broker."""
        deadline = time.monotonic() + timeout
        last = "no attempt"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return "exited with status %s before it was ready" % self.proc.returncode
            try:
                with self.connect(timeout=1.0) as c:
                    r = c.api_versions(0, timeout=T(3))
                    if r["error_code"] != 0:
                        return "ApiVersions answered error %d" % r["error_code"]
                    md = c.metadata(1, [], timeout=T(3))
                    if any(b["node_id"] == self.node_id for b in md["brokers"]):
                        return None
                    last = "Metadata lists no broker %d yet" % self.node_id
            except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout,
                    kwire.ProtocolError) as e:
                last = "%s: %s" % (type(e).__name__, e)
            time.sleep(0.1)
        return "not ready within %.0f s (last: %s)" % (timeout, last)

    # -- use ------------------------------------------------------------------
    def connect(self, timeout=None, client_id="kwire"):
        return kwire.connect(HOST, self.port, timeout or T(5), client_id)

    def bootstrap(self):
        return "%s:%d" % (HOST, self.port)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log_text(self):
        out = ""
        for p in (os.path.join(self.workdir, "format.log"), self.out_path, self.log_path):
            try:
                with open(p, errors="replace") as f:
                    out += f.read()
            except OSError:
                pass
        return out

    def describe(self, n=60):
        tail = "\n".join(self.log_text().splitlines()[-n:])
        return ("Apache Kafka %s pid %s in %s (ports %s/%s)\n--- log tail ---\n%s\n"
                "--- end ---" % (KAFKA_VERSION, self.proc.pid if self.proc else None,
                                 self.workdir, self.port, self.controller_port, tail))

    # -- stop -----------------------------------------------------------------
    def stop(self, timeout=None):
        """SIGTERM, wait, SIGKILL.  Returns a list of problems (empty: it
        stopped cleanly, and its directory is gone unless kept)."""
        problems = []
        if self.stopped:
            return problems
        self.stopped = True
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=timeout or T(30))
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=T(10))
                    problems.append("Apache Kafka did not exit within 30 s of SIGTERM")
            else:
                problems.append("Apache Kafka had exited (status %s) before it was "
                                "stopped" % self.proc.returncode)
        if problems or self.keep or os.environ.get("SAMSA_TEST_KEEP_DIRS"):
            if problems:
                problems.append(self.describe())
        else:
            shutil.rmtree(self.workdir, ignore_errors=True)
        return problems


if __name__ == "__main__":
    # python3 tests/diff/kafka_broker.py: start one, print how long it took
    # and where it listens, stop it on Enter (or at once with --once)
    kb = KafkaBroker.start()
    print("Apache Kafka %s ready in %.1f s on %s (dir %s)" % (
        KAFKA_VERSION, kb.startup_seconds, kb.bootstrap(), kb.workdir), flush=True)
    if "--once" not in sys.argv:
        try:
            input()
        except (EOFError, KeyboardInterrupt):
            pass
    print("\n".join(kb.stop()) or "stopped")
