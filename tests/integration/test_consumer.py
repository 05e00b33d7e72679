"""libsamsa's consumer against samsa-server, through consumer_probe.c
(tests/integration/cprobe.py):

- interop: records produced by confluent_kafka (librdkafka), kafka-python
  and kafkajs with every compression codec the client can write here
  (none/gzip/snappy/lz4/zstd; a codec a client cannot write is a skip of
  its own, with the client's reason), with headers, null keys and values,
  empty keys and values and binary bytes, are read by a libsamsa consumer
  (assign + seek to the beginning) unchanged, byte for byte, at the
  offsets and partitions they were written to;
- the reverse: records from libsamsa's producer (producer_probe.c), every
  codec, read by confluent_kafka unchanged;
- offsets_for_times / beginning / end offsets (ListOffsets), seek,
  position after seek, pause (a paused partition yields nothing);
- auto.offset.reset: latest reads only new records, none fails poll() with
  OFFSET_OUT_OF_RANGE; a seek past the end with earliest resets;
- commits without a group membership (assign + group.id): commit_sync,
  committed() and a restart that resumes from the committed offset.
"""

import json
import os
import shutil
import subprocess
import time

import pytest

import cprobe
from cprobe import Probe, b64, unb64
from samsa_harness import T

HERE = os.path.dirname(os.path.abspath(__file__))
JS_DIR = os.path.join(HERE, "js")
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def records():
    """(key, value, [(hkey, hvalue)]) with the awkward cases."""
    out = [
        (b"k0", b"v0", [("h1", b"x"), ("h2", b"yy")]),
        (None, b"null key", []),
        (b"null value", None, [("hn", b"")]),
        (b"", b"", []),
        (b"\x00\xff\x10bin", bytes(range(256)), [("bin", bytes(range(7)))]),
        (b"dup-headers", b"v", [("same", b"1"), ("same", b"2")]),
        (b"big", os.urandom(20000), []),
    ]
    for i in range(13):
        out.append((b"key-%d" % i, b"value-%d" % i * (i + 1), []))
    return out


def create_topic(bs, topic, parts):
    from confluent_kafka.admin import AdminClient, NewTopic
    a = AdminClient({"bootstrap.servers": bs})
    a.create_topics([NewTopic(topic, parts, 1)])[topic].result(T(20))


def node():
    return shutil.which("node") or shutil.which("nodejs")


# -- producers -------------------------------------------------------------------------------

def produce_confluent(bs, topic, recs):
    from confluent_kafka import Producer
    sent, skipped = [], {}
    for i, codec in enumerate(CODECS):
        try:
            p = Producer({"bootstrap.servers": bs, "compression.type": codec,
                          "linger.ms": 50})
        except Exception as e:          # codec not built in
            skipped[codec] = str(e)
            continue
        for k, v, h in recs:
            p.produce(topic, key=k, value=v, partition=i, headers=h or None)
        assert p.flush(T(20)) == 0
        sent.append(codec)
    return sent, skipped


def produce_kafka_python(bs, topic, recs):
    from kafka import KafkaProducer
    sent, skipped = [], {}
    for i, codec in enumerate(CODECS):
        try:
            p = KafkaProducer(bootstrap_servers=bs, linger_ms=50,
                              compression_type=None if codec == "none" else codec)
        except Exception as e:          # python codec module missing
            skipped[codec] = str(e)
            continue
        for k, v, h in recs:
            p.send(topic, key=k, value=v, partition=i, headers=h)
        p.flush(T(20))
        p.close()
        sent.append(codec)
    return sent, skipped


def produce_kafkajs(bs, topic, recs):
    if not node() or not os.path.isdir(os.path.join(JS_DIR, "node_modules", "kafkajs")):
        return [], {c: "node or kafkajs missing" for c in CODECS}
    spec = {"broker": bs, "topic": topic, "codecs": CODECS,
            "records": [{"key": b64(k), "value": b64(v),
                         "headers": [[b64(hk.encode()), b64(hv)] for hk, hv in h]}
                        for k, v, h in recs]}
    r = subprocess.run([node(), "produce_records.js"], cwd=JS_DIR,
                       input=json.dumps(spec) + "\n", capture_output=True,
                       text=True, timeout=T(60))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    return out["codecs"]["usable"], out["codecs"]["unusable"]


PRODUCERS = {"confluent_kafka": produce_confluent,
             "kafka_python": produce_kafka_python,
             "kafkajs": produce_kafkajs}


def expected(recs, hdr_dups=True):
    out = []
    for k, v, h in recs:
        out.append((k, v, [(hk.encode(), hv) for hk, hv in h]))
    return out


def got(rec):
    return (unb64(rec["k"]), unb64(rec["v"]),
            [(unb64(hk), unb64(hv)) for hk, hv in rec["h"]])


@pytest.mark.parametrize("client", list(PRODUCERS))
def test_interop_from_client(server, client):
    bs = server.bootstrap()
    topic = "interop-" + client
    create_topic(bs, topic, len(CODECS))
    recs = records()
    if client == "kafkajs":
        # kafkajs writes headers as an object: one value per key
        recs = [(k, v, h) for k, v, h in recs if k != b"dup-headers"]
    sent, skipped = PRODUCERS[client](bs, topic, recs)
    assert sent, "no codec usable: %s" % skipped
    parts = ",".join("%s:%d" % (topic, CODECS.index(c)) for c in sent)
    done, lines = cprobe.run(bs, "--assign", parts, "--seek-beginning",
                             "--max", len(recs) * len(sent), "--timeout-ms",
                             int(T(20) * 1000))
    assert done["count"] == len(recs) * len(sent), done
    byp = {}
    for o in lines:
        if "rec" in o:
            byp.setdefault(o["rec"]["p"], []).append(o["rec"])
    want = expected(recs)
    for codec in sent:
        rs = byp.get(CODECS.index(codec), [])
        assert [r["o"] for r in rs] == list(range(len(recs))), codec
        assert [got(r) for r in rs] == want, codec
        assert all(r["t"] == topic and r["tt"] == 0 and r["ts"] > 0 for r in rs)
    if skipped:
        pytest.fail("%s cannot write %s here (scripts/deps.sh installs every "
                    "codec): %s" % (client, sorted(skipped), skipped))


def test_libsamsa_producer_to_confluent(server, tmp_path):
    """libsamsa's producer -> confluent_kafka, every codec, byte for byte."""
    from confluent_kafka import Consumer, TopicPartition
    bs = server.bootstrap()
    topic = "from-libsamsa"
    create_topic(bs, topic, len(CODECS))
    recs = records()

    def hx(b):
        return "-" if b is None else ("." if b == b"" else b.hex())

    for i, codec in enumerate(CODECS):
        path = tmp_path / ("recs-%s.txt" % codec)
        with open(path, "w") as f:
            for k, v, h in recs:
                fields = [str(i), "-1", hx(k), hx(v)]
                for hk, hv in h:
                    fields += [hx(hk.encode()), hx(hv)]
                f.write(" ".join(fields) + "\n")
        r = subprocess.run([os.path.join(cprobe.build_dir(), "producer_probe"),
                            "file", bs, topic, str(path),
                            "compression.type=" + codec,
                            "enable.idempotence=false", "acks=all"],
                           capture_output=True, text=True, timeout=T(60))
        out = json.loads(r.stdout.strip().splitlines()[-1])
        assert out["delivered"] == len(recs), (codec, out, r.stderr[-2000:])
    c = Consumer({"bootstrap.servers": bs, "group.id": "unused",
                  "enable.auto.commit": False})
    c.assign([TopicPartition(topic, i, 0) for i in range(len(CODECS))])
    byp = {}
    end = time.time() + T(20)
    while time.time() < end and sum(map(len, byp.values())) < len(recs) * len(CODECS):
        m = c.poll(0.2)
        if m is None or m.error():
            continue
        byp.setdefault(m.partition(), []).append(
            (m.key(), m.value(),
             [(hk.encode(), hv) for hk, hv in (m.headers() or [])]))
    c.close()
    for i, codec in enumerate(CODECS):
        assert byp.get(i) == expected(recs), codec


def produce_plain(bs, topic, n, partition=0, start=0, ts=None):
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bs, "linger.ms": 5})
    for i in range(start, start + n):
        kw = {"timestamp": ts(i)} if ts else {}
        p.produce(topic, key=b"k%d" % i, value=b"v%d" % i, partition=partition,
                  **kw)
    assert p.flush(T(20)) == 0


def test_list_offsets_seek_pause(server):
    bs = server.bootstrap()
    topic = "lookups"
    create_topic(bs, topic, 2)
    base = 1700000000000
    produce_plain(bs, topic, 10, ts=lambda i: base + i * 1000)
    produce_plain(bs, topic, 3, partition=1)
    done, lines = cprobe.run(
        bs, "--offsets-for-times", "%s:0:%d" % (topic, base + 4500),
        "--offsets-for-times", "%s:0:%d" % (topic, base + 99000),
        "--end-offsets", "%s:0" % topic, "--beginning-offsets", "%s:0" % topic,
        "--end-offsets", "nosuchtopic:0",
        "--assign", "%s:0,%s:1" % (topic, topic), "--seek", "%s:0:5" % topic,
        "--seek", "%s:1:0" % topic, "--pause", "%s:1" % topic,
        "--max", 5, "--idle-ms", 1500,
        conf={"allow.auto.create.topics": "false"})
    lk = [o for o in lines if "lookup" in o]
    assert lk[0]["tps"][0][2:4] == [5, base + 5000]        # first ts >= t
    assert lk[1]["tps"][0][2] == -1001                      # none after
    assert lk[2]["tps"][0][2] == 10 and lk[3]["tps"][0][2] == 0
    assert lk[4]["err"] == "UNKNOWN_TOPIC_OR_PARTITION", lk[4]
    recs = [o["rec"] for o in lines if "rec" in o]
    assert [(r["p"], r["o"]) for r in recs] == [(0, i) for i in range(5, 10)]
    assert recs[0]["ts"] == base + 5000 and recs[0]["v"] == b64(b"v5")


def test_auto_offset_reset(server):
    bs = server.bootstrap()
    topic = "reset"
    create_topic(bs, topic, 1)
    produce_plain(bs, topic, 5)
    # latest: only what comes after the start
    pr = Probe(bs, "--assign", topic + ":0", "--max", 3, "--positions",
               conf={"auto.offset.reset": "latest"})
    pr.wait(lambda p: any("positions" in o for o in p.snapshot()), 20,
            "position at the end")
    assert [o for o in pr.snapshot() if "positions" in o][0]["positions"] == \
        [[topic, 0, 5, "NONE"]]
    produce_plain(bs, topic, 3, start=100)
    done = pr.finish(30)
    assert [r["v"] for r in pr.records()] == [b64(b"v%d" % i) for i in (100, 101, 102)]
    # none, with a group that never committed: poll() fails
    done, lines = cprobe.run(bs, "--assign", topic + ":0", "--exit-on-error",
                             "--timeout-ms", int(T(15) * 1000),
                             conf={"auto.offset.reset": "none", "group.id": "g-none"})
    assert {"err": "OFFSET_OUT_OF_RANGE"} in lines, lines[-5:]
    assert done["count"] == 0
    # out of range with earliest: back to the start
    done, lines = cprobe.run(bs, "--assign", topic + ":0", "--seek", topic + ":0:1000",
                             "--max", 8, conf={"auto.offset.reset": "earliest"})
    assert [r["rec"]["o"] for r in lines if "rec" in r] == list(range(8))


def test_commit_without_membership(server):
    """assign() + group.id: commits are simple (generation -1) commits."""
    bs = server.bootstrap()
    topic = "simple-commit"
    create_topic(bs, topic, 1)
    produce_plain(bs, topic, 10)
    conf = {"group.id": "simple", "auto.offset.reset": "earliest",
            "enable.auto.commit": "false"}
    pr = Probe(bs, "--assign", topic + ":0", "--max", 4, "--commit-each",
               "-X", "max.poll.records=2", conf=conf)
    done = pr.finish(30)
    assert done["count"] == 4
    done, lines = cprobe.run(bs, "--committed", topic + ":0", "--assign",
                             topic + ":0", "--max", 6, conf=conf)
    lk = [o for o in lines if "lookup" in o][0]
    assert lk["tps"][0][2] == 4 and lk["err"] == "NONE", lk
    assert [o["rec"]["o"] for o in lines if "rec" in o] == list(range(4, 10))
    # auto-commit on close (enable.auto.commit=true): the next run resumes
    conf["enable.auto.commit"] = "true"
    conf["max.poll.records"] = "1"
    done, lines = cprobe.run(bs, "--assign", topic + ":0", "--max", 3, conf=conf)
    assert [o["rec"]["o"] for o in lines if "rec" in o] == [4, 5, 6]
    done, lines = cprobe.run(bs, "--committed", topic + ":0", conf=conf)
    assert [o for o in lines if "lookup" in o][0]["tps"][0][2] == 7
