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
ERR_UNSUPPORTED_VERSION = 35


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
                                    endpoint_type=1):
    w = Writer().boolean(include_cluster_authorized_operations)
    if version >= 1:
        w.i8(endpoint_type)             # 1 = brokers, 2 = controllers
    if version >= 2:
        w.boolean(False)                # IncludeFencedBrokers
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
        r, _, _ = select.select([self.sock], [], [], left)
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


def connect(host, port, timeout=5.0, client_id="kwire"):
    return Conn(host, port, timeout, client_id)
