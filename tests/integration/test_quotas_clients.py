"""Real consumers under a consumer_byte_rate quota: librdkafka
(confluent-kafka), kafka-python and kafkajs each read a whole partition
through a default client-id fetch quota, every record once and in order,
while the broker throttles them (Kafka answers a throttled fetch empty,
with its ThrottleTimeMs, and shrinks a fetch to the quota window; the
clients must take both in their stride)."""

import json
import os
import select
import shutil
import subprocess
import time

import kwire
from samsa_harness import T
from test_quotas import alter, ok, scrape

NREC = 120                  # 10 KB each: 1.2 MB
RATE = 300000.0             # bytes per second per client id
JS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "js")


def value(i):
    return b"%06d" % i + b"v" * 9994


def start(samsa, topic):
    # two 1 s windows: a young rate counts over 1 s (11 windows would let
    # a new client read ~3 MB before its first throttle)
    srv = samsa.start({"quota.window.num": "2"})
    with srv.connect(timeout=T(10)) as c:
        assert c.create_topic(topic, 1, timeout=T(10))["error_code"] == 0
        c.wait_topic(topic, 1, timeout=T(10))
        for i in range(0, NREC, 10):
            p = c.produce(topic, 0, kwire.encode_batch(
                [kwire.Record(value(j)) for j in range(i, i + 10)]), timeout=T(10))
            assert p["error_code"] == 0, p
        ok(alter(c, [({"client-id": None}, [("consumer_byte_rate", RATE)])]))
    return srv


def check(srv, client_id, values, took):
    assert values == [value(i) for i in range(NREC)], \
        "%s: %d records, first wrong at %s" % (
            client_id, len(values),
            next((i for i, (a, b) in enumerate(zip(values, map(value, range(NREC))))
                  if a != b), None))
    thr = scrape(srv)["samsa_client_quota_throttled_requests_total"]
    assert thr.value(quota_type="Fetch", user="", client_id=client_id) > 0
    # 1.2 MB at 300 KB/s after a burst of at most one 300 KB window
    assert took >= 2.0, took


def test_confluent_kafka_consumer_under_fetch_quota(samsa):
    from confluent_kafka import Consumer, TopicPartition
    srv = start(samsa, "qrk")
    c = Consumer({"bootstrap.servers": srv.bootstrap(), "group.id": "unused",
                  "client.id": "rk-q", "enable.auto.commit": False})
    try:
        c.assign([TopicPartition("qrk", 0, 0)])
        got, t0 = [], time.monotonic()
        end = t0 + T(60)
        while time.monotonic() < end and len(got) < NREC:
            m = c.poll(0.2)
            if m is None:
                continue
            assert m.error() is None, m.error()
            got.append(m.value())
        took = time.monotonic() - t0
    finally:
        c.close()
    check(srv, "rk-q", got, took)


def test_kafka_python_consumer_under_fetch_quota(samsa):
    from kafka import KafkaConsumer, TopicPartition
    srv = start(samsa, "qkp")
    c = KafkaConsumer(bootstrap_servers=srv.bootstrap(), client_id="kp-q",
                      enable_auto_commit=False, group_id=None,
                      api_version_auto_timeout_ms=int(T(10) * 1000))
    try:
        c.assign([TopicPartition("qkp", 0)])
        c.seek(TopicPartition("qkp", 0), 0)
        got, t0 = [], time.monotonic()
        end = t0 + T(60)
        while time.monotonic() < end and len(got) < NREC:
            for recs in c.poll(timeout_ms=200).values():
                got.extend(r.value for r in recs)
        took = time.monotonic() - t0
    finally:
        c.close()
    check(srv, "kp-q", got, took)


def test_kafkajs_consumer_under_fetch_quota(samsa):
    node = shutil.which("node") or shutil.which("nodejs")
    assert node, "node is not installed (scripts/deps.sh installs it)"
    srv = start(samsa, "qjs")
    p = subprocess.Popen([node, "group_consumer.js", srv.bootstrap(), "qjs-g", "qjs"],
                         cwd=JS_DIR, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    got, t0 = [], time.monotonic()
    try:
        end = t0 + T(90)
        while time.monotonic() < end and len(got) < NREC:
            ready, _, _ = select.select([p.stdout], [], [], 0.5)
            if not ready:
                assert p.poll() is None, p.stderr.read()[-3000:]
                continue
            line = p.stdout.readline()
            if not line:
                break
            ev = json.loads(line)
            if "o" in ev:
                got.append(ev["v"].encode())
        took = time.monotonic() - t0
        p.stdin.write("stop\n")
        p.stdin.flush()
        p.wait(timeout=T(20))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    # group_consumer.js's client id; the join and sync before the first
    # fetch are in took, so it bounds the throttle from above only loosely
    check(srv, "samsa-kafkajs-group", got, took)
