"""ACLs on a three-node combined cluster with the StandardAuthorizer
(issue 21, part 3): the nodes register, heartbeat and elect as User:ANONYMOUS
on the PLAINTEXT CONTROLLER listeners, which are not checked
(broker/authz.h), so the cluster forms with an authorizer configured;
CreateAcls sent to a node that is not the active controller is forwarded
once that node checked ALTER on the cluster, and the binding reaches every
node's image (DescribeAcls everywhere); a CreateTopics a node's ACLs deny
is answered there (TOPIC_AUTHORIZATION_FAILED, not created anywhere), an
allowed one is forwarded and created everywhere; a client without ALTER on
the cluster gets CLUSTER_AUTHORIZATION_FAILED from a non-controller node
(checked before forwarding)."""

import socket
import time

import pytest

import kwire
from cluster_harness import Cluster
from samsa_harness import HOST, T

CREATE_ACLS, DESCRIBE_ACLS = 30, 29
kwire.FLEXIBLE_FROM.update({CREATE_ACLS: 2, DESCRIBE_ACLS: 2})
TOPIC, CLUSTER, ANY, LITERAL, PREFIXED = 2, 4, 1, 3, 4
ALL, CREATE, DENY, ALLOW = 2, 5, 2, 3
ANON = "User:ANONYMOUS"
ADMIN, CLIENT = "127.0.0.1", "127.0.0.2"


@pytest.fixture
def cluster(samsa):
    c = Cluster(samsa, n=3, extra={
        "authorizer.class.name":
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "allow.everyone.if.no.acl.found": "true",
        "super.users": "User:admin"})
    c.start_all()
    return c


def conn_from(node, host):
    c = kwire.Conn.__new__(kwire.Conn)
    c.host, c.port, c.client_id = HOST, node.ports[0], "acl-cluster"
    c.sock = socket.create_connection((HOST, node.ports[0]), timeout=T(5),
                                      source_address=(host, 0))
    c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c.buf, c.next_corr, c.closed = bytearray(), 1, False
    return c


def create_acls(conn, acls):
    def one(w, a):
        w.i8(a[0]).string(a[1]).i8(a[2]).string(a[3]).string(a[4])
        w.i8(a[5]).i8(a[6])
    r = conn.request_raw(CREATE_ACLS, 1, kwire.Writer().array(acls, one)
                         .bytes(), T(10))
    r.i32()
    return [e for e, _ in r.array(lambda rr: (rr.i16(),
                                              rr.string(nullable=True)))]


def describe_all(conn):
    w = kwire.Writer().i8(ANY).string(None).i8(ANY).string(None)
    w.string(None).i8(ANY).i8(ANY)
    r = conn.request_raw(DESCRIBE_ACLS, 1, w.bytes(), T(10))
    r.i32()
    assert r.i16() == 0
    r.string(nullable=True)
    out = set()
    for rt, name, pt, acls in r.array(lambda rr: (
            rr.i8(), rr.string(), rr.i8(),
            rr.array(lambda x: (x.string(), x.string(), x.i8(), x.i8())))):
        for p, h, op, perm in acls:
            out.add((rt, name, pt, p, h, op, perm))
    return out


def create_topic_error(conn, name):
    r = conn.request(kwire.API_CREATE_TOPICS, 4,
                     kwire.encode_create_topics_request(4, [dict(
                         name=name, num_partitions=1,
                         replication_factor=1)]), T(10))
    return r["topics"][0]["error_code"]


def retry_not_controller(fn, timeout):
    """NOT_CONTROLLER (41) while leadership settles: ask again."""
    deadline = time.monotonic() + timeout
    while True:
        out = fn()
        errs = out if isinstance(out, list) else [out]
        if 41 not in errs or time.monotonic() > deadline:
            return out
        time.sleep(0.1)


def test_cluster_with_authorizer(cluster):
    cluster.wait_unfenced(T(30))        # registration and heartbeats work
    leader = cluster.wait_leader(T(30))
    other = next(n for n in cluster.nodes.values() if n.node_id != leader)
    admin_cluster = (CLUSTER, "kafka-cluster", LITERAL, ANON, ADMIN, ALL, ALLOW)
    deny_prefix = (TOPIC, "no-", PREFIXED, ANON, CLIENT, CREATE, DENY)
    with conn_from(other, ADMIN) as c:
        assert retry_not_controller(lambda: create_acls(
            c, [admin_cluster, deny_prefix]), T(20)) == [0, 0]
    deadline = time.monotonic() + T(20)
    while True:
        views = {}
        for n in cluster.nodes.values():
            with conn_from(n, ADMIN) as c:
                views[n.node_id] = describe_all(c)
        if all({admin_cluster, deny_prefix} <= v for v in views.values()):
            break
        assert time.monotonic() < deadline, views
        time.sleep(0.1)
    with conn_from(other, CLIENT) as c:
        # denied here: answered by this node, not forwarded
        assert create_topic_error(c, "no-topic") == 29
        # allowed (no ACL for the topic, allow.everyone): forwarded
        assert retry_not_controller(lambda: create_topic_error(c, "yes-topic"),
                                    T(20)) == 0
        # the cluster has ACLs now, none for this host: ALTER denied
        assert create_acls(c, [(TOPIC, "t", LITERAL, ANON, "*", ALL,
                                ALLOW)]) == [31]
    cluster.wait_topics_equal(["yes-topic"], T(20))
    for n in cluster.nodes.values():
        assert "no-topic" not in cluster.topics(n.node_id)
