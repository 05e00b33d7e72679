#!/usr/bin/env bash
# Compiles the whole tree (libraries, server, CLI, every test binary) with
# each given compiler and CMake build type, -Werror on, each in its own
# build-matrix/<cc>-<type> directory; the first failure stops it.
#   scripts/build-matrix.sh                     gcc and clang, Release
#   scripts/build-matrix.sh "gcc clang" "Debug Release RelWithDebInfo MinSizeRel"
set -euo pipefail
cd "$(dirname "$0")/.."
compilers=${1:-gcc clang}
types=${2:-Release}
jobs=${JOBS:-$(nproc)}
for cc in $compilers; do
  for type in $types; do
    dir=build-matrix/$cc-$type
    echo "build-matrix: $cc $type ($dir)"
    CC=$cc cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" -DSAMSA_WERROR=ON \
        >/dev/null
    cmake --build "$dir" -j"$jobs" -- --no-print-directory >"$dir/build.log" 2>&1 || {
      grep -E 'error|warning' "$dir/build.log" | head -40
      echo "build-matrix: $cc $type failed (full log: $dir/build.log)"
      exit 1
    }
  done
done
echo "build-matrix: every build compiled clean"
