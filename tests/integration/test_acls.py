"""ACLs and the StandardAuthorizer (issue 21, part 3) over the raw protocol.

One broker runs with authorizer.class.name=StandardAuthorizer and
allow.everyone.if.no.acl.found=false.  Without SASL every client is
User:ANONYMOUS, so clients are told apart by host: the "admin" connection
comes from 127.0.0.1, which a bootstrap ACL (made while the broker ran once
with allow.everyone.if.no.acl.found=true, then kept across the restart)
lets do ALL on the cluster; the matrix connections come from 127.0.0.2 (and
127.0.0.3 for host matching), which only the ACLs each case makes allow.

The matrix: each API x {allowed, denied (ALLOW + DENY), no ACL}, each state
on its own resource names, checked against the error Kafka's KafkaApis
answers.  Then literal vs prefixed patterns, deny over allow (and DENY READ
not denying DESCRIBE), host match, Metadata and ListGroups leaving out what
may not be described, KIP-430 authorized operations, the ACL APIs' own
errors (INVALID_REQUEST, CLUSTER_AUTHORIZATION_FAILED, SECURITY_DISABLED
without an authorizer), super.users, a bad authorizer.class.name refused at
start, and ACLs surviving a restart (replayed from the metadata log and its
snapshot).
"""

import socket
import uuid

import pytest

import kwire
from kwire import Reader, Writer
from samsa_harness import T

CREATE_ACLS, DESCRIBE_ACLS, DELETE_ACLS = 30, 29, 31
FIND_COORDINATOR, JOIN, HEARTBEAT, OFFSET_COMMIT = 10, 11, 12, 8
OFFSET_FETCH, DESCRIBE_GROUPS, LIST_GROUPS, DELETE_GROUPS = 9, 15, 16, 42
INIT_PID, DESCRIBE_LOG_DIRS, END_TXN = 22, 35, 26
kwire.FLEXIBLE_FROM.update({CREATE_ACLS: 2, DESCRIBE_ACLS: 2, DELETE_ACLS: 2,
                            FIND_COORDINATOR: 3, JOIN: 6, HEARTBEAT: 4,
                            OFFSET_COMMIT: 8, OFFSET_FETCH: 6,
                            DESCRIBE_GROUPS: 5, LIST_GROUPS: 3,
                            DELETE_GROUPS: 2, INIT_PID: 2, END_TXN: 3})

# Kafka's codes
TOPIC, GROUP, CLUSTER, TXN_ID = 2, 3, 4, 5
ANY, LITERAL, PREFIXED, MATCH = 1, 3, 4, 2
ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 2, 3, 4, 5, 6, 7, 8
DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = 10, 11, 12
DENY, ALLOW = 2, 3
E_TOPIC_AUTH, E_GROUP_AUTH, E_CLUSTER_AUTH, E_TXN_AUTH = 29, 30, 31, 53
E_SECURITY_DISABLED, E_INVALID_REQUEST = 54, 42
AUTH_ERRORS = {E_TOPIC_AUTH, E_GROUP_AUTH, E_CLUSTER_AUTH, E_TXN_AUTH}

ANON = "User:ANONYMOUS"
ADMIN_HOST, CLIENT_HOST, OTHER_HOST = "127.0.0.1", "127.0.0.2", "127.0.0.3"
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def call(conn, key, version, body):
    return conn.request_raw(key, version, body, T(10))


def connect_from(srv, host):
    """A kwire connection to srv's broker listener from source address host
    (every 127/8 address is this machine's loopback)."""
    c = kwire.Conn.__new__(kwire.Conn)
    c.host, c.port, c.client_id = "127.0.0.1", srv.port, "acl-test"
    c.sock = socket.create_connection(("127.0.0.1", srv.port), timeout=T(5),
                                      source_address=(host, 0))
    c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c.buf, c.next_corr, c.closed = bytearray(), 1, False
    return c


# -- the ACL APIs (v1: not flexible) --------------------------------------------

def create_acls(conn, acls, version=1):
    """acls: [(rtype, name, pattern, principal, host, op, perm)]"""
    def one(w, a):
        w.i8(a[0]).string(a[1])
        if version >= 1:
            w.i8(a[2])
        w.string(a[3]).string(a[4]).i8(a[5]).i8(a[6])
    r = call(conn, CREATE_ACLS, version, Writer().array(acls, one).bytes())
    r.i32()
    return r.array(lambda rr: (rr.i16(), rr.string(nullable=True)))


def _filter(w, f):
    rtype, name, pattern, principal, host, op, perm = f
    w.i8(rtype).string(name).i8(pattern).string(principal).string(host)
    w.i8(op).i8(perm)


def describe_acls(conn, f=(ANY, None, ANY, None, None, ANY, ANY)):
    """Returns (error, message, [(rtype, name, pattern, principal, host, op,
    perm)])."""
    w = Writer()
    _filter(w, f)
    r = call(conn, DESCRIBE_ACLS, 1, w.bytes())
    r.i32()
    err, msg = r.i16(), r.string(nullable=True)
    out = []
    for rtype, name, pattern, acls in r.array(lambda rr: (
            rr.i8(), rr.string(), rr.i8(),
            rr.array(lambda x: (x.string(), x.string(), x.i8(), x.i8())))):
        for principal, host, op, perm in acls:
            out.append((rtype, name, pattern, principal, host, op, perm))
    return err, msg, out


def delete_acls(conn, filters):
    r = call(conn, DELETE_ACLS, 1, Writer().array(filters, _filter).bytes())
    r.i32()
    return r.array(lambda rr: (rr.i16(), rr.string(nullable=True), rr.array(
        lambda x: (x.i16(), x.string(nullable=True), x.i8(), x.string(),
                   x.i8(), x.string(), x.string(), x.i8(), x.i8()))))


def allow(rtype, name, op, host="*", pattern=LITERAL, principal=ANON):
    return (rtype, name, pattern, principal, host, op, ALLOW)


def deny(rtype, name, op, host="*", pattern=LITERAL, principal=ANON):
    return (rtype, name, pattern, principal, host, op, DENY)


def add(conn, *acls):
    res = create_acls(conn, list(acls))
    assert all(e == 0 for e, _ in res), res


# -- the APIs of the matrix: each returns the error Kafka would put where -------
# -- a denied request shows it -------------------------------------------------

def api_metadata(c, name):
    r = c.request(kwire.API_METADATA, 4, kwire.encode_metadata_request(
        4, [name], allow_auto_topic_creation=False))
    return r["topics"][0]["error_code"]


def api_produce(c, name):
    batch = kwire.encode_batch([kwire.Record(b"v")])
    r = c.request(kwire.API_PRODUCE, 7, kwire.encode_produce_request(
        7, [(name, [(0, batch)])], acks=1))
    return r["topics"][0]["partitions"][0]["error_code"]


def api_fetch(c, name):
    r = c.request(kwire.API_FETCH, 11, kwire.encode_fetch_request(
        11, [(name, [(0, 0, 1 << 20)])], max_wait_ms=0))
    return r["topics"][0]["partitions"][0]["error_code"]


def api_list_offsets(c, name):
    r = c.request(kwire.API_LIST_OFFSETS, 5, kwire.encode_list_offsets_request(
        5, [(name, [(0, -1)])]))
    return r["topics"][0]["partitions"][0]["error_code"]


def api_delete_records(c, name):
    r = c.request(kwire.API_DELETE_RECORDS, 1,
                  kwire.encode_delete_records_request(1, [(name, [(0, 0)])]))
    return r["topics"][0]["partitions"][0]["error_code"]


def api_create_topics(c, name):
    r = c.request(kwire.API_CREATE_TOPICS, 4, kwire.encode_create_topics_request(
        4, [dict(name=name, num_partitions=1, replication_factor=1)]))
    return r["topics"][0]["error_code"]


def api_delete_topics(c, name):
    r = c.request(kwire.API_DELETE_TOPICS, 3,
                  kwire.encode_delete_topics_request(3, [name]))
    return r["responses"][0]["error_code"]


def api_create_partitions(c, name):
    r = c.request(kwire.API_CREATE_PARTITIONS, 1,
                  kwire.encode_create_partitions_request(1, [(name, 2, None)]))
    return r["results"][0]["error_code"]


def api_describe_configs(c, name):
    r = c.request(kwire.API_DESCRIBE_CONFIGS, 1,
                  kwire.encode_describe_configs_request(1, [(2, name, None)]))
    return r["results"][0]["error_code"]


def api_alter_configs(c, name):
    r = c.request(kwire.API_ALTER_CONFIGS, 1, kwire.encode_alter_configs_request(
        1, [(2, name, {"retention.ms": "3600000"})]))
    return r["responses"][0]["error_code"]


def api_find_coordinator(c, name):
    r = call(c, FIND_COORDINATOR, 1, Writer().string(name).i8(0).bytes())
    r.i32()
    return r.i16()


def api_join(c, name):
    w = Writer().string(name).i32(10000).i32(10000).string("").string(None)
    w.string("consumer").array([("range", b"")],
                               lambda ww, p: ww.string(p[0]).blob(p[1]))
    r = call(c, JOIN, 5, w.bytes())
    r.i32()
    return r.i16()


def api_heartbeat(c, name):
    r = call(c, HEARTBEAT, 3, Writer().string(name).i32(1).string("m")
             .string(None).bytes())
    r.i32()
    return r.i16()


def api_offset_commit(c, name):
    """A simple commit (generation -1) of topic acl-commit, whose READ a
    fixed ACL allows: only the group check varies (the commit succeeds when
    allowed)."""
    w = Writer().string(name).i32(-1).string("").i64(-1)
    w.array([("acl-commit", [0])], lambda ww, t: ww.string(t[0]).array(
        t[1], lambda x, p: x.i32(p).i64(1).string("")))
    r = call(c, OFFSET_COMMIT, 2, w.bytes())
    topics = r.array(lambda rr: (rr.string(), rr.array(
        lambda x: (x.i32(), x.i16()))))
    return topics[0][1][0][1]


def api_offset_fetch(c, name):
    w = Writer().string(name).array(None, lambda ww, t: None)
    r = call(c, OFFSET_FETCH, 3, w.bytes())
    r.i32()
    r.array(lambda rr: (rr.string(), rr.array(lambda x: (
        x.i32(), x.i64(), x.string(nullable=True), x.i16()))))
    return r.i16()


def api_describe_groups(c, name):
    r = call(c, DESCRIBE_GROUPS, 1, Writer().array([name], lambda w, g:
                                                   w.string(g)).bytes())
    r.i32()
    return r.array(lambda rr: (rr.i16(), rr.string(), rr.string(), rr.string(),
                               rr.string(), rr.array(lambda x: None)))[0][0]


def api_delete_groups(c, name):
    r = call(c, DELETE_GROUPS, 1, Writer().array([name], lambda w, g:
                                                 w.string(g)).bytes())
    r.i32()
    return r.array(lambda rr: (rr.string(), rr.i16()))[0][1]


def api_init_pid(c, name):
    r = call(c, INIT_PID, 1, Writer().string(name).i32(60000).bytes())
    r.i32()
    return r.i16()


def api_end_txn(c, name):
    r = call(c, END_TXN, 1, Writer().string(name).i64(1).i16(0)
             .boolean(True).bytes())
    r.i32()
    return r.i16()


def api_describe_broker_configs(c, name):
    r = c.request(kwire.API_DESCRIBE_CONFIGS, 1,
                  kwire.encode_describe_configs_request(1, [(4, "", None)]))
    return r["results"][0]["error_code"]


def api_describe_log_dirs(c, name):
    r = c.request(kwire.API_DESCRIBE_LOG_DIRS, 3,
                  kwire.encode_describe_log_dirs_request(3, None))
    return r["error_code"]


def api_describe_acls(c, name):
    return describe_acls(c)[0]


def api_create_acls(c, name):
    return create_acls(c, [allow(TOPIC, name + "-x", READ)])[0][0]


# (name, API, resource type, operation it needs, Kafka's error, needs a topic)
MATRIX = [
    ("Metadata", api_metadata, TOPIC, DESCRIBE, E_TOPIC_AUTH, True),
    ("Produce", api_produce, TOPIC, WRITE, E_TOPIC_AUTH, True),
    ("Fetch", api_fetch, TOPIC, READ, E_TOPIC_AUTH, True),
    ("ListOffsets", api_list_offsets, TOPIC, DESCRIBE, E_TOPIC_AUTH, True),
    ("DeleteRecords", api_delete_records, TOPIC, DELETE, E_TOPIC_AUTH, True),
    ("CreateTopics", api_create_topics, TOPIC, CREATE, E_TOPIC_AUTH, False),
    ("DeleteTopics", api_delete_topics, TOPIC, DELETE, E_TOPIC_AUTH, True),
    ("CreatePartitions", api_create_partitions, TOPIC, ALTER, E_TOPIC_AUTH,
     True),
    ("DescribeConfigs", api_describe_configs, TOPIC, DESCRIBE_CONFIGS,
     E_TOPIC_AUTH, True),
    ("AlterConfigs", api_alter_configs, TOPIC, ALTER_CONFIGS, E_TOPIC_AUTH,
     True),
    ("FindCoordinator", api_find_coordinator, GROUP, DESCRIBE, E_GROUP_AUTH,
     False),
    ("JoinGroup", api_join, GROUP, READ, E_GROUP_AUTH, False),
    ("Heartbeat", api_heartbeat, GROUP, READ, E_GROUP_AUTH, False),
    ("OffsetCommit", api_offset_commit, GROUP, READ, E_GROUP_AUTH, False),
    ("OffsetFetch", api_offset_fetch, GROUP, DESCRIBE, E_GROUP_AUTH, False),
    ("DescribeGroups", api_describe_groups, GROUP, DESCRIBE, E_GROUP_AUTH,
     False),
    ("DeleteGroups", api_delete_groups, GROUP, DELETE, E_GROUP_AUTH, False),
    ("InitProducerId", api_init_pid, TXN_ID, WRITE, E_TXN_AUTH, False),
    ("EndTxn", api_end_txn, TXN_ID, WRITE, E_TXN_AUTH, False),
    ("DescribeConfigs(broker)", api_describe_broker_configs, CLUSTER,
     DESCRIBE_CONFIGS, E_CLUSTER_AUTH, False),
    ("DescribeLogDirs", api_describe_log_dirs, CLUSTER, DESCRIBE,
     E_CLUSTER_AUTH, False),
    ("DescribeAcls", api_describe_acls, CLUSTER, DESCRIBE, E_CLUSTER_AUTH,
     False),
    ("CreateAcls", api_create_acls, CLUSTER, ALTER, E_CLUSTER_AUTH, False),
]

# What an allowed request answers when it is not NONE: the next check's
# error (no member yet, no such group, no such producer id)
ALLOWED_ANSWER = {"JoinGroup": 79, "Heartbeat": 25, "DeleteGroups": 69,
                  "EndTxn": 49}

BASE = {"authorizer.class.name": AUTHORIZER,
        "super.users": "User:admin",
        "auto.create.topics.enable": "false",
        "group.initial.rebalance.delay.ms": "0",
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.num.partitions": "1"}


@pytest.fixture(scope="module")
def acl_server(samsa_module):
    """The broker with the bootstrap ACL, restarted with
    allow.everyone.if.no.acl.found=false; yields (server, admin conn)."""
    srv = samsa_module.start(overrides=dict(
        BASE, **{"allow.everyone.if.no.acl.found": "true"}))
    with connect_from(srv, ADMIN_HOST) as admin:
        add(admin, allow(CLUSTER, "kafka-cluster", ALL, host=ADMIN_HOST))
        # the admin may also make the topics and groups the tests use
        add(admin, allow(TOPIC, "*", ALL, host=ADMIN_HOST),
            allow(GROUP, "*", ALL, host=ADMIN_HOST),
            allow(TOPIC, "acl-commit", READ))
        kwire_create(admin, "acl-commit")
    assert srv.stop() == []
    overrides = dict(srv.overrides)
    overrides["allow.everyone.if.no.acl.found"] = "false"
    srv2 = samsa_module.start(workdir=srv.workdir, overrides=overrides,
                              use_ports=False,
                              ports=(srv.port, srv.controller_port))
    admin = connect_from(srv2, ADMIN_HOST)
    yield srv2, admin
    admin.close()


def test_bootstrap_acls_survive_restart(acl_server):
    _, admin = acl_server
    err, _, acls = describe_acls(admin)
    assert err == 0
    assert allow(CLUSTER, "kafka-cluster", ALL, host=ADMIN_HOST) in acls
    assert allow(TOPIC, "acl-commit", READ) in acls


@pytest.mark.parametrize("case", MATRIX, ids=[m[0] for m in MATRIX])
def test_matrix(acl_server, case):
    """allowed / denied (DENY beside the ALLOW) / no ACL for one API."""
    srv, admin = acl_server
    name, fn, rtype, op, error, needs_topic = case
    base = "m-" + name.lower().replace("(", "-").replace(")", "")
    results = {}
    for state in ("allowed", "denied", "none"):
        res = base + "-" + state
        if needs_topic:
            kwire_create(admin, res)
        if rtype == CLUSTER:
            # the cluster has one name: the state is this host's ACLs
            acls = {"allowed": [allow(CLUSTER, "kafka-cluster", op,
                                      host=CLIENT_HOST)],
                    "denied": [allow(CLUSTER, "kafka-cluster", op,
                                     host=CLIENT_HOST),
                               deny(CLUSTER, "kafka-cluster", op,
                                    host=CLIENT_HOST)],
                    "none": []}[state]
        else:
            acls = {"allowed": [allow(rtype, res, op)],
                    "denied": [allow(rtype, res, op), deny(rtype, res, op)],
                    "none": []}[state]
        if acls:
            add(admin, *acls)
        with connect_from(srv, CLIENT_HOST) as c:
            results[state] = fn(c, res)
        if rtype == CLUSTER and acls:
            delete_acls(admin, [(CLUSTER, "kafka-cluster", LITERAL, ANON,
                                 CLIENT_HOST, ANY, ANY)])
    assert results["denied"] == error, (name, results)
    assert results["none"] == error, (name, results)
    assert results["allowed"] == ALLOWED_ANSWER.get(name, 0), (name, results)


def kwire_create(admin, name, parts=1):
    r = admin.create_topic(name, parts, timeout=T(10))
    assert r["error_code"] in (0, 36), kwire.error_name(r["error_code"])
    admin.wait_topic(name, parts, timeout=T(10))


def test_metadata_leaves_out_undescribable_topics(acl_server):
    srv, admin = acl_server
    kwire_create(admin, "vis-yes")
    kwire_create(admin, "vis-no")
    add(admin, allow(TOPIC, "vis-yes", READ))       # READ implies DESCRIBE
    with connect_from(srv, CLIENT_HOST) as c:
        r = c.request(kwire.API_METADATA, 4,
                      kwire.encode_metadata_request(4, None))
        names = {t["name"] for t in r["topics"]}
        assert "vis-yes" in names
        assert "vis-no" not in names
        assert "acl-commit" in names
        # KIP-430: READ (and the DESCRIBE it implies) only
        r = c.request(kwire.API_METADATA, 8, kwire.encode_metadata_request(
            8, ["vis-yes"], include_topic_authorized_operations=True,
            include_cluster_authorized_operations=True))
        assert r["topics"][0]["topic_authorized_operations"] == \
            (1 << READ) | (1 << DESCRIBE)
        assert r["cluster_authorized_operations"] == 0


def test_create_topics_config_error_without_describe_configs(acl_server):
    """Kafka's ControllerApis: a topic created by a principal that may not
    DESCRIBE_CONFIGS it comes back with TopicConfigErrorCode (tag 0)
    TOPIC_AUTHORIZATION_FAILED, no partition count, replication factor or
    configs; with DESCRIBE_CONFIGS they are there."""
    srv, admin = acl_server
    add(admin, allow(TOPIC, "cc-nodesc", CREATE), allow(TOPIC, "cc-desc", CREATE),
        allow(TOPIC, "cc-desc", DESCRIBE_CONFIGS))
    with connect_from(srv, CLIENT_HOST) as c:
        r = c.request(kwire.API_CREATE_TOPICS, 7, kwire.encode_create_topics_request(
            7, [dict(name="cc-nodesc", num_partitions=2, replication_factor=1),
                dict(name="cc-desc", num_partitions=2, replication_factor=1)]))
    nodesc, desc = r["topics"]
    assert nodesc["error_code"] == 0, nodesc
    assert nodesc["topic_id"] != b"\0" * 16
    assert (nodesc["num_partitions"], nodesc["replication_factor"]) == (-1, -1)
    assert not nodesc["configs"], nodesc
    assert nodesc["tags"].get(0) == E_TOPIC_AUTH.to_bytes(2, "big"), nodesc
    assert desc["error_code"] == 0, desc
    assert (desc["num_partitions"], desc["replication_factor"]) == (2, 1)
    assert any(cf["name"] == "cleanup.policy" for cf in desc["configs"]), desc
    assert 0 not in desc["tags"], desc
    # created all the same
    admin.wait_topic("cc-nodesc", 2, timeout=T(10))


CGH = 68
kwire.FLEXIBLE_FROM.update({CGH: 0})


def cgh_join(c, group, topics):
    """A KIP-848 join (member epoch 0); returns (error, message)."""
    w = Writer().string(group, True).string(uuid.uuid4().hex[:22], True).i32(0)
    w.string(None, True).string(None, True).i32(30000)
    w.array(topics, lambda ww, t: ww.string(t, True), True)
    w.string(None, True)                                # regex (v1)
    w.string(None, True)                                # assignor
    w.array([], lambda ww, x: None, True).tags()
    r = call(c, CGH, 1, w.bytes())
    r.i32()
    return r.i16(), r.string(True, True)


def test_consumer_group_heartbeat_needs_describe_on_topics(acl_server):
    """Kafka 4's KafkaApis: READ on the group, then DESCRIBE on every
    subscribed topic name, else TOPIC_AUTHORIZATION_FAILED (no message),
    whether the topic exists or not."""
    srv, admin = acl_server
    kwire_create(admin, "cgh-yes")
    kwire_create(admin, "cgh-no")
    add(admin, allow(GROUP, "cgh-g", READ), allow(TOPIC, "cgh-yes", DESCRIBE))
    with connect_from(srv, CLIENT_HOST) as c:
        assert cgh_join(c, "cgh-g", ["cgh-yes", "cgh-no"]) == (E_TOPIC_AUTH, None)
        assert cgh_join(c, "cgh-g", ["cgh-yes", "cgh-none"]) == \
            (E_TOPIC_AUTH, None)
        assert cgh_join(c, "cgh-other", ["cgh-yes"])[0] == E_GROUP_AUTH
        assert cgh_join(c, "cgh-g", ["cgh-yes"]) == (0, None)


def test_prefixed_and_literal(acl_server):
    srv, admin = acl_server
    for t in ("pre-a", "prx-a", "lit", "lit2"):
        kwire_create(admin, t)
    add(admin, allow(TOPIC, "pre-", WRITE, pattern=PREFIXED),
        allow(TOPIC, "lit", WRITE))
    with connect_from(srv, CLIENT_HOST) as c:
        assert api_produce(c, "pre-a") == 0
        assert api_produce(c, "prx-a") == E_TOPIC_AUTH
        assert api_produce(c, "lit") == 0
        assert api_produce(c, "lit2") == E_TOPIC_AUTH


def test_deny_overrides_allow(acl_server):
    srv, admin = acl_server
    for t in ("dn-a", "dn-b"):
        kwire_create(admin, t)
    add(admin, allow(TOPIC, "dn-", ALL, pattern=PREFIXED),
        deny(TOPIC, "dn-a", WRITE), deny(TOPIC, "dn-b", READ))
    with connect_from(srv, CLIENT_HOST) as c:
        assert api_produce(c, "dn-a") == E_TOPIC_AUTH
        assert api_produce(c, "dn-b") == 0
        assert api_fetch(c, "dn-b") == E_TOPIC_AUTH
        # a DENY of READ does not deny the DESCRIBE an ALLOW ALL gives
        assert api_metadata(c, "dn-b") == 0
        assert api_list_offsets(c, "dn-b") == 0


def test_wildcard_principal_and_host_match(acl_server):
    srv, admin = acl_server
    kwire_create(admin, "hm")
    kwire_create(admin, "wp")
    add(admin, allow(TOPIC, "hm", DESCRIBE, host=OTHER_HOST),
        allow(TOPIC, "wp", DESCRIBE, principal="User:*"),
        allow(TOPIC, "wp", DESCRIBE, principal="User:alice"))
    with connect_from(srv, CLIENT_HOST) as c:
        assert api_metadata(c, "hm") == E_TOPIC_AUTH
        assert api_metadata(c, "wp") == 0
    with connect_from(srv, OTHER_HOST) as c:
        assert api_metadata(c, "hm") == 0


def test_list_groups_filtered(acl_server):
    srv, admin = acl_server
    for g in ("lg-yes", "lg-no"):
        assert api_offset_commit(admin, g) == 0
    add(admin, allow(GROUP, "lg-yes", DESCRIBE))
    with connect_from(srv, CLIENT_HOST) as c:
        r = call(c, LIST_GROUPS, 1, b"")
        r.i32()
        assert r.i16() == 0
        groups = {g for g, _ in r.array(lambda rr: (rr.string(),
                                                    rr.string()))}
    assert "lg-yes" in groups
    assert "lg-no" not in groups


def test_acl_api_errors(acl_server):
    _, admin = acl_server
    res = create_acls(admin, [
        allow(CLUSTER, "not-the-cluster", ALTER),
        allow(TOPIC, "", READ),
        (0, "x", LITERAL, ANON, "*", READ, ALLOW),
        (TOPIC, "x", ANY, ANON, "*", READ, ALLOW),
        (TOPIC, "x", LITERAL, ANON, "*", ANY, ALLOW),
        (TOPIC, "x", LITERAL, ANON, "*", READ, ANY),
    ])
    assert [e for e, _ in res] == [E_INVALID_REQUEST] * 6
    assert res[0][1] == ("The only valid name for the CLUSTER resource is "
                         "kafka-cluster")
    assert res[3][1] == "Invalid patternType ANY"
    err, _, _ = describe_acls(admin, (0, None, ANY, None, None, ANY, ANY))
    assert err == E_INVALID_REQUEST
    fr = delete_acls(admin, [(TOPIC, None, 0, None, None, ANY, ANY)])
    assert fr[0][0] == E_INVALID_REQUEST
    # creating the same binding twice adds it once
    add(admin, allow(TOPIC, "twice", READ))
    add(admin, allow(TOPIC, "twice", READ))
    _, _, acls = describe_acls(admin, (TOPIC, "twice", LITERAL, None, None,
                                       ANY, ANY))
    assert acls == [allow(TOPIC, "twice", READ)]


def test_describe_filters_and_delete(acl_server):
    _, admin = acl_server
    add(admin, allow(TOPIC, "flt-a", READ), allow(TOPIC, "flt-", WRITE,
                                                  pattern=PREFIXED),
        allow(TOPIC, "*", DESCRIBE, host=OTHER_HOST))
    _, _, got = describe_acls(admin, (TOPIC, "flt-a", MATCH, None, None, ANY,
                                      ANY))
    assert allow(TOPIC, "flt-a", READ) in got
    assert allow(TOPIC, "flt-", WRITE, pattern=PREFIXED) in got
    assert allow(TOPIC, "*", DESCRIBE, host=OTHER_HOST) in got
    assert all(a[1] in ("flt-a", "flt-", "*") for a in got)
    fr = delete_acls(admin, [(TOPIC, "flt-", PREFIXED, None, None, ANY,
                              ANY)])
    assert fr[0][0] == 0 and len(fr[0][2]) == 1
    assert fr[0][2][0][3] == "flt-" and fr[0][2][0][4] == PREFIXED
    _, _, got = describe_acls(admin, (TOPIC, "flt-", PREFIXED, None, None,
                                      ANY, ANY))
    assert got == []


def test_no_authorizer_security_disabled(samsa):
    srv = samsa.start()
    with srv.connect() as c:
        assert create_acls(c, [allow(TOPIC, "t", READ)])[0][0] == \
            E_SECURITY_DISABLED
        err, msg, _ = describe_acls(c)
        assert (err, msg) == (E_SECURITY_DISABLED,
                              "No Authorizer is configured on the broker")
        assert delete_acls(c, [(TOPIC, None, ANY, None, None, ANY, ANY)])[0][
            0] == E_SECURITY_DISABLED
        # and everything else works as without ACLs
        assert api_metadata(c, "nope") == 3


def test_super_user_bypasses_acls(samsa):
    srv = samsa.start(overrides=dict(BASE, **{"super.users":
                                              "User:admin;User:ANONYMOUS"}))
    with srv.connect() as c:
        kwire_create(c, "su")
        assert api_produce(c, "su") == 0
        add(c, deny(TOPIC, "su", WRITE))
        assert api_produce(c, "su") == 0


def test_bad_authorizer_refused(samsa):
    rc, err, _ = samsa.run_to_exit(overrides={
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"})
    assert rc not in (0, None)
    assert "authorizer.class.name" in err


# -- samsa acl add|list|remove (libsamsa's admin client, from ADMIN_HOST) -------

def test_cli_acl_add_list_remove(acl_server):
    import cli_util
    srv, admin = acl_server
    bs = "127.0.0.1:%d" % srv.port
    kwire_create(admin, "cli-t")
    with connect_from(srv, CLIENT_HOST) as c:
        assert api_produce(c, "cli-t") == E_TOPIC_AUTH
    cli_util.ok("acl", "add", "-b", bs, "--allow-principal", ANON,
                "--operation", "Write", "--operation", "describe",
                "--topic", "cli-t")
    cli_util.ok("acl", "add", "-b", bs, "--deny-principal", "User:mallory",
                "--deny-host", "10.1.1.1", "--operation", "ALL",
                "--topic", "cli-", "--resource-pattern-type", "prefixed")
    with connect_from(srv, CLIENT_HOST) as c:
        assert api_produce(c, "cli-t") == 0
    got = cli_util.ok("acl", "list", "-b", bs, "--topic", "cli-t",
                      "--json").json()
    rows = {(a["resource_name"], a["pattern_type"], a["principal"], a["host"],
             a["operation"], a["permission"]) for a in got}
    assert rows == {("cli-t", "LITERAL", ANON, "*", "WRITE", "ALLOW"),
                    ("cli-t", "LITERAL", ANON, "*", "DESCRIBE", "ALLOW")}, got
    # match: also the prefixed and wildcard bindings that apply to it
    got = cli_util.ok("acl", "list", "-b", bs, "--topic", "cli-t",
                      "--resource-pattern-type", "match", "--json").json()
    rows = {(a["resource_name"], a["pattern_type"], a["principal"], a["host"],
             a["operation"], a["permission"]) for a in got}
    assert ("cli-", "PREFIXED", "User:mallory", "10.1.1.1", "ALL",
            "DENY") in rows, got
    assert ("*", "LITERAL", ANON, ADMIN_HOST, "ALL", "ALLOW") in rows, got
    text = cli_util.ok("acl", "list", "-b", bs, "--principal",
                       "User:mallory").out
    assert "PREFIXED" in text and "mallory" in text and "cli-t" not in text
    r = cli_util.ok("acl", "remove", "-b", bs, "--topic", "cli-t",
                    "--allow-principal", ANON, "--operation", "Write")
    assert "Removed 1 ACL binding(s)" in r.out, r
    with connect_from(srv, CLIENT_HOST) as c:
        assert api_produce(c, "cli-t") == E_TOPIC_AUTH
        assert api_metadata(c, "cli-t") == 0        # DESCRIBE stays
    # no principal: every binding of the resource
    r = cli_util.ok("acl", "remove", "-b", bs, "--topic", "cli-t")
    assert "Removed 1 ACL binding(s)" in r.out, r
    assert cli_util.ok("acl", "list", "-b", bs, "--topic", "cli-t",
                       "--resource-pattern-type", "literal",
                       "--json").json() == []
    # usage errors name the flag; a broker error is Kafka's name
    r = cli_util.run("acl", "add", "-b", bs, "--allow-principal", ANON,
                     "--operation", "Fly", "--topic", "x")
    assert r.rc == 2 and "--operation" in r.err, r
    r = cli_util.run("acl", "add", "-b", bs, "--allow-principal", ANON)
    assert r.rc == 2 and "--topic" in r.err, r


def test_cli_acl_security_disabled(samsa):
    import cli_util
    srv = samsa.start()
    r = cli_util.run("acl", "list", "-b", "127.0.0.1:%d" % srv.port)
    assert r.rc == 1 and "SECURITY_DISABLED" in r.err, r


# -- Kafka's own kafka-acls (org.apache.kafka.tools.AclCommand 4.4.0) ---------

def test_kafka_acls_tool(acl_server):
    from javakit import kafka_tool
    srv, admin = acl_server
    bs = ("--bootstrap-server", "127.0.0.1:%d" % srv.port)
    kwire_create(admin, "kt-acl")
    kafka_tool("kafka-acls", *bs, "--add", "--allow-principal", ANON,
               "--operation", "Read", "--operation", "Describe",
               "--topic", "kt-acl", "--group", "kt-group")
    kafka_tool("kafka-acls", *bs, "--add", "--deny-principal", "User:eve",
               "--operation", "All", "--topic", "kt-",
               "--resource-pattern-type", "prefixed")
    _, _, acls = describe_acls(admin, (ANY, None, ANY, None, None, ANY, ANY))
    assert allow(TOPIC, "kt-acl", READ) in acls
    assert allow(GROUP, "kt-group", DESCRIBE) in acls
    assert deny(TOPIC, "kt-", ALL, pattern=PREFIXED,
                principal="User:eve") in acls
    r = kafka_tool("kafka-acls", *bs, "--list", "--topic", "kt-acl")
    assert "kt-acl" in r.out and "READ" in r.out and ANON in r.out, r
    with connect_from(srv, CLIENT_HOST) as c:
        assert api_fetch(c, "kt-acl") == 0
    kafka_tool("kafka-acls", *bs, "--remove", "--force", "--topic", "kt-acl")
    _, _, acls = describe_acls(admin, (TOPIC, "kt-acl", LITERAL, None, None,
                                       ANY, ANY))
    assert acls == []
    with connect_from(srv, CLIENT_HOST) as c:
        assert api_fetch(c, "kt-acl") == E_TOPIC_AUTH


# last: it restarts the module's broker (the admin connection goes)
def test_acls_survive_restart(acl_server, samsa_module):
    srv, admin = acl_server
    add(admin, allow(TOPIC, "restart-me", READ, pattern=PREFIXED))
    _, _, before = describe_acls(admin)
    admin.close()
    srv2 = samsa_module.restart(srv)
    with connect_from(srv2, ADMIN_HOST) as a2:
        _, _, after = describe_acls(a2)
    assert sorted(after) == sorted(before)
