"""SASL with the other languages' clients (issue 21, item 2): PyPI's
confluent-kafka (librdkafka 2.x), kafka-python 2.0.2 (SaslHandshake v0 and
bare tokens), kafkajs and Kafka 4.4's Java tools (kafka-configs for SCRAM
users, the console producer and consumer) against the broker of
test_sasl.py (its listeners, PLAIN users and SCRAM users), over every
listener x mechanism each supports.  Split from test_sasl.py and labelled
"clients" (CMakeLists.txt): CI runs it in the plain build only, as the
other client-compatibility suites; the sanitizer builds keep test_sasl.py's
kwire, kcat and Debian confluent-kafka cases.  A missing client fails its
test."""

import json
import os
import subprocess

import pytest

import samsa_harness
from samsa_harness import HOST, T
from test_sasl import (MECHS, PROTOCOLS, PYPI_SCRIPT, USERS,  # noqa: F401
                       certs, rdkafka_conf, server, topic_for)

@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("mech", MECHS)
def test_confluent_kafka_pypi_round_trip(server, certs, protocol, mech):
    conf = rdkafka_conf(server, certs, protocol, mech)
    p = subprocess.run([samsa_harness.pypi_python(), "-c", PYPI_SCRIPT,
                        json.dumps(conf), topic_for("ckpypi", protocol, mech)],
                       capture_output=True, timeout=T(90))
    assert p.returncode == 0, p.stderr.decode()
    out = json.loads(p.stdout.decode().strip().splitlines()[-1])
    assert out["got"] == ["v%d" % i for i in range(20)], out


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("mech", MECHS)
def test_kafka_python_round_trip(server, certs, protocol, mech):
    """kafka-python 2.0.2 speaks SaslHandshake v0 and then bare tokens."""
    import kafka
    user, pw = USERS[mech]
    common = dict(bootstrap_servers="%s:%d" % (HOST,
                                                server.sasl_ports[protocol]),
                  security_protocol=protocol, sasl_mechanism=mech,
                  sasl_plain_username=user, sasl_plain_password=pw,
                  api_version_auto_timeout_ms=int(T(10) * 1000))
    if protocol == "SASL_SSL":
        common["ssl_cafile"] = certs.p("ca.pem")
    topic = topic_for("kp", protocol, mech)
    p = kafka.KafkaProducer(**common)
    for i in range(10):
        p.send(topic, b"v%d" % i)
    p.flush(T(30))
    p.close()
    c = kafka.KafkaConsumer(topic, auto_offset_reset="earliest",
                            consumer_timeout_ms=int(T(10) * 1000), **common)
    got = [m.value for m in c]
    c.close()
    assert got == [b"v%d" % i for i in range(10)]


# ---- kafkajs ----------------------------------------------------------------------

@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("mech", MECHS)
def test_kafkajs_round_trip(server, certs, protocol, mech):
    import shutil
    js = os.path.join(os.path.dirname(os.path.abspath(__file__)), "js")
    node = shutil.which("node") or shutil.which("nodejs")
    assert node, "node is not installed (scripts/deps.sh installs it)"
    assert os.path.isdir(os.path.join(js, "node_modules", "kafkajs")), \
        "kafkajs is not installed in %s/node_modules (npm ci there)" % js
    user, pw = USERS[mech]
    r = subprocess.run(
        [node, "sasl_roundtrip.js",
         "%s:%d" % (HOST, server.sasl_ports[protocol]), mech, user, pw,
         topic_for("kjs", protocol, mech),
         certs.p("ca.pem") if protocol == "SASL_SSL" else "",
         str(int(T(40) * 1000))],
        cwd=js, capture_output=True, text=True, timeout=T(60))
    assert r.returncode == 0, "kafkajs failed:\n%s\n%s" % (r.stdout, r.stderr)
    assert json.loads(r.stdout.strip().splitlines()[-1])["got"] == \
        ["v%d" % i for i in range(10)]


# ---- the Java client (Kafka 4.4's tools) ----------------------------------------

def _java_props(certs, tmp_path, name, protocol, mech, user, pw):
    module = ("org.apache.kafka.common.security.plain.PlainLoginModule"
              if mech == "PLAIN" else
              "org.apache.kafka.common.security.scram.ScramLoginModule")
    lines = ["security.protocol=" + protocol, "sasl.mechanism=" + mech,
             'sasl.jaas.config=%s required username="%s" password="%s";'
             % (module, user, pw)]
    if protocol == "SASL_SSL":
        lines += ["ssl.truststore.type=PEM",
                  "ssl.truststore.location=" + certs.p("ca.pem")]
    path = str(tmp_path / (name + ".properties"))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def test_java_tools_scram_and_round_trip(server, certs, tmp_path):
    """kafka-configs (the Java admin client) sets a SCRAM-SHA-512 user
    through AlterUserScramCredentials over SASL_PLAINTEXT as the PLAIN
    admin, describes it (DescribeUserScramCredentials); the console
    producer and consumer then use it over SASL_SSL."""
    from javakit import kafka_tool
    sp = "%s:%d" % (HOST, server.sasl_ports["SASL_PLAINTEXT"])
    ss = "%s:%d" % (HOST, server.sasl_ports["SASL_SSL"])
    admin = _java_props(certs, tmp_path, "admin", "SASL_PLAINTEXT", "PLAIN",
                        "admin", "admin-secret")
    kafka_tool("kafka-configs", "--bootstrap-server", sp, "--command-config",
               admin, "--alter", "--entity-type", "users", "--entity-name",
               "javauser", "--add-config",
               "SCRAM-SHA-512=[iterations=8192,password=java-pw]")
    r = kafka_tool("kafka-configs", "--bootstrap-server", sp,
                   "--command-config", admin, "--describe", "--entity-type",
                   "users", "--entity-name", "javauser")
    assert "SCRAM-SHA-512=iterations=8192" in r.out, r
    user = _java_props(certs, tmp_path, "user", "SASL_SSL", "SCRAM-SHA-512",
                       "javauser", "java-pw")
    kafka_tool("kafka-console-producer", "--bootstrap-server", ss,
               "--topic", "sasl-java", "--command-config", user,
               stdin="one\ntwo\nthree\n")
    r = kafka_tool("kafka-console-consumer", "--bootstrap-server", ss,
                   "--topic", "sasl-java", "--from-beginning",
                   "--max-messages", 3, "--timeout-ms", 20000,
                   "--command-config", user)
    assert r.out.splitlines() == ["one", "two", "three"], r
    bad = _java_props(certs, tmp_path, "bad", "SASL_SSL", "SCRAM-SHA-512",
                      "javauser", "wrong")
    r = kafka_tool("kafka-configs", "--bootstrap-server", ss,
                   "--command-config", bad, "--describe", "--entity-type",
                   "users", check=False, timeout=60)
    assert r.rc != 0, r
    assert "Authentication failed during authentication due to invalid " \
           "credentials with SASL mechanism SCRAM-SHA-512" in r.err + r.out, r


@pytest.fixture(scope="module")
def oauth_server(samsa_module, certs):  # noqa: F811
    from test_sasl import start_sasl
    from test_sasl_oauthbearer import EXTRA
    return start_sasl(samsa_module, certs, extra=EXTRA)


def test_java_tools_oauthbearer(oauth_server, certs, tmp_path):  # noqa: F811
    """Kafka 4.4's console producer and consumer with the Java client's
    OAuthBearerLoginModule and its unsecured token (unsecuredLoginStringClaim_sub,
    the scope the broker requires) over SASL_SSL; a token without the
    scope is refused with RFC 7628's error."""
    from javakit import kafka_tool
    ss = "%s:%d" % (HOST, oauth_server.sasl_ports["SASL_SSL"])

    def props(name, scope):
        lines = ["security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER",
                 "sasl.jaas.config=org.apache.kafka.common.security."
                 "oauthbearer.OAuthBearerLoginModule required "
                 'unsecuredLoginStringClaim_sub="java-oauth" '
                 'unsecuredLoginListClaim_scope=",%s";' % scope,
                 "ssl.truststore.type=PEM",
                 "ssl.truststore.location=" + certs.p("ca.pem")]
        path = str(tmp_path / (name + ".properties"))
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    good = props("good", "kafka")
    kafka_tool("kafka-console-producer", "--bootstrap-server", ss,
               "--topic", "oauth-java", "--command-config", good,
               stdin="one\ntwo\nthree\n")
    r = kafka_tool("kafka-console-consumer", "--bootstrap-server", ss,
                   "--topic", "oauth-java", "--from-beginning",
                   "--max-messages", 3, "--timeout-ms", 20000,
                   "--command-config", good)
    assert r.out.splitlines() == ["one", "two", "three"], r
    assert samsa_harness.wait_until(
        lambda: '"principal":"User:java-oauth"' in oauth_server.stderr_text(),
        T(5)), oauth_server.stderr_tail()
    bad = props("bad", "other")
    r = kafka_tool("kafka-topics", "--bootstrap-server", ss,
                   "--command-config", bad, "--list", check=False, timeout=60)
    assert r.rc != 0, r
    assert "insufficient_scope" in r.err + r.out, r
