"""Client quotas by user (issue 21, item 3: "quotas by `user` entity apply to
the authenticated principal"): a broker with a SASL_PLAINTEXT listener and
PLAIN users alice and bob; alice has producer_byte_rate 3000, bob 300000,
the default user 6000.  The same 40 KB produce (client id "same" for all)
earns each principal the throttle time its own quota gives, on its own
sensor: Kafka's ClientQuotaManager with the session's user name.  The
PLAINTEXT listener's User:ANONYMOUS gets the default user's quota.  The
metrics carry the user tag."""

import kwire
import promtext
from samsa_harness import HOST, T
from test_quotas import alter, ok
from test_sasl import authenticate, certs, handshake, start_sasl  # noqa: F401

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule '
              'required user_admin="admin-secret" user_alice="alice-pw" '
              'user_bob="bob-pw";')


def login(srv, user, pw):
    c = kwire.connect(HOST, srv.sasl_ports["SASL_PLAINTEXT"], T(5), "same")
    assert handshake(c, "PLAIN")[0] == 0
    assert authenticate(c, b"\0%s\0%s" % (user.encode(), pw.encode()))[0] == 0
    return c


def scrape(srv):
    import urllib.request
    with urllib.request.urlopen(srv.metrics_url("/metrics"), timeout=T(10)) as r:
        return promtext.parse(r.read().decode())


def test_user_quotas_follow_the_principal(samsa, certs):  # noqa: F811
    srv = start_sasl(samsa, certs, extra={
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS})
    with srv.connect(client_id="same") as c:
        assert c.create_topic("uq")["error_code"] == 0
        c.wait_topic("uq", timeout=T(10))
        ok(alter(c, [({"user": "alice"}, [("producer_byte_rate", 3000.0)]),
                     ({"user": "bob"}, [("producer_byte_rate", 300000.0)]),
                     ({"user": None}, [("producer_byte_rate", 6000.0)])]))
    # 40 KB over the 10 s minimum span is 4000 B/s: alice (3000 B/s) is
    # throttled (4000 - 3000) / 3000 * 10 s, about 3.3 s; bob not at all;
    # ANONYMOUS (the default user, 6000 B/s) not either, until a second
    # 40 KB (8000 B/s: about 3.3 s)
    batch = kwire.encode_batch([kwire.Record(b"u" * 40000)])
    got = {}
    for user, pw in (("alice", "alice-pw"), ("bob", "bob-pw")):
        with login(srv, user, pw) as c:
            p = c.produce("uq", 0, batch, version=9, timeout=T(10))
            assert p["error_code"] == 0
            got[user] = p["throttle_time_ms"]
    with srv.connect(client_id="same") as c:
        p1 = c.produce("uq", 0, batch, version=9, timeout=T(10))
        assert p1["error_code"] == 0
        got["ANONYMOUS-1"] = p1["throttle_time_ms"]
    print("throttle ms by user:", got)
    assert 2500 <= got["alice"] <= 4500, got
    assert got["bob"] == 0, got
    assert got["ANONYMOUS-1"] == 0, got
    # a second ANONYMOUS produce after the first's throttle would have
    # passed: the default user's sensor is ANONYMOUS's own, not alice's
    with srv.connect(client_id="same") as c:
        p2 = c.produce("uq", 0, batch, version=9, timeout=T(10))
        assert p2["error_code"] == 0
        assert 2500 <= p2["throttle_time_ms"] <= 4500, p2
    fams = scrape(srv)
    lim = fams["samsa_client_quota_limit"]
    assert lim.value(quota_type="Produce", user="alice", client_id="") == 3000
    assert lim.value(quota_type="Produce", user="bob", client_id="") == 300000
    assert lim.value(quota_type="Produce", user="ANONYMOUS",
                     client_id="") == 6000
    thr = fams["samsa_client_quota_throttled_requests_total"]
    assert thr.value(quota_type="Produce", user="alice", client_id="") == 1
    assert thr.value(quota_type="Produce", user="bob", client_id="") == 0
