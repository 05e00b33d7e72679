"""samsa-server with the SASL listeners of kafka_sasl.SaslKafkaBroker, as
the second peer of test_sasl_client.py: the same listener names
(PLAINTEXT, CONTROLLER, SASL_PLAINTEXT, SASL_SSL and PLAINONLY, a
SASL_PLAINTEXT listener enabling PLAIN only), the same PLAIN users (the
listeners' JAAS user_NAME entries), mechanisms, re-authentication time
and self-signed certificate; the SCRAM users of kafka_sasl.SCRAM_USERS are
made with AlterUserScramCredentials on the PLAINTEXT listener before the
tests run (Kafka's peer gets them from kafka-storage format --add-scram;
samsa-server format has no --add-scram yet)."""

import os
import shutil

import kafka_sasl
import kwire
import samsa_harness
from kafka_sasl import (MECHANISMS, PLAIN_ONLY, PROTOCOLS, REAUTH_MS,
                        SCRAM_ITERATIONS, SCRAM_USERS)
from samsa_harness import HOST, HarnessError, T, free_port
from test_sasl import scram_alter

kwire.FLEXIBLE_FROM.update({50: 0, 51: 0})


class SaslSamsaServer:
    def __init__(self):
        self.root = samsa_harness.make_tmp_root()
        self.factory = samsa_harness.ServerFactory(self.root)
        self.keep = False
        self.srv = None
        self.sasl_ports = {}
        self.keystore, self.cert = kafka_sasl.make_cert(self.root)

    @classmethod
    def start(cls):
        s = cls()
        try:
            s._start()
        except Exception:
            s.keep = True
            s.stop()
            raise
        return s

    def _start(self):
        ports = set()
        while len(ports) < 5:
            ports.add(free_port())
        plain, ctl, *rest = sorted(ports)
        self.sasl_ports = dict(zip(PROTOCOLS + (PLAIN_ONLY,), rest))
        listeners = ["PLAINTEXT://%s:%d" % (HOST, plain),
                     "CONTROLLER://%s:%d" % (HOST, ctl)]
        protomap = ["PLAINTEXT:PLAINTEXT", "CONTROLLER:PLAINTEXT"]
        o = {}
        kafka_sasl.sasl_listener_props(self.sasl_ports, listeners, protomap, o)
        d = self.factory.new_dir()
        o.update({
            "listeners": ",".join(listeners),
            "listener.security.protocol.map": ",".join(protomap),
            "sasl.enabled.mechanisms": ",".join(MECHANISMS),
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": self.keystore,
            "ssl.client.auth": "none",
            "connections.max.reauth.ms": str(REAUTH_MS),
            "log.dirs": os.path.join(d, "samsa-data"),
        })
        self.srv = self.factory.start(overrides=o, workdir=d, use_ports=False,
                                      ports=(plain, ctl))
        # one request per mechanism: Kafka refuses a user twice in one
        # request (DUPLICATE_RESOURCE)
        for mech in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            ups = [(user, mech, pw, SCRAM_ITERATIONS)
                   for user, pw in SCRAM_USERS.items()]
            with self.srv.connect(timeout=T(10)) as c:
                got = scram_alter(c, ups=ups)
            if any(err != 0 for _, err, _ in got):
                raise HarnessError("AlterUserScramCredentials: %r" % (got,))

    # the peer interface of test_sasl_client.py

    def sasl_bootstrap(self, proto):
        return "%s:%d" % (HOST, self.sasl_ports[proto])

    def client_props(self, proto, mech, user, password, jaas_config=True):
        return kafka_sasl.SaslKafkaBroker.client_props(
            self, proto, mech, user, password, jaas_config)

    def bootstrap(self):
        return self.srv.bootstrap()

    def describe(self, n=60):
        return self.srv.describe() if self.srv else "samsa-server not started"

    def stop(self):
        problems = self.factory.stop_all()
        if not problems and not self.keep \
                and not os.environ.get("SAMSA_TEST_KEEP_DIRS"):
            shutil.rmtree(self.root, ignore_errors=True)
        return problems
