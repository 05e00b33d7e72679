"""kwire: a small raw Kafka wire-protocol client for the integration tests.

Only what the tests need, written from Apache Kafka's message definitions
(clients/src/main/resources/common/message/*.json):

- framing (int32 size + payload), request header v1/v2, response header v0/v1
- ApiVersions v0-v4   (request and response; flexible from v3, response
                       header always v0)
- Metadata v0-v12     (request and response; flexible from v9)
- DescribeCluster v0-v1 (always flexible)
- the same messages' *response encoders* and *request decoders*, so that a
  fake broker (tests/integration/fake_samsa.py) can answer real clients and
  cross-check this module against them.
- record batches v2 (encode_batch / decode_batches, CRC-32C in pure Python
  with ISA-L as a fast path), and for the storage tests (test_storage_*.py)
  request encoders and response decoders of Produce v3-v11, Fetch v4-v16,
  ListOffsets v1-v9, CreateTopics v2-v7, DeleteTopics v1-v6, DeleteRecords
  v0-v2, OffsetForLeaderEpoch v2-v4, ElectLeaders v0-v2,
  ListPartitionReassignments v0, DescribeConfigs v0-v4, AlterConfigs v0-v2, IncrementalAlterConfigs
  v0-v1, DescribeLogDirs v0-v4, CreatePartitions v0-v3, with Conn helpers
  (produce, fetch, fetch_all, list_offsets, create_topic, wait_topic, ...);
  checked in test_storage_kwire.py.

Primitive encodings: big-endian fixed ints; STRING = int16 length + bytes
(-1 = null); COMPACT_STRING = uvarint(len+1) + bytes (0 = null); ARRAY = int32
count (-1 = null); COMPACT_ARRAY = uvarint(count+1) (0 = null); tagged fields
= uvarint count, then (uvarint tag, uvarint size, bytes)*; UUID = 16 bytes.
"""

import errno
import select
import socket
import struct
import time

API_PRODUCE = 0
API_METADATA = 3
API_API_VERSIONS = 18
API_DESCRIBE_CLUSTER = 60

# First flexible version per API key (KIP-482).
FLEXIBLE_FROM = {API_METADATA: 9, API_API_VERSIONS: 3, API_DESCRIBE_CLUSTER: 0}

API_NAMES = {API_PRODUCE: "PRODUCE", 1: "FETCH", 2: "LIST_OFFSETS",
             API_METADATA: "METADATA", API_API_VERSIONS: "API_VERSIONS",
             API_DESCRIBE_CLUSTER: "DESCRIBE_CLUSTER"}

ERR_NONE = 0
ERR_UNKNOWN_TOPIC_OR_PARTITION = 3
ERR_LEADER_NOT_AVAILABLE = 5
ERR_NOT_LEADER_OR_FOLLOWER = 6
ERR_UNSUPPORTED_VERSION = 35

# Storage and topic administration (issue 3).
API_FETCH = 1
API_LIST_OFFSETS = 2
API_CREATE_TOPICS = 19
API_DELETE_TOPICS = 20
API_DELETE_RECORDS = 21
API_OFFSET_FOR_LEADER_EPOCH = 23
API_ELECT_LEADERS = 43
API_LIST_PARTITION_REASSIGNMENTS = 46
API_DESCRIBE_CONFIGS = 32
API_ALTER_CONFIGS = 33
API_DESCRIBE_LOG_DIRS = 35
API_CREATE_PARTITIONS = 37
API_INCREMENTAL_ALTER_CONFIGS = 44

FLEXIBLE_FROM.update({
    API_PRODUCE: 9, API_FETCH: 12, API_LIST_OFFSETS: 6, API_CREATE_TOPICS: 5,
    API_DELETE_TOPICS: 4, API_DELETE_RECORDS: 2, API_DESCRIBE_CONFIGS: 4,
    API_ALTER_CONFIGS: 2, API_DESCRIBE_LOG_DIRS: 2, API_CREATE_PARTITIONS: 2,
    API_INCREMENTAL_ALTER_CONFIGS: 1, API_OFFSET_FOR_LEADER_EPOCH: 4,
    API_ELECT_LEADERS: 2, API_LIST_PARTITION_REASSIGNMENTS: 0,
})

API_NAMES.update({
    API_CREATE_TOPICS: "CREATE_TOPICS", API_DELETE_TOPICS: "DELETE_TOPICS",
    API_DELETE_RECORDS: "DELETE_RECORDS", API_DESCRIBE_CONFIGS: "DESCRIBE_CONFIGS",
    API_ALTER_CONFIGS: "ALTER_CONFIGS", API_DESCRIBE_LOG_DIRS: "DESCRIBE_LOG_DIRS",
    API_CREATE_PARTITIONS: "CREATE_PARTITIONS",
    API_INCREMENTAL_ALTER_CONFIGS: "INCREMENTAL_ALTER_CONFIGS",
    API_OFFSET_FOR_LEADER_EPOCH: "OFFSET_FOR_LEADER_EPOCH",
    API_ELECT_LEADERS: "ELECT_LEADERS",
    API_LIST_PARTITION_REASSIGNMENTS: "LIST_PARTITION_REASSIGNMENTS",
})

ERR_OFFSET_OUT_OF_RANGE = 1
ERR_CORRUPT_MESSAGE = 2
ERR_MESSAGE_TOO_LARGE = 10
ERR_INVALID_TOPIC_EXCEPTION = 17
ERR_RECORD_LIST_TOO_LARGE = 18
ERR_INVALID_REQUIRED_ACKS = 21
ERR_INVALID_TIMESTAMP = 32
ERR_TOPIC_ALREADY_EXISTS = 36
ERR_INVALID_PARTITIONS = 37
ERR_INVALID_REPLICATION_FACTOR = 38
ERR_INVALID_REQUEST = 42
ERR_INVALID_CONFIG = 40
ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
ERR_POLICY_VIOLATION = 44
ERR_FENCED_LEADER_EPOCH = 74
ERR_UNKNOWN_LEADER_EPOCH = 75
ERR_INVALID_RECORD = 87
ERR_UNKNOWN_TOPIC_ID = 100

ERROR_NAMES = {
    0: "NONE", 1: "OFFSET_OUT_OF_RANGE", 2: "CORRUPT_MESSAGE",
    3: "UNKNOWN_TOPIC_OR_PARTITION", 4: "INVALID_FETCH_SIZE", 5: "LEADER_NOT_AVAILABLE",
    6: "NOT_LEADER_OR_FOLLOWER", 7: "REQUEST_TIMED_OUT", 10: "MESSAGE_TOO_LARGE",
    17: "INVALID_TOPIC_EXCEPTION", 18: "RECORD_LIST_TOO_LARGE",
    21: "INVALID_REQUIRED_ACKS", 32: "INVALID_TIMESTAMP", 35: "UNSUPPORTED_VERSION",
    36: "TOPIC_ALREADY_EXISTS", 37: "INVALID_PARTITIONS",
    38: "INVALID_REPLICATION_FACTOR", 40: "INVALID_CONFIG", 42: "INVALID_REQUEST",
    43: "UNSUPPORTED_FOR_MESSAGE_FORMAT", 44: "POLICY_VIOLATION",
    56: "KAFKA_STORAGE_ERROR", 74: "FENCED_LEADER_EPOCH", 75: "UNKNOWN_LEADER_EPOCH",
    76: "UNSUPPORTED_COMPRESSION_TYPE",
    87: "INVALID_RECORD", 100: "UNKNOWN_TOPIC_ID",
}


def error_name(code):
    return "%s(%d)" % (ERROR_NAMES.get(code, "?"), code)


# DescribeConfigs resource types and config sources.
RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4
SOURCE_UNKNOWN = 0
SOURCE_DYNAMIC_TOPIC_CONFIG = 1
SOURCE_DYNAMIC_BROKER_CONFIG = 2
SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG = 3
SOURCE_STATIC_BROKER_CONFIG = 4
SOURCE_DEFAULT_CONFIG = 5
# IncrementalAlterConfigs operations.
OP_SET, OP_DELETE, OP_APPEND, OP_SUBTRACT = 0, 1, 2, 3


class ProtocolError(Exception):
    pass


class ConnectionClosed(Exception):
    """The peer closed the connection (EOF or reset)."""


class FrameTimeout(Exception):
    """No complete frame arrived in time."""


def is_flexible(api_key, version):
    first = FLEXIBLE_FROM.get(api_key)
    return first is not None and version >= first


def request_header_version(api_key, version):
    return 2 if is_flexible(api_key, version) else 1


def response_header_version(api_key, version):
    if api_key == API_API_VERSIONS:
        return 0            # ApiVersions always answers with header v0
    return 1 if is_flexible(api_key, version) else 0


# --------------------------------------------------------------------------
# Primitive writer / reader
# --------------------------------------------------------------------------

class Writer:
    def __init__(self):
        self.parts = []

    def raw(self, b):
        self.parts.append(bytes(b))
        return self

    def i8(self, v):
        return self.raw(struct.pack(">b", v))

    def boolean(self, v):
        return self.raw(b"\x01" if v else b"\x00")

    def i16(self, v):
        return self.raw(struct.pack(">h", v))

    def i32(self, v):
        return self.raw(struct.pack(">i", v))

    def i64(self, v):
        return self.raw(struct.pack(">q", v))

    def uvarint(self, v):
        if v < 0:
            raise ValueError("uvarint must be >= 0")
        out = bytearray()
        while True:
            b = v & 0x7F
            v >>= 7
            if v:
                out.append(b | 0x80)
            else:
                out.append(b)
                break
        return self.raw(out)

    def uuid(self, v):
        v = v if v is not None else bytes(16)
        if len(v) != 16:
            raise ValueError("uuid must be 16 bytes")
        return self.raw(v)

    def string(self, s, flexible=False):
        """STRING / NULLABLE_STRING, or their COMPACT_ forms."""
        if s is None:
            return self.uvarint(0) if flexible else self.i16(-1)
        b = s.encode("utf-8") if isinstance(s, str) else bytes(s)
        if flexible:
            self.uvarint(len(b) + 1)
        else:
            self.i16(len(b))
        return self.raw(b)

    def array(self, items, fn, flexible=False):
        """ARRAY / COMPACT_ARRAY; items None = null array; fn(writer, item)."""
        if items is None:
            return self.uvarint(0) if flexible else self.i32(-1)
        items = list(items)
        if flexible:
            self.uvarint(len(items) + 1)
        else:
            self.i32(len(items))
        for it in items:
            fn(self, it)
        return self

    def blob(self, b, flexible=False):
        """BYTES / NULLABLE_BYTES / RECORDS, or their COMPACT_ forms."""
        if b is None:
            return self.uvarint(0) if flexible else self.i32(-1)
        if flexible:
            self.uvarint(len(b) + 1)
        else:
            self.i32(len(b))
        return self.raw(b)

    def tags(self, tagged=None):
        """Tagged-field section; tagged = {tag: bytes}."""
        tagged = tagged or {}
        self.uvarint(len(tagged))
        for tag in sorted(tagged):
            self.uvarint(tag)
            self.uvarint(len(tagged[tag]))
            self.raw(tagged[tag])
        return self

    def bytes(self):
        return b"".join(self.parts)


class Reader:
    def __init__(self, data, pos=0):
        self.data = bytes(data)
        self.pos = pos

    def _take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise ProtocolError("underflow: need %d bytes at %d of %d"
                                % (n, self.pos, len(self.data)))
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def remaining(self):
        return len(self.data) - self.pos

    def i8(self):
        return struct.unpack(">b", self._take(1))[0]

    def boolean(self):
        v = self._take(1)[0]
        if v not in (0, 1):
            raise ProtocolError("bad boolean %d" % v)
        return v == 1

    def i16(self):
        return struct.unpack(">h", self._take(2))[0]

    def i32(self):
        return struct.unpack(">i", self._take(4))[0]

    def i64(self):
        return struct.unpack(">q", self._take(8))[0]

    def uvarint(self):
        shift = 0
        v = 0
        for _ in range(5):
            b = self._take(1)[0]
            v |= (b & 0x7F) << shift
            if not b & 0x80:
                return v
            shift += 7
        raise ProtocolError("uvarint longer than 5 bytes")

    def uuid(self):
        return self._take(16)

    def string(self, flexible=False, nullable=False):
        if flexible:
            n = self.uvarint() - 1
        else:
            n = self.i16()
        if n < 0:
            if n == -1 and nullable:
                return None
            raise ProtocolError("null/negative length %d for a non-nullable string" % n)
        return self._take(n).decode("utf-8")

    def blob(self, flexible=False, nullable=False):
        if flexible:
            n = self.uvarint() - 1
        else:
            n = self.i32()
        if n < 0:
            if n == -1 and nullable:
                return None
            raise ProtocolError("null/negative length %d for non-nullable bytes" % n)
        return self._take(n)

    def array(self, fn, flexible=False, nullable=False):
        if flexible:
            n = self.uvarint() - 1
        else:
            n = self.i32()
        if n < 0:
            if n == -1 and nullable:
                return None
            raise ProtocolError("null/negative array length %d" % n)
        if n > self.remaining():
            raise ProtocolError("array length %d larger than the rest" % n)
        return [fn(self) for _ in range(n)]

    def tags(self):
        """Reads a tagged-field section; returns {tag: raw bytes}."""
        out = {}
        last = -1
        for _ in range(self.uvarint()):
            tag = self.uvarint()
            if tag <= last:
                raise ProtocolError("tagged fields not in ascending order")
            last = tag
            out[tag] = self._take(self.uvarint())
        return out

    def done(self, what="message"):
        if self.remaining():
            raise ProtocolError("%d trailing bytes after %s"
                                % (self.remaining(), what))


# --------------------------------------------------------------------------
# Framing and headers
# --------------------------------------------------------------------------

def frame(payload):
    return struct.pack(">i", len(payload)) + payload


def encode_request_header(api_key, version, correlation_id, client_id="kwire",
                          header_version=None):
    if header_version is None:
        header_version = request_header_version(api_key, version)
    w = Writer().i16(api_key).i16(version).i32(correlation_id)
    if header_version >= 1:
        w.string(client_id)                 # always a non-compact nullable string
    if header_version >= 2:
        w.tags()
    return w.bytes()


def encode_request(api_key, version, correlation_id, body, client_id="kwire",
                   header_version=None):
    """Returns the whole frame (size prefix included)."""
    return frame(encode_request_header(api_key, version, correlation_id,
                                       client_id, header_version) + body)


def decode_request_header(payload):
    """Decodes a request header (v1 or v2 by the API/version); returns
    (dict, Reader positioned at the body). Unknown APIs are read as v1."""
    r = Reader(payload)
    h = {"api_key": r.i16(), "api_version": r.i16(), "correlation_id": r.i32()}
    h["client_id"] = r.string(nullable=True)
    h["header_version"] = request_header_version(h["api_key"], h["api_version"])
    if h["header_version"] >= 2:
        h["tags"] = r.tags()
    return h, r


def encode_response(api_key, version, correlation_id, body):
    w = Writer().i32(correlation_id)
    if response_header_version(api_key, version) >= 1:
        w.tags()
    return frame(w.bytes() + body)


def decode_response_header(payload, api_key, version):
    r = Reader(payload)
    corr = r.i32()
    if response_header_version(api_key, version) >= 1:
        r.tags()
    return corr, r


def peek_correlation_id(payload):
    if len(payload) < 4:
        raise ProtocolError("response shorter than a correlation id")
    return struct.unpack(">i", payload[:4])[0]


# --------------------------------------------------------------------------
# ApiVersions (key 18)
# --------------------------------------------------------------------------

def encode_api_versions_request(version, software_name="kwire",
                                software_version="0.1"):
    w = Writer()
    if version >= 3:
        w.string(software_name, flexible=True)
        w.string(software_version, flexible=True)
        w.tags()
    return w.bytes()


def api_versions_request(version, correlation_id, client_id="kwire",
                         software_name="kwire", software_version="0.1"):
    body = encode_api_versions_request(version, software_name, software_version)
    return encode_request(API_API_VERSIONS, version, correlation_id, body,
                          client_id)


def decode_api_versions_request(r, version):
    out = {}
    if version >= 3:
        out["client_software_name"] = r.string(flexible=True)
        out["client_software_version"] = r.string(flexible=True)
        r.tags()
    return out


def decode_api_versions_body(r, version):
    flex = version >= 3
    out = {"error_code": r.i16()}

    def key(rr):
        k = {"api_key": rr.i16(), "min_version": rr.i16(), "max_version": rr.i16()}
        if flex:
            rr.tags()
        return k
    keys = r.array(key, flexible=flex)
    out["api_keys"] = {k["api_key"]: (k["min_version"], k["max_version"]) for k in keys}
    out["api_keys_list"] = keys
    if version >= 1:
        out["throttle_time_ms"] = r.i32()
    if flex:
        out["tags"] = r.tags()   # SupportedFeatures (0), FinalizedFeaturesEpoch (1), ...
    r.done("ApiVersions v%d response" % version)
    return out


def decode_api_versions_response(payload, version):
    """payload = the frame without its size prefix. An UNSUPPORTED_VERSION
    answer is in v0 format whatever the request version; pass version=0."""
    corr, r = decode_response_header(payload, API_API_VERSIONS, version)
    out = decode_api_versions_body(r, version)
    out["correlation_id"] = corr
    return out


def encode_api_versions_response(version, api_keys, error_code=0,
                                 throttle_time_ms=0):
    """api_keys: {key: (min, max)}. Body only."""
    flex = version >= 3
    w = Writer().i16(error_code)

    def key(ww, item):
        k, (lo, hi) = item
        ww.i16(k).i16(lo).i16(hi)
        if flex:
            ww.tags()
    w.array(sorted(api_keys.items()), key, flexible=flex)
    if version >= 1:
        w.i32(throttle_time_ms)
    if flex:
        w.tags()
    return w.bytes()


# --------------------------------------------------------------------------
# Metadata (key 3)
# --------------------------------------------------------------------------

def encode_metadata_request(version, topics=None, allow_auto_topic_creation=True,
                            include_cluster_authorized_operations=False,
                            include_topic_authorized_operations=False):
    """topics: None = all topics (v1+; v0 sends an empty array, which means all
    topics in v0), or a list of names."""
    flex = version >= 9
    w = Writer()
    if version == 0 and topics is None:
        topics = []

    def topic(ww, name):
        if version >= 10:
            ww.uuid(bytes(16))
        ww.string(name, flexible=flex)
        if flex:
            ww.tags()
    w.array(topics, topic, flexible=flex)
    if version >= 4:
        w.boolean(allow_auto_topic_creation)
    if 8 <= version <= 10:
        w.boolean(include_cluster_authorized_operations)
    if version >= 8:
        w.boolean(include_topic_authorized_operations)
    if flex:
        w.tags()
    return w.bytes()


def metadata_request(version, correlation_id, topics=None, client_id="kwire",
                     **kw):
    return encode_request(API_METADATA, version, correlation_id,
                          encode_metadata_request(version, topics, **kw),
                          client_id)


def decode_metadata_request(r, version):
    flex = version >= 9

    def topic(rr):
        t = {}
        if version >= 10:
            t["topic_id"] = rr.uuid()
        t["name"] = rr.string(flexible=flex, nullable=version >= 10)
        if flex:
            rr.tags()
        return t
    out = {"topics": r.array(topic, flexible=flex, nullable=version >= 1)}
    out["allow_auto_topic_creation"] = r.boolean() if version >= 4 else True
    if 8 <= version <= 10:
        out["include_cluster_authorized_operations"] = r.boolean()
    if version >= 8:
        out["include_topic_authorized_operations"] = r.boolean()
    if flex:
        r.tags()
    r.done("Metadata v%d request" % version)
    return out


def decode_metadata_body(r, version):
    flex = version >= 9
    out = {}
    if version >= 3:
        out["throttle_time_ms"] = r.i32()

    def broker(rr):
        b = {"node_id": rr.i32(), "host": rr.string(flexible=flex), "port": rr.i32()}
        if version >= 1:
            b["rack"] = rr.string(flexible=flex, nullable=True)
        if flex:
            rr.tags()
        return b
    out["brokers"] = r.array(broker, flexible=flex)
    if version >= 2:
        out["cluster_id"] = r.string(flexible=flex, nullable=True)
    if version >= 1:
        out["controller_id"] = r.i32()

    def int32s(rr):
        return rr.array(lambda x: x.i32(), flexible=flex)

    def partition(rr):
        p = {"error_code": rr.i16(), "partition_index": rr.i32(), "leader_id": rr.i32()}
        if version >= 7:
            p["leader_epoch"] = rr.i32()
        p["replica_nodes"] = int32s(rr)
        p["isr_nodes"] = int32s(rr)
        if version >= 5:
            p["offline_replicas"] = int32s(rr)
        if flex:
            rr.tags()
        return p

    def topic(rr):
        t = {"error_code": rr.i16(),
             "name": rr.string(flexible=flex, nullable=version >= 12)}
        if version >= 10:
            t["topic_id"] = rr.uuid()
        if version >= 1:
            t["is_internal"] = rr.boolean()
        t["partitions"] = rr.array(partition, flexible=flex)
        if version >= 8:
            t["topic_authorized_operations"] = rr.i32()
        if flex:
            rr.tags()
        return t
    out["topics"] = r.array(topic, flexible=flex)
    if 8 <= version <= 10:
        out["cluster_authorized_operations"] = r.i32()
    if flex:
        out["tags"] = r.tags()
    r.done("Metadata v%d response" % version)
    return out


def decode_metadata_response(payload, version):
    corr, r = decode_response_header(payload, API_METADATA, version)
    out = decode_metadata_body(r, version)
    out["correlation_id"] = corr
    return out


def encode_metadata_response(version, brokers, cluster_id, controller_id,
                             topics=(), throttle_time_ms=0):
    """brokers: [{node_id, host, port, rack}]; topics: [{error_code, name,
    partitions: [...]}] (partitions may be empty). Body only."""
    flex = version >= 9
    w = Writer()
    if version >= 3:
        w.i32(throttle_time_ms)

    def broker(ww, b):
        ww.i32(b["node_id"]).string(b["host"], flexible=flex).i32(b["port"])
        if version >= 1:
            ww.string(b.get("rack"), flexible=flex)
        if flex:
            ww.tags()
    w.array(brokers, broker, flexible=flex)
    if version >= 2:
        w.string(cluster_id, flexible=flex)
    if version >= 1:
        w.i32(controller_id)

    def int32s(ww, xs):
        ww.array(xs, lambda www, x: www.i32(x), flexible=flex)

    def partition(ww, p):
        ww.i16(p.get("error_code", 0)).i32(p["partition_index"]).i32(p["leader_id"])
        if version >= 7:
            ww.i32(p.get("leader_epoch", 0))
        int32s(ww, p.get("replica_nodes", []))
        int32s(ww, p.get("isr_nodes", []))
        if version >= 5:
            int32s(ww, p.get("offline_replicas", []))
        if flex:
            ww.tags()

    def topic(ww, t):
        ww.i16(t.get("error_code", 0)).string(t["name"], flexible=flex)
        if version >= 10:
            ww.uuid(t.get("topic_id"))
        if version >= 1:
            ww.boolean(t.get("is_internal", False))
        ww.array(t.get("partitions", []), partition, flexible=flex)
        if version >= 8:
            ww.i32(t.get("topic_authorized_operations", -2147483648))
        if flex:
            ww.tags()
    w.array(topics, topic, flexible=flex)
    if 8 <= version <= 10:
        w.i32(-2147483648)
    if flex:
        w.tags()
    return w.bytes()


# --------------------------------------------------------------------------
# DescribeCluster (key 60), flexible in every version
# --------------------------------------------------------------------------

def encode_describe_cluster_request(version, include_cluster_authorized_operations=False,
                                    endpoint_type=1, include_fenced_brokers=False):
    w = Writer().boolean(include_cluster_authorized_operations)
    if version >= 1:
        w.i8(endpoint_type)             # 1 = brokers, 2 = controllers
    if version >= 2:
        w.boolean(include_fenced_brokers)   # KIP-1073
    return w.tags().bytes()


def describe_cluster_request(version, correlation_id, client_id="kwire", **kw):
    return encode_request(API_DESCRIBE_CLUSTER, version, correlation_id,
                          encode_describe_cluster_request(version, **kw), client_id)


def decode_describe_cluster_request(r, version):
    out = {"include_cluster_authorized_operations": r.boolean()}
    if version >= 1:
        out["endpoint_type"] = r.i8()
    if version >= 2:
        out["include_fenced_brokers"] = r.boolean()
    r.tags()
    r.done("DescribeCluster v%d request" % version)
    return out


def decode_describe_cluster_body(r, version):
    out = {"throttle_time_ms": r.i32(), "error_code": r.i16(),
           "error_message": r.string(flexible=True, nullable=True)}
    if version >= 1:
        out["endpoint_type"] = r.i8()
    out["cluster_id"] = r.string(flexible=True)
    out["controller_id"] = r.i32()

    def broker(rr):
        b = {"broker_id": rr.i32(), "host": rr.string(flexible=True),
             "port": rr.i32(), "rack": rr.string(flexible=True, nullable=True)}
        if version >= 2:
            b["is_fenced"] = rr.boolean()
        rr.tags()
        return b
    out["brokers"] = r.array(broker, flexible=True)
    out["cluster_authorized_operations"] = r.i32()
    out["tags"] = r.tags()
    r.done("DescribeCluster v%d response" % version)
    return out


def decode_describe_cluster_response(payload, version):
    corr, r = decode_response_header(payload, API_DESCRIBE_CLUSTER, version)
    out = decode_describe_cluster_body(r, version)
    out["correlation_id"] = corr
    return out


def encode_describe_cluster_response(version, brokers, cluster_id, controller_id,
                                     error_code=0, endpoint_type=1):
    w = Writer().i32(0).i16(error_code).string(None, flexible=True)
    if version >= 1:
        w.i8(endpoint_type)
    w.string(cluster_id, flexible=True).i32(controller_id)

    def broker(ww, b):
        ww.i32(b["node_id"]).string(b["host"], flexible=True).i32(b["port"])
        ww.string(b.get("rack"), flexible=True)
        if version >= 2:
            ww.boolean(False)
        ww.tags()
    w.array(brokers, broker, flexible=True)
    w.i32(-2147483648)
    return w.tags().bytes()


DECODERS = {
    API_API_VERSIONS: decode_api_versions_response,
    API_METADATA: decode_metadata_response,
    API_DESCRIBE_CLUSTER: decode_describe_cluster_response,
}


def decode_response(payload, api_key, version):
    return DECODERS[api_key](payload, version)


# --------------------------------------------------------------------------
# Record batches (magic 2), CRC-32C, zigzag varints
# --------------------------------------------------------------------------

def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C_TABLE = _crc32c_table()


def crc32c_py(data, crc=0):
    """CRC-32C (Castagnoli), pure Python, table driven. crc chains calls."""
    t = _CRC32C_TABLE
    crc ^= 0xFFFFFFFF
    for b in bytes(data):
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _load_isal_crc():
    """ISA-L's crc32_iscsi, when the library is there: the same function,
    much faster on MiB-sized batches. Checked against crc32c_py first."""
    try:
        import ctypes
        lib = ctypes.CDLL("libisal.so.2")
        fn = lib.crc32_iscsi
        fn.restype = ctypes.c_uint32
        fn.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint32]
    except (OSError, AttributeError):
        return None

    def crc(data):
        data = bytes(data)
        return (~fn(data, len(data), 0xFFFFFFFF)) & 0xFFFFFFFF
    for probe in (b"", b"123456789", bytes(range(256)) * 3):
        if crc(probe) != crc32c_py(probe):
            return None
    return crc


_crc_fast = _load_isal_crc()


def crc32c(data):
    return _crc_fast(data) if _crc_fast else crc32c_py(data)


assert crc32c_py(b"123456789") == 0xE3069283, "CRC-32C table is wrong"


def zigzag(v):
    return (v << 1) if v >= 0 else ((-v) << 1) - 1


def unzigzag(u):
    return (u >> 1) ^ -(u & 1)


def varint(v):
    """Signed zigzag varint/varlong (record fields)."""
    return Writer().uvarint(zigzag(v)).bytes()


def read_varint(r):
    shift, u = 0, 0
    for _ in range(10):
        b = r._take(1)[0]
        u |= (b & 0x7F) << shift
        if not b & 0x80:
            return unzigzag(u)
        shift += 7
    raise ProtocolError("varint longer than 10 bytes")


CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
BATCH_HEADER_SIZE = 61
ATTR_TIMESTAMP_TYPE = 0x08      # 1 = LogAppendTime
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20


class Record:
    """One record: key/value bytes or None, headers [(str, bytes|None)],
    timestamp in ms (None: the batch's base timestamp)."""

    def __init__(self, value, key=None, headers=(), timestamp=None):
        self.key = key
        self.value = value
        self.headers = list(headers)
        self.timestamp = timestamp

    def __repr__(self):
        def short(b):
            if b is None or len(b) <= 24:
                return repr(b)
            return "<%d bytes %r...>" % (len(b), b[:12])
        return "Record(key=%s, value=%s, headers=%s, ts=%s)" % (
            short(self.key), short(self.value), self.headers, self.timestamp)

    def as_tuple(self):
        return (self.key, self.value, tuple(self.headers), self.timestamp)


def _opt_bytes(b):
    if b is None:
        return varint(-1)
    b = b.encode() if isinstance(b, str) else bytes(b)
    return varint(len(b)) + b


def encode_record(offset_delta, timestamp_delta, key, value, headers=(),
                  attributes=0):
    body = bytearray(struct.pack(">b", attributes))
    body += varint(timestamp_delta)
    body += varint(offset_delta)
    body += _opt_bytes(key)
    body += _opt_bytes(value)
    body += varint(len(headers))
    for hk, hv in headers:
        hk = hk.encode() if isinstance(hk, str) else bytes(hk)
        body += varint(len(hk)) + hk
        body += _opt_bytes(hv)
    return varint(len(body)) + bytes(body)


def compress(codec, data):
    if codec == CODEC_NONE:
        return data
    if codec == CODEC_GZIP:
        import gzip
        return gzip.compress(data)
    raise NotImplementedError("kwire compresses with gzip only, not %s"
                              % CODEC_NAMES.get(codec, codec))


def decompress(codec, data):
    """none and gzip in Python; snappy (raw or xerial), lz4 frame and zstd
    through the system libraries / tools when present."""
    if codec == CODEC_NONE:
        return data
    if codec == CODEC_GZIP:
        import zlib
        return zlib.decompress(data, 15 + 32)
    if codec == CODEC_SNAPPY:
        import ctypes
        lib = ctypes.CDLL("libsnappy.so.1")

        def raw(block):
            n = ctypes.c_size_t()
            if lib.snappy_uncompressed_length(block, ctypes.c_size_t(len(block)),
                                              ctypes.byref(n)) != 0:
                raise ProtocolError("bad snappy block")
            out = ctypes.create_string_buffer(max(n.value, 1))
            if lib.snappy_uncompress(block, ctypes.c_size_t(len(block)), out,
                                     ctypes.byref(n)) != 0:
                raise ProtocolError("bad snappy block")
            return out.raw[:n.value]
        if data[:8] == b"\x82SNAPPY\x00":
            out, pos = b"", 16
            while pos < len(data):
                n = struct.unpack(">i", data[pos:pos + 4])[0]
                out += raw(data[pos + 4:pos + 4 + n])
                pos += 4 + n
            return out
        return raw(data)
    if codec in (CODEC_LZ4, CODEC_ZSTD):
        import subprocess
        tool = ["lz4", "-dc"] if codec == CODEC_LZ4 else ["zstd", "-dcq"]
        p = subprocess.run(tool, input=data, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=30)
        if p.returncode != 0:
            raise ProtocolError("%s failed: %s" % (tool[0], p.stderr[-200:]))
        return p.stdout
    raise ProtocolError("unknown codec %d" % codec)


def encode_batch(records, base_offset=0, codec=CODEC_NONE, base_timestamp=None,
                 max_timestamp=None, log_append_time=False, producer_id=-1,
                 producer_epoch=-1, base_sequence=-1, partition_leader_epoch=-1,
                 attributes=None, last_offset_delta=None, records_count=None,
                 magic=2, crc=None, length=None, records_blob=None):
    """A record batch v2 (BaseOffset .. Records), CRC-32C over Attributes..end.

    records: [Record]; timestamps default to the current time. The keyword
    arguments after the first few exist to build invalid batches: a wrong
    crc, length, count, magic or attributes."""
    now = int(time.time() * 1000)
    ts = [r.timestamp if r.timestamp is not None else now for r in records]
    if base_timestamp is None:
        base_timestamp = ts[0] if ts else now
    if max_timestamp is None:
        max_timestamp = max(ts) if ts else base_timestamp
    if records_blob is None:
        body = b"".join(encode_record(i, t - base_timestamp, r.key, r.value, r.headers)
                        for i, (r, t) in enumerate(zip(records, ts)))
        records_blob = compress(codec, body)
    if attributes is None:
        attributes = codec | (ATTR_TIMESTAMP_TYPE if log_append_time else 0)
    if last_offset_delta is None:
        last_offset_delta = len(records) - 1
    if records_count is None:
        records_count = len(records)
    after_crc = (struct.pack(">hiqqqhii", attributes, last_offset_delta,
                             base_timestamp, max_timestamp, producer_id,
                             producer_epoch, base_sequence, records_count)
                 + records_blob)
    if crc is None:
        crc = crc32c(after_crc)
    body = struct.pack(">ibI", partition_leader_epoch, magic, crc) + after_crc
    if length is None:
        length = len(body)
    return struct.pack(">qi", base_offset, length) + body


def decode_records(blob, count, base_offset, base_timestamp):
    r = Reader(blob)
    out = []
    for _ in range(count):
        n = read_varint(r)
        start = r.pos
        attrs = r.i8()
        ts_delta = read_varint(r)
        off_delta = read_varint(r)

        def opt():
            ln = read_varint(r)
            return None if ln < 0 else r._take(ln)
        key = opt()
        value = opt()
        headers = []
        for _h in range(read_varint(r)):
            hk = r._take(read_varint(r)).decode("utf-8")
            headers.append((hk, opt()))
        if r.pos - start != n:
            raise ProtocolError("record length %d but %d bytes read" % (n, r.pos - start))
        out.append({"offset": base_offset + off_delta,
                    "timestamp": base_timestamp + ts_delta,
                    "key": key, "value": value, "headers": headers,
                    "attributes": attrs})
    if r.remaining():
        raise ProtocolError("%d bytes after the last record" % r.remaining())
    return out


def decode_batches(data, decode=True):
    """Splits a records blob into batches. Returns (batches, tail) where tail
    is the number of bytes of a trailing partial batch (a fetch may end
    mid-batch). Each batch: a dict with the header fields, crc_ok, raw (its
    bytes) and records (decoded; None if decode is False or the codec could
    not be opened). Record timestamps follow the batch: for LogAppendTime
    batches every record's timestamp is MaxTimestamp."""
    data = bytes(data or b"")
    batches = []
    pos = 0
    while len(data) - pos >= 12:
        base_offset, length = struct.unpack(">qi", data[pos:pos + 12])
        if length < BATCH_HEADER_SIZE - 12 or len(data) - pos < 12 + length:
            break
        raw = data[pos:pos + 12 + length]
        (ple, magic, crc, attrs, lod, base_ts, max_ts, pid, pepoch, bseq,
         count) = struct.unpack(">ibIhiqqqhii", raw[12:BATCH_HEADER_SIZE])
        b = {"base_offset": base_offset, "length": length,
             "partition_leader_epoch": ple, "magic": magic, "crc": crc,
             "crc_ok": magic == 2 and crc32c(raw[21:]) == crc,
             "attributes": attrs, "codec": attrs & 0x07,
             "log_append_time": bool(attrs & ATTR_TIMESTAMP_TYPE),
             "transactional": bool(attrs & ATTR_TRANSACTIONAL),
             "control": bool(attrs & ATTR_CONTROL),
             "last_offset_delta": lod, "last_offset": base_offset + lod,
             "base_timestamp": base_ts, "max_timestamp": max_ts,
             "producer_id": pid, "producer_epoch": pepoch,
             "base_sequence": bseq, "records_count": count,
             "raw": raw, "size": len(raw), "records": None}
        if decode and magic == 2:
            blob = raw[BATCH_HEADER_SIZE:]
            try:
                blob = decompress(b["codec"], blob)
            except (NotImplementedError, OSError):
                blob = None
            if blob is not None:
                recs = decode_records(blob, count, base_offset, base_ts)
                if b["log_append_time"]:
                    for rec in recs:
                        rec["timestamp"] = max_ts
                b["records"] = recs
        batches.append(b)
        pos += 12 + length
    return batches, len(data) - pos


def records_of(batches):
    """All decoded records of decode_batches()' batches, in order."""
    out = []
    for b in batches:
        if b["records"] is None:
            raise ProtocolError("batch at %d not decoded (codec %d)"
                                % (b["base_offset"], b["codec"]))
        out += b["records"]
    return out


# --------------------------------------------------------------------------
# Produce (key 0): v3-v11 here (v9+ flexible)
# --------------------------------------------------------------------------

def encode_produce_request(version, topics, acks=-1, timeout_ms=30000,
                           transactional_id=None):
    """topics: [(name, [(partition, records bytes or None)])]."""
    flex = version >= 9
    w = Writer()
    if version >= 3:
        w.string(transactional_id, flexible=flex)
    w.i16(acks).i32(timeout_ms)

    def part(ww, p):
        ww.i32(p[0]).blob(p[1], flexible=flex)
        if flex:
            ww.tags()

    def topic(ww, t):
        ww.string(t[0], flexible=flex)
        ww.array(t[1], part, flexible=flex)
        if flex:
            ww.tags()
    w.array(topics, topic, flexible=flex)
    if flex:
        w.tags()
    return w.bytes()


def produce_request(version, correlation_id, topics, client_id="kwire", **kw):
    return encode_request(API_PRODUCE, version, correlation_id,
                          encode_produce_request(version, topics, **kw), client_id)


def decode_produce_body(r, version):
    flex = version >= 9

    def rec_err(rr):
        e = {"batch_index": rr.i32(),
             "message": rr.string(flexible=flex, nullable=True)}
        if flex:
            rr.tags()
        return e

    def part(rr):
        p = {"partition": rr.i32(), "error_code": rr.i16(), "base_offset": rr.i64(),
             "log_append_time_ms": -1, "log_start_offset": -1,
             "record_errors": [], "error_message": None}
        if version >= 2:
            p["log_append_time_ms"] = rr.i64()
        if version >= 5:
            p["log_start_offset"] = rr.i64()
        if version >= 8:
            p["record_errors"] = rr.array(rec_err, flexible=flex)
            p["error_message"] = rr.string(flexible=flex, nullable=True)
        if flex:
            p["tags"] = rr.tags()
        return p

    def topic(rr):
        t = {"name": rr.string(flexible=flex),
             "partitions": rr.array(part, flexible=flex)}
        if flex:
            rr.tags()
        return t
    out = {"topics": r.array(topic, flexible=flex)}
    if version >= 1:
        out["throttle_time_ms"] = r.i32()
    if flex:
        out["tags"] = r.tags()
    r.done("Produce v%d response" % version)
    return out


def decode_produce_response(payload, version):
    corr, r = decode_response_header(payload, API_PRODUCE, version)
    out = decode_produce_body(r, version)
    out["correlation_id"] = corr
    return out


# --------------------------------------------------------------------------
# Fetch (key 1): v4-v16 (v12+ flexible, v13+ topic ids)
# --------------------------------------------------------------------------

def encode_fetch_request(version, topics, max_wait_ms=500, min_bytes=1,
                         max_bytes=0x7FFFFFFF, isolation_level=0, session_id=0,
                         session_epoch=-1, replica_id=-1, rack_id="",
                         forgotten=()):
    """topics: [(name, or 16-byte topic id for v13+, [partition spec])];
    a partition spec is (partition, fetch_offset, partition_max_bytes) or a
    dict with those keys and optionally current_leader_epoch,
    last_fetched_epoch, log_start_offset."""
    flex = version >= 12
    w = Writer()
    if version <= 14:
        w.i32(replica_id)
    w.i32(max_wait_ms).i32(min_bytes)
    if version >= 3:
        w.i32(max_bytes)
    if version >= 4:
        w.i8(isolation_level)
    if version >= 7:
        w.i32(session_id).i32(session_epoch)

    def part(ww, p):
        if not isinstance(p, dict):
            p = {"partition": p[0], "fetch_offset": p[1], "max_bytes": p[2]}
        ww.i32(p["partition"])
        if version >= 9:
            ww.i32(p.get("current_leader_epoch", -1))
        ww.i64(p["fetch_offset"])
        if version >= 12:
            ww.i32(p.get("last_fetched_epoch", -1))
        if version >= 5:
            ww.i64(p.get("log_start_offset", -1))
        ww.i32(p["max_bytes"])
        if flex:
            ww.tags()

    def topic_ref(ww, t):
        if version >= 13:
            ww.uuid(t)
        else:
            ww.string(t, flexible=flex)

    def topic(ww, t):
        topic_ref(ww, t[0])
        ww.array(t[1], part, flexible=flex)
        if flex:
            ww.tags()
    w.array(topics, topic, flexible=flex)
    if version >= 7:
        def forgot(ww, t):
            topic_ref(ww, t[0])
            ww.array(t[1], lambda www, x: www.i32(x), flexible=flex)
            if flex:
                ww.tags()
        w.array(forgotten, forgot, flexible=flex)
    if version >= 11:
        w.string(rack_id, flexible=flex)
    if flex:
        w.tags()
    return w.bytes()


def fetch_request(version, correlation_id, topics, client_id="kwire", **kw):
    return encode_request(API_FETCH, version, correlation_id,
                          encode_fetch_request(version, topics, **kw), client_id)


def decode_fetch_body(r, version):
    flex = version >= 12
    out = {"throttle_time_ms": r.i32() if version >= 1 else 0,
           "error_code": 0, "session_id": 0}
    if version >= 7:
        out["error_code"] = r.i16()
        out["session_id"] = r.i32()

    def aborted(rr):
        a = {"producer_id": rr.i64(), "first_offset": rr.i64()}
        if flex:
            rr.tags()
        return a

    def part(rr):
        p = {"partition": rr.i32(), "error_code": rr.i16(), "high_watermark": rr.i64(),
             "last_stable_offset": -1, "log_start_offset": -1,
             "aborted_transactions": None, "preferred_read_replica": -1}
        if version >= 4:
            p["last_stable_offset"] = rr.i64()
        if version >= 5:
            p["log_start_offset"] = rr.i64()
        if version >= 4:
            p["aborted_transactions"] = rr.array(aborted, flexible=flex, nullable=True)
        if version >= 11:
            p["preferred_read_replica"] = rr.i32()
        # None for null records (length -1), b"" for an empty record set:
        # the two are distinct (librdkafka rejects a response holding null)
        p["records"] = rr.blob(flexible=flex, nullable=True)
        if flex:
            p["tags"] = rr.tags()
        return p

    def topic(rr):
        t = {}
        if version >= 13:
            t["topic_id"] = rr.uuid()
        else:
            t["name"] = rr.string(flexible=flex)
        t["partitions"] = rr.array(part, flexible=flex)
        if flex:
            rr.tags()
        return t
    out["topics"] = r.array(topic, flexible=flex)
    if flex:
        out["tags"] = r.tags()
    r.done("Fetch v%d response" % version)
    return out


def decode_fetch_response(payload, version):
    corr, r = decode_response_header(payload, API_FETCH, version)
    out = decode_fetch_body(r, version)
    out["correlation_id"] = corr
    return out


# --------------------------------------------------------------------------
# ListOffsets (key 2): v1-v9 (v6+ flexible)
# --------------------------------------------------------------------------

TS_LATEST, TS_EARLIEST, TS_MAX_TIMESTAMP = -1, -2, -3


def encode_list_offsets_request(version, topics, isolation_level=0, replica_id=-1):
    """topics: [(name, [(partition, timestamp)])] (v1+)."""
    flex = version >= 6
    w = Writer().i32(replica_id)
    if version >= 2:
        w.i8(isolation_level)

    def part(ww, p):
        ww.i32(p[0])
        if version >= 4:
            ww.i32(p[2] if len(p) > 2 else -1)
        ww.i64(p[1])
        if version == 0:
            ww.i32(1)
        if flex:
            ww.tags()

    def topic(ww, t):
        ww.string(t[0], flexible=flex)
        ww.array(t[1], part, flexible=flex)
        if flex:
            ww.tags()
    w.array(topics, topic, flexible=flex)
    if flex:
        w.tags()
    return w.bytes()


def decode_list_offsets_body(r, version):
    flex = version >= 6
    out = {"throttle_time_ms": r.i32() if version >= 2 else 0}

    def part(rr):
        p = {"partition": rr.i32(), "error_code": rr.i16(),
             "timestamp": -1, "offset": -1, "leader_epoch": -1}
        if version == 0:
            p["old_style_offsets"] = rr.array(lambda x: x.i64())
        else:
            p["timestamp"] = rr.i64()
            p["offset"] = rr.i64()
        if version >= 4:
            p["leader_epoch"] = rr.i32()
        if flex:
            rr.tags()
        return p

    def topic(rr):
        t = {"name": rr.string(flexible=flex), "partitions": rr.array(part, flexible=flex)}
        if flex:
            rr.tags()
        return t
    out["topics"] = r.array(topic, flexible=flex)
    if flex:
        out["tags"] = r.tags()
    r.done("ListOffsets v%d response" % version)
    return out


def decode_list_offsets_response(payload, version):
    corr, r = decode_response_header(payload, API_LIST_OFFSETS, version)
    out = decode_list_offsets_body(r, version)
    out["correlation_id"] = corr
    return out


# --------------------------------------------------------------------------
# CreateTopics (key 19): v2-v7 (v5+ flexible)
# --------------------------------------------------------------------------

def encode_create_topics_request(version, topics, timeout_ms=30000, validate_only=False):
    """topics: [dict(name, num_partitions=1, replication_factor=1,
    assignments=[(partition, [broker ids])], configs={name: value})]."""
    flex = version >= 5
    w = Writer()

    def assignment(ww, a):
        ww.i32(a[0]).array(a[1], lambda www, x: www.i32(x), flexible=flex)
        if flex:
            ww.tags()

    def config(ww, kv):
        ww.string(kv[0], flexible=flex).string(kv[1], flexible=flex)
        if flex:
            ww.tags()

    def topic(ww, t):
        ww.string(t["name"], flexible=flex)
        ww.i32(t.get("num_partitions", 1)).i16(t.get("replication_factor", 1))
        ww.array(t.get("assignments", []), assignment, flexible=flex)
        ww.array(list(t.get("configs", {}).items()), config, flexible=flex)
        if flex:
            ww.tags()
    w.array(topics, topic, flexible=flex)
    w.i32(timeout_ms)
    if version >= 1:
        w.boolean(validate_only)
    if flex:
        w.tags()
    return w.bytes()


def decode_create_topics_body(r, version):
    flex = version >= 5
    out = {"throttle_time_ms": r.i32() if version >= 2 else 0}

    def config(rr):
        c = {"name": rr.string(flexible=flex), "value": rr.string(flexible=flex, nullable=True),
             "read_only": rr.boolean(), "config_source": rr.i8(),
             "is_sensitive": rr.boolean()}
        if flex:
            rr.tags()
        return c

    def topic(rr):
        t = {"name": rr.string(flexible=flex), "topic_id": None}
        if version >= 7:
            t["topic_id"] = rr.uuid()
        t["error_code"] = rr.i16()
        t["error_message"] = rr.string(flexible=flex, nullable=True) if version >= 1 else None
        if version >= 5:
            t["num_partitions"] = rr.i32()
            t["replication_factor"] = rr.i16()
            t["configs"] = rr.array(config, flexible=flex, nullable=True)
        if flex:
            t["tags"] = rr.tags()
        return t
    out["topics"] = r.array(topic, flexible=flex)
    if flex:
        out["tags"] = r.tags()
    r.done("CreateTopics v%d response" % version)
    return out


def decode_create_topics_response(payload, version):
    corr, r = decode_response_header(payload, API_CREATE_TOPICS, version)
    out = decode_create_topics_body(r, version)
    out["correlation_id"] = corr
    return out


# --------------------------------------------------------------------------
# DeleteTopics (key 20): v1-v6 (v4+ flexible; v6 names or topic ids)
# --------------------------------------------------------------------------

def encode_delete_topics_request(version, topics, timeout_ms=30000):
    """topics: names (str), or for v6 also 16-byte topic ids (bytes)."""
    flex = version >= 4
    w = Writer()
    if version >= 6:
        def state(ww, t):
            if isinstance(t, (bytes, bytearray)):
                ww.string(None, flexible=True).uuid(bytes(t))
            else:
                ww.string(t, flexible=True).uuid(bytes(16))
            ww.tags()
        w.array(topics, state, flexible=True)
    else:
        w.array(topics, lambda ww, n: ww.string(n, flexible=flex), flexible=flex)
    w.i32(timeout_ms)
    if flex:
        w.tags()
    return w.bytes()


def decode_delete_topics_body(r, version):
    flex = version >= 4
    out = {"throttle_time_ms": r.i32() if version >= 1 else 0}

    def res(rr):
        t = {"name": rr.string(flexible=flex, nullable=version >= 6), "topic_id": None}
        if version >= 6:
            t["topic_id"] = rr.uuid()
        t["error_code"] = rr.i16()
        t["error_message"] = rr.string(flexible=flex, nullable=True) if version >= 5 else None
        if flex:
            rr.tags()
        return t
    out["responses"] = r.array(res, flexible=flex)
    if flex:
        out["tags"] = r.tags()
    r.done("DeleteTopics v%d response" % version)
    return out


def decode_delete_topics_response(payload, version):
    corr, r = decode_response_header(payload, API_DELETE_TOPICS, version)
    out = decode_delete_topics_body(r, version)
    out["correlation_id"] = corr
    return out


# --------------------------------------------------------------------------
# DeleteRecords (key 21): v0-v2 (v2 flexible)
# --------------------------------------------------------------------------

def encode_delete_records_request(version, topics, timeout_ms=30000):
    """topics: [(name, [(partition, offset)])]."""
    flex = version >= 2
    w = Writer()

    def part(ww, p):
        ww.i32(p[0]).i64(p[1])
        if flex:
            ww.tags()

    def topic(ww, t):
        ww.string(t[0], flexible=flex).array(t[1], part, flexible=flex)
        if flex:
            ww.tags()
    w.array(topics, topic, flexible=flex).i32(timeout_ms)
    if flex:
        w.tags()
    return w.bytes()


def decode_delete_records_body(r, version):
    flex = version >= 2
    out = {"throttle_time_ms": r.i32()}

    def part(rr):
        p = {"partition": rr.i32(), "low_watermark": rr.i64(), "error_code": rr.i16()}
        if flex:
            rr.tags()
        return p

    def topic(rr):
        t = {"name": rr.string(flexible=flex), "partitions": rr.array(part, flexible=flex)}
        if flex:
            rr.tags()
        return t
    out["topics"] = r.array(topic, flexible=flex)
    if flex:
        out["tags"] = r.tags()
    r.done("DeleteRecords v%d response" % version)
    return out


def decode_delete_records_response(payload, version):
    corr, r = decode_response_header(payload, API_DELETE_RECORDS, version)
    out = decode_delete_records_body(r, version)
    out["correlation_id"] = corr
    return out


# --------------------------------------------------------------------------
# OffsetForLeaderEpoch (key 23): v0-v4 (v4 flexible; Kafka 4 serves v2-v4)
# --------------------------------------------------------------------------

def encode_offset_for_leader_epoch_request(version, topics, replica_id=-1):
    """topics: [(name, [(partition, current_leader_epoch, leader_epoch)])]
    (current_leader_epoch is sent from v2, replica_id from v3)."""
    flex = version >= 4
    w = Writer()

    def part(ww, p):
        ww.i32(p[0])
        if version >= 2:
            ww.i32(p[1])
        ww.i32(p[2])
        if flex:
            ww.tags()

    def topic(ww, t):
        ww.string(t[0], flexible=flex).array(t[1], part, flexible=flex)
        if flex:
            ww.tags()
    if version >= 3:
        w.i32(replica_id)
    w.array(topics, topic, flexible=flex)
    if flex:
        w.tags()
    return w.bytes()


def decode_offset_for_leader_epoch_body(r, version):
    flex = version >= 4
    out = {"throttle_time_ms": r.i32() if version >= 2 else 0}

    def part(rr):
        p = {"error_code": rr.i16(), "partition": rr.i32(),
             "leader_epoch": rr.i32() if version >= 1 else -1,
             "end_offset": rr.i64()}
        if flex:
            rr.tags()
        return p

    def topic(rr):
        t = {"topic": rr.string(flexible=flex), "partitions": rr.array(part, flexible=flex)}
        if flex:
            rr.tags()
        return t
    out["topics"] = r.array(topic, flexible=flex)
    if flex:
        out["tags"] = r.tags()
    r.done("OffsetForLeaderEpoch v%d response" % version)
    return out


def decode_offset_for_leader_epoch_response(payload, version):
    corr, r = decode_response_header(payload, API_OFFSET_FOR_LEADER_EPOCH, version)
    out = decode_offset_for_leader_epoch_body(r, version)
    out["correlation_id"] = corr
    return out


# --------------------------------------------------------------------------
# ElectLeaders (key 43): v0-v2 (v2 flexible)
# --------------------------------------------------------------------------

def encode_elect_leaders_request(version, topics, election_type=0, timeout_ms=60000):
    """topics: [(name, [partition])], or None for every partition."""
    flex = version >= 2
    w = Writer()
    if version >= 1:
        w.i8(election_type)

    def topic(ww, t):
        ww.string(t[0], flexible=flex)
        ww.array(t[1], lambda www, p: www.i32(p), flexible=flex)
        if flex:
            ww.tags()
    w.array(topics, topic, flexible=flex).i32(timeout_ms)
    if flex:
        w.tags()
    return w.bytes()


def decode_elect_leaders_response(payload, version):
    flex = version >= 2
    corr, r = decode_response_header(payload, API_ELECT_LEADERS, version)
    out = {"correlation_id": corr, "throttle_time_ms": r.i32(),
           "error_code": r.i16() if version >= 1 else 0}

    def part(rr):
        p = {"partition": rr.i32(), "error_code": rr.i16(),
             "error_message": rr.string(flexible=flex, nullable=True)}
        if flex:
            rr.tags()
        return p

    def topic(rr):
        t = {"topic": rr.string(flexible=flex), "partitions": rr.array(part, flexible=flex)}
        if flex:
            rr.tags()
        return t
    out["results"] = r.array(topic, flexible=flex)
    if flex:
        out["tags"] = r.tags()
    r.done("ElectLeaders v%d response" % version)
    return out


# --------------------------------------------------------------------------
# ListPartitionReassignments (key 46): v0 (flexible)
# --------------------------------------------------------------------------

def encode_list_partition_reassignments_request(version, topics, timeout_ms=60000):
    """topics: [(name, [partition])], or None for all."""
    w = Writer().i32(timeout_ms)

    def topic(ww, t):
        ww.string(t[0], flexible=True)
        ww.array(t[1], lambda www, p: www.i32(p), flexible=True)
        ww.tags()
    w.array(topics, topic, flexible=True)
    w.tags()
    return w.bytes()


def decode_list_partition_reassignments_response(payload, version):
    corr, r = decode_response_header(payload, API_LIST_PARTITION_REASSIGNMENTS, version)
    out = {"correlation_id": corr, "throttle_time_ms": r.i32(), "error_code": r.i16(),
           "error_message": r.string(flexible=True, nullable=True)}

    def ints(rr):
        return rr.array(lambda x: x.i32(), flexible=True)

    def part(rr):
        p = {"partition": rr.i32(), "replicas": ints(rr), "adding": ints(rr),
             "removing": ints(rr)}
        rr.tags()
        return p

    def topic(rr):
        t = {"name": rr.string(flexible=True), "partitions": rr.array(part, flexible=True)}
        rr.tags()
        return t
    out["topics"] = r.array(topic, flexible=True)
    out["tags"] = r.tags()
    r.done("ListPartitionReassignments v%d response" % version)
    return out


# --------------------------------------------------------------------------
# DescribeConfigs (key 32): v0-v4 (v4 flexible)
# --------------------------------------------------------------------------

def encode_describe_configs_request(version, resources, include_synonyms=False,
                                    include_documentation=False):
    """resources: [(resource_type, name, [keys] or None for all)]."""
    flex = version >= 4
    w = Writer()

    def res(ww, x):
        ww.i8(x[0]).string(x[1], flexible=flex)
        ww.array(x[2] if len(x) > 2 else None,
                 lambda www, k: www.string(k, flexible=flex), flexible=flex)
        if flex:
            ww.tags()
    w.array(resources, res, flexible=flex)
    if version >= 1:
        w.boolean(include_synonyms)
    if version >= 3:
        w.boolean(include_documentation)
    if flex:
        w.tags()
    return w.bytes()


def decode_describe_configs_body(r, version):
    flex = version >= 4
    out = {"throttle_time_ms": r.i32()}

    def syn(rr):
        s = {"name": rr.string(flexible=flex), "value": rr.string(flexible=flex, nullable=True),
             "source": rr.i8()}
        if flex:
            rr.tags()
        return s

    def entry(rr):
        e = {"name": rr.string(flexible=flex),
             "value": rr.string(flexible=flex, nullable=True),
             "read_only": rr.boolean(), "is_default": None, "source": -1}
        if version == 0:
            e["is_default"] = rr.boolean()
        else:
            e["source"] = rr.i8()
        e["is_sensitive"] = rr.boolean()
        e["synonyms"] = rr.array(syn, flexible=flex) if version >= 1 else []
        if version >= 3:
            e["config_type"] = rr.i8()
            e["documentation"] = rr.string(flexible=flex, nullable=True)
        if flex:
            rr.tags()
        return e

    def result(rr):
        x = {"error_code": rr.i16(), "error_message": rr.string(flexible=flex, nullable=True),
             "resource_type": rr.i8(), "resource_name": rr.string(flexible=flex),
             "configs": rr.array(entry, flexible=flex)}
        if flex:
            rr.tags()
        return x
    out["results"] = r.array(result, flexible=flex)
    if flex:
        out["tags"] = r.tags()
    r.done("DescribeConfigs v%d response" % version)
    return out


def decode_describe_configs_response(payload, version):
    corr, r = decode_response_header(payload, API_DESCRIBE_CONFIGS, version)
    out = decode_describe_configs_body(r, version)
    out["correlation_id"] = corr
    return out


# --------------------------------------------------------------------------
# AlterConfigs (key 33): v0-v2 (v2 flexible);
# IncrementalAlterConfigs (key 44): v0-v1 (v1 flexible)
# --------------------------------------------------------------------------

def encode_alter_configs_request(version, resources, validate_only=False):
    """resources: [(resource_type, name, {key: value or None})]."""
    flex = version >= 2
    w = Writer()

    def cfg(ww, kv):
        ww.string(kv[0], flexible=flex).string(kv[1], flexible=flex)
        if flex:
            ww.tags()

    def res(ww, x):
        ww.i8(x[0]).string(x[1], flexible=flex)
        ww.array(list(x[2].items()), cfg, flexible=flex)
        if flex:
            ww.tags()
    w.array(resources, res, flexible=flex).boolean(validate_only)
    if flex:
        w.tags()
    return w.bytes()


def encode_incremental_alter_configs_request(version, resources, validate_only=False):
    """resources: [(resource_type, name, [(key, op, value or None)])]."""
    flex = version >= 1
    w = Writer()

    def cfg(ww, c):
        ww.string(c[0], flexible=flex).i8(c[1]).string(c[2], flexible=flex)
        if flex:
            ww.tags()

    def res(ww, x):
        ww.i8(x[0]).string(x[1], flexible=flex)
        ww.array(x[2], cfg, flexible=flex)
        if flex:
            ww.tags()
    w.array(resources, res, flexible=flex).boolean(validate_only)
    if flex:
        w.tags()
    return w.bytes()


def _decode_alter_body(r, flex, what):
    out = {"throttle_time_ms": r.i32()}

    def res(rr):
        x = {"error_code": rr.i16(), "error_message": rr.string(flexible=flex, nullable=True),
             "resource_type": rr.i8(), "resource_name": rr.string(flexible=flex)}
        if flex:
            rr.tags()
        return x
    out["responses"] = r.array(res, flexible=flex)
    if flex:
        out["tags"] = r.tags()
    r.done(what)
    return out


def decode_alter_configs_response(payload, version):
    corr, r = decode_response_header(payload, API_ALTER_CONFIGS, version)
    out = _decode_alter_body(r, version >= 2, "AlterConfigs v%d response" % version)
    out["correlation_id"] = corr
    return out


def decode_incremental_alter_configs_response(payload, version):
    corr, r = decode_response_header(payload, API_INCREMENTAL_ALTER_CONFIGS, version)
    out = _decode_alter_body(r, version >= 1,
                             "IncrementalAlterConfigs v%d response" % version)
    out["correlation_id"] = corr
    return out


# --------------------------------------------------------------------------
# DescribeLogDirs (key 35): v0-v4 (v2+ flexible)
# --------------------------------------------------------------------------

def encode_describe_log_dirs_request(version, topics=None):
    """topics: None for all, or [(name, [partitions])]."""
    flex = version >= 2
    w = Writer()

    def topic(ww, t):
        ww.string(t[0], flexible=flex)
        ww.array(t[1], lambda www, x: www.i32(x), flexible=flex)
        if flex:
            ww.tags()
    w.array(topics, topic, flexible=flex)
    if flex:
        w.tags()
    return w.bytes()


def decode_describe_log_dirs_body(r, version):
    flex = version >= 2
    out = {"throttle_time_ms": r.i32(), "error_code": 0}
    if version >= 3:
        out["error_code"] = r.i16()

    def part(rr):
        p = {"partition": rr.i32(), "size": rr.i64(), "offset_lag": rr.i64(),
             "is_future": rr.boolean()}
        if flex:
            rr.tags()
        return p

    def topic(rr):
        t = {"name": rr.string(flexible=flex), "partitions": rr.array(part, flexible=flex)}
        if flex:
            rr.tags()
        return t

    def result(rr):
        x = {"error_code": rr.i16(), "log_dir": rr.string(flexible=flex),
             "topics": rr.array(topic, flexible=flex),
             "total_bytes": -1, "usable_bytes": -1}
        if version >= 4:
            x["total_bytes"] = rr.i64()
            x["usable_bytes"] = rr.i64()
        if flex:
            rr.tags()
        return x
    out["results"] = r.array(result, flexible=flex)
    if flex:
        out["tags"] = r.tags()
    r.done("DescribeLogDirs v%d response" % version)
    return out


def decode_describe_log_dirs_response(payload, version):
    corr, r = decode_response_header(payload, API_DESCRIBE_LOG_DIRS, version)
    out = decode_describe_log_dirs_body(r, version)
    out["correlation_id"] = corr
    return out


# --------------------------------------------------------------------------
# CreatePartitions (key 37): v0-v3 (v2+ flexible)
# --------------------------------------------------------------------------

def encode_create_partitions_request(version, topics, timeout_ms=30000,
                                     validate_only=False):
    """topics: [(name, new total count, assignments [[broker ids]] or None)]."""
    flex = version >= 2
    w = Writer()

    def assignment(ww, brokers):
        ww.array(brokers, lambda www, x: www.i32(x), flexible=flex)
        if flex:
            ww.tags()

    def topic(ww, t):
        ww.string(t[0], flexible=flex).i32(t[1])
        ww.array(t[2] if len(t) > 2 else None, assignment, flexible=flex)
        if flex:
            ww.tags()
    w.array(topics, topic, flexible=flex).i32(timeout_ms).boolean(validate_only)
    if flex:
        w.tags()
    return w.bytes()


def decode_create_partitions_body(r, version):
    flex = version >= 2
    out = {"throttle_time_ms": r.i32()}

    def res(rr):
        x = {"name": rr.string(flexible=flex), "error_code": rr.i16(),
             "error_message": rr.string(flexible=flex, nullable=True)}
        if flex:
            rr.tags()
        return x
    out["results"] = r.array(res, flexible=flex)
    if flex:
        out["tags"] = r.tags()
    r.done("CreatePartitions v%d response" % version)
    return out


def decode_create_partitions_response(payload, version):
    corr, r = decode_response_header(payload, API_CREATE_PARTITIONS, version)
    out = decode_create_partitions_body(r, version)
    out["correlation_id"] = corr
    return out


DECODERS.update({
    API_PRODUCE: decode_produce_response,
    API_FETCH: decode_fetch_response,
    API_LIST_OFFSETS: decode_list_offsets_response,
    API_CREATE_TOPICS: decode_create_topics_response,
    API_DELETE_TOPICS: decode_delete_topics_response,
    API_DELETE_RECORDS: decode_delete_records_response,
    API_OFFSET_FOR_LEADER_EPOCH: decode_offset_for_leader_epoch_response,
    API_ELECT_LEADERS: decode_elect_leaders_response,
    API_LIST_PARTITION_REASSIGNMENTS: decode_list_partition_reassignments_response,
    API_DESCRIBE_CONFIGS: decode_describe_configs_response,
    API_ALTER_CONFIGS: decode_alter_configs_response,
    API_INCREMENTAL_ALTER_CONFIGS: decode_incremental_alter_configs_response,
    API_DESCRIBE_LOG_DIRS: decode_describe_log_dirs_response,
    API_CREATE_PARTITIONS: decode_create_partitions_response,
})


def uuid_str(b):
    """A topic id as Kafka prints it (URL-safe base64, no padding)."""
    import base64
    return base64.urlsafe_b64encode(bytes(b)).decode().rstrip("=")


# --------------------------------------------------------------------------
# Sockets
# --------------------------------------------------------------------------

class Conn:
    """One blocking TCP connection with a receive buffer; every wait is
    bounded by an explicit timeout."""

    def __init__(self, host, port, timeout=5.0, client_id="kwire"):
        self.host, self.port = host, port
        self.client_id = client_id
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.next_corr = 1
        self.closed = False

    # -- plumbing ----------------------------------------------------------
    def close(self):
        if not self.closed:
            self.closed = True
            try:
                self.sock.close()
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def fileno(self):
        return self.sock.fileno()

    def local_port(self):
        return self.sock.getsockname()[1]

    def send(self, data, timeout=5.0):
        self.sock.settimeout(timeout)
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError) as e:
            raise ConnectionClosed(str(e))

    def _fill(self, deadline):
        """Reads whatever is available (waiting until deadline); raises
        ConnectionClosed on EOF/reset, FrameTimeout on timeout."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise FrameTimeout("timed out")
        # poll, not select: select() cannot watch descriptors >= 1024
        # (the overload tests hold thousands of connections)
        poller = select.poll()
        poller.register(self.sock, select.POLLIN)
        r = poller.poll(left * 1000)
        if not r:
            raise FrameTimeout("timed out")
        try:
            self.sock.setblocking(False)
            chunk = self.sock.recv(1 << 20)
        except BlockingIOError:
            return
        except (ConnectionResetError, ConnectionAbortedError) as e:
            raise ConnectionClosed("reset: %s" % e)
        except OSError as e:
            if e.errno in (errno.ECONNRESET, errno.EPIPE):
                raise ConnectionClosed(str(e))
            raise
        finally:
            self.sock.setblocking(True)
        if not chunk:
            raise ConnectionClosed("EOF")
        self.buf += chunk

    def recv_frame(self, timeout=5.0):
        """Returns one response payload (without the size prefix)."""
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buf) >= 4:
                n = struct.unpack(">i", self.buf[:4])[0]
                if n < 0:
                    raise ProtocolError("negative response size %d" % n)
                if len(self.buf) >= 4 + n:
                    payload = bytes(self.buf[4:4 + n])
                    del self.buf[:4 + n]
                    return payload
            self._fill(deadline)

    def wait_closed(self, timeout=5.0):
        """Waits for the peer to close. Returns (closed, unexpected_bytes):
        closed is False on timeout; unexpected_bytes is whatever arrived
        before the close (a conforming server sends nothing)."""
        deadline = time.monotonic() + timeout
        before = len(self.buf)
        while True:
            try:
                self._fill(deadline)
            except ConnectionClosed:
                return True, bytes(self.buf[before:])
            except FrameTimeout:
                return False, bytes(self.buf[before:])

    def is_open(self, wait=0.05):
        """True if no EOF/reset shows up within `wait` seconds (data that
        arrives is kept in the buffer)."""
        try:
            self._fill(time.monotonic() + wait)
        except FrameTimeout:
            return True
        except ConnectionClosed:
            return False
        return True

    # -- requests ----------------------------------------------------------
    def corr(self):
        c = self.next_corr
        self.next_corr += 1
        return c

    def request(self, api_key, version, body, timeout=5.0, correlation_id=None):
        """Sends one request and returns the decoded response."""
        c = self.corr() if correlation_id is None else correlation_id
        self.send(encode_request(api_key, version, c, body, self.client_id),
                  timeout)
        payload = self.recv_frame(timeout)
        got = peek_correlation_id(payload)
        if got != c:
            raise ProtocolError("correlation id %d, expected %d" % (got, c))
        return decode_response(payload, api_key, version)

    def request_raw(self, api_key, version, body, timeout=5.0):
        """Sends one request and returns a Reader at its response's body
        (after the response header), for the tests' own decoders."""
        c = self.corr()
        self.send(encode_request(api_key, version, c, body, self.client_id),
                  timeout)
        corr, r = decode_response_header(self.recv_frame(timeout), api_key,
                                         version)
        if corr != c:
            raise ProtocolError("correlation id %d, expected %d" % (corr, c))
        return r

    def api_versions(self, version=0, timeout=5.0, **kw):
        resp_version = version
        c = self.corr()
        self.send(api_versions_request(version, c, self.client_id, **kw), timeout)
        payload = self.recv_frame(timeout)
        if peek_correlation_id(payload) != c:
            raise ProtocolError("correlation id mismatch")
        # An unsupported version is answered in v0 format with error 35.
        try:
            return decode_api_versions_response(payload, resp_version)
        except ProtocolError:
            out = decode_api_versions_response(payload, 0)
            if out["error_code"] != ERR_UNSUPPORTED_VERSION:
                raise
            return out

    def metadata(self, version=1, topics=None, timeout=5.0, **kw):
        return self.request(API_METADATA, version,
                            encode_metadata_request(version, topics, **kw), timeout)

    def describe_cluster(self, version=0, timeout=5.0, **kw):
        return self.request(API_DESCRIBE_CLUSTER, version,
                            encode_describe_cluster_request(version, **kw), timeout)

    # -- storage and topic administration (issue 3) ----------------------------
    def produce(self, topic, partition, records, version=9, acks=-1,
                timeout_ms=30000, timeout=5.0):
        """Produces one records blob to one partition; returns that
        partition's response dict (with throttle_time_ms added). acks=0
        sends and returns None: use no_response_then_alive() to check."""
        body = encode_produce_request(version, [(topic, [(partition, records)])],
                                      acks=acks, timeout_ms=timeout_ms)
        if acks == 0:
            self.send(encode_request(API_PRODUCE, version, self.corr(), body,
                                     self.client_id), timeout)
            return None
        r = self.request(API_PRODUCE, version, body, timeout)
        p = r["topics"][0]["partitions"][0]
        p["throttle_time_ms"] = r.get("throttle_time_ms", 0)
        return p

    def fetch(self, topic, partition, offset, version=12, max_wait_ms=0,
              min_bytes=1, max_bytes=0x7FFFFFFF, partition_max_bytes=0x7FFFFFFF,
              timeout=5.0, **kw):
        """Fetches one partition (topic: a name, or a 16-byte id for v13+);
        returns that partition's response dict with 'batches' and 'tail'
        (decode_batches) and the top-level 'response' added (a response
        with no topics, a throttled fetch's, gives no batches)."""
        body = encode_fetch_request(version, [(topic, [(partition, offset, partition_max_bytes)])],
                                    max_wait_ms=max_wait_ms, min_bytes=min_bytes,
                                    max_bytes=max_bytes, **kw)
        r = self.request(API_FETCH, version, body, timeout)
        if not r["topics"]:
            # a throttled fetch is answered with no topics at all (Kafka's
            # FetchContext.getThrottledResponse)
            return {"partition": partition, "error_code": 0, "records": None,
                    "batches": [], "tail": 0, "response": r}
        p = r["topics"][0]["partitions"][0]
        p["batches"], p["tail"] = decode_batches(p["records"])
        p["response"] = r
        return p

    def list_offsets(self, topic, partition, timestamp, version=7, timeout=5.0,
                     isolation_level=0):
        """Returns one partition's ListOffsets answer."""
        body = encode_list_offsets_request(version, [(topic, [(partition, timestamp)])],
                                           isolation_level=isolation_level)
        return self.request(API_LIST_OFFSETS, version, body, timeout)["topics"][0]["partitions"][0]

    def create_topics(self, topics, version=7, timeout_ms=30000, validate_only=False,
                      timeout=10.0):
        body = encode_create_topics_request(version, topics, timeout_ms, validate_only)
        return self.request(API_CREATE_TOPICS, version, body, timeout)

    def create_topic(self, name, num_partitions=1, configs=None, version=7,
                     replication_factor=1, validate_only=False, timeout=10.0):
        """Creates one topic; returns its result dict."""
        r = self.create_topics([{"name": name, "num_partitions": num_partitions,
                                 "replication_factor": replication_factor,
                                 "configs": configs or {}}],
                               version=version, validate_only=validate_only,
                               timeout=timeout)
        return r["topics"][0]

    def delete_topics(self, topics, version=6, timeout_ms=30000, timeout=10.0):
        body = encode_delete_topics_request(version, topics, timeout_ms)
        return self.request(API_DELETE_TOPICS, version, body, timeout)["responses"]

    def delete_records(self, topic, partition, offset, version=2, timeout=10.0):
        body = encode_delete_records_request(version, [(topic, [(partition, offset)])])
        return self.request(API_DELETE_RECORDS, version, body, timeout)["topics"][0]["partitions"][0]

    def offset_for_leader_epoch(self, topics, version=4, replica_id=-1,
                                timeout=5.0):
        """topics as encode_offset_for_leader_epoch_request; returns
        {(topic, partition): partition dict}."""
        body = encode_offset_for_leader_epoch_request(version, topics, replica_id)
        r = self.request(API_OFFSET_FOR_LEADER_EPOCH, version, body, timeout)
        return {(t["topic"], p["partition"]): p
                for t in r["topics"] for p in t["partitions"]}

    def describe_configs(self, resources, version=4, include_synonyms=False,
                         include_documentation=False, timeout=5.0):
        body = encode_describe_configs_request(version, resources, include_synonyms,
                                               include_documentation)
        return self.request(API_DESCRIBE_CONFIGS, version, body, timeout)["results"]

    def topic_configs(self, topic, version=4, include_synonyms=True, keys=None):
        """{name: entry} of a topic's DescribeConfigs answer (asserts no error)."""
        res = self.describe_configs([(RESOURCE_TOPIC, topic, keys)], version,
                                    include_synonyms=include_synonyms)[0]
        if res["error_code"] != 0:
            raise ProtocolError("DescribeConfigs %s: %s %s" % (
                topic, error_name(res["error_code"]), res["error_message"]))
        return {e["name"]: e for e in res["configs"]}

    def alter_configs(self, resources, version=2, validate_only=False, timeout=10.0):
        body = encode_alter_configs_request(version, resources, validate_only)
        return self.request(API_ALTER_CONFIGS, version, body, timeout)["responses"]

    def incremental_alter_configs(self, resources, version=1, validate_only=False,
                                  timeout=10.0):
        body = encode_incremental_alter_configs_request(version, resources, validate_only)
        return self.request(API_INCREMENTAL_ALTER_CONFIGS, version, body, timeout)["responses"]

    def describe_log_dirs(self, topics=None, version=4, timeout=5.0):
        body = encode_describe_log_dirs_request(version, topics)
        return self.request(API_DESCRIBE_LOG_DIRS, version, body, timeout)

    def create_partitions(self, topics, version=3, validate_only=False, timeout=10.0):
        body = encode_create_partitions_request(version, topics, validate_only=validate_only)
        return self.request(API_CREATE_PARTITIONS, version, body, timeout)["results"]

    def topic_metadata(self, name, version=12, allow_auto_topic_creation=False,
                       timeout=5.0):
        """The Metadata answer's entry for one topic (its error code says
        whether it exists)."""
        kw = {"allow_auto_topic_creation": allow_auto_topic_creation} if version >= 4 else {}
        r = self.metadata(version, [name], timeout=timeout, **kw)
        for t in r["topics"]:
            if t["name"] == name:
                return t
        raise ProtocolError("Metadata v%d answer lacks topic %r: %s" % (version, name, r))

    def wait_topic(self, name, partitions=None, timeout=10.0):
        """Polls Metadata until the topic exists with every partition led by a
        broker (and with `partitions` partitions if given); returns the
        topic entry. Raises ProtocolError on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            t = self.topic_metadata(name)
            ok = (t["error_code"] == ERR_NONE and t["partitions"]
                  and all(p["error_code"] == ERR_NONE and p["leader_id"] >= 0
                          for p in t["partitions"])
                  and (partitions is None or len(t["partitions"]) == partitions))
            if ok:
                return t
            if time.monotonic() >= deadline:
                raise ProtocolError("topic %r not ready within %.1f s: %s" % (name, timeout, t))
            time.sleep(0.02)

    def fetch_all(self, topic, partition, offset=0, end=None, version=12,
                  max_bytes=1 << 20, timeout=10.0):
        """Fetches from `offset` until `end` (default: the high watermark seen
        by the first answer); returns (batches, last partition answer).
        Every batch is whole; a batch is returned once even if it began
        before `offset`."""
        deadline = time.monotonic() + timeout
        batches = []
        pos = offset
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise FrameTimeout("fetch_all %s-%d stuck at %d (end %s)"
                                   % (topic, partition, pos, end))
            p = self.fetch(topic, partition, pos, version=version, max_wait_ms=0,
                           partition_max_bytes=max_bytes, timeout=left)
            if p["error_code"] != ERR_NONE:
                return batches, p
            if end is None:
                end = p["high_watermark"]
            for b in p["batches"]:
                if b["last_offset"] >= pos:
                    batches.append(b)
                    pos = b["last_offset"] + 1
            if pos >= end or not p["batches"]:
                return batches, p


def connect(host, port, timeout=5.0, client_id="kwire"):
    return Conn(host, port, timeout, client_id)


# --------------------------------------------------------------------------
# Idempotence and transactions (issue 5): InitProducerId v0-v5,
# DescribeProducers v0, and helpers for idempotent batches
# --------------------------------------------------------------------------

API_INIT_PRODUCER_ID = 22
API_DESCRIBE_PRODUCERS = 61
FLEXIBLE_FROM.update({API_INIT_PRODUCER_ID: 2, API_DESCRIBE_PRODUCERS: 0})
API_NAMES.update({API_INIT_PRODUCER_ID: "INIT_PRODUCER_ID",
                  API_DESCRIBE_PRODUCERS: "DESCRIBE_PRODUCERS"})

ERR_OUT_OF_ORDER_SEQUENCE_NUMBER = 45
ERR_INVALID_PRODUCER_EPOCH = 47
ERR_INVALID_TXN_STATE = 48
ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
ERR_COORDINATOR_NOT_AVAILABLE = 15
ERR_INVALID_REQUEST = 42
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20


def encode_init_producer_id_request(version, transactional_id=None,
                                    transaction_timeout_ms=60000,
                                    producer_id=-1, producer_epoch=-1):
    flex = version >= 2
    w = Writer().string(transactional_id, flexible=flex).i32(transaction_timeout_ms)
    if version >= 3:
        w.i64(producer_id).i16(producer_epoch)
    if flex:
        w.tags()
    return w.bytes()


def decode_init_producer_id_response(payload, version):
    corr, r = decode_response_header(payload, API_INIT_PRODUCER_ID, version)
    out = {"correlation_id": corr, "throttle_time_ms": r.i32(),
           "error_code": r.i16(), "producer_id": r.i64(),
           "producer_epoch": r.i16()}
    if version >= 2:
        r.tags()
    r.done("InitProducerId v%d response" % version)
    return out


def encode_describe_producers_request(topics):
    """topics: [(name, [partition])] (v0, flexible)."""
    w = Writer()

    def topic(ww, t):
        ww.string(t[0], flexible=True)
        ww.array(t[1], lambda w3, p: w3.i32(p), flexible=True)
        ww.tags()
    w.array(topics, topic, flexible=True)
    w.tags()
    return w.bytes()


def decode_describe_producers_response(payload, version):
    corr, r = decode_response_header(payload, API_DESCRIBE_PRODUCERS, version)

    def prod(rr):
        p = {"producer_id": rr.i64(), "producer_epoch": rr.i32(),
             "last_sequence": rr.i32(), "last_timestamp": rr.i64(),
             "coordinator_epoch": rr.i32(), "current_txn_start_offset": rr.i64()}
        rr.tags()
        return p

    def part(rr):
        p = {"partition": rr.i32(), "error_code": rr.i16(),
             "error_message": rr.string(flexible=True, nullable=True),
             "active_producers": rr.array(prod, flexible=True)}
        rr.tags()
        return p

    def topic(rr):
        t = {"name": rr.string(flexible=True), "partitions": rr.array(part, flexible=True)}
        rr.tags()
        return t
    out = {"correlation_id": corr, "throttle_time_ms": r.i32(),
           "topics": r.array(topic, flexible=True)}
    r.tags()
    r.done("DescribeProducers v0 response")
    return out


DECODERS.update({
    API_INIT_PRODUCER_ID: decode_init_producer_id_response,
    API_DESCRIBE_PRODUCERS: decode_describe_producers_response,
})


def init_producer_id(conn, version=4, **kw):
    """One InitProducerId round trip on a Conn; returns the decoded answer."""
    return conn.request(API_INIT_PRODUCER_ID, version,
                        encode_init_producer_id_request(version, **kw))


def describe_producers(conn, topic, partitions=(0,)):
    """DescribeProducers v0 for one topic; returns its partitions' answers."""
    r = conn.request(API_DESCRIBE_PRODUCERS, 0,
                     encode_describe_producers_request([(topic, list(partitions))]))
    return r["topics"][0]["partitions"]


def idempotent_batch(values, producer_id, producer_epoch, base_sequence,
                     transactional=False, **kw):
    """A batch of records with these values from an idempotent (or, with
    transactional, a transactional) producer."""
    return encode_batch([Record(v) for v in values], producer_id=producer_id,
                        producer_epoch=producer_epoch, base_sequence=base_sequence,
                        attributes=ATTR_TRANSACTIONAL if transactional else 0, **kw)

# SASL (SaslHandshake key 17 is never flexible; SaslAuthenticate from v2).
API_SASL_HANDSHAKE = 17
API_SASL_AUTHENTICATE = 36
FLEXIBLE_FROM.update({API_SASL_AUTHENTICATE: 2})
