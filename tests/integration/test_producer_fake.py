"""libsamsa's idempotent producer (issue 6) against fake_produce_broker.py,
an in-process broker that answers ApiVersions/Metadata/InitProducerId/
Produce, checks producer ids, epochs and sequences per partition as Kafka
does (the last five batches remembered: a resent one is answered
DUPLICATE_SEQUENCE_NUMBER and not stored again), and can be delayed or
restarted with its log kept.

UNTIL ISSUE 5: samsa-server does not have InitProducerId (and keeps no
producer state), so the idempotent producer -- enable.idempotence, the
default -- cannot run against it (test_producer.py checks that it fails
clearly there).  These tests cover idempotence against the fake until then;
once samsa-server has InitProducerId and sequence checks, move them to
test_producer.py against the real server (the restart test then with
SIGKILL/SIGTERM restarts of samsa-server) and drop this file.
Everything that does not need idempotence runs against samsa-server in
test_producer.py.
"""

import threading
import time

import pytest

import fake_produce_broker
from fake_produce_broker import FakeBroker
from samsa_harness import T
from test_producer import java_partition, probe

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


@pytest.fixture
def broker():
    b = FakeBroker({"t": 3}).start()
    yield b
    b.stop()


def check_sequence(broker, n, nparts=3):
    """Every value 0..n-1 exactly once; per partition in send order; each
    key on its murmur2 partition; every batch idempotent (producer id set,
    sequences checked by the fake)."""
    seen = set()
    for p in range(nparts):
        last = -1
        for off, key, value, hdrs, ts in broker.records("t", p):
            v = int(value)
            assert v not in seen, "duplicate %d" % v
            assert v > last, "partition %d out of order: %d after %d" % (
                p, v, last)
            assert java_partition(key.decode(), nparts) == p
            seen.add(v)
            last = v
        assert all(b["producer_id"] >= 0 and b["base_sequence"] >= 0
                   for b in broker.batches("t", p))
    assert seen == set(range(n)), "missing %d" % (n - len(seen))


@pytest.mark.parametrize("codec", CODECS)
def test_idempotent_each_codec_in_sequence(broker, codec):
    out = probe("seq", broker.bootstrap, "t", "20000",
                "compression.type=" + codec, "linger.ms=20")
    assert out["delivered"] == 20000 and out["errors"] == 0, out
    assert out["producer_id"] >= 0, out
    check_sequence(broker, 20000)
    codes = {h["attributes"] & 7 for p in range(3)
             for h in broker.batches("t", p)}
    want = CODECS.index(codec)
    assert want in codes


@pytest.mark.parametrize("setting", ["default", "explicit"])
def test_idempotence_needs_init_producer_id(setting):
    """A broker that does not advertise InitProducerId: as Java's producer
    (UnsupportedVersionException "The broker does not support
    INIT_PRODUCER_ID") and librdkafka's, the idempotent producer fails every
    record with a clear error; no silent fallback to non-idempotent sends."""
    apis = dict(fake_produce_broker.SUPPORTED)
    del apis[fake_produce_broker.API_INITPID]
    b = FakeBroker({"t": 3}, apis=apis).start()
    try:
        args = ["enable.idempotence=true"] if setting == "explicit" else []
        errs = []
        out = probe("seq", b.bootstrap, "t", "200", *args, "probe.flush=1",
                    stderr=errs)
        assert out["delivered"] == 0, out
        assert out["send_err"] == "UNSUPPORTED_VERSION" or \
            out["first_err"] == "UNSUPPORTED_VERSION", out
        assert out["errors"] == out["sent"], out  # every accepted record failed
        assert "does not support InitProducerId" in errs[0] \
            and "enable.idempotence=false" in errs[0], errs[0][-2000:]
        assert not any(b.batches("t", p) for p in range(3))
    finally:
        b.stop()


def test_idempotent_restart_no_loss_no_dup(broker):
    n = 100000
    result = {}

    def go():
        result["out"] = probe("seq", broker.bootstrap, "t", str(n),
                              "linger.ms=5", "batch.size=4096",
                              "retry.backoff.ms=50", "probe.flush=1",
                              timeout=300)
    broker.response_delay = 0.01         # a run of a few seconds
    th = threading.Thread(target=go)
    th.start()
    deadline = time.time() + T(60)
    while (sum(len(broker.records("t", p)) for p in range(3)) < n // 3
           and time.time() < deadline):
        time.sleep(0.05)
    broker.response_delay = 0.2          # answers in flight get lost ...
    time.sleep(0.1)
    broker.restart(down_s=1.0)           # ... in the restart
    broker.response_delay = 0.01
    th.join(T(300))
    out = result["out"]
    assert out["delivered"] == n and out["errors"] == 0, out
    assert out["retries"] > 0, out
    check_sequence(broker, n)
    assert broker.duplicates > 0, "the restart should have caused retries"


def test_idempotent_pipelined_retry_keeps_order(broker):
    """Several batches of a partition in flight (max.in.flight=5); the 2nd
    batch of partition 0 fails with a retriable error (NOT_ENOUGH_REPLICAS),
    so the fake answers the ones behind it OUT_OF_ORDER_SEQUENCE_NUMBER:
    they are retried after it with their sequences, in order, without an
    epoch bump, and nothing is lost or duplicated."""
    n = 20000
    broker.response_delay = 0.02        # answers slow: requests pile up
    broker.fail_at = {("t", 0, 2): 19}
    out = probe("seq", broker.bootstrap, "t", str(n), "linger.ms=2",
                "batch.size=2048", "retry.backoff.ms=20", "probe.flush=1",
                timeout=120)
    assert out["delivered"] == n and out["errors"] == 0, out
    assert not broker.fail_at, "the error was not injected"
    assert out["retries"] > 0, (out, broker.arrived)
    assert out["pinflight_max"] >= 2, out
    check_sequence(broker, n)
    # no epoch bump (the fake's InitProducerId v0-1 bumps to a new id)
    assert len({(b["producer_id"], b["producer_epoch"]) for p in range(3)
                for b in broker.batches("t", p)}) == 1


def test_idempotent_pipelined_bump_resequences_in_order(broker):
    """The 2nd batch of partition 0 is answered UNKNOWN_PRODUCER_ID with
    more of the partition in flight (answered OUT_OF_ORDER_SEQUENCE_NUMBER
    behind it): one epoch bump (the fake's InitProducerId v0-1 gives a new
    id), after which the partition starts again at sequence 0 with the
    failed batches first, in order; nothing lost or duplicated."""
    n = 20000
    broker.response_delay = 0.02
    broker.fail_at = {("t", 0, 2): 59}
    out = probe("seq", broker.bootstrap, "t", str(n), "linger.ms=2",
                "batch.size=2048", "retry.backoff.ms=20", "probe.flush=1",
                timeout=120)
    assert out["delivered"] == n and out["errors"] == 0, out
    assert not broker.fail_at, "the error was not injected"
    assert out["pinflight_max"] >= 2, out
    check_sequence(broker, n)
    pids = []
    for b in broker.batches("t", 0):
        if not pids or pids[-1][0] != b["producer_id"]:
            pids.append((b["producer_id"], b["base_sequence"]))
    assert len(pids) == 2, pids         # one bump, never back to the old id
    assert pids[1][1] == 0, pids        # the new id starts at sequence 0


def test_idempotent_close_right_after_send_delivers_all(broker):
    # close() first waits for the producer id, then drains
    out = probe("seq", broker.bootstrap, "t", "5000", "linger.ms=60000",
                "batch.size=1000000")
    assert out["sent"] == 5000 and out["delivered"] == 5000, out
    assert out["close_err"] == "NONE"
    check_sequence(broker, 5000)
