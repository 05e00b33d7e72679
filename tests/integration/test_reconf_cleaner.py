"""Run-time reconfiguration of the log cleaner (Kafka's LogCleaner is a
BrokerReconfigurable) through IncrementalAlterConfigs on the BROKER
resource, by raw protocol: log.cleaner.threads 1 -> 2 -> 1 stops the
cleaner threads and starts the new count (the `logcleaner` threads
follow), compaction keeps working after each change (at most one record
per key below the cleaned offset, the latest value of every key kept),
Kafka's LogCleaner.validateReconfiguration refuses more than double, less
than half and less than 1 with INVALID_CONFIG and its messages,
log.cleaner.backoff.ms is checked by its range, DescribeConfigs shows the
dynamic value, and the value is kept in the metadata log across a
restart.  log.cleaner.dedupe.buffer.size changes the same way: the
cleaner restarts with the new offset map budget (a pass stops at the
segment where its map fills up), KafkaConfig's "at least 1MB per cleaner
thread" is checked against log.cleaner.threads, and the value is kept."""

import re

import itertools
import time

import kwire
import samsa_harness
from samsa_harness import T, cleaner_offset, set_broker
from samsa_harness import describe_broker as describe

OP_DELETE = 1
SRC_DYNAMIC_BROKER, SRC_STATIC, SRC_DEFAULT = 2, 4, 5

_rounds = itertools.count(1)


def cleaners(srv):
    return sum(1 for n in srv.thread_names() if n == "logcleaner")


def cleaners_are(srv, n):
    return samsa_harness.wait_until(lambda: cleaners(srv) == n, T(10),
                                    interval=0.05)


def produce_segments(conn, topic, batches):
    """Each record list of batches as one batch in a segment of its own
    (segment.ms 100: the next append rolls); returns the end offset."""
    end = None
    for recs in batches:
        p = conn.produce(topic, 0, kwire.encode_batch(recs), timeout=T(10))
        assert p["error_code"] == 0, p
        end = p["base_offset"] + len(recs)
        time.sleep(0.15)
    return end


def produce_rounds(conn, topic, rounds, keys=10):
    """rounds x keys updates, one segment per round; returns the end
    offset."""
    def round_records(r):
        return [kwire.Record(b"r%d-k%d" % (r, k) + b"." * 200, key=b"k%d" % k)
                for k in range(keys)]
    return produce_segments(conn, topic,
                            (round_records(next(_rounds)) for _ in range(rounds)))


def records(conn, topic):
    batches, p = conn.fetch_all(topic, 0, timeout=T(10))
    assert p["error_code"] == 0, p
    return [(rec["offset"], rec["key"], rec["value"])
            for b in batches for rec in b["records"]]


def compacted(conn, srv, topic, end):
    """Wait for the cleaner to pass over most of the log, then check it."""
    assert samsa_harness.wait_until(
        lambda: cleaner_offset(srv, topic) >= end // 2, T(20), interval=0.1), \
        cleaner_offset(srv, topic)
    cleaned = cleaner_offset(srv, topic)
    recs = records(conn, topic)
    below = [k for o, k, _ in recs if o < cleaned]
    assert len(below) == len(set(below)), "a key twice below %d" % cleaned
    latest = {}
    for o, k, v in recs:
        latest[k] = v
    assert sorted(latest) == sorted(b"k%d" % k for k in range(10))
    return cleaned, len(recs)


def test_cleaner_threads_at_run_time(samsa):
    srv = samsa.start({"log.cleaner.threads": "1",
                       "log.cleaner.backoff.ms": "100",
                       "log.segment.delete.delay.ms": "0"})
    topic = "compacted"
    with srv.connect(timeout=T(10)) as conn:
        assert conn.create_topic(topic, configs={
            "cleanup.policy": "compact", "segment.ms": "100",
            "min.cleanable.dirty.ratio": "0.01",
            "min.compaction.lag.ms": "0"})["error_code"] == 0
        assert cleaners_are(srv, 1), srv.thread_names()
        assert describe(conn, "log.cleaner.threads") == ("1", SRC_STATIC, False)

        end = produce_rounds(conn, topic, 12)
        cleaned1, n1 = compacted(conn, srv, topic, end)
        assert n1 < end

        # 1 -> 2: the cleaner restarts with two threads
        assert set_broker(conn, "log.cleaner.threads", "2") == (0, None)
        assert cleaners_are(srv, 2), srv.thread_names()
        assert describe(conn, "log.cleaner.threads") == (
            "2", SRC_DYNAMIC_BROKER, False)
        assert "log cleaner: 2 thread(s), backoff 100 ms" in srv.stderr_text()
        end = produce_rounds(conn, topic, 12)
        assert samsa_harness.wait_until(
            lambda: cleaner_offset(srv, topic) > cleaned1, T(20), interval=0.1)
        compacted(conn, srv, topic, end)

        # LogCleaner.validateReconfiguration: nothing changes
        assert set_broker(conn, "log.cleaner.threads", "5") == (
            kwire.ERR_INVALID_CONFIG, "Log cleaner threads cannot be "
            "increased to more than double the current value 2")
        assert set_broker(conn, "log.cleaner.threads", "0") == (
            kwire.ERR_INVALID_CONFIG, "Log cleaner threads should be at least 1")
        assert set_broker(conn, "log.cleaner.backoff.ms", "-1") == (
            kwire.ERR_INVALID_CONFIG, "Invalid value -1 for configuration "
            "log.cleaner.backoff.ms: Value must be at least 0")
        assert cleaners(srv) == 2
        assert set_broker(conn, "log.cleaner.backoff.ms", "200") == (0, None)
        assert samsa_harness.wait_until(
            lambda: "log cleaner: 2 thread(s), backoff 200 ms"
            in srv.stderr_text(), T(10))
        # the restarted pool logs before the old threads have all exited
        # (3 seen once under CI load): wait, bounded
        assert cleaners_are(srv, 2), srv.thread_names()

        # 2 -> 4 -> 1 is refused at 4 -> 1 (less than half), 4 -> 2 -> 1 not
        assert set_broker(conn, "log.cleaner.threads", "4") == (0, None)
        assert cleaners_are(srv, 4), srv.thread_names()
        assert set_broker(conn, "log.cleaner.threads", "1") == (
            kwire.ERR_INVALID_CONFIG, "Log cleaner threads cannot be "
            "reduced to less than half the current value 4")
        assert set_broker(conn, "log.cleaner.threads", "2") == (0, None)
        assert cleaners_are(srv, 2), srv.thread_names()

    # the metadata log keeps the value
    assert srv.stop() == []
    over = {k: v for k, v in srv.overrides.items() if k != "listeners"}
    srv2 = samsa.start(overrides=over, workdir=srv.workdir)
    assert cleaners_are(srv2, 2), srv2.thread_names()
    with srv2.connect(timeout=T(10)) as conn:
        assert describe(conn, "log.cleaner.threads") == (
            "2", SRC_DYNAMIC_BROKER, False)
        cleaned = cleaner_offset(srv2, topic)
        end = produce_rounds(conn, topic, 12)
        assert samsa_harness.wait_until(
            lambda: cleaner_offset(srv2, topic) > cleaned, T(20), interval=0.1)
        compacted(conn, srv2, topic, end)
        # DELETE: back to the static 1
        assert set_broker(conn, "log.cleaner.threads", None, op=OP_DELETE) == (0, None)
        assert cleaners_are(srv2, 1), srv2.thread_names()
        assert describe(conn, "log.cleaner.threads") == ("1", SRC_STATIC, False)


DEDUPE = "log.cleaner.dedupe.buffer.size"
BIG_KEY = 4096


def produce_distinct(conn, topic, rounds, keys=100):
    """rounds x keys records, every key new and BIG_KEY bytes long, one
    segment per round; returns the end offset."""
    return produce_segments(conn, topic, (
        [kwire.Record(b"v", key=(b"%s-r%d-k%d-" % (topic.encode(), r, k))
                      .ljust(BIG_KEY, b"."))
         for k in range(keys)]
        for r in range(rounds)))


def first_pass_end(srv, conn, topic):
    """Turn topic (cleanup.policy delete until now: all of it is dirty)
    into a compacted one; the end offset of the cleaner's first pass."""
    r = conn.incremental_alter_configs([(kwire.RESOURCE_TOPIC, topic, [
        ("cleanup.policy", kwire.OP_SET, "compact"),
        ("min.cleanable.dirty.ratio", kwire.OP_SET, "0.01"),
        ("min.compaction.lag.ms", kwire.OP_SET, "0")])])[0]
    assert r["error_code"] == 0, r
    pat = re.compile(r"/%s-0: cleaned offsets (\d+)\.\.(\d+)" % re.escape(topic))
    assert samsa_harness.wait_until(
        lambda: pat.search(srv.stderr_text()), T(20), interval=0.1)
    first, end = map(int, pat.search(srv.stderr_text()).groups())
    assert first == 0
    return end


def dedupe_topic(conn, topic):
    assert conn.create_topic(topic, configs={
        "cleanup.policy": "delete", "segment.ms": "100"})["error_code"] == 0
    # 8 segments of 100 keys of 4 KiB (3.2 MB of keys); the last is active
    assert produce_distinct(conn, topic, 8) == 800


def test_cleaner_dedupe_buffer_at_run_time(samsa):
    srv = samsa.start({"log.cleaner.threads": "1",
                       "log.cleaner.backoff.ms": "100",
                       "log.segment.delete.delay.ms": "0"})
    with srv.connect(timeout=T(10)) as conn:
        assert describe(conn, DEDUPE) == ("134217728", SRC_DEFAULT, False)
        # KafkaConfig: more than 1 MiB per cleaner thread, and a LONG
        msg = ("requirement failed: log.cleaner.dedupe.buffer.size must be "
               "at least 1MB per cleaner thread.")
        assert set_broker(conn, DEDUPE, "1048576") == (kwire.ERR_INVALID_CONFIG, msg)
        assert set_broker(conn, DEDUPE, "x") == (
            kwire.ERR_INVALID_CONFIG, "Invalid value x for configuration "
            "log.cleaner.dedupe.buffer.size: Not a number of type LONG")
        assert set_broker(conn, DEDUPE, "2097152") == (0, None)
        assert describe(conn, DEDUPE) == ("2097152", SRC_DYNAMIC_BROKER, False)
        assert samsa_harness.wait_until(
            lambda: "log cleaner: 1 thread(s), backoff 100 ms, dedupe buffer "
            "2097152 bytes" in srv.stderr_text(), T(10))
        # two threads would get 1 MiB each
        assert set_broker(conn, "log.cleaner.threads", "2") == (
            kwire.ERR_INVALID_CONFIG, msg)

        # a 2 MiB map holds the keys of a few segments: the first pass
        # stops early, later passes clean the rest
        dedupe_topic(conn, "small")
        end = first_pass_end(srv, conn, "small")
        assert 0 < end < 700, end
        assert samsa_harness.wait_until(
            lambda: cleaner_offset(srv, "small") == 700, T(20), interval=0.1), \
            cleaner_offset(srv, "small")

        # back to the default: one pass cleans every sealed segment
        assert set_broker(conn, DEDUPE, None, op=OP_DELETE) == (0, None)
        assert describe(conn, DEDUPE) == ("134217728", SRC_DEFAULT, False)
        assert samsa_harness.wait_until(
            lambda: "dedupe buffer 134217728 bytes" in srv.stderr_text(), T(10))
        dedupe_topic(conn, "large")
        assert first_pass_end(srv, conn, "large") == 700
        assert set_broker(conn, DEDUPE, "4194304") == (0, None)

    # the metadata log keeps the value
    srv = samsa.restart(srv)
    with srv.connect(timeout=T(10)) as conn:
        assert describe(conn, DEDUPE) == ("4194304", SRC_DYNAMIC_BROKER, False)
        assert samsa_harness.wait_until(
            lambda: "dedupe buffer 4194304 bytes" in srv.stderr_text(), T(10))
    assert srv.stop() == []



IO_MAX = "log.cleaner.io.max.bytes.per.second"


def big_topic(conn, topic, batches=160):
    """batches of 100 new 4 KiB keys (160: 66 MB) in segments of 1 MiB (two
    batches each): enough for a pass to outlast the throttle's first
    300 ms period (Kafka's Throttler cannot slow a pass shorter than one
    period: it checks the rate once a period has passed)."""
    assert conn.create_topic(topic, configs={
        "cleanup.policy": "delete",
        "segment.bytes": "1048576"})["error_code"] == 0
    for r in range(batches):
        recs = [kwire.Record(b"v", key=(b"%s-r%d-k%d-" % (topic.encode(), r, k))
                             .ljust(BIG_KEY, b"."))
                for k in range(100)]
        p = conn.produce(topic, 0, kwire.encode_batch(recs), timeout=T(10))
        assert p["error_code"] == 0, p


def clean_seconds(srv, conn, topic, batches=160):
    """Seconds from turning topic compacted until the cleaner's first pass
    over it (reading its sealed segments twice, 130 MB for 160 batches;
    nothing to rewrite) is done."""
    t0 = time.monotonic()
    end = first_pass_end(srv, conn, topic)
    assert end >= batches * 100 - 200, end
    return time.monotonic() - t0


def test_cleaner_io_throttle_at_run_time(samsa):
    """log.cleaner.io.max.bytes.per.second (Kafka's Throttler, checked
    every 300 ms): 64 MiB/s holds a pass over 260 MB of reads to several
    seconds (unthrottled about one here, so a broken throttle fails in
    the normal build); the value is a DOUBLE, shown and kept."""
    srv = samsa.start({"log.cleaner.threads": "1",
                       "log.cleaner.backoff.ms": "100",
                       "log.segment.delete.delay.ms": "0"})
    with srv.connect(timeout=T(10)) as conn:
        assert describe(conn, IO_MAX) == ("1.7976931348623157E308", SRC_DEFAULT, False)
        assert set_broker(conn, IO_MAX, "fast") == (
            kwire.ERR_INVALID_CONFIG, "Invalid value fast for configuration "
            "log.cleaner.io.max.bytes.per.second: Not a number of type DOUBLE")
        big_topic(conn, "free")
        free = clean_seconds(srv, conn, "free")

        assert set_broker(conn, IO_MAX, "67108864.0") == (0, None)
        assert describe(conn, IO_MAX) == ("67108864.0", SRC_DYNAMIC_BROKER, False)
        assert samsa_harness.wait_until(
            lambda: "io max 6.71089e+07 bytes/s" in srv.stderr_text(), T(10))
        # twice the data: with its pages just written (in the page cache)
        # an unthrottled pass over 160 batches can end within the first
        # 300 ms period, before the throttle ever looks (0.3 s seen)
        big_topic(conn, "slow", 320)
        slow = clean_seconds(srv, conn, "slow", 320)
        # a lower bound only: a slow machine (a sanitizer build under
        # load) lengthens the unthrottled pass too, never shortens this one
        assert slow >= 2.5, (slow, free)
    srv = samsa.restart(srv)
    with srv.connect(timeout=T(10)) as conn:
        assert describe(conn, IO_MAX) == ("67108864.0", SRC_DYNAMIC_BROKER, False)
    assert srv.stop() == []
