"""Connection quotas (max.connections.per.ip and its overrides) and idle
connection expiry (connections.max.idle.ms)."""

import time

import kwire
from samsa_harness import T


def open_served(server, timeout):
    """Opens a connection that gets an answer. Retries for a while: the
    server may not have counted the harness's own start-up probe as closed
    yet."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        c = server.connect()
        try:
            if c.api_versions(0, timeout=T(2))["error_code"] == 0:
                return c
        except (kwire.ConnectionClosed, kwire.FrameTimeout, OSError) as e:
            last = e
        c.close()
        time.sleep(0.1)
    raise AssertionError("no served connection within %.1f s (last: %r)" % (timeout, last))


def assert_rejected(server, what):
    c = server.connect()
    try:
        try:
            c.send(kwire.api_versions_request(0, 1))
        except kwire.ConnectionClosed:
            return
        closed, extra = c.wait_closed(T(5))
        assert closed, "%s: still open after %.0f s" % (what, T(5))
        assert extra == b"", "%s: was answered" % what
    finally:
        c.close()


def assert_served(conns):
    for c in conns:
        assert c.api_versions(0)["error_code"] == 0


def test_max_connections_per_ip(samsa):
    srv = samsa.start({"max.connections.per.ip": 2})
    a = open_served(srv, T(5))
    b = open_served(srv, T(5))
    try:
        assert_rejected(srv, "third connection from 127.0.0.1")
        assert_served([a, b])
        # a slot frees when a connection closes
        a.close()
        a = open_served(srv, T(5))
        assert_served([a, b])
        assert_rejected(srv, "third connection again")
    finally:
        a.close()
        b.close()


def test_max_connections_per_ip_overrides(samsa):
    srv = samsa.start({"max.connections.per.ip": 1,
                       "max.connections.per.ip.overrides": "127.0.0.1:3"})
    conns = [open_served(srv, T(5)) for _ in range(3)]
    try:
        assert_rejected(srv, "fourth connection from 127.0.0.1")
        assert_served(conns)
    finally:
        for c in conns:
            c.close()


def test_idle_connection_is_closed(samsa):
    idle_ms = 1000
    srv = samsa.start({"connections.max.idle.ms": idle_ms})
    idle = srv.connect()
    busy = srv.connect()
    try:
        assert idle.api_versions(0)["error_code"] == 0
        t_idle = time.monotonic()
        closed_at = None
        n = 0
        limit = max(3.0, T(3))
        # The busy connection sends a request every 300 ms; the idle one
        # says nothing and must be closed after about 1 s. Go on for at
        # least 2.5 s (2.5 idle periods) so that the busy one is tested.
        while time.monotonic() < t_idle + limit:
            assert busy.api_versions(0)["error_code"] == 0, "busy connection not answered"
            n += 1
            if closed_at is not None:
                time.sleep(0.3)
            elif not idle.is_open(0.3):
                closed_at = time.monotonic()
            if closed_at is not None and time.monotonic() > t_idle + 2.5:
                break
        assert closed_at is not None, "idle connection still open after %.1f s" % (
            time.monotonic() - t_idle)
        waited = closed_at - t_idle
        assert waited >= idle_ms / 1000.0 * 0.9, "closed after only %.2f s" % waited
        assert waited <= max(3.0, T(3)), "closed after %.2f s" % waited
        assert n >= 8
        assert busy.api_versions(0)["error_code"] == 0
    finally:
        idle.close()
        busy.close()

