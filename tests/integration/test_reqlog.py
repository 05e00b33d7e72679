"""The request log (request.log.enable=true): one JSON line per completed
request, with Kafka's request-logger fields and the seed's timings."""

import json
import os
import re
import socket
import struct
import subprocess
import time

import kwire
import samsa_harness
from samsa_harness import HOST, T, timeout_scale

TIMES = ("totalTimeMs", "requestQueueTimeMs", "localTimeMs", "remoteTimeMs",
         "throttleTimeMs", "responseQueueTimeMs", "sendTimeMs")
PARTS = ("requestQueueTimeMs", "localTimeMs", "remoteTimeMs", "responseQueueTimeMs",
         "sendTimeMs")


def read_log(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    if lines and lines[-1] != "":
        lines = lines[:-1]          # a line still being written
    out = []
    for line in lines:
        if line.strip():
            out.append(json.loads(line))
    return out


def wait_lines(path, pred, timeout):
    ok = samsa_harness.wait_until(lambda: pred(read_log(path)), timeout, 0.05)
    lines = read_log(path)
    assert ok, "request log %s never matched; it has:\n%s" % (
        path, "\n".join(json.dumps(x) for x in lines[-20:]))
    return lines


def check_line(line, server):
    h = line["requestHeader"]
    for k in ("requestApiKey", "requestApiVersion", "correlationId", "clientId",
              "requestApiKeyName"):
        assert k in h, "requestHeader lacks %s: %s" % (k, line)
    assert h["requestApiKeyName"] == kwire.API_NAMES.get(h["requestApiKey"], h["requestApiKeyName"])
    m = re.fullmatch(r"(\d+\.\d+\.\d+\.\d+):(\d+)-(\d+\.\d+\.\d+\.\d+):(\d+)-(\d+)-(\d+)",
                     line["connection"])
    assert m, "connection id %r" % line["connection"]
    assert (m.group(1), int(m.group(2))) == (HOST, server.port), line["connection"]
    assert m.group(3) == HOST
    assert line["listener"] == "PLAINTEXT"
    assert line["securityProtocol"] == "PLAINTEXT"
    assert line["principal"] == "User:ANONYMOUS"
    ci = line["clientInformation"]
    assert set(ci) >= {"softwareName", "softwareVersion"}
    for k in TIMES:
        assert isinstance(line[k], (int, float)) and not isinstance(line[k], bool), (k, line)
        assert line[k] >= 0, (k, line)
    total = line["totalTimeMs"]
    parts = sum(line[k] for k in PARTS)
    assert abs(total - parts) <= 0.5 + 0.05 * total, \
        "totalTimeMs %.3f but the parts sum to %.3f: %s" % (total, parts, line)
    return m


def test_request_log_after_kcat(samsa, tmp_path):
    path = str(tmp_path / "req.log")
    srv = samsa.start({"request.log.enable": "true", "request.log.file": path})
    r = subprocess.run(["kcat", "-b", srv.bootstrap(), "-L", "-m", str(int(T(10)))],
                       capture_output=True, text=True, timeout=T(30))
    assert r.returncode == 0, r.stderr

    def kcat_lines(lines):
        return [x for x in lines if x["requestHeader"]["clientId"] == "rdkafka"]

    def complete(lines):
        names = [x["requestHeader"]["requestApiKeyName"] for x in kcat_lines(lines)]
        return "API_VERSIONS" in names and "METADATA" in names
    lines = kcat_lines(wait_lines(path, complete, T(5)))
    for line in lines:
        check_line(line, srv)
    av = [x for x in lines if x["requestHeader"]["requestApiKeyName"] == "API_VERSIONS"]
    md = [x for x in lines if x["requestHeader"]["requestApiKeyName"] == "METADATA"]
    # librdkafka 2.0.2 opens with ApiVersions v3 naming itself
    assert av[0]["requestHeader"]["requestApiKey"] == 18
    assert av[0]["requestHeader"]["requestApiVersion"] == 3
    # the ApiVersions request itself is logged before its names are known
    assert av[0]["clientInformation"] == {"softwareName": "unknown", "softwareVersion": "unknown"}
    same = [x for x in md if x["connection"] == av[0]["connection"]]
    assert same, "no METADATA on ApiVersions' connection %s: %s" % (
        av[0]["connection"], [x["connection"] for x in md])
    assert same[0]["requestHeader"]["requestApiKey"] == 3
    assert same[0]["clientInformation"]["softwareName"] == "librdkafka"
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", same[0]["clientInformation"]["softwareVersion"]), \
        same[0]["clientInformation"]
    # correlation ids increase on the connection
    corrs = [x["requestHeader"]["correlationId"] for x in lines
             if x["connection"] == av[0]["connection"]]
    assert corrs == sorted(corrs)


def test_request_log_raw_requests(samsa, tmp_path):
    path = str(tmp_path / "raw.log")
    srv = samsa.start({"request.log.enable": "true", "request.log.file": path})
    with srv.connect(client_id="raw-client") as c:
        c.api_versions(0)
        c.metadata(9, None)
        c.api_versions(4, software_name="samsa-it", software_version="9.9")
        c.metadata(12, None)

    def mine(lines):
        return [x for x in lines if x["requestHeader"]["clientId"] == "raw-client"]
    lines = mine(wait_lines(path, lambda ls: len(mine(ls)) >= 4, T(5)))
    assert [(x["requestHeader"]["requestApiKeyName"], x["requestHeader"]["requestApiVersion"])
            for x in lines] == [("API_VERSIONS", 0), ("METADATA", 9),
                                ("API_VERSIONS", 4), ("METADATA", 12)]
    assert len({x["connection"] for x in lines}) == 1
    for x in lines:
        check_line(x, srv)
    info = [x["clientInformation"]["softwareName"] for x in lines]
    assert info == ["unknown", "unknown", "unknown", "samsa-it"]
    assert lines[3]["clientInformation"]["softwareVersion"] == "9.9"
    assert [x["requestHeader"]["correlationId"] for x in lines] == [1, 2, 3, 4]


def test_request_log_local_time_counts_handler_delay(samsa, tmp_path):
    path = str(tmp_path / "delay.log")
    srv = samsa.start({"request.log.enable": "true", "request.log.file": path},
                      env={"SAMSA_TEST_HANDLER_DELAY_MS": 200,
                           "SAMSA_TEST_HANDLER_DELAY_API": kwire.API_METADATA})
    with srv.connect(client_id="slow-client") as c:
        c.metadata(1, None, timeout=T(5))

    def mine(lines):
        return [x for x in lines if x["requestHeader"]["clientId"] == "slow-client"]
    line = mine(wait_lines(path, lambda ls: mine(ls), T(5)))[0]
    check_line(line, srv)
    assert line["localTimeMs"] >= 199.0, line
    assert line["totalTimeMs"] >= line["localTimeMs"], line


def test_request_log_queue_time_counts_waiting_for_a_handler(samsa, tmp_path):
    # One handler; Metadata takes DELAY in it. A sends one, B one a moment
    # later: B's request waits in the request queue until A's is done, and
    # that wait is B's requestQueueTimeMs (not its localTimeMs, which is
    # its own DELAY).
    delay_ms = int(400 * timeout_scale())
    path = str(tmp_path / "queue.log")
    srv = samsa.start({"request.log.enable": "true", "request.log.file": path,
                       "num.io.threads": 1},
                      env={"SAMSA_TEST_HANDLER_DELAY_MS": delay_ms,
                           "SAMSA_TEST_HANDLER_DELAY_API": kwire.API_METADATA})
    with srv.connect(client_id="queue-a") as a, srv.connect(client_id="queue-b") as b:
        a.api_versions(0)
        b.api_versions(0)
        ta = time.monotonic()
        a.send(kwire.metadata_request(1, 11, None, "queue-a"))
        time.sleep(0.05)
        tb = time.monotonic()
        b.send(kwire.metadata_request(1, 12, None, "queue-b"))
        a.recv_frame(T(5) + 2 * delay_ms / 1000)
        b.recv_frame(T(5) + 2 * delay_ms / 1000)
    gap_ms = (tb - ta) * 1000

    def mine(lines):
        return {x["requestHeader"]["clientId"]: x for x in lines
                if x["requestHeader"]["clientId"] in ("queue-a", "queue-b")
                and x["requestHeader"]["requestApiKeyName"] == "METADATA"}
    lines = mine(wait_lines(path, lambda ls: len(mine(ls)) == 2, T(5)))
    la, lb = lines["queue-a"], lines["queue-b"]
    check_line(la, srv)
    check_line(lb, srv)
    assert la["requestQueueTimeMs"] < delay_ms / 2, la
    assert la["localTimeMs"] >= delay_ms - 1, la
    # B waited out the rest of A's delay in the queue: >= DELAY less the
    # gap between the two sends (and 20 ms of slack for the clocks' reads)
    assert lb["requestQueueTimeMs"] >= delay_ms - gap_ms - 20, \
        "B's requestQueueTimeMs %.3f, A's delay %d ms, B sent %.1f ms after A: %s" % (
            lb["requestQueueTimeMs"], delay_ms, gap_ms, lb)
    assert lb["localTimeMs"] >= delay_ms - 1, lb
    assert lb["localTimeMs"] < delay_ms * 1.5 + 100, lb


def test_request_log_send_time_counts_a_slow_reader(samsa, tmp_path):
    # A Fetch answer of about 1 MB to a client that reads nothing for PAUSE
    # (small receive buffer; small socket.send.buffer.bytes on the broker):
    # the network thread cannot finish writing it before the client reads,
    # and that time is the request's sendTimeMs.
    pause = 1.0 * timeout_scale()
    path = str(tmp_path / "send.log")
    srv = samsa.start({"request.log.enable": "true", "request.log.file": path,
                       "socket.send.buffer.bytes": 4096})
    topic = "reqlog-slow-%d" % os.getpid()
    with srv.connect(client_id="slow-setup", timeout=T(10)) as c:
        r = c.create_topic(topic, 1, timeout=T(10))
        assert r["error_code"] == 0, r
        c.wait_topic(topic, 1, timeout=T(10))
        for i in range(4):
            recs = [kwire.Record(b"%d-%d-" % (i, j) + b"v" * 5000) for j in range(50)]
            p = c.produce(topic, 0, kwire.encode_batch(recs), timeout=T(10))
            assert p["error_code"] == 0, p
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(T(10))
        s.connect((HOST, srv.port))
        s.sendall(kwire.fetch_request(12, 7, [(topic, [(0, 0, 1 << 24)])], "slow-reader",
                                      max_wait_ms=0, max_bytes=1 << 24))
        time.sleep(pause)
        buf = b""
        while len(buf) < 4 or len(buf) < 4 + struct.unpack(">i", buf[:4])[0]:
            chunk = s.recv(1 << 16)
            assert chunk, "connection closed after %d bytes" % len(buf)
            buf += chunk
    finally:
        s.close()
    assert kwire.peek_correlation_id(buf[4:]) == 7
    assert len(buf) > 1000000, len(buf)

    def mine(lines):
        return [x for x in lines if x["requestHeader"]["clientId"] == "slow-reader"]
    line = mine(wait_lines(path, lambda ls: mine(ls), T(5)))[0]
    check_line(line, srv)
    assert line["requestHeader"]["requestApiKeyName"] == "FETCH"
    assert line["sendTimeMs"] >= pause * 1000 * 0.9, \
        "sendTimeMs %.3f while the client read nothing for %.0f ms: %s" % (
            line["sendTimeMs"], pause * 1000, line)
    assert line["responseQueueTimeMs"] < pause * 1000 / 2, line


def test_request_log_default_file(samsa):
    srv = samsa.start({"request.log.enable": "true"})
    with srv.connect(client_id="default-file") as c:
        c.api_versions(0)
    path = os.path.join(srv.data_dir, "samsa-request.log")
    wait_lines(path, lambda ls: any(x["requestHeader"]["clientId"] == "default-file"
                                    for x in ls), T(5))


def test_request_log_off_by_default(samsa):
    srv = samsa.start()
    with srv.connect(client_id="quiet") as c:
        c.api_versions(0)
        c.metadata(1, None)
    assert srv.stop() == []
    assert not os.path.exists(os.path.join(srv.data_dir, "samsa-request.log"))
    assert '"requestHeader"' not in srv.stderr_text()


def test_request_log_to_stderr(samsa):
    srv = samsa.start({"request.log.enable": "true", "request.log.file": "stderr"})
    with srv.connect(client_id="to-stderr") as c:
        c.api_versions(0)
    assert samsa_harness.wait_until(lambda: "to-stderr" in srv.stderr_text(), T(5)), \
        srv.stderr_tail()
    lines = [ln for ln in srv.stderr_text().splitlines() if "to-stderr" in ln]
    # one JSON object on the line (a log prefix before it is allowed)
    obj = json.loads(lines[0][lines[0].index("{"):])
    check_line(obj, srv)


def test_connections_spread_over_processors(samsa, tmp_path):
    # The acceptor hands connections round-robin to the listener's
    # num.network.threads processors; the connection id names the processor.
    path = str(tmp_path / "spread.log")
    srv = samsa.start({"request.log.enable": "true", "request.log.file": path})
    for i in range(3):
        with srv.connect(client_id="spread-%d" % i) as c:
            c.api_versions(0)

    def mine(lines):
        return [x for x in lines if x["requestHeader"]["clientId"].startswith("spread-")]
    lines = mine(wait_lines(path, lambda ls: len(mine(ls)) >= 3, T(5)))
    procs = [int(check_line(x, srv).group(5)) for x in lines]
    assert sorted(procs) == [0, 1, 2], "processors of 3 successive connections: %s" % procs
