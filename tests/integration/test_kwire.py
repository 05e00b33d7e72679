"""Checks of the test client kwire.py itself (no samsa-server needed).

kwire is what the protocol tests judge the server with, so its encodings
are cross-checked against kafka-python's independent implementation
(non-flexible versions), against golden bytes written out by hand from the
Kafka message definitions (flexible versions), and against real clients
(kcat, kafka-python) talking to a fake broker that answers with kwire's
encoders.
"""

import os
import re
import subprocess
import sys

import pytest

import kwire
import samsa_harness
from samsa_harness import T

from kafka.protocol.admin import ApiVersionRequest, ApiVersionResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

HERE = os.path.dirname(os.path.abspath(__file__))


def test_uvarint_round_trip():
    for v in (0, 1, 127, 128, 300, 16383, 16384, 2 ** 31 - 1, 2 ** 32 - 1):
        b = kwire.Writer().uvarint(v).bytes()
        r = kwire.Reader(b)
        assert r.uvarint() == v
        assert r.remaining() == 0
    assert kwire.Writer().uvarint(300).bytes() == b"\xac\x02"


def test_compact_and_tagged_primitives():
    w = kwire.Writer().string("ab", flexible=True).string(None, flexible=True)
    w.array([1, 2], lambda ww, x: ww.i32(x), flexible=True).array(None, None, flexible=True)
    w.tags({1: b"\x05", 0: b""})
    b = w.bytes()
    assert b == (b"\x03ab" + b"\x00" + b"\x03" + b"\x00\x00\x00\x01\x00\x00\x00\x02"
                 + b"\x00" + b"\x02" + b"\x00\x00" + b"\x01\x01\x05")
    r = kwire.Reader(b)
    assert r.string(flexible=True) == "ab"
    assert r.string(flexible=True, nullable=True) is None
    assert r.array(lambda x: x.i32(), flexible=True) == [1, 2]
    assert r.array(lambda x: x.i32(), flexible=True, nullable=True) is None
    assert r.tags() == {0: b"", 1: b"\x05"}
    r.done()


def test_request_header_layouts():
    # v1: key, version, correlation id, client id (int16 length)
    assert kwire.encode_request_header(3, 1, 7, "c") == \
        b"\x00\x03\x00\x01\x00\x00\x00\x07\x00\x01c"
    # v2 (flexible request): the same plus an empty tagged-field section;
    # the client id stays a non-compact string
    assert kwire.encode_request_header(3, 9, 7, "c") == \
        b"\x00\x03\x00\x09\x00\x00\x00\x07\x00\x01c\x00"
    assert kwire.encode_request_header(18, 3, 7, None) == \
        b"\x00\x12\x00\x03\x00\x00\x00\x07\xff\xff\x00"
    h, r = kwire.decode_request_header(kwire.encode_request_header(60, 0, 9, "x"))
    assert (h["api_key"], h["api_version"], h["correlation_id"], h["client_id"],
            h["header_version"]) == (60, 0, 9, "x", 2)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_api_versions_request_matches_kafka_python(version):
    theirs = ApiVersionRequest[version]()
    assert kwire.encode_api_versions_request(version) == theirs.encode()


@pytest.mark.parametrize("version", [0, 1, 2])
def test_api_versions_response_decodes_kafka_python(version):
    keys = [(0, 0, 9), (3, 0, 12), (18, 0, 4)]
    args = [0, keys] + ([5] if version >= 1 else [])
    theirs = ApiVersionResponse[version](*args)   # keep a reference: encode
    payload = b"\x00\x00\x00\x2a" + theirs.encode()  # is a weak method
    out = kwire.decode_api_versions_response(payload, version)
    assert out["correlation_id"] == 42
    assert out["error_code"] == 0
    assert out["api_keys"] == {0: (0, 9), 3: (0, 12), 18: (0, 4)}
    if version >= 1:
        assert out["throttle_time_ms"] == 5


@pytest.mark.parametrize("version", range(0, 6))
@pytest.mark.parametrize("topics", [None, ["a", "topic-b"]])
def test_metadata_request_matches_kafka_python(version, topics):
    kw = {}
    if version >= 4:
        kw["allow_auto_topic_creation"] = False
    if version == 0 and topics is None:
        ours = kwire.encode_metadata_request(0, None)
        theirs = MetadataRequest[0](topics=[])
    else:
        ours = kwire.encode_metadata_request(version, topics,
                                             allow_auto_topic_creation=False)
        theirs = MetadataRequest[version](topics=topics, **kw)
    assert ours == theirs.encode()


@pytest.mark.parametrize("version", range(0, 6))
def test_metadata_response_decodes_kafka_python(version):
    brokers = [(1, "127.0.0.1", 9092)] if version == 0 else [(1, "127.0.0.1", 9092, None)]
    parts = [(0, 0, 1, [1], [1])]
    if version >= 5:
        parts = [(0, 0, 1, [1], [1], [])]
    topics = [(3, "t", parts)] if version == 0 else [(3, "t", False, parts)]
    args = []
    if version >= 3:
        args.append(0)
    args.append(brokers)
    if version >= 2:
        args.append("cluster-xyz")
    if version >= 1:
        args.append(1)
    args.append(topics)
    theirs = MetadataResponse[version](*args)
    payload = b"\x00\x00\x00\x07" + theirs.encode()
    out = kwire.decode_metadata_response(payload, version)
    assert out["correlation_id"] == 7
    assert out["brokers"][0]["node_id"] == 1
    assert out["brokers"][0]["host"] == "127.0.0.1"
    assert out["brokers"][0]["port"] == 9092
    assert out["topics"][0]["name"] == "t"
    assert out["topics"][0]["error_code"] == 3
    assert out["topics"][0]["partitions"][0]["leader_id"] == 1
    if version >= 2:
        assert out["cluster_id"] == "cluster-xyz"
    if version >= 1:
        assert out["controller_id"] == 1


def test_api_versions_v3_golden_bytes():
    # ApiVersionsRequest v3: ClientSoftwareName, ClientSoftwareVersion
    # (compact strings), tagged fields.
    assert kwire.encode_api_versions_request(3, "ab", "1") == b"\x03ab\x021\x00"
    # ApiVersionsResponse v3: ErrorCode i16, ApiKeys compact array of
    # (ApiKey i16, MinVersion i16, MaxVersion i16, tags), ThrottleTimeMs
    # i32, tags. Response header v0 (correlation id only).
    body = (b"\x00\x00" + b"\x02" + b"\x00\x12\x00\x00\x00\x04\x00"
            + b"\x00\x00\x00\x00" + b"\x01\x00\x01\x01")   # one tag: 0 -> b"\x01"
    out = kwire.decode_api_versions_response(b"\x00\x00\x00\x05" + body, 3)
    assert out["api_keys"] == {18: (0, 4)}
    assert out["tags"] == {0: b"\x01"}
    assert out["correlation_id"] == 5


def test_metadata_v12_golden_bytes():
    # MetadataRequest v12: Topics compact nullable array of (TopicId uuid,
    # Name compact nullable string, tags), AllowAutoTopicCreation bool,
    # IncludeTopicAuthorizedOperations bool, tags.
    assert kwire.encode_metadata_request(12, None, allow_auto_topic_creation=False) == \
        b"\x00\x00\x00\x00"
    assert kwire.encode_metadata_request(12, ["t"]) == \
        b"\x02" + bytes(16) + b"\x02t\x00" + b"\x01\x00\x00"
    # MetadataRequest v9 (flexible, before TopicId; v8-10 carry
    # IncludeClusterAuthorizedOperations).
    assert kwire.encode_metadata_request(9, ["t"]) == b"\x02\x02t\x00" + b"\x01\x00\x00\x00"
    # MetadataResponse v12, response header v1 (correlation id + tags).
    body = (b"\x00\x00\x00\x00"                                  # throttle
            + b"\x02" + b"\x00\x00\x00\x01" + b"\x02h" + b"\x00\x00\x23\x84"
            + b"\x00" + b"\x00"                                  # rack null, tags
            + b"\x03id"                                          # cluster id
            + b"\x00\x00\x00\x01"                                # controller
            + b"\x02" + b"\x00\x03" + b"\x02t" + bytes(16) + b"\x00"  # topic
            + b"\x01" + b"\x80\x00\x00\x00" + b"\x00"            # no partitions
            + b"\x00")                                           # tags
    out = kwire.decode_metadata_response(b"\x00\x00\x00\x09\x00" + body, 12)
    assert out["brokers"] == [{"node_id": 1, "host": "h", "port": 9092, "rack": None}]
    assert out["cluster_id"] == "id"
    assert out["controller_id"] == 1
    assert out["topics"][0]["error_code"] == 3 and out["topics"][0]["name"] == "t"
    assert "cluster_authorized_operations" not in out


@pytest.mark.parametrize("version", range(0, 13))
def test_metadata_round_trip(version):
    req = kwire.encode_metadata_request(version, ["x", "y"], allow_auto_topic_creation=False)
    got = kwire.decode_metadata_request(kwire.Reader(req), version)
    assert [t["name"] for t in got["topics"]] == ["x", "y"]
    body = kwire.encode_metadata_response(
        version, [{"node_id": 3, "host": "h", "port": 1, "rack": "r"}], "cid", 3,
        [{"error_code": 5, "name": "x",
          "partitions": [{"partition_index": 0, "leader_id": 3, "replica_nodes": [3],
                          "isr_nodes": [3]}]}])
    frame = kwire.encode_response(3, version, 77, body)
    out = kwire.decode_metadata_response(frame[4:], version)
    assert out["correlation_id"] == 77
    assert out["brokers"][0]["node_id"] == 3
    assert out["topics"][0]["partitions"][0]["replica_nodes"] == [3]
    if version >= 2:
        assert out["cluster_id"] == "cid"


@pytest.mark.parametrize("version", range(0, 5))
def test_api_versions_round_trip(version):
    body = kwire.encode_api_versions_response(version, {18: (0, 4), 3: (0, 12)})
    frame = kwire.encode_response(18, version, 3, body)
    assert kwire.decode_api_versions_response(frame[4:], version)["api_keys"] == \
        {18: (0, 4), 3: (0, 12)}


@pytest.mark.parametrize("version", [0, 1])
def test_describe_cluster_round_trip(version):
    req = kwire.encode_describe_cluster_request(version)
    assert kwire.decode_describe_cluster_request(kwire.Reader(req), version)[
        "include_cluster_authorized_operations"] is False
    body = kwire.encode_describe_cluster_response(
        version, [{"node_id": 1, "host": "h", "port": 2}], "cid", 1)
    frame = kwire.encode_response(60, version, 4, body)
    # DescribeCluster is flexible from v0: response header v1
    assert frame[8:9] == b"\x00"
    out = kwire.decode_describe_cluster_response(frame[4:], version)
    assert out["brokers"][0]["broker_id"] == 1 and out["cluster_id"] == "cid"


def test_real_clients_understand_kwire_encodings(tmp_path):
    """kcat (librdkafka: ApiVersions v3, Metadata v4) and kafka-python
    (ApiVersions v0, Metadata v0/v5) against the fake broker, which decodes
    their requests and answers with kwire's encoders."""
    port, cport = samsa_harness.free_port(), samsa_harness.free_port()
    fake = os.path.join(HERE, "fake_samsa_server.py")
    err = open(tmp_path / "stderr.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, fake, "--override",
         "listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d" % (port, cport),
         "--override", "log.dirs=%s" % (tmp_path / "data")],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=err)
    try:
        ok = samsa_harness.wait_until(lambda: _answers(port), T(10), 0.05)
        assert ok, "fake broker did not start"
        r = subprocess.run(["kcat", "-b", "127.0.0.1:%d" % port, "-L", "-m", "5"],
                           capture_output=True, text=True, timeout=T(30))
        assert r.returncode == 0, r.stderr
        assert re.search(r"broker 1 at 127\.0\.0\.1:%d" % port, r.stdout), r.stdout
        from kafka import KafkaAdminClient
        admin = KafkaAdminClient(bootstrap_servers="127.0.0.1:%d" % port,
                                 api_version_auto_timeout_ms=int(T(5) * 1000),
                                 request_timeout_ms=int(T(10) * 1000))
        try:
            d = admin.describe_cluster()
        finally:
            admin.close()
        assert d["brokers"][0]["node_id"] == 1 and d["controller_id"] == 1
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=T(10))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        err.close()


def _answers(port):
    try:
        with kwire.connect("127.0.0.1", port, timeout=1) as c:
            return c.api_versions(0, timeout=2)["error_code"] == 0
    except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout, kwire.ProtocolError):
        return False
