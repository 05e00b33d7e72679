#!/usr/bin/env bash
# Installs everything Samsa's build and tests need on Debian 12, from
# Debian's packages (and kafkajs from npm for the client tests).  Quick and
# silent when everything is already there; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(
  build-essential cmake pkg-config python3      # toolchain, codec generator
  clang libclang-rt-14-dev                      # libFuzzer targets
  libcmocka-dev                                 # unit tests
  zlib1g-dev libsnappy-dev liblz4-dev libzstd-dev # record-batch codecs
  libisal-dev                                   # CRC-32C
  libmicrohttpd-dev                             # metrics listener (HTTP)
  libraft-dev libuv1-dev                        # metadata quorum (meta/quorum.c)
  python3-pytest python3-psutil python3-venv    # integration harness (venv: PyPI clients)
  python3-lz4 python3-snappy python3-zstandard  # kafka-python codecs
  python3-confluent-kafka python3-kafka kcat    # real clients under test
  librdkafka-dev                                # librdkafka from C
  iperf3 fio                                    # bench/run.sh: machine limits
  nodejs npm                                    # kafkajs
  chromium chromium-driver                      # status page test (headless)
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
