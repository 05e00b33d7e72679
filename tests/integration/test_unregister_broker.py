"""UnregisterBroker (API 64, KIP-500) on one node (no quorum), as Kafka's
controller serves it: leadership moves off the broker (its partitions
answer LEADER_NOT_AVAILABLE with leader -1, leader epoch bumped) and its
registration goes (Metadata lists no broker); a second one answers
BROKER_ID_NOT_REGISTERED.  Restarted, the node registers itself again and
leads again the partitions it was the sole ISR member of.  The cluster
case is tests/cluster/test_partition_leadership.py's."""

import time

import kwire
from samsa_harness import T

API_UNREGISTER_BROKER = 64
BROKER_ID_NOT_REGISTERED = 102
LEADER_NOT_AVAILABLE = 5
kwire.FLEXIBLE_FROM.setdefault(API_UNREGISTER_BROKER, 0)   # flexible from v0


def unregister(c, broker_id):
    r = c.request_raw(API_UNREGISTER_BROKER, 0,
                      kwire.Writer().i32(broker_id).tags().bytes(), T(10))
    r.i32()                                             # ThrottleTimeMs
    err = r.i16()
    msg = r.string(flexible=True, nullable=True)
    r.tags()
    r.done("UnregisterBroker v0 response")
    return err, msg


def parts(c, topic):
    md = c.metadata(version=12, topics=[topic])
    return md, {p["partition_index"]: p for p in md["topics"][0]["partitions"]}


def test_unregister_self_and_restart(samsa):
    srv = samsa.start()
    with srv.connect() as c:
        assert c.api_versions(version=3)["api_keys"][API_UNREGISTER_BROKER] == (0, 0)
        assert c.create_topic("unreg", num_partitions=2)["error_code"] == 0
        md, before = parts(c, "unreg")
        me = md["brokers"][0]["node_id"]
        assert all(p["leader_id"] == me for p in before.values()), before
        assert unregister(c, me) == (0, "")             # Kafka's default message
        md, after = parts(c, "unreg")
        assert md["brokers"] == [], md["brokers"]
        for i, p in after.items():
            assert p["leader_id"] == -1, p
            assert p["error_code"] == LEADER_NOT_AVAILABLE, p
            assert p["leader_epoch"] == before[i]["leader_epoch"] + 1, p
            assert p["isr_nodes"] == [me], p
        assert unregister(c, me)[0] == BROKER_ID_NOT_REGISTERED
        assert unregister(c, 4242)[0] == BROKER_ID_NOT_REGISTERED
    srv = samsa.restart(srv)
    with srv.connect() as c:
        deadline = time.monotonic() + T(10)
        while True:
            md, back = parts(c, "unreg")
            if all(p["leader_id"] == me for p in back.values()) \
                    or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        for i, p in back.items():
            assert p["leader_id"] == me and p["error_code"] == 0, p
            assert p["leader_epoch"] == before[i]["leader_epoch"] + 2, p
        r = c.produce("unreg", 0, kwire.encode_batch([kwire.Record(b"v")]),
                      timeout=T(10))
        assert r["error_code"] == 0, r
