#!/usr/bin/env bash
# The oci driver's benchmark (docs/BENCHMARKS.md, "oci tasks on one agent"), run by hand as root:
#
#   benchmarks/oci-bench.sh [RUNS]        (default 3; ALLOCS=100 and OUT=DIR in the environment)
#
# Starts Debian's docker-registry on 127.0.0.1 with TLS from a throwaway CA, pushes a busybox image (one layer,
# /bin/busybox of busybox-static) and a ~200 MB image of 4 layers of random data, then, RUNS times each:
#   1. drover-bench --driver oci --allocs ALLOCS --tasks 1 (the image pulled into the agent's store first);
#   2. ALLOCS x `ctr run -d` of the same image (16 at a time, as the bench creates) on a containerd of its own
#      (its own root, state and socket), image pulled first: time to all running, each run's seconds, and memory
#      per container (containerd-shim-runc-v2, runc, the container's processes);
#   3. the big image pulled by `drover-bench pull` (the agent's ImageStore: fetched, checked, unpacked), by
#      `skopeo copy docker://... oci:DIR` (fetched, stored compressed) and by `ctr image pull` (fetched, unpacked).
# Writes every figure as JSON lines under OUT (default ./oci-bench-results) and prints the medians. Everything it
# starts (registry, containerd, shims, containers) is stopped by PID, its mounts and cgroups removed, its files
# deleted. Needs: the jars (./mvnw -B -pl benchmarks -am package -DskipTests), runc, docker-registry,
# busybox-static, openssl, python3, and apt-get install containerd skopeo.
set -euo pipefail

RUNS=${1:-3}
ALLOCS=${ALLOCS:-100}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH_JAR=$ROOT/benchmarks/target/drover-bench.jar
AGENT_JAR=$ROOT/operator/target/drover-agent.jar
OUT=$(mkdir -p "${OUT:-oci-bench-results}" && cd "${OUT:-oci-bench-results}" && pwd)
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
NS=drover-oci-bench
[[ $RUNS =~ ^[1-9][0-9]?$ ]] || { echo "RUNS is a whole number from 1 to 99, not '$RUNS'" >&2; exit 2; }
[[ $ALLOCS =~ ^[1-9][0-9]{0,3}$ ]] || { echo "ALLOCS is a whole number from 1 to 9999" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "run as root (runc, containerd)" >&2; exit 2; }
for tool in docker-registry containerd ctr containerd-shim-runc-v2 skopeo runc openssl python3; do
    command -v "$tool" >/dev/null || { echo "$tool is missing (docs/BENCHMARKS.md says how to install it)" >&2; exit 2; }
done
[[ -x /bin/busybox ]] || { echo "/bin/busybox is missing: apt-get install busybox-static" >&2; exit 2; }
for jar in "$BENCH_JAR" "$AGENT_JAR"; do
    [[ -f $jar ]] || { echo "no $jar: ./mvnw -B -pl benchmarks -am package -DskipTests" >&2; exit 2; }
done

W=$(mktemp -d /var/tmp/drover-oci-bench.XXXXXX) # a real disk: pulls write to it
REGISTRY_PID=
CONTAINERD_PID=
SOCK=$W/containerd/containerd.sock

ctr_() { ctr --address "$SOCK" --namespace "$NS" "$@"; }

# Every container of the run's namespace: killed, its task and container (and snapshot) removed.
remove_containers() {
    [[ -n $CONTAINERD_PID ]] && kill -0 "$CONTAINERD_PID" 2>/dev/null || return 0
    local ids
    ids=$(ctr_ containers list --quiet 2>/dev/null || true)
    [[ -z $ids ]] && return 0
    printf '%s\n' $ids | xargs -P 8 -I{} sh -c \
        "ctr --address '$SOCK' --namespace '$NS' task kill --signal SIGKILL {} >/dev/null 2>&1;
         ctr --address '$SOCK' --namespace '$NS' task delete --force {} >/dev/null 2>&1;
         ctr --address '$SOCK' --namespace '$NS' containers delete {} >/dev/null 2>&1; true"
}

cleanup() {
    set +e
    remove_containers
    local shims
    shims=$(for p in /proc/[0-9]*; do
        [[ $(tr '\0' ' ' <"$p/cmdline") == *containerd-shim-runc-v2*"$SOCK"* ]] && basename "$p"
    done 2>/dev/null)
    if [[ -n $CONTAINERD_PID ]]; then kill "$CONTAINERD_PID" 2>/dev/null; wait "$CONTAINERD_PID" 2>/dev/null; fi
    for pid in $shims; do kill -9 "$pid" 2>/dev/null; done
    if [[ -n $REGISTRY_PID ]]; then kill "$REGISTRY_PID" 2>/dev/null; wait "$REGISTRY_PID" 2>/dev/null; fi
    # mounts under the work directory (containerd's snapshots, a bench's leftovers), deepest first
    awk -v w="$W" '$2 ~ "^"w {print $2}' /proc/self/mounts | sort -r | while read -r m; do umount -l "$m"; done
    for c in /sys/fs/cgroup/*/"$NS" /sys/fs/cgroup/"$NS"; do [[ -d $c ]] && rmdir "$c"; done
    # the shims' runc root, FIFOs and sockets: only the directories they left empty
    rmdir /run/containerd/runc/"$NS" /run/containerd/{runc,fifo,s} /run/containerd 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# --- the registry, with TLS from a CA of this run's -------------------------------------------------------------
mkdir -p "$W"/{certs,pki,registry,tmp,layouts,containerd} # certs: the CA alone (skopeo's --*-cert-dir)
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=drover-oci-bench-ca \
    -keyout "$W/pki/ca.key" -out "$W/certs/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout "$W/pki/server.key" \
    -out "$W/pki/server.csr" 2>/dev/null
openssl x509 -req -in "$W/pki/server.csr" -CA "$W/certs/ca.crt" -CAkey "$W/pki/ca.key" \
    -CAserial "$W/pki/ca.srl" -CAcreateserial -days 1 \
    -extfile <(printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n') \
    -out "$W/pki/server.crt" 2>/dev/null
CA=$W/certs/ca.crt
PORT=$(free_port)
REG=127.0.0.1:$PORT
cat >"$W/registry.yml" <<EOF
version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $W/registry}, delete: {enabled: true}}
http: {addr: $REG, tls: {certificate: $W/pki/server.crt, key: $W/pki/server.key}}
EOF
docker-registry serve "$W/registry.yml" >"$W/registry.log" 2>&1 &
REGISTRY_PID=$!
for _ in $(seq 100); do curl -fsS --cacert "$CA" "https://$REG/v2/" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fsS --cacert "$CA" "https://$REG/v2/" >/dev/null || { echo "the registry did not start:" >&2; cat "$W/registry.log" >&2; exit 1; }

# --- images: OCI layouts written here, pushed by skopeo ---------------------------------------------------------
blob() { # FILE -> moves it into the layout's blobs, prints its digest
    local d; d=$(sha256sum "$2" | cut -d' ' -f1); mv "$2" "$1/blobs/sha256/$d"; echo "$d"
}
# layout DIR TAG LAYER_DIR...: one gzip layer per directory, a config, a manifest, an index
layout() {
    local dir=$1 tag=$2; shift 2
    mkdir -p "$dir/blobs/sha256"
    local diff_ids=() layers=()
    for src in "$@"; do
        tar -C "$src" --numeric-owner --owner=0 --group=0 -cf "$dir/layer.tar" .
        diff_ids+=("\"sha256:$(sha256sum "$dir/layer.tar" | cut -d' ' -f1)\"")
        gzip -1 -n "$dir/layer.tar"
        local size; size=$(stat -c %s "$dir/layer.tar.gz")
        layers+=("{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"sha256:$(blob "$dir" "$dir/layer.tar.gz")\",\"size\":$size}")
    done
    local IFS=,
    printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/sbin:/usr/bin:/sbin:/bin"],"Cmd":["/bin/sh"]},"rootfs":{"type":"layers","diff_ids":[%s]}}' \
        "${diff_ids[*]}" >"$dir/config.json"
    local csize; csize=$(stat -c %s "$dir/config.json")
    printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[%s]}' \
        "$(blob "$dir" "$dir/config.json")" "$csize" "${layers[*]}" >"$dir/manifest.json"
    local msize; msize=$(stat -c %s "$dir/manifest.json")
    printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"%s"}}]}' \
        "$(blob "$dir" "$dir/manifest.json")" "$msize" "$tag" >"$dir/index.json"
    echo '{"imageLayoutVersion":"1.0.0"}' >"$dir/oci-layout"
}
mkdir -p "$W/src/busybox/bin" "$W/src/busybox/tmp"
cp /bin/busybox "$W/src/busybox/bin/busybox"
ln -s busybox "$W/src/busybox/bin/sh"
ln -s busybox "$W/src/busybox/bin/sleep"
layout "$W/layouts/busybox" 1 "$W/src/busybox"
for i in 1 2 3 4; do
    mkdir -p "$W/src/big$i"
    head -c 50M /dev/urandom >"$W/src/big$i/random-$i" # random: gzip cannot shrink it
done
layout "$W/layouts/big" 1 "$W/src/big1" "$W/src/big2" "$W/src/big3" "$W/src/big4"
rm -rf "$W/src"
for image in busybox big; do
    skopeo copy -q --dest-cert-dir "$W/certs" "oci:$W/layouts/$image:1" "docker://$REG/bench/$image:1"
done
BIG_BYTES=$(du -cb "$W"/layouts/big/blobs/sha256/* | tail -1 | cut -f1)
rm -rf "$W/layouts"
echo "registry $REG: bench/busybox:1, bench/big:1 ($BIG_BYTES bytes)" >&2

# --- containerd of this run's own ---------------------------------------------------------------------------------
cat >"$W/containerd/config.toml" <<EOF
version = 2
root = "$W/containerd/root"
state = "$W/containerd/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$W/containerd/opt"
EOF
containerd --config "$W/containerd/config.toml" >"$W/containerd.log" 2>&1 &
CONTAINERD_PID=$!
for _ in $(seq 100); do ctr --address "$SOCK" version >/dev/null 2>&1 && break; sleep 0.1; done
# ctr 1.6 speaks plain HTTP to 127.0.0.1 unless a hosts.toml says https
mkdir -p "$W/containerd/hosts/$REG"
printf 'server = "https://%s"\n[host."https://%s"]\n  ca = "%s"\n  capabilities = ["pull", "resolve"]\n' \
    "$REG" "$REG" "$CA" >"$W/containerd/hosts/$REG/hosts.toml"
ctr_ images pull --hosts-dir "$W/containerd/hosts" "$REG/bench/busybox:1" >/dev/null

# PIDS... -> "processes pssBytes rssBytes" summed over each and its descendants
memory() {
    python3 - "$@" <<'EOF'
import os, sys
kids = {}
for p in os.listdir('/proc'):
    if p.isdigit():
        try:
            ppid = int(open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()[1])
            kids.setdefault(ppid, []).append(int(p))
        except OSError:
            pass
todo, seen = [int(a) for a in sys.argv[1:]], set()
while todo:
    p = todo.pop()
    if p not in seen:
        seen.add(p)
        todo += kids.get(p, [])
n = pss = rss = 0
for p in seen:
    try:
        pss += int(next(l for l in open(f'/proc/{p}/smaps_rollup') if l.startswith('Pss:')).split()[1]) * 1024
        rss += int(next(l for l in open(f'/proc/{p}/status') if l.startswith('VmRSS:')).split()[1]) * 1024
        n += 1
    except (OSError, StopIteration):
        pass
print(n, pss, rss)
EOF
}

ctr_runs() { # one run of ALLOCS x ctr run -d; prints a JSON line
    local begin end
    begin=$(date +%s%N)
    seq 0 $((ALLOCS - 1)) | xargs -P 16 -I{} sh -c \
        's=$(date +%s%N); ctr --address "$0" --namespace "$1" run -d "$2" bench-{} /bin/sleep 3600 >/dev/null \
         && echo $(( $(date +%s%N) - s ))' "$SOCK" "$NS" "$REG/bench/busybox:1" >"$W/ctr-times"
    end=$(date +%s%N)
    local running shims
    running=$(ctr_ tasks list | awk '$3 == "RUNNING"' | wc -l)
    shims=$(ctr_ tasks list | awk 'NR > 1 {print $2}' | while read -r pid; do awk '{print $4}' "/proc/$pid/stat"; done | sort -u)
    read -r n pss rss <<<"$(memory $shims)"
    read -r _ dpss drss <<<"$(memory "$CONTAINERD_PID")"
    python3 - "$W/ctr-times" "$begin" "$end" "$running" "$n" "$pss" "$rss" "$ALLOCS" "$dpss" "$drss" <<'EOF'
import json, math, sys
t = sorted(int(l) / 1e9 for l in open(sys.argv[1]) if l.strip())
pct = lambda q: t[max(0, math.ceil(len(t) * q) - 1)] if t else 0 # as the bench's Timeline.percentile
begin, end, running, n, pss, rss, allocs, dpss, drss = (int(a) for a in sys.argv[2:])
print(json.dumps({"containers": allocs, "running": running, "allRunningSeconds": round((end - begin) / 1e9, 3),
    "p50Seconds": round(pct(0.5), 3), "p99Seconds": round(pct(0.99), 3), "processes": n,
    "pssBytesPerContainer": pss // allocs, "rssBytesPerContainer": rss // allocs,
    "containerdPssBytes": dpss, "containerdRssBytes": drss}))
EOF
    remove_containers
}

timed() { # COMMAND... -> seconds it took
    local b; b=$(date +%s%N); "$@" >/dev/null; echo "$(( $(date +%s%N) - b ))"
}

: >"$OUT/drover.jsonl"; : >"$OUT/ctr.jsonl"; : >"$OUT/pull.jsonl"
for run in $(seq "$RUNS"); do
    echo "run $run of $RUNS: drover-bench --driver oci" >&2
    "$JAVA" -Djava.io.tmpdir="$W/tmp" -jar "$BENCH_JAR" --allocs "$ALLOCS" --tasks 1 --driver oci \
        --image "$REG/bench/busybox:1" --registry-ca-file "$CA" --agent-jar "$AGENT_JAR" | tee -a "$OUT/drover.jsonl"
    rm -rf "$W"/tmp/drover-bench*
    echo "run $run of $RUNS: $ALLOCS x ctr run -d" >&2
    ctr_runs | tee -a "$OUT/ctr.jsonl"
    echo "run $run of $RUNS: pulls of bench/big:1" >&2
    d=$("$JAVA" -Djava.io.tmpdir="$W/tmp" -jar "$BENCH_JAR" pull --runs 1 --registry-ca-file "$CA" "$REG/bench/big:1")
    s=$(timed skopeo copy -q --src-cert-dir "$W/certs" "docker://$REG/bench/big:1" "oci:$W/skopeo:1")
    rm -rf "$W/skopeo"
    c=$(timed ctr_ images pull --hosts-dir "$W/containerd/hosts" "$REG/bench/big:1")
    ctr_ images remove --sync "$REG/bench/big:1" >/dev/null
    echo "{\"bytes\":$BIG_BYTES,\"drover\":$d,\"skopeoSeconds\":$(python3 -c "print(round($s/1e9,3))"),\"ctrSeconds\":$(python3 -c "print(round($c/1e9,3))")}" \
        | tee -a "$OUT/pull.jsonl"
done

python3 - "$OUT" <<'EOF'
import json, statistics, sys
out = sys.argv[1]
load = lambda f: [json.loads(l) for l in open(f"{out}/{f}") if l.strip()]
med = lambda xs: statistics.median(xs)
d, c, p = load("drover.jsonl"), load("ctr.jsonl"), load("pull.jsonl")
print("medians of", len(d), "runs")
print("drover oci: allRunning %.2f s, seen->running p50 %.3f / p99 %.3f s, create->running p50 %.3f / p99 %.3f s,"
      " PSS/task %d B, RSS/task %d B, agent CPU %.2f s, agent RSS peak %d B" % (
    med([r["allRunningSeconds"] for r in d]), med([r["p50Seconds"] for r in d]), med([r["p99Seconds"] for r in d]),
    med([r["createToRunningP50Seconds"] for r in d]), med([r["createToRunningP99Seconds"] for r in d]),
    med([r["taskPssBytesPerTask"] for r in d]), med([r["taskRssBytesPerTask"] for r in d]),
    med([r["agentCpuSeconds"] for r in d]), med([r["agentRssBytes"] for r in d])))
print("ctr run -d: allRunning %.2f s, per ctr run p50 %.3f / p99 %.3f s, PSS/container %d B, RSS/container %d B,"
      " containerd RSS %d B" % (
    med([r["allRunningSeconds"] for r in c]), med([r["p50Seconds"] for r in c]), med([r["p99Seconds"] for r in c]),
    med([r["pssBytesPerContainer"] for r in c]), med([r["rssBytesPerContainer"] for r in c]),
    med([r["containerdRssBytes"] for r in c])))
mb = p[0]["bytes"] / 1e6
for name, xs in (("drover pull", [r["drover"]["medianSeconds"] for r in p]),
                 ("skopeo copy", [r["skopeoSeconds"] for r in p]), ("ctr image pull", [r["ctrSeconds"] for r in p])):
    print("%s of %.1f MB: %.2f s, %.1f MB/s" % (name, mb, med(xs), mb / med(xs)))
EOF
