#!/usr/bin/env bash
# The allocation networks' benchmark (docs/BENCHMARKS.md, "Networks"), run by hand as root:
#
#   benchmarks/network-bench.sh [RUNS] [network|trace|e2e]   (default 3 network; ALLOCS=200, CONCURRENCY=32,
#                                                             CNI_BIN_DIR=/usr/lib/cni and OUT=DIR in the environment)
#
# network: RUNS times, each in a network and mount namespace of its own (unshare --net --mount --propagation private, its
# loopback up), so the bridge, the veths, the iptables rules and the namespaces' mounts are made there and go with it:
#   drover-bench network --allocs ALLOCS --concurrency CONCURRENCY: ALLOCS bridge networks of one port each set up
#   through the agent's AllocNetworks, each call timed, then torn down, timed; what was made and what is left counted.
# trace: one run where each CNI plugin, iptables, ip6tables, unshare and umount the
# agent's code runs is a shell wrapper that logs its wall time (and the CNI command it serves) to OUT/trace.log: what
# the time of a setup and a teardown is spent in. The wrappers cost an exec of sh each, so that run is slower.
# e2e: RUNS times each, in a namespace of its own as above: drover-bench --allocs ALLOCS --tasks 1 --delete
# (mock tasks) with --network host and with --network bridge (one port each; the agent sets the network up at the
# first task start and tears it down when the allocation is deleted), to OUT/e2e.jsonl, and their medians.
# Writes every run's JSON line to OUT/network.jsonl (default ./network-bench-results) and prints the medians. Nothing
# is made in the machine's own network namespace. Needs: the jar (./mvnw -B -pl benchmarks -am package -DskipTests),
# util-linux's unshare, iproute2, iptables, python3, and apt-get install containernetworking-plugins.
set -euo pipefail

RUNS=${1:-3}
MODE=${2:-network}
ALLOCS=${ALLOCS:-200}
CONCURRENCY=${CONCURRENCY:-32}
CNI_BIN_DIR=${CNI_BIN_DIR:-/usr/lib/cni}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH_JAR=$ROOT/benchmarks/target/drover-bench.jar
OUT=$(mkdir -p "${OUT:-network-bench-results}" && cd "${OUT:-network-bench-results}" && pwd)
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
[[ $RUNS =~ ^[1-9][0-9]?$ ]] || { echo "RUNS is a whole number from 1 to 99, not '$RUNS'" >&2; exit 2; }
[[ $MODE =~ ^(network|trace|e2e)$ ]] || { echo "the mode is network, trace or e2e, not '$MODE'" >&2; exit 2; }
[[ $ALLOCS =~ ^[1-9][0-9]{0,3}$ ]] || { echo "ALLOCS is a whole number from 1 to 4000" >&2; exit 2; }
[[ $CONCURRENCY =~ ^[0-9]{1,4}$ ]] || { echo "CONCURRENCY is a whole number (0: all at once)" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "run as root (network namespaces, bridges, iptables)" >&2; exit 2; }
for tool in unshare ip iptables iptables-save python3; do
    command -v "$tool" >/dev/null || { echo "$tool is missing (docs/BENCHMARKS.md says how to install it)" >&2; exit 2; }
done
for plugin in loopback bridge host-local portmap; do
    [[ -x $CNI_BIN_DIR/$plugin ]] || { echo "no $CNI_BIN_DIR/$plugin: apt-get install containernetworking-plugins" >&2; exit 2; }
done
AGENT_JAR=$ROOT/operator/target/drover-agent.jar
[[ -f $AGENT_JAR ]] || { echo "no $AGENT_JAR: ./mvnw -B -pl benchmarks -am package -DskipTests" >&2; exit 2; }
[[ -f $BENCH_JAR ]] || { echo "no $BENCH_JAR: ./mvnw -B -pl benchmarks -am package -DskipTests" >&2; exit 2; }

# COMMAND... run in a network and mount namespace of its own, only its loopback up
UNSHARE=$(command -v unshare) # not the trace's wrapper
in_own_netns() {
    "$UNSHARE" --net --mount --propagation private -- sh -c 'ip link set lo up && exec "$0" "$@"' "$@"
}

if [[ $MODE == network ]]; then
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
fi

if [[ $MODE == trace ]]; then
    W=$(mktemp -d /tmp/drover-network-trace.XXXXXX)
    trap 'rm -rf "$W"' EXIT
    : >"$OUT/trace.log"
    for tool in iptables ip6tables unshare umount; do
        printf '#!/bin/sh\ns=$(date +%%s%%N)\n%s "$@"\nrc=$?\necho "%s ${CNI_COMMAND:--} $s $(date +%%s%%N)" >>%s\nexit $rc\n' \
            "$(command -v "$tool")" "$tool" "$OUT/trace.log" >"$W/$tool"
    done
    mkdir "$W/cni"
    for plugin in loopback bridge host-local portmap; do
        printf '#!/bin/sh\ns=$(date +%%s%%N)\n%s "$@"\nrc=$?\necho "%s ${CNI_COMMAND:--} $s $(date +%%s%%N)" >>%s\nexit $rc\n' \
            "$CNI_BIN_DIR/$plugin" "$plugin" "$OUT/trace.log" >"$W/cni/$plugin"
    done
    chmod +x "$W"/* "$W"/cni/* 2>/dev/null || true
    echo "trace run: drover-bench network --allocs $ALLOCS --concurrency $CONCURRENCY, commands timed" >&2
    PATH=$W:$PATH in_own_netns "$JAVA" -jar "$BENCH_JAR" network --allocs "$ALLOCS" --concurrency "$CONCURRENCY" \
        --cni-bin-dir "$W/cni" | tee "$OUT/trace.jsonl"
    python3 - "$OUT" <<'PY'
import collections, json, sys
out = sys.argv[1]
run = json.loads(open(f"{out}/trace.jsonl").read())
calls = collections.defaultdict(list)
for line in open(f"{out}/trace.log"):
    name, command, start, end = line.split()
    calls[(command, name)].append((int(end) - int(start)) / 1e9)
for phase, command, key in (("setup", "ADD", "setup"), ("teardown", "DEL", "teardown")):
    n = run["allocs"] + 1
    total = run[key + "AllSeconds"]
    print("%s (trace run: all %.2f s, per call p50 %.3f s); per allocation:" % (phase, total, run[key + "P50Seconds"]))
    for (c, name), xs in sorted(calls.items()):
        if c == command:
            xs.sort()
            print("  %-10s %5.1f calls, %6.3f s in them (each p50 %.1f ms)" % (name, len(xs) / n, sum(xs) / n,
                  1000 * xs[len(xs) // 2]))
for (c, name), xs in sorted(calls.items()):
    if c == "-":
        xs.sort()
        print("outside a plugin: %-8s %d calls, p50 %.1f ms" % (name, len(xs), 1000 * xs[len(xs) // 2]))
PY
fi

if [[ $MODE == e2e ]]; then
    : >"$OUT/e2e.jsonl"
    for run in $(seq "$RUNS"); do
        for network in host bridge; do
            echo "e2e run $run of $RUNS: drover-bench --allocs $ALLOCS --tasks 1 --delete --network $network" >&2
            T=$(mktemp -d /tmp/drover-network-e2e.XXXXXX) # the bench's data and logs: removed after each run
            line=$(in_own_netns env DROVER_CNI_BIN_DIR="$CNI_BIN_DIR" "$JAVA" -Djava.io.tmpdir="$T" -jar "$BENCH_JAR" \
                --allocs "$ALLOCS" --tasks 1 --delete --network "$network" --agent-jar "$AGENT_JAR") || true
            if [[ $line == {* ]]; then
                python3 -c 'import json, sys; r = json.loads(sys.argv[2]); r["network"] = sys.argv[1]; print(json.dumps(r))' \
                    "$network" "$line" | tee -a "$OUT/e2e.jsonl"
            else # the bench said why on stderr; the agent's log is kept
                echo "{\"network\": \"$network\", \"failed\": true}" | tee -a "$OUT/e2e.jsonl"
                cp "$T"/drover-bench*/agent.log "$OUT/agent-$network-$run.log" 2>/dev/null || true
            fi
            rm -rf "$T"
        done
    done
    python3 - "$OUT" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(f"{sys.argv[1]}/e2e.jsonl") if l.strip()]
for network in ("host", "bridge"):
    rs = [r for r in runs if r["network"] == network and not r.get("failed")]
    failed = sum(1 for r in runs if r["network"] == network and r.get("failed"))
    print("%-6s: %d runs failed (not all Running in 5 min; the agent's log is kept)" % (network, failed)) if failed else None
    if not rs:
        continue
    med = lambda k: statistics.median(r[k] for r in rs)
    print("%-6s (%d runs): all running %.2f s, seen->running p50 %.2f / p99 %.2f s, create->running p50 %.2f / p99"
          " %.2f s, delete all %.2f s, agent CPU %.2f s" % (network, len(rs), med("allRunningSeconds"),
          med("p50Seconds"), med("p99Seconds"), med("createToRunningP50Seconds"), med("createToRunningP99Seconds"),
          med("deleteAllSeconds"), med("agentCpuSeconds")))
PY
fi
