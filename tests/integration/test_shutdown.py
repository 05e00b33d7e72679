"""SIGTERM/SIGINT: stop accepting, finish in-flight requests, exit 0."""

import signal
import socket
import time

import kwire
from samsa_harness import HOST, T, timeout_scale


def test_sigterm_idle_exits_zero(samsa):
    srv = samsa.start()
    conns = [srv.connect() for _ in range(3)]     # idle open connections
    try:
        for c in conns:
            assert c.api_versions(0)["error_code"] == 0
        t0 = time.monotonic()
        srv.signal(signal.SIGTERM)
        rc = srv.wait_exit(T(5))
        assert rc is not None, "still running %.0f s after SIGTERM:\n%s\n%s" % (
            T(5), srv.stuck_report(), srv.stderr_tail())
        assert rc == 0, "exit status %d after SIGTERM" % rc
        print("exited %.2f s after SIGTERM" % (time.monotonic() - t0))
        for c in conns:
            closed, extra = c.wait_closed(T(2))
            assert closed and extra == b""
    finally:
        for c in conns:
            c.close()


def test_sigint_exits_zero(samsa):
    srv = samsa.start()
    srv.signal(signal.SIGINT)
    rc = srv.wait_exit(T(5))
    assert rc is not None, "still running %.0f s after SIGINT:\n%s\n%s" % (
        T(5), srv.stuck_report(), srv.stderr_tail())
    assert rc == 0, "exit status %s after SIGINT" % rc


def try_new_connection(srv):
    """'refused', 'closed' (accepted, then closed unanswered), 'silent'
    (accepted, no answer within a second) or 'served'."""
    try:
        c = kwire.connect(HOST, srv.port, timeout=T(2))
    except (ConnectionRefusedError, socket.timeout, OSError):
        return "refused"
    try:
        c.send(kwire.api_versions_request(0, 77))
        c.recv_frame(1.0)
        return "served"
    except kwire.ConnectionClosed:
        return "closed"
    except kwire.FrameTimeout:
        return "silent"
    finally:
        c.close()


def test_sigterm_finishes_in_flight_request(samsa):
    # Metadata requests sleep DELAY in the handler. One is in flight when
    # SIGTERM arrives: its response still comes, then the connection closes
    # and the process exits 0. Meanwhile new connections get no service.
    delay = 1.5 * timeout_scale()
    srv = samsa.start(env={"SAMSA_TEST_HANDLER_DELAY_MS": int(delay * 1000),
                           "SAMSA_TEST_HANDLER_DELAY_API": kwire.API_METADATA})
    with srv.connect(client_id="in-flight") as c:
        assert c.api_versions(0)["error_code"] == 0
        t0 = time.monotonic()
        c.send(kwire.metadata_request(1, 42, None, "in-flight"))
        time.sleep(0.2)                          # the handler has it now
        srv.signal(signal.SIGTERM)
        # Give the acceptors time to stop (they wake at least every 500 ms),
        # while the in-flight request still holds the server up.
        time.sleep(0.7)
        still_up = srv.alive()
        outcome = try_new_connection(srv)
        assert outcome != "served", "a new connection was served after SIGTERM"
        payload = c.recv_frame(T(5) + delay)
        r = kwire.decode_metadata_response(payload, 1)
        assert r["correlation_id"] == 42
        assert r["brokers"][0]["node_id"] == 1
        assert time.monotonic() - t0 >= delay * 0.95
        closed, extra = c.wait_closed(T(5))
        assert closed, "connection still open after the server finished"
        assert extra == b""
    rc = srv.wait_exit(T(10))
    assert rc is not None, "still running %.0f s after SIGTERM:\n%s\n%s" % (
        T(10), srv.stuck_report(), srv.stderr_tail())
    assert rc == 0, "exit status %s after SIGTERM" % rc
    assert still_up, "the server exited before its in-flight request was answered"


def test_sigterm_under_back_pressure(samsa):
    """SIGTERM while the request queue is full and network threads are
    blocked on it: the server still exits 0 in bounded time, and every
    connection sees a prefix of its answers, in order, then a close."""
    srv = samsa.start({"queued.max.requests": 1, "num.io.threads": 1},
                      env={"SAMSA_TEST_HANDLER_DELAY_MS": 30})
    conns = [srv.connect(client_id="bp-%d" % i) for i in range(20)]
    try:
        for c in conns:
            c.send(b"".join(kwire.api_versions_request(0, j, "bp") for j in range(1, 6)))
        time.sleep(0.5)
        srv.signal(signal.SIGTERM)
        rc = srv.wait_exit(T(15))
        assert rc is not None, "still running %.0f s after SIGTERM:\n%s\n%s" % (
            T(15), srv.stuck_report(), srv.stderr_tail())
        assert rc == 0, "exit status %d" % rc
        answered = 0
        for c in conns:
            want = 1
            while True:
                try:
                    payload = c.recv_frame(T(2))
                except (kwire.ConnectionClosed, kwire.FrameTimeout):
                    break
                assert kwire.peek_correlation_id(payload) == want
                want += 1
            answered += want - 1
        assert answered >= 1
    finally:
        for c in conns:
            c.close()
