"""File descriptors of the log layer (issue 22): the descriptor cache.

- Under a soft RLIMIT_NOFILE of 1024, 5,000 partitions (3 files each:
  15,000 descriptors if every file stayed open) are created, produced to
  and fetched from across the whole range; the server's descriptors stay
  under the limit and the cache's under its budget (half the limit); a
  clean restart loads them all under the same limit without opening every
  file at once, and every sampled record reads back.
- Out of descriptors (the server's limit lowered with prlimit while it
  runs, log.open.files.max far above it): partitions already open keep
  serving Produce and Fetch (a fetch's descriptor copy is made by closing an
  idle segment); CreateTopics and CreatePartitions are refused with
  REQUEST_TIMED_OUT and a message naming RLIMIT_NOFILE and the key, one
  warning is logged (not one per request), samsa_log_fd_exhausted_total
  counts, no partition goes offline; the broker stops cleanly.
"""

import itertools
import os
import re
import resource
import time
import urllib.request

import kwire
from samsa_harness import T, wait_until

_names = itertools.count(1)
LIMIT = 1024
TOPICS = 5
PARTS = 1000                        # per topic: 5,000 partitions in all
SAMPLE = (0, 1, 2, 333, 500, 667, 998, 999)
ERR_REQUEST_TIMED_OUT = 7          # retriable: the condition is transient


def topic_name(prefix):
    return "%s-%d-%d" % (prefix, os.getpid() % 1000, next(_names))


def start_limited(samsa, limit, overrides=None, restart_of=None):
    """Starts (or restarts) a server whose soft RLIMIT_NOFILE is limit: the
    child inherits this process's limit, set only around the start."""
    old = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, old[1]))
    try:
        if restart_of is not None:
            return samsa.restart(restart_of)
        return samsa.start(overrides or {})
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, old)


def nfds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def soft_limit_of(pid):
    with open("/proc/%d/limits" % pid) as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    raise AssertionError("no Max open files in /proc/%d/limits" % pid)


def fd_numbers(pid):
    return sorted(int(n) for n in os.listdir("/proc/%d/fd" % pid))


def lowest_free(pid):
    used = set(fd_numbers(pid))
    n = 0
    while n in used:
        n += 1
    return n


def log_file_fds(pid, data_dir):
    """Descriptors of segment and index files under data_dir."""
    out = []
    for n in fd_numbers(pid):
        try:
            target = os.readlink("/proc/%d/fd/%d" % (pid, n))
        except OSError:
            continue
        if (target.startswith(data_dir)
                and re.search(r"\.(log|index|timeindex|txnindex)(\.deleted)?$", target)
                and "__cluster_metadata" not in target):
            out.append(n)
    return out


def metrics(srv):
    with urllib.request.urlopen(srv.metrics_url("/metrics"), timeout=T(10)) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(samsa_log_(?:open_files|open_files_max|fd_evictions_total"
                     r"|fd_exhausted_total)) (\S+)$", line)
        if m:
            out[m.group(1)] = float(m.group(2))
    for k in ("samsa_log_open_files", "samsa_log_open_files_max",
              "samsa_log_fd_evictions_total", "samsa_log_fd_exhausted_total"):
        assert k in out, "no %s in /metrics" % k
    return out


def make_topic(conn, name, partitions):
    r = conn.create_topic(name, partitions, timeout=T(120))
    assert r["error_code"] == 0, "%s %s" % (kwire.error_name(r["error_code"]),
                                           r["error_message"])


def produce(conn, name, part, values):
    p = conn.produce(name, part, kwire.encode_batch([kwire.Record(v) for v in values]),
                     timeout=T(20))
    return p["error_code"]


def fetch_values(conn, name, part):
    f = conn.fetch(name, part, 0, timeout=T(20))
    assert f["error_code"] == 0, "%s-%d: %s" % (name, part,
                                                kwire.error_name(f["error_code"]))
    return [r["value"] for r in kwire.records_of(f["batches"])]


def partition_dirs(data_dir, names):
    return sum(1 for d in os.listdir(data_dir)
               if d.rsplit("-", 1)[0] in names and "-delete" not in d)


def test_5000_partitions_under_1024_descriptors(samsa):
    srv = start_limited(samsa, LIMIT)
    pid = srv.pid
    assert soft_limit_of(pid) == LIMIT
    names = [topic_name("fds") for _ in range(TOPICS)]
    with srv.connect(timeout=T(120)) as c:
        for name in names:
            make_topic(c, name, PARTS)
        assert wait_until(lambda: partition_dirs(srv.data_dir, names) == TOPICS * PARTS,
                          T(300), 0.5), partition_dirs(srv.data_dir, names)
        # 3 files per partition would need 15x the limit
        assert TOPICS * PARTS * 3 > 10 * LIMIT
        held = nfds(pid)
        assert held < LIMIT, held
        m = metrics(srv)
        assert m["samsa_log_open_files_max"] == LIMIT // 2
        assert m["samsa_log_open_files"] <= LIMIT // 2
        assert m["samsa_log_fd_evictions_total"] > 0
        assert m["samsa_log_fd_exhausted_total"] == 0
        for name in names:
            for p in SAMPLE:
                v = ("%s/%d" % (name, p)).encode()
                assert produce(c, name, p, [v, v + b"!"]) == 0
        peak = nfds(pid)
        for name in names:
            for p in SAMPLE:
                v = ("%s/%d" % (name, p)).encode()
                assert fetch_values(c, name, p) == [v, v + b"!"]
            peak = max(peak, nfds(pid))
        assert peak < LIMIT, peak
        print("descriptors: %d partitions, server holds %d (limit %d, cache %d of %d)"
              % (TOPICS * PARTS, peak, LIMIT, metrics(srv)["samsa_log_open_files"],
                 LIMIT // 2))
    # a clean restart under the same limit loads every partition
    t0 = time.monotonic()
    srv = start_limited(samsa, LIMIT, restart_of=srv)
    pid = srv.pid
    assert soft_limit_of(pid) == LIMIT
    with srv.connect(timeout=T(60)) as c:
        for name in names:
            assert wait_until(lambda: c.topic_metadata(name)["error_code"] == 0, T(120), 0.2)
        print("restart: ready after %.1f s, %d descriptors"
              % (time.monotonic() - t0, nfds(pid)))
        assert nfds(pid) < LIMIT
        assert metrics(srv)["samsa_log_open_files"] <= LIMIT // 2
        for name in names:
            for p in SAMPLE:
                v = ("%s/%d" % (name, p)).encode()
                assert fetch_values(c, name, p) == [v, v + b"!"]
                assert produce(c, name, p, [b"again"]) == 0
        assert nfds(pid) < LIMIT
        m = metrics(srv)
        assert m["samsa_log_open_files"] <= LIMIT // 2
        assert m["samsa_log_fd_exhausted_total"] == 0
    assert "log: out of file descriptors" not in srv.stderr_text()


def test_exhausted_descriptors_refuse_new_files_only(samsa):
    srv = samsa.start({"log.open.files.max": "100000"})
    pid = srv.pid
    hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)[1]
    old, new = topic_name("old"), topic_name("new")
    with srv.connect(timeout=T(10)) as c:
        make_topic(c, old, 4)
        for p in range(4):
            assert produce(c, old, p, [b"v%d" % p]) == 0
            assert fetch_values(c, old, p) == [b"v%d" % p]
        m = metrics(srv)
        assert m["samsa_log_open_files_max"] == 100000
        assert m["samsa_log_fd_exhausted_total"] == 0
        # no descriptor number left below the limit
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (lowest_free(pid), hard))
        assert produce(c, old, 0, [b"w0"]) == 0
        # the fetch's copy of the descriptor is had by closing an idle
        # segment (one of old-1..3), not by failing
        assert fetch_values(c, old, 0) == [b"v0", b"w0"]
        assert produce(c, old, 0, [b"x0"]) == 0
        # now below every log file's descriptor: nothing closable helps
        lim = min([lowest_free(pid)] + log_file_fds(pid, srv.data_dir))
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (lim, hard))
        # CreateTopics and CreatePartitions are refused at once, with a
        # transient code and a message naming the limit and the key
        r = c.create_topic(new, 3, timeout=T(20))
        assert r["error_code"] == ERR_REQUEST_TIMED_OUT, r
        assert ("RLIMIT_NOFILE (%d)" % lim in r["error_message"]
                and "log.open.files.max" in r["error_message"]), r
        r = c.create_partitions([(old, 8, None)])[0]
        assert r["error_code"] == ERR_REQUEST_TIMED_OUT, r
        assert "RLIMIT_NOFILE" in r["error_message"], r
        for p in range(3):
            err = produce(c, new, p, [b"n"])
            assert err != 0
            # not a storage error: a client retries it
            assert err in (kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION, ERR_REQUEST_TIMED_OUT), kwire.error_name(err)
        # the open partitions keep serving
        assert produce(c, old, 0, [b"y0"]) == 0
        open_now = [p for p in range(4)
                    if produce(c, old, p, [b"z"]) == 0]
        assert 0 in open_now
        text = srv.stderr_text()
        assert text.count("log: out of file descriptors") == 1, text[-3000:]
        line = [ln for ln in text.splitlines() if "log: out of file descriptors" in ln][0]
        assert "RLIMIT_NOFILE %d" % lim in line and "log.open.files.max" in line, line
        assert "KAFKA_STORAGE_ERROR" not in text
        assert "offline" not in text
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (4096, hard))
        m = metrics(srv)
        assert m["samsa_log_fd_exhausted_total"] >= 1
        assert fetch_values(c, old, 0)[:2] == [b"v0", b"w0"]
    assert srv.stop() == []
