"""libsamsa's consumer with group.protocol=consumer (KIP-848) against
samsa-server's consumer groups (ConsumerGroupHeartbeat, server-side
assignors), through consumer_probe.c / cprobe.py:

- one member reads every record of a 3-partition topic;
- two members split the partitions and read every record exactly once; a
  third joins (the coordinator moves partitions to it: each is revoked by
  its owner, committed first, before the newcomer gets it) and later
  leaves (its partitions go back): across these rebalances no record is
  lost or read twice;
- subscribe_pattern(): sent as SubscribedTopicRegex (v1) and resolved
  by the coordinator, or resolved by the client against metadata and
  sent as names (exclude.internal.topics=false); either way a topic
  created later that matches is picked up;
- close commits (auto-commit) and leaves: a new member of the group
  resumes right after what the first one returned;
- a static member (group.instance.id) that closes (epoch -2) and comes
  back within the session timeout gets its partitions back, and the other
  member sees no change;
- a member whose session expired (stopped with SIGSTOP past
  group.consumer.session.timeout.ms) is fenced when it comes back: LOST,
  then it joins again with epoch 0 and gets partitions back;
- a member that stops calling poll() for max.poll.interval.ms leaves
  (epoch -1; the other member takes everything), reports LOST and joins
  again at its next poll();
- mixed protocols, as samsa-server allows them (no online migration):
  a classic member cannot join a consumer group with members
  (INCONSISTENT_GROUP_PROTOCOL from its poll()), a consumer-protocol
  member cannot join a classic group with members (GROUP_ID_NOT_FOUND,
  fatal as in Java), and the members already there go on reading;
- the key rules of Java 4.0 refuse session.timeout.ms with
  group.protocol=consumer, naming the key;
- `samsa group describe` lists the consumer group's members and their
  partitions (ConsumerGroupDescribe);
- `samsa consume --group` with -X group.protocol=consumer: two runs read
  every record once (the first one's close committed what it printed).
"""

import json
import os
import signal
import subprocess
import time

import pytest

from cprobe import (Probe, build_dir, create_topic, produce, values,
                    wait_split, wait_values)
from samsa_harness import T

PARTS = 3
OVERRIDES = {"group.consumer.heartbeat.interval.ms": "300",
             "group.consumer.session.timeout.ms": "6000"}


def conf(group, **extra):
    c = {"group.id": group, "group.protocol": "consumer",
         "auto.offset.reset": "earliest"}
    c.update({k.replace("_", "."): v for k, v in extra.items()})
    return c


@pytest.fixture
def bs(samsa):
    return samsa.start(overrides=OVERRIDES).bootstrap()


def test_one_member_reads_all(bs):
    topic = "k-one"
    create_topic(bs, topic)
    want = produce(bs, topic, 0, 30)
    pr = Probe(bs, "--subscribe", topic, conf=conf("k1"))
    wait_values([pr], want)
    assert sorted(values([pr])) == sorted(want)
    assert pr.assigned() == {(topic, p) for p in range(PARTS)}
    assert pr.stop()["close"] == "NONE"


def test_two_split_third_joins_and_leaves(bs):
    topic = "k-split"
    create_topic(bs, topic, 6)
    a = Probe(bs, "--subscribe", topic, conf=conf("k2"))
    b = Probe(bs, "--subscribe", topic, conf=conf("k2"))
    wait_split([a, b], topic, parts=6)
    assert len(a.assigned()) == len(b.assigned()) == 3
    want = produce(bs, topic, 0, 60, parts=6)
    wait_values([a, b], want)
    assert sorted(values([a, b])) == sorted(want)       # exactly once
    n_a, n_b = len(a.events()), len(b.events())
    held = {a: a.assigned(), b: b.assigned()}
    c = Probe(bs, "--subscribe", topic, conf=conf("k2"))
    wait_split([a, b, c], topic, parts=6)
    assert len(c.assigned()) == 2
    # incremental: a and b each revoked only the partition that moved to
    # c, and kept the other two
    for pr, n0 in ((a, n_a), (b, n_b)):
        revoked = set()
        for ev, tps in pr.events()[n0:]:
            assert ev != "lost", pr.events()
            if ev == "revoked":
                revoked |= set(tps)
        assert len(revoked) == 1 and revoked <= held[pr], pr.events()
        assert pr.assigned() == held[pr] - revoked
    want |= produce(bs, topic, 60, 60, parts=6)
    wait_values([a, b, c], want)
    assert c.stop()["close"] == "NONE"                  # leaves: epoch -1
    wait_split([a, b], topic, parts=6)
    want |= produce(bs, topic, 120, 60, parts=6)
    wait_values([a, b, c], want)
    time.sleep(T(0.5))
    assert sorted(values([a, b, c])) == sorted(want)    # no loss, no dup
    for pr in (b, a):
        assert pr.stop()["close"] == "NONE"


@pytest.mark.parametrize("where", ["coordinator", "client"])
def test_pattern(bs, where):
    """coordinator: SubscribedTopicRegex (v1); with the default
    metadata.max.age.ms (5 minutes) only the coordinator can see a new
    matching topic within the test's time.  client: with
    exclude.internal.topics=false the client resolves the pattern and
    sends names (the coordinator always leaves internal topics out), and
    finds the new topic at its next metadata refresh (1 s here)."""
    pre = "kp%s-" % where[:2]
    for t in (pre + "a", pre + "b", "kother" + where):
        create_topic(bs, t, 1)
    want = (produce(bs, pre + "a", 0, 5, parts=1)
            | produce(bs, pre + "b", 5, 5, parts=1))
    produce(bs, "kother" + where, 100, 5, parts=1)
    extra = {} if where == "coordinator" else {
        "exclude_internal_topics": "false", "metadata_max_age_ms": "1000"}
    pr = Probe(bs, "--pattern", pre + ".*",
               conf=conf("k10" + where, **extra))
    wait_values([pr], want)
    # a topic created later that matches joins the subscription
    create_topic(bs, pre + "c", 1)
    want |= produce(bs, pre + "c", 10, 5, parts=1)
    wait_values([pr], want, timeout=30)
    time.sleep(T(0.5))
    assert sorted(values([pr])) == sorted(want)
    assert pr.assigned() == {(pre + x, 0) for x in "abc"}
    pr.stop()


def test_close_commits_and_resume(bs):
    topic = "k-resume"
    create_topic(bs, topic)
    first = produce(bs, topic, 0, 30)
    a = Probe(bs, "--subscribe", topic, conf=conf("k3"))
    wait_values([a], first)
    assert a.stop()["close"] == "NONE"      # commit, REVOKED, leave
    second = produce(bs, topic, 30, 30)
    b = Probe(bs, "--subscribe", topic, conf=conf("k3"))
    wait_values([b], second)
    time.sleep(T(0.5))
    assert sorted(values([b])) == sorted(second)
    b.stop()


def test_static_member_comes_back(bs):
    topic = "k-static"
    create_topic(bs, topic)
    a = Probe(bs, "--subscribe", topic,
              conf=conf("k4", group_instance_id="a"))
    b = Probe(bs, "--subscribe", topic,
              conf=conf("k4", group_instance_id="b"))
    wait_split([a, b], topic)
    held_a = a.assigned()
    n_b = len(b.events())
    a.stop()                            # epoch -2: a keeps its place
    a2 = Probe(bs, "--subscribe", topic,
               conf=conf("k4", group_instance_id="a"))
    a2.wait(lambda pr: pr.assigned() == held_a, 10, "a's partitions back")
    time.sleep(T(1.5))
    assert b.events()[n_b:] == [], "b saw a rebalance: %s" % b.events()
    want = produce(bs, topic, 0, 30)
    wait_values([a2, b], want)
    time.sleep(T(0.3))
    assert sorted(values([a2, b])) == sorted(want)
    a2.stop()
    b.stop()


def test_poll_timeout_loses_and_rejoins(bs):
    topic = "k-poll"
    create_topic(bs, topic)
    cc = conf("k5", max_poll_interval_ms="2000")
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


def test_fenced_member_loses_and_rejoins(bs):
    topic = "k-fence"
    create_topic(bs, topic)
    a = Probe(bs, "--subscribe", topic, conf=conf("k11"))
    b = Probe(bs, "--subscribe", topic, conf=conf("k11"))
    wait_split([a, b], topic)
    os.kill(a.p.pid, signal.SIGSTOP)    # no heartbeats: the session ends
    try:
        b.wait(lambda pr: pr.assigned() == {(topic, p)
                                            for p in range(PARTS)},
               20, "b holds every partition once a's session expired")
    finally:
        os.kill(a.p.pid, signal.SIGCONT)
    # a's next heartbeat is refused (UNKNOWN_MEMBER_ID or
    # FENCED_MEMBER_EPOCH): LOST, then a join with epoch 0
    a.wait(lambda pr: any(ev == "lost" for ev, _ in pr.events()), 15,
           "a's partitions reported lost")
    wait_split([a, b], topic)
    want = produce(bs, topic, 0, 30)
    wait_values([a, b], want)
    time.sleep(T(0.3))
    assert sorted(values([a, b])) == sorted(want)
    a.stop()
    b.stop()


def test_mixed_protocols_as_the_broker_allows(bs):
    topic = "k-mixed"
    create_topic(bs, topic)
    k = Probe(bs, "--subscribe", topic, conf=conf("k8"))
    k.wait(lambda pr: len(pr.assigned()) == PARTS, 20, "consumer member in")
    classic = {"group.id": "k8", "auto.offset.reset": "earliest",
               "session.timeout.ms": "6000", "heartbeat.interval.ms": "300"}
    c = Probe(bs, "--subscribe", topic, conf=classic)
    c.wait(lambda pr: any(o.get("err") == "INCONSISTENT_GROUP_PROTOCOL"
                          for o in pr.snapshot()), 20,
           "classic member refused")
    c.kill()
    want = produce(bs, topic, 0, 30)
    wait_values([k], want)
    assert k.stop()["close"] == "NONE"
    # the other way round: a classic group with a member
    c = Probe(bs, "--subscribe", topic, conf=dict(classic, **{"group.id":
                                                               "k9"}))
    c.wait(lambda pr: len(pr.assigned()) == PARTS, 20, "classic member in")
    k = Probe(bs, "--subscribe", topic, conf=conf("k9"))
    k.wait(lambda pr: any(o.get("err") == "GROUP_ID_NOT_FOUND"
                          for o in pr.snapshot()), 20,
           "consumer member refused")
    k.kill()
    time.sleep(T(0.5))
    assert c.assigned() == {(topic, p) for p in range(PARTS)}
    c.stop()


def test_classic_keys_refused(bs):
    for key, val in (("session.timeout.ms", "6000"),
                     ("heartbeat.interval.ms", "300"),
                     ("partition.assignment.strategy", "range")):
        cmd = [os.path.join(build_dir(), "consumer_probe"), "-b", bs]
        for k, v in conf("k6", **{key.replace(".", "_"): val}).items():
            cmd += ["-X", "%s=%s" % (k, v)]
        out = subprocess.run(cmd + ["--subscribe", "x"], capture_output=True,
                             text=True, timeout=T(30))
        errs = [json.loads(line)["config_error"]
                for line in out.stdout.splitlines() if "config_error" in line]
        assert out.returncode != 0
        assert errs and "'%s'" % key in errs[0], out.stdout
        assert "group.protocol=consumer" in errs[0]


def test_group_describe_lists_members(bs):
    topic = "k-desc"
    create_topic(bs, topic)
    a = Probe(bs, "--subscribe", topic, conf=conf("k7"))
    b = Probe(bs, "--subscribe", topic,
              conf=conf("k7", group_instance_id="inst-b"))
    wait_split([a, b], topic)
    cli = os.path.join(build_dir(), "samsa")
    out = subprocess.run([cli, "group", "describe", "k7", "-b", bs,
                          "--json"], capture_output=True, text=True,
                         timeout=T(30))
    assert out.returncode == 0, out.stderr
    [g] = json.loads(out.stdout)
    assert g["type"] == "consumer"
    assert g["state"] == "Stable"
    members = g["members"]
    assert len(members) == 2
    assert {m["group_instance_id"] for m in members} == {None, "inst-b"}
    owned = set()
    for m in members:
        owned |= {(a["topic"], a["partition"]) for a in m["assignment"]}
    assert owned == {(topic, p) for p in range(PARTS)}
    a.stop()
    b.stop()


def test_consume_cli_with_consumer_protocol(bs):
    topic = "k-cli"
    create_topic(bs, topic)
    want = sorted("v%d" % i for i in range(12))
    produce(bs, topic, 0, 12)
    cli = os.path.join(build_dir(), "samsa")
    args = [cli, "consume", topic, "-b", bs, "--group", "k12",
            "-X", "group.protocol=consumer", "--from-beginning"]
    r1 = subprocess.run(args + ["-n", "5"], capture_output=True, text=True,
                        timeout=T(40))
    assert r1.returncode == 0, r1.stderr
    r2 = subprocess.run(args + ["-e"], capture_output=True, text=True,
                        timeout=T(40))
    assert r2.returncode == 0, r2.stderr
    first, rest = r1.stdout.splitlines(), r2.stdout.splitlines()
    assert len(first) == 5
    assert sorted(first + rest) == want     # the close committed exactly
    bad = subprocess.run(args + ["-e", "-X", "session.timeout.ms=9000"],
                         capture_output=True, text=True, timeout=T(40))
    assert bad.returncode == 2
    assert "session.timeout.ms" in bad.stderr
