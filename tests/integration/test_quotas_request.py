"""Request-time quotas (Kafka's ClientRequestQuotaManager): a client id's
request_percentage bounds the handler time its requests take, as a
percentage of one thread.  The server's test hook makes every request
take at least 100 ms of handler time (SAMSA_TEST_HANDLER_DELAY_MS), so
each one costs 10 (percent of a thread for a second), and over the 10 s
minimum span of the default 11 windows a request is 1 % of a thread."""

import threading
import time

import pytest

import kwire
from samsa_harness import T
from test_quotas import alter, ok, scrape

DELAY = {"SAMSA_TEST_HANDLER_DELAY_MS": "100"}


def start(samsa, overrides=None):
    """A server whose requests take 100 ms of handler time, with every
    client id but 'admin' limited to 1.8 % of a thread: the first request
    of a client (1 %) passes, the second (2 %) is throttled by
    (2 - 1.8) / 1.8 * 10 s, over the cap of one window (1 s)."""
    srv = samsa.start(overrides, env=DELAY)
    admin = srv.connect(client_id="admin", timeout=T(10))
    ok(alter(admin, [({"client-id": None}, [("request_percentage", 1.8)]),
                     ({"client-id": "admin"},
                      [("request_percentage", 100000.0)])]))
    assert admin.create_topic("t", timeout=T(10))["error_code"] == 0
    admin.wait_topic("t", timeout=T(10))
    return srv, admin


def test_request_time_throttles_every_api(samsa):
    """The second request of a client id is throttled by exactly one window
    (Kafka caps request-time throttles there), whichever API it is: one
    whose ThrottleTimeMs leads the body (Metadata, Fetch) or follows an
    array (ApiVersions, Produce)."""
    srv, admin = start(samsa)
    batch = kwire.encode_batch([kwire.Record(b"v")])
    calls = {
        "m": lambda c: c.metadata(version=12, timeout=T(10)),
        "a": lambda c: c.api_versions(3, timeout=T(10)),
        "p": lambda c: c.produce("t", 0, batch, version=9, timeout=T(10)),
        "f": lambda c: c.fetch("t", 0, 0, version=12,
                               timeout=T(10))["response"],
    }
    with admin:
        for client, call in calls.items():
            with srv.connect(client_id=client, timeout=T(10)) as c:
                first = call(c)
                assert first["throttle_time_ms"] == 0, (client, first)
                second = call(c)
                assert second["throttle_time_ms"] == 1000, (client, second)
        # the admin's own quota is far away
        assert admin.metadata(version=12, timeout=T(10))[
            "throttle_time_ms"] == 0
    fams = scrape(srv)
    rt = fams["samsa_client_quota_request_time"]
    for client in calls:
        # two requests of >= 10 over >= 10 s; a loaded machine stretches
        # the span, never the 100 ms each took
        assert rt.value(quota_type="Request", user="",
                        client_id=client) > 1.5
        assert fams["samsa_client_quota_limit"].value(
            quota_type="Request", user="", client_id=client) == 1.8
        assert fams["samsa_client_quota_throttled_requests_total"].value(
            quota_type="Request", user="", client_id=client) >= 1
        assert fams["samsa_client_quota_throttle_time_seconds_total"].value(
            quota_type="Request", user="", client_id=client) >= 1.0


def test_request_throttled_connection_is_not_read(samsa):
    """A request-time throttle mutes the connection as a byte-rate one does:
    the response comes at once, the next request is read once the second
    has passed; other clients are served meanwhile."""
    srv, admin = start(samsa)
    with admin, srv.connect(client_id="m", timeout=T(10)) as c:
        assert c.metadata(version=12, timeout=T(10))["throttle_time_ms"] == 0
        assert c.metadata(version=12, timeout=T(10))["throttle_time_ms"] \
            == 1000
        got = time.monotonic()
        corr = c.corr()
        c.send(kwire.api_versions_request(0, corr, "m"), T(5))
        t = time.monotonic()
        admin.api_versions(0, timeout=T(5))
        assert time.monotonic() - t < 1.0
        left = 1.0 - (time.monotonic() - got)
        if left > 0.3:
            with pytest.raises(kwire.FrameTimeout):
                c.recv_frame(timeout=left - 0.2)
        payload = c.recv_frame(timeout=T(5))
        assert kwire.peek_correlation_id(payload) == corr
        assert time.monotonic() - got >= 0.95


def test_acks0_produce_is_not_counted(samsa):
    """Kafka records no request time for acks=0 produce requests: three of
    them (30, over the quota if counted) leave the client's next request
    within it."""
    srv, admin = start(samsa)
    batch = kwire.encode_batch([kwire.Record(b"v")])
    with admin, srv.connect(client_id="z", timeout=T(10)) as c:
        for _ in range(3):
            assert c.produce("t", 0, batch, acks=0, timeout=T(10)) is None
        # answered after the three, which the connection sent first
        assert c.metadata(version=12, timeout=T(10))["throttle_time_ms"] == 0
        assert admin.list_offsets("t", 0, -1, timeout=T(10))["offset"] == 3


def test_removing_the_quota_lifts_it(samsa):
    """AlterClientQuotas removing request_percentage applies to the next
    request: the client that was throttled is not any more."""
    srv, admin = start(samsa)
    with admin, srv.connect(client_id="m", timeout=T(10)) as c:
        assert c.metadata(version=12, timeout=T(10))["throttle_time_ms"] == 0
        assert c.metadata(version=12, timeout=T(10))["throttle_time_ms"] \
            == 1000
        ok(alter(admin, [({"client-id": None},
                          [("request_percentage", None)])]))
        for _ in range(3):
            assert c.metadata(version=12, timeout=T(10))[
                "throttle_time_ms"] == 0


def test_request_rate_holds_near_the_quota(samsa):
    """Metadata requests of at least 10 ms of handler time each (1 in
    Kafka's percent-seconds) against request_percentage 5: a client that
    sends them back to back, muted while throttled, gets about 5 a second
    through, with 2 windows of 1 s so that no young-sensor burst blurs the
    count; another client id with a high quota runs far faster meanwhile.
    No throttle exceeds one window."""
    srv = samsa.start({"quota.window.num": "2"},
                      env={"SAMSA_TEST_HANDLER_DELAY_MS": "10",
                           "SAMSA_TEST_HANDLER_DELAY_API": "3"})
    with srv.connect(client_id="admin", timeout=T(10)) as admin:
        ok(alter(admin, [({"client-id": "slow"}, [("request_percentage", 5.0)]),
                         ({"client-id": "fast"},
                          [("request_percentage", 100000.0)])]))
    seconds = 6.0
    counts, throttles = {}, []

    def loop(client):
        n = 0
        with srv.connect(client_id=client, timeout=T(10)) as c:
            t0 = time.monotonic()
            while time.monotonic() - t0 < seconds:
                r = c.metadata(version=12, timeout=T(10))
                if client == "slow":
                    throttles.append(r["throttle_time_ms"])
                n += 1
        counts[client] = n

    ts = [threading.Thread(target=loop, args=(x,)) for x in ("slow", "fast")]
    for t in ts:
        t.start()
    for t in ts:
        t.join(T(60))
    # 5 a second, plus the first window's worth before any throttle; a
    # loaded machine can only lower it
    assert 5 * seconds * 0.5 <= counts["slow"] <= 5 * seconds * 1.3 + 6, \
        counts
    assert max(throttles) <= 1000, throttles
    assert sum(1 for x in throttles if x > 0) >= seconds, throttles
    assert counts["fast"] > 2 * counts["slow"], counts


def test_join_wait_is_not_handler_time(samsa):
    """A JoinGroup answered after the initial rebalance delay (3 s) spent
    that time waiting, not in a handler: as in Kafka it costs its handler
    time only (1 %), and is not throttled."""
    from test_groups_protocol import join
    srv, admin = start(samsa)
    with admin, srv.connect(client_id="g", timeout=T(10)) as c:
        t0 = time.monotonic()
        j = join(c, "grp", version=3)
        assert j["error"] == 0, j
        assert time.monotonic() - t0 >= 2.5     # it did wait
        assert j["throttle"] == 0, j
