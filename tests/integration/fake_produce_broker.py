"""A tiny in-process Kafka broker that answers ApiVersions, Metadata,
InitProducerId and Produce on 127.0.0.1, for testing libsamsa's producer
before samsa-server handles Produce (and for faults samsa-server cannot be
told to make: delays, dropped connections, restarts that keep the log).

It is a test fixture, not a reference implementation. It checks what it is
sent (record batch v2 header, CRC-32C via ISA-L, sequences per producer and
partition with the last five batches remembered, as Kafka does) and keeps
every accepted batch so that tests can decode the records.
"""

import ctypes
import socket
import struct
import threading
import time

import kwire

API_PRODUCE, API_METADATA, API_APIVERSIONS, API_INITPID = 0, 3, 18, 22
SUPPORTED = {API_PRODUCE: (3, 8), API_METADATA: (1, 12),
             API_APIVERSIONS: (0, 3), API_INITPID: (0, 1)}

_isal = ctypes.CDLL("libisal.so.2")
_isal.crc32_iscsi.restype = ctypes.c_uint32
_isal.crc32_iscsi.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint32]


def crc32c(data):
    return (~_isal.crc32_iscsi(data, len(data), 0xFFFFFFFF)) & 0xFFFFFFFF


def zigzag(r):
    """Read one zigzag varint from kwire.Reader r."""
    shift, v = 0, 0
    while True:
        b = r.i8() & 0xFF
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    return (v >> 1) ^ -(v & 1)


_snappy = ctypes.CDLL("libsnappy.so.1")


def _snappy_raw(block):
    n = ctypes.c_size_t()
    if _snappy.snappy_uncompressed_length(block, ctypes.c_size_t(len(block)),
                                          ctypes.byref(n)) != 0:
        raise ValueError("bad snappy block")
    out = ctypes.create_string_buffer(n.value)
    if _snappy.snappy_uncompress(block, ctypes.c_size_t(len(block)), out,
                                 ctypes.byref(n)) != 0:
        raise ValueError("bad snappy block")
    return out.raw[:n.value]


def decompress(codec, data):
    import subprocess
    import zlib
    if codec == 0:
        return data
    if codec == 1:
        return zlib.decompress(data, 15 + 32)
    if codec == 2:
        if data[:8] == b"\x82SNAPPY\x00":
            out, pos = b"", 16
            while pos < len(data):
                n = struct.unpack(">i", data[pos:pos + 4])[0]
                out += _snappy_raw(data[pos + 4:pos + 4 + n])
                pos += 4 + n
            return out
        return _snappy_raw(data)
    tool = {3: ["lz4", "-dc"], 4: ["zstd", "-dc"]}[codec]
    return subprocess.run(tool, input=data, stdout=subprocess.PIPE,
                          check=True).stdout


def decode_batch(batch):
    """-> dict of header fields and 'records': [(key, value, headers, ts)]."""
    r = kwire.Reader(batch)
    h = {"base_offset": r.i64(), "length": r.i32(), "ple": r.i32(),
         "magic": r.i8(), "crc": r.i32() & 0xFFFFFFFF, "attributes": r.i16(),
         "last_offset_delta": r.i32(), "base_ts": r.i64(), "max_ts": r.i64(),
         "producer_id": r.i64(), "producer_epoch": r.i16(),
         "base_sequence": r.i32(), "count": r.i32()}
    body = decompress(h["attributes"] & 7, batch[61:])
    rr = kwire.Reader(body)
    recs = []
    for _ in range(h["count"]):
        zigzag(rr)                              # length
        rr.i8()                                 # attributes
        ts = h["base_ts"] + zigzag(rr)
        zigzag(rr)                              # offset delta
        n = zigzag(rr)
        key = None if n < 0 else rr._take(n)
        n = zigzag(rr)
        value = None if n < 0 else rr._take(n)
        hdrs = []
        for _ in range(zigzag(rr)):
            hk = rr._take(zigzag(rr)).decode()
            n = zigzag(rr)
            hdrs.append((hk, None if n < 0 else rr._take(n)))
        recs.append((key, value, hdrs, ts))
    h["records"] = recs
    return h


class FakeBroker:
    """FakeBroker(topics={"t": 3}).start() -> .port; .stop(); .restart().
    apis: the API versions it advertises (SUPPORTED by default; without
    API_INITPID it answers as a broker that predates idempotence)."""

    def __init__(self, topics, node_id=1, port=0, apis=None):
        self.topics = dict(topics)
        self.apis = dict(SUPPORTED if apis is None else apis)
        self.node_id = node_id
        self.port = port
        self.lock = threading.Lock()
        self.logs = {}                  # (topic, partition) -> [(off, batch)]
        self.pstate = {}                # (pid, topic, part) -> state
        self.next_pid = 1000
        self.response_delay = 0.0       # seconds before each Produce answer
        self.hold_produce = False       # never answer Produce
        self.fail_next = []             # error codes for the next batches
        self.fail_at = {}               # (topic, part, n) -> error code for
                                        # the n-th batch (from 1) of it
        self.arrived = {}               # (topic, part) -> batches seen
        self.requests = []              # (api, version) seen
        self.sock = None
        self.conns = []
        self.running = False
        self.duplicates = 0

    # -- lifecycle --------------------------------------------------------
    def start(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", self.port))
        self.port = self.sock.getsockname()[1]
        self.sock.listen(16)
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self):
        self.running = False
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.drop_connections()

    def restart(self, down_s=0.5):
        """Go away (connections dropped, port closed) and come back on the
        same port with the same log and producer state."""
        self.stop()
        time.sleep(down_s)
        self.start()

    def drop_connections(self):
        with self.lock:
            conns, self.conns = self.conns, []
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()

    @property
    def bootstrap(self):
        return "127.0.0.1:%d" % self.port

    # -- reading back -----------------------------------------------------
    def records(self, topic, partition):
        with self.lock:
            batches = list(self.logs.get((topic, partition), []))
        out = []
        for off, b in batches:
            h = decode_batch(b)
            for i, rec in enumerate(h["records"]):
                out.append((off + i,) + rec)
        return out

    def batches(self, topic, partition):
        with self.lock:
            return [decode_batch(b) for _, b in
                    self.logs.get((topic, partition), [])]

    # -- serving ----------------------------------------------------------
    def _accept(self):
        while self.running:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.conns.append(c)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _recv(self, c, n):
        buf = b""
        while len(buf) < n:
            d = c.recv(n - len(buf))
            if not d:
                raise kwire.ConnectionClosed()
            buf += d
        return buf

    def _serve(self, c):
        try:
            while True:
                size = struct.unpack(">i", self._recv(c, 4))[0]
                payload = self._recv(c, size)
                h, r = kwire.decode_request_header(payload)
                api, ver = h["api_key"], h["api_version"]
                with self.lock:
                    self.requests.append((api, ver))
                out = self._handle(api, ver, r)
                if out is not None:
                    c.sendall(kwire.encode_response(api, ver,
                                                    h["correlation_id"], out))
        except (OSError, kwire.ConnectionClosed, kwire.ProtocolError):
            pass
        finally:
            c.close()

    def _handle(self, api, ver, r):
        if api == API_APIVERSIONS:
            if ver > 3:
                return kwire.encode_api_versions_response(0, self.apis, 35)
            return kwire.encode_api_versions_response(ver, self.apis)
        if api == API_METADATA:
            req = kwire.decode_metadata_request(r, ver)
            names = req["topics"] if req["topics"] is not None else list(self.topics)
            ts = []
            for t in names:
                name = t["name"] if isinstance(t, dict) else t
                if name in self.topics:
                    ts.append({"name": name, "partitions": [
                        {"partition_index": p, "leader_id": self.node_id,
                         "replica_nodes": [self.node_id],
                         "isr_nodes": [self.node_id]}
                        for p in range(self.topics[name])]})
                else:
                    ts.append({"name": name, "error_code": 3})
            return kwire.encode_metadata_response(
                ver, [{"node_id": self.node_id, "host": "127.0.0.1",
                       "port": self.port}], "fake", self.node_id, ts)
        if api == API_INITPID:
            r.string(nullable=True)
            r.i32()
            with self.lock:
                pid, self.next_pid = self.next_pid, self.next_pid + 1
            return kwire.Writer().i32(0).i16(0).i64(pid).i16(0).bytes()
        if api == API_PRODUCE:
            return self._produce(ver, r)
        raise kwire.ProtocolError("unexpected api %d" % api)

    def _append(self, topic, part, batch):
        """-> (error_code, base_offset)."""
        if topic not in self.topics or not 0 <= part < self.topics[topic]:
            return 3, -1
        if len(batch) < 61 or batch[16] != 2:
            return 2, -1
        if crc32c(batch[21:]) != struct.unpack(">I", batch[17:21])[0]:
            return 2, -1
        if self.fail_next:
            return self.fail_next.pop(0), -1
        nth = self.arrived.get((topic, part), 0) + 1
        self.arrived[(topic, part)] = nth
        if (topic, part, nth) in self.fail_at:
            return self.fail_at.pop((topic, part, nth)), -1
        count = struct.unpack(">i", batch[57:61])[0]
        pid, epoch, seq = struct.unpack(">qhi", batch[43:57])
        log = self.logs.setdefault((topic, part), [])
        if pid >= 0:
            st = self.pstate.setdefault((pid, topic, part),
                                        {"epoch": epoch, "next": 0, "last": []})
            if epoch != st["epoch"]:
                if epoch < st["epoch"]:
                    return 47, -1               # INVALID_PRODUCER_EPOCH
                st.update(epoch=epoch, next=0, last=[])
                if seq != 0:
                    return 45, -1
            for s, off in st["last"]:
                if s == seq:
                    self.duplicates += 1
                    return 0, off               # duplicate: original offset
            if seq != st["next"]:
                return 45, -1                   # OUT_OF_ORDER_SEQUENCE_NUMBER
        base = sum(struct.unpack(">i", b[57:61])[0] for _, b in log)
        log.append((base, bytes(struct.pack(">q", base) + batch[8:])))
        if pid >= 0:
            st["next"] = seq + count
            st["last"] = (st["last"] + [(seq, base)])[-5:]
        return 0, base

    def _produce(self, ver, r):
        r.string(nullable=True)                 # transactional id
        acks = r.i16()
        r.i32()
        results = []
        for _ in range(r.i32()):
            topic = r.string()
            parts = []
            for _ in range(r.i32()):
                idx = r.i32()
                n = r.i32()
                batch = r._take(n) if n >= 0 else b""
                with self.lock:
                    err, off = self._append(topic, idx, batch)
                parts.append((idx, err, off))
            results.append((topic, parts))
        if acks == 0:
            return None
        if self.hold_produce:
            time.sleep(3600)
        if self.response_delay:
            time.sleep(self.response_delay)
        w = kwire.Writer().i32(len(results))
        for topic, parts in results:
            w.string(topic).i32(len(parts))
            for idx, err, off in parts:
                w.i32(idx).i16(err).i64(off).i64(-1)
                if ver >= 5:
                    w.i64(0)
                if ver >= 8:
                    w.i32(0).string(None)
        w.i32(0)
        return w.bytes()
