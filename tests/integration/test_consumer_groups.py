"""The consumer-group scenarios of issue 4 with libsamsa consumers
(consumer_probe.c through cprobe.py) against samsa-server:

- one consumer reads every record of a 3-partition topic;
- two consumers split the partitions and together read every record
  exactly once; a third joining causes a rebalance (eager, range: every
  member revokes everything first, commits on revoke) and no record is
  lost or read twice;
- commit, close (auto-commit + LeaveGroup) and a new consumer of the
  group resumes right after the committed offsets;
- cooperative-sticky: when a third member joins, only the partition that
  moves is revoked (KIP-429), members keep the rest without a revocation;
- static membership: a member restarted with the same group.instance.id
  within session.timeout.ms gets its partitions back and the other member
  sees no rebalance;
- a mixed group of a libsamsa and a confluent_kafka (librdkafka) member
  with a common assignor (range) splits the partitions and reads every
  record exactly once;
- subscribe by regex;
- max.poll.interval.ms: a member that stops polling leaves the group (the
  other takes everything), and its next poll() reports its partitions
  LOST and joins again.
"""

import time

import pytest

from cprobe import (Probe, b64, create_topic, produce, values, wait_split,
                    wait_values)
from samsa_harness import T

PARTS = 3
OVERRIDES = {"group.initial.rebalance.delay.ms": "200",
             "group.min.session.timeout.ms": "1000"}


def conf(group, **extra):
    c = {"group.id": group, "auto.offset.reset": "earliest",
         "session.timeout.ms": "6000", "heartbeat.interval.ms": "300",
         "partition.assignment.strategy": "range"}
    c.update({k.replace("_", "."): v for k, v in extra.items()})
    return c


@pytest.fixture
def bs(samsa):
    return samsa.start(overrides=OVERRIDES).bootstrap()


def test_one_consumer_reads_all(bs):
    topic = "g-one"
    create_topic(bs, topic)
    want = produce(bs, topic, 0, 30)
    pr = Probe(bs, "--subscribe", topic, conf=conf("g1"))
    wait_values([pr], want)
    assert sorted(values([pr])) == sorted(want)
    assert pr.assigned() == {(topic, p) for p in range(PARTS)}
    pr.stop()


def test_two_split_third_joins(bs):
    topic = "g-split"
    create_topic(bs, topic)
    a = Probe(bs, "--subscribe", topic, conf=conf("g2"))
    b = Probe(bs, "--subscribe", topic, conf=conf("g2"))
    wait_split([a, b], topic)
    want = produce(bs, topic, 0, 30)
    wait_values([a, b], want)
    assert sorted(values([a, b])) == sorted(want)       # exactly once
    c = Probe(bs, "--subscribe", topic, conf=conf("g2"))
    wait_split([a, b, c], topic)
    want |= produce(bs, topic, 30, 30)
    wait_values([a, b, c], want)
    time.sleep(T(0.5))
    assert sorted(values([a, b, c])) == sorted(want)    # no loss, no dup
    # eager (range): the rebalance revoked everything the two held first
    assert any(ev == "revoked" and len(tps) > 0 for ev, tps in a.events())
    for pr in (c, b, a):
        assert pr.stop()["close"] == "NONE"


def test_commit_close_resume(bs):
    topic = "g-resume"
    create_topic(bs, topic)
    first = produce(bs, topic, 0, 30)
    a = Probe(bs, "--subscribe", topic, conf=conf("g3"))
    wait_values([a], first)
    a.stop()                            # auto-commit on close, LeaveGroup
    second = produce(bs, topic, 30, 30)
    b = Probe(bs, "--subscribe", topic, conf=conf("g3"))
    wait_values([b], second)
    time.sleep(T(0.5))
    assert sorted(values([b])) == sorted(second)
    b.stop()


def test_cooperative_sticky(bs):
    topic = "g-coop"
    create_topic(bs, topic, 6)
    cc = conf("g4", partition_assignment_strategy="cooperative-sticky")
    a = Probe(bs, "--subscribe", topic, conf=cc)
    b = Probe(bs, "--subscribe", topic, conf=cc)
    wait_split([a, b], topic, parts=6)
    held_a, held_b = a.assigned(), b.assigned()
    assert len(held_a) == len(held_b) == 3
    ev_a, ev_b = len(a.events()), len(b.events())
    c = Probe(bs, "--subscribe", topic, conf=cc)
    wait_split([a, b, c], topic, parts=6)
    assert len(c.assigned()) == 2
    # each of a and b kept two of its partitions and revoked only the third
    for pr, before, n0 in ((a, held_a, ev_a), (b, held_b, ev_b)):
        now = pr.assigned()
        assert now <= before and len(now) == 2
        revoked = [tps for ev, tps in pr.events()[n0:] if ev == "revoked"]
        assert revoked and all(set(t) <= before - now for t in revoked), \
            pr.events()
    want = produce(bs, topic, 0, 60, parts=6)
    wait_values([a, b, c], want)
    time.sleep(T(0.5))
    assert sorted(values([a, b, c])) == sorted(want)
    for pr in (c, b, a):
        pr.stop()


def test_static_membership_restart(bs):
    topic = "g-static"
    create_topic(bs, topic)
    a = Probe(bs, "--subscribe", topic, conf=conf("g5", group_instance_id="a"))
    b = Probe(bs, "--subscribe", topic, conf=conf("g5", group_instance_id="b"))
    wait_split([a, b], topic)
    held_a = a.assigned()
    n_b = len(b.events())
    a.stop()                            # static: no LeaveGroup
    a2 = Probe(bs, "--subscribe", topic, conf=conf("g5", group_instance_id="a"))
    a2.wait(lambda pr: pr.assigned() == held_a, 10, "a's partitions back")
    time.sleep(T(1.5))
    assert b.events()[n_b:] == [], "b saw a rebalance: %s" % b.events()
    want = produce(bs, topic, 0, 30)
    wait_values([a2, b], want)
    a2.stop()
    b.stop()


def test_mixed_group_with_confluent(bs):
    from confluent_kafka import Consumer
    topic = "g-mixed"
    create_topic(bs, topic)
    a = Probe(bs, "--subscribe", topic, conf=conf("g6"))
    held = set()
    got = []

    def on_assign(c, parts):
        held.clear()
        held.update((p.topic, p.partition) for p in parts)

    def on_revoke(c, parts):
        held.clear()

    rk = Consumer({"bootstrap.servers": bs, "group.id": "g6",
                   "auto.offset.reset": "earliest",
                   "session.timeout.ms": 6000, "heartbeat.interval.ms": 300,
                   "partition.assignment.strategy": "range",
                   "topic.metadata.refresh.interval.ms": 1000})
    rk.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
    want_parts = {(topic, p) for p in range(PARTS)}
    end = time.time() + T(25)
    while time.time() < end:
        rk.poll(0.1)
        mine = a.assigned()
        if held and mine and not (held & mine) and held | mine == want_parts:
            break
    else:
        raise AssertionError("no split: librdkafka %s libsamsa %s events %s"
                             % (held, a.assigned(), a.events()))
    want = produce(bs, topic, 0, 30)
    end = time.time() + T(20)
    while time.time() < end and set(got) | set(values([a])) < want:
        m = rk.poll(0.1)
        if m is not None and not m.error():
            got.append(b64(m.value()))
    time.sleep(T(0.3))
    assert sorted(got + values([a])) == sorted(want)
    rk.close()
    a.stop()


def test_subscribe_pattern(bs):
    for t in ("pat-a", "pat-b", "other"):
        create_topic(bs, t, 1)
    want = produce(bs, "pat-a", 0, 5, parts=1) | produce(bs, "pat-b", 5, 5, parts=1)
    produce(bs, "other", 100, 5, parts=1)
    pr = Probe(bs, "--pattern", "pat-.*", conf=conf("g7"))
    wait_values([pr], want)
    time.sleep(T(0.5))
    assert sorted(values([pr])) == sorted(want)
    assert pr.assigned() == {("pat-a", 0), ("pat-b", 0)}
    pr.stop()


def test_poll_interval_exceeded(bs):
    topic = "g-poll"
    create_topic(bs, topic)
    cc = conf("g8", max_poll_interval_ms="2000")
    a = Probe(bs, "--subscribe", topic, conf=cc)
    b = Probe(bs, "--subscribe", topic, conf=cc)
    wait_split([a, b], topic)
    a.send("sleep 4000")
    b.wait(lambda pr: pr.assigned() == {(topic, p) for p in range(PARTS)},
           15, "b holds every partition while a does not poll")
    a.wait(lambda pr: any(ev == "lost" for ev, _ in pr.events()), 15,
           "a's partitions reported lost")
    wait_split([a, b], topic)           # a joined again
    want = produce(bs, topic, 0, 30)
    wait_values([a, b], want)
    a.stop()
    b.stop()
