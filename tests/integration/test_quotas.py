"""Client quotas (issue 8): AlterClientQuotas / DescribeClientQuotas over
the raw protocol (Kafka's validation messages, filters, validate_only, a
restart keeps them), and their enforcement: a produce quota holds a greedy
confluent-kafka producer at its rate while another client id runs free, a
fetch quota holds a consumer (test_quotas_fetch.py: the throttled fetch
itself), and a throttled connection is not read until
its delay has passed."""

import json
import struct
import threading
import time

import pytest

import kwire
import promtext
import samsa_harness
from samsa_harness import T

API_DESCRIBE_CLIENT_QUOTAS = 48
API_ALTER_CLIENT_QUOTAS = 49
ERR_INVALID_REQUEST = 42
ERR_UNSUPPORTED_VERSION = 35


# -- raw codecs for keys 48 and 49 (v0 classic, v1 flexible) -------------------

def _request(conn, key, version, body, timeout=10.0):
    flex = version >= 1
    corr = conn.corr()
    hdr = kwire.encode_request_header(key, version, corr, conn.client_id,
                                      header_version=2 if flex else 1)
    conn.send(kwire.frame(hdr + body), timeout)
    payload = conn.recv_frame(timeout)
    r = kwire.Reader(payload)
    assert r.i32() == corr
    if flex:
        r.tags()
    return r


def _f64(r):
    return struct.unpack(">d", r._take(8))[0]


def alter(conn, entries, version=1, validate_only=False):
    """entries: [({type: name or None}, [(key, value or None to remove)])];
    returns [(error_code, message, {type: name})]."""
    flex = version >= 1
    w = kwire.Writer()

    def entity(ww, kv):
        ww.string(kv[0], flex).string(kv[1], flex)
        if flex:
            ww.tags()

    def op(ww, kv):
        ww.string(kv[0], flex).raw(struct.pack(">d", kv[1] or 0.0))
        ww.boolean(kv[1] is None)
        if flex:
            ww.tags()

    def entry(ww, e):
        ww.array(list(e[0].items()), entity, flex)
        ww.array(e[1], op, flex)
        if flex:
            ww.tags()

    w.array(entries, entry, flex).boolean(validate_only)
    if flex:
        w.tags()
    r = _request(conn, API_ALTER_CLIENT_QUOTAS, version, w.bytes())
    r.i32()                                             # throttle

    def rent(rr):
        t, n = rr.string(flex), rr.string(flex, nullable=True)
        if flex:
            rr.tags()
        return t, n

    def rentry(rr):
        code = rr.i16()
        msg = rr.string(flex, nullable=True)
        ent = dict(rr.array(rent, flex))
        if flex:
            rr.tags()
        return code, msg, ent

    out = r.array(rentry, flex)
    if flex:
        r.tags()
    r.done()
    return out


def describe(conn, components, strict=False, version=1):
    """components: [(type, match_type, match)]; returns (error_code,
    message, {frozenset(entity items): {key: value}} or None)."""
    flex = version >= 1
    w = kwire.Writer()

    def comp(ww, c):
        ww.string(c[0], flex).i8(c[1]).string(c[2], flex)
        if flex:
            ww.tags()

    w.array(components, comp, flex).boolean(strict)
    if flex:
        w.tags()
    r = _request(conn, API_DESCRIBE_CLIENT_QUOTAS, version, w.bytes())
    r.i32()
    code = r.i16()
    msg = r.string(flex, nullable=True)

    def ent(rr):
        t, n = rr.string(flex), rr.string(flex, nullable=True)
        if flex:
            rr.tags()
        return t, n

    def val(rr):
        k = rr.string(flex)
        v = _f64(rr)
        if flex:
            rr.tags()
        return k, v

    def entry(rr):
        e = frozenset(rr.array(ent, flex))
        vals = dict(rr.array(val, flex))
        if flex:
            rr.tags()
        return e, vals

    entries = r.array(entry, flex, nullable=True)
    if flex:
        r.tags()
    r.done()
    return code, msg, None if entries is None else dict(entries)


def ok(results):
    assert all(code == 0 for code, _, _ in results), results


# -- admin ----------------------------------------------------------------------

@pytest.mark.parametrize("version", [0, 1])
def test_alter_describe_round_trip(samsa, version):
    srv = samsa.start()
    with srv.connect() as c:
        ok(alter(c, [({"client-id": "A"}, [("producer_byte_rate", 1048576.0),
                                           ("consumer_byte_rate", 2048.0)]),
                     ({"client-id": None}, [("consumer_byte_rate", 1000.0)]),
                     ({"user": "ANONYMOUS", "client-id": "A"},
                      [("request_percentage", 12.5)]),
                     ({"ip": "127.0.0.1"}, [("connection_creation_rate", 5.0)])],
                 version=version))
        code, msg, got = describe(c, [], version=version)
        assert code == 0 and msg is None
        assert got == {
            frozenset({("client-id", "A")}): {"producer_byte_rate": 1048576.0,
                                              "consumer_byte_rate": 2048.0},
            frozenset({("client-id", None)}): {"consumer_byte_rate": 1000.0},
            frozenset({("user", "ANONYMOUS"), ("client-id", "A")}):
                {"request_percentage": 12.5},
            frozenset({("ip", "127.0.0.1")}): {"connection_creation_rate": 5.0},
        }
        # exact name; non-strict also finds the user+client-id entity
        _, _, got = describe(c, [("client-id", 0, "A")], version=version)
        assert set(got) == {frozenset({("client-id", "A")}),
                            frozenset({("user", "ANONYMOUS"), ("client-id", "A")})}
        _, _, got = describe(c, [("client-id", 0, "A")], strict=True,
                             version=version)
        assert set(got) == {frozenset({("client-id", "A")})}
        # default entity; any specified name (the default excluded)
        _, _, got = describe(c, [("client-id", 1, None)], version=version)
        assert set(got) == {frozenset({("client-id", None)})}
        _, _, got = describe(c, [("client-id", 2, None)], strict=True,
                             version=version)
        assert set(got) == {frozenset({("client-id", "A")})}
        _, _, got = describe(c, [("ip", 2, None)], version=version)
        assert set(got) == {frozenset({("ip", "127.0.0.1")})}
        # remove one key, then the last key of an entity: it disappears
        ok(alter(c, [({"client-id": "A"}, [("consumer_byte_rate", None)]),
                     ({"client-id": None}, [("consumer_byte_rate", None)])],
                 version=version))
        _, _, got = describe(c, [("client-id", 0, "A")], strict=True)
        assert got == {frozenset({("client-id", "A")}):
                       {"producer_byte_rate": 1048576.0}}
        _, _, got = describe(c, [("client-id", 1, None)])
        assert got == {}


BAD = [
    ({}, [("producer_byte_rate", 1.0)], "Invalid empty client quota entity"),
    ({"group": "g"}, [("producer_byte_rate", 1.0)],
     "Unhandled client quota entity type: group"),
    ({"client-id": ""}, [("producer_byte_rate", 1.0)],
     "Empty client-id not supported"),
    ({"client-id": "A"}, [("foo", 1.0)], "Invalid configuration key foo"),
    ({"client-id": "A"}, [("connection_creation_rate", 1.0)],
     "Invalid configuration key connection_creation_rate"),
    ({"ip": "127.0.0.1"}, [("producer_byte_rate", 1.0)],
     "Invalid configuration key producer_byte_rate"),
    ({"client-id": "A"}, [("producer_byte_rate", 0.0)],
     "Quota producer_byte_rate must be greater than 0"),
    ({"client-id": "A"}, [("consumer_byte_rate", -5.0)],
     "Quota consumer_byte_rate must be greater than 0"),
    ({"client-id": "A"}, [("producer_byte_rate", 1.5)],
     "producer_byte_rate cannot be a fractional value."),
    ({"ip": "127.0.0.1"}, [("connection_creation_rate", 3e9)],
     "Proposed value for connection_creation_rate is too large for an INT."),
    ({"ip": "127.0.0.1", "client-id": "A"}, [("connection_creation_rate", 1.0)],
     "Invalid quota entity combination, IP entity shouldnot be combined with "
     "User or ClientId"),
    ({"ip": "not-an-ip"}, [("connection_creation_rate", 1.0)],
     "not-an-ip is not a valid IP or resolvable host."),
]


def test_bad_alterations(samsa):
    srv = samsa.start()
    with srv.connect() as c:
        entries = [(e, ops) for e, ops, _ in BAD]
        got = alter(c, entries + [({"client-id": "good"},
                                   [("producer_byte_rate", 100.0)])])
        for (code, msg, ent), (e, _, want) in zip(got, BAD):
            assert (code, msg) == (ERR_INVALID_REQUEST, want), e
            assert ent == e
        assert got[-1][0] == 0
        # a duplicate key: Kafka names the entity
        got = alter(c, [({"client-id": "A"}, [("producer_byte_rate", 5.0),
                                              ("producer_byte_rate", 6.0)])])
        assert got[0][:2] == (ERR_INVALID_REQUEST,
                              "Duplicate quota key producer_byte_rate not updating "
                              "quota for this entity "
                              "ClientQuotaEntity(entries={client-id=A})")
        # validate_only changes nothing; only the good entry was applied
        ok(alter(c, [({"client-id": "v"}, [("producer_byte_rate", 9.0)])],
                 validate_only=True))
        _, _, got = describe(c, [])
        assert got == {frozenset({("client-id", "good")}): {"producer_byte_rate": 100.0}}


def test_bad_describe_filters(samsa):
    srv = samsa.start()
    with srv.connect() as c:
        for comps, code, msg in [
            ([("", 2, None)], ERR_INVALID_REQUEST, "Invalid empty entity type."),
            ([("user", 2, None), ("user", 1, None)], ERR_INVALID_REQUEST,
             "Entity type user cannot appear more than once in the filter."),
            ([("group", 2, None)], ERR_UNSUPPORTED_VERSION, "Unsupported entity type group"),
            ([("user", 0, None)], ERR_INVALID_REQUEST,
             "Request specified MATCH_TYPE_EXACT, but set match string to null."),
            ([("user", 1, "x")], ERR_INVALID_REQUEST,
             "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."),
            ([("user", 7, None)], ERR_UNSUPPORTED_VERSION, "Unknown match type 7"),
            ([("ip", 2, None), ("user", 2, None)], ERR_INVALID_REQUEST,
             "Invalid entity filter component combination. IP filter component "
             "should not be used with user or clientId filter component."),
        ]:
            assert describe(c, comps) == (code, msg, None), comps


def test_restart_keeps_quotas(samsa):
    srv = samsa.start()
    with srv.connect() as c:
        ok(alter(c, [({"user": None, "client-id": "x"}, [("producer_byte_rate", 7.0)]),
                     ({"client-id": "y"}, [("consumer_byte_rate", 8.0)])]))
        ok(alter(c, [({"client-id": "y"}, [("consumer_byte_rate", None)])]))
    srv.stop()
    srv = samsa.start(workdir=srv.workdir)
    with srv.connect() as c:
        assert describe(c, [])[2] == {
            frozenset({("user", None), ("client-id", "x")}): {"producer_byte_rate": 7.0}}


# -- enforcement -----------------------------------------------------------------

def scrape(srv):
    import urllib.request
    with urllib.request.urlopen(srv.metrics_url("/metrics"), timeout=T(10)) as r:
        return promtext.parse(r.read().decode())


def greedy_producer(srv, topic, client_id, seconds, out):
    """Produces 10 KB values as fast as the client lets it for `seconds`
    from the first delivery; out gets the delivered bytes in that span and
    the throttle events."""
    from confluent_kafka import Producer
    value = b"q" * 10000
    events, deliveries = [], []
    p = Producer({"bootstrap.servers": srv.bootstrap(), "client.id": client_id,
                  "linger.ms": 1, "batch.size": 16384,
                  "queue.buffering.max.kbytes": 1024,
                  "max.in.flight.requests.per.connection": 5,
                  "throttle_cb": lambda ev: events.append(ev.throttle_time)})

    def dr(err, msg):
        if err is None:
            deliveries.append((time.monotonic(), len(msg.value())))

    deadline = time.monotonic() + T(60)
    while time.monotonic() < deadline:
        if deliveries and time.monotonic() - deliveries[0][0] > seconds + 0.5:
            break
        try:
            p.produce(topic, value=value, on_delivery=dr)
        except BufferError:
            p.poll(0.02)
        p.poll(0)
    p.purge()
    p.flush(T(10))
    t0 = deliveries[0][0] if deliveries else 0
    out["bytes"] = sum(n for t, n in deliveries if t - t0 <= seconds)
    out["throttle_events"] = [t for t in events if t > 0]


def test_produce_quota_holds_a_greedy_producer(samsa):
    """The acceptance test of issue 8's quotas.  The rate is Kafka's: a
    young sensor divides by (quota.window.num - 1) windows at least, so a
    greedy client first bursts that many windows' worth, is throttled, and
    (its burst sitting in one window) bursts again when that window expires.
    With the default 11 x 1 s that is about 11 MB every 11 s: right over 11 s,
    about 1.10 over 10.  quota.window.num=2 makes the same rule converge
    within 2 s, so the 10 s average is within a few percent."""
    srv = samsa.start(overrides={"quota.window.num": "2"})
    with srv.connect() as c:
        assert c.create_topic("q")["error_code"] == 0
        c.wait_topic("q", timeout=T(10))
        ok(alter(c, [({"client-id": "A"}, [("producer_byte_rate", 1048576.0)])]))
    a, b = {}, {}
    ta = threading.Thread(target=greedy_producer, args=(srv, "q", "A", 10.0, a))
    tb = threading.Thread(target=greedy_producer, args=(srv, "q", "B", 10.0, b))
    ta.start()
    tb.start()
    ta.join(T(90))
    tb.join(T(90))
    rate = a["bytes"] / 10.0
    print("A %.0f B/s (%d throttle events), B %.0f B/s"
          % (rate, len(a["throttle_events"]), b["bytes"] / 10.0))
    assert 0.9 * 1048576 <= rate <= 1.1 * 1048576, rate
    assert a["throttle_events"], "A never saw throttle_time_ms > 0"
    assert b["throttle_events"] == []
    assert b["bytes"] > 1.5 * a["bytes"], (a["bytes"], b["bytes"])
    fams = scrape(srv)
    thr = fams["samsa_client_quota_throttled_requests_total"]
    assert thr.value(quota_type="Produce", user="", client_id="A") > 0
    assert thr.value(quota_type="Produce", user="", client_id="B") == 0
    assert fams["samsa_client_quota_limit"].value(
        quota_type="Produce", user="", client_id="A") == 1048576
    assert fams["samsa_client_quota_limit"].value(
        quota_type="Produce", user="", client_id="B") == 0
    # only producer_byte_rate is set: Kafka enables each quota type on its
    # own, so no request-time (or fetch) sensor exists
    assert fams["samsa_client_quota_request_time"].samples == []
    assert fams["samsa_client_quota_limit"].find(quota_type="Request") == []
    assert fams["samsa_client_quota_limit"].find(quota_type="Fetch") == []


@pytest.mark.parametrize("version", [5, 9])
def test_throttled_connection_is_not_read(samsa, tmp_path, version):
    """Produce v5 predates KIP-219 and v9 follows it: either way the
    response comes at once with throttle_time_ms and the connection is not
    read until the delay has passed; another client is answered meanwhile.
    The request log has the throttle time."""
    log = str(tmp_path / "requests.log")
    srv = samsa.start({"request.log.enable": "true", "request.log.file": log})
    with srv.connect() as c:
        assert c.create_topic("t")["error_code"] == 0
        c.wait_topic("t", timeout=T(10))
        # a 40 KB request over the 10 s minimum span is 4000 B/s: against
        # 3100 B/s, (4000 - 3100) / 3100 * 10 s, about 2.9 s of throttle
        ok(alter(c, [({"client-id": "slow"}, [("producer_byte_rate", 3100.0)])]))
    batch = kwire.encode_batch([kwire.Record(b"x" * 40000)])
    with kwire.Conn(samsa_harness.HOST, srv.port, client_id="slow") as slow, \
            srv.connect(client_id="other") as other:
        p = slow.produce("t", 0, batch, version=version, timeout=T(10))
        got = time.monotonic()
        assert p["error_code"] == 0
        throttle_ms = p["throttle_time_ms"]
        assert 2000 <= throttle_ms <= 5000, throttle_ms
        corr = slow.corr()
        slow.send(kwire.api_versions_request(0, corr, "slow"), T(5))
        t = time.monotonic()
        other.api_versions(0, timeout=T(5))         # others are served
        assert time.monotonic() - t < 1.0
        with pytest.raises(kwire.FrameTimeout):
            slow.recv_frame(timeout=throttle_ms / 1000.0 - 0.5)
        payload = slow.recv_frame(timeout=T(5))
        waited = time.monotonic() - got
        assert kwire.peek_correlation_id(payload) == corr
        assert waited >= throttle_ms / 1000.0 - 0.05, (waited, throttle_ms)

    def logged(lines):
        return [x["throttleTimeMs"] for x in lines
                if x["requestHeader"]["clientId"] == "slow"
                and x["requestHeader"]["requestApiKey"] == 0]

    def read_log():
        with open(log) as f:
            return [json.loads(x) for x in f.read().split("\n")[:-1] if x.strip()]

    assert samsa_harness.wait_until(lambda: logged(read_log()), T(5))
    assert logged(read_log()) == [throttle_ms]


def test_fetch_quota_holds_a_consumer(samsa):
    srv = samsa.start()
    with srv.connect() as c:
        assert c.create_topic("f")["error_code"] == 0
        c.wait_topic("f", timeout=T(10))
        for _ in range(40):                         # 4 MB
            p = c.produce("f", 0, kwire.encode_batch(
                [kwire.Record(b"y" * 10000) for _ in range(10)]), timeout=T(10))
            assert p["error_code"] == 0
        ok(alter(c, [({"client-id": "slowc"}, [("consumer_byte_rate", 100000.0)])]))

    def consume(client_id, seconds):
        total, throttled, off = 0, 0, 0
        with kwire.Conn(samsa_harness.HOST, srv.port, client_id=client_id) as cc:
            end = time.monotonic() + seconds
            while time.monotonic() < end and off < 400:
                r = cc.fetch("f", 0, off, max_bytes=262144,
                             partition_max_bytes=262144, timeout=T(15))
                recs = kwire.records_of(r["batches"])
                off += len(recs)
                total += sum(len(x["value"]) for x in recs)
                throttled += r["response"]["throttle_time_ms"] > 0
        return total, throttled

    free, free_thr = consume("fastc", 4.0)
    slow, slow_thr = consume("slowc", 4.0)
    assert free == 4000000 and free_thr == 0
    # the young rate divides by the 10 s minimum span: 10 x 100 KB pass (in
    # 200 KB fetches; the fifth may take the rate just over and wait for
    # the span to grow a little), then every fetch that would take the
    # rate over the quota is answered empty with its throttle time (Kafka's
    # throttled fetch): in 4 s, at most the 10 s window's 1 MB (without the
    # quota, all 4 MB at once)
    assert slow_thr > 0
    assert 800000 <= slow <= 1000000, slow


def run_producer_probe(*args, timeout=60):
    """tests/integration/producer_probe.c (libsamsa): its JSON line, stderr
    and how long it ran."""
    import os
    import subprocess
    d = os.environ.get("SAMSA_BUILD_DIR")
    if not d:
        pytest.skip("SAMSA_BUILD_DIR not set: run through ctest")
    t = time.monotonic()
    p = subprocess.run([os.path.join(d, "producer_probe")] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=T(timeout))
    took = time.monotonic() - t
    found = samsa_harness.sanitizer_reports(p.stderr)
    assert not found, "sanitizer report (%s):\n%s" % (found, p.stderr[-6000:])
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr, took


def test_libsamsa_holds_back_while_throttled(samsa, tmp_path):
    """KIP-219 on the client side: after a Produce response with
    throttle_time_ms, libsamsa sends that broker nothing until the delay
    has passed.  The broker does not read a throttled connection either, so
    a client that sent at once would have its next request sit unread for
    the whole delay: with request.timeout.ms (1.5 s) shorter than the delay
    (about 2.9 s) that request times out, the connection is closed and the
    batch retried.  Held back, the request is sent when the delay ends and
    answered at once: no timeout, no retry."""
    log = str(tmp_path / "requests.log")
    srv = samsa.start({"request.log.enable": "true", "request.log.file": log})
    with srv.connect() as c:
        assert c.create_topic("thr", num_partitions=1)["error_code"] == 0
        c.wait_topic("thr", timeout=T(10))
        # as in test_throttled_connection_is_not_read: a 40 KB first
        # request against 3100 B/s over the 10 s minimum span, about 2.9 s
        ok(alter(c, [({"client-id": "thr"}, [("producer_byte_rate", 3100.0)])]))
    # 4500 small records, 40 KB batches, one request at a time: a 40 KB
    # request, then (after its throttled response) one of about 20 KB
    n = 4500
    out, err, took = run_producer_probe(
        "seq", srv.bootstrap(), "thr", str(n), "client.id=thr",
        "enable.idempotence=false", "acks=all",
        "max.in.flight.requests.per.connection=1", "batch.size=40000",
        "linger.ms=1000", "request.timeout.ms=1500",
        "delivery.timeout.ms=60000", "probe.flush=1")
    assert out["delivered"] == n and out["errors"] == 0, (out, err[-3000:])

    def produces():
        with open(log) as f:
            lines = [json.loads(x) for x in f.read().split("\n")[:-1]
                     if x.strip()]
        return [x["throttleTimeMs"] for x in lines
                if x["requestHeader"]["clientId"] == "thr"
                and x["requestHeader"]["requestApiKey"] == 0]

    assert samsa_harness.wait_until(lambda: len(produces()) >= 2, T(5))
    thr = produces()
    print("probe", out, "took %.2f s, produce throttles %s" % (took, thr))
    assert thr[0] >= 2000, thr                   # the delay was long enough
    assert out["retries"] == 0, (out, err[-3000:])
    assert "timed out" not in err, err[-3000:]
    assert len(thr) == 2, thr
    assert took >= thr[0] / 1000.0 - 0.1, (took, thr)
