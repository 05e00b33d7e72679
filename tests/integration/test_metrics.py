"""The metrics listener (metrics.listener): /metrics parses with a strict
Prometheus text-format parser (promtext.py) and its values move as a known
load says they must; /health, /ready, /loglevel, 404/405/400 answers; the
listener disabled or on a taken port."""

import json
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

import promtext
import samsa_harness
from samsa_harness import HOST, T

RECORDS = 10000
VALUE = b"v" * 100


def http(srv, path, method="GET", body=None, headers=None):
    """(status, body text) of one request to the metrics listener."""
    req = urllib.request.Request(srv.metrics_url(path), data=body, method=method,
                                 headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=T(10)) as r:
            return r.status, r.read().decode(), r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), e.headers


def scrape(srv):
    status, text, headers = http(srv, "/metrics")
    assert status == 200, (status, text)
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4"), headers
    return promtext.parse(text)


def val(fams, name, default=None, **labels):
    try:
        return fams[name].value(**labels)
    except KeyError:
        if default is not None:
            return default
        raise AssertionError("no %s%s in the scrape; it has %s" % (
            name, labels, fams[name].samples if name in fams else "no such family"))


def total(fams, name, **labels):
    return sum(v for _, v in fams[name].find(**labels)) if name in fams else 0


# -- the parser itself must refuse what Prometheus refuses ----------------------

GOOD = """# HELP a_total A counter.
# TYPE a_total counter
a_total{x="q\\"uo\\\\te\\n"} 1
a_total{x="b"} 2.5e3
# TYPE h histogram
h_bucket{le="0.1"} 1
h_bucket{le="+Inf"} 3
h_sum 0.7
h_count 3
plain 1 1700000000000
"""

BAD = {
    "no final newline": "a 1",
    "bad name": "1a 1\n",
    "bad label name": "a{1x=\"y\"} 1\n",
    "bad escape": "a{x=\"\\t\"} 1\n",
    "unterminated value": "a{x=\"y} 1\n",
    "label twice": "a{x=\"1\",x=\"2\"} 1\n",
    "bad value": "a 1,5\n",
    "duplicate series": "a{x=\"1\"} 1\na{x=\"1\"} 2\n",
    "type twice": "# TYPE a gauge\n# TYPE a gauge\na 1\n",
    "help twice": "# HELP a x\n# HELP a y\na 1\n",
    "unknown type": "# TYPE a meter\na 1\n",
    "type after samples": "a 1\n# TYPE a gauge\n",
    "not contiguous": "# TYPE a gauge\na{x=\"1\"} 1\n# TYPE b gauge\nb 1\na{x=\"2\"} 1\n",
    "negative counter": "# TYPE a counter\na -1\n",
    "histogram without +Inf": "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",
    "histogram falling": ("# TYPE h histogram\nh_bucket{le=\"1\"} 2\n"
                          "h_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n"),
    "histogram count": ("# TYPE h histogram\nh_bucket{le=\"1\"} 1\n"
                        "h_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n"),
    "histogram no sum": "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_count 2\n",
    "histogram le order": ("# TYPE h histogram\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"1\"} 1\n"
                           "h_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n"),
    "histogram plain sample": "# TYPE h histogram\nh 1\n",
}


def test_promtext_accepts_good_exposition():
    fams = promtext.parse(GOOD)
    assert fams["a_total"].value(x='q"uo\\te\n') == 1
    assert fams["a_total"].value(x="b") == 2500
    assert fams["h"].value("h_count") == 3
    assert fams["plain"].type == "untyped"


@pytest.mark.parametrize("what", sorted(BAD))
def test_promtext_rejects(what):
    with pytest.raises(promtext.PromError):
        promtext.parse(BAD[what])


# -- endpoints ----------------------------------------------------------------------

def test_endpoints(server):
    assert http(server, "/health")[:2] == (200, "ok\n")
    assert http(server, "/ready")[:2] == (200, "ready\n")
    assert http(server, "/health?ready")[:2] == (200, "ready\n")
    status, text, headers = http(server, "/")
    assert status == 200 and "<canvas" in text and "/api/status" in text
    assert headers["Content-Type"].startswith("text/html")
    status, text, _ = http(server, "/api/status")
    doc = json.loads(text)
    assert status == 200 and doc["ready"] is True
    assert [s["server"] for s in doc["servers"]] == ["broker", "controller"]
    assert http(server, "/nope")[0] == 404
    assert http(server, "/metrics", method="POST", body=b"x")[0] == 405
    assert http(server, "/health", method="DELETE")[0] == 405
    # malformed HTTP gets a 400 from the listener, which keeps serving
    with socket.create_connection((HOST, server.metrics_port), timeout=T(5)) as s:
        s.sendall(b"GARBAGE\x00\x01 / HTTP/9.9 junk\r\n\r\n")
        answer = s.recv(200)
    assert answer.startswith(b"HTTP/1.1 400"), answer
    assert http(server, "/health")[0] == 200
    fams = scrape(server)
    assert val(fams, "samsa_ready") == 1


def test_scrape_is_well_formed_and_sane(server):
    with server.connect() as c:         # some traffic: ApiVersions, Metadata
        c.api_versions(0, timeout=T(5))
        fams = scrape(server)
    for name in ("samsa_requests_total", "samsa_request_errors_total",
                 "samsa_request_queue_time_seconds", "samsa_request_local_time_seconds",
                 "samsa_request_remote_time_seconds", "samsa_response_queue_time_seconds",
                 "samsa_response_send_time_seconds", "samsa_request_total_time_seconds",
                 "samsa_request_queue_size", "samsa_response_queue_size",
                 "samsa_network_processor_avg_idle_percent",
                 "samsa_request_handler_avg_idle_percent", "samsa_connections",
                 "samsa_connections_created_total", "samsa_under_min_isr_partitions",
                 "samsa_purgatory_size", "samsa_groups", "process_resident_memory_bytes",
                 "process_cpu_seconds_total", "process_open_fds",
                 "samsa_connection_accept_throttle_time_seconds"):
        assert name in fams and fams[name].help, name
    # no creation rate set: no accept waited
    assert fams["samsa_connection_accept_throttle_time_seconds"].value(
        "samsa_connection_accept_throttle_time_seconds_count",
        server="broker", listener="PLAINTEXT") == 0
    assert val(fams, "samsa_requests_total", server="broker", request="ApiVersions") >= 1
    assert val(fams, "samsa_connections", server="broker", listener="PLAINTEXT") >= 1
    assert val(fams, "samsa_connections_created_total", server="broker",
               listener="PLAINTEXT") >= 1
    assert len(fams["samsa_response_queue_size"].find(server="broker")) == 3
    for kind in ("broker", "controller"):
        for fam in ("samsa_network_processor_avg_idle_percent",
                    "samsa_request_handler_avg_idle_percent"):
            assert 0 <= val(fams, fam, server=kind) <= 1
    assert val(fams, "samsa_under_min_isr_partitions") == 0
    assert val(fams, "process_resident_memory_bytes") > 1 << 20
    assert val(fams, "process_open_fds") > 5


# -- values under a known load ------------------------------------------------------

def produce(srv, topic, n):
    from confluent_kafka import Producer
    reports = []
    p = Producer({"bootstrap.servers": srv.bootstrap(), "linger.ms": 5,
                  "socket.timeout.ms": int(T(10) * 1000)})
    for i in range(n):
        p.produce(topic, value=VALUE, key=b"%d" % i,
                  on_delivery=lambda err, msg: reports.append(err))
        if i % 1000 == 999:
            p.poll(0)
    assert p.flush(T(30)) == 0
    assert len(reports) == n and not any(reports), [e for e in reports if e][:3]


def consume_and_commit(srv, topic, group, n):
    from confluent_kafka import Consumer
    c = Consumer({"bootstrap.servers": srv.bootstrap(), "group.id": group,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False,
                  "fetch.wait.max.ms": 50, "socket.timeout.ms": int(T(10) * 1000)})
    try:
        c.subscribe([topic])
        got = 0
        deadline = time.monotonic() + T(30)
        while got < n:
            assert time.monotonic() < deadline, "consumed %d of %d" % (got, n)
            msgs = c.consume(1000, 0.5)
            got += sum(1 for m in msgs if not m.error())
        c.commit(asynchronous=False)
    finally:
        c.close()


def test_values_move_under_load(server):
    from confluent_kafka.admin import AdminClient, NewTopic
    topic = "metrics-load"
    admin = AdminClient({"bootstrap.servers": server.bootstrap()})
    admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)],
                        operation_timeout=T(10))[topic].result(timeout=T(20))
    with server.connect(timeout=T(5)) as c:
        c.wait_topic(topic, 3, timeout=T(10))
    before = scrape(server)
    assert val(before, "samsa_topic_messages_in_total", topic=topic) == 0
    # scrape while the load runs (the metrics thread reads what the network
    # and handler threads write: the sanitizer builds check it); the counter
    # only grows
    seen, problems, stop = [], [], threading.Event()

    def scraper():
        try:
            while not stop.is_set():
                seen.append(val(scrape(server), "samsa_topic_messages_in_total",
                                topic=topic))
                json.loads(http(server, "/api/status")[1])
        except Exception as e:          # reported below, not lost
            problems.append(repr(e))
    t = threading.Thread(target=scraper)
    t.start()
    try:
        produce(server, topic, RECORDS)
    finally:
        stop.set()
        t.join(T(30))
    assert not problems, problems
    assert len(seen) >= 1 and seen == sorted(seen), seen
    after = scrape(server)

    # exactly the records produced, in the topic's counter and its logs
    assert val(after, "samsa_topic_messages_in_total", topic=topic) == RECORDS
    ends = after["samsa_log_end_offset"].find(topic=topic)
    assert len(ends) == 3 and sum(v for _, v in ends) == RECORDS, ends
    assert all(v == 0 for _, v in after["samsa_log_start_offset"].find(topic=topic))
    bytes_in = val(after, "samsa_topic_bytes_in_total", topic=topic)
    assert bytes_in > RECORDS * len(VALUE), bytes_in
    size = sum(v for _, v in after["samsa_log_size_bytes"].find(topic=topic))
    assert size == bytes_in, (size, bytes_in)   # stored as received
    assert all(v == 0 for _, v in after["samsa_partition_under_min_isr"].find(topic=topic))

    # Produce requests: counted, timed in every phase, no errors
    produces = (val(after, "samsa_requests_total", 0, server="broker", request="Produce")
                - val(before, "samsa_requests_total", 0, server="broker", request="Produce"))
    assert produces >= 1
    for fam in ("samsa_request_total_time_seconds", "samsa_request_local_time_seconds",
                "samsa_request_queue_time_seconds", "samsa_response_send_time_seconds"):
        assert val(after, fam, sample=fam + "_count", server="broker",
                   request="Produce") == val(after, "samsa_requests_total",
                                             server="broker", request="Produce")
    assert val(after, "samsa_request_total_time_seconds",
               sample="samsa_request_total_time_seconds_sum", server="broker",
               request="Produce") > 0
    nones = val(after, "samsa_request_errors_total", server="broker", request="Produce",
                error="NONE")
    assert nones >= produces        # one per partition in each response
    assert not [ls for ls, v in after["samsa_request_errors_total"].find(request="Produce")
                if ls["error"] != "NONE"]

    # a consumer group reads everything, commits, then falls 500 behind
    consume_and_commit(server, topic, "metrics-group", RECORDS)
    mid = scrape(server)
    assert val(mid, "samsa_topic_bytes_out_total", topic=topic) >= bytes_in
    lags = mid["samsa_consumer_group_lag"].find(group="metrics-group", topic=topic)
    assert len(lags) == 3 and all(v == 0 for _, v in lags), lags
    assert val(mid, "samsa_groups", state="Empty") >= 1
    produce(server, topic, 500)
    late = scrape(server)
    lags = late["samsa_consumer_group_lag"].find(group="metrics-group", topic=topic)
    assert sum(v for _, v in lags) == 500, lags
    assert val(late, "samsa_topic_messages_in_total", topic=topic) == RECORDS + 500

    # an error code is counted under its name
    res = admin.delete_topics(["metrics-no-such-topic"], operation_timeout=T(10))
    with pytest.raises(Exception):
        res["metrics-no-such-topic"].result(timeout=T(20))
    errs = scrape(server)
    assert val(errs, "samsa_request_errors_total", server="broker", request="DeleteTopics",
               error="UNKNOWN_TOPIC_OR_PARTITION") == 1


def test_odd_group_names_keep_the_exposition_valid(server):
    # a group id is whatever bytes a client sent: quotes, backslashes,
    # newlines and bytes that are not UTF-8 must not break the scrape
    import test_groups_protocol as gp
    odd = b'we"ird\\grp\nx\xff\xc3('
    with server.connect() as conn:
        gp.create_topic(conn, "odd-t", parts=1)
        assert gp.commit(conn, odd, -1, "", {("odd-t", 0): 0}, version=2) == {("odd-t", 0): 0}
    status, text, _ = http(server, "/metrics")
    text.encode("utf-8")                        # decoded strictly above
    fams = promtext.parse(text)
    lags = fams["samsa_consumer_group_lag"].find(topic="odd-t")
    assert [ls["group"] for ls, _ in lags] == ['we"ird\\grp\nx\\xff\\xc3('], lags
    doc = json.loads(http(server, "/api/status")[1])
    assert [g["group"] for g in doc["groups"]] == ['we"ird\\grp\nx\ufffd\ufffd(']


def test_health_before_ready(samsa):
    # the listener opens before the logs load: liveness answers, readiness
    # says 503 until the Kafka listeners are up
    srv = samsa.start(env={"SAMSA_TEST_OPEN_DELAY_MS": "3000"}, wait=False,
                      binary=samsa_harness.faults_binary())
    ok = samsa_harness.wait_until(
        lambda: "bound to port" in srv.stderr_text(), T(10), 0.05)
    assert ok, srv.stderr_tail()
    assert samsa_harness.wait_until(lambda: _status(srv, "/health") == 200, T(5), 0.05)
    assert http(srv, "/ready")[0] == 503
    assert http(srv, "/health?ready")[0] == 503
    fams = scrape(srv)
    assert val(fams, "samsa_ready") == 0
    assert "samsa_requests_total" not in fams
    assert json.loads(http(srv, "/api/status")[1])["ready"] is False
    assert srv.wait_ready() is None
    assert http(srv, "/ready")[0] == 200
    assert val(scrape(srv), "samsa_ready") == 1


def _status(srv, path):
    try:
        return http(srv, path)[0]
    except OSError:
        return None


# -- log level, disabled or taken listener -----------------------------------------

TOKEN = "s3cret-token"
BEARER = {"Authorization": "Bearer " + TOKEN}


def test_loglevel_post_needs_the_admin_token(samsa):
    """Without metrics.listener.admin.token every POST is refused (403,
    naming the key), GETs are served; with it, a POST without the token
    or with another is 401 (WWW-Authenticate: Bearer), and the level
    stays."""
    srv = samsa.start({"diag.level": "WARN"})
    st, text, _ = http(srv, "/loglevel", "POST", b"DEBUG", BEARER)
    assert st == 403 and "metrics.listener.admin.token" in text, (st, text)
    assert http(srv, "/loglevel", "POST", b"DEBUG")[0] == 403
    assert http(srv, "/loglevel")[:2] == (200, "WARN\n")
    assert http(srv, "/health")[0] == 200
    srv.stop()
    srv = samsa.start({"diag.level": "WARN",
                       "metrics.listener.admin.token": TOKEN})
    for headers in ({}, {"Authorization": "Bearer wrong"},
                    {"Authorization": "Bearer " + TOKEN + "x"},
                    {"Authorization": "Basic " + TOKEN}):
        st, text, hdrs = http(srv, "/loglevel", "POST", b"DEBUG", headers)
        assert st == 401, (headers, st, text)
        assert hdrs["WWW-Authenticate"].startswith("Bearer"), hdrs
    assert http(srv, "/loglevel")[:2] == (200, "WARN\n")
    assert TOKEN not in srv.stderr_text()       # a password: never logged


def test_loglevel(samsa):
    srv = samsa.start({"diag.level": "WARN",
                       "metrics.listener.admin.token": TOKEN})
    assert http(srv, "/loglevel")[:2] == (200, "WARN\n")
    with srv.connect(timeout=T(5)) as c:
        c.api_versions(0, timeout=T(5))
    assert "DEBUG" not in srv.stderr_text()
    assert http(srv, "/loglevel", "POST", b"debug\n", BEARER)[:2] == \
        (200, "DEBUG\n")
    assert http(srv, "/loglevel")[:2] == (200, "DEBUG\n")
    with srv.connect(timeout=T(5)) as c:
        c.api_versions(0, timeout=T(5))
    assert samsa_harness.wait_until(lambda: " DEBUG " in srv.stderr_text(), T(5))
    assert http(srv, "/loglevel", "POST", b"LOUD", BEARER)[0] == 400
    assert http(srv, "/loglevel", "POST", b"x" * 1000, BEARER)[0] == 413
    assert http(srv, "/loglevel", "POST", b"level=INFO", BEARER)[:2] == \
        (200, "INFO\n")


def test_listener_disabled(samsa):
    srv = samsa.start({"metrics.listener": ""})
    assert "metrics listener disabled" in srv.stderr_text()
    assert "metrics" not in srv.thread_names()
    with srv.connect(timeout=T(5)) as c:
        assert c.api_versions(0, timeout=T(5))["error_code"] == 0


def test_listener_port_zero_and_taken(samsa, tmp_path):
    srv = samsa.start({"metrics.listener": "http://127.0.0.1:0"})
    assert http(srv, "/health")[0] == 200        # port found in the log
    assert "metrics" in srv.thread_names()
    taken = int(srv.metrics_url().rsplit(":", 1)[1].rstrip("/"))
    cmd = [samsa_harness.server_binary(), "--override", "log.dirs=%s" % (tmp_path / "d"),
           "--override", "listeners=PLAINTEXT://%s:%d,CONTROLLER://%s:%d" % (
               HOST, samsa_harness.free_port(), HOST, samsa_harness.free_port()),
           "--override", "metrics.listener=http://%s:%d" % (HOST, taken)]
    p = subprocess.run(cmd, capture_output=True, timeout=T(20), text=True,
                       env=samsa_harness.base_env(None))
    assert p.returncode != 0
    assert "metrics.listener" in p.stderr, p.stderr[-2000:]
    bad = subprocess.run(cmd[:-1] + ["metrics.listener=ftp://x:1"], capture_output=True,
                         timeout=T(20), text=True, env=samsa_harness.base_env(None))
    assert bad.returncode != 0 and "invalid value 'ftp://x:1'" in bad.stderr, bad.stderr
