"""Real clients round trip through samsa-server: confluent_kafka
(librdkafka 2.0.2), kafka-python 2.0.2, kafkajs 2.2.4 and kcat 1.7.1 each

- create a topic with their admin API (kcat has none: its topic is
  auto-created by its producer; kafkajs through js/storage_roundtrip.js),
- produce the same records with every compression the client can use here,
  one partition per codec: keys, values, headers, timestamps, a null key, a
  null value and a 1 MiB record (max.message.bytes raised on broker, topic
  and client),
- read them back with the same client and compare exactly,
- check with raw Fetch (kwire) that the batches are stored with the codec the
  client used (compression.type=producer) and decode to the same records,
- list offsets (earliest, latest, by time) with the client,
- delete the topic (kcat: with kwire) and see it gone.

Every client must be able to use every codec here (deps.sh installs
python3-lz4/snappy/zstandard for kafka-python and kafkajs's codec packages,
js/kafkajs_codecs.js): test_every_client_can_use_every_codec fails, naming
the reason, for any that cannot.

kafkajs has no consumer outside consumer groups, which the server does not
serve yet: js/storage_roundtrip.js reads with the broker-level Fetch of the
cluster object kafkajs builds for its consumer (kafkajs's own request and
record decoding).
"""

import base64
import contextlib
import functools
import json
import os
import re
import shutil
import subprocess
import time

import pytest

import kwire
import samsa_harness
from samsa_harness import T

HERE = os.path.dirname(os.path.abspath(__file__))
JS_DIR = os.path.join(HERE, "js")
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
CODEC_ID = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
BIG = b"0123456789abcdef" * 65536            # 1 MiB, compressible, one text line
MAX_BYTES = 4 << 20
TOPIC_CONFIGS = {"max.message.bytes": str(3 << 20)}


# -- which client can use which codec here ---------------------------------------

@functools.lru_cache(None)
def confluent_codecs():
    from confluent_kafka import KafkaException, Producer
    out = {}
    for c in CODECS:
        try:
            Producer({"compression.codec": c})
            out[c] = None
        except KafkaException as e:
            out[c] = "librdkafka: %s" % e
    return out


@functools.lru_cache(None)
def kafka_python_codecs():
    from kafka import codec
    have = {"none": True, "gzip": codec.has_gzip(), "snappy": codec.has_snappy(),
            "lz4": codec.has_lz4(), "zstd": codec.has_zstd()}
    module = {"snappy": "python3-snappy", "lz4": "python3-lz4", "zstd": "python3-zstandard"}
    return {c: None if ok else "kafka-python: the %s module is not installed" % module.get(c, c)
            for c, ok in have.items()}


def node():
    return shutil.which("node") or shutil.which("nodejs")


@functools.lru_cache(None)
def kafkajs_codecs():
    if not node() or not os.path.isdir(os.path.join(JS_DIR, "node_modules", "kafkajs")):
        return {c: "node or kafkajs missing" for c in CODECS}
    r = subprocess.run([node(), "storage_roundtrip.js", "--codecs"], cwd=JS_DIR,
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return {c: "kafkajs probe failed: %s" % r.stderr[-200:] for c in CODECS}
    d = json.loads(r.stdout.strip().splitlines()[-1])
    return {c: None if c in d["usable"] else "kafkajs: %s (codec package not installed)"
            % d["unusable"].get(c, "?") for c in CODECS}


@functools.lru_cache(None)
def kcat_codecs():
    if not shutil.which("kcat"):
        return {c: "kcat missing" for c in CODECS}
    out = subprocess.run(["kcat", "-V"], capture_output=True, text=True, timeout=30)
    m = re.search(r"builtin\.features=(\S+)", out.stdout + out.stderr)
    feats = set(m.group(1).rstrip(")").split(",")) if m else set()
    return {c: None if c in ("none", "gzip") or c in feats
            else "kcat's librdkafka lacks %s" % c for c in CODECS}


SUPPORT = {"confluent_kafka": confluent_codecs, "kafka_python": kafka_python_codecs,
           "kafkajs": kafkajs_codecs, "kcat": kcat_codecs}


def usable(client):
    return [c for c, why in SUPPORT[client]().items() if why is None]


def test_every_client_can_use_every_codec():
    """scripts/deps.sh installs every codec each client needs (python3-lz4,
    python3-snappy, python3-zstandard for kafka-python; kafkajs's codec
    packages in js/): a codec missing here is a failure, not a skip."""
    missing = {}
    for client, fn in SUPPORT.items():
        for c, why in fn().items():
            if why is not None:
                missing["%s/%s" % (client, c)] = why
    assert not missing, missing


# -- records ------------------------------------------------------------------------

# Timestamps are 10 ms apart; offsets are looked up at BY_TIME, between
# records 1 and 2: the answer is record 2 (offset 2, its timestamp now + 20).
BY_TIME = 15


def expected_records(tag, now, text_only=False):
    """[(key, value, [(header, value)], timestamp)]"""
    bin_value = b"bin-" + tag.encode() if text_only else b"\x00\xffbin\x01" + tag.encode()
    return [
        (b"k-" + tag.encode(), b"v-" + tag.encode(), [("h1", b"x"), ("h2", b"")], now),
        (None, b"null-key-" + tag.encode(), [], now + 10),
        (b"null-value-" + tag.encode(), None, [("only", b"y")], now + 20),
        (b"big-" + tag.encode(), BIG, [], now + 30),
        (b"last-" + tag.encode(), bin_value, [("h", b"z")], now + 40),
    ]


def short(recs):
    def s(b):
        if b is None or len(b) < 40:
            return b
        return "<%d bytes>" % len(b)
    return [(s(k), s(v), h, ts) for k, v, h, ts in recs]


def check_same(got, want, what):
    assert len(got) == len(want), "%s: %d records read back, %d produced:\n%s" % (
        what, len(got), len(want), short(got))
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, "%s: record %d differs:\n got  %s\n want %s" % (
            what, i, short([g]), short([w]))


class Problems:
    """Collects failed checks so that one run reports every codec and every
    client operation that went wrong, then fails with all of them."""

    def __init__(self):
        self.items = []

    @contextlib.contextmanager
    def check(self, what):
        try:
            yield
        except AssertionError as e:
            lines = str(e).strip().splitlines()
            self.items.append("%s: %s" % (what, "\n    ".join(lines[:4])))

    def assert_none(self):
        assert not self.items, "%d problem(s):\n- %s" % (len(self.items), "\n- ".join(self.items))


def lz4_hint(srv, codec):
    if codec != "lz4":
        return ""
    with srv.connect(timeout=T(5)) as c:
        keys = c.api_versions(0)["api_keys"]
    if 10 not in keys:
        return (" (librdkafka 2.0.2 compresses with lz4 only if FindCoordinator v0 is "
                "advertised, and the server does not advertise FindCoordinator: CLIENTS.md)")
    return ""


def check_stored(srv, topic, partition, codec, want, what):
    """Raw Fetch: the batches carry the client's codec and hold `want`."""
    with srv.connect(timeout=T(5)) as c:
        batches, last = c.fetch_all(topic, partition, 0, max_bytes=MAX_BYTES, timeout=T(10))
    assert last["error_code"] == 0, kwire.error_name(last["error_code"])
    assert batches, "%s: nothing stored" % what
    # clients send a batch uncompressed when compressing does not pay (small
    # batches); the 1 MiB record's batch always does
    codecs = sorted({b["codec"] for b in batches})
    assert CODEC_ID[codec] in codecs and set(codecs) <= {0, CODEC_ID[codec]}, \
        "%s: stored batches have codecs %s, the client used %s%s" % (
            what, codecs, codec, lz4_hint(srv, codec))
    big = [b for b in batches if b["records"] and any(r["value"] == BIG for r in b["records"])]
    assert big and all(b["codec"] == CODEC_ID[codec] for b in big), \
        "%s: the 1 MiB record's batch is not stored with %s" % (what, codec)
    assert all(b["crc_ok"] for b in batches)
    raw = [(r["key"], r["value"], r["headers"], r["timestamp"]) for r in kwire.records_of(batches)]
    if want is not None:
        check_same(raw, want, what + " (raw Fetch)")
    return raw


def wait_gone(srv, topic):
    with srv.connect(timeout=T(5)) as c:
        ok = samsa_harness.wait_until(
            lambda: c.topic_metadata(topic)["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION,
            T(10), 0.05)
    assert ok, "topic %s still listed after the client deleted it" % topic


def wait_ready(srv, topic, partitions):
    with srv.connect(timeout=T(5)) as c:
        c.wait_topic(topic, partitions, timeout=T(10))


@pytest.fixture(scope="module")
def srv(samsa_module):
    return samsa_module.start({"message.max.bytes": str(MAX_BYTES), "num.partitions": "5",
                               "auto.create.topics.enable": "true"})


# -- confluent_kafka ------------------------------------------------------------------

def test_confluent_kafka_round_trip(srv):
    from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic
    codecs = usable("confluent_kafka")
    problems = Problems()
    topic = "ck-storage-%d" % os.getpid()
    base = {"bootstrap.servers": srv.bootstrap(), "socket.timeout.ms": int(T(10) * 1000)}
    admin = AdminClient(dict(base))
    fs = admin.create_topics([NewTopic(topic, num_partitions=len(codecs), replication_factor=1,
                                       config=TOPIC_CONFIGS)],
                             operation_timeout=T(10), request_timeout=T(15))
    fs[topic].result(timeout=T(20))
    wait_ready(srv, topic, len(codecs))
    now = int(time.time() * 1000) - 10000
    want = {}
    for i, codec in enumerate(codecs):
        want[i] = expected_records("ck-" + codec, now + 100 * i)
        reports = []
        p = Producer(dict(base, **{"compression.codec": codec, "message.max.bytes": MAX_BYTES,
                                   "batch.size": MAX_BYTES, "linger.ms": 5, "acks": "all"}))
        for k, v, h, ts in want[i]:
            p.produce(topic, value=v, key=k, partition=i, timestamp=ts, headers=h,
                      on_delivery=lambda err, msg: reports.append((err, msg.partition(),
                                                                   msg.offset())))
        assert p.flush(T(20)) == 0
        del p
        assert [(e, pa) for e, pa, _ in reports] == [(None, i)] * 5, reports
        assert sorted(o for _, _, o in reports) == [0, 1, 2, 3, 4]
    cons = Consumer(dict(base, **{"group.id": "samsa-it-" + topic, "enable.auto.commit": False,
                                  "enable.partition.eof": True,
                                  "fetch.message.max.bytes": MAX_BYTES,
                                  # queries share the connection with the fetch long poll
                                  "fetch.wait.max.ms": 50}))
    try:
        cons.assign([TopicPartition(topic, i, 0) for i in range(len(codecs))])
        got = {i: [] for i in range(len(codecs))}
        eof, errors = set(), []
        deadline = time.monotonic() + T(30)
        while len(eof) < len(codecs) or any(len(got[i]) < 5 for i in got):
            assert time.monotonic() < deadline, "read back timed out: %s, errors %s" % (
                {i: len(g) for i, g in got.items()}, errors[-5:])
            m = cons.poll(0.2)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    eof.add(m.partition())
                else:
                    errors.append(str(m.error()))
                continue
            got[m.partition()].append((m.key(), m.value(), list(m.headers() or []),
                                       m.timestamp()[1]))
        for i, codec in enumerate(codecs):
            what = "confluent_kafka %s (partition %d)" % (codec, i)
            with problems.check(what + " read back"):
                check_same(got[i], want[i], what)
            with problems.check(what + " stored"):
                check_stored(srv, topic, i, codec, want[i], what)
            with problems.check(what + " offsets"):
                lo, hi = cons.get_watermark_offsets(TopicPartition(topic, i), timeout=T(10))
                assert (lo, hi) == (0, 5), "watermarks %s, expected (0, 5)" % ((lo, hi),)
                late = cons.offsets_for_times([TopicPartition(topic, i, now + 100000)],
                                              timeout=T(10))
                assert late[0].offset < 0, "offsets_for_times after the end: %s" % late[0]
                found = cons.offsets_for_times([TopicPartition(topic, i, now + 100 * i + BY_TIME)],
                                               timeout=T(10))
                assert found[0].offset == 2, \
                    "offsets_for_times(between records 1 and 2) = %d, expected 2" % found[0].offset
    finally:
        cons.close()
    fs = admin.delete_topics([topic], operation_timeout=T(10), request_timeout=T(15))
    fs[topic].result(timeout=T(20))
    wait_gone(srv, topic)
    problems.assert_none()


# -- kafka-python ----------------------------------------------------------------------

def test_kafka_python_round_trip(srv):
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import NewTopic
    codecs = usable("kafka_python")
    problems = Problems()
    topic = "kp-storage-%d" % os.getpid()
    tmo = int(T(15) * 1000)
    admin = KafkaAdminClient(bootstrap_servers=srv.bootstrap(), request_timeout_ms=tmo,
                             api_version_auto_timeout_ms=int(T(5) * 1000))
    try:
        r = admin.create_topics([NewTopic(topic, num_partitions=len(codecs), replication_factor=1,
                                          topic_configs=TOPIC_CONFIGS)], timeout_ms=tmo)
        assert all(e[1] == 0 for e in r.topic_errors), r.topic_errors
        wait_ready(srv, topic, len(codecs))
        now = int(time.time() * 1000) - 10000
        want = {}
        for i, codec in enumerate(codecs):
            want[i] = expected_records("kp-" + codec, now + 100 * i)
            p = KafkaProducer(bootstrap_servers=srv.bootstrap(), acks="all", linger_ms=5,
                              compression_type=None if codec == "none" else codec,
                              max_request_size=MAX_BYTES, request_timeout_ms=tmo,
                              api_version_auto_timeout_ms=int(T(5) * 1000))
            try:
                futs = [p.send(topic, value=v, key=k, partition=i, timestamp_ms=ts, headers=h)
                        for k, v, h, ts in want[i]]
                p.flush(timeout=T(20))
                mds = [f.get(timeout=T(10)) for f in futs]
            finally:
                p.close(timeout=T(5))
            assert sorted(m.offset for m in mds) == [0, 1, 2, 3, 4]
            assert {m.partition for m in mds} == {i}
        cons = KafkaConsumer(bootstrap_servers=srv.bootstrap(), group_id=None,
                             enable_auto_commit=False, max_partition_fetch_bytes=MAX_BYTES,
                             fetch_max_bytes=3 * MAX_BYTES, request_timeout_ms=tmo + 1000,
                             fetch_max_wait_ms=50,
                             api_version_auto_timeout_ms=int(T(5) * 1000))
        try:
            tps = [TopicPartition(topic, i) for i in range(len(codecs))]
            cons.assign(tps)
            cons.seek_to_beginning()
            got = {i: [] for i in range(len(codecs))}
            deadline = time.monotonic() + T(30)
            while any(len(got[i]) < 5 for i in got):
                assert time.monotonic() < deadline, "read back timed out: %s" % {
                    i: len(g) for i, g in got.items()}
                for tp, msgs in cons.poll(timeout_ms=200).items():
                    got[tp.partition] += [(m.key, m.value, list(m.headers), m.timestamp)
                                          for m in msgs]
            for i, codec in enumerate(codecs):
                what = "kafka-python %s (partition %d)" % (codec, i)
                with problems.check(what + " read back"):
                    check_same(got[i], want[i], what)
                with problems.check(what + " stored"):
                    check_stored(srv, topic, i, codec, want[i], what)
            with problems.check("kafka-python offsets"):
                assert cons.beginning_offsets(tps) == {tp: 0 for tp in tps}
                assert cons.end_offsets(tps) == {tp: 5 for tp in tps}
                late = cons.offsets_for_times({tps[0]: now + 100000})
                assert late[tps[0]] is None, late
            found = cons.offsets_for_times({tp: now + 100 * tp.partition + BY_TIME for tp in tps})
            for tp, o in found.items():
                with problems.check("kafka-python %s (partition %d) offsets_for_times" % (
                        codecs[tp.partition], tp.partition)):
                    assert (o.offset, o.timestamp) == (2, now + 100 * tp.partition + 20), \
                        "got %s, expected record 2: offset 2 and its timestamp %d" % (
                            o, now + 100 * tp.partition + 20)
        finally:
            cons.close()
        r = admin.delete_topics([topic], timeout_ms=tmo)
        assert all(e[1] == 0 for e in r.topic_error_codes), r.topic_error_codes
    finally:
        admin.close()
    wait_gone(srv, topic)
    problems.assert_none()


# -- kafkajs -------------------------------------------------------------------------------

def b64(b):
    return None if b is None else base64.b64encode(b).decode()


def unb64(s):
    return None if s is None else base64.b64decode(s)


def read_line(proc, timeout):
    """One stdout line of proc within timeout (else the test fails)."""
    import select
    deadline = time.monotonic() + timeout
    buf = b""
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        r, _, _ = select.select([proc.stdout], [], [], max(left, 0))
        if not r:
            proc.kill()
            raise AssertionError("kafkajs script silent for %.0f s; stderr:\n%s" % (
                timeout, proc.stderr.read().decode(errors="replace")[-3000:]))
        chunk = os.read(proc.stdout.fileno(), 1 << 20)
        if not chunk:
            proc.wait(timeout=T(10))
            raise AssertionError("kafkajs script exited (%s) early; stderr:\n%s" % (
                proc.returncode, proc.stderr.read().decode(errors="replace")[-4000:]))
        buf += chunk
    return [ln for ln in buf.splitlines() if ln.strip()][-1]


def test_kafkajs_round_trip(srv):
    assert node(), "node is not installed (scripts/deps.sh installs it)"
    assert os.path.isdir(os.path.join(JS_DIR, "node_modules", "kafkajs")), \
        "kafkajs is not installed in %s/node_modules (npm ci there)" % JS_DIR
    codecs = usable("kafkajs")
    problems = Problems()
    topic = "kjs-storage-%d" % os.getpid()
    now = int(time.time() * 1000) - 10000
    want = expected_records("kjs", now)
    spec = {"broker": srv.bootstrap(), "topic": topic, "codecs": codecs,
            "timeoutMs": int(T(15) * 1000), "topicConfigs": TOPIC_CONFIGS,
            "queryTimestamp": now + BY_TIME, "lateTimestamp": now + 100000, "waitBeforeDelete": True,
            "records": [{"key": b64(k), "value": b64(v), "timestamp": ts,
                         "headers": {hk: b64(hv) for hk, hv in h}} for k, v, h, ts in want]}
    env = dict(os.environ, KAFKAJS_SCRIPT_TIMEOUT_MS=str(int(T(60) * 1000)),
               KAFKAJS_NO_PARTITIONER_WARNING="1")
    proc = subprocess.Popen([node(), "storage_roundtrip.js"], cwd=JS_DIR, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        proc.stdin.write(json.dumps(spec).encode() + b"\n")
        proc.stdin.flush()
        out = json.loads(read_line(proc, T(60)))
        assert out["created"] is True, "createTopics returned %s" % out["created"]
        for prod in out["produced"]:
            (res,) = prod["result"]
            assert (res["partition"], res["errorCode"], res["baseOffset"]) == (
                prod["partition"], 0, "0"), prod
        by_time = {o["partition"]: o["offset"] for o in out["offsetsByTime"]}
        for i, codec in enumerate(codecs):
            what = "kafkajs %s (partition %d)" % (codec, i)
            got = [(unb64(x["key"]), unb64(x["value"]),
                    [(hk, unb64(hv)) for hk, hv in x["headers"]], x["timestamp"])
                   for x in out["records"][str(i)]]
            with problems.check(what + " read back"):
                assert [x["offset"] for x in out["records"][str(i)]] == [0, 1, 2, 3, 4]
                check_same(got, want, what)
            with problems.check(what + " stored"):
                check_stored(srv, topic, i, codec, want, what)
            with problems.check(what + " fetchTopicOffsetsByTimestamp"):
                assert by_time.get(i) == "2", "offset %s, expected 2" % by_time.get(i)
        with problems.check("kafkajs fetchTopicOffsets"):
            offsets = {o["partition"]: o for o in out["offsets"]}
            assert sorted(offsets) == list(range(len(codecs)))
            for o in offsets.values():
                assert (o["low"], o["high"], o["offset"]) == ("0", "5", "5"), o
            # kafkajs turns "no offset at or after this time" into the high watermark
            assert all(o["offset"] in ("-1", "5") for o in out["offsetsAfterAll"]), \
                out["offsetsAfterAll"]
        proc.stdin.write(b"delete\n")
        proc.stdin.flush()
        assert json.loads(read_line(proc, T(30))) == {"deleted": True}
        assert proc.wait(timeout=T(15)) == 0, proc.stderr.read().decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=T(10))
    wait_gone(srv, topic)
    problems.assert_none()


# -- kcat --------------------------------------------------------------------------------------

def kcat(args, stdin=None, timeout=30):
    r = subprocess.run(["kcat"] + args, input=stdin, capture_output=True, timeout=T(timeout))
    assert r.returncode == 0, "kcat %s failed (%d):\n%s" % (
        " ".join(a if len(a) < 80 else a[:80] + "..." for a in args), r.returncode,
        r.stderr.decode(errors="replace")[-3000:])
    return r.stdout.decode()


def test_kcat_round_trip(srv):
    codecs = usable("kcat")
    problems = Problems()
    topic = "kcat-storage-%d" % os.getpid()    # auto-created: num.partitions=5
    common = ["-b", srv.bootstrap(), "-m", str(int(T(10))), "-X", "message.max.bytes=%d" % MAX_BYTES,
              "-X", "fetch.message.max.bytes=%d" % MAX_BYTES]
    spans = {}
    for i, codec in enumerate(codecs):
        tag = "kc-" + codec
        lines = [b"k-%s\tv-%s" % (tag.encode(), tag.encode()),
                 b"\tnull-key-" + tag.encode(),
                 b"null-value-" + tag.encode() + b"\t",
                 b"big-" + tag.encode() + b"\t" + BIG,
                 b"last-" + tag.encode() + b"\tbin-" + tag.encode()]
        t0 = int(time.time() * 1000)
        kcat(["-P", "-t", topic, "-p", str(i), "-K", "\t", "-Z", "-H", "h1=x", "-H", "h2=",
              "-X", "compression.codec=%s" % codec, "-X", "acks=all"] + common,
             stdin=b"\n".join(lines) + b"\n")
        spans[i] = (t0, int(time.time() * 1000))
    wait_ready(srv, topic, 5)

    def enc(s):
        return None if s is None else s.encode()
    read = {}
    for i, codec in enumerate(codecs):
        what = "kcat %s (partition %d)" % (codec, i)
        out = kcat(["-C", "-t", topic, "-p", str(i), "-o", "beginning", "-e", "-J"] + common)
        msgs = [json.loads(ln) for ln in out.splitlines() if ln.strip()]
        tag = "kc-" + codec
        want = [(b"k-" + tag.encode(), b"v-" + tag.encode()), (None, b"null-key-" + tag.encode()),
                (b"null-value-" + tag.encode(), None), (b"big-" + tag.encode(), BIG),
                (b"last-" + tag.encode(), b"bin-" + tag.encode())]
        got = [(enc(m["key"]), enc(m["payload"])) for m in msgs]
        t0, t1 = spans[i]
        with problems.check(what + " read back"):
            assert [m["offset"] for m in msgs] == [0, 1, 2, 3, 4], [m["offset"] for m in msgs]
            assert got == want, "read back %s" % [
                (k, v if v is None or len(v) < 40 else "<%d bytes>" % len(v)) for k, v in got]
            for m in msgs:
                assert m["headers"] == ["h1", "x", "h2", ""], m["headers"]
                assert t0 <= m["ts"] <= t1, "timestamp %d not within the produce [%d, %d]" % (
                    m["ts"], t0, t1)
        with problems.check(what + " stored"):
            raw = check_stored(srv, topic, i, codec, None, what)
            assert [(k, v) for k, v, _, _ in raw] == want
            assert [ts for _, _, _, ts in raw] == [m["ts"] for m in msgs]
        if len(msgs) == 5:
            read[i] = msgs
    # offsets (-Q, every partition in one query): earliest, latest, by time
    queries = [("earliest", lambda i: -2, lambda i: 0), ("latest", lambda i: -1, lambda i: 5),
               ("after the end", lambda i: spans[i][1] + 100000, lambda i: -1),
               ("record 2's time", lambda i: read[i][2]["ts"],
                lambda i: min(x["offset"] for x in read[i] if x["ts"] >= read[i][2]["ts"]))]
    for name, ts_of, expect_of in queries:
        parts = sorted(read)
        args = []
        for i in parts:
            args += ["-t", "%s:%d:%d" % (topic, i, ts_of(i))]
        out = kcat(["-Q"] + args + common)
        for i in parts:
            with problems.check("kcat %s (partition %d) -Q %s" % (codecs[i], i, name)):
                m = re.search(r"\[%d\]\s+offset\s+(-?\d+)" % i, out)
                assert m, "kcat -Q output: %r" % out
                assert int(m.group(1)) == expect_of(i), "offset %s, expected %d" % (
                    m.group(1), expect_of(i))
    with srv.connect(timeout=T(5)) as c:
        res = c.delete_topics([topic], version=4)
        assert res[0]["error_code"] == 0, res
    wait_gone(srv, topic)
    problems.assert_none()
