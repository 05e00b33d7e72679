"""Apache Kafka 4.4 with SASL listeners, for the SASL client tests
(test_sasl_client.py): kafka_broker.KafkaBroker plus

- SASL_PLAINTEXT and SASL_SSL listeners (the PLAINTEXT broker listener,
  which the readiness check and inter-broker traffic use, and the
  PLAINTEXT controller listener stay, as KRaft needs);
- sasl.enabled.mechanisms PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and
  OAUTHBEARER on both; OAUTHBEARER with Kafka's default (unsecured JWT)
  validator, requiring the scope OAUTH_SCOPE;
- PLAIN users from listener.name.<l>.plain.sasl.jaas.config
  (user_NAME="pw" entries: PLAIN_USERS);
- SCRAM users created at format time with StorageTool's --add-scram
  (SCRAM_USERS, each for both SCRAM mechanisms);
- SASL_SSL with a self-signed certificate made here with openssl (one PEM
  file holding the key and the certificate: ssl.keystore.type=PEM), whose
  certificate the clients trust (ssl.truststore.type=PEM,
  ssl.truststore.location=broker.cert.pem); its subject alternative names
  are 127.0.0.1 and localhost, so host-name checks pass.

No authorizer: the tests are about authentication.

    kb = SaslKafkaBroker.start()
    kb.sasl_bootstrap("SASL_SSL")      # host:port of that listener
    kb.client_props("SASL_SSL", "SCRAM-SHA-512", "alice", "alice-secret")
"""

import os
import shutil
import subprocess

import kafka_broker
from samsa_harness import HOST, HarnessError, T, free_port

PLAIN_USERS = {"admin": "admin-secret", "bob": "bob-secret"}
SCRAM_USERS = {"alice": "alice-secret"}
SCRAM_ITERATIONS = 4096
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
OAUTH_SCOPE = "kafka"
PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
# one more SASL_PLAINTEXT listener that enables PLAIN only, for a client
# asking for a mechanism the broker does not enable
PLAIN_ONLY = "PLAINONLY"
# KIP-368: sessions this short make every client of a test longer than
# this re-authenticate (SaslAuthenticate v1+ reports SessionLifetimeMs)
REAUTH_MS = 4000

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


def make_cert(workdir):
    """A self-signed key and certificate for 127.0.0.1/localhost: returns
    (keystore PEM with key and certificate, certificate PEM)."""
    openssl = shutil.which("openssl")
    if not openssl:
        raise HarnessError("no openssl on PATH (Debian: apt-get install openssl)")
    key = os.path.join(workdir, "broker.key.pem")
    cert = os.path.join(workdir, "broker.cert.pem")
    p = subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                        "-keyout", key, "-out", cert, "-days", "2",
                        "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=T(60))
    if p.returncode != 0:
        raise HarnessError("openssl req failed: %s" % p.stdout.decode(errors="replace"))
    store = os.path.join(workdir, "broker.keystore.pem")
    with open(store, "w") as out:
        for path in (key, cert):
            with open(path) as f:
                out.write(f.read())
    return store, cert


def jaas(module, **opts):
    """A JAAS entry, values in double quotes with backslash escapes (Java's
    StreamTokenizer reads \\ and \")."""
    return "%s required%s;" % (module, "".join(
        ' %s="%s"' % (k, v.replace("\\", "\\\\").replace('"', '\\"'))
        for k, v in opts.items()))


def sasl_listener_props(sasl_ports, listeners, protomap, props):
    """The SASL listeners of both peers (Kafka's and samsa-server's):
    append each {name: port} to listeners and protomap (PLAINONLY as
    SASL_PLAINTEXT) and set its mechanisms and JAAS entries in props."""
    for proto, port in sasl_ports.items():
        listeners.append("%s://%s:%d" % (proto, HOST, port))
        protomap.append("%s:%s" % (proto, "SASL_PLAINTEXT" if proto == PLAIN_ONLY
                                   else proto))
        lname = proto.lower()
        props["listener.name.%s.sasl.enabled.mechanisms" % lname] = (
            "PLAIN" if proto == PLAIN_ONLY
            else ",".join(MECHANISMS + ("OAUTHBEARER",)))
        if proto != PLAIN_ONLY:
            # the broker's own login (Kafka's makes an unsecured token at
            # start) and the validator's rule
            props["listener.name.%s.oauthbearer.sasl.jaas.config" % lname] = \
                jaas(OAUTH_MODULE, unsecuredLoginStringClaim_sub="admin",
                     unsecuredValidatorRequiredScope=OAUTH_SCOPE)
        props["listener.name.%s.plain.sasl.jaas.config" % lname] = jaas(
            PLAIN_MODULE, username="admin", password=PLAIN_USERS["admin"],
            **{"user_" + u: pw for u, pw in PLAIN_USERS.items()})
        for mech in ("scram-sha-256", "scram-sha-512"):
            props["listener.name.%s.%s.sasl.jaas.config" % (lname, mech)] = \
                SCRAM_MODULE + " required;"


class SaslKafkaBroker(kafka_broker.KafkaBroker):
    def __init__(self, workdir, overrides=None, heap=kafka_broker.HEAP):
        super().__init__(workdir, overrides, heap)
        self.sasl_ports = {}
        self.keystore, self.cert = make_cert(workdir)

    def _more_ports(self):
        taken = {self.port, self.controller_port}
        for proto in PROTOCOLS + (PLAIN_ONLY,):
            p = free_port()
            while p in taken:
                p = free_port()
            taken.add(p)
            self.sasl_ports[proto] = p

    def format_args(self):
        args = []
        for user, pw in SCRAM_USERS.items():
            for mech in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
                args += ["--add-scram", "%s=[name=%s,password=%s,iterations=%d]"
                         % (mech, user, pw, SCRAM_ITERATIONS)]
        return args

    def _props(self):
        p = super()._props()
        listeners = [p["listeners"]]
        advertised = [p["advertised.listeners"]]
        protomap = [p["listener.security.protocol.map"]]
        for proto, port in self.sasl_ports.items():
            advertised.append("%s://%s:%d" % (proto, HOST, port))
        sasl_listener_props(self.sasl_ports, listeners, protomap, p)
        p.update({
            "listeners": ",".join(listeners),
            "advertised.listeners": ",".join(advertised),
            "listener.security.protocol.map": ",".join(protomap),
            "sasl.enabled.mechanisms": ",".join(MECHANISMS),
            "sasl.mechanism.inter.broker.protocol": "PLAIN",
            "inter.broker.listener.name": "PLAINTEXT",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": self.keystore,
            "ssl.client.auth": "none",
            "connections.max.reauth.ms": str(REAUTH_MS),
        })
        p.update(self.overrides)
        return p

    def sasl_bootstrap(self, proto):
        return "%s:%d" % (HOST, self.sasl_ports[proto])

    def client_props(self, proto, mech, user, password, jaas_config=True):
        """Java client properties for proto/mech as user (or librdkafka's
        sasl.username/sasl.password with jaas_config=False)."""
        props = {"security.protocol": "SASL_PLAINTEXT" if proto == PLAIN_ONLY
                 else proto, "sasl.mechanism": mech}
        if jaas_config:
            props["sasl.jaas.config"] = jaas(
                PLAIN_MODULE if mech == "PLAIN" else SCRAM_MODULE,
                username=user, password=password)
        else:
            props["sasl.username"] = user
            props["sasl.password"] = password
        if proto == "SASL_SSL":
            props["ssl.truststore.type"] = "PEM"
            props["ssl.truststore.location"] = self.cert
        return props
