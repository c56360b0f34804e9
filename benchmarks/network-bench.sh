#!/usr/bin/env bash
# The allocation networks' benchmark (docs/BENCHMARKS.md, "Networks"), run by hand as root:
#
#   benchmarks/network-bench.sh [RUNS]    (default 3; ALLOCS=200, CONCURRENCY=32, CNI_BIN_DIR=/usr/lib/cni and
#                                          OUT=DIR in the environment)
#
# RUNS times, each in a network and mount namespace of its own (unshare --net --mount --propagation private, its
# loopback up), so the bridge, the veths, the iptables rules and the namespaces' mounts are made there and go with it:
#   drover-bench network --allocs ALLOCS --concurrency CONCURRENCY: ALLOCS bridge networks of one port each set up
#   through the agent's AllocNetworks, each call timed, then torn down, timed; what was made and what is left counted.
# Writes every run's JSON line to OUT/network.jsonl (default ./network-bench-results) and prints the medians. Nothing
# is made in the machine's own network namespace. Needs: the jar (./mvnw -B -pl benchmarks -am package -DskipTests),
# util-linux's unshare, iproute2, iptables, python3, and apt-get install containernetworking-plugins.
set -euo pipefail

RUNS=${1:-3}
ALLOCS=${ALLOCS:-200}
CONCURRENCY=${CONCURRENCY:-32}
CNI_BIN_DIR=${CNI_BIN_DIR:-/usr/lib/cni}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH_JAR=$ROOT/benchmarks/target/drover-bench.jar
OUT=$(mkdir -p "${OUT:-network-bench-results}" && cd "${OUT:-network-bench-results}" && pwd)
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
[[ $RUNS =~ ^[1-9][0-9]?$ ]] || { echo "RUNS is a whole number from 1 to 99, not '$RUNS'" >&2; exit 2; }
[[ $ALLOCS =~ ^[1-9][0-9]{0,3}$ ]] || { echo "ALLOCS is a whole number from 1 to 4000" >&2; exit 2; }
[[ $CONCURRENCY =~ ^[0-9]{1,4}$ ]] || { echo "CONCURRENCY is a whole number (0: all at once)" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "run as root (network namespaces, bridges, iptables)" >&2; exit 2; }
for tool in unshare ip iptables iptables-save python3; do
    command -v "$tool" >/dev/null || { echo "$tool is missing (docs/BENCHMARKS.md says how to install it)" >&2; exit 2; }
done
for plugin in loopback bridge host-local portmap; do
    [[ -x $CNI_BIN_DIR/$plugin ]] || { echo "no $CNI_BIN_DIR/$plugin: apt-get install containernetworking-plugins" >&2; exit 2; }
done
[[ -f $BENCH_JAR ]] || { echo "no $BENCH_JAR: ./mvnw -B -pl benchmarks -am package -DskipTests" >&2; exit 2; }

# COMMAND... run in a network and mount namespace of its own, only its loopback up
in_own_netns() {
    unshare --net --mount --propagation private -- sh -c 'ip link set lo up && exec "$0" "$@"' "$@"
}

: >"$OUT/network.jsonl"
for run in $(seq "$RUNS"); do
    echo "run $run of $RUNS: drover-bench network --allocs $ALLOCS --concurrency $CONCURRENCY" >&2
    in_own_netns "$JAVA" -jar "$BENCH_JAR" network --allocs "$ALLOCS" --concurrency "$CONCURRENCY" \
        --cni-bin-dir "$CNI_BIN_DIR" | tee -a "$OUT/network.jsonl"
done

python3 - "$OUT" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(f"{sys.argv[1]}/network.jsonl") if l.strip()]
med = lambda k: statistics.median(r[k] for r in runs)
ms = lambda k: "%.1f" % (1000 * med(k))
print("medians of %d runs, %d allocations, %d at a time" % (len(runs), runs[0]["allocs"], runs[0]["concurrency"]))
for phase in ("setup", "teardown"):
    print("%-8s per call p50 %s / p90 %s / p99 %s / max %s ms; all %.2f s" % (phase,
        ms(phase + "P50Seconds"), ms(phase + "P90Seconds"), ms(phase + "P99Seconds"), ms(phase + "MaxSeconds"),
        med(phase + "AllSeconds")))
print("alone: setup %s ms, teardown %s ms; one plugin exec (bridge VERSION) %s ms;"
      " one iptables call %s ms before, %s ms with the rules" % (ms("aloneSetupSeconds"), ms("aloneTeardownSeconds"),
      ms("pluginExecSeconds"), ms("iptablesCallSecondsBefore"), ms("iptablesCallSecondsWithRules")))
print("made (last run):", runs[-1]["made"], " left:", runs[-1]["left"])
PY
