"""libsamsa and the samsa CLI over SASL (issue 21): PLAIN, SCRAM-SHA-256
and SCRAM-SHA-512 on SASL_PLAINTEXT and SASL_SSL, wrong passwords and
unsupported mechanisms, bad client configuration, KIP-368
re-authentication, and `samsa user scram set|list|delete`.

The cases run against every peer in PEERS: Apache Kafka 4.4
(kafka_sasl.SaslKafkaBroker) and samsa-server (samsa_sasl.SaslSamsaServer,
the same listeners and users).  A peer is any object with

    sasl_bootstrap(proto)              host:port of its SASL_PLAINTEXT /
                                       SASL_SSL / PLAINONLY listener
    client_props(proto, mech, user, pw, jaas_config=True)
    bootstrap()                        its PLAINTEXT listener
    stop() -> [problems]

with the users of kafka_sasl.PLAIN_USERS and SCRAM_USERS."""

import os
import subprocess
import sys
import tempfile
import time
import uuid

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
sys.path.insert(0, os.path.join(_HERE, "..", "integration"))

import cli_util  # noqa: E402
import kafka_broker  # noqa: E402
import kafka_sasl  # noqa: E402
import samsa_sasl  # noqa: E402
from kafka_sasl import PLAIN_USERS, SCRAM_USERS  # noqa: E402
import samsa_harness  # noqa: E402
from samsa_harness import T  # noqa: E402


def wait_until(pred, timeout):
    assert samsa_harness.wait_until(pred, T(timeout), interval=0.3), \
        "not within %d s" % timeout


def start_kafka():
    kafka_broker.kafka_lib()            # fail (not skip) without the jars
    kafka_broker.java()
    return kafka_sasl.SaslKafkaBroker.start()


def start_samsa():
    return samsa_sasl.SaslSamsaServer.start()


# name -> start function: every case runs against both, with the same
# expectations
PEERS = {"kafka": start_kafka, "samsa": start_samsa}

_peers = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed and rep.when == "call":
        for p in _peers:
            p.keep = True
            rep.sections.append(("peer", p.describe(40)))


@pytest.fixture(scope="module", params=sorted(PEERS))
def peer(request):
    p = PEERS[request.param]()
    _peers.append(p)
    try:
        yield p
    finally:
        _peers.remove(p)
        problems = p.stop()
    if problems:
        pytest.fail("peer problems at teardown:\n%s" % "\n".join(problems),
                    pytrace=False)


@pytest.fixture(scope="module")
def confdir():
    with tempfile.TemporaryDirectory(prefix="samsa-sasl-") as d:
        yield d


def write_props(confdir, props):
    path = os.path.join(confdir, "%s.properties" % uuid.uuid4().hex[:8])
    with open(path, "w") as f:
        for k, v in props.items():
            # a properties file's own escape is the backslash
            f.write("%s=%s\n" % (k, v.replace("\\", "\\\\")))
    return path


def samsa(peer, confdir, proto, mech, user, pw, *args, jaas_config=True,
          stdin=None, timeout=60, extra=None):
    props = peer.client_props(proto, mech, user, pw, jaas_config=jaas_config)
    props.update(extra or {})
    cfg = write_props(confdir, props)
    return cli_util.run(*args, "-b", peer.sasl_bootstrap(proto),
                        "--command-config", cfg, stdin=stdin, timeout=timeout)


def creds(mech):
    if mech == "PLAIN":
        return "bob", PLAIN_USERS["bob"]
    return "alice", SCRAM_USERS["alice"]


def topic_name():
    return "sasl-" + uuid.uuid4().hex[:10]


# -- round trips ---------------------------------------------------------------

@pytest.mark.parametrize("proto", kafka_sasl.PROTOCOLS)
@pytest.mark.parametrize("mech", kafka_sasl.MECHANISMS)
def test_produce_consume_round_trip(peer, confdir, proto, mech):
    user, pw = creds(mech)
    topic = topic_name()
    r = samsa(peer, confdir, proto, mech, user, pw, "topic", "create", topic,
              "-p", "2")
    assert r.rc == 0, r
    lines = ["%s-%s-%d" % (proto, mech, i) for i in range(5)]
    r = samsa(peer, confdir, proto, mech, user, pw, "produce", topic,
              stdin="\n".join(lines) + "\n")
    assert r.rc == 0, r
    r = samsa(peer, confdir, proto, mech, user, pw, "consume", topic,
              "--from-beginning", "-n", "5", "--timeout", "20000")
    assert r.rc == 0, r
    assert sorted(r.out.split()) == sorted(lines)
    r = samsa(peer, confdir, proto, mech, user, pw, "topic", "describe",
              topic, "--json")
    assert r.rc == 0, r
    r = samsa(peer, confdir, proto, mech, user, pw, "topic", "delete", topic)
    assert r.rc == 0, r


@pytest.mark.parametrize("mech", kafka_sasl.MECHANISMS)
def test_librdkafka_username_password_keys(peer, confdir, mech):
    user, pw = creds(mech)
    r = samsa(peer, confdir, "SASL_SSL", mech, user, pw, "cluster", "info",
              "--json", jaas_config=False)
    assert r.rc == 0, r
    assert r.json()["brokers"], r


def test_group_consume_and_reauthentication(peer, confdir):
    """A consumer in a group that lives longer than the broker's
    connections.max.reauth.ms (kafka_sasl.REAUTH_MS) re-authenticates on
    its connections (KIP-368) instead of being cut off by the broker."""
    topic = topic_name()
    mech = "SCRAM-SHA-512"
    user, pw = creds(mech)
    r = samsa(peer, confdir, "SASL_PLAINTEXT", mech, user, pw, "topic",
              "create", topic)
    assert r.rc == 0, r
    r = samsa(peer, confdir, "SASL_PLAINTEXT", mech, user, pw, "produce",
              topic, stdin="a\nb\n")
    assert r.rc == 0, r
    cfg = write_props(confdir, peer.client_props("SASL_PLAINTEXT", mech, user,
                                                 pw))
    env = samsa_harness.base_env()
    env.pop("SAMSA_BOOTSTRAP", None)
    p = subprocess.Popen([cli_util.samsa_bin(), "consume", topic, "-g",
                          "g-" + topic, "--from-beginning", "-n", "4", "-v",
                          "-b", peer.sasl_bootstrap("SASL_PLAINTEXT"),
                          "--command-config", cfg, "--timeout", "30000"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(2.5 * kafka_sasl.REAUTH_MS / 1000.0)
        r = samsa(peer, confdir, "SASL_PLAINTEXT", mech, user, pw, "produce",
                  topic, stdin="c\nd\n")
        assert r.rc == 0, r
        out, err = p.communicate(timeout=T(60))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, (out, err)
    assert out.split() == ["a", "b", "c", "d"], (out, err)
    assert "re-authenticating (KIP-368)" in err, err
    # the broker closes a connection whose session expired: none did
    assert "closed: _CLOSED" not in err, err


# -- failures ------------------------------------------------------------------

@pytest.mark.parametrize("proto", kafka_sasl.PROTOCOLS)
@pytest.mark.parametrize("mech", kafka_sasl.MECHANISMS)
@pytest.mark.parametrize("cmd", [("topic", "list"), ("produce", "x"),
                                 ("consume", "x")])
def test_wrong_password_fails_fast(peer, confdir, proto, mech, cmd):
    user, _ = creds(mech)
    t0 = time.monotonic()
    r = samsa(peer, confdir, proto, mech, user, "not-the-password", *cmd,
              "--connect-timeout", "20000", "--timeout", "20000",
              stdin="v\n", timeout=40)
    secs = time.monotonic() - t0
    assert r.rc == 1, r
    assert "SASL_AUTHENTICATION_FAILED" in r.err, r
    # no retrying until --connect-timeout: the first refusal ends it
    assert secs < 10, "took %.1f s\n%r" % (secs, r)


@pytest.mark.parametrize("mech", ["PLAIN", "SCRAM-SHA-256"])
def test_producer_fails_fast_on_wrong_password(peer, confdir, mech):
    """libsamsa's producer alone (samsa perf produce: no admin client
    first): send() and the records fail with the SASL error at once, not
    after max.block.ms / delivery.timeout.ms."""
    user, _ = creds(mech)
    props = peer.client_props("SASL_SSL", mech, user, "wrong")
    props["bootstrap.servers"] = peer.sasl_bootstrap("SASL_SSL")
    cfg = write_props(confdir, props)
    t0 = time.monotonic()
    r = cli_util.run("perf", "produce", "--topic", topic_name(),
                     "--num-records", "3", "--record-size", "10",
                     "--throughput", "-1", "--producer.config", cfg,
                     timeout=90)
    secs = time.monotonic() - t0
    assert r.rc != 0, r
    assert "SASL_AUTHENTICATION_FAILED" in r.err, r
    assert secs < 15, "took %.1f s\n%r" % (secs, r)


def test_unknown_user_fails(peer, confdir):
    r = samsa(peer, confdir, "SASL_PLAINTEXT", "SCRAM-SHA-256", "nobody",
              "pw", "topic", "list")
    assert r.rc == 1, r
    assert "SASL_AUTHENTICATION_FAILED" in r.err, r


def test_mechanism_not_enabled_on_listener(peer, confdir):
    r = samsa(peer, confdir, kafka_sasl.PLAIN_ONLY, "SCRAM-SHA-256", "alice",
              SCRAM_USERS["alice"], "topic", "list")
    assert r.rc == 1, r
    assert "UNSUPPORTED_SASL_MECHANISM" in r.err, r
    assert "PLAIN" in r.err, r          # what the broker enables
    # and PLAIN works there
    r = samsa(peer, confdir, kafka_sasl.PLAIN_ONLY, "PLAIN", "bob",
              PLAIN_USERS["bob"], "topic", "list")
    assert r.rc == 0, r


def test_sasl_client_on_plaintext_listener_fails_cleanly(peer, confdir):
    props = peer.client_props("SASL_PLAINTEXT", "PLAIN", "bob",
                              PLAIN_USERS["bob"])
    cfg = write_props(confdir, props)
    t0 = time.monotonic()
    r = cli_util.run("topic", "list", "-b", peer.bootstrap(),
                     "--command-config", cfg, "--connect-timeout", "20000")
    assert r.rc == 1, r
    assert "SASL" in r.err, r
    assert time.monotonic() - t0 < 10, r


@pytest.mark.parametrize("props,key", [
    ({"sasl.mechanism": "GSSAPI"}, "sasl.mechanism"),
    # OAUTHBEARER with the PLAIN login module of the peer's props
    ({"sasl.mechanism": "OAUTHBEARER"}, "sasl.jaas.config"),
    ({"sasl.mechanism": "plain"}, "sasl.mechanism"),
    ({"security.protocol": "SASL_TLS"}, "security.protocol"),
    ({"sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule '
                          'required username="bob" password="bob-secret"'},
     "sasl.jaas.config"),                       # no ';'
    ({"sasl.jaas.config": 'com.sun.security.auth.module.Krb5LoginModule '
                          'required useKeyTab=true;'}, "sasl.jaas.config"),
    ({"sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule '
                          'required username="bob";'}, "sasl.jaas.config"),
    ({"sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule '
                          'maybe username="bob" password="x";'}, "sasl.jaas.config"),
])
def test_bad_client_config_names_the_key(peer, confdir, props, key):
    r = samsa(peer, confdir, "SASL_PLAINTEXT", "PLAIN", "bob",
              PLAIN_USERS["bob"], "topic", "list", extra=props)
    assert r.rc == 2, r
    assert "'%s'" % key in r.err, r
    assert "bob-secret" not in r.err, r         # passwords stay hidden


def test_missing_credentials_named(peer, confdir):
    cfg = write_props(confdir, {"security.protocol": "SASL_PLAINTEXT",
                                "sasl.mechanism": "PLAIN"})
    r = cli_util.run("topic", "list", "-b", peer.sasl_bootstrap("SASL_PLAINTEXT"),
                     "--command-config", cfg)
    assert r.rc == 2, r
    assert "sasl.jaas.config" in r.err and "sasl.username" in r.err, r


# -- samsa user scram ----------------------------------------------------------

def admin(peer, confdir, *args, **kw):
    return samsa(peer, confdir, "SASL_PLAINTEXT", "PLAIN", "admin",
                 PLAIN_USERS["admin"], *args, **kw)


def can_login(peer, confdir, mech, user, pw):
    r = samsa(peer, confdir, "SASL_SSL", mech, user, pw, "topic", "list")
    assert r.rc in (0, 1), r
    return r.rc == 0


def test_user_scram_list_bootstrapped_user(peer, confdir):
    r = admin(peer, confdir, "user", "scram", "list", "alice", "--json")
    assert r.rc == 0, r
    (u,) = r.json()
    assert u["user"] == "alice" and u["error"] is None
    assert [(c["mechanism"], c["iterations"]) for c in u["credentials"]] == [
        ("SCRAM-SHA-256", kafka_sasl.SCRAM_ITERATIONS),
        ("SCRAM-SHA-512", kafka_sasl.SCRAM_ITERATIONS)]
    r = admin(peer, confdir, "user", "scram", "list")
    assert r.rc == 0, r
    assert "alice" in r.out and "SCRAM-SHA-512" in r.out, r


@pytest.mark.parametrize("mech", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_user_scram_set_list_delete(peer, confdir, mech):
    user = "carol-" + mech[-3:]
    pw = "carol pw, with = and \\ and \""
    assert not can_login(peer, confdir, mech, user, pw)
    r = admin(peer, confdir, "user", "scram", "set", user, "--mechanism", mech,
              "--password", pw, "--iterations", "8192", "--json")
    assert r.rc == 0, r
    assert r.json() == [{"user": user, "mechanism": mech, "ok": True,
                         "error": None, "message": None}]
    # the broker applies the credential from its metadata log
    wait_until(lambda: can_login(peer, confdir, mech, user, pw), 30)
    assert not can_login(peer, confdir, mech, user, pw + "x")
    r = admin(peer, confdir, "user", "scram", "list", user, "--json")
    assert r.rc == 0, r
    assert r.json()[0]["credentials"] == [
        {"mechanism": mech, "mechanism_type": 1 if mech.endswith("256") else 2,
         "iterations": 8192}]
    r = admin(peer, confdir, "user", "scram", "delete", user, "--mechanism",
              mech)
    assert r.rc == 0, r
    assert "Deleted %s credential of user '%s'" % (mech, user) in r.out, r
    wait_until(lambda: not can_login(peer, confdir, mech, user, pw), 30)
    r = admin(peer, confdir, "user", "scram", "list", user, "--json")
    assert r.rc == 1, r
    assert r.json()[0]["error"] == "RESOURCE_NOT_FOUND", r
    r = admin(peer, confdir, "user", "scram", "delete", user, "--mechanism",
              mech)
    assert r.rc == 1, r
    assert "RESOURCE_NOT_FOUND" in r.err, r


@pytest.mark.parametrize("args,why", [
    (["set", "dave", "--password", "x"], "--mechanism"),
    (["set", "dave", "--mechanism", "SCRAM-SHA-1", "--password", "x"],
     "SCRAM-SHA-1"),
    (["set", "dave", "--mechanism", "SCRAM-SHA-256"], "--password"),
    (["set", "dave", "--mechanism", "SCRAM-SHA-256", "--password", "x",
      "--iterations", "100"], "--iterations"),
    (["set", "dave", "--mechanism", "SCRAM-SHA-256", "--password", "x",
      "--iterations", "20000"], "--iterations"),
    (["delete", "dave"], "--mechanism"),
])
def test_user_scram_usage_errors(peer, confdir, args, why):
    r = admin(peer, confdir, "user", "scram", *args)
    assert r.rc == 2, r
    assert why in r.err, r


# -- OAUTHBEARER (unsecured JWTs, KIP-255) ---------------------------------------

def oauth_props(peer, proto, **opts):
    """Java client properties for OAUTHBEARER: the OAuthBearerLoginModule
    entry with opts (Kafka's unsecuredLogin* options), from which libsamsa
    makes its unsecured token as Java's default login handler does."""
    props = peer.client_props(proto, "PLAIN", "unused", "unused")
    props["sasl.mechanism"] = "OAUTHBEARER"
    props["sasl.jaas.config"] = kafka_sasl.jaas(kafka_sasl.OAUTH_MODULE, **opts)
    return props


def samsa_oauth(peer, confdir, proto, opts, *args, stdin=None, timeout=60):
    cfg = write_props(confdir, oauth_props(peer, proto, **opts))
    return cli_util.run(*args, "-b", peer.sasl_bootstrap(proto),
                        "--command-config", cfg, stdin=stdin, timeout=timeout)


GOOD_TOKEN = {"unsecuredLoginStringClaim_sub": "carol",
              "unsecuredLoginListClaim_scope": "|" + kafka_sasl.OAUTH_SCOPE + "|x",
              "unsecuredLoginExtension_traceId": "t1"}


@pytest.mark.parametrize("proto", kafka_sasl.PROTOCOLS)
def test_oauthbearer_round_trip(peer, confdir, proto):
    """The CLI (libsamsa's admin client, producer and consumer) with an
    unsecured token of principal carol and the required scope: create,
    produce, consume."""
    topic = topic_name()
    r = samsa_oauth(peer, confdir, proto, GOOD_TOKEN, "topic", "create", topic)
    assert r.rc == 0, r
    lines = ["oauth-%s-%d" % (proto, i) for i in range(5)]
    r = samsa_oauth(peer, confdir, proto, GOOD_TOKEN, "produce", topic,
                    stdin="\n".join(lines) + "\n")
    assert r.rc == 0, r
    r = samsa_oauth(peer, confdir, proto, GOOD_TOKEN, "consume", topic,
                    "--from-beginning", "-n", "5", "--timeout", "20000")
    assert r.rc == 0, r
    assert sorted(r.out.split()) == sorted(lines)


def test_oauthbearer_reauthentication(peer, confdir):
    """A token of 3 s: the broker ends the session with the token, so a
    consumer running past it re-authenticates (KIP-368) with a fresh token
    each time and reads what is produced meanwhile."""
    topic = topic_name()
    opts = dict(GOOD_TOKEN, unsecuredLoginLifetimeSeconds="3")
    r = samsa_oauth(peer, confdir, "SASL_PLAINTEXT", opts, "topic", "create",
                    topic)
    assert r.rc == 0, r
    cfg = write_props(confdir, oauth_props(peer, "SASL_PLAINTEXT", **opts))
    env = samsa_harness.base_env()
    env.pop("SAMSA_BOOTSTRAP", None)
    p = subprocess.Popen([cli_util.samsa_bin(), "consume", topic,
                          "--from-beginning", "-n", "2", "-v",
                          "-b", peer.sasl_bootstrap("SASL_PLAINTEXT"),
                          "--command-config", cfg, "--timeout", "30000"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(7)
        r = samsa_oauth(peer, confdir, "SASL_PLAINTEXT", opts, "produce",
                        topic, stdin="late1\nlate2\n")
        assert r.rc == 0, r
        out, err = p.communicate(timeout=T(60))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, (out, err)
    assert out.split() == ["late1", "late2"], (out, err)
    assert "re-authenticating (KIP-368)" in err, err
    assert "closed: _CLOSED" not in err, err


def test_oauthbearer_token_without_scope_refused(peer, confdir):
    """A token without the scope the broker requires: refused at once."""
    t0 = time.monotonic()
    r = samsa_oauth(peer, confdir, "SASL_SSL",
                    {"unsecuredLoginStringClaim_sub": "carol",
                     "unsecuredLoginStringClaim_scope": "other"},
                    "topic", "list", "--connect-timeout", "20000")
    assert r.rc == 1, r
    assert "SASL_AUTHENTICATION_FAILED" in r.err, r
    assert time.monotonic() - t0 < 10, r


@pytest.mark.parametrize("opts,why", [
    ({}, "no principal: the string claim 'sub'"),
    ({"unsecuredLoginStringClaim_sub": "a", "unsecuredLoginNumberClaim_exp": "1"},
     "Cannot explicitly set the 'exp' claim"),
    ({"unsecuredLoginStringClaim_sub": "a",
      "unsecuredLoginExtension_auth": "x"}, "Extension name auth is invalid"),
])
def test_oauthbearer_bad_login_options_named(peer, confdir, opts, why):
    """Options no token can be made from fail the command before it
    connects, naming sasl.jaas.config and the reason."""
    r = samsa_oauth(peer, confdir, "SASL_PLAINTEXT", opts, "topic", "list")
    assert r.rc == 2, r
    assert "sasl.jaas.config" in r.err and why in r.err, r
