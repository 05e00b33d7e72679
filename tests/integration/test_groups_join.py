"""A member waiting in its first JoinGroup is not expired by its session
timeout (issue 15, part 2).

Kafka's coordinator arms a new member's expiration with
NewMemberJoinTimeoutMs (5 minutes) when it is added, not with
session.timeout.ms: it has no member id to heartbeat with and its socket is
muted while the join is parked. Its session timer starts when the join
completes. An existing member waiting in a join is kept alive whatever its
heartbeats; the rebalance timeout bounds that wait.

- members arriving one by one with the default
  group.initial.rebalance.delay.ms (3000) extend the first join past their
  6000 ms session timeout; every one of them is in generation 1,
- librdkafka's close-and-rejoin loop of 10 rounds takes about a delay per
  round, not a session timeout or more,
- a new member parked in a join that waits for an existing member's
  rebalance timeout is still there past its session timeout (Kafka would
  remove it only after 5 minutes, which the test does not wait for).
"""

import threading
import time

import test_groups_protocol as gp
from samsa_harness import T

DELAY_S = 3.0                       # group.initial.rebalance.delay.ms default
SESSION_MS = 6000                   # group.min.session.timeout.ms default
LOOP_SESSION_MS = 2000              # shorter than the delay
OVERRIDES = {"offsets.topic.num.partitions": "1"}


class Joiner(threading.Thread):
    """One raw-protocol member's first join (the KIP-394 handshake, then the
    parked join); result and when it came back."""

    def __init__(self, srv, group, session=SESSION_MS, rebalance=30000):
        super().__init__(daemon=True)
        self.srv, self.group = srv, group
        self.session, self.rebalance = session, rebalance
        self.first = self.result = self.error = None
        self.done_at = None
        self.ready = threading.Event()

    def run(self):
        try:
            with self.srv.connect(timeout=T(60)) as conn:
                self.first = gp.join(conn, self.group, session=self.session,
                                     rebalance=self.rebalance, version=5)
                self.ready.set()
                if self.first["error"] != gp.E_MEMBER_ID_REQUIRED:
                    return
                w = gp.Writer().string(self.group).i32(self.session)
                w.i32(self.rebalance).string(self.first["member"])
                w.string(None).string("consumer")
                w.array([("range", gp.consumer_meta(["t"]))],
                        lambda ww, p: ww.string(p[0]).blob(p[1]))
                r = conn.request_raw(gp.JOIN, 5, w.bytes(), T(60))
                self.result = {"throttle": r.i32(), "error": r.i16(),
                               "generation": r.i32(),
                               "protocol": r.string(nullable=True),
                               "leader": r.string(), "member": r.string()}
                self.result["members"] = r.array(
                    lambda rr: (rr.string(), rr.string(nullable=True),
                                rr.blob()))
        except Exception as e:      # noqa: BLE001 - reported by the test
            self.error = e
        finally:
            self.done_at = time.monotonic()
            self.ready.set()


def test_first_join_longer_than_session_timeout_keeps_every_member(samsa):
    """Arrivals at 0, 1.5 and 4.5 s: the initial delay runs 0-3, 3-6 and
    6-9 s, so the join completes at ~9 s, past the first members' 6 s
    session timeout. Everyone is answered NONE in one generation."""
    srv = samsa.start(overrides=OVERRIDES)
    with srv.connect() as conn:
        gp.create_topic(conn, "t", 1)
    start = time.monotonic()
    joiners = []
    for at in (0.0, 1.5, 4.5):
        time.sleep(max(0.0, start + at - time.monotonic()))
        j = Joiner(srv, "slowjoin")
        j.start()
        assert j.ready.wait(T(10)), "no MEMBER_ID_REQUIRED answer"
        joiners.append(j)
    for j in joiners:
        j.join(T(40))
        assert not j.is_alive(), "a join never came back"
        assert j.error is None, j.error
        assert j.first["error"] == gp.E_MEMBER_ID_REQUIRED, j.first
    errors = [j.result["error"] for j in joiners]
    assert errors == [gp.E_NONE] * 3, (
        "answers %s (25 = UNKNOWN_MEMBER_ID: removed by the session timeout "
        "while waiting in its first join)" % errors)
    assert {j.result["generation"] for j in joiners} == {1}
    leader = [j for j in joiners if j.result["leader"] == j.result["member"]]
    assert len(leader) == 1
    assert sorted(m[0] for m in leader[0].result["members"]) == \
        sorted(j.result["member"] for j in joiners)
    took = max(j.done_at for j in joiners) - start
    assert SESSION_MS / 1000.0 + 0.5 <= took < 3 * DELAY_S + T(3), took


def test_confluent_close_and_rejoin_loop_is_bounded(samsa):
    """librdkafka 2.0.2 consumers of one group, one after the other: each
    subscribes, waits for its assignment and closes, so each round's join
    is a first join into an Empty group and lasts the initial delay. With a
    session timeout shorter than that delay (group.min.session.timeout.ms
    lowered for it; the delay is the default) every round still costs about
    the delay, not a removal, a rejoin and another delay."""
    from confluent_kafka import Consumer
    srv = samsa.start(overrides=dict(OVERRIDES, **{
        "group.min.session.timeout.ms": "1000"}))
    with srv.connect() as conn:
        gp.create_topic(conn, "loop", 3)
    rounds, per_round = 10, DELAY_S + 2.0
    budget = T(rounds * per_round)
    start = time.monotonic()
    took = []
    for i in range(rounds):
        assigned = []
        t0 = time.monotonic()
        c = Consumer({"bootstrap.servers": srv.bootstrap(), "group.id": "loop",
                      "session.timeout.ms": LOOP_SESSION_MS,
                      "heartbeat.interval.ms": 500,
                      "enable.auto.commit": False,
                      "auto.offset.reset": "earliest"})
        try:
            c.subscribe(["loop"],
                        on_assign=lambda cc, ps: assigned.extend(ps))
            while not assigned:
                c.poll(0.1)
                assert time.monotonic() - start < budget, (
                    "round %d not assigned after %.1f s; rounds so far took "
                    "%s s (budget %.0f s = %d x (delay + 2 s))"
                    % (i, time.monotonic() - t0,
                       ["%.1f" % x for x in took], budget, rounds))
        finally:
            c.close()
        took.append(time.monotonic() - t0)
        assert len(assigned) == 3, assigned
    total = time.monotonic() - start
    print("close-and-rejoin rounds: %s s, %.1f s in all"
          % (["%.1f" % x for x in took], total))
    assert total < budget, (total, took)
    assert "has no heartbeat" not in srv.stderr_text(), srv.stderr_tail()


def test_new_member_in_join_outlives_its_session_timeout(samsa):
    """A stable member X with a long rebalance timeout keeps heartbeating but
    does not rejoin, so the join a new member N waits in lasts past N's
    session timeout. N is still a member then, and is in the generation once
    X rejoins. (Kafka removes such a member at NewMemberJoinTimeoutMs, 5
    minutes, answering UNKNOWN_MEMBER_ID; not waited for here.)"""
    srv = samsa.start(overrides=OVERRIDES)
    group = "longjoin"
    with srv.connect() as conn:
        gp.create_topic(conn, "t", 1)
        first = gp.join(conn, group, session=SESSION_MS, rebalance=60000,
                        version=4)
        x = first["member"]
        j = gp.join(conn, group, member=x, session=SESSION_MS,
                    rebalance=60000, version=4)
        assert j["error"] == gp.E_NONE, j
        assert gp.sync(conn, group, j["generation"], x,
                       [(x, b"A")])["error"] == gp.E_NONE
        gen = j["generation"]
        n = Joiner(srv, group, session=SESSION_MS, rebalance=60000)
        n.start()
        assert n.ready.wait(T(10)) and n.first["error"] == \
            gp.E_MEMBER_ID_REQUIRED, n.first
        parked = time.monotonic()
        wait_s = SESSION_MS / 1000.0 + 2.0
        while time.monotonic() - parked < wait_s:
            assert gp.heartbeat(conn, group, gen, x) in (
                gp.E_NONE, gp.E_REBALANCING)
            time.sleep(0.5)
        assert n.is_alive(), (
            "the new member's join was answered after %.1f s: %s"
            % (n.done_at - parked, n.result))
        d = gp.describe(conn, group)
        assert d["state"] == "PreparingRebalance", d
        assert sorted(m["id"] for m in d["members"]) == \
            sorted([x, n.first["member"]]), d
        j = gp.join(conn, group, member=x, session=SESSION_MS,
                    rebalance=60000, version=4)
        assert j["error"] == gp.E_NONE, j
        n.join(T(10))
        assert n.error is None, n.error
        assert n.result["error"] == gp.E_NONE, n.result
        assert n.result["generation"] == j["generation"] == gen + 1
    assert "has no heartbeat" not in srv.stderr_text(), srv.stderr_tail()
