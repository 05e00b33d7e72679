"""Run-time reconfiguration of the network threads (num.network.threads,
Kafka's DataPlaneAcceptor.reconfigure) through IncrementalAlterConfigs on
the BROKER resource (raw protocol) and AlterConfigs (kafka-python): every
listener's acceptor adds or removes network threads while a confluent_kafka
producer keeps producing with every record acknowledged; a removed thread's
connections are closed after their answers and their clients reconnect;
its per-thread metrics go; Kafka's half-to-double rule refuses 3 -> 7 (and
6 -> 2) with INVALID_CONFIG (the KAFKA-13609 intent; Kafka 3.x answers
INVALID_REQUEST); DescribeConfigs shows the
dynamic value and its source; the value survives a restart."""

import re
import threading
import time
import urllib.request

import pytest

import kwire
import samsa_harness
from samsa_harness import T, set_broker

BROKER = kwire.RESOURCE_BROKER
OP_DELETE = 1
SRC_DYNAMIC_BROKER, SRC_STATIC = 2, 4


def network_ids(srv, port):
    """Ids of the network threads of the listener on port (names are
    network-<port>-<id>, cut at 15 characters by Linux)."""
    prefix = "network-%d-" % port
    return sorted(int(n[len(prefix):]) for n in srv.thread_names()
                  if n.startswith(prefix) and n[len(prefix):].isdigit())


def threads_are(srv, broker_ids, controller_count):
    """The broker listener runs exactly the threads broker_ids and the
    controller listener controller_count of them (Kafka applies the value
    to every listener)."""
    def ok():
        return (network_ids(srv, srv.port) == broker_ids
                and len(network_ids(srv, srv.controller_port)) == controller_count)
    return samsa_harness.wait_until(ok, T(15), interval=0.05)


def describe(conn, key, synonyms=False):
    res = conn.describe_configs([(BROKER, "1", [key])],
                                include_synonyms=synonyms)[0]
    assert res["error_code"] == 0, res
    return {e["name"]: e for e in res["configs"]}.get(key)


def processor_series(srv):
    """Broker-listener processor ids that /metrics shows per thread."""
    with urllib.request.urlopen(srv.metrics_url("/metrics"), timeout=T(10)) as r:
        text = r.read().decode()
    return sorted({int(m) for m in re.findall(
        r'samsa_network_processor_idle_seconds_total\{server="broker",'
        r'listener="[^"]*",processor="(\d+)"\}', text)})


def status_threads(srv):
    import json
    with urllib.request.urlopen(srv.metrics_url("/api/status"), timeout=T(10)) as r:
        doc = json.loads(r.read().decode())
    return {s["server"]: (s["network_threads"], s["io_threads"])
            for s in doc["servers"]}


class Producer(threading.Thread):
    """confluent_kafka, acks=all, idempotent: produces until stopped, a
    record every 2 ms; every delivery report is counted (librdkafka retries
    what a closed connection interrupted)."""

    def __init__(self, srv, topic):
        super().__init__(daemon=True)
        from confluent_kafka import Producer as CkProducer
        self.p = CkProducer({"bootstrap.servers": srv.bootstrap(),
                             "acks": "all", "enable.idempotence": True,
                             "linger.ms": 2, "message.timeout.ms": 60000})
        self.topic = topic
        self.sent = 0
        self.acked = 0
        self.failed = []
        self.stop_event = threading.Event()

    def report(self, err, msg):
        if err is not None:
            self.failed.append(str(err))
        else:
            self.acked += 1

    def run(self):
        while not self.stop_event.is_set():
            self.p.produce(self.topic, value=b"r%d" % self.sent,
                           partition=0, on_delivery=self.report)
            self.sent += 1
            self.p.poll(0.002)

    def finish(self):
        self.stop_event.set()
        self.join(T(20))
        assert not self.is_alive()
        left = self.p.flush(T(60))
        assert left == 0, "%d records not delivered" % left
        self.p = None                   # no reconnecting after the test

    def progresses(self, n=20):
        start = self.acked
        return samsa_harness.wait_until(lambda: self.acked >= start + n, T(15))


@pytest.fixture
def srv(samsa):
    return samsa.start({"num.io.threads": "8", "num.network.threads": "3"})


def test_network_threads_resize_while_producing(srv, samsa):
    topic = "reconf-net"
    with srv.connect(timeout=T(10)) as conn:
        assert conn.create_topic(topic)["error_code"] == 0
        assert threads_are(srv, [0, 1, 2], 3), srv.thread_names()
        e = describe(conn, "num.network.threads")
        assert (e["value"], e["source"], e["read_only"]) == ("3", SRC_STATIC, False)
        assert status_threads(srv) == {"broker": (3, 8), "controller": (3, 8)}

        prod = Producer(srv, topic)
        prod.start()
        assert prod.progresses()

        # 3 -> 6: three threads more on each listener (new ids, as Kafka's)
        assert set_broker(conn, "num.network.threads", "6") == (0, None)
        assert threads_are(srv, [0, 1, 2, 3, 4, 5], 6), srv.thread_names()
        assert processor_series(srv) == [0, 1, 2, 3, 4, 5]
        assert status_threads(srv)["broker"] == (6, 8)
        assert prod.progresses()

        # new connections go round robin onto all six
        conns = [kwire.connect(samsa_harness.HOST, srv.port, timeout=T(10))
                 for _ in range(12)]
        for c in conns:
            assert c.api_versions(timeout=T(10))["error_code"] == 0

        # 6 -> 2 is less than half: refused, as Kafka (INVALID_CONFIG)
        code, msg = set_broker(conn, "num.network.threads", "2")
        assert code == kwire.ERR_INVALID_CONFIG, (code, msg)
        assert msg == ("Dynamic thread count update validation failed for "
                       "num.network.threads=2, value should be at least half "
                       "the current value 6")

        # 6 -> 3: the last three go; their connections close after their
        # answers, the others keep working, closed clients reconnect
        assert set_broker(conn, "num.network.threads", "3") == (0, None)
        assert threads_are(srv, [0, 1, 2], 3), srv.thread_names()
        assert processor_series(srv) == [0, 1, 2]
        open_after = [c.is_open(wait=0.2) for c in conns]
        assert 0 < open_after.count(False) < len(conns), open_after
        for c, is_open in zip(conns, open_after):
            if is_open:
                assert c.api_versions(timeout=T(10))["error_code"] == 0
            c.close()
        with srv.connect(timeout=T(10)) as again:
            assert again.api_versions(timeout=T(10))["error_code"] == 0
        assert prod.progresses()

        # 3 -> 7 is more than double: refused, nothing changes
        code, msg = set_broker(conn, "num.network.threads", "7")
        assert code == kwire.ERR_INVALID_CONFIG, (code, msg)
        assert msg == ("Dynamic thread count update validation failed for "
                       "num.network.threads=7, value should not be greater "
                       "than double the current value 3")
        code, msg = set_broker(conn, "num.network.threads", "0")
        assert code == kwire.ERR_INVALID_CONFIG
        assert msg.endswith("value should be at least 1")
        assert network_ids(srv, srv.port) == [0, 1, 2]

        # 3 -> 2
        assert set_broker(conn, "num.network.threads", "2") == (0, None)
        assert threads_are(srv, [0, 1], 2), srv.thread_names()
        assert status_threads(srv)["broker"] == (2, 8)
        assert prod.progresses()

        # num.io.threads on the way (8 -> 4 -> 2 -> 4 -> 8) while the
        # network threads are 2
        for n in ("4", "2", "4", "8"):
            assert set_broker(conn, "num.io.threads", n) == (0, None)
            assert samsa_harness.wait_until(
                lambda: status_threads(srv)["broker"] == (2, int(n)), T(10))
            assert prod.progresses(10)

        e = describe(conn, "num.network.threads", synonyms=True)
        assert (e["value"], e["source"], e["read_only"]) == (
            "2", SRC_DYNAMIC_BROKER, False)
        assert [(s["value"], s["source"]) for s in e["synonyms"]] == [
            ("2", SRC_DYNAMIC_BROKER), ("3", SRC_STATIC)]

        prod.finish()
        assert prod.failed == [], prod.failed[:5]
        assert prod.acked == prod.sent and prod.sent > 0
        # idempotent: the log holds each acknowledged record once
        assert conn.list_offsets(topic, 0, -1)["offset"] == prod.acked

    # the value survives a restart: two threads from the start
    assert srv.stop() == []
    over = {k: v for k, v in srv.overrides.items() if k != "listeners"}
    srv2 = samsa.start(overrides=over, workdir=srv.workdir)
    assert threads_are(srv2, [0, 1], 2), srv2.thread_names()
    with srv2.connect(timeout=T(10)) as conn:
        e = describe(conn, "num.network.threads")
        assert (e["value"], e["source"]) == ("2", SRC_DYNAMIC_BROKER)
        # DELETE falls back to the static 3 (2 -> 3 is within double)
        assert set_broker(conn, "num.network.threads", None, op=OP_DELETE) == (0, None)
        assert samsa_harness.wait_until(
            lambda: len(network_ids(srv2, srv2.port)) == 3, T(15))
        e = describe(conn, "num.network.threads")
        assert (e["value"], e["source"]) == ("3", SRC_STATIC)


def test_alter_configs_with_kafka_python(srv):
    """kafka-python's alter_configs sends AlterConfigs: the broker's whole
    set is replaced."""
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=srv.bootstrap(),
                             request_timeout_ms=int(T(10) * 1000))
    try:
        r = admin.alter_configs([ConfigResource(
            ConfigResourceType.BROKER, "1",
            configs={"num.network.threads": "5"})])
        assert [res[0] for res in r.resources] == [0], r
        assert threads_are(srv, [0, 1, 2, 3, 4], 5), srv.thread_names()
        r = admin.alter_configs([ConfigResource(
            ConfigResourceType.BROKER, "1",
            configs={"num.network.threads": "11"})])
        code, msg = r.resources[0][0], r.resources[0][1]
        assert code == kwire.ERR_INVALID_CONFIG, r
        assert msg.endswith("not be greater than double the current value 5")
        # an empty set removes the dynamic value: back to the static 3
        r = admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "1",
                                                configs={})])
        assert [res[0] for res in r.resources] == [0], r
        assert threads_are(srv, [0, 1, 2], 3), srv.thread_names()
    finally:
        admin.close()


def test_removed_thread_answers_requests_in_flight(srv):
    """A long-polling Fetch read by a thread that is then removed is still
    answered (the thread drains), and only then is its connection closed;
    the connections of the threads that stay are untouched."""
    topic = "reconf-net-inflight"
    wait_ms = int(T(2) * 1000)
    with srv.connect(timeout=T(10)) as admin:
        assert admin.create_topic(topic)["error_code"] == 0
        assert set_broker(admin, "num.network.threads", "6") == (0, None)
        assert threads_are(srv, [0, 1, 2, 3, 4, 5], 6), srv.thread_names()
        # the round robin restarts at the first thread after a resize:
        # six new connections land on threads 0..5
        conns = [kwire.connect(samsa_harness.HOST, srv.port, timeout=T(10))
                 for _ in range(6)]
        for k, c in enumerate(conns):
            assert c.api_versions(timeout=T(10))["error_code"] == 0
            c.send(kwire.fetch_request(4, 100 + k, [(topic, [(0, 0, 1 << 20)])],
                                       max_wait_ms=wait_ms), T(10))
        time.sleep(0.2)                 # the fetches wait in the purgatory
        assert set_broker(admin, "num.network.threads", "3") == (0, None)
        # removed from the round robin at once, but still running: each
        # holds an answer to write
        assert samsa_harness.wait_until(
            lambda: status_threads(srv)["broker"][0] == 3, T(5))
        assert network_ids(srv, srv.port) == [0, 1, 2, 3, 4, 5]
        for k, c in enumerate(conns):
            r = kwire.decode_fetch_response(c.recv_frame(T(20)), 4)
            assert r["correlation_id"] == 100 + k
            assert r["topics"][0]["partitions"][0]["error_code"] == 0
        assert threads_are(srv, [0, 1, 2], 3), srv.thread_names()
        open_after = [c.is_open(wait=0.2) for c in conns]
        assert open_after == [True, True, True, False, False, False], open_after
        for c in conns[:3]:
            assert c.api_versions(timeout=T(10))["error_code"] == 0
        for c in conns:
            c.close()


def test_resize_churn_under_load(srv):
    """Threads added and removed again and again while raw clients produce
    and read metadata and /metrics is scraped (the concurrency of removal:
    run it under TSan).  Every answer matches its request; what a closed
    connection interrupted is counted, and the log holds every acknowledged
    record plus at most the interrupted ones."""
    topic = "reconf-net-churn"
    stop = threading.Event()
    stats = {"acked": 0, "cut": 0, "errors": []}
    lock = threading.Lock()

    def client(k):
        conn = None
        while not stop.is_set():
            sent = False
            try:
                if conn is None:
                    conn = kwire.connect(samsa_harness.HOST, srv.port,
                                         timeout=T(10), client_id="churn-%d" % k)
                assert conn.metadata(timeout=T(10))["brokers"]
                sent = True
                p = conn.produce(topic, 0, kwire.encode_batch(
                    [kwire.Record(b"c%d" % k)]), timeout=T(10))
                with lock:
                    if p["error_code"] != 0:
                        stats["errors"].append(kwire.error_name(p["error_code"]))
                    else:
                        stats["acked"] += 1
            except (kwire.ConnectionClosed, OSError):
                with lock:
                    stats["cut"] += 1 if sent else 0
                if conn is not None:
                    conn.close()
                conn = None
            except Exception as e:      # a wrong answer: report it
                with lock:
                    stats["errors"].append(repr(e))
                return
        if conn is not None:
            conn.close()

    def scraper():
        while not stop.is_set():
            processor_series(srv)
            status_threads(srv)
            time.sleep(0.05)

    with srv.connect(timeout=T(10)) as admin:
        assert admin.create_topic(topic)["error_code"] == 0
        workers = [threading.Thread(target=client, args=(k,), daemon=True)
                   for k in range(6)]
        workers.append(threading.Thread(target=scraper, daemon=True))
        for w in workers:
            w.start()
        try:
            for n in ("6", "3", "5", "3", "6", "4", "2", "4", "3"):
                assert set_broker(admin, "num.network.threads", n) == (0, None)
                assert samsa_harness.wait_until(
                    lambda: status_threads(srv)["broker"][0] == int(n), T(10))
                before = stats["acked"]
                assert samsa_harness.wait_until(
                    lambda: stats["acked"] > before + 5 or stats["errors"], T(15))
        finally:
            stop.set()
            for w in workers:
                w.join(T(30))
        assert not any(w.is_alive() for w in workers)
        assert stats["errors"] == [], stats["errors"][:5]
        # ids are never reused (3 -> 6 adds 3..5, 6 -> 3 takes them away,
        # 3 -> 5 adds 6, 7 ...: 0, 1 and 11 are left), and a 16-character
        # name such as network-50269-11 is cut to 15 by Linux: count them
        assert samsa_harness.wait_until(
            lambda: (len(network_ids(srv, srv.port)),
                     len(network_ids(srv, srv.controller_port))) == (3, 3),
            T(15)), srv.thread_names()
        assert processor_series(srv) == [0, 1, 11]
        end = admin.list_offsets(topic, 0, -1)["offset"]
        assert stats["acked"] <= end <= stats["acked"] + stats["cut"], (stats, end)
