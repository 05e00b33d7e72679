"""Idempotent producing with real clients through broker restarts (issue 5).

confluent_kafka (librdkafka) with enable.idempotence=true produces 100 000
numbered records to a 3-partition topic (flush.messages=1, so that answers
wait for the group commit and restarts catch written but unanswered
batches) while samsa-server is restarted twice on the same port and data
directory (once with SIGTERM, once with SIGKILL) in the middle of the run.  Every record must be acknowledged, and
reading the partitions back must show each number exactly once (no loss,
no duplicate), in increasing order within each partition, at the offset
its acknowledgement named.
"""

import signal
import time

import pytest

import kwire
from samsa_harness import T

TOPIC = "idem-clients"
PARTITIONS = 3
N = 100000




def test_confluent_idempotent_through_restarts(samsa):
    from confluent_kafka import Producer

    srv = samsa.start()
    with srv.connect(timeout=T(5)) as c:
        # flush.messages=1: each answer waits for the group commit, so a
        # restart finds requests whose data is written but unanswered, and
        # librdkafka sends those batches again
        r = c.create_topic(TOPIC, PARTITIONS, {"flush.messages": "1"},
                           timeout=T(10))
        assert r["error_code"] == 0, kwire.error_name(r["error_code"])
        c.wait_topic(TOPIC, PARTITIONS, timeout=T(10))
    acked, errors = {}, []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            acked[int(msg.value())] = (msg.partition(), msg.offset())
    prod = Producer({
        "bootstrap.servers": srv.bootstrap(),
        "enable.idempotence": True,
        "linger.ms": 5,
        "batch.num.messages": 500,
        "message.timeout.ms": int(T(60) * 1000),
        "socket.timeout.ms": int(T(10) * 1000),
        "reconnect.backoff.ms": 20,
        "reconnect.backoff.max.ms": 200,
        "retry.backoff.ms": 20,
        "log_level": 0,
    })
    restarts = {N // 3: False, 2 * N // 3: True}     # seq -> kill?
    deadline = time.monotonic() + T(60)
    for seq in range(N):
        if seq in restarts:
            prod.poll(0)
            srv = samsa.restart(srv, restarts[seq])
        while True:
            try:
                prod.produce(TOPIC, value=b"%d" % seq, on_delivery=on_delivery)
                break
            except BufferError:
                prod.poll(0.01)
                assert time.monotonic() < deadline, "producer stuck"
        if seq % 1000 == 0:
            prod.poll(0)
    left = prod.flush(T(60))
    assert left == 0, "%d records not delivered" % left
    assert not errors, errors[:5]
    assert len(acked) == N

    with srv.connect(timeout=T(5)) as c:
        seen = {}
        for part in range(PARTITIONS):
            batches, last = c.fetch_all(TOPIC, part, 0, timeout=T(30))
            assert last["error_code"] == 0
            recs = kwire.records_of(batches)
            nums = [int(r["value"]) for r in recs]
            assert nums == sorted(nums), "order lost in partition %d" % part
            for r, n in zip(recs, nums):
                assert n not in seen, "record %d stored twice (%s and %s)" % (
                    n, seen[n], (part, r["offset"]))
                seen[n] = (part, r["offset"])
    assert len(seen) == N, "%d records missing" % (N - len(seen))
    assert seen == acked, "a record is not where its acknowledgement said"


@pytest.mark.parametrize("how", ["sigkill", "sigterm"])
def test_libsamsa_idempotent_through_restart(samsa, tmp_path, how):
    """Issue 6's acceptance run: libsamsa's idempotent producer (its
    default) sends 100 000 records and samsa-server restarts a third of
    the way through -- SIGKILL with Produce requests in flight (each
    Produce handler takes 5 ms, answers wait for the group commit of
    flush.messages=1), or a clean SIGTERM: every record delivered once, at
    its acknowledged offset, in send order per partition (nothing lost,
    nothing duplicated), and after the SIGKILL batches were retried.  With
    several batches of a partition in flight at once (pipelining)."""
    import test_producer as tp

    n = 100000
    overrides = {"num.partitions": "3"}
    # 20 ms per Produce: a request is in flight nearly all the time, so the
    # SIGKILL lands on one (5 ms left gaps a loaded machine could hit)
    env = {"SAMSA_TEST_HANDLER_DELAY_MS": "20", "SAMSA_TEST_HANDLER_DELAY_API": "0"}
    s = samsa.start(overrides, env=env)
    with s.connect(timeout=T(5)) as c:      # answers wait for the group commit
        r = c.create_topic("libsamsa-idem", 3, {"flush.messages": "1"}, timeout=T(10))
        assert r["error_code"] == 0, kwire.error_name(r["error_code"])
        c.wait_topic("libsamsa-idem", 3, timeout=T(10))
    acks_path = str(tmp_path / "acks")
    proc = tp.probe_async(str(tmp_path), "seq", s.bootstrap(), "libsamsa-idem", str(n),
                          "probe.rate=10000", "probe.acks=" + acks_path, "linger.ms=5",
                          "batch.size=4096", "retry.backoff.ms=20",
                          "retry.backoff.max.ms=200", "reconnect.backoff.max.ms=200",
                          "probe.flush=1")
    try:
        ok = tp.samsa_harness.wait_until(
            lambda: sum(tp.high_watermark(s, "libsamsa-idem", p) for p in range(3)) >= n // 3,
            T(30), 0.05)
        assert ok, "the producer did not get going"
        assert proc.poll() is None, "the run ended before the restart"
        if how == "sigkill":
            s.proc.send_signal(signal.SIGKILL)
            s.proc.wait(timeout=T(10))
            s.stopped = True
        else:
            problems = s.stop()
            assert not problems, problems
        time.sleep(0.3)
        s = samsa.start(dict(s.overrides), env=env, workdir=s.workdir, use_ports=False,
                        ports=(s.port, s.controller_port), retries=1)
        out, err = tp.probe_result(proc, 120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert out["sent"] == n and out["delivered"] == n and out["errors"] == 0, out
    assert out["producer_id"] >= 0, out
    # idempotence pipelines: several batches of a partition were in flight
    assert out["pinflight_max"] >= 2, out
    if how == "sigkill":
        assert out["retries"] > 0, "no batch was retried: %s\n%s" % (out, err[-2000:])
    assert "closed" in err, "the producer did not see the restart:\n" + err[-2000:]
    acks = tp.read_acks(acks_path)
    assert sorted(acks) == list(range(n))
    total = 0
    for p in range(3):
        recs = kwire.records_of(tp.stored(s, "libsamsa-idem", p))
        vals = [int(r["value"]) for r in recs]
        assert vals == sorted(set(vals)), "partition %d: duplicates or order lost" % p
        total += len(vals)
        for i, (ap, off, e) in acks.items():
            if ap == p:
                assert e == "NONE" and vals[off] == i
    assert total == n, "%d records stored for %d sent" % (total, n)


def test_kafkajs_idempotent_producer(samsa):
    """kafkajs 2.2.4 with idempotent: true: InitProducerId, numbered
    batches, every record stored once; DescribeProducers shows its
    producer id with the last sequence it sent."""
    import json
    import os
    import shutil
    import subprocess

    node = shutil.which("node") or shutil.which("nodejs")
    assert node, "node is not installed (scripts/deps.sh installs it)"
    js_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "js")
    srv = samsa.start()
    with srv.connect(timeout=T(5)) as c:
        r = c.create_topic("idem-js", 2, timeout=T(10))
        assert r["error_code"] == 0, kwire.error_name(r["error_code"])
        c.wait_topic("idem-js", 2, timeout=T(10))
    n = 2000
    r = subprocess.run([node, "idempotent_produce.js", srv.bootstrap(), "idem-js", str(n), "100",
                        str(int(T(10) * 1000))], cwd=js_dir, capture_output=True, text=True,
                       timeout=T(60))
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["sent"] == n
    with srv.connect(timeout=T(5)) as c:
        nums, pids, last_seq = [], set(), {}
        for p in range(2):
            batches, last = c.fetch_all("idem-js", p, 0, timeout=T(10))
            assert last["error_code"] == 0
            for b in batches:
                assert b["producer_id"] >= 0 and b["base_sequence"] >= 0, b
                pids.add(b["producer_id"])
            if batches:
                tail = batches[-1]
                last_seq[p] = (tail["producer_id"],
                               tail["base_sequence"] + tail["records_count"] - 1)
            nums += [int(x["value"]) for x in kwire.records_of(batches)]
        assert sorted(nums) == list(range(n)), "records lost or stored twice"
        assert len(pids) == 1
        # every partition the producer wrote shows it, with the last
        # sequence it stored there; a partition it never wrote shows none
        dp = kwire.describe_producers(c, "idem-js", (0, 1))
        assert sorted(p["partition"] for p in dp) == [0, 1], dp
        for p in dp:
            assert p["error_code"] == 0, p
            got = [(x["producer_id"], x["last_sequence"]) for x in p["active_producers"]]
            want = [last_seq[p["partition"]]] if p["partition"] in last_seq else []
            assert got == want, (p["partition"], got, want)
        assert last_seq, "no partition has the producer's batches"
