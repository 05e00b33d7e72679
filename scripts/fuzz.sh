#!/usr/bin/env bash
# Run every libFuzzer target of tests/fuzz/ for FUZZ_SECONDS each (the
# generated request codecs, fuzz_*Request, for CODEC_SECONDS: one generator
# makes them all, so each needs less time than a hand-written parser), JOBS
# at a time, seeded from tests/fuzz/corpus/<target>/ (left untouched); new inputs
# go to <build>/corpus/<target>/, logs to <build>/<target>.log, crashing
# inputs to <build>/<target>-crash-*.  Fails (after all have run) if any
# target found a crash, naming them and showing the end of their logs.
# Usage: scripts/fuzz.sh BUILD_DIR SECONDS JOBS [CODEC_SECONDS (= SECONDS)]
set -euo pipefail
build=$(realpath "$1"); secs=$2; jobs=$3; codec_secs=${4:-$2}
cd "$(dirname "$0")/.."
targets=$(ls tests/fuzz/fuzz_*.c | xargs -n1 basename | sed 's/\.c$//')
run_one() {
    local t=$1 build=$2 secs=$3
    case $t in fuzz_*Request) secs=$4 ;; esac
    mkdir -p "$build/corpus/$t"
    if "$build/$t" -max_total_time="$secs" -print_final_stats=1 \
           -artifact_prefix="$build/$t-" "$build/corpus/$t" \
           "tests/fuzz/corpus/$t" >"$build/$t.log" 2>&1; then
        echo "fuzz: $t: $(grep -o 'stat::number_of_executed_units: [0-9]*' \
            "$build/$t.log" | awk '{print $2}') runs in ${secs}s"
    else
        echo "fuzz: $t FAILED"
        tail -n 40 "$build/$t.log"
        return 1
    fi
}
export -f run_one
echo "$targets" | xargs -P "$jobs" -I{} bash -c 'run_one "$@"' _ {} "$build" "$secs" \
    "$codec_secs"
