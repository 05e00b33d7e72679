"""SASL OAUTHBEARER with unsecured JWTs (issue 21 item 2, KIP-255;
src/net/oauthbearer.c, src/server/oauth_unsecured.c, docs/SECURITY.md): a
broker whose SASL_PLAINTEXT and SASL_SSL listeners enable OAUTHBEARER
beside PLAIN, validating tokens as Kafka's
OAuthBearerUnsecuredValidatorCallbackHandler with
unsecuredValidatorRequiredScope="kafka".

- Debian's confluent-kafka (librdkafka 2.0.2 makes the unsecured token
  itself: enable.sasl.oauthbearer.unsecure.jwt, sasl.oauthbearer.config)
  produces and consumes over both listeners; the request log names the
  token's principal; a token without the scope is refused.
- kwire by hand: a good token completes, SessionLifetimeMs is what the
  token has left; an expired token and one short of the scope get RFC
  7628's error JSON as the server's challenge, the client's ^A then fails
  with SASL_AUTHENTICATION_FAILED and that JSON, and the connection
  closes; a malformed initial response gets Kafka's generic answer.
- A listener enabling OAUTHBEARER without its JAAS entry, with the JWKS
  validator class but no key set, or with another validator class, does
  not start; the message names the key.
A missing client fails its test."""

import base64
import json
import os
import time

import pytest

import kwire
import samsa_harness
from samsa_harness import HOST, T
from test_sasl import (assert_closed, authenticate, certs, handshake,  # noqa: F401
                       start_sasl)

ERR_SASL_AUTHENTICATION_FAILED = 58
OAUTH_JAAS = ("org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
              'required unsecuredValidatorRequiredScope="kafka" '
              'unsecuredValidatorAllowableClockSkewMs="1000";')
EXTRA = {"sasl.enabled.mechanisms": "PLAIN,OAUTHBEARER",
         "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": OAUTH_JAAS,
         "listener.name.sasl_ssl.oauthbearer.sasl.jaas.config": OAUTH_JAAS}


@pytest.fixture(scope="module")
def server(samsa_module, certs):  # noqa: F811
    return start_sasl(samsa_module, certs, extra=EXTRA)


def b64(obj):
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=")


def token(claims):
    return b64({"alg": "none"}) + b"." + b64(claims) + b"."


def initial(tok, authzid=""):
    return (b"n," + (b"a=" + authzid.encode() if authzid else b"") + b",\x01"
            b"auth=Bearer " + tok + b"\x01\x01")


def oauth_conn(srv):
    c = kwire.connect(HOST, srv.sasl_ports["SASL_PLAINTEXT"], T(5), "oauth-test")
    err, mechs = handshake(c, "OAUTHBEARER")
    assert (err, mechs) == (0, ["PLAIN", "OAUTHBEARER"])
    return c


def test_good_token_and_session_lifetime(server):
    exp = int(time.time()) + 30
    with oauth_conn(server) as c:
        err, msg, auth, life = authenticate(
            c, initial(token({"sub": "alice", "exp": exp, "scope": "kafka other"}),
                       "alice"))
        assert (err, msg, auth) == (0, None, b"")
        # the session ends with the token (connections.max.reauth.ms unset)
        assert 20000 < life <= 30000, life
        assert c.api_versions(0)["error_code"] == 0


@pytest.mark.parametrize("claims,challenge", [
    ({"sub": "alice", "exp": 1000, "scope": "kafka"},
     b'{"status":"invalid_token"}'),
    ({"sub": "alice", "exp": 4102444800, "scope": "other"},
     b'{"status":"insufficient_scope", "scope":"[kafka]"}'),
    ({"exp": 4102444800, "scope": "kafka"}, b'{"status":"invalid_token"}'),
])
def test_refused_token_gets_the_error_then_fails(server, claims, challenge):
    with oauth_conn(server) as c:
        err, msg, auth, _ = authenticate(c, initial(token(claims)))
        assert (err, msg, auth) == (0, None, challenge)
        err, msg, auth, _ = authenticate(c, b"\x01")
        assert (err, msg) == (ERR_SASL_AUTHENTICATION_FAILED,
                              challenge.decode()), msg
        assert_closed(c)


def test_malformed_initial_response(server):
    with oauth_conn(server) as c:
        err, msg, _, _ = authenticate(c, b"n,,\x01auth=Basic x\x01\x01")
        assert err == ERR_SASL_AUTHENTICATION_FAILED
        assert msg == ("Authentication failed during authentication due to "
                       "invalid credentials with SASL mechanism OAUTHBEARER")
        assert_closed(c)
    assert server.alive()


def rdkafka_oauth(srv, certs, protocol, scope="kafka"):  # noqa: F811
    conf = {"bootstrap.servers": "%s:%d" % (HOST, srv.sasl_ports[protocol]),
            "security.protocol": protocol, "sasl.mechanism": "OAUTHBEARER",
            "enable.sasl.oauthbearer.unsecure.jwt": True,
            "sasl.oauthbearer.config": "principal=oauth-alice scope=%s" % scope}
    if protocol == "SASL_SSL":
        conf["ssl.ca.location"] = certs.p("ca.pem")
    return conf


@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL"])
def test_confluent_kafka_oauthbearer(server, certs, protocol):  # noqa: F811
    import confluent_kafka as ck
    from test_sasl import _ck_round_trip
    topic = "oauth-" + protocol.lower()
    got = _ck_round_trip(ck, rdkafka_oauth(server, certs, protocol), topic)
    assert got == [b"v%d" % i for i in range(20)]
    assert samsa_harness.wait_until(
        lambda: '"principal":"User:oauth-alice"' in server.stderr_text(),
        T(5)), server.stderr_tail()


def test_confluent_kafka_without_the_scope(server, certs):  # noqa: F811
    import confluent_kafka as ck
    errors = []
    conf = dict(rdkafka_oauth(server, certs, "SASL_PLAINTEXT", scope="other"),
                **{"error_cb": lambda e: errors.append(e)})
    p = ck.Producer(conf)
    deadline = time.monotonic() + T(15)
    while not errors and time.monotonic() < deadline:
        p.poll(0.2)
    assert any(e.code() == ck.KafkaError._AUTHENTICATION for e in errors), errors
    assert any("insufficient_scope" in e.str() for e in errors), errors


def test_listener_config_errors(samsa, certs):  # noqa: F811
    from test_sasl import sasl_overrides
    ports = (samsa_harness.free_port(), samsa_harness.free_port(),
             samsa_harness.free_port(), samsa_harness.free_port())
    o = sasl_overrides(certs, ports, {"sasl.enabled.mechanisms": "OAUTHBEARER"})
    o["log.dirs"] = os.path.join(samsa.new_dir(), "d")
    rc, err, _ = samsa.run_to_exit(o, use_ports=False)
    assert rc not in (0, None), err
    assert "enables SASL mechanism OAUTHBEARER but has no JAAS configuration" in err, err
    o.update(EXTRA)
    o["sasl.enabled.mechanisms"] = "OAUTHBEARER"
    o["listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class"] = \
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
    rc, err, _ = samsa.run_to_exit(o, use_ports=False)
    assert rc not in (0, None), err
    # the JWKS validator (KIP-768, test_sasl_oauthbearer_jwks.py) needs its
    # key set
    assert ("OAuthBearerValidatorCallbackHandler but "
            "sasl.oauthbearer.jwks.endpoint.url is not set" in err), err
    assert "unknown configuration" not in err, err
    o["listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class"] = \
        "com.example.MyValidator"
    rc, err, _ = samsa.run_to_exit(o, use_ports=False)
    assert rc not in (0, None), err
    assert ("listener.name.sasl_plaintext.oauthbearer.sasl.server.callback."
            "handler.class" in err and "com.example.MyValidator" in err), err
