#!/bin/bash
# bench/request_cost.sh [BUILD_DIR] - syscalls and wake-ups per small
# Produce and per small Fetch (docs/PERFORMANCE.md): one broker on free
# loopback ports, `samsa perf produce` of 100,000 1 KiB records in 16 KiB
# batches (acks=1, then acks=all) and `samsa perf consume` of them with
# 16 KiB fetches, each under `strace -c -f` of the broker; then the same
# produce under `perf stat -e context-switches,task-clock`.  Counts are
# divided by the requests the broker's samsa_requests_total counted.
set -euo pipefail
B=${1:-build}
B=$(cd "$B" && pwd)
W=$(mktemp -d)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
P=$(port); C=$(port); M=$(port)
"$B/samsa-server" --override log.dirs="$W/data" \
    --override listeners=PLAINTEXT://127.0.0.1:$P,CONTROLLER://127.0.0.1:$C \
    --override metrics.listener=http://127.0.0.1:$M > "$W/server.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$W"' EXIT
for _ in $(seq 100); do "$B/samsa" -b 127.0.0.1:$P --timeout 1000 topic list >/dev/null 2>&1 && break; sleep 0.1; done
"$B/samsa" -b 127.0.0.1:$P topic create cost --partitions 1 >/dev/null
count() { curl -s http://127.0.0.1:$M/metrics | awk -v r="request=\"$1\"" 'index($0, "samsa_requests_total{") == 1 && index($0, r) {s += $2} END {print s + 0}'; }
produce() { "$B/samsa" perf produce --topic cost --num-records 100000 --record-size 1024 --throughput -1 \
    --producer-props bootstrap.servers=127.0.0.1:$P acks=$1 batch.size=16384 linger.ms=0 >/dev/null 2>&1; }
consume() { "$B/samsa" perf consume --topic cost --messages 100000 -b 127.0.0.1:$P --no-group \
    --consumer-props max.partition.fetch.bytes=16384 fetch.max.bytes=16384 >/dev/null 2>&1; }
sum_calls() { awk '$NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ && $NF != "syscall" && $NF != "total" { t += $4 } END { print t + 0 }' "$1"; }
# The idle threads' own calls (timed waits of handlers, network threads,
# acceptors, reapers): per second with no traffic, to subtract from a
# traced window of the same length.
strace -c -f -p $PID -o "$W/strace.idle" 2>/dev/null & st=$!
sleep 3; kill -INT $st; wait $st 2>/dev/null || true
IDLE_PER_S=$(awk -v t="$(sum_calls "$W/strace.idle")" 'BEGIN { printf "%.1f", t / 3 }')
echo "idle broker: $IDLE_PER_S syscalls/s"
traced() {   # NAME API COMMAND...: strace -c of the broker around COMMAND
    local name=$1 api=$2; shift 2
    local before after t0 t1
    before=$(count "$api")
    strace -c -f -p $PID -o "$W/strace.$name" 2>/dev/null & local st=$!
    t0=$(date +%s.%N)
    sleep 1; "$@"; sleep 0.5; kill -INT $st; wait $st 2>/dev/null || true
    t1=$(date +%s.%N)
    after=$(count "$api")
    awk -v n=$((after - before)) -v name="$name" -v idle="$IDLE_PER_S" -v t0="$t0" -v t1="$t1" '
        $NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ && $NF != "syscall" && $NF != "total" {
            c[$NF] = $4; t += $4 }
        END { printf "%-12s %6d requests  %5.1f syscalls/request (%.2f of them idle threads over the %.1f s window):",
                     name, n, t / n, idle * (t1 - t0) / n, t1 - t0;
              for (k in c) if (c[k] / n >= 0.05) printf " %s %.2f", k, c[k] / n; print "" }' "$W/strace.$name"
}
traced produce-1 Produce produce 1
traced produce-all Produce produce all
traced fetch Fetch consume
before=$(count Produce)
perf stat -e context-switches,task-clock -p $PID -o "$W/perf" 2>/dev/null & ps_=$!
sleep 0.5
produce 1
kill -INT $ps_; wait $ps_ 2>/dev/null || true
n=$(( $(count Produce) - before ))
awk -v n=$n '/context-switches/ {gsub(",", "", $1); cs = $1} /task-clock/ {gsub(",", "", $1); ms = $1}
    END { printf "produce-1    %6d requests  %.1f context switches/request, %.1f us broker CPU/request\n", n, cs / n, ms * 1000 / n }' "$W/perf"
