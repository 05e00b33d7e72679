#!/bin/sh
# bench/consume_vs_rdk.sh - `samsa perf consume --no-group` (libsamsa's
# consumer) side by side with `rdk_perf consume` (librdkafka's simple
# consumer) on the same data in the same run: topics of 100-byte and 1 KiB
# records with 1 and 6 partitions, filled once with rdk_perf produce
# (acks=1) and synced to disk (so that writing back the pages just written
# does not overlap the first runs), then each consumer reads the whole
# topic from the start, three times, alternating.  Prints one line per run and a median table
# (records/s, and libsamsa / librdkafka).  Optional extra libsamsa columns,
# run in the same alternation: BASE=/path/to/other/samsa (an A/B build,
# default settings) and ALT_PROPS="k=v ..." (this build with these consumer
# properties, e.g. receive.buffer.bytes=-1).
#
# usage: [BASE=..] [ALT_PROPS=..] bench/consume_vs_rdk.sh BUILD_DIR
#            [RECORDS_100B] [RECORDS_1K]
set -eu
B=${1:?usage: consume_vs_rdk.sh BUILD_DIR [N100] [N1K]}
N100=${2:-1000000}
N1K=${3:-300000}
WORK=$(mktemp -d /tmp/samsa-consume-bench.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$B/samsa-server" --override "listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport" \
    --override "log.dirs=$WORK/data" --override "metrics.listener=http://127.0.0.1:0" \
    >"$WORK/server.log" 2>&1 &
SPID=$!
trap 'kill -TERM $SPID 2>/dev/null; wait $SPID 2>/dev/null; rm -rf "$WORK"' EXIT
SB=127.0.0.1:$port
for i in $(seq 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1',$port),0.2)" 2>/dev/null && break
    sleep 0.1
done
echo "# samsa-server $SB, data in $WORK"
OUT=$WORK/results
: >"$OUT"
rps() {
    python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["records_per_sec"])'
}
for spec in "100 1 $N100" "100 6 $N100" "1024 1 $N1K" "1024 6 $N1K"; do
    set -- $spec
    size=$1 parts=$2 n=$3 topic=cons-$1-$2
    "$B/rdk_perf" create -b "$SB" -t "$topic" -p "$parts" >/dev/null
    "$B/rdk_perf" produce -b "$SB" -t "$topic" -n "$n" -s "$size" -a 1 --json >/dev/null
    sync        # the topic's dirty pages written back before anyone reads
    for run in 1 2 3; do
        r=$("$B/rdk_perf" consume -b "$SB" -t "$topic" -n "$n" --json | rps)
        s=$("$B/samsa" perf consume -b "$SB" --topic "$topic" --messages "$n" --no-group --json | rps)
        line="$size $parts $run librdkafka $r libsamsa $s"
        if [ -n "${ALT_PROPS:-}" ]; then
            a=$("$B/samsa" perf consume -b "$SB" --topic "$topic" --messages "$n" --no-group --json \
                --consumer-props $ALT_PROPS | rps)
            line="$line alt $a"
        fi
        if [ -n "${BASE:-}" ]; then
            a=$("$BASE" perf consume -b "$SB" --topic "$topic" --messages "$n" --no-group --json | rps)
            line="$line base $a"
        fi
        echo "$line" | tee -a "$OUT"
    done
done
python3 - "$OUT" <<'PY'
import statistics, sys
rows, names = {}, []
for line in open(sys.argv[1]):
    f = line.split()
    size, parts = int(f[0]), int(f[1])
    cols = dict(zip(f[3::2], map(float, f[4::2])))
    names = list(cols)
    rows.setdefault((size, parts), []).append(cols)
def cell(v):
    return "%s (%s-%s)" % (format(int(statistics.median(v)), ","),
                           format(int(min(v)), ","), format(int(max(v)), ","))
extra = [n for n in names if n not in ("librdkafka", "libsamsa")]
print("| record | partitions | libsamsa records/s (min-max) | librdkafka records/s (min-max) | ratio |"
      + "".join(" %s (min-max) | %s ratio |" % (n, n) for n in extra))
print("|---|---|---|---|---|" + "---|---|" * len(extra))
for (size, parts), runs in sorted(rows.items()):
    col = {n: [r[n] for r in runs] for n in names}
    mr = statistics.median(col["librdkafka"])
    out = "| %s | %d | %s | %s | %.2f |" % (
        "100 B" if size == 100 else "1 KiB", parts, cell(col["libsamsa"]),
        cell(col["librdkafka"]), statistics.median(col["libsamsa"]) / mr)
    for n in extra:
        out += " %s | %.2f |" % (cell(col[n]), statistics.median(col[n]) / mr)
    print(out)
PY
