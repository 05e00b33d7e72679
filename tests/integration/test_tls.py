"""TLS listeners (src/net/tls.c, docs/NETWORK.md "TLS"): a broker with
PLAINTEXT and SSL listeners side by side, driven by openssl s_client, kcat,
confluent-kafka (librdkafka) and kafka-python; mTLS with
ssl.client.auth=required; the handshake deadline; pipelined requests
inside one TLS record; start-up errors naming the key and the file.

Certificates (a throwaway CA, the server's, good, untrusted and expired
client certificates, an encrypted key) are made with the openssl command
in the test's temp dir: nothing is committed."""

import os
import socket
import ssl
import struct
import subprocess
import time

import pytest

import cli_util
import kwire
from samsa_harness import HOST, T, free_port, wait_until
from samsa_harness import set_broker as h_set



def sh(*args, **kw):
    return subprocess.run(list(args), check=True, capture_output=True, **kw)


# ---- certificates -----------------------------------------------------------

class Certs:
    def __init__(self, d):
        self.d = d

    def p(self, name):
        return os.path.join(self.d, name)


def _ca(certs, name, cn):
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
       "-keyout", certs.p(name + ".key"), "-out", certs.p(name + ".pem"),
       "-days", "2", "-subj", "/CN=" + cn)


def _leaf(certs, name, ca, cn, ext=None, expired=False):
    key, csr, crt = (certs.p(name + x) for x in (".key", ".csr", ".crt"))
    sh("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
       "-out", csr, "-subj", "/CN=" + cn)
    if expired:
        # openssl ca takes explicit dates (x509 -req cannot before 3.4)
        db = certs.p(ca + ".db")
        open(db, "w").close()
        cnf = certs.p(ca + ".cnf")
        with open(cnf, "w") as f:
            f.write("[ca]\ndefault_ca=d\n[d]\ndatabase=%s\nnew_certs_dir=%s\n"
                    "serial=%s\ndefault_md=sha256\npolicy=p\n"
                    "[p]\ncommonName=supplied\n"
                    % (db, certs.d, certs.p(ca + ".serial")))
        with open(certs.p(ca + ".serial"), "w") as f:
            f.write("1000\n")
        sh("openssl", "ca", "-batch", "-config", cnf, "-cert",
           certs.p(ca + ".pem"), "-keyfile", certs.p(ca + ".key"),
           "-in", csr, "-out", crt, "-startdate", "20200101000000Z",
           "-enddate", "20200102000000Z", "-notext")
    else:
        args = ["openssl", "x509", "-req", "-in", csr, "-CA",
                certs.p(ca + ".pem"), "-CAkey", certs.p(ca + ".key"),
                "-CAcreateserial", "-out", crt, "-days", "2"]
        if ext:
            e = certs.p(name + ".ext")
            with open(e, "w") as f:
                f.write(ext)
            args += ["-extfile", e]
        sh(*args)
    with open(certs.p(name + ".pem"), "w") as out:
        out.write(open(key).read() + open(crt).read())


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    c = Certs(str(tmp_path_factory.mktemp("tls-certs")))
    _ca(c, "ca", "Samsa Test CA")
    _ca(c, "otherca", "Somebody Else CA")
    _leaf(c, "server", "ca", "localhost",
          ext="subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    _leaf(c, "client", "ca", "good-client")
    _leaf(c, "wrongname", "ca", "other.example",
          ext="subjectAltName=DNS:other.example\n")
    _leaf(c, "rogue", "otherca", "rogue-client")
    _leaf(c, "expired", "ca", "expired-client", expired=True)
    # the server's key encrypted with "s3cret", and its chain alone
    sh("openssl", "pkey", "-in", c.p("server.key"), "-aes256", "-passout",
       "pass:s3cret", "-out", c.p("server.enc.key"))
    with open(c.p("server.enc.pem"), "w") as f:
        f.write(open(c.p("server.enc.key")).read()
                + open(c.p("server.crt")).read())
    # a key that belongs to no certificate here
    sh("openssl", "genpkey", "-algorithm", "RSA", "-out", c.p("stray.key"))
    with open(c.p("mismatch.pem"), "w") as f:
        f.write(open(c.p("stray.key")).read() + open(c.p("server.crt")).read())
    return c


# ---- servers ---------------------------------------------------------------

def start_tls(samsa, certs, extra=None, keystore=True):
    """A broker with PLAINTEXT, SSL and CONTROLLER listeners; srv.ssl_port
    is the SSL one."""
    ports = set()
    while len(ports) < 3:
        ports.add(free_port())
    plain, ctl, tls = sorted(ports)
    o = {
        "listeners": "PLAINTEXT://%s:%d,CONTROLLER://%s:%d,SSL://%s:%d"
                     % (HOST, plain, HOST, ctl, HOST, tls),
        "ssl.keystore.type": "PEM",
    }
    if keystore:
        o["ssl.keystore.location"] = certs.p("server.pem")
    d = samsa.new_dir()
    o["log.dirs"] = os.path.join(d, "samsa-data")
    o.update(extra or {})
    srv = samsa.start(overrides=o, workdir=d, use_ports=False,
                      ports=(plain, ctl))
    srv.ssl_port = tls
    return srv


def s_client(port, *args, data=b""):
    """openssl s_client against the SSL port: (returncode, output)."""
    p = subprocess.run(["openssl", "s_client", "-connect",
                        "%s:%d" % (HOST, port), "-servername", "localhost"]
                       + list(args), input=data, capture_output=True,
                       timeout=T(20))
    return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")


def kcat(port, certs, *args, client=None, data=None, timeout=20):
    cmd = ["kcat", "-b", "%s:%d" % (HOST, port), "-X",
           "security.protocol=SSL", "-X",
           "ssl.ca.location=" + certs.p("ca.pem")]
    if client:
        cmd += ["-X", "ssl.certificate.location=" + certs.p(client + ".crt"),
                "-X", "ssl.key.location=" + certs.p(client + ".key")]
    p = subprocess.run(cmd + list(args), input=data, capture_output=True,
                       timeout=T(timeout))
    return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")


def tls_socket(port, certs, timeout=None):
    ctx = ssl.create_default_context(cafile=certs.p("ca.pem"))
    raw = socket.create_connection((HOST, port), timeout=timeout or T(10))
    return ctx.wrap_socket(raw, server_hostname="localhost")


def read_frame(sock):
    def exact(n):
        b = b""
        while len(b) < n:
            chunk = sock.recv(n - len(b))
            if not chunk:
                raise kwire.ConnectionClosed("closed")
            b += chunk
        return b
    size = struct.unpack(">i", exact(4))[0]
    return exact(size)


# ---- tests -----------------------------------------------------------------

def test_s_client_versions_and_certificate(samsa, certs):
    """TLSv1.3 and TLSv1.2 handshakes succeed and verify against the CA,
    showing the configured certificate; TLSv1.1 is refused; with
    ssl.enabled.protocols=TLSv1.3 so is TLSv1.2."""
    srv = start_tls(samsa, certs)
    for flag, name in (("-tls1_3", "TLSv1.3"), ("-tls1_2", "TLSv1.2")):
        rc, out = s_client(srv.ssl_port, flag, "-CAfile", certs.p("ca.pem"))
        assert "Protocol  : %s" % name in out or \
            ("New, %s" % name in out), out
        assert "Verify return code: 0 (ok)" in out, out
        assert "CN = localhost" in out or "CN=localhost" in out, out
    rc, out = s_client(srv.ssl_port, "-tls1_1", "-cipher",
                       "DEFAULT:@SECLEVEL=0")
    assert rc != 0 and "Cipher is (NONE)" in out, out
    assert "unsupported protocol" in srv.stderr_text()

    only13 = start_tls(samsa, certs, {"ssl.enabled.protocols": "TLSv1.3"})
    rc, out = s_client(only13.ssl_port, "-tls1_2")
    assert rc != 0 and "Cipher is (NONE)" in out, out
    rc, out = s_client(only13.ssl_port, "-tls1_3", "-CAfile",
                       certs.p("ca.pem"))
    assert "TLSv1.3" in out and "Verify return code: 0 (ok)" in out, out


def test_cipher_suites(samsa, certs):
    """ssl.cipher.suites takes Kafka's IANA names: with one TLS 1.2 suite
    the handshake uses it, and a client offering only another fails."""
    srv = start_tls(samsa, certs, {
        "ssl.enabled.protocols": "TLSv1.2",
        "ssl.cipher.suites": "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"})
    rc, out = s_client(srv.ssl_port, "-tls1_2", "-CAfile", certs.p("ca.pem"))
    assert "Cipher    : ECDHE-RSA-AES256-GCM-SHA384" in out, out
    rc, out = s_client(srv.ssl_port, "-tls1_2", "-cipher",
                       "ECDHE-RSA-AES128-GCM-SHA256")
    assert rc != 0 and "Cipher is (NONE)" in out, out


def test_kcat_and_plaintext_side_by_side(samsa, certs):
    """kcat lists, produces and consumes over SSL (metadata advertises the
    SSL port to SSL clients), while the PLAINTEXT listener of the same
    broker keeps answering."""
    srv = start_tls(samsa, certs)
    rc, out = kcat(srv.ssl_port, certs, "-L")
    assert rc == 0, out
    assert "127.0.0.1:%d" % srv.ssl_port in out, out
    lines = b"".join(b"line-%d\n" % i for i in range(200))
    rc, out = kcat(srv.ssl_port, certs, "-P", "-t", "tls-kcat", data=lines)
    assert rc == 0, out
    rc, out = kcat(srv.ssl_port, certs, "-C", "-t", "tls-kcat", "-o",
                   "beginning", "-e", "-q")
    assert rc == 0, out
    assert out.split() == ["line-%d" % i for i in range(200)], out[-500:]
    with srv.connect() as c:                    # PLAINTEXT, same broker
        assert c.api_versions(0, timeout=T(5))["error_code"] == 0
        brokers = c.metadata(1, None)["brokers"]
        assert any(b["port"] == srv.port for b in brokers), brokers


def test_confluent_kafka_large_fetches(samsa, certs):
    """confluent-kafka over SSL: 24 values of 1 MB produced, read back whole
    (the Fetch's file regions go through SSL_write, not sendfile)."""
    ck = pytest.importorskip("confluent_kafka")
    srv = start_tls(samsa, certs, {"message.max.bytes": "2000000"})
    conf = {"bootstrap.servers": "%s:%d" % (HOST, srv.ssl_port),
            "security.protocol": "SSL",
            "ssl.ca.location": certs.p("ca.pem")}
    p = ck.Producer(dict(conf, **{"message.max.bytes": 1500000,
                                  "linger.ms": 5}))
    values = [bytes([i]) * (1 << 20) for i in range(24)]
    for v in values:
        p.produce("tls-big", v)
    assert p.flush(T(60)) == 0
    c = ck.Consumer(dict(conf, **{"group.id": "tls-g",
                                  "auto.offset.reset": "earliest",
                                  "fetch.max.bytes": 8 << 20,
                                  "max.partition.fetch.bytes": 8 << 20}))
    c.subscribe(["tls-big"])
    got = []
    deadline = time.monotonic() + T(60)
    while len(got) < len(values) and time.monotonic() < deadline:
        m = c.poll(1.0)
        if m is not None and m.error() is None:
            got.append(m.value())
    c.close()
    assert len(got) == len(values)
    assert got == values


def test_kafka_python(samsa, certs):
    """kafka-python's producer and consumer over SSL."""
    kafka = pytest.importorskip("kafka")
    srv = start_tls(samsa, certs)
    common = dict(bootstrap_servers="%s:%d" % (HOST, srv.ssl_port),
                  security_protocol="SSL", ssl_cafile=certs.p("ca.pem"),
                  api_version_auto_timeout_ms=int(T(10) * 1000))
    p = kafka.KafkaProducer(**common)
    for i in range(50):
        p.send("tls-kp", b"v%d" % i)
    p.flush(T(30))
    p.close()
    c = kafka.KafkaConsumer("tls-kp", auto_offset_reset="earliest",
                            consumer_timeout_ms=int(T(10) * 1000), **common)
    got = [m.value for m in c]
    c.close()
    assert got == [b"v%d" % i for i in range(50)]


def test_pipelined_requests_in_one_record(samsa, certs):
    """Ten ApiVersions requests sent in one TLS record are all answered in
    order: after the first, the rest are already decrypted inside OpenSSL
    where epoll cannot see them."""
    srv = start_tls(samsa, certs)
    s = tls_socket(srv.ssl_port, certs)
    try:
        s.sendall(b"".join(kwire.api_versions_request(0, 100 + i)
                           for i in range(10)))
        for i in range(10):
            payload = read_frame(s)
            assert struct.unpack(">i", payload[:4])[0] == 100 + i
    finally:
        s.close()


def _closed_within(sock, seconds):
    """True if the peer closes sock within seconds (EOF or reset)."""
    sock.settimeout(0.2)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if sock.recv(1024) == b"":
                return True
        except socket.timeout:
            continue
        except OSError:
            return True
    return False


def test_handshake_deadline(samsa, certs):
    """A client that never sends its ClientHello, and one that trickles a
    record header then a byte a second (never idle), are both closed at
    the handshake bound (here connections.max.idle.ms=4000, under the
    10 s default bound); meanwhile others keep working."""
    srv = start_tls(samsa, certs, {"connections.max.idle.ms": "4000"})
    silent = socket.create_connection((HOST, srv.ssl_port))
    trickle = socket.create_connection((HOST, srv.ssl_port))
    trickle.sendall(b"\x16\x03\x01\x40\x00")   # handshake record, 16 KiB
    start = time.monotonic()
    rc, out = kcat(srv.ssl_port, certs, "-L")
    assert rc == 0, out
    trickle.settimeout(0.2)
    closed = False
    while time.monotonic() - start < T(12):
        try:
            trickle.sendall(b"\x00")
        except OSError:
            closed = True
            break
        try:
            if trickle.recv(16) == b"":
                closed = True
                break
        except socket.timeout:
            pass
        except OSError:
            closed = True
            break
        time.sleep(0.8)
    took = time.monotonic() - start
    assert closed, "a trickled handshake was not closed within 12 s"
    assert took >= 3.0, took
    assert _closed_within(silent, T(5)), "silent client still open"
    assert "TLS handshake not completed in time" in srv.stderr_text()
    rc, out = kcat(srv.ssl_port, certs, "-L")
    assert rc == 0, out
    with srv.connect() as c:
        assert c.api_versions(0, timeout=T(5))["error_code"] == 0


def test_mtls_required(samsa, certs):
    """ssl.client.auth=required: a client with no certificate, one signed
    by an unknown CA and one whose certificate expired are refused (each
    logged once with the peer); a good certificate works."""
    srv = start_tls(samsa, certs, {
        "listener.name.ssl.ssl.client.auth": "required",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": certs.p("ca.pem")})
    rc, out = kcat(srv.ssl_port, certs, "-L", client="client")
    assert rc == 0, out
    for who in (None, "rogue", "expired"):
        rc, out = kcat(srv.ssl_port, certs, "-L", "-m", "4", client=who)
        assert rc != 0, (who, out)
    err = srv.stderr_text()
    assert err.count("TLS handshake failed on connection") >= 3, err[-3000:]
    assert "certificate" in err
    # the plaintext listener asks for no certificate
    with srv.connect() as c:
        assert c.api_versions(0, timeout=T(5))["error_code"] == 0


def test_listener_override_and_inline_pem(samsa, certs):
    """listener.name.ssl.ssl.keystore.location wins over a broken
    ssl.keystore.location (Kafka resolves key by key); the key store can
    also be given as PEM text (KIP-651) with an encrypted key and
    ssl.key.password."""
    srv = start_tls(samsa, certs, {
        "ssl.keystore.location": certs.p("no-such-file.pem"),
        "listener.name.ssl.ssl.keystore.location": certs.p("server.pem")})
    rc, out = kcat(srv.ssl_port, certs, "-L")
    assert rc == 0, out
    srv2 = start_tls(samsa, certs, {
        "ssl.keystore.certificate.chain": open(certs.p("server.crt")).read(),
        "ssl.keystore.key": open(certs.p("server.enc.key")).read(),
        "ssl.key.password": "s3cret"}, keystore=False)
    rc, out = kcat(srv2.ssl_port, certs, "-L")
    assert rc == 0, out


def _served_cert(port, certs):
    """The DER certificate a new TLS connection to port is shown."""
    s = tls_socket(port, certs)
    try:
        return s.getpeercert(binary_form=True)
    finally:
        s.close()


def _der(certs, name):
    return sh("openssl", "x509", "-in", certs.p(name + ".crt"), "-outform",
              "DER").stdout


INVALID_CONFIG = 40
KS_KEY = "listener.name.ssl.ssl.keystore.location"


def test_dynamic_keystore_update(samsa, certs):
    """A new key store through IncrementalAlterConfigs of
    listener.name.ssl.ssl.keystore.location (Kafka's dynamic SSL update):
    new connections get the new certificate, an open connection keeps
    working, and it survives a restart (the metadata log has it).  Refused
    with INVALID_CONFIG and Kafka's messages: without the listener prefix,
    at the cluster-default level, a file that does not load (named), a
    certificate with another subject DN or other SANs (unless
    ssl.allow.dn.changes)."""
    san = "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
    _leaf(certs, "server2", "ca", "localhost", ext=san)
    _leaf(certs, "otherdn", "ca", "broker.example", ext=san)
    _leaf(certs, "othersan", "ca", "localhost",
          ext="subjectAltName=DNS:localhost\n")
    srv = start_tls(samsa, certs)
    port = srv.ssl_port
    assert _served_cert(port, certs) == _der(certs, "server")
    old = tls_socket(port, certs)
    try:
        with srv.connect() as c:
            err, msg = h_set(c, KS_KEY, certs.p("server2.pem"))
            assert err == 0, msg
            assert wait_until(lambda: _served_cert(port, certs)
                              == _der(certs, "server2"), T(10))
            # the connection made before the change goes on
            old.sendall(kwire.api_versions_request(0, 7))
            assert struct.unpack(">i", read_frame(old)[:4])[0] == 7

            err, msg = h_set(c, "ssl.keystore.location",
                             certs.p("server2.pem"))
            assert err == INVALID_CONFIG and "only per-listener using the " \
                "listener prefix: Set(ssl.keystore.location)" in msg, msg
            err, msg = h_set(c, KS_KEY, certs.p("server2.pem"), name="")
            assert err == INVALID_CONFIG and "broker id must be specified" \
                in msg, msg
            missing = certs.p("no-such-keystore.pem")
            err, msg = h_set(c, KS_KEY, missing)
            assert err == INVALID_CONFIG and missing in msg \
                and KS_KEY in msg and "SSLFactory" in msg, msg
            err, msg = h_set(c, KS_KEY, certs.p("otherdn.pem"))
            assert err == INVALID_CONFIG \
                and "DistinguishedName does not match" in msg \
                and "CN=broker.example" in msg, msg
            err, msg = h_set(c, KS_KEY, certs.p("othersan.pem"))
            assert err == INVALID_CONFIG \
                and "SubjectAltNames do not match" in msg, msg
            # nothing refused reached the listener
            assert _served_cert(port, certs) == _der(certs, "server2")
    finally:
        old.close()
    srv = samsa.restart(srv)
    assert _served_cert(port, certs) == _der(certs, "server2")
    # an encrypted key and its password in one request (the original
    # certificate again: same identity); the password is never shown
    pw = "listener.name.ssl.ssl.key.password"
    with srv.connect() as c:
        r = c.incremental_alter_configs([(kwire.RESOURCE_BROKER, "1", [
            (KS_KEY, kwire.OP_SET, certs.p("server.enc.pem")),
            (pw, kwire.OP_SET, "s3cret")])])[0]
        assert r["error_code"] == 0, r
        res = c.describe_configs([(kwire.RESOURCE_BROKER, "1", [pw])])[0]
        assert res["error_code"] == 0, res
        e = res["configs"][0]
        assert e["value"] is None and e["is_sensitive"], e
    assert wait_until(lambda: _served_cert(port, certs)
                      == _der(certs, "server"), T(10))


def test_dynamic_keystore_dn_change_allowed(samsa, certs):
    """With ssl.allow.dn.changes=true (static, per listener) a key store of
    another subject DN is taken."""
    san = "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
    _leaf(certs, "otherdn2", "ca", "broker2.example", ext=san)
    srv = start_tls(samsa, certs,
                    {"listener.name.ssl.ssl.allow.dn.changes": "true"})
    with srv.connect() as c:
        err, msg = h_set(c, KS_KEY, certs.p("otherdn2.pem"))
        assert err == 0, msg
    assert wait_until(lambda: _served_cert(srv.ssl_port, certs)
                      == _der(certs, "otherdn2"), T(10))


def _start_fails(samsa, certs, extra):
    ports = [free_port() for _ in range(3)]
    o = {"listeners": "PLAINTEXT://%s:%d,CONTROLLER://%s:%d,SSL://%s:%d"
                      % (HOST, ports[0], HOST, ports[1], HOST, ports[2]),
         "ssl.keystore.type": "PEM"}
    o.update(extra)
    rc, err, _ = samsa.run_to_exit(overrides=o, timeout=T(20),
                                   use_ports=False)
    assert rc not in (0, None), err
    return err


def test_startup_errors_name_key_and_file(samsa, certs):
    """Wrong key password, no password for an encrypted key, a key that is
    not the certificate's, a missing file, JKS, no key store: the start
    stops with a line naming the key and the file."""
    enc = certs.p("server.enc.pem")
    err = _start_fails(samsa, certs, {"ssl.keystore.location": enc,
                                      "ssl.key.password": "wrong"})
    assert "ssl.keystore.location '%s'" % enc in err, err
    assert "ssl.key.password" in err and "wrong password" in err, err
    err = _start_fails(samsa, certs, {"ssl.keystore.location": enc})
    assert "encrypted and ssl.key.password is not set" in err, err
    err = _start_fails(samsa, certs, {
        "ssl.keystore.location": certs.p("mismatch.pem")})
    assert "does not match its certificate" in err, err
    missing = certs.p("nope.pem")
    err = _start_fails(samsa, certs, {
        "listener.name.ssl.ssl.keystore.location": missing})
    assert ("listener.name.ssl.ssl.keystore.location '%s'" % missing) in err
    assert "No such file" in err, err
    err = _start_fails(samsa, certs, {
        "ssl.keystore.type": "JKS",
        "ssl.keystore.location": certs.p("server.pem")})
    assert "ssl.keystore.type=JKS is not supported" in err, err
    err = _start_fails(samsa, certs, {})
    assert "needs a key store" in err, err
    err = _start_fails(samsa, certs, {
        "ssl.keystore.location": certs.p("server.pem"),
        "ssl.enabled.protocols": "TLSv1.1"})
    assert "ssl.enabled.protocols" in err, err
    err = _start_fails(samsa, certs, {
        "ssl.keystore.location": certs.p("server.pem"),
        "ssl.cipher.suites": "TLS_NO_SUCH_CIPHER"})
    assert "ssl.cipher.suites: no usable cipher" in err, err


def _client_props(certs, name, lines):
    path = certs.p(name + ".properties")
    with open(path, "w") as f:
        f.write("security.protocol=SSL\n" + "".join(l + "\n" for l in lines))
    return path


def test_samsa_cli_over_ssl(samsa, certs):
    """libsamsa and the samsa CLI over SSL (--command-config with
    security.protocol=SSL): topic create/list, produce and consume, with
    ssl.truststore.location or librdkafka's ssl.ca.location; with mTLS
    required, a client key store; a certificate for another host name is
    refused unless ssl.endpoint.identification.algorithm is empty; without
    the CA the handshake fails."""
    srv = start_tls(samsa, certs)
    bs = "%s:%d" % (HOST, srv.ssl_port)
    trust = _client_props(certs, "trust", [
        "ssl.truststore.type=PEM",
        "ssl.truststore.location=" + certs.p("ca.pem")])
    ca = _client_props(certs, "ca", ["ssl.ca.location=" + certs.p("ca.pem")])
    r = cli_util.run("topic", "create", "-b", bs, "--command-config", trust,
                     "tls-cli")
    assert r.rc == 0, r
    r = cli_util.run("topic", "list", "-b", bs, "--command-config", ca)
    assert r.rc == 0 and "tls-cli" in r.out, r
    r = cli_util.run("produce", "-b", bs, "--command-config", trust,
                     "tls-cli", stdin="".join("r%d\n" % i for i in range(20)))
    assert r.rc == 0, r
    r = cli_util.run("consume", "-b", bs, "--command-config", ca,
                     "--from-beginning", "-e", "tls-cli")
    assert r.rc == 0 and r.out.split() == ["r%d" % i for i in range(20)], r
    none = _client_props(certs, "none", ["ssl.truststore.type=PEM",
                                         "ssl.truststore.location="
                                         + certs.p("otherca.pem")])
    r = cli_util.run("topic", "list", "-b", bs, "--command-config", none,
                     "--timeout", "3000", timeout=20)
    assert r.rc != 0, r

    other = start_tls(samsa, certs, {
        "ssl.keystore.location": certs.p("wrongname.pem")})
    bs2 = "%s:%d" % (HOST, other.ssl_port)
    r = cli_util.run("topic", "list", "-b", bs2, "--command-config", ca,
                     "--timeout", "3000", timeout=20)
    assert r.rc != 0, r
    noeia = _client_props(certs, "noeia", [
        "ssl.ca.location=" + certs.p("ca.pem"),
        "ssl.endpoint.identification.algorithm="])
    r = cli_util.run("topic", "list", "-b", bs2, "--command-config", noeia)
    assert r.rc == 0, r

    mtls = start_tls(samsa, certs, {
        "ssl.client.auth": "required", "ssl.truststore.type": "PEM",
        "ssl.truststore.location": certs.p("ca.pem")})
    bs3 = "%s:%d" % (HOST, mtls.ssl_port)
    r = cli_util.run("topic", "list", "-b", bs3, "--command-config", ca,
                     "--timeout", "3000", timeout=20)
    assert r.rc != 0, r
    keyed = _client_props(certs, "keyed", [
        "ssl.ca.location=" + certs.p("ca.pem"), "ssl.keystore.type=PEM",
        "ssl.keystore.location=" + certs.p("client.pem")])
    r = cli_util.run("topic", "list", "-b", bs3, "--command-config", keyed)
    assert r.rc == 0, r


def test_backpressure_with_buffered_requests(samsa, certs):
    """queued.max.requests=1 and one network thread: 20 TLS connections
    each send 5 requests in one record; every connection gets its 5
    answers in order (muted connections holding decrypted requests are
    read again when they unmute, and a full queue blocks the thread
    without losing any), and the PLAINTEXT listener still answers."""
    srv = start_tls(samsa, certs, {"queued.max.requests": "1",
                                   "num.network.threads": "1"})
    socks = [tls_socket(srv.ssl_port, certs) for _ in range(20)]
    try:
        for j, s in enumerate(socks):
            s.sendall(b"".join(kwire.api_versions_request(0, j * 100 + i)
                               for i in range(5)))
        for j, s in enumerate(socks):
            for i in range(5):
                payload = read_frame(s)
                assert struct.unpack(">i", payload[:4])[0] == j * 100 + i
    finally:
        for s in socks:
            s.close()
    with srv.connect() as c:
        assert c.api_versions(0, timeout=T(5))["error_code"] == 0
