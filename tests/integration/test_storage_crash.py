"""Crash test: nothing acknowledged is lost to SIGKILL.

A confluent_kafka (librdkafka) producer with acks=all writes numbered
records to a 2-partition topic with flush.messages=1, while the server is
killed with SIGKILL at a random moment (0.05-0.8 s after the round's first
acknowledgement) and started again on the same directory, 20 times.
Afterwards every acknowledged record is in the log exactly once, at the
offset its acknowledgement named, in the order it was produced; and the
server came back each time with no manual step (samsa.start() only).

How "acknowledged" is kept exact:
- enable.idempotence=false (InitProducerId is not there yet) and retries=0
  (message.send.max.retries): librdkafka never sends a record twice, so an
  acknowledged record was written once, and *any* duplicate in the log is
  the server's doing: the test allows none, acknowledged or not.
- A record whose acknowledgement was lost with the server (in flight at the
  kill) may or may not be in the log; both are fine. After each kill the
  producer's queue is purged, so every record ends with a delivery report
  (success with its offset, or an error) and none is left undecided.

SAMSA_CRASH_SEED=<n> replays a run (the seed is printed on failure).
"""

import os
import random
import signal
import time

import kwire
from samsa_harness import T

ROUNDS = 20
PARTITIONS = 2
TOPIC = "crash-flush1"


def produce_round(bootstrap, rng, seq0, acked, failed, log):
    """Produces numbered records (seq0, seq0+1, ...) until a random moment
    after the first acknowledgement; returns (producer, next seq, kill time).
    The caller kills the server, then calls finish_round()."""
    from confluent_kafka import Producer

    round_acks = [0]

    def on_delivery(err, msg):
        seq = int(msg.value())
        if err is None:
            acked[seq] = (msg.partition(), msg.offset())
            round_acks[0] += 1
        else:
            failed[seq] = str(err)
    prod = Producer({
        "bootstrap.servers": bootstrap,
        "acks": "all",
        "enable.idempotence": False,
        "message.send.max.retries": 0,
        "linger.ms": 2,
        "queue.buffering.max.messages": 2000,
        "message.timeout.ms": int(T(30) * 1000),
        "socket.timeout.ms": int(T(10) * 1000),
        "reconnect.backoff.ms": 20,
        "reconnect.backoff.max.ms": 200,
        "log_level": 0,
    })
    seq = seq0
    first_ack = None
    kill_after = rng.uniform(0.05, 0.8)
    deadline = time.monotonic() + T(15)
    while True:
        now = time.monotonic()
        if first_ack is None and round_acks[0]:
            first_ack = now
        if first_ack is not None and now - first_ack >= kill_after:
            break
        assert now < deadline, "round %d: no acknowledgement within %.0f s (%d failed: %s)" % (
            len(log), T(15), len([s for s in failed if s >= seq0]),
            list({v for s, v in failed.items() if s >= seq0})[:3])
        for _ in range(20):
            try:
                prod.produce(TOPIC, value=b"%d" % seq, key=b"r%d" % len(log),
                             partition=seq % PARTITIONS, on_delivery=on_delivery)
            except BufferError:
                break
            seq += 1
        prod.poll(0.005)
    return prod, seq, kill_after


def finish_round(prod, seq0, seq, acked, failed):
    # the server is gone: fail whatever was not acknowledged, then drain
    prod.purge(True, True, True)
    left = prod.flush(T(10))
    assert left == 0, "%d messages without a delivery report" % left
    undecided = [s for s in range(seq0, seq) if s not in acked and s not in failed]
    assert not undecided, "no delivery report for %d records" % len(undecided)


def test_sigkill_loses_nothing_acknowledged(samsa):
    seed = int(os.environ.get("SAMSA_CRASH_SEED") or time.time_ns() % 1000000)
    rng = random.Random(seed)
    srv = samsa.start()
    workdir = srv.workdir
    with srv.connect(timeout=T(5)) as c:
        r = c.create_topic(TOPIC, PARTITIONS, {"flush.messages": "1"}, timeout=T(10))
        assert r["error_code"] == 0, kwire.error_name(r["error_code"])
        c.wait_topic(TOPIC, PARTITIONS, timeout=T(10))
    acked, failed = {}, {}
    log = []
    seq = 0
    for rnd in range(ROUNDS):
        seq0 = seq
        prod, seq, kill_after = produce_round(srv.bootstrap(), rng, seq0, acked, failed, log)
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait(timeout=T(10))
        srv.stopped = True          # killed on purpose: not a failure at teardown
        finish_round(prod, seq0, seq, acked, failed)
        log.append("round %d: seq %d-%d, killed %.3f s after the first ack, %d acked" % (
            rnd, seq0, seq - 1, kill_after, len([s for s in range(seq0, seq) if s in acked])))
        del prod
        # no manual step: the same command on the same directory
        srv = samsa.start(workdir=workdir)
    context = "seed %d\n%s" % (seed, "\n".join(log))
    print(context)                  # shown with -s, and on failure

    # read everything back
    with srv.connect(timeout=T(5)) as c:
        c.wait_topic(TOPIC, PARTITIONS, timeout=T(10))
        in_log = {}
        for part in range(PARTITIONS):
            batches, last = c.fetch_all(TOPIC, part, 0, timeout=T(30))
            assert last["error_code"] == 0, kwire.error_name(last["error_code"])
            assert all(b["crc_ok"] for b in batches), "a stored batch fails its CRC"
            records = kwire.records_of(batches)
            offsets = [x["offset"] for x in records]
            assert offsets == list(range(len(records))), \
                "partition %d: offsets not dense from 0: %s..." % (part, offsets[:20])
            assert len(records) == last["high_watermark"], context
            seqs = [int(x["value"]) for x in records]
            assert len(set(seqs)) == len(seqs), "partition %d has duplicates: %s\n%s" % (
                part, sorted({s for s in seqs if seqs.count(s) > 1})[:20], context)
            assert all(s % PARTITIONS == part and 0 <= s < seq for s in seqs), \
                "partition %d holds records that were never sent to it" % part
            for off, s in enumerate(seqs):
                in_log[s] = (part, off)
            acked_here = [s for s in seqs if s in acked]
            assert acked_here == sorted(acked_here), \
                "partition %d: acknowledged records out of order\n%s" % (part, context)

    assert len(acked) >= ROUNDS, "only %d records acknowledged in %d rounds" % (len(acked), ROUNDS)
    missing = sorted(s for s in acked if s not in in_log)
    assert not missing, "%d acknowledged records lost, e.g. %s\n%s" % (
        len(missing), [(s, acked[s]) for s in missing[:10]], context)
    moved = [(s, acked[s], in_log[s]) for s in acked if in_log[s] != acked[s]]
    assert not moved, "acknowledged records not where their acknowledgement said " \
        "(seq, acked (partition, offset), found): %s\n%s" % (moved[:10], context)
