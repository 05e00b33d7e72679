"""SASL OAUTHBEARER with signed JWTs checked against a JSON Web Key Set
(KIP-768; src/server/oauth_jwks.c, docs/SECURITY.md): a broker whose
OAUTHBEARER listeners use Kafka's OAuthBearerValidatorCallbackHandler with
sasl.oauthbearer.jwks.endpoint.url a file: URL holding an RSA and an EC
key (plus an encryption key and a symmetric one, which are left out),
sasl.oauthbearer.expected.audience and .expected.issuer.

- kwire by hand: tokens signed RS256, PS256, ES256 by the set's keys pass
  (the session ends with the token); a token signed by another key under
  a known kid, an unknown kid, alg none, a tampered payload, expired,
  not yet valid, without iat, another audience or issuer, no principal:
  each gets {"status":"invalid_token"}, then SASL_AUTHENTICATION_FAILED.
- Debian's confluent-kafka with an oauth_cb that signs its tokens
  produces and consumes; the request log names the principal.
- Start-up errors name the key and the file: an http(s) URL (not
  implemented), a missing file, a file that is not a key set, an RSA key
  shorter than 2048 bits, no URL at all.
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
                       sasl_overrides, start_sasl)

ERR_SASL_AUTHENTICATION_FAILED = 58
JWKS_HANDLER = ("org.apache.kafka.common.security.oauthbearer."
                "OAuthBearerValidatorCallbackHandler")
OAUTH_JAAS = ("org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
              "required;")
AUDIENCE = "kafka-test"
ISSUER = "https://issuer.test"
INVALID = b'{"status":"invalid_token"}'


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def _int_b64(n, length=None):
    length = length or (n.bit_length() + 7) // 8
    return b64u(n.to_bytes(length, "big")).decode()


class Keys:
    """The test's signing keys (cryptography) and their JWK Set file."""

    def __init__(self, d):
        from cryptography.hazmat.primitives.asymmetric import ec, rsa
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        self.other_rsa = rsa.generate_private_key(public_exponent=65537,
                                                  key_size=2048)
        rn = self.rsa.public_key().public_numbers()
        en = self.ec.public_key().public_numbers()
        jwks = {"keys": [
            {"kty": "RSA", "kid": "rsa1", "use": "sig", "n": _int_b64(rn.n),
             "e": _int_b64(rn.e)},
            {"kty": "EC", "kid": "ec1", "crv": "P-256", "alg": "ES256",
             "x": _int_b64(en.x, 32), "y": _int_b64(en.y, 32)},
            {"kty": "RSA", "kid": "enc1", "use": "enc", "n": _int_b64(rn.n),
             "e": _int_b64(rn.e)},
            {"kty": "oct", "kid": "hmac1", "k": "c2VjcmV0"},
        ]}
        self.path = os.path.join(d, "jwks.json")
        with open(self.path, "w") as f:
            json.dump(jwks, f)
        small = rsa.generate_private_key(public_exponent=65537, key_size=1024)
        sn = small.public_key().public_numbers()
        self.small_path = os.path.join(d, "small.json")
        with open(self.small_path, "w") as f:
            json.dump({"keys": [{"kty": "RSA", "kid": "s", "n": _int_b64(sn.n),
                                 "e": _int_b64(sn.e)}]}, f)

    def sign(self, claims, alg="RS256", kid="rsa1", key=None, header=None):
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec, padding
        from cryptography.hazmat.primitives.asymmetric.utils import \
            decode_dss_signature
        h = {"alg": alg, "typ": "JWT"}
        if kid is not None:
            h["kid"] = kid
        h.update(header or {})
        signing = (b64u(json.dumps(h).encode()) + b"."
                   + b64u(json.dumps(claims).encode()))
        if alg == "none":
            return signing + b"."
        if alg.startswith("ES"):
            der = (key or self.ec).sign(signing, ec.ECDSA(hashes.SHA256()))
            r, s = decode_dss_signature(der)
            sig = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        elif alg.startswith("PS"):
            sig = (key or self.rsa).sign(signing, padding.PSS(
                mgf=padding.MGF1(hashes.SHA256()),
                salt_length=hashes.SHA256.digest_size), hashes.SHA256())
        else:
            sig = (key or self.rsa).sign(signing, padding.PKCS1v15(),
                                         hashes.SHA256())
        return signing + b"." + b64u(sig)


def claims(**over):
    now = int(time.time())
    c = {"sub": "jwks-alice", "iat": now, "exp": now + 30, "aud": AUDIENCE,
         "iss": ISSUER, "scope": "kafka"}
    c.update(over)
    return {k: v for k, v in c.items() if v is not None}


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    return Keys(str(tmp_path_factory.mktemp("jwks")))


def jwks_extra(keys, url=None):
    o = {"sasl.enabled.mechanisms": "PLAIN,OAUTHBEARER",
         "sasl.oauthbearer.expected.audience": "other-aud," + AUDIENCE,
         "sasl.oauthbearer.expected.issuer": ISSUER,
         "sasl.oauthbearer.clock.skew.seconds": "5"}
    for lname in ("sasl_plaintext", "sasl_ssl"):
        o["listener.name.%s.oauthbearer.sasl.jaas.config" % lname] = OAUTH_JAAS
        o["listener.name.%s.oauthbearer.sasl.server.callback.handler.class"
          % lname] = JWKS_HANDLER
    o["sasl.oauthbearer.jwks.endpoint.url"] = url or "file://" + keys.path
    return o


@pytest.fixture(scope="module")
def server(samsa_module, certs, keys):  # noqa: F811
    return start_sasl(samsa_module, certs, extra=jwks_extra(keys))


def initial(tok):
    return b"n,,\x01auth=Bearer " + tok + b"\x01\x01"


def oauth_conn(srv):
    c = kwire.connect(HOST, srv.sasl_ports["SASL_PLAINTEXT"], T(5), "jwks-test")
    err, mechs = handshake(c, "OAUTHBEARER")
    assert (err, mechs) == (0, ["PLAIN", "OAUTHBEARER"])
    return c


@pytest.mark.parametrize("alg,kid", [("RS256", "rsa1"), ("PS256", "rsa1"),
                                     ("ES256", "ec1"), ("ES256", None)])
def test_signed_token_passes(server, keys, alg, kid):
    tok = keys.sign(claims(), alg=alg, kid=kid)
    with oauth_conn(server) as c:
        err, msg, auth, life = authenticate(c, initial(tok))
        assert (err, msg, auth) == (0, None, b""), msg
        assert 20000 < life <= 30000, life       # the session ends with exp
        assert c.api_versions(0)["error_code"] == 0
    assert samsa_harness.wait_until(
        lambda: "listener SASL_PLAINTEXT: OAUTHBEARER tokens checked against "
                "2 key(s)" in server.stderr_text(), T(1)), server.stderr_tail()


def _refused(keys):
    now = int(time.time())
    return {
        "other key, known kid": keys.sign(claims(), key=keys.other_rsa),
        "unknown kid": keys.sign(claims(), kid="nope"),
        "the encryption key's kid": keys.sign(claims(), kid="enc1"),
        "alg none": keys.sign(claims(), alg="none"),
        "HS256 against the RSA key": keys.sign(claims(), kid="rsa1",
                                               header={"alg": "HS256"}),
        "ES256 by the RSA kid": keys.sign(claims(), alg="ES256", kid="rsa1"),
        "expired": keys.sign(claims(exp=now - 60, iat=now - 120)),
        "not yet valid": keys.sign(claims(nbf=now + 60)),
        "no iat": keys.sign(claims(iat=None)),
        "no exp": keys.sign(claims(exp=None)),
        "other audience": keys.sign(claims(aud="someone-else")),
        "no audience": keys.sign(claims(aud=None)),
        "other issuer": keys.sign(claims(iss="https://evil.test")),
        "no principal": keys.sign(claims(sub=None)),
        "empty principal": keys.sign(claims(sub="")),
        "critical header": keys.sign(claims(), header={"crit": ["exp"]}),
    }


REFUSED = ["other key, known kid", "unknown kid", "the encryption key's kid",
           "alg none", "HS256 against the RSA key", "ES256 by the RSA kid",
           "expired", "not yet valid", "no iat", "no exp", "other audience",
           "no audience", "other issuer", "no principal", "empty principal",
           "critical header", "tampered payload"]


@pytest.mark.parametrize("case", REFUSED)
def test_bad_token_refused(server, keys, case):
    if case == "tampered payload":
        good = keys.sign(claims())
        h, _, s = good.split(b".")
        tok = h + b"." + b64u(json.dumps(claims(sub="mallory")).encode()) + \
            b"." + s
    else:
        tok = _refused(keys)[case]
    with oauth_conn(server) as c:
        err, msg, auth, _ = authenticate(c, initial(tok))
        assert (err, msg, auth) == (0, None, INVALID), (case, msg, auth)
        err, msg, _, _ = authenticate(c, b"\x01")
        assert (err, msg) == (ERR_SASL_AUTHENTICATION_FAILED,
                              INVALID.decode()), (case, msg)
        assert_closed(c)
    assert server.alive()


@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL"])
def test_confluent_kafka_with_signed_tokens(server, certs, keys, protocol):  # noqa: F811
    """librdkafka's oauth_cb hands it a token the test signs (as an
    identity provider's client would); produce and consume."""
    import confluent_kafka as ck
    from test_sasl import _ck_round_trip

    def oauth_cb(_config):
        c = claims(sub="ck-" + protocol.lower())
        return keys.sign(c).decode(), float(c["exp"])

    conf = {"bootstrap.servers": "%s:%d" % (HOST, server.sasl_ports[protocol]),
            "security.protocol": protocol, "sasl.mechanism": "OAUTHBEARER",
            "oauth_cb": oauth_cb}
    if protocol == "SASL_SSL":
        conf["ssl.ca.location"] = certs.p("ca.pem")
    topic = "jwks-" + protocol.lower()
    got = _ck_round_trip(ck, conf, topic)
    assert got == [b"v%d" % i for i in range(20)]
    want = '"principal":"User:ck-%s"' % protocol.lower()
    assert samsa_harness.wait_until(lambda: want in server.stderr_text(),
                                    T(5)), server.stderr_tail()


def test_startup_errors_name_the_key(samsa, certs, keys):  # noqa: F811
    def fails(extra):
        ports = (samsa_harness.free_port(), samsa_harness.free_port(),
                 samsa_harness.free_port(), samsa_harness.free_port())
        o = sasl_overrides(certs, ports, extra)
        o["log.dirs"] = os.path.join(samsa.new_dir(), "d")
        rc, err, _ = samsa.run_to_exit(o, use_ports=False)
        assert rc not in (0, None), err
        return err

    err = fails(jwks_extra(keys, "https://idp.test/jwks"))
    assert ("invalid value 'https://idp.test/jwks' for configuration "
            "'sasl.oauthbearer.jwks.endpoint.url'" in err
            and "HTTP(S) JWKS endpoints are not implemented" in err), err
    missing = os.path.join(os.path.dirname(keys.path), "nope.json")
    err = fails(jwks_extra(keys, "file://" + missing))
    assert ("sasl.oauthbearer.jwks.endpoint.url '%s': No such file" % missing
            in err), err
    err = fails(jwks_extra(keys, "file:" + certs.p("ca.pem")))
    assert "not JSON" in err, err
    err = fails(jwks_extra(keys, "file://" + keys.small_path))
    assert "key 0 (kid 's'): the RSA key is shorter than 2048 bits" in err, err
    o = jwks_extra(keys)
    del o["sasl.oauthbearer.jwks.endpoint.url"]
    err = fails(o)
    assert "sasl.oauthbearer.jwks.endpoint.url is not set" in err, err
    # the listener's own value wins over the broker's
    o = jwks_extra(keys)
    o["listener.name.sasl_plaintext.oauthbearer.sasl.oauthbearer.jwks."
      "endpoint.url"] = "file://" + missing
    err = fails(o)
    assert ("listener.name.sasl_plaintext.oauthbearer.sasl.oauthbearer.jwks."
            "endpoint.url '%s'" % missing in err), err
