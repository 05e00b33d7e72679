"""SASL (issue 21, item 2).  What exists so far: the SaslHandshake (17) and
SaslAuthenticate (36) codecs and their handlers for connections that are
not (or no longer) authenticating, which answer ILLEGAL_SASL_STATE as
Kafka's KafkaApis does.  The SASL listeners themselves (SASL_PLAINTEXT,
SASL_SSL, PLAIN) are not there yet: see README, Security."""

import pytest

import kwire


@pytest.fixture(scope="module")
def server(samsa_module):
    return samsa_module.start()


def test_api_versions_lists_sasl_apis(server):
    with server.connect() as c:
        keys = c.api_versions(3)["api_keys"]
    assert keys[kwire.API_SASL_HANDSHAKE] == (0, 1)
    assert keys[kwire.API_SASL_AUTHENTICATE] == (0, 2)


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
