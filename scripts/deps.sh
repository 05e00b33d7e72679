#!/usr/bin/env bash
# Installs everything Samsa's build and tests need on Debian 12, from
# Debian's packages (kafkajs from npm, PyPI clients, and the Java client and
# Kafka's tools from Maven Central for the client tests).  Quick and
# silent when everything is already there; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(
  build-essential cmake pkg-config python3      # toolchain, codec generator
  clang libclang-rt-14-dev                      # libFuzzer targets
  libcmocka-dev                                 # unit tests
  zlib1g-dev libsnappy-dev liblz4-dev libzstd-dev # record-batch codecs
  libisal-dev                                   # CRC-32C
  libpcre2-dev                                  # RE2-syntax regexes (util/re.c)
  libjansson-dev                                # OAUTHBEARER's JWTs (server/oauth_unsecured.c)
  libmicrohttpd-dev                             # metrics listener (HTTP)
  libssl-dev openssl                            # TLS listeners (OpenSSL 3); tests' certificates
  libraft-dev libuv1-dev                        # metadata quorum (meta/quorum.c)
  python3-pytest python3-psutil python3-venv    # integration harness (venv: PyPI clients)
  python3-lz4 python3-snappy python3-zstandard  # kafka-python codecs
  python3-confluent-kafka python3-kafka kcat    # real clients under test
  python3-cryptography                          # tests: keys and signed JWTs (KIP-768)
  librdkafka-dev                                # librdkafka from C
  iperf3 fio                                    # bench/run.sh: machine limits
  gdb                                           # tests: backtraces of a server that did not exit
  nodejs npm                                    # kafkajs
  chromium chromium-driver                      # status page test (headless)
  openjdk-17-jdk-headless maven                 # Java client, Kafka's tools (Maven Central)
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    # npm may come from elsewhere on a developer machine; accept any npm.
    if [ "$p" = npm ] && command -v npm >/dev/null 2>&1; then continue; fi
    if [ "$p" = nodejs ] && command -v node >/dev/null 2>&1; then continue; fi
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# kafkajs and its codec packages (js/package.json), all plain JavaScript:
# --ignore-scripts, so no package builds native code (or downloads it).
JS=tests/integration/js
js_missing=0
for pkg in $(node -e 'console.log(Object.keys(require(process.argv[1]).dependencies).join(" "))' \
             "$PWD/$JS/package.json"); do
  [ -f "$JS/node_modules/$pkg/package.json" ] || js_missing=1
done
if [ "$js_missing" -ne 0 ]; then
  echo "deps: installing kafkajs and its codecs (npm ci in $JS)"
  (cd "$JS" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
fi

# Python clients from PyPI (scripts/pyclients.txt) in a venv outside the
# tree; the tests find it at the same place (samsa_harness.pypi_python).
PYC="${SAMSA_CACHE:-$HOME/.cache/samsa}/pyclients"
pyc_ok=1
while read -r req; do
  case "$req" in ''|'#'*) continue ;; esac
  name=${req%%==*} want=${req#*==}
  have=$("$PYC/bin/python" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" \
           "$name" 2>/dev/null || true)
  [ "$have" = "$want" ] || pyc_ok=0
done < scripts/pyclients.txt
if [ "$pyc_ok" -ne 1 ]; then
  echo "deps: installing the PyPI clients (scripts/pyclients.txt) into $PYC"
  /usr/bin/python3 -m venv "$PYC"
  "$PYC/bin/pip" install -q --disable-pip-version-check -r scripts/pyclients.txt
fi

# The Java client and Kafka's own tools (tests/integration/java/pom.xml,
# kafka-clients and kafka-tools with everything they need) from Maven
# Central into one folder of jars outside the tree; test_java_client.py
# compiles its programs against it with javac, scripts/kafka-tool runs the
# tools from it.  Apache Kafka's broker (tests/diff/pom.xml: kafka_2.13 and
# scala-library, for the differential tests in tests/diff) goes into a
# folder of its own, kafka-lib, so the clients' classpath stays as it was.
# A stamp of each pom says its folder is complete.
MVN_CACHE="${SAMSA_CACHE:-$HOME/.cache/samsa}/maven"
fetch_pom() {   # fetch_pom POM NAME WHAT: POM's runtime jars into $MVN_CACHE/NAME
  local pom=$1 name=$2 what=$3 sum
  sum=$(sha256sum "$pom" | cut -d' ' -f1)
  if [ "$(cat "$MVN_CACHE/$name.stamp" 2>/dev/null)" != "$sum" ] || [ ! -d "$MVN_CACHE/$name" ]; then
    echo "deps: fetching $what ($pom) into $MVN_CACHE/$name"
    mkdir -p "$MVN_CACHE"
    rm -rf "$MVN_CACHE/$name.new" "$MVN_CACHE/$name.stamp"
    if ! mvn -q -B -f "$pom" -Dmaven.repo.local="$MVN_CACHE/repo" \
         dependency:copy-dependencies -DincludeScope=runtime \
         -DoutputDirectory="$MVN_CACHE/$name.new" > "$MVN_CACHE/$name.mvn.log" 2>&1; then
      cat "$MVN_CACHE/$name.mvn.log" >&2
      echo "deps: mvn failed (log above, in $MVN_CACHE/$name.mvn.log)" >&2
      exit 1
    fi
    rm -rf "${MVN_CACHE:?}/$name"
    mv "$MVN_CACHE/$name.new" "$MVN_CACHE/$name"
    echo "$sum" > "$MVN_CACHE/$name.stamp"
  fi
}
fetch_pom tests/integration/java/pom.xml lib "the Java client and Kafka's tools"
fetch_pom tests/diff/pom.xml kafka-lib "Apache Kafka's broker"

# --- Go clients (tests/integration/go: franz-go, kadm, Sarama) ---------------
# Go itself is the go on PATH or /usr/local/go/bin/go (1.26 or newer, which
# franz-go 1.22 needs; Debian 12's golang is too old). The modules that
# tests/integration/go/go.sum names go into a cache outside the tree,
# $SAMSA_CACHE/go (GOMODCACHE, GOCACHE); test_go_clients.py builds from it
# only (GOPROXY=off). With a warm cache `go mod download` is instant.
GO=$(command -v go || true)
if [ -z "$GO" ] && [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go; fi
if [ -n "$GO" ]; then
  GOC="${SAMSA_CACHE:-$HOME/.cache/samsa}/go"
  (cd tests/integration/go &&
   GOPATH="$GOC" GOMODCACHE="$GOC/mod" GOCACHE="$GOC/build" GOFLAGS=-mod=readonly \
   GOTOOLCHAIN=local GOWORK=off GOTELEMETRY=off "$GO" mod download) ||
    echo "deps: go mod download failed in tests/integration/go (needs Go 1.26+): test_go_clients.py will fail" >&2
else
  echo "deps: no Go toolchain (go on PATH or /usr/local/go/bin/go, 1.26+): test_go_clients.py will fail" >&2
fi
