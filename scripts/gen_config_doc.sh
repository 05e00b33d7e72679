#!/bin/sh
# Rewrite the generated table of docs/CONFIG.md and the sample
# config/server.properties from src/config/config_defs.c.
# Usage: scripts/gen_config_doc.sh [build-dir]   (default: build)
# Builds and runs the test_config unit test with SAMSA_WRITE_CONFIG_DOC=1,
# which writes samsa_config_defs_markdown() between the table markers and
# samsa_config_defs_properties() as config/server.properties.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cmake --build "$build" --target test_config >"$log" 2>&1 || { cat "$log"; exit 1; }
SAMSA_WRITE_CONFIG_DOC=1 "$build/test_config" >"$log" 2>&1 || { cat "$log"; exit 1; }
echo "docs/CONFIG.md (table) and config/server.properties regenerated"
