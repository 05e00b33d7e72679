"""Connection limits per listener and at run time (Kafka's
ConnectionQuotas, ListenerConnectionQuota and DynamicConnectionQuota):
listener.name.plaintext.max.connections in server.properties holds the
PLAINTEXT listener to its count (one more connection waits, unserved,
until one closes) though max.connections is unlimited; the listener-
prefixed key and max.connections, max.connections.per.ip and
max.connection.creation.rate change at run time through
IncrementalAlterConfigs on the BROKER resource, apply without a restart,
are refused with INVALID_CONFIG and Kafka's messages when bad, and are
kept in the metadata log across a restart."""

import threading

import kwire
import samsa_harness
from samsa_harness import T, set_broker
from samsa_harness import describe_broker as describe

OP_DELETE = 1
SRC_DYNAMIC_BROKER, SRC_STATIC, SRC_DEFAULT = 2, 4, 5


def served(srv):
    """A new connection that got an ApiVersions answer (kept open)."""
    c = kwire.Conn(samsa_harness.HOST, srv.port, timeout=T(10))
    assert c.api_versions(0, timeout=T(10))["error_code"] == 0
    return c


def accepted(srv):
    """False if a new connection is closed at once (over its IP's
    limit), True if it is served."""
    with kwire.Conn(samsa_harness.HOST, srv.port, timeout=T(10)) as x:
        try:
            x.api_versions(0, timeout=T(10))
            return True
        except (kwire.ConnectionClosed, ConnectionResetError, BrokenPipeError):
            return False


class Waiting(threading.Thread):
    """A connection whose ApiVersions request waits for the broker to
    accept it; done is set once answered."""

    def __init__(self, srv):
        super().__init__(daemon=True)
        self.conn = kwire.Conn(samsa_harness.HOST, srv.port, timeout=T(30))
        self.done = threading.Event()
        self.error = None
        self.start()

    def run(self):
        try:
            self.conn.api_versions(0, timeout=T(30))
        except Exception as e:          # reported by the test
            self.error = e
        self.done.set()

    def close(self):
        self.conn.close()
        self.join(T(30))


def closed_all(conns):
    for c in conns:
        c.close()


def wait_total(srv, n):
    """The harness's own start-up connections are gone: n open now."""
    def total():
        path = "/proc/%d/net/tcp" % srv.pid
        with open(path) as f:
            rows = f.read().split("\n")[1:]
        port = "%04X" % srv.port
        # state 01: ESTABLISHED, on the broker's port
        return sum(1 for r in rows if r.split()[1:2]
                   and r.split()[1].endswith(":" + port) and r.split()[3] == "01")
    return samsa_harness.wait_until(lambda: total() == n, T(10), interval=0.05)


def test_listener_max_connections(samsa):
    srv = samsa.start({"listener.name.plaintext.max.connections": "3"})
    admin = served(srv)
    assert describe(admin, LMAX) == ("3", SRC_STATIC, True)
    assert wait_total(srv, 1)
    conns = [served(srv), served(srv)]          # 3 on PLAINTEXT
    w = Waiting(srv)
    assert not w.done.wait(1.0)                 # over the listener's 3
    conns[0].close()
    assert w.done.wait(T(10)) and w.error is None, w.error
    conns = conns[1:] + [w.conn]

    # run time: the listener-prefixed key (Kafka's ListenerConnectionQuota)
    assert set_broker(admin, "listener.name.plaintext.max.connections", "0") == (
        kwire.ERR_INVALID_CONFIG, "Invalid max.connections 0")
    assert set_broker(admin, "listener.name.plaintext.max.connections", "x") == (
        kwire.ERR_INVALID_CONFIG, "Invalid value x for configuration "
        "listener.name.plaintext.max.connections: Not a number of type INT")
    w = Waiting(srv)
    assert not w.done.wait(0.5)
    assert set_broker(admin, "listener.name.plaintext.max.connections", "5") == (0, None)
    assert w.done.wait(T(10)) and w.error is None, w.error
    conns.append(w.conn)
    conns.append(served(srv))                   # 5
    w = Waiting(srv)
    assert not w.done.wait(1.0)
    # DELETE: back to server.properties' 3, nothing closed at once
    assert set_broker(admin, "listener.name.plaintext.max.connections", None,
                      op=OP_DELETE) == (0, None)
    conns[0].close()
    conns[1].close()
    assert not w.done.wait(1.0)                 # admin + 2 open: 3 of 3
    conns[2].close()
    assert w.done.wait(T(10)) and w.error is None, w.error
    closed_all(conns[3:] + [w.conn, admin])
    w.join(T(10))
    assert srv.stop() == []


def test_max_connections_at_run_time(samsa):
    srv = samsa.start()
    admin = served(srv)
    assert describe(admin, "max.connections") == ("2147483647", SRC_DEFAULT, False)
    assert wait_total(srv, 1)
    assert set_broker(admin, "max.connections", "2") == (0, None)
    assert describe(admin, "max.connections") == ("2", SRC_DYNAMIC_BROKER, False)
    c = served(srv)
    w = Waiting(srv)
    assert not w.done.wait(1.0)                 # admin + c: 2 of 2
    assert set_broker(admin, "max.connections", "10") == (0, None)
    assert w.done.wait(T(10)) and w.error is None, w.error

    # Kafka's checks of the others, with its messages
    assert set_broker(admin, "max.connections.per.ip", "0") == (
        kwire.ERR_INVALID_CONFIG, "requirement failed: max.connections.per.ip "
        "can be set to zero only if max.connections.per.ip.overrides property "
        "is set.")
    assert set_broker(admin, "max.connection.creation.rate", "-1") == (
        kwire.ERR_INVALID_CONFIG, "Invalid value -1 for configuration "
        "max.connection.creation.rate: Value must be at least 0")
    assert set_broker(admin, "max.connections", "-1")[0] == kwire.ERR_INVALID_CONFIG

    # max.connections.per.ip: all of these come from 127.0.0.1, which has
    # 3 open; a 4th is refused (closed), not held
    assert set_broker(admin, "max.connections.per.ip", "3") == (0, None)
    assert not accepted(srv)
    assert set_broker(admin, "max.connections.per.ip", "100") == (0, None)
    d = served(srv)
    # the overrides at run time: 127.0.0.1 (4 open) held to 4
    assert set_broker(admin, "max.connections.per.ip.overrides", "127.0.0.1:x") == (
        kwire.ERR_INVALID_CONFIG, "Invalid value 127.0.0.1:x for configuration "
        "max.connections.per.ip.overrides: '127.0.0.1:x': the count must be a "
        "number from 0 to 2147483647")
    assert set_broker(admin, "max.connections.per.ip.overrides", "127.0.0.1:4") == (0, None)
    assert not accepted(srv)
    # max.connections.per.ip 0 is allowed once overrides are set
    assert set_broker(admin, "max.connections.per.ip", "0") == (0, None)
    assert set_broker(admin, "max.connections.per.ip.overrides", "127.0.0.1:5") == (0, None)
    e = served(srv)
    assert not accepted(srv)
    assert set_broker(admin, "max.connections.per.ip", "100") == (0, None)
    assert set_broker(admin, "max.connections.per.ip.overrides", None,
                      op=OP_DELETE) == (0, None)
    e.close()
    assert set_broker(admin, "max.connection.creation.rate", "1000") == (0, None)
    closed_all([c, d, w.conn])
    w.join(T(10))

    # kept in the metadata log
    admin.close()
    assert srv.stop() == []
    over = {k: v for k, v in srv.overrides.items() if k != "listeners"}
    srv2 = samsa.start(overrides=over, workdir=srv.workdir)
    with srv2.connect(timeout=T(10)) as conn:
        assert describe(conn, "max.connections") == ("10", SRC_DYNAMIC_BROKER, False)
        assert describe(conn, "max.connections.per.ip") == (
            "100", SRC_DYNAMIC_BROKER, False)
        assert describe(conn, "max.connection.creation.rate") == (
            "1000", SRC_DYNAMIC_BROKER, False)


LMAX = "listener.name.plaintext.max.connections"
LRATE = "listener.name.plaintext.max.connection.creation.rate"
SRC_DYNAMIC_DEFAULT = 3


def broker_entries(conn, name="1", keys=None, synonyms=False):
    """{key: entry} of a DescribeConfigs of broker resource `name`."""
    res = conn.describe_configs([(kwire.RESOURCE_BROKER, name, keys)],
                                include_synonyms=synonyms)[0]
    assert res["error_code"] == 0, res
    return {e["name"]: e for e in res["configs"]}


def check_listener_keys(conn):
    """LMAX 50 on broker 1 and LRATE 100 as the cluster default (over a
    static max.connection.creation.rate 7) are listed, as Kafka lists its
    originals."""
    every = broker_entries(conn, synonyms=True)
    assert (every[LMAX]["value"], every[LMAX]["source"]) == ("50", SRC_DYNAMIC_BROKER)
    assert (every[LRATE]["value"], every[LRATE]["source"]) == (
        "100", SRC_DYNAMIC_DEFAULT)
    # Kafka: AllDynamicConfigs names the base keys only
    assert every[LMAX]["read_only"] and every[LRATE]["read_only"]
    # brokerConfigSynonyms(name, true): the key, then its base key
    assert [(s["name"], s["value"], s["source"]) for s in every[LMAX]["synonyms"]] == [
        (LMAX, "50", SRC_DYNAMIC_BROKER),
        ("max.connections", "2147483647", SRC_DEFAULT)]
    assert [(s["name"], s["value"], s["source"]) for s in every[LRATE]["synonyms"]] == [
        (LRATE, "100", SRC_DYNAMIC_DEFAULT),
        ("max.connection.creation.rate", "7", SRC_STATIC),
        ("max.connection.creation.rate", "2147483647", SRC_DEFAULT)]
    # named explicitly
    assert describe(conn, LMAX) == ("50", SRC_DYNAMIC_BROKER, True)
    assert describe(conn, LRATE) == ("100", SRC_DYNAMIC_DEFAULT, True)
    assert list(broker_entries(conn, keys=[LRATE, "num.io.threads"])) == [
        "num.io.threads", LRATE]
    # the cluster default resource: its own values only
    dflt = broker_entries(conn, name="")
    assert LMAX not in dflt
    assert (dflt[LRATE]["value"], dflt[LRATE]["source"]) == ("100", SRC_DYNAMIC_DEFAULT)


def test_describe_listener_keys(samsa):
    """DescribeConfigs of the broker lists the listener-prefixed values
    set at run time, with their level as the source, after a restart too,
    and no longer once deleted."""
    srv = samsa.start({"max.connection.creation.rate": "7"})
    with srv.connect(timeout=T(10)) as conn:
        assert LMAX not in broker_entries(conn)
        assert set_broker(conn, LMAX, "50") == (0, None)
        assert set_broker(conn, LRATE, "100", name="") == (0, None)
        check_listener_keys(conn)
    srv = samsa.restart(srv)
    with srv.connect(timeout=T(10)) as conn:
        check_listener_keys(conn)
        assert set_broker(conn, LMAX, None, op=OP_DELETE) == (0, None)
        assert set_broker(conn, LRATE, None, op=OP_DELETE, name="") == (0, None)
        every = broker_entries(conn)
        assert LMAX not in every and LRATE not in every
        assert broker_entries(conn, keys=[LMAX]) == {}
    assert srv.stop() == []
