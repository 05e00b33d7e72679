"""A throttled Fetch as Kafka's KafkaApis.handleFetchRequest answers it: a
fetch over the client's consumer_byte_rate (or request_percentage) quota
is answered empty (no topics, ThrottleTimeMs, session 0), its bytes are
taken back out of the fetch rate and are not counted as sent; a fetch is
shrunk to what the client's quota allows in one quota span and to the
broker's fetch.max.bytes, beyond the first batch.  libsamsa's and
librdkafka's consumers take the empty answers in their stride."""

import time

import kwire
import samsa_harness
from samsa_harness import T
from test_quotas import alter, ok, scrape

VALUE = 7000                    # one record per batch: about 7.1 KB each


def fill(c, topic, batches):
    """Creates topic and appends `batches` one-record batches; returns the
    size of one batch."""
    assert c.create_topic(topic)["error_code"] == 0
    c.wait_topic(topic, timeout=T(10))
    batch = kwire.encode_batch([kwire.Record(b"v" * VALUE)])
    for _ in range(batches):
        assert c.produce(topic, 0, batch, timeout=T(10))["error_code"] == 0
    return len(batch)


def fetch(conn, topic, offset, max_bytes, version=12):
    """A raw Fetch of partition 0 from offset: the whole response."""
    body = kwire.encode_fetch_request(
        version, [(topic, [(0, offset, 50 * 1024 * 1024)])], max_wait_ms=0,
        min_bytes=1, max_bytes=max_bytes)
    return conn.request(kwire.API_FETCH, version, body, T(20))


def records_bytes(r):
    """The record bytes of a response's only partition (a partial batch at
    the end included, as Kafka sends it), and its whole batches' records."""
    p = r["topics"][0]["partitions"][0]
    assert p["error_code"] == 0
    batches, _ = kwire.decode_batches(p["records"])
    return len(p["records"] or b""), kwire.records_of(batches)


def bytes_out(srv, topic):
    return scrape(srv)["samsa_topic_bytes_out_total"].value(topic=topic)


def test_throttled_fetch_is_answered_empty(samsa):
    """consumer_byte_rate 10000 B/s, 11 windows of 1 s: the first fetch
    (about 57 KB) is within; the next, shrunk to the 100000 B window, takes
    the rate over it and is answered with no topics and a throttle time,
    and its bytes are taken back out of the rate (else the next fetch
    would be throttled too) and not counted as sent.  The connection is
    not read until the throttle ends; then a fetch gets data again."""
    srv = samsa.start()
    with srv.connect() as c:
        fill(c, "f", 40)
        ok(alter(c, [({"client-id": "slowf"},
                      [("consumer_byte_rate", 10000.0)])]))
    before = bytes_out(srv, "f")
    with kwire.Conn(samsa_harness.HOST, srv.port, client_id="slowf") as cc:
        r = fetch(cc, "f", 0, 60000)
        assert r["throttle_time_ms"] == 0
        n1, recs = records_bytes(r)
        assert 50000 < n1 <= 60000, n1
        off = recs[-1]["offset"] + 1

        r = fetch(cc, "f", off, 50 * 1024 * 1024)
        got = time.monotonic()
        throttle_ms = r["throttle_time_ms"]
        # (57 KB + 99 KB) / 10 s against 10000 B/s: about 5.6 s
        assert 3000 <= throttle_ms <= 8000, throttle_ms
        assert r["topics"] == []
        assert r["error_code"] == 0 and r["session_id"] == 0

        r = fetch(cc, "f", off, 1)
        waited = time.monotonic() - got
        assert waited >= throttle_ms / 1000.0 - 0.05, (waited, throttle_ms)
        assert r["throttle_time_ms"] == 0
        n3, recs = records_bytes(r)
        assert len(recs) == 1 and recs[0]["offset"] == off
    # only the records sent count as bytes out
    assert samsa_harness.wait_until(
        lambda: bytes_out(srv, "f") - before == n1 + n3, T(5)), \
        (bytes_out(srv, "f") - before, n1, n3)


def test_fetch_is_shrunk_to_the_quota_window(samsa):
    """A 50 MB MaxBytes fetch under consumer_byte_rate 10000 (11 windows of
    1 s) reads at most 10000 * 10 = 100000 B of records.  With its headers
    that is just over what a young sensor allows (100000 B over its 10 s
    minimum span), so, as in Kafka, the first such fetch is throttled, by
    a few ms (unshrunk, its 283 KB would cost about 18 s) and answered
    empty; once that has passed the span has grown enough for the same
    fetch to bring its 100000 B.  A client without a quota gets all."""
    srv = samsa.start()
    with srv.connect() as c:
        size = fill(c, "w", 40)
        ok(alter(c, [({"client-id": "windowed"},
                      [("consumer_byte_rate", 10000.0)])]))
    with kwire.Conn(samsa_harness.HOST, srv.port, client_id="windowed") as cc:
        r = fetch(cc, "w", 0, 50 * 1024 * 1024)
        assert 0 < r["throttle_time_ms"] <= 100, r["throttle_time_ms"]
        assert r["topics"] == []
        # the throttle time makes the span just long enough: give it 50 ms
        # more, as samsa_now_ms counts whole ms
        time.sleep(r["throttle_time_ms"] / 1000.0 + 0.05)
        r = fetch(cc, "w", 0, 50 * 1024 * 1024)
        assert r["throttle_time_ms"] == 0
        n, recs = records_bytes(r)
        assert 100000 - size < n <= 100000, (n, size)
        assert len(recs) == 100000 // size
    with kwire.Conn(samsa_harness.HOST, srv.port, client_id="free") as cc:
        n, recs = records_bytes(fetch(cc, "w", 0, 50 * 1024 * 1024))
        assert len(recs) == 40 and n == 40 * size


def test_fetch_max_bytes_bounds_a_fetch(samsa):
    """The broker's fetch.max.bytes bounds MaxBytes; the first batch still
    goes out whole when it alone is larger (KIP-74)."""
    srv = samsa.start({"fetch.max.bytes": "20000"})
    with srv.connect() as c:
        size = fill(c, "m", 10)
        n, recs = records_bytes(fetch(c, "m", 0, 50 * 1024 * 1024))
        assert 2 * size <= n <= 20000 and len(recs) == 2
    srv.stop()
    srv = samsa.start({"fetch.max.bytes": "1024"}, workdir=srv.workdir)
    with srv.connect() as c:
        c.wait_topic("m", timeout=T(10))
        n, recs = records_bytes(fetch(c, "m", 0, 50 * 1024 * 1024))
        assert n == size and len(recs) == 1


def test_libsamsa_consumer_is_held_near_its_quota(samsa):
    """libsamsa's consumer under consumer_byte_rate 20000 B/s with
    quota.window.num=2 (a 1 s quota span, so 20000 B a fetch): it takes the
    empty throttled answers in its stride (the netclient holds its next
    fetch for the throttle time, KIP-219) and keeps consuming, within its
    quota; without the quota window the first fetch would bring all 100
    records at once."""
    from cprobe import Probe
    srv = samsa.start({"quota.window.num": "2"})
    with srv.connect() as c:
        size = fill(c, "l", 100)
        ok(alter(c, [({"client-id": "libc"},
                      [("consumer_byte_rate", 20000.0)])]))
    pr = Probe(srv.bootstrap(), "--assign", "l:0", "--seek-beginning",
               conf={"client.id": "libc"})
    try:
        pr.wait(lambda p: len(p.records()) >= 1, 20, "a first record")
        t0 = time.monotonic()
        time.sleep(6.0)
        n = len(pr.records())
        elapsed = time.monotonic() - t0
        assert not [o for o in pr.snapshot() if "err" in o]
    finally:
        pr.stop()
    rate = n * size / elapsed
    print("libsamsa consumer: %d records in %.1f s, %.0f B/s" % (n, elapsed, rate))
    # Kafka's rule with 2 windows: a fetch of the window's 20000 B passes
    # once the window before has expired, the next is throttled until
    # then, so a greedy consumer gets about half its quota (less the
    # partial batch at each fetch's end): never more than the quota, and
    # it goes on consuming through the throttled answers (2 records a
    # fetch: 4 or more is a second fetch after a throttle)
    assert n >= 4, n
    assert rate <= 20000 * 1.1, rate
    thr = scrape(srv)["samsa_client_quota_throttled_requests_total"].value(
        quota_type="Fetch", user="", client_id="libc")
    print("throttled fetches: %d" % thr)
    # each throttled answer holds the consumer for its throttle time: no
    # busy loop of empty fetches
    assert 0 < thr <= 20, thr


def test_request_time_throttled_fetch_is_answered_empty(samsa):
    """A fetch over the client's request_percentage (and within any byte
    rate) is answered empty too, throttled by the request time (one window,
    where Kafka caps it); the records it read are not counted as sent."""
    from test_quotas_request import start
    srv, admin = start(samsa)
    with admin:
        assert admin.produce("t", 0, kwire.encode_batch(
            [kwire.Record(b"r" * 100)]), timeout=T(10))["error_code"] == 0
        with srv.connect(client_id="rf", timeout=T(10)) as c:
            first = fetch(c, "t", 0, 1024 * 1024)
            assert first["throttle_time_ms"] == 0
            n, recs = records_bytes(first)
            assert len(recs) == 1
            before = bytes_out(srv, "t")
            second = fetch(c, "t", 0, 1024 * 1024)
            assert second["throttle_time_ms"] == 1000
            assert second["topics"] == [] and second["error_code"] == 0
        time.sleep(0.5)
        assert bytes_out(srv, "t") == before


def test_librdkafka_consumer_takes_empty_throttled_fetches(samsa):
    """librdkafka (confluent-kafka) under the same quota as the libsamsa
    test above: it takes the empty throttled answers as Kafka's, reports
    their throttle times, and goes on consuming within the quota."""
    from confluent_kafka import Consumer, TopicPartition
    srv = samsa.start({"quota.window.num": "2"})
    with srv.connect() as c:
        size = fill(c, "k", 100)
        ok(alter(c, [({"client-id": "rdk"},
                      [("consumer_byte_rate", 20000.0)])]))
    throttles = []
    cons = Consumer({"bootstrap.servers": srv.bootstrap(), "client.id": "rdk",
                     "group.id": "rdk", "enable.auto.commit": False,
                     "throttle_cb": lambda ev: throttles.append(
                         ev.throttle_time)})
    try:
        cons.assign([TopicPartition("k", 0, 0)])
        n, t0, deadline = 0, None, time.monotonic() + T(30)
        while time.monotonic() < deadline:
            m = cons.poll(0.1)
            if m is not None and m.error() is None:
                n += 1
                if t0 is None:
                    t0 = time.monotonic()
                    n0 = n
            if t0 is not None and time.monotonic() - t0 >= 6.0:
                break
        elapsed = time.monotonic() - t0
    finally:
        cons.close()
    rate = (n - n0) * size / elapsed
    print("librdkafka consumer: %d records in %.1f s, %.0f B/s, %d throttles"
          % (n - n0, elapsed, rate, len(throttles)))
    assert n - n0 >= 2, n
    assert rate <= 20000 * 1.1, rate
    assert [t for t in throttles if t > 0]
