"""Real clients see the broker: kcat, confluent-kafka (librdkafka),
kafka-python and kafkajs each fetch cluster metadata."""

import json
import os
import re
import shutil
import subprocess

from samsa_harness import HOST, T

JS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "js")


def test_kcat_lists_the_broker(shared_server):
    server = shared_server
    r = subprocess.run(["kcat", "-b", server.bootstrap(), "-L", "-m", str(int(T(10)))],
                       capture_output=True, text=True, timeout=T(30))
    assert r.returncode == 0, "kcat -L failed:\n%s\n%s" % (r.stdout, r.stderr)
    assert re.search(r"^\s*1 brokers:", r.stdout, re.M), r.stdout
    assert re.search(r"broker 1 at %s:%d\b" % (re.escape(HOST), server.port), r.stdout), r.stdout
    assert "(controller)" in r.stdout, r.stdout


def test_confluent_kafka_list_topics(shared_server):
    server = shared_server
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": server.bootstrap(),
                         "socket.timeout.ms": int(T(10) * 1000)})
    md = admin.list_topics(timeout=T(10))
    assert set(md.brokers) == {1}
    b = md.brokers[1]
    assert (b.id, b.host, b.port) == (1, HOST, server.port)
    assert md.cluster_id == server.cluster_id()
    assert md.controller_id == 1
    assert md.topics == {}


def test_kafka_python_describe_cluster(shared_server):
    server = shared_server
    from kafka import KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap(),
                             api_version_auto_timeout_ms=int(T(5) * 1000),
                             request_timeout_ms=int(T(10) * 1000))
    try:
        d = admin.describe_cluster()
    finally:
        admin.close()
    assert d["brokers"] == [{"node_id": 1, "host": HOST, "port": server.port, "rack": None}]
    assert d["controller_id"] == 1
    assert d["cluster_id"] == server.cluster_id()


def test_kafkajs_describe_cluster(shared_server):
    server = shared_server
    node = shutil.which("node") or shutil.which("nodejs")
    assert node, "node is not installed (scripts/deps.sh installs it)"
    assert os.path.isdir(os.path.join(JS_DIR, "node_modules", "kafkajs")), \
        "kafkajs is not installed in %s/node_modules (npm ci there)" % JS_DIR
    r = subprocess.run([node, "describe_cluster.js", server.bootstrap(), str(int(T(10) * 1000))],
                       cwd=JS_DIR, capture_output=True, text=True, timeout=T(30))
    assert r.returncode == 0, "kafkajs failed:\n%s\n%s" % (r.stdout, r.stderr)
    d = json.loads(r.stdout.strip().splitlines()[-1])
    assert d["brokers"] == [{"nodeId": 1, "host": HOST, "port": server.port}]
    assert d["controller"] == 1
    assert d["clusterId"] == server.cluster_id()
