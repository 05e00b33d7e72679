"""Controller mutation quotas (KIP-599, controller_mutation_rate): partition
mutations per second of CreateTopics, CreatePartitions and DeleteTopics in
Kafka's token bucket, over the raw protocol.  Every server here runs with
controller.quota.window.num=2, so a quota of 2/s holds a burst of 4
partitions (2 windows * 1 s * 2/s) and a bucket D partitions below zero
needs D / 2 seconds to refill: the throttle times are known in advance.

Strict versions (CreateTopics v6+, CreatePartitions v3+, DeleteTopics v5+)
refuse a topic with THROTTLING_QUOTA_EXCEEDED once the bucket is below zero
when it comes (a topic that takes it below zero is still accepted) and
answer the time to wait; older versions accept everything and are
throttled."""

import threading
import time

import pytest

import kwire
from samsa_harness import T
from test_quotas import alter, ok, scrape

ERR_THROTTLING_QUOTA_EXCEEDED = 89
KEY = "controller_mutation_rate"
OVERRIDES = {"controller.quota.window.num": "2"}


def topic(name, partitions):
    return {"name": name, "num_partitions": partitions, "replication_factor": 1}


def set_rate(srv, client_id, rate):
    """Sets (rate) or removes (None) client_id's controller_mutation_rate,
    through a client id without a quota."""
    with srv.connect(client_id="admin") as c:
        ok(alter(c, [({"client-id": client_id}, [(KEY, rate)])]))


def codes(topics):
    return {t["name"]: t["error_code"] for t in topics}


def assert_muted_for(conn, client_id, throttle_ms):
    """The connection is not read until throttle_ms have passed since now
    (less what the answer took to come): an ApiVersions sent at once is
    answered only then."""
    sent = time.monotonic()
    corr = conn.corr()
    conn.send(kwire.api_versions_request(0, corr, client_id), T(5))
    with pytest.raises(kwire.FrameTimeout):
        conn.recv_frame(timeout=max(0.05, throttle_ms / 1000.0 - 0.6))
    payload = conn.recv_frame(timeout=T(10))
    assert kwire.peek_correlation_id(payload) == corr
    return time.monotonic() - sent


def test_strict_create_topics(samsa):
    """CreateTopics v7: the topic that empties the bucket is accepted, the
    next one refused with THROTTLING_QUOTA_EXCEEDED (no message, as Kafka's
    controller answers) and ThrottleTimeMs, and the connection is not read
    for that long; a second connection of the same client id is refused
    too, another client id and validate_only requests are not; after the
    wait the refused topic is created."""
    srv = samsa.start(overrides=OVERRIDES)
    set_rate(srv, "mut", 0.5)                   # a burst of 1 partition
    with srv.connect(client_id="mut") as a:
        # 1 - 1 = 0 >= 0, then 0 - 2 = -2 (accepted: not yet exceeded),
        # then refused: 2 partitions short at 0.5/s is 4 s
        r = a.create_topics([topic("s1", 1), topic("s2", 2), topic("s3", 1)],
                            version=7, timeout=T(20))
        got = time.monotonic()
        assert codes(r["topics"]) == {"s1": 0, "s2": 0,
                                      "s3": ERR_THROTTLING_QUOTA_EXCEEDED}
        assert r["topics"][2]["error_message"] is None
        throttle_ms = r["throttle_time_ms"]
        assert 3000 <= throttle_ms <= 4000, throttle_ms
        # the throttled connection is not read until the delay has passed
        # (KIP-219 for v6+ clients, applied by the broker for every
        # version): an ApiVersions sent now is answered only then
        corr = a.corr()
        a.send(kwire.api_versions_request(0, corr, "mut"), T(5))
        answered = []
        waiter = threading.Thread(target=lambda: answered.append(
            (a.recv_frame(timeout=T(15)), time.monotonic())))
        waiter.start()

        with srv.connect(client_id="mut") as b:
            r = b.create_topics([topic("s4", 1)], version=6, timeout=T(10))
            assert codes(r["topics"]) == {"s4": ERR_THROTTLING_QUOTA_EXCEEDED}
            assert 0 < r["throttle_time_ms"] <= throttle_ms
            # validate_only is neither counted nor refused
            r = b.create_topics([topic("v", 50)], version=7,
                                validate_only=True, timeout=T(10))
            assert codes(r["topics"]) == {"v": 0}
            assert r["throttle_time_ms"] == 0
        with srv.connect(client_id="other") as o:
            r = o.create_topics([topic("o1", 1)], version=7, timeout=T(10))
            assert codes(r["topics"]) == {"o1": 0}
            assert r["throttle_time_ms"] == 0

        waiter.join(T(20))
        assert answered, "ApiVersions on the throttled connection unanswered"
        payload, at = answered[0]
        assert kwire.peek_correlation_id(payload) == corr
        assert at - got >= throttle_ms / 1000.0 - 0.2, (at - got, throttle_ms)
        # 2 s more refill the one credit: s3 goes through
        time.sleep(max(0.0, throttle_ms / 1000.0 + 2.2 - (time.monotonic() - got)))
        r = a.create_topics([topic("s3", 1)], version=7, timeout=T(10))
        assert codes(r["topics"]) == {"s3": 0}
        assert r["throttle_time_ms"] == 0

    fams = scrape(srv)
    labels = {"user": "", "client_id": "mut"}
    assert fams["samsa_controller_mutation_quota"].value(**labels) == 0.5
    assert fams["samsa_controller_mutation_throttled_requests_total"].value(**labels) == 2
    assert fams["samsa_controller_mutation_throttle_time_seconds_total"].value(**labels) > 2.5
    assert fams["samsa_controller_mutation_rate"].value(**labels) > 0
    assert fams["samsa_controller_mutation_tokens"].value(**labels) < 1
    # no sensor for a client id without a quota
    assert not fams["samsa_controller_mutation_quota"].find(client_id="other")


def test_permissive_old_versions(samsa):
    """CreateTopics v5 and DeleteTopics v4 predate strict quotas: every
    topic is accepted and charged, and the response's throttle time (also
    applied to the connection) is how long the bucket needs to refill."""
    srv = samsa.start(overrides=OVERRIDES)
    set_rate(srv, "old", 2.0)
    with srv.connect(client_id="old") as c:
        # 4 - 8 = -4: 2 s
        r = c.create_topics([topic("p1", 4), topic("p2", 4)], version=5,
                            timeout=T(20))
        assert codes(r["topics"]) == {"p1": 0, "p2": 0}
        throttle_ms = r["throttle_time_ms"]
        assert 1500 <= throttle_ms <= 2000, throttle_ms
        waited = assert_muted_for(c, "old", throttle_ms)
        assert waited >= throttle_ms / 1000.0 - 0.2, (waited, throttle_ms)
    with srv.connect(client_id="old") as c:
        # the bucket has refilled to about 0: deleting p1 and p2 takes 8
        # more, still accepted, and 4 s to refill
        body = kwire.encode_delete_topics_request(4, ["p1", "p2"])
        r = c.request(kwire.API_DELETE_TOPICS, 4, body, timeout=T(20))
        assert [x["error_code"] for x in r["responses"]] == [0, 0]
        assert 2500 <= r["throttle_time_ms"] <= 4500, r["throttle_time_ms"]
    with srv.connect() as c:
        assert c.topic_metadata("p1")["error_code"] == kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION


def test_create_partitions_and_delete_topics_counted(samsa):
    """CreatePartitions v3 charges the partitions it adds and DeleteTopics
    v6 those of each topic it deletes; an unknown topic costs nothing;
    validate_only CreatePartitions is not charged; removing the quota lifts
    it at once."""
    srv = samsa.start(overrides=OVERRIDES)
    with srv.connect(client_id="setup") as c:
        r = c.create_topics([topic("d1", 1), topic("d2", 1), topic("d3", 3)],
                            version=7, timeout=T(20))
        assert codes(r["topics"]) == {"d1": 0, "d2": 0, "d3": 0}
    set_rate(srv, "adm", 2.0)
    with srv.connect(client_id="adm") as c:
        rs = c.create_partitions([("d1", 50)], validate_only=True, timeout=T(10))
        assert [x["error_code"] for x in rs] == [0]
        rs = c.delete_topics(["nope"], version=6, timeout=T(10))
        assert [x["error_code"] for x in rs] == [kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION]
        # 4 - 3 = 1 >= 0, then 1 - 9 = -8: 4 s
        rs = c.delete_topics(["d3"], version=6, timeout=T(10))
        assert [x["error_code"] for x in rs] == [0]
        body = kwire.encode_create_partitions_request(3, [("d1", 10, None)])
        r = c.request(kwire.API_CREATE_PARTITIONS, 3, body, timeout=T(10))
        assert [x["error_code"] for x in r["results"]] == [0]
        assert r["throttle_time_ms"] == 0           # strict: not yet refused
    with srv.connect(client_id="adm") as c:
        body = kwire.encode_create_partitions_request(3, [("d2", 2, None)])
        r = c.request(kwire.API_CREATE_PARTITIONS, 3, body, timeout=T(10))
        assert [(x["error_code"], x["error_message"]) for x in r["results"]] == [
            (ERR_THROTTLING_QUOTA_EXCEEDED, None)]
        assert 2500 <= r["throttle_time_ms"] <= 4000, r["throttle_time_ms"]
    with srv.connect(client_id="adm") as c:
        body = kwire.encode_delete_topics_request(6, ["d2"])
        r = c.request(kwire.API_DELETE_TOPICS, 6, body, timeout=T(10))
        assert [x["error_code"] for x in r["responses"]] == [ERR_THROTTLING_QUOTA_EXCEEDED]
        assert r["throttle_time_ms"] > 0
    with srv.connect() as c:
        assert c.topic_metadata("d2")["error_code"] == 0
        assert len(c.topic_metadata("d1")["partitions"]) == 10
    # removing the quota lifts it for the next request
    set_rate(srv, "adm", None)
    with srv.connect(client_id="adm") as c:
        body = kwire.encode_delete_topics_request(6, ["d2"])
        r = c.request(kwire.API_DELETE_TOPICS, 6, body, timeout=T(10))
        assert [x["error_code"] for x in r["responses"]] == [0]
        assert r["throttle_time_ms"] == 0


def test_default_client_id_level(samsa):
    """A quota on the default client id applies to each client id with a
    sensor of its own (Kafka's metric tags), and a more specific one wins."""
    srv = samsa.start(overrides=OVERRIDES)
    with srv.connect(client_id="admin") as c:
        ok(alter(c, [({"client-id": None}, [(KEY, 2.0)]),
                     ({"client-id": "big"}, [(KEY, 1000.0)])]))
    for cid in ("x", "y"):
        with srv.connect(client_id=cid) as c:
            r = c.create_topics([topic(cid + "1", 6), topic(cid + "2", 1)],
                                version=7, timeout=T(20))
            assert codes(r["topics"]) == {cid + "1": 0,
                                          cid + "2": ERR_THROTTLING_QUOTA_EXCEEDED}
            assert r["throttle_time_ms"] > 0
    with srv.connect(client_id="big") as c:
        r = c.create_topics([topic("b1", 6), topic("b2", 1)], version=7,
                            timeout=T(20))
        assert codes(r["topics"]) == {"b1": 0, "b2": 0}
        assert r["throttle_time_ms"] == 0
    fams = scrape(srv)
    q = fams["samsa_controller_mutation_quota"]
    assert q.value(user="", client_id="x") == 2.0
    assert q.value(user="", client_id="y") == 2.0
    assert q.value(user="", client_id="big") == 1000.0


def test_admin_client_retries_after_throttle(samsa):
    """libsamsa's admin client (here through `samsa topic create` and
    `samsa topic delete`, client id samsa-admin) retries a topic refused
    with THROTTLING_QUOTA_EXCEEDED once the throttle time has passed, as
    Kafka's AdminClient does, so the command succeeds after the wait."""
    from cli_util import ok as cli_ok
    srv = samsa.start(overrides=OVERRIDES)
    set_rate(srv, "samsa-admin", 0.5)          # a burst of 1 partition
    bs = srv.bootstrap()
    # 1 - 3 = -2: accepted, the bucket is 4 s short
    cli_ok("topic", "create", "r1", "--partitions", 3, bootstrap=bs)
    # refused at once, created on the retry about 4 s later
    r = cli_ok("topic", "create", "r2", "--partitions", 1, bootstrap=bs)
    assert r.secs >= 3.0, r.secs
    with srv.connect() as c:
        assert c.topic_metadata("r2")["error_code"] == 0
    fams = scrape(srv)
    assert fams["samsa_controller_mutation_throttled_requests_total"].value(
        user="", client_id="samsa-admin") >= 1
