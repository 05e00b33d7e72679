#!/usr/bin/env bash
# bench/run.sh - Samsa's benchmarks (issues 3 and 6; results in BENCHMARKS.md).
#
#   bench/run.sh [-B BUILD_DIR] [-o OUT_DIR] [-r RUNS] [SECTION...]
#
# SECTIONS (default: all, in this order):
#   machine  nproc, CPU, kernel, disk, tool versions -> OUT/machine.txt
#   ingest   rdk_perf produce flat out: samsa-server vs librdkafka's mock
#   perf     samsa perf produce (libsamsa) vs rdk_perf produce, same server
#   memory   libsamsa's peak RSS with buffer.memory 4 MiB vs 32 MiB
#   consume  rdk_perf consume of 1 KiB records vs iperf3 on loopback
#   flush    flush.messages=1 topic vs fio fdatasync at 1 MiB writes
#   e2e      end-to-end latency at 2,000 records/s, linger.ms=0
#   startup  start-to-serving on an empty data dir, then idle RSS
#   metrics  rdk_perf produce with /metrics scraped every second vs not
#   kafka    samsa-server vs Apache Kafka 4.4 (bench/kafka_peer.py), same
#            clients: rdk_perf produce/consume/e2e, Kafka's own
#            kafka-producer-perf-test, start-up time and idle RSS (issue 23;
#            not in the default list: needs scripts/deps.sh's Java and jars)
#
# Every row runs RUNS times (default 3), alternating the order of the
# targets; each run's raw output lands in OUT/raw/SECTION/ROW/TARGET.N.*
# (.json output, .err stderr, .cmd the exact command, .rc its status), and
# bench/summarize.py OUT writes OUT/results.md (medians and ratios).
#
# Bounded and self-stopping: every command runs under timeout(1), the whole
# script under a watchdog (MAX_SECONDS, default 1800); servers, the mock and
# iperf3 listen on free 127.0.0.1 ports in a temp dir and are stopped on
# exit.  Environment: SCALE (multiplies record counts, default 1; 0.2 for a
# quick try), PAUSE (seconds between runs, default 1: the machine is
# shared), KEEP=1 keeps the temp dir.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$REPO/build}
OUT=${OUT:-/tmp/samsa-bench-$(date +%Y%m%d-%H%M%S)}
RUNS=${RUNS:-3}
SCALE=${SCALE:-1}
PAUSE=${PAUSE:-1}
MAX_SECONDS=${MAX_SECONDS:-1800}
ALL_SECTIONS="machine ingest perf memory consume flush e2e startup metrics"

while getopts "B:o:r:h" opt; do
    case $opt in
        B) BUILD=$OPTARG ;;
        o) OUT=$OPTARG ;;
        r) RUNS=$OPTARG ;;
        *) sed -n '2,27p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
SECTIONS=${*:-$ALL_SECTIONS}

SERVER=$BUILD/samsa-server
CLI=$BUILD/samsa
RDK=$BUILD/rdk_perf
MOCK=$BUILD/rdk_mock
for b in "$SERVER" "$CLI" "$RDK" "$MOCK"; do
    if [ ! -x "$b" ]; then
        echo "run.sh: $b missing; build first: cmake -S $REPO -B $BUILD" \
             "-DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build $BUILD" >&2
        exit 2
    fi
done
for t in iperf3 fio python3 timeout; do
    command -v $t >/dev/null || { echo "run.sh: $t missing (scripts/deps.sh)" >&2; exit 2; }
done

mkdir -p "$OUT/raw"
WORK=$(mktemp -d /tmp/samsa-bench-work.XXXXXX)
SAMSA_PID=""
MOCK_PID=""
IPERF_PID=""
EXTRA_PIDS=""

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# ---- process management -----------------------------------------------------

cleanup() {
    local p
    for p in $SAMSA_PID $MOCK_PID $IPERF_PID $KAFKA_PY $EXTRA_PIDS; do
        kill -TERM "$p" 2>/dev/null || true
    done
    [ -n "${WATCHDOG:-}" ] && kill "$WATCHDOG" 2>/dev/null || true
    sleep 0.5
    for p in $SAMSA_PID $MOCK_PID $IPERF_PID $KAFKA_PY $EXTRA_PIDS; do
        kill -KILL "$p" 2>/dev/null || true
    done
    if [ "${KEEP:-0}" = 1 ]; then
        log "kept $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'log "stopped (signal or MAX_SECONDS=$MAX_SECONDS)"; exit 124' TERM INT
(   # the watchdog; on TERM (from cleanup) it stops its sleep too
    trap 'kill "$sp" 2>/dev/null; exit 0' TERM
    sleep "$MAX_SECONDS" & sp=$!
    wait "$sp" && kill -TERM $$
) </dev/null >/dev/null 2>&1 &
WATCHDOG=$!

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_port PORT SECONDS: until something accepts on 127.0.0.1:PORT
wait_port() {
    local end=$((SECONDS + $2))
    while [ $SECONDS -lt $end ]; do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
            return 0
        fi
        sleep 0.05
    done
    return 1
}

# pid_gone PID SECONDS: until PID has exited; 1 if it is still there
pid_gone() {
    local end=$((SECONDS + $2))
    while kill -0 "$1" 2>/dev/null; do
        [ $SECONDS -ge $end ] && return 1
        sleep 0.05
    done
    return 0
}

# samsa_start NAME [--override k=v]...: a fresh server in WORK/NAME.
# Defaults but one: log.segment.delete.delay.ms=0, so that a deleted run's
# topic leaves the disk (and its dirty pages the page cache) at once instead
# of being written back while later rows run.
samsa_start() {
    local name=$1 dir=$WORK/$1 port cport try
    shift
    for try in 1 2 3; do
        rm -rf "$dir"; mkdir -p "$dir"
        port=$(free_port); cport=$(free_port); MP=$(free_port)
        "$SERVER" --override "listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport" \
                  --override "log.dirs=$dir/data" --override log.segment.delete.delay.ms=0 \
                  --override "metrics.listener=http://127.0.0.1:$MP" "$@" \
                  >"$dir/stdout" 2>"$dir/stderr" &
        SAMSA_PID=$!
        SAMSA_DIR=$dir
        SB=127.0.0.1:$port
        if wait_port "$port" 10 && kill -0 "$SAMSA_PID" 2>/dev/null; then
            log "samsa-server pid $SAMSA_PID on $SB ($dir)"
            return 0
        fi
        log "samsa-server did not start (try $try): $(tail -2 "$dir/stderr")"
        kill -KILL "$SAMSA_PID" 2>/dev/null || true
        SAMSA_PID=""
    done
    return 1
}

samsa_stop() {
    [ -z "$SAMSA_PID" ] && return 0
    kill -TERM "$SAMSA_PID" 2>/dev/null || true
    if ! pid_gone "$SAMSA_PID" 15; then
        log "BUG? samsa-server pid $SAMSA_PID still running 15 s after SIGTERM; killing"
        kill -KILL "$SAMSA_PID" 2>/dev/null || true
    fi
    wait "$SAMSA_PID" 2>/dev/null || log "samsa-server exit status $? ($SAMSA_DIR/stderr)"
    SAMSA_PID=""
}

# mock_start TOPIC:PARTS...: librdkafka's mock cluster with those topics
mock_start() {
    local args=() t
    for t in "$@"; do args+=(-t "$t"); done
    "$MOCK" "${args[@]}" >"$WORK/mock.addr" 2>"$WORK/mock.err" &
    MOCK_PID=$!
    local end=$((SECONDS + 10))
    while [ ! -s "$WORK/mock.addr" ] && [ $SECONDS -lt $end ]; do sleep 0.05; done
    MB=$(head -1 "$WORK/mock.addr")
    [ -n "$MB" ] || { log "rdk_mock did not start: $(cat "$WORK/mock.err")"; return 1; }
    log "rdk_mock pid $MOCK_PID on $MB"
}

mock_stop() {
    [ -z "$MOCK_PID" ] && return 0
    kill -TERM "$MOCK_PID" 2>/dev/null || true
    wait "$MOCK_PID" 2>/dev/null || true
    MOCK_PID=""
}

# kafka_start: Apache Kafka (bench/kafka_peer.py); sets KB (bootstrap) and
# KAFKA_PID (the JVM, for CPU_PID); its start-up time and idle RSS go to
# OUT/raw/kafka-startup/.
KAFKA_PY=""
KAFKA_PID=""
kafka_start() {
    local info=$WORK/kafka.json end
    rm -f "$info"
    python3 "$REPO/bench/kafka_peer.py" "$info" >"$WORK/kafka.out" 2>&1 &
    KAFKA_PY=$!
    end=$((SECONDS + 150))
    while [ ! -s "$info" ] && [ $SECONDS -lt $end ] && kill -0 "$KAFKA_PY" 2>/dev/null; do
        sleep 0.2
    done
    [ -s "$info" ] || { log "Apache Kafka did not start: $(tail -5 "$WORK/kafka.out")"; return 1; }
    KB=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bootstrap"])' "$info")
    KAFKA_PID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$info")
    log "Apache Kafka pid $KAFKA_PID on $KB"
}

kafka_stop() {
    [ -z "$KAFKA_PY" ] && return 0
    kill -TERM "$KAFKA_PY" 2>/dev/null || true
    pid_gone "$KAFKA_PY" 60 || kill -KILL "$KAFKA_PY" "$KAFKA_PID" 2>/dev/null || true
    wait "$KAFKA_PY" 2>/dev/null || true
    KAFKA_PY=""; KAFKA_PID=""
}

# ---- recording ----------------------------------------------------------------

# CPU time (user+sys, ms) a process has used so far, all its threads.
cpu_ms() {
    awk -v hz="$(getconf CLK_TCK)" '{ print int(($14 + $15) * 1000 / hz) }' "/proc/$1/stat" 2>/dev/null || echo -1
}

# record SECTION ROW TARGET RUN TIMEOUT CMD...: one measured run, under
# /usr/bin/time (the client's CPU time and peak RSS go to .time).  With
# CPU_PID set, the CPU time that process (the broker) used meanwhile goes
# to .cpu.
record() {
    local sec=$1 row=$2 tgt=$3 run=$4 tmo=$5 rc=0 c0=0
    shift 5
    local base=$OUT/raw/$sec/$row/$tgt.$run
    mkdir -p "$(dirname "$base")"
    printf '%q ' "$@" >"$base.cmd"; echo >>"$base.cmd"
    [ -n "${CPU_PID:-}" ] && c0=$(cpu_ms "$CPU_PID")
    timeout "$tmo" /usr/bin/time -o "$base.time" \
        -f '{"max_rss_kb": %M, "user_s": %U, "sys_s": %S}' "$@" >"$base.json" 2>"$base.err" || rc=$?
    [ -n "${CPU_PID:-}" ] && echo "{\"server_cpu_ms\": $(($(cpu_ms "$CPU_PID") - c0))}" >"$base.cpu"
    echo "$rc" >"$base.rc"
    if [ "$rc" -ne 0 ]; then
        log "FAILED ($rc) $sec/$row/$tgt.$run: $(tail -3 "$base.err" | tr '\n' ' ')"
    else
        log "$sec/$row/$tgt.$run: $(tail -1 "$base.json" | cut -c1-160)"
    fi
    sleep "$PAUSE"
    return 0
}

# quiet CMD...: set-up step (topic create/delete); failures are logged.
quiet() {
    local rc=0
    timeout 60 "$@" >"$WORK/quiet.out" 2>&1 || rc=$?
    [ "$rc" -eq 0 ] || log "set-up step failed ($rc): $* : $(tail -3 "$WORK/quiet.out" | tr '\n' ' ')"
    return 0
}

# order RUN A B: "A B" on odd runs, "B A" on even ones
order() { if [ $(($1 % 2)) -eq 1 ]; then echo "$2 $3"; else echo "$3 $2"; fi; }

scaled() { awk -v n="$1" -v s="$SCALE" 'BEGIN { printf "%d", n * s }'; }
records_for() { if [ "$1" -le 100 ]; then scaled 500000; else scaled 200000; fi; }

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo -1; }

# ---- sections -------------------------------------------------------------------

sec_machine() {
    {
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "nproc: $(nproc)"
        echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
        echo "cpu MHz: $(awk -F': ' '/cpu MHz/ {print $2; exit}' /proc/cpuinfo)"
        echo "memory: $(awk '/MemTotal/ {print $2, $3}' /proc/meminfo)"
        echo "kernel: $(uname -sr)"
        echo "disk: $(df -T "$WORK" | awk 'NR==2 {print $1, $2}') ($(lsblk -dno NAME,SIZE,ROTA 2>/dev/null | tr '\n' ';'))"
        echo "loadavg: $(cat /proc/loadavg)"
        echo "librdkafka: $(dpkg-query -W -f='${Version}' librdkafka1 2>/dev/null)"
        echo "iperf3: $(iperf3 --version 2>&1 | head -1)"
        echo "fio: $(fio --version)"
        echo "samsa: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null) ($(git -C "$REPO" status --porcelain 2>/dev/null | wc -l) changed files)"
    } >"$OUT/machine.txt"
    cat "$OUT/machine.txt" >&2
}

# Issue 3: ingest, samsa-server vs the mock, rdk_perf produce (defaults but
# acks: librdkafka's linger.ms=5, batch.size=1000000, no compression).
sec_ingest() {
    local size acks parts row n run tgt topic
    samsa_start ingest
    mock_start mk-p1:1 mk-p6:6
    for size in 100 1024; do for acks in 1 all; do for parts in 1 6; do
        row=s$size-a$acks-p$parts
        n=$(records_for $size)
        for run in $(seq 1 "$RUNS"); do
            for tgt in $(order "$run" samsa mock); do
                if [ "$tgt" = samsa ]; then
                    topic=ing-$row-$run
                    quiet "$RDK" create -b "$SB" -t "$topic" -p "$parts"
                    CPU_PID=$SAMSA_PID record ingest "$row" samsa "$run" 120 \
                        "$RDK" produce -b "$SB" -t "$topic" -n "$n" -s "$size" -a "$acks" --json
                    quiet "$RDK" delete -b "$SB" -t "$topic"
                else
                    CPU_PID=$MOCK_PID record ingest "$row" mock "$run" 120 \
                        "$RDK" produce -b "$MB" -t "mk-p$parts" -n "$n" -s "$size" -a "$acks" --json
                fi
            done
        done
    done; done; done
    sleep 2
    echo "{\"rss_kb\": $(rss_kb "$SAMSA_PID")}" >"$OUT/raw/ingest/server_rss_after.json"
    mock_stop
    samsa_stop
}

# Issue 6: libsamsa vs librdkafka against one samsa-server, linger.ms=5,
# each client's defaults otherwise (libsamsa: Java's batch.size=16384;
# librdkafka: batch.size=1000000), and both at each other's batch.size:
# libsamsa-b1m (batch.size=1000000) and librdkafka-b16k (-X
# batch.size=16384).  Targets alternate in order from run to run.
# Idempotence off on both (librdkafka's default).
# With BASE_CLI=path/to/another/samsa, a fifth target, libsamsa-base, runs
# that build's `samsa perf produce` (batch.size=16384): before/after.
sec_perf() {
    local size acks parts row n run tgt topic bs tgts cli
    samsa_start perf
    for size in 100 1024; do for acks in 1 all; do for parts in 1 6; do
        row=s$size-a$acks-p$parts
        n=$(records_for $size)
        for run in $(seq 1 "$RUNS"); do
            tgts="libsamsa librdkafka libsamsa-b1m librdkafka-b16k"
            [ -n "${BASE_CLI:-}" ] && tgts="$tgts libsamsa-base"
            [ $((run % 2)) -eq 0 ] && tgts=$(echo $tgts | tr ' ' '\n' | tac | tr '\n' ' ')
            for tgt in $tgts; do
                topic=perf-$row-$tgt-$run
                quiet "$RDK" create -b "$SB" -t "$topic" -p "$parts"
                if [ "${tgt#libsamsa}" != "$tgt" ]; then
                    bs=16384
                    [ "$tgt" = libsamsa-b1m ] && bs=1000000
                    cli=$CLI
                    [ "$tgt" = libsamsa-base ] && cli=$BASE_CLI
                    CPU_PID=$SAMSA_PID record perf "$row" "$tgt" "$run" 120 \
                        "$cli" perf produce --topic "$topic" --num-records "$n" --record-size "$size" \
                        --throughput -1 --producer-props "bootstrap.servers=$SB" "acks=$acks" \
                        linger.ms=5 "batch.size=$bs" enable.idempotence=false --json
                elif [ "$tgt" = librdkafka-b16k ]; then
                    CPU_PID=$SAMSA_PID record perf "$row" "$tgt" "$run" 120 \
                        "$RDK" produce -b "$SB" -t "$topic" -n "$n" -s "$size" -a "$acks" -l 5 \
                        -X batch.size=16384 --json
                else
                    CPU_PID=$SAMSA_PID record perf "$row" librdkafka "$run" 120 \
                        "$RDK" produce -b "$SB" -t "$topic" -n "$n" -s "$size" -a "$acks" -l 5 --json
                fi
                quiet "$RDK" delete -b "$SB" -t "$topic"
            done
        done
    done; done; done
    samsa_stop
}

# libsamsa's memory: the same run with buffer.memory 4 MiB and 32 MiB (the
# default); samsa perf itself holds 36 bytes per record for its statistics.
sec_memory() {
    local bm run topic n
    n=$(scaled 200000)
    samsa_start memory
    for run in $(seq 1 "$RUNS"); do
        for bm in 4194304 33554432; do
            topic=mem-$bm-$run
            quiet "$RDK" create -b "$SB" -t "$topic" -p 1
            mkdir -p "$OUT/raw/memory/bm$bm"
            record memory "bm$bm" libsamsa "$run" 120 \
                "$CLI" perf produce --topic "$topic" --num-records "$n" --record-size 1024 \
                --throughput -1 --producer-props "bootstrap.servers=$SB" acks=1 linger.ms=5 \
                enable.idempotence=false "buffer.memory=$bm" --json
            quiet "$RDK" delete -b "$SB" -t "$topic"
        done
    done
    samsa_stop
}

iperf_once() {   # iperf_once RUN: one 3 s single-stream TCP test on loopback
    local port
    port=$(free_port)
    local end=$((SECONDS + 5))
    : >"$WORK/iperf3-server.log"
    iperf3 -s -1 -B 127.0.0.1 -p "$port" >"$WORK/iperf3-server.log" 2>&1 &
    IPERF_PID=$!
    # No probe connection: -1 serves exactly one client.
    until grep -q "Server listening" "$WORK/iperf3-server.log" || [ $SECONDS -ge $end ]; do
        sleep 0.05
    done
    record consume iperf3 iperf3 "$1" 30 iperf3 -c 127.0.0.1 -p "$port" -t 3 -J
    pid_gone "$IPERF_PID" 5 || kill "$IPERF_PID" 2>/dev/null || true
    wait "$IPERF_PID" 2>/dev/null || true
    IPERF_PID=""
}

# Issue 3: consume 1 KiB records from the start (page cache) vs iperf3.
sec_consume() {
    local run parts n tgt
    n=$(scaled 500000)
    samsa_start consume
    for parts in 1 6; do
        quiet "$RDK" create -b "$SB" -t "cons-p$parts" -p "$parts"
        quiet "$RDK" produce -b "$SB" -t "cons-p$parts" -n "$n" -s 1024 -a 1
    done
    for run in $(seq 1 "$RUNS"); do
        for tgt in $(order "$run" samsa iperf3); do
            if [ "$tgt" = iperf3 ]; then
                iperf_once "$run"
            else
                for parts in 1 6; do
                    CPU_PID=$SAMSA_PID record consume "p$parts" samsa "$run" 120 \
                        "$RDK" consume -b "$SB" -t "cons-p$parts" -n "$n" --json
                done
            fi
        done
    done
    samsa_stop
}

# Issue 3: flush.messages=1 (fdatasync before acks=all answers, group commit)
# vs fio's sequential 1 MiB appends to a new file (no preallocation), each
# followed by fdatasync, for 3 s or 1 GiB; same file system.
sec_flush() {
    local run parts n tgt topic
    n=$(scaled 150000)
    samsa_start flush
    mkdir -p "$WORK/fio"
    for run in $(seq 1 "$RUNS"); do
        for tgt in $(order "$run" samsa fio); do
            if [ "$tgt" = fio ]; then
                record flush fio fio "$run" 60 \
                    fio --name=fdatasync --directory="$WORK/fio" --rw=write --bs=1M --size=1G \
                        --runtime=3 --fdatasync=1 --ioengine=sync --fallocate=none \
                        --output-format=json
                rm -f "$WORK"/fio/*
            else
                for parts in 1 6; do
                    topic=flush-p$parts-$run
                    quiet "$RDK" create -b "$SB" -t "$topic" -p "$parts" -C flush.messages=1
                    CPU_PID=$SAMSA_PID record flush "p$parts" samsa "$run" 120 \
                        "$RDK" produce -b "$SB" -t "$topic" -n "$n" -s 1024 -a all --json
                    quiet "$RDK" delete -b "$SB" -t "$topic"
                done
            fi
        done
    done
    samsa_stop
}

# Issue 3: end-to-end latency at 2,000 records/s, linger.ms=0, acks=all,
# 100-byte records, 1 partition, 5 s measured after 1 s of warm-up.  The
# mock answers an empty Fetch only after fetch.wait.max.ms (no wake-up on
# produce), so it runs with fetch.wait.max.ms=0: the client-and-loopback floor.
sec_e2e() {
    local run tgt topic
    samsa_start e2e
    mock_start mk-e2e:1
    for run in $(seq 1 "$RUNS"); do
        for tgt in $(order "$run" samsa mock); do
            if [ "$tgt" = samsa ]; then
                topic=e2e-$run
                quiet "$RDK" create -b "$SB" -t "$topic" -p 1
                record e2e r2000 samsa "$run" 60 \
                    "$RDK" e2e -b "$SB" -t "$topic" -r 2000 -d 5 -w 1 -s 100 -a all --json
            else
                record e2e r2000 mock "$run" 60 \
                    "$RDK" e2e -b "$MB" -t mk-e2e -r 2000 -d 5 -w 1 -s 100 -a all \
                        -Xc fetch.wait.max.ms=0 --json
            fi
        done
    done
    mock_stop
    samsa_stop
}

# Issue 3: exec to first ApiVersions and Metadata answers on an empty data
# dir; then, after 2 s idle, VmRSS.
sec_startup() {
    local run dir port cport pid
    for run in $(seq 1 "$RUNS"); do
        dir=$WORK/startup-$run
        rm -rf "$dir"; mkdir -p "$dir"
        port=$(free_port); cport=$(free_port)
        record startup empty samsa "$run" 30 \
            "$RDK" startup --port "$port" --timeout-ms 10000 --json -- "$SERVER" \
                --override "listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport" \
                --override "log.dirs=$dir/data" --override "metrics.listener=http://127.0.0.1:0"
        pid=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["pid"])' \
                "$OUT/raw/startup/empty/samsa.$run.json" 2>/dev/null || true)
        [ -n "$pid" ] || continue
        EXTRA_PIDS="$EXTRA_PIDS $pid"
        sleep 2
        mkdir -p "$OUT/raw/idle/rss"
        echo "{\"rss_kb\": $(rss_kb "$pid"), \"threads\": $(ls "/proc/$pid/task" | wc -l)}" \
            >"$OUT/raw/idle/rss/samsa.$run.json"
        echo 0 >"$OUT/raw/idle/rss/samsa.$run.rc"
        kill -TERM "$pid"
        pid_gone "$pid" 15 || { log "BUG? samsa-server $pid alive 15 s after SIGTERM"; kill -KILL "$pid"; }
    done
}

# Issue 8: throughput with /metrics scraped every second (as Prometheus
# would, by bench/scrape.py) vs not scraped, same server, alternating.
sec_metrics() {
    local size parts row n run tgt topic sp
    samsa_start metrics
    for size in 100 1024; do for parts in 1 6; do
        row=s$size-a1-p$parts
        n=$(records_for $size)
        for run in $(seq 1 "$RUNS"); do
            for tgt in $(order "$run" quiet scraped); do
                topic=mx-$row-$tgt-$run
                quiet "$RDK" create -b "$SB" -t "$topic" -p "$parts"
                sp=""
                if [ "$tgt" = scraped ]; then
                    mkdir -p "$OUT/raw/metrics-scrapes/$row"
                    python3 "$REPO/bench/scrape.py" "http://127.0.0.1:$MP/metrics" 1 \
                        >"$OUT/raw/metrics-scrapes/$row/scraped.$run.out" 2>&1 &
                    sp=$!
                    EXTRA_PIDS="$EXTRA_PIDS $sp"
                fi
                # let the scraper's interpreter start (and scrape once)
                # before the clock runs; the quiet run waits as long
                sleep 2
                CPU_PID=$SAMSA_PID record metrics "$row" "$tgt" "$run" 120 \
                    "$RDK" produce -b "$SB" -t "$topic" -n "$n" -s "$size" -a 1 --json
                if [ -n "$sp" ]; then
                    kill -TERM "$sp" 2>/dev/null || true
                    wait "$sp" 2>/dev/null || true
                fi
                quiet "$RDK" delete -b "$SB" -t "$topic"
            done
        done
    done; done
    samsa_stop
}

# Issue 23: samsa-server vs Apache Kafka 4.4 on this machine, the same
# clients against each, alternating which goes first: rdk_perf produce
# (librdkafka's defaults but acks), Kafka's kafka-producer-perf-test (the
# Java producer's defaults, acks=1), rdk_perf consume from the start, the
# e2e latency row, then start-up time and idle RSS.  Broker CPU per record
# from /proc (the JVM's, samsa-server's).
sec_kafka() {
    local size acks row n run tgt topic b pid
    samsa_start kafka || return 1
    kafka_start || { samsa_stop; return 1; }
    mkdir -p "$OUT/raw/kafka-startup/empty"
    python3 - "$WORK/kafka.json" "$OUT/raw/kafka-startup/empty/kafka.1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
open(sys.argv[2] + ".json", "w").write(json.dumps(
    {"startup_ms": d["startup_s"] * 1000, "rss_kb_idle": d["rss_kb_idle"]}) + "\n")
open(sys.argv[2] + ".rc", "w").write("0\n")
PY
    for size in 100 1024; do for acks in 1 all; do
        row=rdk-s$size-a$acks
        n=$(records_for $size)
        for run in $(seq 1 "$RUNS"); do
            for tgt in $(order "$run" samsa kafka); do
                if [ "$tgt" = samsa ]; then b=$SB; pid=$SAMSA_PID; else b=$KB; pid=$KAFKA_PID; fi
                topic=kp-$row-$run
                quiet "$RDK" create -b "$b" -t "$topic" -p 1
                CPU_PID=$pid record kafka "$row" "$tgt" "$run" 180 \
                    "$RDK" produce -b "$b" -t "$topic" -n "$n" -s "$size" -a "$acks" --json
                quiet "$RDK" delete -b "$b" -t "$topic"
            done
        done
    done; done
    n=$(scaled 200000)
    for run in $(seq 1 "$RUNS"); do
        for tgt in $(order "$run" samsa kafka); do
            if [ "$tgt" = samsa ]; then b=$SB; pid=$SAMSA_PID; else b=$KB; pid=$KAFKA_PID; fi
            topic=kj-$run
            quiet "$RDK" create -b "$b" -t "$topic" -p 1
            CPU_PID=$pid record kafka java-s1024-a1 "$tgt" "$run" 240 \
                python3 "$REPO/bench/perf_json.py" "$REPO/scripts/kafka-tool" producer-perf-test \
                    --topic "$topic" --num-records "$n" --record-size 1024 --throughput -1 \
                    --producer-props "bootstrap.servers=$b" acks=1
            quiet "$RDK" delete -b "$b" -t "$topic"
        done
    done
    n=$(scaled 500000)
    for tgt in samsa kafka; do
        if [ "$tgt" = samsa ]; then b=$SB; else b=$KB; fi
        quiet "$RDK" create -b "$b" -t kc-p1 -p 1
        quiet "$RDK" produce -b "$b" -t kc-p1 -n "$n" -s 1024 -a 1
    done
    for run in $(seq 1 "$RUNS"); do
        for tgt in $(order "$run" samsa kafka); do
            if [ "$tgt" = samsa ]; then b=$SB; pid=$SAMSA_PID; else b=$KB; pid=$KAFKA_PID; fi
            CPU_PID=$pid record kafka consume-s1024 "$tgt" "$run" 180 \
                "$RDK" consume -b "$b" -t kc-p1 -n "$n" --json
        done
    done
    for run in $(seq 1 "$RUNS"); do
        for tgt in $(order "$run" samsa kafka); do
            if [ "$tgt" = samsa ]; then b=$SB; else b=$KB; fi
            topic=ke-$run
            quiet "$RDK" create -b "$b" -t "$topic" -p 1
            record kafka-e2e r2000 "$tgt" "$run" 60 \
                "$RDK" e2e -b "$b" -t "$topic" -r 2000 -d 5 -w 1 -s 100 -a all --json
        done
    done
    kafka_stop
    samsa_stop
    sec_startup
}

log "results in $OUT (work dir $WORK)"
for s in $SECTIONS; do
    case " $ALL_SECTIONS kafka " in
        *" $s "*) log "=== $s"; "sec_$s" ;;
        *) log "unknown section $s"; exit 2 ;;
    esac
done
echo "loadavg at end: $(cat /proc/loadavg)" >>"$OUT/machine.txt"
python3 "$REPO/bench/summarize.py" "$OUT" >"$OUT/results.md"
log "wrote $OUT/results.md"
