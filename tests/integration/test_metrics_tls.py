"""The metrics listener over TLS: metrics.listener=https://host:port with
metrics.listener.ssl.keystore.location (PEM key and chain, optionally an
encrypted key and metrics.listener.ssl.key.password) serves /metrics, the
status page and POST /loglevel over TLS 1.2 and 1.3 only, verified by a
client that trusts the test CA; plain HTTP to it gets no answer; a wrong
set-up stops the start with a line naming the key (and the file)."""

import socket
import ssl
import urllib.error
import urllib.request

import pytest

import promtext
from samsa_harness import HOST, T, free_port
from test_tls import certs  # noqa: F401  (server.pem, .enc.pem, mismatch.pem)


def start_https(samsa, certs, **extra):  # noqa: F811
    port = free_port()
    o = {"metrics.listener": "https://%s:%d" % (HOST, port),
         "metrics.listener.ssl.keystore.location": certs.p("server.pem")}
    o.update(extra)
    srv = samsa.start(overrides=o)
    srv.metrics_port = port
    return srv


def client_ctx(certs, version=None):
    ctx = ssl.create_default_context(cafile=certs.p("ca.pem"))
    if version is not None:
        ctx.minimum_version = version
        ctx.maximum_version = version
    return ctx


def https(srv, certs, path, method="GET", body=None, headers=None,
          version=None):
    req = urllib.request.Request(srv.metrics_url(path), data=body,
                                 method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=T(10),
                                    context=client_ctx(certs, version)) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_https_serves_metrics_status_and_loglevel(samsa, certs):
    srv = start_https(samsa, certs,
                      **{"metrics.listener.admin.token": "tok"})
    assert srv.metrics_url("/x").startswith("https://")
    status, text = https(srv, certs, "/metrics")
    assert status == 200, (status, text)
    families = promtext.parse(text)
    assert any(name.startswith("samsa_") for name in families), \
        sorted(families)[:20]
    assert https(srv, certs, "/health")[0] == 200
    status, page = https(srv, certs, "/")
    assert status == 200 and "<html" in page.lower(), page[:200]
    # TLS 1.2 and 1.3 both served, the certificate verified against the CA
    for version in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
        assert https(srv, certs, "/health", version=version)[0] == 200
    # the admin token travels encrypted; without it 401 as over HTTP
    assert https(srv, certs, "/loglevel", "POST", b"DEBUG")[0] == 401
    status, _ = https(srv, certs, "/loglevel", "POST", b"DEBUG",
                      {"Authorization": "Bearer tok"})
    assert status == 200
    assert https(srv, certs, "/loglevel")[1].strip() == "DEBUG"


def test_https_refuses_plain_http_and_untrusted_clients(samsa, certs):
    srv = start_https(samsa, certs)
    # a client that does not trust the CA fails its handshake
    with pytest.raises(ssl.SSLCertVerificationError):
        with socket.create_connection((HOST, srv.metrics_port),
                                      timeout=T(10)) as raw:
            ssl.create_default_context().wrap_socket(
                raw, server_hostname="localhost")
    # plain HTTP gets no HTTP answer from the TLS port
    with socket.create_connection((HOST, srv.metrics_port),
                                  timeout=T(10)) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        got = b""
        try:
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                got += chunk
        except (ConnectionResetError, socket.timeout):
            pass
    assert not got.startswith(b"HTTP/"), got[:100]
    # still serving after both
    assert https(srv, certs, "/health")[0] == 200


def test_https_encrypted_key(samsa, certs):
    srv = start_https(samsa, certs, **{
        "metrics.listener.ssl.keystore.location": certs.p("server.enc.pem"),
        "metrics.listener.ssl.key.password": "s3cret"})
    assert https(srv, certs, "/health")[0] == 200


def _start_fails(samsa, extra):
    o = {"metrics.listener": "https://%s:%d" % (HOST, free_port())}
    o.update(extra)
    rc, err, _ = samsa.run_to_exit(overrides=o, timeout=T(20))
    assert rc not in (0, None), err
    return err


def test_https_startup_errors_name_the_key(samsa, certs):
    err = _start_fails(samsa, {})
    assert "needs metrics.listener.ssl.keystore.location" in err, err
    err = _start_fails(samsa, {
        "metrics.listener": "http://%s:%d" % (HOST, free_port()),
        "metrics.listener.ssl.keystore.location": certs.p("server.pem")})
    assert "metrics.listener.ssl.keystore.location is set but" in err, err
    missing = certs.p("nope.pem")
    err = _start_fails(samsa, {
        "metrics.listener.ssl.keystore.location": missing})
    assert "metrics.listener.ssl.keystore.location '%s'" % missing in err, err
    assert "No such file" in err, err
    enc = certs.p("server.enc.pem")
    err = _start_fails(samsa, {
        "metrics.listener.ssl.keystore.location": enc,
        "metrics.listener.ssl.key.password": "wrong"})
    assert "metrics.listener.ssl.key.password" in err, err
    assert "wrong password" in err, err
    err = _start_fails(samsa, {
        "metrics.listener.ssl.keystore.location": enc})
    assert "encrypted" in err, err
    err = _start_fails(samsa, {
        "metrics.listener.ssl.keystore.location": certs.p("mismatch.pem")})
    assert "does not match its certificate" in err, err
