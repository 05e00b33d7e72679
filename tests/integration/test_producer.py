"""libsamsa's producer end to end against samsa-server (issue 6), through
tests/integration/producer_probe.c and `samsa perf produce`:

- records produced with each compression (none, gzip, snappy, lz4, zstd)
  are read back unchanged -- keys, values, headers, timestamps, partitions
  and the offsets the producer was told -- by confluent_kafka and by
  kafka-python (a codec kafka-python cannot decode here is a skip of its
  own, with the reason), and raw Fetch shows the batches stored with the
  codec;
- close() right after the send()s delivers everything accepted (read back);
- a future's metadata (partition, offset, timestamp), auto-creation through
  the producer's Metadata, max.block.ms on an unknown topic, `samsa perf
  produce --json`;
- a full buffer pool (samsa-server's test hook holds every Produce for a
  few seconds) fails send() with _TIMED_OUT after max.block.ms=100;
- a non-idempotent run (enable.idempotence=false, acks=all,
  max.in.flight.requests.per.connection=1, retries) across a samsa-server
  restart (SIGTERM, and SIGKILL with requests in flight) delivers every
  record, each acknowledged record at the offset its acknowledgement named,
  in per-partition send order (max.in.flight=1 mutes a partition while its
  batch is in flight, so a retry cannot overtake; with more in flight and
  no idempotence order is not kept across retries, as in Java).
  At-least-once caveat: without idempotence a batch whose response died
  with the server is sent again and may then be in the log twice (seen in
  SIGKILL runs, as with the Java producer); the test allows only that:
  whole retried batches, right after their first copy, and none across the
  clean (SIGTERM) restart;
- enable.idempotence (the default) while samsa-server does not advertise
  InitProducerId (issue 5): the producer fails every record with
  UNSUPPORTED_VERSION and says why, as the Java producer does (no silent
  fallback); once the server advertises it, the same test expects a
  producer id and delivery instead.

The idempotent producer against samsa-server through a SIGKILL (duplicates
recognised by the broker's producer state) is in
test_idempotence_clients.py; sequence and epoch corner cases against a
fake broker in test_producer_fake.py.
Every probe run fails the test on a sanitizer report in its stderr, so this
file under the TSan build is the TSan check.
"""

import collections
import json
import os
import signal
import subprocess
import time

import pytest

import kwire
import samsa_harness
from samsa_harness import T

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
CODEC_ID = {c: i for i, c in enumerate(CODECS)}
NPARTS = 3
API_INIT_PRODUCER_ID = 22
# the real broker has no InitProducerId yet: every run that is not about
# idempotence turns it off
NOIDEM = ("enable.idempotence=false", "acks=all")


# -- running the probe -------------------------------------------------------------------------

def build_dir():
    d = os.environ.get("SAMSA_BUILD_DIR")
    if not d:
        pytest.skip("SAMSA_BUILD_DIR not set: run through ctest")
    return d


def run(args, timeout=60):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=T(timeout))
    found = samsa_harness.sanitizer_reports(p.stderr)
    assert not found, "sanitizer report (%s):\n%s" % (found, p.stderr[-6000:])
    return p


def probe(*args, timeout=60, stderr=None):
    p = run([os.path.join(build_dir(), "producer_probe")] + list(args), timeout)
    assert p.returncode == 0, p.stderr[-3000:]
    if stderr is not None:
        stderr.append(p.stderr)
    return json.loads(p.stdout.strip().splitlines()[-1])


def probe_async(outdir, *args):
    """Starts the probe with stdout and stderr in files under outdir (no
    pipe to fill up while the test does other things)."""
    with open(os.path.join(outdir, "probe.out"), "w") as out, \
            open(os.path.join(outdir, "probe.err"), "w") as err:
        proc = subprocess.Popen([os.path.join(build_dir(), "producer_probe")] + list(args),
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    proc.outdir = outdir
    return proc


def probe_result(proc, timeout):
    proc.wait(timeout=T(timeout))
    with open(os.path.join(proc.outdir, "probe.out")) as f:
        out = f.read()
    with open(os.path.join(proc.outdir, "probe.err"), errors="replace") as f:
        err = f.read()
    found = samsa_harness.sanitizer_reports(err)
    assert not found, "sanitizer report (%s):\n%s" % (found, err[-6000:])
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1]), err


def read_acks(path):
    """{index: (partition, offset, error name)} from probe.acks."""
    out = {}
    with open(path) as f:
        for line in f:
            i, p, o, e = line.split()
            assert int(i) not in out, "record %s completed twice" % i
            out[int(i)] = (int(p), int(o), e)
    return out


def java_partition(key, n):
    """toPositive(murmur2(key)) % n, as Java computes it."""
    data = key if isinstance(key, bytes) else key.encode()
    m, h = 0x5bd1e995, (0x9747b28c ^ len(data)) & 0xFFFFFFFF
    for i in range(len(data) // 4):
        k = int.from_bytes(data[i * 4:i * 4 + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    tail = len(data) % 4
    base = len(data) & ~3
    if tail >= 3:
        h ^= data[base + 2] << 16
    if tail >= 2:
        h ^= data[base + 1] << 8
    if tail >= 1:
        h ^= data[base]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return (h & 0x7FFFFFFF) % n


# -- the broker --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def srv(samsa_module):
    return samsa_module.start({"num.partitions": str(NPARTS),
                               "auto.create.topics.enable": "true"})


def create_topic(srv, name, partitions=NPARTS):
    with srv.connect(timeout=T(5)) as c:
        r = c.create_topic(name, partitions, timeout=T(10))
        assert r["error_code"] == 0, kwire.error_name(r["error_code"])
        c.wait_topic(name, partitions, timeout=T(10))


def stored(srv, topic, partition):
    """Raw Fetch of a whole partition: (batches, records)."""
    with srv.connect(timeout=T(5)) as c:
        batches, last = c.fetch_all(topic, partition, 0, max_bytes=4 << 20, timeout=T(30))
    assert last["error_code"] == 0, kwire.error_name(last["error_code"])
    assert all(b["crc_ok"] for b in batches), "a stored batch fails its CRC"
    return batches


def advertises(srv, api):
    with srv.connect(timeout=T(5)) as c:
        return api in c.api_versions(3, timeout=T(5))["api_keys"]


# -- reading back with real consumers ----------------------------------------------------------

def consume_confluent(srv, topic, counts):
    """{partition: [(offset, key, value, headers, timestamp)]} until counts
    (partition -> number of records) are read."""
    from confluent_kafka import TIMESTAMP_CREATE_TIME, Consumer, TopicPartition
    cons = Consumer({"bootstrap.servers": srv.bootstrap(), "group.id": "samsa-it-" + topic,
                     "enable.auto.commit": False, "socket.timeout.ms": int(T(10) * 1000),
                     "fetch.message.max.bytes": 4 << 20})
    got = {p: [] for p in counts}
    errors = []
    try:
        cons.assign([TopicPartition(topic, p, 0) for p in counts])
        deadline = time.monotonic() + T(30)
        while any(len(got[p]) < n for p, n in counts.items()):
            assert time.monotonic() < deadline, "confluent_kafka read back timed out: %s " \
                "of %s, errors %s" % ({p: len(g) for p, g in got.items()}, counts, errors[-5:])
            m = cons.poll(0.2)
            if m is None:
                continue
            if m.error():
                errors.append(str(m.error()))
                continue
            tstype, ts = m.timestamp()
            assert tstype == TIMESTAMP_CREATE_TIME, (tstype, ts)
            got[m.partition()].append((m.offset(), m.key(), m.value(),
                                       [(k, v) for k, v in (m.headers() or [])], ts))
    finally:
        cons.close()
    return got


def consume_kafka_python(srv, topic, counts):
    from kafka import KafkaConsumer, TopicPartition
    tmo = int(T(15) * 1000)
    cons = KafkaConsumer(bootstrap_servers=srv.bootstrap(), group_id=None,
                         enable_auto_commit=False, max_partition_fetch_bytes=4 << 20,
                         request_timeout_ms=tmo + 1000,
                         api_version_auto_timeout_ms=int(T(5) * 1000))
    got = {p: [] for p in counts}
    try:
        cons.assign([TopicPartition(topic, p) for p in counts])
        cons.seek_to_beginning()
        deadline = time.monotonic() + T(30)
        while any(len(got[p]) < n for p, n in counts.items()):
            assert time.monotonic() < deadline, "kafka-python read back timed out: %s of %s" % (
                {p: len(g) for p, g in got.items()}, counts)
            for tp, msgs in cons.poll(timeout_ms=200).items():
                for m in msgs:
                    assert m.timestamp_type == 0, m
                    got[tp.partition].append((m.offset, m.key, m.value,
                                              [(k, v) for k, v in m.headers], m.timestamp))
    finally:
        cons.close()
    return got


def kafka_python_lacks(codec):
    """Why kafka-python cannot decode codec here, or None."""
    from kafka import codec as kc
    have = {"none": True, "gzip": kc.has_gzip(), "snappy": kc.has_snappy(),
            "lz4": kc.has_lz4(), "zstd": kc.has_zstd()}
    module = {"gzip": "zlib", "snappy": "python3-snappy", "lz4": "python3-lz4",
              "zstd": "python3-zstandard"}
    if have[codec]:
        return None
    return "kafka-python 2.0.2 here cannot decode %s: the %s module is not installed" % (
        codec, module[codec])


CONSUMERS = {"confluent_kafka": consume_confluent, "kafka_python": consume_kafka_python}


# -- each codec: produce once, read back with each consumer ------------------------------------

def codec_records(tag):
    """[(partition or -1, timestamp, key, value, headers)]: keyed records
    (murmur2 partition), explicit partitions, null and empty keys and
    values, binary bytes, several / null / empty headers, a 200 KB value;
    values compress well so that batches do get compressed."""
    ts0 = 1700000000000
    recs = []
    for i in range(400):
        recs.append((-1, ts0 + i, b"key-%d" % (i % 37),
                     (b"%s value %d " % (tag.encode(), i)) * 12, [("seq", b"%d" % i)]))
    recs += [
        (0, ts0 + 1000, None, b"null key " * 20, [("h1", b"x"), ("h2", b"")]),
        (1, ts0 + 1001, b"tombstone-" + tag.encode(), None, [("only", b"y")]),
        (2, ts0 + 1002, b"", b"", []),
        (2, ts0 + 1003, b"\x00\xff\x01bin", b"\x00\x01\xfe\xff" * 64,
         [("", b"empty key"), ("null", None), ("dup", b"1"), ("dup", b"2")]),
        (-1, ts0 + 1004, b"big", b"0123456789abcdef" * 12800, []),
        (1, 0, b"epoch", b"timestamp 0", []),
    ]
    return recs


def hexf(b):
    if b is None:
        return "-"
    return b.hex() if b else "."


def write_records(path, recs):
    with open(path, "w") as f:
        for part, ts, k, v, hdrs in recs:
            f.write(" ".join([str(part), str(ts), hexf(k), hexf(v)]
                             + [x for hk, hv in hdrs for x in (hexf(hk.encode()), hexf(hv))])
                    + "\n")


_produced = {}


def produced(srv, codec, tmp_path_factory):
    """Produces codec_records() once per codec (module-wide); returns
    (topic, {(partition, offset): record}, counts)."""
    if codec in _produced:
        return _produced[codec]
    topic = "prod-%s" % codec
    create_topic(srv, topic)
    recs = codec_records(codec)
    d = tmp_path_factory.mktemp("codec-" + codec)
    write_records(str(d / "records"), recs)
    out = probe("file", srv.bootstrap(), topic, str(d / "records"),
                "compression.type=" + codec, "linger.ms=20", "probe.acks=%s" % (d / "acks"),
                *NOIDEM)
    assert out["sent"] == len(recs) and out["delivered"] == len(recs) \
        and out["errors"] == 0, out
    acks = read_acks(str(d / "acks"))
    assert sorted(acks) == list(range(len(recs)))
    want = {}
    for i, (part, ts, k, v, hdrs) in enumerate(recs):
        p, off, err = acks[i]
        assert err == "NONE", (i, err)
        if part >= 0:
            assert p == part, "record %d: partition %d, sent to %d" % (i, p, part)
        elif k is not None:
            assert p == java_partition(k, NPARTS), "record %d: key %r on %d" % (i, k, p)
        want[(p, off)] = (k, v, hdrs, ts)
    counts = collections.Counter(p for p, _ in want)
    for p in range(NPARTS):
        offs = sorted(o for q, o in want if q == p)
        assert offs == list(range(len(offs))), "partition %d offsets %s..." % (p, offs[:10])
    # what is stored: batches carry the codec (a batch that did not get
    # smaller goes out uncompressed, as in Java) and hold the records
    codecs = set()
    for p in range(NPARTS):
        batches = stored(srv, topic, p)
        codecs |= {b["codec"] for b in batches}
        assert all(b["producer_id"] == -1 for b in batches)
    assert codecs <= {0, CODEC_ID[codec]} and CODEC_ID[codec] in codecs, \
        "%s: stored batches have codecs %s" % (codec, sorted(codecs))
    _produced[codec] = (topic, want, dict(counts))
    return _produced[codec]


@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
@pytest.mark.parametrize("codec", CODECS)
def test_each_codec_read_back_unchanged(srv, codec, consumer, tmp_path_factory):
    if consumer == "kafka_python" and kafka_python_lacks(codec):
        pytest.fail(kafka_python_lacks(codec) + " (scripts/deps.sh installs it)")
    topic, want, counts = produced(srv, codec, tmp_path_factory)
    got = CONSUMERS[consumer](srv, topic, counts)
    seen = {}
    for p, msgs in got.items():
        for off, k, v, hdrs, ts in msgs:
            assert (p, off) not in seen, "%s: %d/%d read twice" % (consumer, p, off)
            seen[(p, off)] = (k, v, hdrs, ts)
    assert set(seen) == set(want), "%s %s: offsets differ" % (consumer, codec)
    for po in sorted(want):
        assert seen[po] == want[po], "%s %s: record at %s differs:\n got  %r\n want %r" % (
            consumer, codec, po, seen[po][:2] + seen[po][2:], want[po])


# -- close() right after send() ----------------------------------------------------------------

def check_seq_records(srv, topic, n, nparts=NPARTS):
    """Read back with confluent_kafka: every value 0..n-1 exactly once, per
    partition in send order, each key ("k<i % 97>") on its murmur2
    partition."""
    counts = {p: hw for p in range(nparts)
              for hw in [high_watermark(srv, topic, p)]}
    assert sum(counts.values()) == n, counts
    got = consume_confluent(srv, topic, counts)
    seen = set()
    for p, msgs in got.items():
        last = -1
        for off, k, v, _, _ in msgs:
            i = int(v)
            assert i not in seen, "duplicate %d" % i
            assert i > last, "partition %d out of order: %d after %d" % (p, i, last)
            assert k == b"k%d" % (i % 97) and java_partition(k, nparts) == p
            seen.add(i)
            last = i
    assert seen == set(range(n)), "missing %d" % (n - len(seen))


def high_watermark(srv, topic, p):
    with srv.connect(timeout=T(5)) as c:
        r = c.list_offsets(topic, p, -1, timeout=T(5))
    assert r["error_code"] == 0, kwire.error_name(r["error_code"])
    return r["offset"]


def test_close_right_after_send_delivers_all(srv):
    create_topic(srv, "close")
    out = probe("seq", srv.bootstrap(), "close", "5000", "linger.ms=60000",
                "batch.size=1000000", *NOIDEM)
    assert out["sent"] == 5000 and out["delivered"] == 5000, out
    assert out["close_err"] == "NONE" and out["errors"] == 0, out
    check_seq_records(srv, "close", 5000)


# -- a full buffer pool ------------------------------------------------------------------------

def test_full_pool_times_out_promptly(samsa):
    # every Produce handler sleeps 3 s: nothing completes while the pool fills
    s = samsa.start({"num.partitions": "1"},
                    env={"SAMSA_TEST_HANDLER_DELAY_MS": "3000",
                         "SAMSA_TEST_HANDLER_DELAY_API": "0"})
    out = probe("pool", s.bootstrap(), "pool", "enable.idempotence=false", "acks=1")
    assert out["err"] == "_TIMED_OUT", out
    assert out["sent"] >= 4, out                # 64 KiB pool, 16 KiB batches
    assert 90 <= out["blocked_ms"] < 1000 * samsa_harness.timeout_scale(), out


def ordered_but_for_resent_batches(vals, p):
    """Checks that vals (a partition's values in offset order) increase,
    except that a batch resent after its response was lost may follow its
    first copy again (non-idempotent at-least-once); returns how many
    values are such second copies."""
    dups, j, last = 0, 0, -1
    while j < len(vals):
        if vals[j] > last:
            last = vals[j]
            j += 1
            continue
        assert vals[j] in vals[:j], "partition %d out of order at offset %d: %d after %d" % (
            p, j, vals[j], last)
        k = vals.index(vals[j], 0, j)            # its first copy
        n = j - k
        assert vals[j:j + n] == vals[k:j], \
            "partition %d: offsets %d.. repeat %d..%d only in part: %s vs %s" % (
                p, j, k, j - 1, vals[j:j + n][:20], vals[k:j][:20])
        dups += n
        j += n
    return dups


# -- a restart in the middle of a non-idempotent run -------------------------------------------

@pytest.mark.parametrize("how", ["sigterm", "sigkill"])
def test_restart_non_idempotent_delivers_all_in_order(samsa, tmp_path, how):
    n = 100000
    overrides = {"num.partitions": str(NPARTS)}
    # SIGKILL: Produce handlers take 20 ms each so that a request is in
    # flight when the server dies (its batches must be retried); with 5 ms
    # a loaded machine could land the kill between two requests
    env = {"SAMSA_TEST_HANDLER_DELAY_MS": "20", "SAMSA_TEST_HANDLER_DELAY_API": "0"} \
        if how == "sigkill" else None
    s = samsa.start(overrides, env=env)
    create_topic(s, "restart")
    acks_path = str(tmp_path / "acks")
    proc = probe_async(str(tmp_path), "seq", s.bootstrap(), "restart", str(n), "probe.rate=20000",
                       "probe.acks=" + acks_path, "linger.ms=5", "batch.size=4096",
                       "retry.backoff.ms=20", "retry.backoff.max.ms=200",
                       "reconnect.backoff.max.ms=200",
                       "max.in.flight.requests.per.connection=1", "probe.flush=1",
                       *NOIDEM)
    try:
        # restart about a third of the way through
        ok = samsa_harness.wait_until(
            lambda: sum(high_watermark(s, "restart", p) for p in range(NPARTS)) >= n // 3,
            T(30), 0.05)
        assert ok, "the producer did not get going"
        assert proc.poll() is None, "the run ended before the restart"
        listeners = s.overrides["listeners"]
        if how == "sigterm":
            problems = s.stop()
            assert not problems, problems
        else:
            s.proc.send_signal(signal.SIGKILL)
            s.proc.wait(timeout=T(10))
            s.stopped = True                    # killed on purpose
        time.sleep(0.3)
        # the same command on the same directory and ports
        s = samsa.start(dict(overrides, **{"log.dirs": s.data_dir, "listeners": listeners}),
                        env=env, workdir=s.workdir, use_ports=False,
                        ports=(s.port, s.controller_port), retries=1)
        out, err = probe_result(proc, 120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert out["sent"] == n and out["delivered"] == n and out["errors"] == 0, out
    assert "closed" in err, "the producer did not see the restart:\n" + err[-2000:]
    if how == "sigkill":
        assert out["retries"] > 0, "no batch was retried: %s\n%s" % (out, err[-2000:])
    acks = read_acks(acks_path)
    assert sorted(acks) == list(range(n)) and all(e == "NONE" for _, _, e in acks.values())
    dups = 0
    for p in range(NPARTS):
        recs = kwire.records_of(stored(s, "restart", p))
        vals = [int(r["value"]) for r in recs]
        assert [r["offset"] for r in recs] == list(range(len(recs)))
        for i, (ap, off, _) in acks.items():
            if ap == p:
                assert vals[off] == i, "record %d acknowledged at %d/%d, which holds %d" % (
                    i, p, off, vals[off])
                assert recs[off]["key"] == b"k%d" % (i % 97)
                assert java_partition(recs[off]["key"], NPARTS) == p
        dups += ordered_but_for_resent_batches(vals, p)
    print("%s: %d retried records, %d duplicated" % (how, out["retries"], dups))
    assert dups <= out["retries"], (dups, out)
    if how == "sigterm":
        # a clean shutdown answers what it took in: nothing is written twice
        assert dups == 0, "%d records written twice across a clean restart" % dups


# -- idempotence without InitProducerId --------------------------------------------------------

@pytest.mark.parametrize("setting", ["default", "explicit"])
def test_idempotence_needs_init_producer_id(srv, setting):
    args = ["enable.idempotence=true"] if setting == "explicit" else []
    errs = []
    # probe.flush=1: the metrics (producer id) are read once every record
    # is delivered, not while the first InitProducerId may be in flight
    out = probe("seq", srv.bootstrap(), "idem-" + setting, "200", *args,
                "probe.flush=1", stderr=errs)
    # samsa-server advertises InitProducerId, so the idempotent producer
    # must just work (a broker without it: test_producer_fake.py)
    assert advertises(srv, API_INIT_PRODUCER_ID)
    assert out["delivered"] == 200 and out["errors"] == 0, out
    assert out["producer_id"] >= 0, out
    check_seq_records(srv, "idem-" + setting, 200)


def test_default_idempotence_off_with_acks_1(srv):
    # acks=1 without an explicit enable.idempotence turns it off (Java's rule)
    create_topic(srv, "acks1")
    out = probe("seq", srv.bootstrap(), "acks1", "1000", "acks=1")
    assert out["delivered"] == 1000 and out["errors"] == 0, out
    assert out["producer_id"] == -1
    check_seq_records(srv, "acks1", 1000)


# -- a batch the broker rejects as too large is split -----------------------------------------

@pytest.mark.parametrize("idempotence", ["default", "off"])
def test_batch_over_max_message_bytes_is_split(srv, idempotence):
    """Topic max.message.bytes=1024 against 16 KiB batches of ~20-byte
    records (linger.ms=50 fills them): each refused batch is split
    (halved) and re-enqueued at the front of its queue until the pieces
    fit; every record is delivered once, at its acknowledged offset, in
    send order per partition (without idempotence: with
    max.in.flight.requests.per.connection=1).  The idempotent run (the
    default, acks=all)
    keeps the refused batch's sequences for its pieces: the broker takes
    them without an epoch bump or OUT_OF_ORDER_SEQUENCE_NUMBER."""
    topic = "split-" + idempotence
    n = 20000
    with srv.connect(timeout=T(5)) as c:
        r = c.create_topic(topic, NPARTS, {"max.message.bytes": "1024"}, timeout=T(10))
        assert r["error_code"] == 0, kwire.error_name(r["error_code"])
        c.wait_topic(topic, NPARTS, timeout=T(10))
    # without idempotence order holds only with one request in flight (a
    # later batch already in flight would overtake the split pieces, as in
    # Java)
    args = list(NOIDEM) + ["max.in.flight.requests.per.connection=1"] \
        if idempotence == "off" else []
    stderr = []
    # probe.warmup: the broker must know the producer on every partition
    # before one of its batches is refused (97 records, one per key, are
    # flushed first: batches of ~32 records fit in 1024 bytes).  Kafka's broker (and ours)
    # accepts any first sequence of a producer it has no state for
    # (KIP-360), so while the first, refused batch of a partition is split,
    # a small later batch already in flight would be stored first, and the
    # pieces then need an epoch bump, out of order (Java's producer alike)
    out = probe("seq", srv.bootstrap(), topic, str(n), "linger.ms=50", "batch.size=16384",
                "probe.flush=1", "probe.warmup=97", *args, timeout=120, stderr=stderr)
    assert out["sent"] == n and out["delivered"] == n and out["errors"] == 0, out
    assert out["splits"] > 0, out
    if idempotence == "default":
        assert out["producer_id"] >= 0, out
        assert "bumped" not in stderr[0], \
            [ln for ln in stderr[0].splitlines() if "bump" in ln][:10]
    total = 0
    for p in range(NPARTS):
        batches = stored(srv, topic, p)
        assert all(b["size"] <= 1024 for b in batches), [b["size"] for b in batches][:10]
        if idempotence == "default":
            # the pieces carry the refused batch's sequences, in order
            seqs = [(b["base_sequence"], b["records_count"]) for b in batches]
            assert seqs[0][0] == 0, seqs[:5]
            for (s0, c0), (s1, _) in zip(seqs, seqs[1:]):
                assert s1 == s0 + c0, "partition %d: sequence gap %s" % (p, seqs[:20])
        vals = [int(r["value"]) for r in kwire.records_of(batches)]
        assert vals == sorted(set(vals)), "partition %d: duplicates or order lost" % p
        total += len(vals)
    assert total == n
    check_seq_records(srv, topic, n)


@pytest.mark.parametrize("conf", [("linger.ms=1000",),
                                  ("linger.ms=0",
                                   "max.in.flight.requests.per.connection=1")])
def test_single_record_over_max_message_bytes_fails(srv, tmp_path, conf):
    """A record alone over the topic's max.message.bytes cannot be split:
    it fails with MESSAGE_TOO_LARGE (Java's RecordTooLargeException), and
    the records around it are delivered, in order.

    linger.ms makes the three one batch, whose split pieces carry its
    sequences in order.  With linger.ms=0 the sender may drain
    [small-1, big] before small-2 arrives and send [small-2] (sequence 2)
    while the first batch is refused: Kafka's broker accepts any first
    sequence from a producer it has no state for (KIP-360), so small-2 is
    stored and small-1, resent after the split, follows it, as with
    Java's producer.  Only max.in.flight.requests.per.connection=1 orders
    that case, tested too."""
    topic = "split-single-%d" % len(conf)
    with srv.connect(timeout=T(5)) as c:
        r = c.create_topic(topic, 1, {"max.message.bytes": "1024"}, timeout=T(10))
        assert r["error_code"] == 0, kwire.error_name(r["error_code"])
        c.wait_topic(topic, 1, timeout=T(10))
    path = str(tmp_path / "recs")
    write_records(path, [(0, -1, None, b"small-1", []),
                         (0, -1, None, b"x" * 3000, []),
                         (0, -1, None, b"small-2", [])])
    out = probe("file", srv.bootstrap(), topic, path, "batch.size=16384", *conf)
    assert out["sent"] == 3 and out["delivered"] == 2 and out["errors"] == 1, out
    assert out["first_err"] == "MESSAGE_TOO_LARGE", out
    vals = [r["value"] for r in kwire.records_of(stored(srv, topic, 0))]
    assert vals == [b"small-1", b"small-2"], vals


# -- futures, metadata, auto-creation, perf produce --------------------------------------------

def test_future_headers_timestamp(srv):
    create_topic(srv, "future")
    out = probe("future", srv.bootstrap(), "future", *NOIDEM)
    assert out == {"err": "NONE", "partitions": NPARTS, "partition": 1,
                   "offset": 0, "timestamp": 1700000000123}, out
    got = consume_confluent(srv, "future", {1: 1})
    assert got[1] == [(0, b"key", b"value", [("h1", b"hv")], 1700000000123)]


def test_auto_created_topic(srv):
    # the producer's Metadata asks for auto-creation (num.partitions=3)
    out = probe("seq", srv.bootstrap(), "auto-created", "3000", *NOIDEM)
    assert out["delivered"] == 3000 and out["errors"] == 0, out
    check_seq_records(srv, "auto-created", 3000)


def test_unknown_topic_times_out(samsa):
    s = samsa.start({"auto.create.topics.enable": "false"})
    t0 = time.monotonic()
    out = probe("seq", s.bootstrap(), "nope", "1", "max.block.ms=300", *NOIDEM)
    assert out["sent"] == 0 and out["send_err"] == "_TIMED_OUT", out
    assert time.monotonic() - t0 < T(5)


def test_perf_produce_json(srv):
    p = run([os.path.join(build_dir(), "samsa"), "perf", "produce",
             "--topic", "perf", "--num-records", "50000", "--record-size", "100",
             "--throughput", "-1", "--producer-props",
             "bootstrap.servers=" + srv.bootstrap(), "acks=1", "--json"])
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    for k in ("records", "records_per_sec", "mb_per_sec", "avg_latency_ms",
              "p50_ms", "p95_ms", "p99_ms", "p999_ms", "max_latency_ms"):
        assert k in out, k
    assert out["records"] == 50000
    assert out["p50_ms"] <= out["p99_ms"] <= out["max_latency_ms"] + 0.001
    assert sum(high_watermark(srv, "perf", q) for q in range(NPARTS)) == 50000


def test_perf_produce_bad_config_names_key(srv):
    p = run([os.path.join(build_dir(), "samsa"), "perf", "produce",
             "--topic", "perf", "--num-records", "1", "--record-size", "1",
             "--throughput", "-1", "--producer-props",
             "bootstrap.servers=" + srv.bootstrap(), "linger.ms=x"])
    assert p.returncode == 2
    assert "'linger.ms'" in p.stderr
