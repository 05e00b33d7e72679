"""SASL (issue 21, item 2; src/net/sasl.c, docs/SECURITY.md): a broker with
PLAINTEXT, SASL_PLAINTEXT and SASL_SSL listeners side by side, PLAIN users
from the JAAS config, SCRAM-SHA-256/512 users made with
AlterUserScramCredentials (kwire, on the PLAINTEXT listener).

Clients: kcat and Debian's confluent-kafka over every listener x mechanism
(PyPI's confluent-kafka, kafka-python, kafkajs and Kafka's Java tools are in
test_sasl_clients.py, labelled "clients"); kwire for
the exact answers (SaslHandshake/SaslAuthenticate errors, messages, the
close after a failure), a request before authentication, a silent client,
DescribeUserScramCredentials / AlterUserScramCredentials errors, and the
credentials surviving a restart.  A missing client fails its test."""

import base64
import hashlib
import os
import socket
import subprocess
import time

import pytest

import kwire
import samsa_harness
from samsa_harness import HOST, T, free_port
from test_tls import Certs, _ca, _leaf

kwire.FLEXIBLE_FROM.update({50: 0, 51: 0})

API_DESCRIBE_SCRAM = 50
API_ALTER_SCRAM = 51
ERR_ILLEGAL_SASL_STATE = 34
ERR_UNSUPPORTED_SASL_MECHANISM = 33
ERR_SASL_AUTHENTICATION_FAILED = 58

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule '
              'required user_admin="admin-secret" user_alice="alice-pw";')
SCRAM_USERS = {"SCRAM-SHA-256": ("scram256", "pw-256"),
               "SCRAM-SHA-512": ("scram512", "pw-512")}
USERS = {"PLAIN": ("alice", "alice-pw")}
USERS.update(SCRAM_USERS)
MECHS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
AUTH_MS = 3000          # connections.max.idle.ms: bounds authentication


# ---- certificates and the server --------------------------------------------

@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    c = Certs(str(tmp_path_factory.mktemp("sasl-certs")))
    _ca(c, "ca", "Samsa SASL Test CA")
    _leaf(c, "server", "ca", "localhost",
          ext="subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    return c


def sasl_overrides(certs, ports, extra=None):
    plain, ctl, sp, ss = ports
    o = {
        "listeners": "PLAINTEXT://%s:%d,CONTROLLER://%s:%d,"
                     "SASL_PLAINTEXT://%s:%d,SASL_SSL://%s:%d"
                     % (HOST, plain, HOST, ctl, HOST, sp, HOST, ss),
        "listener.security.protocol.map":
            "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,"
            "SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
        "sasl.enabled.mechanisms": ",".join(MECHS),
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": certs.p("server.pem"),
        "connections.max.idle.ms": str(AUTH_MS),
        "request.log.enable": "true",
        "request.log.file": "stderr",
    }
    o.update(extra or {})
    return o


def start_sasl(samsa, certs, extra=None, workdir=None, ports=None):
    if ports is None:
        ports = set()
        while len(ports) < 4:
            ports.add(free_port())
        ports = tuple(sorted(ports))
    d = workdir or samsa.new_dir()
    o = sasl_overrides(certs, ports, extra)
    o["log.dirs"] = os.path.join(d, "samsa-data")
    srv = samsa.start(overrides=o, workdir=d, use_ports=False,
                      ports=(ports[0], ports[1]))
    srv.sasl_ports = {"SASL_PLAINTEXT": ports[2], "SASL_SSL": ports[3]}
    srv.all_ports = ports
    return srv


@pytest.fixture(scope="module")
def server(samsa_module, certs):
    srv = start_sasl(samsa_module, certs)
    with srv.connect() as c:
        for mech, (user, pw) in SCRAM_USERS.items():
            assert scram_alter(c, ups=[(user, mech, pw, 4096)]) == \
                [(user, 0, None)]
    return srv


# ---- kwire: the SCRAM admin APIs and raw SASL --------------------------------

MECH_TYPE = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}


def scram_alter(c, ups=(), dels=()):
    """ups: (user, mechanism name or type, password, iterations);
    dels: (user, mechanism type).  Returns [(user, error, message)]."""
    w = kwire.Writer()
    w.array(dels, lambda w, d: w.string(d[0], True).i8(d[1]).tags(), True)

    def up(w, u):
        name, mech, pw, it = u
        t = MECH_TYPE.get(mech, mech)
        salt = os.urandom(16)
        sp = hashlib.pbkdf2_hmac("sha256" if t != 2 else "sha512",
                                 pw.encode(), salt, max(it, 1))
        w.string(name, True).i8(t).i32(it).blob(salt, True) \
            .blob(sp, True).tags()
    w.array(ups, up, True)
    w.tags()
    r = c.request_raw(API_ALTER_SCRAM, 0, w.bytes())
    assert r.i32() == 0
    out = r.array(lambda rr: (rr.string(True), rr.i16(),
                              rr.string(True, True), rr.tags())[:3], True)
    r.tags()
    r.done()
    return out


def scram_describe(c, users):
    w = kwire.Writer()
    w.array(users, lambda w, u: w.string(u, True).tags(), True)
    w.tags()
    r = c.request_raw(API_DESCRIBE_SCRAM, 0, w.bytes())
    assert r.i32() == 0
    top = (r.i16(), r.string(True, True))
    res = r.array(lambda rr: (rr.string(True), rr.i16(), rr.string(True, True),
                              rr.array(lambda r3: (r3.i8(), r3.i32(),
                                                   r3.tags())[:2], True),
                              rr.tags())[:4], True)
    r.tags()
    r.done()
    return top, res


def sasl_connect(srv):
    return kwire.connect(HOST, srv.sasl_ports["SASL_PLAINTEXT"], T(5),
                         "sasl-test")


def handshake(c, mech, version=1):
    r = c.request_raw(kwire.API_SASL_HANDSHAKE, version,
                      kwire.Writer().string(mech).bytes())
    err = r.i16()
    mechs = r.array(lambda rr: rr.string())
    r.done()
    return err, mechs


def authenticate(c, token, version=2):
    flex = version >= 2
    w = kwire.Writer().blob(token, flexible=flex)
    if flex:
        w.tags()
    r = c.request_raw(kwire.API_SASL_AUTHENTICATE, version, w.bytes())
    err = r.i16()
    msg = r.string(flexible=flex, nullable=True)
    auth = r.blob(flexible=flex)
    life = r.i64() if version >= 1 else None
    if flex:
        r.tags()
    r.done()
    return err, msg, auth, life


def assert_closed(c, timeout=None):
    """The server closed c: a read ends (EOF or reset) within timeout."""
    c.sock.settimeout(timeout or T(5))
    try:
        data = c.sock.recv(1)
    except (ConnectionResetError, BrokenPipeError):
        return
    assert data == b"", "expected the connection closed, got %r" % data


def metric(srv, name, listener):
    import urllib.request
    text = urllib.request.urlopen(srv.metrics_url("/metrics"),
                                  timeout=T(5)).read().decode()
    want = '%s{server="broker",listener="%s"} ' % (name, listener)
    for line in text.splitlines():
        if line.startswith(want):
            return int(line.split()[-1])
    raise AssertionError("no %s for %s in /metrics" % (name, listener))


# ---- clients ------------------------------------------------------------------

def rdkafka_conf(srv, certs, protocol, mech, password=None):
    user, pw = USERS[mech]
    conf = {"bootstrap.servers": "%s:%d" % (HOST, srv.sasl_ports[protocol]),
            "security.protocol": protocol, "sasl.mechanism": mech,
            "sasl.username": user, "sasl.password": password or pw}
    if protocol == "SASL_SSL":
        conf["ssl.ca.location"] = certs.p("ca.pem")
    return conf


def kcat(conf, *args, data=None, timeout=30):
    cmd = ["kcat", "-b", conf["bootstrap.servers"]]
    for k, v in conf.items():
        if k != "bootstrap.servers":
            cmd += ["-X", "%s=%s" % (k, v)]
    p = subprocess.run(cmd + list(args), input=data, capture_output=True,
                       timeout=T(timeout))
    return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")


def topic_for(client, protocol, mech):
    return "sasl-%s-%s-%s" % (client, protocol.lower(),
                              mech.lower().replace("-", ""))


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("mech", MECHS)
def test_kcat_round_trip(server, certs, protocol, mech):
    conf = rdkafka_conf(server, certs, protocol, mech)
    topic = topic_for("kcat", protocol, mech)
    rc, out = kcat(conf, "-P", "-t", topic, data=b"one\ntwo\nthree\n")
    assert rc == 0, out
    rc, out = kcat(conf, "-C", "-t", topic, "-o", "beginning", "-e", "-q")
    assert rc == 0, out
    assert out.split() == ["one", "two", "three"], out
    # the request log names the principal that produced
    user = USERS[mech][0]
    assert samsa_harness.wait_until(
        lambda: '"principal":"User:%s"' % user in server.stderr_text(),
        T(5)), server.stderr_tail()


def _ck_round_trip(ck, conf, topic):
    p = ck.Producer(dict(conf))
    for i in range(20):
        p.produce(topic, b"v%d" % i)
    assert p.flush(T(30)) == 0
    c = ck.Consumer(dict(conf, **{"group.id": topic + "-g",
                                  "auto.offset.reset": "earliest"}))
    c.subscribe([topic])
    got = []
    deadline = time.monotonic() + T(30)
    while len(got) < 20 and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None and m.error() is None:
            got.append(m.value())
    c.close()
    return got


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("mech", MECHS)
def test_confluent_kafka_debian_round_trip(server, certs, protocol, mech):
    import confluent_kafka
    got = _ck_round_trip(confluent_kafka, rdkafka_conf(server, certs,
                                                       protocol, mech),
                         topic_for("ckdeb", protocol, mech))
    assert got == [b"v%d" % i for i in range(20)]


PYPI_SCRIPT = r"""
import json, sys, time
import confluent_kafka as ck
conf, topic = json.loads(sys.argv[1]), sys.argv[2]
p = ck.Producer(dict(conf))
for i in range(20):
    p.produce(topic, b"v%d" % i)
assert p.flush(30) == 0
c = ck.Consumer(dict(conf, **{"group.id": topic + "-g",
                              "auto.offset.reset": "earliest"}))
c.subscribe([topic])
got, deadline = [], time.monotonic() + 30
while len(got) < 20 and time.monotonic() < deadline:
    m = c.poll(0.5)
    if m is not None and m.error() is None:
        got.append(m.value().decode())
c.close()
print(json.dumps({"version": ck.version()[0], "got": got}))
"""


# ---- failures -------------------------------------------------------------------

@pytest.mark.parametrize("mech,message", [
    ("PLAIN", "Authentication failed: Invalid username or password"),
    ("SCRAM-SHA-256", "Authentication failed during authentication due to "
                      "invalid credentials with SASL mechanism SCRAM-SHA-256"),
])
def test_kcat_wrong_password(server, certs, mech, message):
    before = metric(server, "samsa_failed_authentication_total",
                    "SASL_PLAINTEXT")
    conf = rdkafka_conf(server, certs, "SASL_PLAINTEXT", mech,
                        password="not-the-password")
    rc, out = kcat(conf, "-L", "-m", "5", timeout=30)
    assert rc != 0, out
    assert message in out, out
    assert server.alive()
    assert metric(server, "samsa_failed_authentication_total",
                  "SASL_PLAINTEXT") > before
    with server.connect() as c:
        assert c.api_versions(0)["error_code"] == 0


def test_plain_exchange_and_wrong_password_closes(server):
    before = metric(server, "samsa_successful_authentication_total",
                    "SASL_PLAINTEXT")
    with sasl_connect(server) as c:
        assert c.api_versions(3)["error_code"] == 0
        err, mechs = handshake(c, "PLAIN")
        assert (err, mechs) == (0, list(MECHS))
        assert authenticate(c, b"\0alice\0alice-pw") == (0, None, b"", 0)
        # authenticated: requests reach the handlers now
        assert c.api_versions(0)["error_code"] == 0
        # and the SASL requests get KafkaApis' ILLEGAL_SASL_STATE
        assert handshake(c, "PLAIN")[0] == ERR_ILLEGAL_SASL_STATE
    assert metric(server, "samsa_successful_authentication_total",
                  "SASL_PLAINTEXT") == before + 1
    for token, message in [
            (b"\0alice\0wrong",
             "Authentication failed: Invalid username or password"),
            (b"\0nobody\0alice-pw",
             "Authentication failed: Invalid username or password"),
            (b"bob\0alice\0alice-pw",
             "Authentication failed: Client requested an authorization id "
             "that is different from username"),
            (b"alice-pw", "Invalid SASL/PLAIN response: expected 3 tokens, "
                          "got 1"),
            (b"\0\0x", "Authentication failed: username not specified")]:
        with sasl_connect(server) as c:
            assert handshake(c, "PLAIN")[0] == 0
            err, msg, auth, _ = authenticate(c, token, version=1)
            assert (err, msg, auth) == (ERR_SASL_AUTHENTICATION_FAILED,
                                        message, b""), token
            assert_closed(c)
    assert server.alive()


def test_unsupported_mechanism_closes(server):
    with sasl_connect(server) as c:
        err, mechs = handshake(c, "GSSAPI", version=0)
        assert (err, mechs) == (ERR_UNSUPPORTED_SASL_MECHANISM, list(MECHS))
        assert_closed(c)


@pytest.mark.parametrize("api", ["metadata", "authenticate_first",
                                 "second_api_versions"])
def test_request_before_authentication_closes(server, api):
    with sasl_connect(server) as c:
        if api == "metadata":
            c.send(kwire.encode_request(kwire.API_METADATA, 1, 7,
                                        kwire.Writer().i32(-1).bytes()))
        elif api == "authenticate_first":
            c.send(kwire.encode_request(
                kwire.API_SASL_AUTHENTICATE, 0, 7,
                kwire.Writer().blob(b"\0alice\0alice-pw").bytes()))
        else:
            assert c.api_versions(0)["error_code"] == 0
            c.send(kwire.api_versions_request(0, 8, "x"))
        assert_closed(c)
    with sasl_connect(server) as c:
        # between handshake and authentication too
        assert handshake(c, "PLAIN")[0] == 0
        c.send(kwire.encode_request(kwire.API_METADATA, 1, 9,
                                    kwire.Writer().i32(-1).bytes()))
        assert_closed(c)
    assert server.alive()


def test_silent_client_closed_in_bounded_time(server):
    """A client that connects and sends nothing, and one that stops after
    its handshake, are closed after the authentication bound (here
    connections.max.idle.ms); a client beside them is served at once."""
    silent = socket.create_connection((HOST, server.sasl_ports["SASL_PLAINTEXT"]))
    half = sasl_connect(server)
    assert handshake(half, "SCRAM-SHA-256")[0] == 0
    start = time.monotonic()
    with sasl_connect(server) as c:
        assert handshake(c, "PLAIN")[0] == 0
        assert authenticate(c, b"\0alice\0alice-pw")[0] == 0
    assert time.monotonic() - start < 2.0
    silent.settimeout(AUTH_MS / 1000.0 + T(5))
    assert silent.recv(1) == b""
    assert_closed(half, AUTH_MS / 1000.0 + T(5))
    elapsed = time.monotonic() - start
    assert AUTH_MS / 1000.0 - 0.5 <= elapsed <= AUTH_MS / 1000.0 + T(3)
    silent.close()
    half.close()


def test_scram_exchange_by_hand(server):
    """SCRAM-SHA-256 step by step, the way Kafka's ScramSaslServer answers:
    server-first extends the client nonce, a wrong proof fails with Kafka's
    generic message and closes."""
    import base64
    import hmac
    user, pw = SCRAM_USERS["SCRAM-SHA-256"]
    for good in (True, False):
        with sasl_connect(server) as c:
            assert handshake(c, "SCRAM-SHA-256")[0] == 0
            cnonce = base64.b64encode(os.urandom(18)).decode()
            bare = "n=%s,r=%s" % (user, cnonce)
            err, msg, sfirst, _ = authenticate(c, ("n,," + bare).encode())
            assert err == 0, msg
            attrs = dict(a.split("=", 1) for a in sfirst.decode().split(","))
            assert attrs["r"].startswith(cnonce) and len(attrs["r"]) > len(cnonce)
            assert int(attrs["i"]) == 4096
            sp = hashlib.pbkdf2_hmac("sha256", (pw if good else "x").encode(),
                                     base64.b64decode(attrs["s"]), 4096)
            ck = hmac.new(sp, b"Client Key", "sha256").digest()
            sk = hashlib.sha256(ck).digest()
            wo = "c=biws,r=" + attrs["r"]
            am = ",".join([bare, sfirst.decode(), wo]).encode()
            sig = hmac.new(sk, am, "sha256").digest()
            proof = bytes(a ^ b for a, b in zip(ck, sig))
            err, msg, sfinal, life = authenticate(
                c, (wo + ",p=" + base64.b64encode(proof).decode()).encode())
            if good:
                server_key = hmac.new(sp, b"Server Key", "sha256").digest()
                want = base64.b64encode(hmac.new(server_key, am,
                                                 "sha256").digest())
                assert (err, msg, sfinal, life) == (0, None, b"v=" + want, 0)
                assert c.api_versions(0)["error_code"] == 0
            else:
                assert err == ERR_SASL_AUTHENTICATION_FAILED
                assert msg == ("Authentication failed during authentication "
                               "due to invalid credentials with SASL "
                               "mechanism SCRAM-SHA-256")
                assert_closed(c)
    # an unknown user fails at the first message
    with sasl_connect(server) as c:
        assert handshake(c, "SCRAM-SHA-512")[0] == 0
        err, msg, _, _ = authenticate(c, b"n,,n=nobody,r=abcdefgh")
        assert err == ERR_SASL_AUTHENTICATION_FAILED
        assert msg.endswith("SCRAM-SHA-512")
        assert_closed(c)


# ---- the SCRAM admin APIs ------------------------------------------------------

def test_alter_and_describe_scram_errors(server):
    with server.connect() as c:
        res = scram_alter(c, ups=[("u-few", 1, "x", 4095),
                                  ("u-many", 2, "x", 16385),
                                  ("", 1, "x", 4096),
                                  ("u-mech", 3, "x", 4096),
                                  ("u-ok", 2, "x", 16384)],
                          dels=[("u-dup", 1), ("u-nothere", 1)])
        got = {u: (e, m) for u, e, m in res}
        assert got["u-few"] == (93, "Too few iterations")
        assert got["u-many"] == (93, "Too many iterations")
        assert got[""] == (93, "Username must not be empty")
        assert got["u-mech"] == (33, "Unknown SCRAM mechanism")
        assert got["u-ok"] == (0, None)
        assert got["u-nothere"] == (91, "Attempt to delete a user credential "
                                        "that does not exist")
        res = scram_alter(c, ups=[("u-dup", 1, "x", 4096),
                                  ("u-dup", 2, "x", 4096)])
        assert res == [("u-dup", 92, "A user credential cannot be altered "
                                     "twice in the same request")]
        # as Kafka: a user whose first op fails keeps that error
        res = scram_alter(c, ups=[("u-dup", 1, "x", 4096)],
                          dels=[("u-dup", 1)])
        assert res == [("u-dup", 91, "Attempt to delete a user credential "
                                     "that does not exist")]
        top, res = scram_describe(c, ["u-ok", "u-none", "u-ok"])
        assert top == (0, "")
        got = {u: (e, m, ci) for u, e, m, ci in res}
        assert got["u-ok"][0] == 92
        assert got["u-none"] == (91, "Attempt to describe a user credential "
                                     "that does not exist: u-none", [])
        top, res = scram_describe(c, None)
        got = {u: (e, ci) for u, e, m, ci in res}
        assert got["u-ok"] == (0, [(2, 16384)])
        assert got["scram256"] == (0, [(1, 4096)])
        assert scram_alter(c, dels=[("u-ok", 2)]) == [("u-ok", 0, None)]
        _, res = scram_describe(c, ["u-ok"])
        assert res[0][1] == 91


def test_scram_credentials_survive_restart(samsa, certs):
    srv = start_sasl(samsa, certs)
    with srv.connect() as c:
        assert scram_alter(c, ups=[("carol", 2, "carol-pw", 8192)]) == \
            [("carol", 0, None)]
    srv.stop()
    srv2 = start_sasl(samsa, certs, workdir=srv.workdir, ports=srv.all_ports)
    conf = {"bootstrap.servers": "%s:%d" % (HOST,
                                            srv2.sasl_ports["SASL_PLAINTEXT"]),
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "carol",
            "sasl.password": "carol-pw"}
    rc, out = kcat(conf, "-L", "-m", "10")
    assert rc == 0, out
    with srv2.connect() as c:
        _, res = scram_describe(c, ["carol"])
        assert res == [("carol", 0, "", [(2, 8192)])]


def _format(overrides, *extra):
    """samsa-server format of a single node's dirs: (rc, stdout, stderr)."""
    args = [samsa_harness.server_binary(), "format", "--cluster-id",
            "MkU3OEVBNTcwNTJENDM2Qg"]
    for k, v in overrides.items():
        args += ["--override", "%s=%s" % (k, v)]
    r = subprocess.run(args + list(extra), env=samsa_harness.base_env(),
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=T(20))
    return r.returncode, r.stdout, r.stderr


def test_format_add_scram(samsa, certs):
    """`samsa-server format --add-scram` (kafka-storage's, KIP-900): the
    credentials, by password or by salted password, are in the metadata
    log from its bootstrap: SCRAM clients authenticate on the first start
    with no AlterUserScramCredentials, DescribeUserScramCredentials lists
    them, the file holds no password; bad arguments fail with Kafka's
    messages."""
    ports = set()
    while len(ports) < 4:
        ports.add(free_port())
    ports = tuple(sorted(ports))
    d = samsa.new_dir()
    o = sasl_overrides(certs, ports)
    o["log.dirs"] = os.path.join(d, "samsa-data")
    salt = b"format-salt-1234"
    sp = hashlib.pbkdf2_hmac("sha512", b"erin-pw", salt, 8192)
    rc, out, err = _format(
        o, "--add-scram", "SCRAM-SHA-256=[name=dave,password=dave-pw]",
        "--add-scram=SCRAM-SHA-512=[name=erin,iterations=8192,salt=\"%s\","
        "saltedpassword=\"%s\"]" % (base64.b64encode(salt).decode(),
                                    base64.b64encode(sp).decode()))
    assert rc == 0, err
    text = open(os.path.join(d, "samsa-data", "bootstrap.scram")).read()
    assert "dave-pw" not in text and "erin-pw" not in text, text
    srv = samsa.start(overrides=o, workdir=d, use_ports=False,
                      ports=(ports[0], ports[1]))
    port = ports[2]
    for mech, user, pw in (("SCRAM-SHA-256", "dave", "dave-pw"),
                           ("SCRAM-SHA-512", "erin", "erin-pw")):
        conf = {"bootstrap.servers": "%s:%d" % (HOST, port),
                "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mech,
                "sasl.username": user, "sasl.password": pw}
        rc, out = kcat(conf, "-L", "-m", "10")
        assert rc == 0, out
        conf["sasl.password"] = pw + "x"
        rc, out = kcat(conf, "-L", "-m", "10")
        assert rc != 0, out
    with srv.connect() as c:
        _, res = scram_describe(c, ["dave", "erin"])
        assert res == [("dave", 0, "", [(1, 4096)]),
                       ("erin", 0, "", [(2, 8192)])], res
    # a restart does not bootstrap again (nor duplicate them)
    assert srv.stop() == []
    srv = samsa.start(overrides=o, workdir=d, use_ports=False,
                      ports=(ports[0], ports[1]))
    with srv.connect() as c:
        _, res = scram_describe(c, ["dave"])
        assert res == [("dave", 0, "", [(1, 4096)])], res


@pytest.mark.parametrize("arg,message", [
    ("SCRAM-SHA-256", "Failed to find equals sign in SCRAM argument "
                      "'SCRAM-SHA-256'"),
    ("SCRAM-SHA-1=[name=a,password=b]",
     "The add-scram mechanism SCRAM-SHA-1 is not supported."),
    ("SCRAM-SHA-256=name=a,password=b]",
     "Expected configuration string to start with ["),
    ("SCRAM-SHA-256=[password=b]", "You must supply 'name' to add-scram"),
    ("SCRAM-SHA-256=[name=a]",
     "You must supply one of 'password' or 'saltedpassword' to add-scram"),
    ("SCRAM-SHA-256=[name=a,saltedpassword=YWJj]",
     "You must supply 'salt' with 'saltedpassword' to add-scram"),
    ("SCRAM-SHA-256=[name=a,password=b,iterations=100]",
     "The 'iterations' value must be >= 4096 for add-scram using "
     "SCRAM-SHA-256"),
    ("SCRAM-SHA-256=[name=a,password=b,colour=red]",
     "Unknown SCRAM configurations: colour"),
    ("SCRAM-SHA-256=[name=a,password=b,salt=@@@]",
     "Failed to decode given salt: @@@"),
])
def test_format_add_scram_errors(samsa, certs, arg, message):
    ports = tuple(sorted({free_port() for _ in range(8)})[:4])
    d = samsa.new_dir()
    o = sasl_overrides(certs, ports)
    o["log.dirs"] = os.path.join(d, "samsa-data")
    rc, out, err = _format(o, "--add-scram", arg)
    assert rc != 0 and message in err, (rc, err)
    assert not os.path.exists(os.path.join(d, "samsa-data", "meta.properties"))


# ---- configuration ---------------------------------------------------------------

def test_contract_sasl_ssl_config_with_only_kafka_keys(samsa, certs, tmp_path):
    """Issue 21's contract: SASL_SSL from Kafka's keys alone (one PEM file
    with key and chain), PLAIN users from the listener's JAAS config."""
    port, ctl = free_port(), free_port()
    props = tmp_path / "server.properties"
    with open(props, "w") as f:
        f.write("""listeners=SASL_SSL://%(h)s:%(port)d,CONTROLLER://%(h)s:%(ctl)d
listener.security.protocol.map=SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT
ssl.keystore.type=PEM
ssl.keystore.location=%(pem)s
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-pw";
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:admin
allow.everyone.if.no.acl.found=false
log.dirs=%(dir)s
""" % {"h": HOST, "port": port, "ctl": ctl, "pem": certs.p("server.pem"),
           "dir": str(tmp_path / "data")})
    proc = subprocess.Popen([samsa_harness.server_binary(), str(props),
                             "--override", "metrics.listener=http://%s:%d"
                             % (HOST, free_port())],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        conf = {"bootstrap.servers": "%s:%d" % (HOST, port),
                "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
                "sasl.username": "admin", "sasl.password": "admin-secret",
                "ssl.ca.location": certs.p("ca.pem")}
        ok = False
        deadline = time.monotonic() + T(20)
        while time.monotonic() < deadline and not ok:
            rc, out = kcat(conf, "-L", "-m", "3", timeout=20)
            ok = rc == 0
            if not ok:
                assert proc.poll() is None, proc.stderr.read().decode()
                time.sleep(0.3)
        assert ok, out
        assert "sasl_ssl://%s:%d" % (HOST, port) in out.lower(), out
    finally:
        proc.terminate()
        proc.wait(timeout=T(20))


@pytest.mark.parametrize("extra,message", [
    ({"sasl.enabled.mechanisms": "GSSAPI"},
     "sasl.enabled.mechanisms is 'GSSAPI', which names no SASL mechanism "
     "Samsa supports"),
    ({"listener.name.sasl_ssl.sasl.enabled.mechanisms": "GSSAPI"},
     "listener.name.sasl_ssl.sasl.enabled.mechanisms is 'GSSAPI'"),
    ({"listener.name.sasl_plaintext.plain.sasl.jaas.config": None,
      "listener.name.sasl_ssl.plain.sasl.jaas.config": None},
     "enables SASL mechanism PLAIN but has no JAAS configuration: set "
     "listener.name.sasl_plaintext.plain.sasl.jaas.config"),
    ({"listener.name.sasl_plaintext.plain.sasl.jaas.config":
      'org.apache.kafka.common.security.plain.PlainLoginModule required '
      'user_a="x"'},
     "listener.name.sasl_plaintext.plain.sasl.jaas.config': the login "
     "module's options must end with ';'"),
    ({"listener.name.sasl_plaintext.plain.sasl.jaas.config":
      'org.apache.kafka.common.security.scram.ScramLoginModule required;'},
     "'listener.name.sasl_plaintext.plain.sasl.jaas.config' has no "
     "org.apache.kafka.common.security.plain.PlainLoginModule"),
    ({"listener.name.sasl_plaintext.plain.sasl.jaas.config":
      'org.apache.kafka.common.security.plain.PlainLoginModule maybe;'},
     "invalid control flag 'maybe'"),
])
def test_startup_errors_name_the_key(samsa, certs, extra, message):
    ports = tuple(sorted({free_port() for _ in range(4)}))
    while len(ports) < 4:
        ports = tuple(sorted({free_port() for _ in range(4)}))
    o = sasl_overrides(certs, ports)
    for k, v in extra.items():
        if v is None:
            o.pop(k, None)
        else:
            o[k] = v
    rc, err, _ = samsa.run_to_exit(overrides=o, use_ports=False)
    assert rc not in (None, 0), err
    assert message in err, err


def test_controller_listener_stays_plaintext(samsa, certs):
    ports = tuple(sorted({free_port() for _ in range(4)}))
    o = sasl_overrides(certs, ports)
    o["listener.security.protocol.map"] = (
        "PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_PLAINTEXT,"
        "SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL")
    rc, err, _ = samsa.run_to_exit(overrides=o, use_ports=False)
    assert rc not in (None, 0), err
    assert "controller listener 'CONTROLLER' uses security protocol " \
           "SASL_PLAINTEXT" in err, err


# ---- listeners without SASL (KafkaApis' answers) ----------------------------------

def test_api_versions_lists_sasl_and_scram_apis(server):
    with server.connect() as c:
        keys = c.api_versions(3)["api_keys"]
    assert keys[kwire.API_SASL_HANDSHAKE] == (0, 1)
    assert keys[kwire.API_SASL_AUTHENTICATE] == (0, 2)
    assert keys[API_DESCRIBE_SCRAM] == (0, 0)
    assert keys[API_ALTER_SCRAM] == (0, 0)


@pytest.mark.parametrize("version", [0, 1])
def test_sasl_handshake_on_plaintext_listener_is_illegal_state(server, version):
    with server.connect() as c:
        r = c.request_raw(kwire.API_SASL_HANDSHAKE, version,
                          kwire.Writer().string("PLAIN").bytes())
        assert r.i16() == 34
        assert r.array(lambda rr: rr.string()) == []
        r.done()
        # the connection stays usable, as on Kafka's PLAINTEXT listeners
        assert c.api_versions(0)["error_code"] == 0


@pytest.mark.parametrize("version", [0, 1, 2])
def test_sasl_authenticate_on_plaintext_listener_is_illegal_state(server, version):
    flex = version >= 2
    with server.connect() as c:
        w = kwire.Writer().blob(b"\0alice\0pw", flexible=flex)
        if flex:
            w.tags()
        r = c.request_raw(kwire.API_SASL_AUTHENTICATE, version, w.bytes())
        assert r.i16() == 34
        assert r.string(flexible=flex, nullable=True) == \
            "SaslAuthenticate request received after successful authentication"
        assert r.blob(flexible=flex) == b""
        if version >= 1:
            assert r.i64() == 0
        if flex:
            r.tags()
        r.done()


# ---- the principal from a client certificate (SSL listeners) ----------------------

def test_ssl_client_certificate_principal(samsa, certs):
    """ssl.client.auth=required on an SSL listener: the principal is the
    certificate's subject as Kafka's DEFAULT ssl.principal.mapping.rules
    names it (RFC 2253, most specific RDN first), seen in the request log;
    a RULE: mapping is refused at start."""
    from test_tls import start_tls
    import test_tls
    _leaf(certs, "orgclient", "ca", "good-client/O=Samsa Test")
    srv = start_tls(samsa, certs, {
        "listener.name.ssl.ssl.client.auth": "required",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": certs.p("ca.pem"),
        "request.log.enable": "true", "request.log.file": "stderr"})
    rc, out = test_tls.kcat(srv.ssl_port, certs, "-L", client="orgclient")
    assert rc == 0, out
    assert samsa_harness.wait_until(
        lambda: '"principal":"User:O=Samsa Test,CN=good-client"'
                in srv.stderr_text(), T(5)), srv.stderr_tail()
    # the plaintext listener's requests stay anonymous
    with srv.connect() as c:
        assert c.api_versions(0)["error_code"] == 0
    assert '"securityProtocol":"PLAINTEXT","principal":"User:ANONYMOUS"' \
        in srv.stderr_text()
    ports = tuple(sorted({free_port() for _ in range(4)}))
    o = sasl_overrides(certs, ports,
                       {"ssl.principal.mapping.rules":
                        "RULE:^CN=(.*?),O=(.*)$/$1/,DEFAULT"})
    rc, err, _ = samsa.run_to_exit(overrides=o, use_ports=False)
    assert rc not in (None, 0), err
    assert "ssl.principal.mapping.rules" in err, err
