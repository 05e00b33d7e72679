#!/usr/bin/env python3
"""
tests/unit/proto/golden_capture.py - capture real clients' first requests.

Starts a tiny Kafka impostor on 127.0.0.1 (a free port), points each client
at it (kcat, kafka-python, kafkajs, confluent-kafka-python), answers their
ApiVersions request with "ApiVersions 0-3, Metadata 0-12" so that they go on
to send a Metadata request, and records every request frame (without its
4-byte size).  It then writes:

    tests/unit/proto/golden.h          the frames as C arrays (unit tests)
    tests/fuzz/corpus/<target>/<name>  seed corpora for the fuzz targets

Run by hand when a client changes; the outputs are committed:
    /usr/bin/python3 tests/unit/proto/golden_capture.py
Loopback only.  Needs kcat, node (tests/integration/js), python3-kafka and
python3-confluent-kafka (scripts/deps.sh installs them).
"""

import os
import socket
import struct
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..',
                                    '..'))
API_NAMES = {18: 'ApiVersions', 3: 'Metadata', 60: 'DescribeCluster'}
ADVERTISED = [(18, 0, 3), (3, 0, 12)]


def uvarint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def api_versions_response(corr, version):
    """ApiVersions response (header v0) in the version the client asked."""
    body = struct.pack('>h', 0)
    if version >= 3:
        body += uvarint(len(ADVERTISED) + 1)
        for k, lo, hi in ADVERTISED:
            body += struct.pack('>hhh', k, lo, hi) + b'\x00'
        body += struct.pack('>i', 0) + b'\x00'
    else:
        body += struct.pack('>i', len(ADVERTISED))
        for k, lo, hi in ADVERTISED:
            body += struct.pack('>hhh', k, lo, hi)
        if version >= 1:
            body += struct.pack('>i', 0)
    msg = struct.pack('>i', corr) + body
    return struct.pack('>i', len(msg)) + msg


def kstr(s, flexible):
    b = s.encode()
    return (uvarint(len(b) + 1) if flexible else struct.pack('>h', len(b))) + b


def karray_len(n, flexible):
    return uvarint(n + 1) if flexible else struct.pack('>i', n)


def metadata_response(corr, version, port):
    """Metadata response: this impostor as broker 1, controller, no topics."""
    flex = version >= 9
    body = struct.pack('>i', 0) if version >= 3 else b''
    body += karray_len(1, flex) + struct.pack('>i', 1)
    body += kstr('127.0.0.1', flex) + struct.pack('>i', port)
    if version >= 1:
        body += b'\x00' if flex else struct.pack('>h', -1)     # rack null
    body += b'\x00' if flex else b''
    if version >= 2:
        body += kstr('samsa-golden', flex)
    if version >= 1:
        body += struct.pack('>i', 1)
    body += karray_len(0, flex)
    if 8 <= version <= 10:
        body += struct.pack('>i', -2**31)
    body += b'\x00' if flex else b''
    hdr = struct.pack('>i', corr) + (b'\x00' if flex else b'')
    return struct.pack('>i', len(hdr + body)) + hdr + body


class Impostor:
    """Accepts connections, records request frames, answers ApiVersions."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.frames = []
        self.lock = threading.Lock()
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def accept_loop(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,),
                             daemon=True).start()

    @staticmethod
    def read_exact(conn, n):
        buf = b''
        while len(buf) < n:
            chunk = conn.recv(n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return buf

    def serve(self, conn):
        try:
            while True:
                size = struct.unpack('>i', self.read_exact(conn, 4))[0]
                frame = self.read_exact(conn, size)
                key, ver, corr = struct.unpack('>hhi', frame[:8])
                with self.lock:
                    self.frames.append(frame)
                if key == 18:
                    conn.sendall(api_versions_response(corr, ver))
                elif key == 3:
                    conn.sendall(metadata_response(corr, ver, self.port))
        except (EOFError, OSError):
            pass
        finally:
            conn.close()

    def take(self):
        with self.lock:
            frames, self.frames = self.frames, []
        return frames


KAFKA_PYTHON = '''
import sys
from kafka import KafkaAdminClient
try:
    a = KafkaAdminClient(bootstrap_servers=sys.argv[1],
                         client_id="samsa-golden", request_timeout_ms=3000,
                         api_version_auto_timeout_ms=3000)
    a.describe_topics(["samsa-golden"])
except Exception as e:
    print(e)
'''

CONFLUENT = '''
import sys
from confluent_kafka.admin import AdminClient
try:
    AdminClient({"bootstrap.servers": sys.argv[1],
                 "client.id": "samsa-golden"}).list_topics(
        topic="samsa-golden", timeout=3)
except Exception as e:
    print(e)
'''

KAFKAJS = '''
const { Kafka, logLevel } = require('kafkajs');
const kafka = new Kafka({ brokers: [process.argv[1]], clientId: 'samsa-golden',
                          logLevel: logLevel.NOTHING, retry: { retries: 0 },
                          requestTimeout: 3000 });
const admin = kafka.admin();
admin.connect()
  .then(() => admin.fetchTopicMetadata({ topics: ['samsa-golden'] }))
  .catch(e => console.log(String(e))).finally(() => process.exit(0));
'''


def clients(addr):
    js = os.path.join(ROOT, 'tests', 'integration', 'js')
    return [
        ('kcat', ['kcat', '-b', addr, '-L', '-m', '3', '-t', 'samsa-golden'],
         None),
        ('kafka_python', ['/usr/bin/python3', '-c', KAFKA_PYTHON, addr],
         None),
        ('confluent', ['/usr/bin/python3', '-c', CONFLUENT, addr], None),
        ('kafkajs', ['node', '-e', KAFKAJS, addr], js),
    ]


def capture():
    imp = Impostor()
    addr = '127.0.0.1:%d' % imp.port
    out = {}
    for name, cmd, cwd in clients(addr):
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(4)
        proc.kill()
        proc.wait()
        time.sleep(0.2)
        out[name] = unique_requests(imp.take())
        print('%s: %s' % (name, ', '.join(describe(f) for f in out[name])),
              file=sys.stderr)
    return out


def unique_requests(frames):
    """Frames with distinct (ApiKey, ApiVersion, body), in arrival order."""
    seen, keep = set(), []
    for f in frames:
        kvb = (f[:4], f[header_len(f):])
        if kvb not in seen:
            seen.add(kvb)
            keep.append(f)
    return keep


def describe(frame):
    key, ver = struct.unpack('>hh', frame[:4])
    return '%s v%d' % (API_NAMES.get(key, 'key%d' % key), ver)


def header_len(frame):
    """Bytes of the request header (v1 or v2) at the start of frame."""
    key, ver = struct.unpack('>hh', frame[:4])
    n = 8
    cid = struct.unpack('>h', frame[n:n + 2])[0]
    n += 2 + max(cid, 0)
    flexible = (key == 18 and ver >= 3) or (key == 3 and ver >= 9) or \
        key == 60
    if flexible:
        n += 1                          # empty tagged fields (checked in C)
    return n


def c_array(name, data, note):
    lines = ['/* %s */' % note,
             'static const uint8_t  %s[] = {' % name]
    for i in range(0, len(data), 12):
        chunk = data[i:i + 12]
        lines.append('    ' + ', '.join('0x%02x' % b for b in chunk) + ',')
    lines.append('};')
    return lines


def write_outputs(captured):
    hdr = [
        '/*',
        ' * tests/unit/proto/golden.h - request frames real clients sent to '
        'a',
        ' * loopback impostor (no 4-byte size prefix), written by',
        ' * tests/unit/proto/golden_capture.py; regenerate, do not edit.',
        ' * GOLDEN_<client>_<Api>_v<N>: the whole request (header + body);',
        ' * GOLDEN_..._HDR_LEN: where its body starts.',
        ' */',
        '#ifndef SAMSA_TESTS_UNIT_PROTO_GOLDEN_H',
        '#define SAMSA_TESTS_UNIT_PROTO_GOLDEN_H', '',
        '#include <stdint.h>', '',
    ]
    corpus = os.path.join(ROOT, 'tests', 'fuzz', 'corpus')
    for client, frames in captured.items():
        names = set()
        for f in frames:
            key, ver = struct.unpack('>hh', f[:4])
            api = API_NAMES.get(key)
            if api is None:
                continue
            name = 'GOLDEN_%s_%s_v%d' % (client, api, ver)
            k = 1
            while name in names:
                k += 1
                name = 'GOLDEN_%s_%s_v%d_%d' % (client, api, ver, k)
            names.add(name)
            hl = header_len(f)
            hdr += c_array(name, f, '%s: %s' % (client, describe(f)))
            hdr += ['#define %s_HDR_LEN %d' % (name, hl), '']
            save(os.path.join(corpus, 'fuzz_reqhdr', name.lower()), f)
            save(os.path.join(corpus, 'fuzz_%sRequest' % api, name.lower()),
                 struct.pack('>h', ver) + f[hl:])
    hdr += ['#endif /* SAMSA_TESTS_UNIT_PROTO_GOLDEN_H */']
    with open(os.path.join(ROOT, 'tests', 'unit', 'proto', 'golden.h'),
              'w') as fh:
        fh.write('\n'.join(hdr) + '\n')


def save(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as fh:
        fh.write(data)


def handmade():
    """Requests no client here sends, assembled from Kafka's definitions:
    DescribeCluster v0 (IncludeClusterAuthorizedOperations) and v1 (plus
    EndpointType 1), header v2."""
    frames = []
    for ver, body in ((0, b'\x01\x00'), (1, b'\x00\x01\x00')):
        hdr = struct.pack('>hhi', 60, ver, 1) + kstr('samsa-golden', False)
        frames.append(hdr + b'\x00' + body)
    return frames


if __name__ == '__main__':
    captured = capture()
    captured['handmade'] = handmade()
    write_outputs(captured)
