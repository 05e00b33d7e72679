"""pytest glue for the differential tests: one Apache Kafka and one
samsa-server per test module (the `pair` fixture), both single-node, with
topic auto-creation off, no group rebalance delay, and one partition for
__consumer_offsets and __transaction_state on both."""

import os
import sys

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
sys.path.insert(0, os.path.join(_HERE, "..", "integration"))

import kafka_broker  # noqa: E402
import samsa_harness  # noqa: E402

# the same on both brokers (kafka_broker.DEFAULTS has Kafka's single-node
# settings too; these make samsa's match)
COMMON = {"auto.create.topics.enable": "false",
          "group.initial.rebalance.delay.ms": "0",
          "num.partitions": "1", "default.replication.factor": "1",
          "offsets.topic.num.partitions": "1",
          "offsets.topic.replication.factor": "1",
          "transaction.state.log.num.partitions": "1",
          "transaction.state.log.replication.factor": "1",
          "transaction.state.log.min.isr": "1"}


class Pair:
    def __init__(self, kafka, samsa):
        self.kafka, self.samsa = kafka, samsa

    def connect(self):
        """(kafka Conn, samsa Conn)"""
        return self.kafka.connect(), self.samsa.connect()


_pairs = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On a failing test, show the tails of both brokers' logs."""
    outcome = yield
    rep = outcome.get_result()
    if rep.failed and rep.when == "call":
        for p in _pairs:
            p.kafka.keep = True
            rep.sections.append(("Apache Kafka", p.kafka.describe(30)))
            rep.sections.append(("samsa-server", p.samsa.describe()))


@pytest.fixture(scope="module")
def pair():
    # both fail the test, with what to run, when Java, the jars or the
    # server binary are missing
    samsa_harness.server_binary()
    kafka_broker.kafka_lib()
    kafka_broker.java()
    root = samsa_harness.make_tmp_root()
    factory = samsa_harness.ServerFactory(root)
    kafka = None
    try:
        kafka = kafka_broker.KafkaBroker.start(overrides=COMMON)
        print("Apache Kafka %s ready in %.1f s" % (kafka_broker.KAFKA_VERSION,
                                                  kafka.startup_seconds))
        srv = factory.start(overrides=COMMON)
        p = Pair(kafka, srv)
        _pairs.append(p)
        yield p
        _pairs.remove(p)
    finally:
        problems = kafka.stop() if kafka else []
        problems += factory.stop_all()
        if not problems:
            samsa_harness.remove_tmp_root(root)
    if problems:
        pytest.fail("broker problems at teardown (dirs kept under %s):\n%s"
                    % (root, "\n".join(problems)), pytrace=False)
