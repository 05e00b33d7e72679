"""Run-time reconfiguration of the handler pool (num.io.threads) through
IncrementalAlterConfigs and AlterConfigs on the BROKER resource, sent by raw
protocol: the pool grows and shrinks while a producer keeps producing, the
thread list follows, DescribeConfigs shows the dynamic value and its source,
Kafka's DynamicThreadPool rule (half to double) and its refusal of
non-dynamic keys hold, validate_only changes nothing, and the values are
kept in the metadata log across a restart."""

import itertools
import threading

import pytest

import kwire
import samsa_harness
from samsa_harness import T, set_broker

BROKER = kwire.RESOURCE_BROKER
OP_SET, OP_DELETE = 0, 1
SRC_DYNAMIC_BROKER, SRC_DYNAMIC_DEFAULT, SRC_STATIC, SRC_DEFAULT = 2, 3, 4, 5

_names = itertools.count(1)


def handlers(srv):
    return sorted(n for n in srv.thread_names() if n.startswith("handler-"))


def pool_sizes_are(srv, n, controller_pool=True):
    """Both the broker's and the controller's pools (a combined process has
    two, each named handler-0.., as Kafka's) have n threads."""
    want = sorted(["handler-%d" % i for i in range(n)] * (2 if controller_pool else 1))
    return samsa_harness.wait_until(lambda: handlers(srv) == want, T(10),
                                    interval=0.05)


def describe(conn, key, name="1", synonyms=False):
    res = conn.describe_configs([(BROKER, name, [key])],
                                include_synonyms=synonyms)[0]
    assert res["error_code"] == 0, res
    return {e["name"]: e for e in res["configs"]}.get(key)


class Producer(threading.Thread):
    """Produces one record per request, acks=all, until stopped; counts
    acknowledged records and errors (a disconnect is counted and the
    record retried on a new connection, as a client would)."""

    def __init__(self, srv, topic):
        super().__init__(daemon=True)
        self.srv, self.topic = srv, topic
        self.acked = 0
        self.errors = []
        self.disconnects = 0
        self.stop_event = threading.Event()

    def run(self):
        conn = None
        while not self.stop_event.is_set():
            try:
                if conn is None:
                    conn = kwire.connect(samsa_harness.HOST, self.srv.port,
                                         timeout=T(10), client_id="reconf-prod")
                p = conn.produce(self.topic, 0, kwire.encode_batch(
                    [kwire.Record(b"v%d" % self.acked)]), timeout=T(10))
                if p["error_code"] != 0:
                    self.errors.append(kwire.error_name(p["error_code"]))
                else:
                    self.acked += 1
            except (kwire.ConnectionClosed, OSError) as e:
                self.disconnects += 1
                if conn is not None:
                    conn.close()
                conn = None
                if self.disconnects > 50:
                    self.errors.append("too many disconnects: %r" % e)
                    return
        if conn is not None:
            conn.close()

    def finish(self):
        self.stop_event.set()
        self.join(T(20))
        assert not self.is_alive()


@pytest.fixture
def srv(samsa):
    return samsa.start({"num.io.threads": "8", "num.network.threads": "3"})


def test_io_threads_resize_while_producing(srv, samsa):
    topic = "reconf-%d" % next(_names)
    with srv.connect(timeout=T(10)) as conn:
        assert conn.create_topic(topic)["error_code"] == 0
        assert pool_sizes_are(srv, 8), handlers(srv)
        e = describe(conn, "num.io.threads")
        assert (e["value"], e["source"], e["read_only"]) == ("8", SRC_STATIC, False)

        prod = Producer(srv, topic)
        prod.start()
        assert samsa_harness.wait_until(lambda: prod.acked >= 20, T(10))

        # 8 -> 2 in two steps (Kafka refuses less than half the current
        # value in one): six handlers finish what they hold and leave
        code, msg = set_broker(conn, "num.io.threads", "2")
        assert code == kwire.ERR_INVALID_CONFIG, (code, msg)
        assert msg == ("Dynamic thread count update validation failed for "
                       "num.io.threads=2, value should be at least half the "
                       "current value 8")
        assert set_broker(conn, "num.io.threads", "4") == (0, None)
        assert pool_sizes_are(srv, 4), handlers(srv)
        assert set_broker(conn, "num.io.threads", "2") == (0, None)
        assert pool_sizes_are(srv, 2), handlers(srv)
        e = describe(conn, "num.io.threads", synonyms=True)
        assert (e["value"], e["source"], e["read_only"]) == (
            "2", SRC_DYNAMIC_BROKER, False)
        assert [(s["value"], s["source"]) for s in e["synonyms"]] == [
            ("2", SRC_DYNAMIC_BROKER), ("8", SRC_STATIC)]
        n = prod.acked
        assert samsa_harness.wait_until(lambda: prod.acked >= n + 20, T(10))

        # 2 -> 5 is more than double: refused, as Kafka's DynamicThreadPool
        # does, with INVALID_CONFIG (the KAFKA-13609 intent; Kafka 3.x
        # answers INVALID_REQUEST), nothing changes
        code, msg = set_broker(conn, "num.io.threads", "5")
        assert code == kwire.ERR_INVALID_CONFIG, (code, msg)
        assert msg == ("Dynamic thread count update validation failed for "
                       "num.io.threads=5, value should not be greater than "
                       "double the current value 2")
        # 2 -> 4 -> 8 back, while producing
        assert set_broker(conn, "num.io.threads", "4") == (0, None)
        assert pool_sizes_are(srv, 4), handlers(srv)
        assert set_broker(conn, "num.io.threads", "8") == (0, None)
        assert pool_sizes_are(srv, 8), handlers(srv)
        n = prod.acked
        assert samsa_harness.wait_until(lambda: prod.acked >= n + 20, T(10))
        prod.finish()
        assert prod.errors == [] and prod.disconnects == 0, (prod.errors,
                                                            prod.disconnects)
        # no record lost or doubled: the log holds exactly what was acked
        end = conn.list_offsets(topic, 0, -1)["offset"]
        assert end == prod.acked

        # 8 -> 4 then restart: the metadata log keeps the value
        assert set_broker(conn, "num.io.threads", "4") == (0, None)
        assert pool_sizes_are(srv, 4)
    assert srv.stop() == []
    over = {k: v for k, v in srv.overrides.items() if k != "listeners"}
    srv2 = samsa.start(overrides=over, workdir=srv.workdir)
    assert pool_sizes_are(srv2, 4), handlers(srv2)
    with srv2.connect(timeout=T(10)) as conn:
        e = describe(conn, "num.io.threads")
        assert (e["value"], e["source"]) == ("4", SRC_DYNAMIC_BROKER)
        # DELETE falls back to the static value
        assert set_broker(conn, "num.io.threads", None, op=OP_DELETE) == (0, None)
        assert pool_sizes_are(srv2, 8)
        e = describe(conn, "num.io.threads")
        assert (e["value"], e["source"]) == ("8", SRC_STATIC)


def test_validation_and_levels(srv):
    with srv.connect(timeout=T(10)) as conn:
        # validate_only: checked, answered, not applied
        assert set_broker(conn, "num.io.threads", "4", validate_only=True) == (0, None)
        assert describe(conn, "num.io.threads")["source"] == SRC_STATIC
        code, msg = set_broker(conn, "num.io.threads", "17", validate_only=True)
        assert code == kwire.ERR_INVALID_CONFIG
        code, msg = set_broker(conn, "num.io.threads", "0")
        assert (code, msg) == (kwire.ERR_INVALID_CONFIG,
                               "Dynamic thread count update validation failed "
                               "for num.io.threads=0, value should be at least 1")
        code, msg = set_broker(conn, "num.io.threads", "many")
        assert code == kwire.ERR_INVALID_CONFIG
        assert msg == ("Invalid value many for configuration num.io.threads: "
                       "Not a number of type INT")
        # a key that cannot change at run time: Kafka's message
        r = conn.incremental_alter_configs([(BROKER, "1", [
            ("log.dirs", OP_SET, "/tmp/x"), ("num.io.threads", OP_SET, "4")])])[0]
        assert r["error_code"] == kwire.ERR_INVALID_CONFIG
        assert r["error_message"] == "Cannot update these configs dynamically: Set(log.dirs)"
        # a resource name that is no broker id: a malformed request
        r = conn.incremental_alter_configs([(BROKER, "x1", [
            ("num.io.threads", OP_SET, "4")])])[0]
        assert r["error_code"] == kwire.ERR_INVALID_REQUEST
        assert handlers(srv).count("handler-7") == 2      # nothing applied

        # the cluster-wide default ("") applies where the broker has none
        assert set_broker(conn, "num.io.threads", "6", name="") == (0, None)
        assert pool_sizes_are(srv, 6)
        e = describe(conn, "num.io.threads")
        assert (e["value"], e["source"]) == ("6", SRC_DYNAMIC_DEFAULT)
        res = conn.describe_configs([(BROKER, "", None)])[0]
        assert res["error_code"] == 0
        assert [(c["name"], c["value"], c["source"]) for c in res["configs"]] == [
            ("num.io.threads", "6", SRC_DYNAMIC_DEFAULT)]
        # the per-broker value wins over the default
        assert set_broker(conn, "num.io.threads", "3") == (0, None)
        assert pool_sizes_are(srv, 3)
        # legacy AlterConfigs replaces the broker's set: 3 -> 5 is allowed,
        # then an empty set removes it (back to the default 6)
        r = conn.alter_configs([(BROKER, "1", {"num.io.threads": "5"})])[0]
        assert r["error_code"] == 0, r
        assert pool_sizes_are(srv, 5)
        r = conn.alter_configs([(BROKER, "1", {})])[0]
        assert r["error_code"] == 0, r
        assert pool_sizes_are(srv, 6)
        r = conn.alter_configs([(BROKER, "1", {"num.io.threads": "13"})])[0]
        assert r["error_code"] == kwire.ERR_INVALID_CONFIG
        assert r["error_message"].endswith("double the current value 6")
