"""Connection creation rate limits (issue 8, Kafka's ConnectionQuotas):
max.connection.creation.rate delays the acceptor so new connections stay
near the rate without refusing any, and an ip connection_creation_rate
client quota (an IP's own or the default ip entity's) refuses connections
over it, closing them after the throttle time, until AlterClientQuotas
removes it at run time."""

import time

import pytest

import kwire
import samsa_harness
from samsa_harness import T
from test_quotas import alter, ok, scrape


def served(srv, timeout):
    """Open a connection and get an ApiVersions answer on it: True if the
    broker accepted and served it, False if it closed it."""
    try:
        with kwire.Conn(samsa_harness.HOST, srv.port, timeout=timeout) as c:
            c.api_versions(0, timeout=timeout)
        return True
    except (kwire.ConnectionClosed, ConnectionResetError, BrokenPipeError):
        return False


def test_max_connection_creation_rate_delays_accepts(samsa):
    """10 connections/s over 2 windows of 1 s: a young rate divides by one
    window, so about 10 pass at once, then the acceptor lets about 10 a
    second through.  None is refused."""
    srv = samsa.start({"max.connection.creation.rate": "10",
                       "quota.window.num": "2"})
    time.sleep(2.5)                 # the start's own connections age out
    n, t0 = 0, time.monotonic()
    while time.monotonic() - t0 < 4.0:
        assert served(srv, T(5))    # delayed, never refused
        n += 1
    elapsed = time.monotonic() - t0
    # unlimited, a local connect + ApiVersions takes about a millisecond
    assert 15 <= n <= 10 * elapsed + 25, (n, elapsed)
    fams = scrape(srv)
    waits = fams["samsa_connection_accept_throttled_total"].value(
        server="broker")
    assert waits >= n - 25
    assert fams["samsa_connection_ip_throttled_total"].value(
        server="broker") == 0
    # Kafka's connection-accept-throttle-time of the listener: every wait
    # counted, their times summed (one acceptor waits them one after the
    # other, so most of the loop, and never more than all of it)
    tt = fams["samsa_connection_accept_throttle_time_seconds"]
    name = "samsa_connection_accept_throttle_time_seconds"
    assert tt.value(name + "_count", server="broker",
                    listener="PLAINTEXT") == waits
    total = tt.value(name + "_sum", server="broker", listener="PLAINTEXT")
    assert elapsed / 3 <= total <= elapsed + 1.0, (total, elapsed)


@pytest.mark.parametrize("ip", ["127.0.0.1", None])
def test_ip_connection_creation_rate(samsa, ip):
    srv = samsa.start({"quota.window.num": "2"})
    with srv.connect() as admin:
        ok(alter(admin, [({"ip": ip}, [("connection_creation_rate", 3.0)])]))
        time.sleep(2.5)             # earlier connections age out
        results, t0 = [], time.monotonic()
        while time.monotonic() - t0 < 3.0:
            t = time.monotonic()
            results.append((served(srv, T(5)), time.monotonic() - t))
        elapsed = time.monotonic() - t0
        good = [r for r, _ in results if r]
        refused = [dt for r, dt in results if not r]
        # 3 a second: Kafka's rate divides by the time since its oldest
        # window began plus one window while that is under one window
        # (quota.window.num - 1), so about 3 * (elapsed + 1) pass; each
        # connection over it is held for its throttle time (at most one
        # window) and closed
        assert 3 <= len(good) <= 3 * (elapsed + 1) + 2, results
        assert refused, results
        assert all(dt < 1.5 for dt in refused), results
        assert max(refused) > 0.2, results      # held, then closed
        assert scrape(srv)["samsa_connection_ip_throttled_total"].value(
            server="broker") == len(refused)
        # the open admin connection is not affected; lifting the quota
        # applies to the next connection
        ok(alter(admin, [({"ip": ip}, [("connection_creation_rate", None)])]))
        time.sleep(0.5)             # the broker's image follows the controller
        assert all(served(srv, T(5)) for _ in range(20))
