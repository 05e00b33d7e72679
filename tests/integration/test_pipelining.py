"""One request at a time per connection, answered in order (mute/unmute),
and the seed's example 3: a slow request holds back only its own
connection."""

import time

import kwire
from samsa_harness import T, timeout_scale

MIXED = [  # (api key, version)
    (kwire.API_API_VERSIONS, 0), (kwire.API_METADATA, 1), (kwire.API_API_VERSIONS, 3),
    (kwire.API_METADATA, 9), (kwire.API_API_VERSIONS, 2), (kwire.API_METADATA, 12),
    (kwire.API_METADATA, 0), (kwire.API_API_VERSIONS, 4), (kwire.API_METADATA, 5),
]


def encode(api, version, corr, client_id="pipe"):
    if api == kwire.API_API_VERSIONS:
        return kwire.api_versions_request(version, corr, client_id)
    return kwire.metadata_request(version, corr, None, client_id)


def read_in_order(conn, expected, timeout):
    """expected: [(corr, api, version)]; returns decoded responses."""
    out = []
    for corr, api, version in expected:
        payload = conn.recv_frame(timeout)
        got = kwire.peek_correlation_id(payload)
        assert got == corr, "response with correlation id %d, expected %d (order %s)" % (
            got, corr, [c for c, _, _ in expected])
        out.append(kwire.decode_response(payload, api, version))
    return out


def test_pipelined_requests_answered_in_order(shared_server):
    with shared_server.connect() as c:
        expected = [(100 + i, api, v) for i, (api, v) in enumerate(MIXED)]
        c.send(b"".join(encode(api, v, corr) for corr, api, v in expected))
        for (corr, api, v), r in zip(expected, read_in_order(c, expected, T(10))):
            if api == kwire.API_API_VERSIONS:
                assert r["error_code"] == 0
            else:
                assert r["brokers"][0]["node_id"] == 1


def test_pipelined_many_rounds_and_odd_writes(shared_server):
    # 50 requests in one write, then the same split at awkward byte
    # boundaries (frames cut mid-header and mid-size).
    with shared_server.connect() as c:
        expected = [(i, *MIXED[i % len(MIXED)]) for i in range(1, 51)]
        c.send(b"".join(encode(api, v, corr) for corr, api, v in expected))
        read_in_order(c, expected, T(10))
        expected = [(i, *MIXED[i % len(MIXED)]) for i in range(51, 71)]
        data = b"".join(encode(api, v, corr) for corr, api, v in expected)
        for i in range(0, len(data), 7):
            c.send(data[i:i + 7])
        read_in_order(c, expected, T(10))


def test_slow_request_blocks_only_its_connection(samsa):
    """Seed example 3. Metadata requests take DELAY ms in the handler.
    A pipelines Metadata(1) + ApiVersions(2); 100 ms later B sends
    ApiVersions(3). B is answered at once; A's ApiVersions waits behind A's
    Metadata, because A stays muted until its first response is written."""
    delay = 0.3 * timeout_scale()
    srv = samsa.start(env={"SAMSA_TEST_HANDLER_DELAY_MS": int(delay * 1000),
                           "SAMSA_TEST_HANDLER_DELAY_API": kwire.API_METADATA})
    with srv.connect(client_id="conn-a") as a, srv.connect(client_id="conn-b") as b:
        # warm both connections up (not delayed: ApiVersions)
        a.api_versions(0)
        b.api_versions(0)
        t0 = time.monotonic()
        a.send(kwire.metadata_request(1, 1, None, "conn-a")
               + kwire.api_versions_request(3, 2, "conn-a"))
        time.sleep(0.1)
        tb = time.monotonic()
        b.send(kwire.api_versions_request(3, 3, "conn-b"))
        rb = kwire.decode_api_versions_response(b.recv_frame(T(5)), 3)
        t_b = time.monotonic()
        assert rb["correlation_id"] == 3 and rb["error_code"] == 0
        assert t_b - tb < delay * 0.66, \
            "B answered after %.3f s: it waited for A's slow request" % (t_b - tb)
        assert t_b - t0 < delay, "B answered after A's delay had passed"

        r1 = kwire.decode_metadata_response(a.recv_frame(T(5)), 1)
        t_a1 = time.monotonic()
        r2 = kwire.decode_api_versions_response(a.recv_frame(T(5)), 3)
        t_a2 = time.monotonic()
        assert (r1["correlation_id"], r2["correlation_id"]) == (1, 2)
        assert t_a1 - t0 >= delay * 0.95, "Metadata answered after %.3f s" % (t_a1 - t0)
        assert t_a2 - t0 >= delay * 0.95, \
            "A's ApiVersions answered after %.3f s, before its Metadata finished" % (t_a2 - t0)
        assert t_b < t_a1


def test_client_closes_with_requests_in_flight(samsa):
    """Requests in flight (and more pipelined behind them) when the client
    goes away: the responses are dropped and nothing else is disturbed."""
    srv = samsa.start(env={"SAMSA_TEST_HANDLER_DELAY_MS": 200,
                           "SAMSA_TEST_HANDLER_DELAY_API": kwire.API_METADATA})
    for _ in range(5):
        c = srv.connect()
        c.send(b"".join(kwire.metadata_request(1, i, None, "leaver") for i in range(1, 4)))
        c.close()
    with srv.connect() as other:
        assert other.api_versions(0)["error_code"] == 0
        assert other.metadata(1, None, timeout=T(5))["brokers"][0]["node_id"] == 1
    assert srv.alive()
