"""The `samsa` tool's topic, produce and cluster commands against
samsa-server, checked against confluent_kafka's own view of the cluster:

- `topic create|list|describe|delete|alter-config|create-partitions|
  delete-records` (table and --json output), `produce` (keys, headers,
  partition, acks, compression, --file), `cluster info`;
- usage errors exit 2 and name the flag; failed operations (unknown topic,
  existing topic, bad partition) exit 1 with Kafka's error name; an
  unreachable broker exits 3 within the connect timeout;
- -b anywhere after the command words, SAMSA_BOOTSTRAP, --command-config.
"""

import socket

import pytest

import samsa_harness
from cli_util import ok, run
from samsa_harness import HOST, T


@pytest.fixture(scope="module")
def srv(samsa_module, tmp_path_factory):
    log = str(tmp_path_factory.mktemp("reqlog") / "requests.log")
    s = samsa_module.start({"request.log.enable": "true",
                            "request.log.file": log})
    s.reqlog = log
    return s


def apis_used(srv, client_id="samsa-admin"):
    """API names of the requests the admin client sent so far (the
    request log, one JSON line per request)."""
    import json
    out = []
    with open(srv.reqlog) as f:
        for line in f.read().split("\n"):
            try:
                h = json.loads(line)["requestHeader"]
            except ValueError:
                continue                # empty, or still being written
            if h.get("clientId") == client_id:
                out.append(h["requestApiKeyName"])
    return out


def wait_api(srv, since, name):
    """The request log shows name among the admin requests after the
    first `since`; returns those requests."""
    samsa_harness.wait_until(lambda: name in apis_used(srv)[since:], T(5))
    return apis_used(srv)[since:]


def admin(bs):
    from confluent_kafka.admin import AdminClient
    return AdminClient({"bootstrap.servers": bs})


def topic_configs(bs, topic):
    from confluent_kafka.admin import ConfigResource
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    a = admin(bs)                       # alive until the result is in
    cfg = a.describe_configs([res])[res].result(T(20))
    return {k: v.value for k, v in cfg.items()}


def partitions(bs, topic):
    # all topics: asking for one by name would auto-create it
    md = admin(bs).list_topics(timeout=T(10))
    t = md.topics.get(topic)
    return None if t is None or t.error is not None else len(t.partitions)


def closed_port():
    s = socket.socket()
    s.bind((HOST, 0))
    port = s.getsockname()[1]
    s.close()
    return port


# -- usage errors (exit 2), help -----------------------------------------------

def test_help_and_usage_errors(srv):
    bs = srv.bootstrap()
    r = ok("topic", "create", "--help")
    assert "--partitions" in r.out and "--replication-factor" in r.out
    for args in (["topic", "--help"], ["group", "describe", "--help"],
                 ["produce", "--help"], ["cluster", "info", "--help"]):
        assert ok(*args).out.startswith("usage:")
    cases = [
        (["topic", "create", "t", "--bogus"], "'--bogus'"),
        (["topic", "create", "t", "--partitions"], "'--partitions'"),
        (["topic", "create", "t", "--partitions", "--if-not-exists"],
         "'--partitions'"),
        (["topic", "create", "t", "--partitions", "abc"], "--partitions"),
        (["topic", "create", "t", "--partitions", "0"], "--partitions"),
        (["topic", "create", "t", "--config", "novalue"], "--config"),
        (["topic", "create"], "missing argument"),
        (["topic", "frobnicate"], "frobnicate"),
        (["frobnicate"], "frobnicate"),
        (["topic"], "missing command"),
        (["group", "reset-offsets", "g", "--topic", "t"], "--to-earliest"),
        (["group", "reset-offsets", "g", "--topic", "t", "--to-latest",
          "--dry-run", "--execute"], "--execute"),
        (["group", "reset-offsets", "g", "--topic", "t", "--to-datetime",
          "yesterday"], "--to-datetime"),
        (["produce", "t", "--partition", "-1"], "--partition"),
        (["topic", "alter-config", "t"], "--set"),
        (["topic", "list", "--timeout", "x"], "--timeout"),
        (["cluster", "info", "extra"], "'extra'"),
    ]
    for args, needle in cases:
        r = run(*args, bootstrap=bs)
        assert r.rc == 2, (args, r)
        assert needle in r.err, (args, r)
    # no bootstrap server from anywhere
    r = run("topic", "list")
    assert r.rc == 2 and "SAMSA_BOOTSTRAP" in r.err, r
    r = run("produce", "t", "--compression", "brotli", "-b", bs, stdin="x\n")
    assert r.rc == 2 and "compression.type" in r.err, r


def test_unreachable_broker_exits_3_quickly(srv):
    bad = "%s:%d" % (HOST, closed_port())
    for args in (["topic", "list"], ["cluster", "info"],
                 ["group", "list"], ["produce", "t"]):
        r = run(*args, "-b", bad, "--connect-timeout", "1000", stdin="x\n")
        assert r.rc == 3, (args, r)
        assert "cannot reach" in r.err and bad in r.err, r
        assert r.secs < T(6), r.secs
    # the default connect timeout is a few seconds, not Java's minutes
    r = run("topic", "list", bootstrap=bad)
    assert r.rc == 3 and r.secs < T(10), (r, r.secs)
    r = run("topic", "list", "-b", "no-such-host.invalid:9092",
            "--connect-timeout", "1500")
    assert r.rc == 3, r


def test_bootstrap_sources(srv, tmp_path):
    bs = srv.bootstrap()
    ok("topic", "create", "srcs", bootstrap=bs)
    # -b anywhere after the command words, also between arguments
    assert "srcs" in ok("topic", "describe", "-b", bs, "srcs").out
    assert "srcs" in ok("topic", "describe", "srcs", "--bootstrap-server",
                        bs).out
    assert "srcs" in ok("topic", "describe", "srcs",
                        "--bootstrap-server=" + bs).out
    cfg = tmp_path / "client.properties"
    cfg.write_text("# admin\nbootstrap.servers=%s\nclient.id=cli-test\n"
                   "request.timeout.ms=10000\n" % bs)
    assert "srcs" in ok("topic", "list", "--command-config", str(cfg)).out
    # -b wins over the file and the environment
    bad = "%s:%d" % (HOST, closed_port())
    assert "srcs" in ok("topic", "list", "-b", bs, bootstrap=bad).out
    cfg.write_text("bootstrap.servers=%s\nno.such.key=1\n" % bs)
    r = run("topic", "list", "--command-config", str(cfg))
    assert r.rc == 2 and "no.such.key" in r.err, r
    r = run("topic", "list", "--command-config", str(tmp_path / "nope"),
            bootstrap=bs)
    assert r.rc == 2 and "nope" in r.err, r


# -- topics ------------------------------------------------------------------

def test_topic_create_describe_list_delete(srv):
    bs = srv.bootstrap()
    r = ok("topic", "create", "tcli", "--partitions", "3",
           "--replication-factor", "1", "--config", "retention.ms=123456",
           "--config", "cleanup.policy=delete", bootstrap=bs)
    assert "tcli" in r.out
    assert partitions(bs, "tcli") == 3
    assert topic_configs(bs, "tcli")["retention.ms"] == "123456"
    r = run("topic", "create", "tcli", bootstrap=bs)
    assert r.rc == 1 and "TOPIC_ALREADY_EXISTS" in r.err, r
    ok("topic", "create", "tcli", "--if-not-exists", bootstrap=bs)
    r = ok("topic", "create", "tval", "--validate-only", "-p", "2",
           bootstrap=bs)
    assert partitions(bs, "tval") is None

    listed = ok("topic", "list", "--json", bootstrap=bs).json()
    mine = [t for t in listed if t["name"] == "tcli"]
    assert mine == [{"name": "tcli", "partitions": 3,
                     "replication_factor": 1, "internal": False}]
    table = ok("topic", "list", bootstrap=bs).out.splitlines()
    assert table[0].split() == ["TOPIC", "PARTITIONS", "REPLICAS", "INTERNAL"]
    assert ["tcli", "3", "1", "no"] in [l.split() for l in table[1:]]

    d = ok("topic", "describe", "tcli", "--json", bootstrap=bs).json()
    assert len(d) == 1 and d[0]["name"] == "tcli"
    assert len(d[0]["topic_id"]) == 22
    assert [p["partition"] for p in d[0]["partitions"]] == [0, 1, 2]
    for p in d[0]["partitions"]:
        assert p["leader"] == 1 and p["replicas"] == [1] and p["isr"] == [1]
        assert p["log_start_offset"] == 0 and p["log_end_offset"] == 0
    assert d[0]["configs"] == {"retention.ms": "123456",
                               "cleanup.policy": "delete"}
    text = ok("topic", "describe", "tcli", bootstrap=bs).out
    assert "PartitionCount: 3" in text and "retention.ms=123456" in text
    assert "LOG-END-OFFSET" in text

    r = run("topic", "describe", "no-such-topic", bootstrap=bs)
    assert r.rc == 1 and "UNKNOWN_TOPIC_OR_PARTITION" in r.err, r
    assert "no-such-topic" in r.err

    r = ok("topic", "delete", "tcli", "--json", bootstrap=bs).json()
    assert r == [{"name": "tcli", "ok": True, "error": None,
                  "message": None}]
    assert partitions(bs, "tcli") is None
    r = run("topic", "delete", "tcli", bootstrap=bs)
    assert r.rc == 1 and "UNKNOWN_TOPIC_OR_PARTITION" in r.err, r
    ok("topic", "delete", "tcli", "--if-exists", bootstrap=bs)


def test_topic_alter_config_and_partitions(srv):
    bs = srv.bootstrap()
    ok("topic", "create", "talter", "-p", "1", "-c", "retention.ms=1000000",
       bootstrap=bs)
    before = len(apis_used(srv))
    ok("topic", "alter-config", "talter", "--set", "retention.ms=2000000",
       "--set", "segment.ms=3600000", bootstrap=bs)
    used = wait_api(srv, before, "INCREMENTAL_ALTER_CONFIGS")
    assert "INCREMENTAL_ALTER_CONFIGS" in used and "ALTER_CONFIGS" not in used
    c = topic_configs(bs, "talter")
    assert c["retention.ms"] == "2000000" and c["segment.ms"] == "3600000"
    ok("topic", "alter-config", "talter", "--delete", "segment.ms",
       bootstrap=bs)
    d = ok("topic", "describe", "talter", "--json", bootstrap=bs).json()
    assert d[0]["configs"] == {"retention.ms": "2000000"}
    # the legacy API replaces the whole set; the CLI carries the others over
    before = len(apis_used(srv))
    ok("topic", "alter-config", "talter", "--legacy", "--set",
       "max.message.bytes=500000", bootstrap=bs)
    used = wait_api(srv, before, "ALTER_CONFIGS")
    assert "ALTER_CONFIGS" in used and "INCREMENTAL_ALTER_CONFIGS" not in used
    d = ok("topic", "describe", "talter", "--json", bootstrap=bs).json()
    assert d[0]["configs"] == {"retention.ms": "2000000",
                               "max.message.bytes": "500000"}
    ok("topic", "alter-config", "talter", "--set", "retention.ms=1",
       "--validate-only", bootstrap=bs)
    assert topic_configs(bs, "talter")["retention.ms"] == "2000000"
    r = run("topic", "alter-config", "talter", "--set", "retention.ms=abc",
            bootstrap=bs)
    assert r.rc == 1 and "INVALID_CONFIG" in r.err, r
    r = run("topic", "alter-config", "nope-topic", "--set", "retention.ms=1",
            bootstrap=bs)
    assert r.rc == 1 and "UNKNOWN_TOPIC_OR_PARTITION" in r.err, r

    ok("topic", "create-partitions", "talter", "--partitions", "4",
       bootstrap=bs)
    assert partitions(bs, "talter") == 4
    r = run("topic", "create-partitions", "talter", "--partitions", "2",
            bootstrap=bs)
    assert r.rc == 1 and "INVALID_PARTITIONS" in r.err, r


# -- produce -----------------------------------------------------------------

def consume_all(bs, topic, n, timeout=20):
    from confluent_kafka import Consumer
    c = Consumer({"bootstrap.servers": bs, "group.id": "cli-check-" + topic,
                  "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    c.subscribe([topic])
    out = []
    import time
    deadline = time.monotonic() + T(timeout)
    while len(out) < n and time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is not None and m.error() is None:
            out.append(m)
    c.close()
    return out


def test_produce_lines_keys_headers_partition(srv, tmp_path):
    bs = srv.bootstrap()
    ok("topic", "create", "tprod", "-p", "3", bootstrap=bs)
    lines = "".join("key%d::value %d\n" % (i, i) for i in range(20))
    r = ok("produce", "tprod", "--key-separator", "::", "--header", "h1=a",
           "--header", "h2=b=c", "--json", stdin=lines, bootstrap=bs)
    assert r.json() == {"topic": "tprod", "records": 20, "failed": 0,
                        "first_error": None}
    msgs = consume_all(bs, "tprod", 20)
    got = sorted((m.key().decode(), m.value().decode(),
                  tuple(m.headers())) for m in msgs)
    want = sorted(("key%d" % i, "value %d" % i,
                   (("h1", b"a"), ("h2", b"b=c"))) for i in range(20))
    assert got == want
    # same key -> same partition (murmur2, as Java)
    byk = {}
    for m in msgs:
        byk.setdefault(m.key(), set()).add(m.partition())
    assert all(len(v) == 1 for v in byk.values())

    f = tmp_path / "in.txt"
    f.write_text("a\nb\n\nc\n")
    r = ok("produce", "tprod", "--file", str(f), "--partition", "2",
           "--acks", "1", "--compression", "gzip", bootstrap=bs)
    assert "Produced 4 record(s)" in r.out
    d = ok("topic", "describe", "tprod", "--json", bootstrap=bs).json()
    ends = {p["partition"]: p["log_end_offset"] for p in d[0]["partitions"]}
    assert sum(ends.values()) == 24
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bs, "group.id": "wm"})
    lo, hi = c.get_watermark_offsets(TopicPartition("tprod", 2), T(10))
    c.close()
    assert hi == ends[2]

    r = run("produce", "tprod", "--partition", "7", stdin="x\n",
            bootstrap=bs)
    assert r.rc == 1 and "UNKNOWN_TOPIC_OR_PARTITION" in r.err, r
    r = run("produce", "tprod", "--key-separator", ":", stdin="k:v\nnokey\n",
            bootstrap=bs)
    assert r.rc == 1 and "line 2" in r.err, r
    r = run("produce", "tprod", "--file", str(tmp_path / "missing"),
            bootstrap=bs)
    assert r.rc == 2 and "missing" in r.err, r


def test_delete_records_moves_log_start(srv):
    bs = srv.bootstrap()
    ok("topic", "create", "tdel", "-p", "1", bootstrap=bs)
    ok("produce", "tdel", stdin="".join("%d\n" % i for i in range(10)),
       bootstrap=bs)
    r = ok("topic", "delete-records", "tdel", "--partition", "0",
           "--before", "4", "--json", bootstrap=bs).json()
    assert r == [{"partition": 0, "low_watermark": 4, "error": None}]
    d = ok("topic", "describe", "tdel", "--json", bootstrap=bs).json()
    p = d[0]["partitions"][0]
    assert (p["log_start_offset"], p["log_end_offset"]) == (4, 10)
    r = run("topic", "delete-records", "tdel", "--before", "99",
            bootstrap=bs)
    assert r.rc == 1 and "OFFSET_OUT_OF_RANGE" in r.err, r


def test_cluster_info(srv):
    bs = srv.bootstrap()
    j = ok("cluster", "info", "--json", bootstrap=bs).json()
    assert j["cluster_id"] == srv.cluster_id()
    assert j["controller_id"] == 1
    assert j["brokers"] == [{"id": 1, "host": HOST, "port": srv.port,
                             "rack": None, "fenced": False}]
    # a single node has no metadata quorum: DescribeQuorum is not served
    assert j["quorum"] is None and j["quorum_error"] == "UNSUPPORTED_VERSION", j
    text = ok("cluster", "info", bootstrap=bs).out
    assert "Quorum: none (UNSUPPORTED_VERSION)" in text, text
    assert srv.cluster_id() in text and str(srv.port) in text
