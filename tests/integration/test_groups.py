"""Consumer groups with real clients: confluent_kafka (librdkafka 2.0.2),
kafka-python 2.0.2 and kafkajs 2.2.4 each

- one group consumer reads every record of a 3-partition topic,
- two consumers of one group split the partitions and together read every
  record exactly once,
- a third consumer joining causes a rebalance (it gets partitions) and no
  record is lost,
- commit, close, and a new consumer of the group resumes right after the
  committed offsets,
- a samsa-server restart keeps the committed offsets.

Then: a static member (group.instance.id) that restarts within its session
timeout causes no rebalance (librdkafka); admin list/describe/delete from
confluent_kafka, kafka-python and kafkajs, OffsetDelete, committed offsets
and lag. Raw protocol checks of the coordinator's errors are in
test_groups_protocol.py.
"""

import json
import os
import shutil
import subprocess
import threading
import time

import pytest

from samsa_harness import T

HERE = os.path.dirname(os.path.abspath(__file__))
JS_DIR = os.path.join(HERE, "js")
CLIENTS = ["confluent_kafka", "kafka_python", "kafkajs"]
PARTS = 3
OVERRIDES = {"group.initial.rebalance.delay.ms": "200",
             "group.min.session.timeout.ms": "1000"}


def node():
    return shutil.which("node") or shutil.which("nodejs")


def need(client):
    if client == "kafkajs" and (not node() or not os.path.isdir(
            os.path.join(JS_DIR, "node_modules", "kafkajs"))):
        pytest.fail("node or kafkajs missing: run scripts/deps.sh")


# -- producing ---------------------------------------------------------------

def create_topic(bs, topic, parts=PARTS):
    from confluent_kafka.admin import AdminClient, NewTopic
    a = AdminClient({"bootstrap.servers": bs})
    a.create_topics([NewTopic(topic, parts, 1)])[topic].result(T(20))


def produce(bs, topic, start, n):
    """Records "v<i>" for i in [start, start+n), round-robin over the
    partitions; returns the values."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bs, "linger.ms": 5})
    vals = []
    for i in range(start, start + n):
        p.produce(topic, key=b"k%d" % i, value=b"v%d" % i, partition=i % PARTS)
        vals.append("v%d" % i)
    assert p.flush(T(20)) == 0
    return vals


# -- one adapter per client ----------------------------------------------------

class ConfluentConsumer:
    def __init__(self, bs, group, topic, instance_id=None, session_ms=10000):
        from confluent_kafka import Consumer
        self.events = []
        conf = {"bootstrap.servers": bs, "group.id": group,
                "auto.offset.reset": "earliest", "enable.auto.commit": False,
                "session.timeout.ms": session_ms,
                "heartbeat.interval.ms": 300, "topic.metadata.refresh.interval.ms": 1000}
        if instance_id:
            conf["group.instance.id"] = instance_id
        self.c = Consumer(conf)
        self.assigned = set()
        self.c.subscribe([topic], on_assign=self._on_assign,
                         on_revoke=self._on_revoke)
        self.seen = []

    def _on_assign(self, c, parts):
        self.assigned = {p.partition for p in parts}
        self.events.append(("assign", sorted(self.assigned)))

    def _on_revoke(self, c, parts):
        self.events.append(("revoke", sorted(p.partition for p in parts)))
        self.assigned = set()
        self._commit(c, during_rebalance=False)

    @staticmethod
    def _commit(c, during_rebalance):
        """Commits what was consumed; the only error taken is "nothing to
        commit" (_NO_OFFSET), and while a rebalance may be under way also
        the codes Kafka answers a commit of the old generation with."""
        from confluent_kafka import KafkaError, KafkaException
        ok = {KafkaError._NO_OFFSET}
        if during_rebalance:
            ok |= {KafkaError.REBALANCE_IN_PROGRESS, KafkaError.ILLEGAL_GENERATION}
        try:
            c.commit(asynchronous=False)
        except KafkaException as e:
            if e.args[0].code() not in ok:
                raise

    def poll(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            m = self.c.poll(0.1)
            if m is None or m.error():
                continue
            self.seen.append((m.partition(), m.offset(), m.value().decode()))

    def commit(self, during_rebalance=False):
        self._commit(self.c, during_rebalance)

    def close(self):
        self.c.close()


class KafkaPythonConsumer:
    def __init__(self, bs, group, topic, instance_id=None, session_ms=10000):
        from kafka import KafkaConsumer
        from kafka.consumer.subscription_state import ConsumerRebalanceListener
        me = self

        class Listener(ConsumerRebalanceListener):
            def on_partitions_revoked(self, revoked):
                me.assigned = set()

            def on_partitions_assigned(self, assigned):
                me.assigned = {tp.partition for tp in assigned}

        assert instance_id is None
        self.c = KafkaConsumer(bootstrap_servers=bs, group_id=group,
                               auto_offset_reset="earliest",
                               enable_auto_commit=False,
                               session_timeout_ms=session_ms,
                               heartbeat_interval_ms=300,
                               max_poll_interval_ms=10000,
                               metadata_max_age_ms=1000)
        self.assigned = set()
        self.c.subscribe([topic], listener=Listener())
        self.seen = []

    def poll(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            for tp, msgs in self.c.poll(timeout_ms=100).items():
                for m in msgs:
                    self.seen.append((tp.partition, m.offset, m.value.decode()))

    def commit(self, during_rebalance=False):
        """A commit must succeed, but while a rebalance may be under way,
        where Kafka refuses the old generation's commit."""
        from kafka.errors import CommitFailedError, RebalanceInProgressError
        try:
            self.c.commit()
        except (CommitFailedError, RebalanceInProgressError):
            if not during_rebalance:
                raise

    def close(self):
        self.c.close(autocommit=False)


class KafkajsConsumer:
    """node js/group_consumer.js; commits every record it prints."""

    def __init__(self, bs, group, topic, instance_id=None, session_ms=10000):
        assert instance_id is None
        self.p = subprocess.Popen([node(), "group_consumer.js", bs, group, topic,
                                   str(session_ms)],
                                  cwd=JS_DIR, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        self.assigned = set()
        self.seen = []
        self.closed = False
        self.lock = threading.Lock()
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.p.stdout:
            try:
                d = json.loads(line)
            except ValueError:
                continue
            with self.lock:
                if "assigned" in d:
                    self.assigned = set(d["assigned"])
                elif "closed" in d:
                    self.closed = True
                else:
                    self.seen.append((d["p"], d["o"], d["v"]))

    def poll(self, seconds):
        time.sleep(seconds)

    def commit(self, during_rebalance=False):
        time.sleep(0.3)                 # kafkajs commits after each record

    def close(self):
        try:
            self.p.stdin.write("stop\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            pass
        try:
            self.p.wait(T(30))
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        assert self.closed, "kafkajs consumer did not close: %s" % self.p.stderr.read()


ADAPTERS = {"confluent_kafka": ConfluentConsumer,
            "kafka_python": KafkaPythonConsumer, "kafkajs": KafkajsConsumer}


def values(consumers):
    out = []
    for c in consumers:
        out += [v for _, _, v in c.seen]
    return out


def poll_all(consumers, seconds):
    """Poll every consumer at the same time, each on its own thread (a
    consumer may block in a rebalance until the others rejoin)."""
    ts = [threading.Thread(target=c.poll, args=(seconds,)) for c in consumers]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def poll_until(consumers, pred, timeout, step=0.3):
    end = time.time() + timeout
    while time.time() < end:
        poll_all(consumers, step)
        if pred():
            return True
    return pred()


def settled(consumers, n):
    """Every consumer has partitions, together all of them, disjoint."""
    sets = [c.assigned for c in consumers]
    if any(not s for s in sets[:n]):
        return False
    union = set().union(*sets)
    return union == set(range(PARTS)) and sum(len(s) for s in sets) == PARTS


@pytest.fixture
def srv(samsa):
    return samsa.start(overrides=OVERRIDES)


# -- the five scenarios, per client ------------------------------------------

@pytest.mark.parametrize("client", CLIENTS)
def test_one_consumer_reads_everything(srv, client):
    need(client)
    bs = srv.bootstrap()
    create_topic(bs, "one")
    want = produce(bs, "one", 0, 300)
    c = ADAPTERS[client](bs, "g-one-" + client, "one")
    try:
        assert poll_until([c], lambda: len(c.seen) >= 300, T(60)), \
            "read %d of 300" % len(c.seen)
        assert sorted(values([c])) == sorted(want)
        assert c.assigned == set(range(PARTS))
    finally:
        c.close()


@pytest.mark.parametrize("client", CLIENTS)
def test_two_consumers_split_exactly_once(srv, client):
    need(client)
    bs = srv.bootstrap()
    create_topic(bs, "two")
    group = "g-two-" + client
    cs = [ADAPTERS[client](bs, group, "two") for _ in range(2)]
    try:
        assert poll_until(cs, lambda: settled(cs, 2), T(60)), \
            "assignments %s" % [c.assigned for c in cs]
        want = produce(bs, "two", 0, 300)
        assert poll_until(cs, lambda: len(values(cs)) >= 300, T(60))
        poll_until(cs, lambda: False, 1.0)          # nothing more comes
        got = values(cs)
        assert len(got) == 300 and sorted(got) == sorted(want)
        assert all(c.seen for c in cs)
        for c in cs:                                 # each read only its own
            assert {p for p, _, _ in c.seen} <= c.assigned
    finally:
        for c in cs:
            c.close()


@pytest.mark.parametrize("client", CLIENTS)
def test_third_consumer_rebalances_without_loss(srv, client):
    need(client)
    bs = srv.bootstrap()
    create_topic(bs, "three")
    group = "g-three-" + client
    cs = [ADAPTERS[client](bs, group, "three") for _ in range(2)]
    try:
        assert poll_until(cs, lambda: settled(cs, 2), T(60))
        want = produce(bs, "three", 0, 150)
        poll_until(cs, lambda: len(values(cs)) >= 60, T(30))
        for c in cs:
            c.commit()
        cs.append(ADAPTERS[client](bs, group, "three"))
        want += produce(bs, "three", 150, 150)

        def done():
            for c in cs:
                c.commit(during_rebalance=True)
            return settled(cs, 3) and set(values(cs)) >= set(want)
        assert poll_until(cs, done, T(90)), \
            "missing %d, assignments %s" % (len(set(want) - set(values(cs))),
                                            [c.assigned for c in cs])
        assert cs[2].assigned, "the third consumer got no partition"
    finally:
        for c in cs:
            c.close()


@pytest.mark.parametrize("client", CLIENTS)
def test_commit_close_resume(srv, client):
    need(client)
    bs = srv.bootstrap()
    create_topic(bs, "resume")
    group = "g-resume-" + client
    first = produce(bs, "resume", 0, 90)
    c = ADAPTERS[client](bs, group, "resume")
    try:
        assert poll_until([c], lambda: len(c.seen) >= 90, T(60))
        c.commit()
    finally:
        c.close()
    assert sorted(values([c])) == sorted(first)
    second = produce(bs, "resume", 90, 60)
    c2 = ADAPTERS[client](bs, group, "resume")
    try:
        assert poll_until([c2], lambda: len(c2.seen) >= 60, T(60))
        poll_until([c2], lambda: False, 1.0)
        assert sorted(values([c2])) == sorted(second), "re-read or lost records"
        assert min(o for _, o, _ in c2.seen) == 30   # 30 per partition before
    finally:
        c2.close()


def restart(samsa, srv):
    problems = srv.stop()
    assert problems == [], problems
    return samsa.start(overrides=OVERRIDES, workdir=srv.workdir)


@pytest.mark.parametrize("client", CLIENTS)
def test_server_restart_keeps_committed_offsets(samsa, client):
    need(client)
    srv = samsa.start(overrides=OVERRIDES)
    create_topic(srv.bootstrap(), "keep")
    group = "g-keep-" + client
    produce(srv.bootstrap(), "keep", 0, 60)
    c = ADAPTERS[client](srv.bootstrap(), group, "keep")
    try:
        assert poll_until([c], lambda: len(c.seen) >= 60, T(60))
        c.commit()
    finally:
        c.close()
    srv = restart(samsa, srv)
    second = produce(srv.bootstrap(), "keep", 60, 30)
    c2 = ADAPTERS[client](srv.bootstrap(), group, "keep")
    try:
        assert poll_until([c2], lambda: len(c2.seen) >= 30, T(60))
        poll_until([c2], lambda: False, 1.0)
        assert sorted(values([c2])) == sorted(second)
    finally:
        c2.close()


# -- static membership -------------------------------------------------------------

def test_static_member_restart_causes_no_rebalance(srv):
    bs = srv.bootstrap()
    create_topic(bs, "static")
    group = "g-static"
    a = ConfluentConsumer(bs, group, "static", instance_id="static-a",
                          session_ms=10000)
    b = ConfluentConsumer(bs, group, "static", instance_id="static-b",
                          session_ms=10000)
    cs = [a, b]
    try:
        assert poll_until(cs, lambda: settled(cs, 2), T(60))
        poll_until(cs, lambda: False, 1.0)
        b_events = list(b.events)
        b_assigned = set(b.assigned)
        a.close()                       # a static member sends no LeaveGroup
        a2 = ConfluentConsumer(bs, group, "static", instance_id="static-a",
                               session_ms=10000)
        cs = [a2, b]
        assert poll_until(cs, lambda: settled(cs, 2), T(30))
        poll_until(cs, lambda: False, 3.0)
        assert b.events == b_events, "b saw a rebalance: %s" % b.events
        assert b.assigned == b_assigned
        assert a2.assigned == set(range(PARTS)) - b_assigned
    finally:
        for c in cs:
            c.close()


def test_cooperative_sticky_keeps_partitions(srv):
    """librdkafka's cooperative-sticky assignor: a second member takes
    partitions over incrementally; the first keeps the rest throughout."""
    from confluent_kafka import Consumer
    bs = srv.bootstrap()
    create_topic(bs, "coop")
    events = {0: [], 1: []}

    def mk(i):
        c = Consumer({"bootstrap.servers": bs, "group.id": "g-coop",
                      "partition.assignment.strategy": "cooperative-sticky",
                      "auto.offset.reset": "earliest",
                      "session.timeout.ms": 10000, "heartbeat.interval.ms": 300})
        c.subscribe(["coop"],
                    on_assign=lambda c_, ps: events[i].append(
                        ("assign", sorted(p.partition for p in ps))),
                    on_revoke=lambda c_, ps: events[i].append(
                        ("revoke", sorted(p.partition for p in ps))))
        return c

    c0 = mk(0)
    end = time.time() + T(30)
    while time.time() < end and not events[0]:
        c0.poll(0.1)
    assert events[0] == [("assign", [0, 1, 2])]
    c1 = mk(1)
    end = time.time() + T(40)
    while time.time() < end:
        c0.poll(0.1)
        c1.poll(0.1)
        got1 = {p for e, ps in events[1] if e == "assign" for p in ps}
        if got1:
            break
    for _ in range(20):
        c0.poll(0.1)
        c1.poll(0.1)
    try:
        revoked0 = {p for e, ps in events[0] if e == "revoke" for p in ps}
        got1 = {p for e, ps in events[1] if e == "assign" for p in ps}
        assert got1, events
        assert revoked0 == got1, "only moved partitions are revoked: %s" % events
        assert len(revoked0) < PARTS
    finally:
        c0.close()
        c1.close()


# -- admin ------------------------------------------------------------------------

def js_admin(bs, *args):
    r = subprocess.run([node(), "group_admin.js", bs] + list(args), cwd=JS_DIR,
                       capture_output=True, text=True, timeout=T(60))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_admin_list_describe_offsets_delete(srv):
    from confluent_kafka.admin import AdminClient
    from kafka import KafkaAdminClient, TopicPartition as KTP
    from kafka import KafkaConsumer
    bs = srv.bootstrap()
    create_topic(bs, "adm")
    produce(bs, "adm", 0, 30)
    c = ConfluentConsumer(bs, "g-adm", "adm")
    try:
        assert poll_until([c], lambda: len(c.seen) >= 30, T(60))
        c.commit()
        produce(bs, "adm", 30, 9)                   # lag 3 per partition

        # confluent_kafka: list_groups shows members and the state
        ca = AdminClient({"bootstrap.servers": bs})
        groups = {g.id: g for g in ca.list_groups(timeout=T(10))}
        assert "g-adm" in groups
        g = ca.list_groups("g-adm", timeout=T(10))[0]
        assert g.state == "Stable" and g.protocol_type == "consumer"
        assert g.protocol == "range" and len(g.members) == 1
        assert g.members[0].assignment, "no assignment shown"

        # kafka-python: list, describe, committed offsets, lag
        ka = KafkaAdminClient(bootstrap_servers=bs)
        assert ("g-adm", "consumer") in ka.list_consumer_groups()
        d = ka.describe_consumer_groups(["g-adm"])[0]
        assert d.state == "Stable" and len(d.members) == 1
        assert d.members[0].member_assignment.assignment[0][0] == "adm"
        offs = ka.list_consumer_group_offsets("g-adm")
        assert {tp.partition: om.offset for tp, om in offs.items()} == \
            {0: 10, 1: 10, 2: 10}
        kc = KafkaConsumer(bootstrap_servers=bs)
        ends = kc.end_offsets([KTP("adm", p) for p in range(PARTS)])
        kc.close()
        lag = {tp.partition: ends[tp] - offs[tp].offset for tp in offs}
        assert lag == {0: 3, 1: 3, 2: 3}

        # delete refused while the group has members
        r = ka.delete_consumer_groups(["g-adm"])
        assert r[0][1].errno == 68, r               # NON_EMPTY_GROUP
    finally:
        c.close()
    r = ka.delete_consumer_groups(["g-adm"])
    assert r[0][1].errno == 0, r
    assert "g-adm" not in [g for g, _ in ka.list_consumer_groups()]
    r = ka.delete_consumer_groups(["g-adm"])
    assert r[0][1].errno == 69, r                   # GROUP_ID_NOT_FOUND
    ka.close()


def test_admin_kafkajs(srv):
    need("kafkajs")
    bs = srv.bootstrap()
    create_topic(bs, "adm-js")
    produce(bs, "adm-js", 0, 30)
    c = ConfluentConsumer(bs, "g-adm-js", "adm-js")
    try:
        assert poll_until([c], lambda: len(c.seen) >= 30, T(60))
        c.commit()
        lst = js_admin(bs, "list")
        assert {"groupId": "g-adm-js", "protocolType": "consumer"} in lst["groups"]
        d = js_admin(bs, "describe", "g-adm-js")["groups"][0]
        assert d["state"] == "Stable" and d["protocol"] == "range"
        assert len(d["members"]) == 1 and d["members"][0]["clientHost"].startswith("/")
        offs = js_admin(bs, "offsets", "g-adm-js", "adm-js")
        got = {p["partition"]: p["offset"] for p in offs[0]["partitions"]}
        assert got == {0: "10", 1: "10", 2: "10"}
    finally:
        c.close()
    assert js_admin(bs, "delete", "g-adm-js")[0]["errorCode"] == 0
    assert "g-adm-js" not in [g["groupId"] for g in js_admin(bs, "list")["groups"]]
