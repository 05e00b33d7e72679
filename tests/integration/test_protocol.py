"""Wire-level checks with kwire: ApiVersions v0-v4 and the unsupported-
version fallback, Metadata v0-v12, DescribeCluster (when advertised), and
malformed input that must close only the offending connection."""

import re
import struct

import pytest

import kwire
from samsa_harness import HOST, T


@pytest.fixture(scope="module")
def shared_server(samsa_module):
    """One server for this module's read-only tests, with auto-creation off
    so that a Metadata request for a missing topic (v0-v3 cannot ask for no
    creation) leaves the cluster without topics."""
    return samsa_module.start(overrides={"auto.create.topics.enable": "false"})


def test_api_versions_all_versions(shared_server):
    server = shared_server
    for version in range(0, 5):
        with server.connect() as c:
            r = c.api_versions(version, software_name="samsa-it", software_version="1.0")
        assert r["error_code"] == 0, "ApiVersions v%d" % version
        keys = r["api_keys"]
        assert len(keys) == len(r["api_keys_list"]), "duplicate api keys: %s" % r["api_keys_list"]
        for k, (lo, hi) in keys.items():
            assert 0 <= lo <= hi, "api key %d range %d..%d" % (k, lo, hi)
        assert kwire.API_API_VERSIONS in keys and kwire.API_METADATA in keys
        lo, hi = keys[kwire.API_API_VERSIONS]
        assert lo == 0 and hi >= 4, "ApiVersions advertised %d..%d, answers 0..4" % (lo, hi)
        lo, hi = keys[kwire.API_METADATA]
        assert lo == 0 and hi >= 12, "Metadata advertised %d..%d, answers 0..12" % (lo, hi)
        if version >= 1:
            assert r["throttle_time_ms"] == 0


def test_api_versions_several_on_one_connection(shared_server):
    server = shared_server
    with server.connect() as c:
        for version in (0, 3, 1, 4, 2):
            assert c.api_versions(version)["error_code"] == 0


def test_api_versions_unsupported_version(shared_server):
    server = shared_server
    with server.connect() as c:
        c.send(kwire.api_versions_request(99, 5))
        payload = c.recv_frame(T(5))
        # Answered as v0 whatever was asked: correlation id, error 35 and
        # the supported ranges, so that the client can pick a version.
        r = kwire.decode_api_versions_response(payload, 0)
        assert r["correlation_id"] == 5
        assert r["error_code"] == kwire.ERR_UNSUPPORTED_VERSION
        assert r["api_keys"][kwire.API_API_VERSIONS][0] == 0
        assert r["api_keys"][kwire.API_API_VERSIONS][1] >= 3
        assert kwire.API_METADATA in r["api_keys"]
        # The connection stays usable (clients retry on it, as with Kafka).
        assert c.api_versions(3)["error_code"] == 0


def test_controller_listener_answers_api_versions(shared_server):
    server = shared_server
    for version in (0, 3):
        with server.connect(controller=True) as c:
            r = c.api_versions(version)
        assert r["error_code"] == 0
        assert kwire.API_API_VERSIONS in r["api_keys"]


def check_metadata(server, version, r, cluster_id):
    assert r["brokers"] == [dict({"node_id": 1, "host": HOST, "port": server.port},
                                 **({"rack": None} if version >= 1 else {}))], \
        "Metadata v%d brokers" % version
    if version >= 1:
        assert r["controller_id"] == 1, "Metadata v%d controller id" % version
    if version >= 2:
        assert r["cluster_id"] == cluster_id, "Metadata v%d cluster id" % version
    if version >= 3:
        assert r["throttle_time_ms"] == 0


@pytest.mark.parametrize("version", range(0, 13))
def test_metadata_versions(shared_server, version):
    server = shared_server
    cluster_id = server.cluster_id()
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", cluster_id), cluster_id
    with server.connect() as c:
        r = c.metadata(version, None)               # all topics (v0: empty list)
        check_metadata(server, version, r, cluster_id)
        assert r["topics"] == [], "no topics exist yet"
        # A topic that does not exist, without auto-creation.
        name = "samsa-it-missing-%d" % version
        r = c.metadata(version, [name], allow_auto_topic_creation=False)
        check_metadata(server, version, r, cluster_id)
        assert [t["name"] for t in r["topics"]] == [name]
        assert r["topics"][0]["error_code"] in (kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION,
                                                kwire.ERR_LEADER_NOT_AVAILABLE)
        assert r["topics"][0]["partitions"] == []


def test_metadata_all_versions_one_connection(shared_server):
    server = shared_server
    cluster_id = server.cluster_id()
    with server.connect() as c:
        for version in list(range(12, -1, -1)) + list(range(0, 13)):
            check_metadata(server, version, c.metadata(version, None), cluster_id)


def test_describe_cluster(shared_server):
    server = shared_server
    with server.connect() as c:
        keys = c.api_versions(3)["api_keys"]
        assert kwire.API_DESCRIBE_CLUSTER in keys, "DescribeCluster is not advertised"
        lo, hi = keys[kwire.API_DESCRIBE_CLUSTER]
        assert hi == 2, (lo, hi)                # v2: KIP-1073
        for version in range(lo, hi + 1):
            for fenced_too in ((False, True) if version >= 2 else (False,)):
                r = c.describe_cluster(version, include_fenced_brokers=fenced_too)
                assert r["error_code"] == 0
                assert r["cluster_id"] == server.cluster_id()
                assert r["controller_id"] == 1
                assert [(b["broker_id"], b["host"], b["port"]) for b in r["brokers"]] == \
                    [(1, HOST, server.port)]
                assert all(not b.get("is_fenced", False) for b in r["brokers"])


# --- malformed input: the offending connection is closed, nothing else -----

MAX_BYTES = 1024


def bad_inputs():
    hdr = kwire.encode_request_header(kwire.API_API_VERSIONS, 0, 1, "big")
    return {
        # larger than socket.request.max.bytes (set to 1024 below)
        "oversize": struct.pack(">i", 2000) + hdr + bytes(2000 - len(hdr)),
        "negative_size": struct.pack(">i", -5) + bytes(16),
        # a 3-byte request cannot hold a header
        "garbage_header": kwire.frame(b"\x00\x12\x00"),
        # client id length runs past the end of the frame
        "truncated_client_id": kwire.frame(b"\x00\x12\x00\x00\x00\x00\x00\x01\x00\x40ab"),
        "unknown_api_key": kwire.encode_request(9999, 0, 1, b""),
        # a valid header, then a body that says 5 topics and ends
        "truncated_metadata_body": kwire.encode_request(kwire.API_METADATA, 1, 1,
                                                        b"\x00\x00\x00\x05"),
        "unsupported_metadata_version": kwire.encode_request(kwire.API_METADATA, 99, 1, b""),
    }


def control_ok(control, server):
    assert control.api_versions(0)["error_code"] == 0
    r = control.metadata(1, None)
    assert r["brokers"][0]["port"] == server.port


@pytest.mark.parametrize("case", sorted(bad_inputs()))
def test_bad_input_closes_only_that_connection(samsa, case):
    server = samsa.start({"socket.request.max.bytes": MAX_BYTES})
    data = bad_inputs()[case]
    with server.connect(client_id="control") as control:
        control_ok(control, server)
        with server.connect(client_id="bad") as bad:
            try:
                bad.send(data)
            except kwire.ConnectionClosed:
                pass                        # closed while we were still writing
            closed, extra = bad.wait_closed(T(5))
            assert closed, "%s: connection still open after %.0f s" % (case, T(5))
            assert extra == b"", "%s: got a response %r, want none" % (case, extra[:64])
        control_ok(control, server)
    # a new connection is served too
    with server.connect() as c:
        control_ok(c, server)
    assert server.alive()


def test_all_bad_inputs_in_turn(samsa):
    server = samsa.start({"socket.request.max.bytes": MAX_BYTES})
    with server.connect(client_id="control") as control:
        control_ok(control, server)
        for case, data in sorted(bad_inputs().items()):
            with server.connect(client_id=case) as bad:
                # a good request first, then the bad one on the same connection
                assert bad.api_versions(0)["error_code"] == 0
                try:
                    bad.send(data)
                except kwire.ConnectionClosed:
                    pass
                closed, extra = bad.wait_closed(T(5))
                assert closed and extra == b"", case
            control_ok(control, server)
    assert server.alive()


def test_request_just_under_the_limit_is_served(samsa):
    server = samsa.start({"socket.request.max.bytes": MAX_BYTES})
    # A Metadata v1 request naming topics, sized to exactly MAX_BYTES.
    names = []
    while True:
        body = kwire.encode_metadata_request(1, names + ["t%04d" % len(names)])
        size = len(kwire.encode_request_header(3, 1, 1, "kwire")) + len(body)
        if size > MAX_BYTES:
            break
        names.append("t%04d" % len(names))
    body = kwire.encode_metadata_request(1, names)
    size = len(kwire.encode_request_header(3, 1, 1, "kwire")) + len(body)
    pad = MAX_BYTES - size
    client_id = "kwire" + "x" * pad
    with server.connect(client_id=client_id) as c:
        frame = kwire.encode_request(3, 1, 1, body, client_id)
        assert len(frame) == MAX_BYTES + 4
        c.send(frame)
        r = kwire.decode_metadata_response(c.recv_frame(T(5)), 1)
        assert len(r["topics"]) == len(names)
