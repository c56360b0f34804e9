#!/bin/sh
# What `drover-agent devices` reports over the real NVML binding, next to what nvidia-smi reports, for a
# person to compare on a machine with an NVIDIA GPU (the tests only ever ran the binding against fake_nvml.c).
#
#   JAVA=/opt/jdk-25/bin/java JAR=operator/target/drover-agent.jar sh operator/src/test/gpu/devices-check.sh [PLUGIN]
#
# PLUGIN: nvidia (default: libnvidia-ml.so.1 as the dynamic linker finds it) or nvidia:/path/to/libnvidia-ml.so.1.
# Needs no network. Exit status: the first failing devices command's (1: a plugin failed, 2: usage), else 0.
set -u
: "${JAVA:?set JAVA to a Java 25 java binary}"
: "${JAR:?set JAR to drover-agent.jar}"
PLUGIN=${1:-nvidia}
status=0

devices() { # devices ARG...: one run of the command, its exit code kept
	echo
	echo "=== java -jar $JAR devices --device-plugin $PLUGIN $*"
	start=$(date +%s)
	"$JAVA" -jar "$JAR" devices --device-plugin "$PLUGIN" "$@"
	rc=$?
	echo "=== exit code $rc after $(($(date +%s) - start))s"
	if [ "$rc" -ne 0 ] && [ "$status" -eq 0 ]; then status=$rc; fi
}

echo "=== $("$JAVA" -version 2>&1 | head -n 1); NVML: $(ldconfig -p 2>/dev/null | grep -m 1 'libnvidia-ml.so.1 ' || echo 'not in the ldconfig cache')"
devices -o json                # the fingerprint: groups, attributes with units, instances
devices --stats -o json        # one statistics sample of each instance
devices --stats                # the same as a table
devices --watch 5s             # the NVML event thread runs, then closes (exit within a few seconds of 5s)

echo
echo "=== nvidia-smi, to compare"
if ! command -v nvidia-smi >/dev/null 2>&1; then
	echo "nvidia-smi is not on PATH: nothing to compare with"
	exit "$status"
fi
nvidia-smi -L
nvidia-smi --format=csv --query-gpu=index,uuid,name,pci.bus_id,driver_version,compute_cap,memory.total,memory.used,\
utilization.gpu,utilization.memory,temperature.gpu,power.draw,power.limit,clocks.sm,clocks.mem,clocks.max.sm,\
clocks.max.mem,ecc.mode.current,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,\
mig.mode.current
echo
echo "=== nvidia-smi -q excerpts (name, UUID, bus id, memory, temperature, power, clocks, ECC and MIG modes)"
nvidia-smi -q | awk '
	/^(Driver|CUDA) Version|^GPU [0-9A-Fa-f]/ { print; next }
	/^    [^ ]/ { sec = $0; sub(/^ +/, "", sec); sub(/ *:.*$/, "", sec); sub(/ +$/, "", sec); sub8 = "" }
	/^        [^ ]/ { sub8 = $0; sub(/^ +/, "", sub8); sub(/ *:.*$/, "", sub8) }
	/^    (Product Name|GPU UUID) / || /^        Bus Id / { print; next }
	sec ~ /^(MIG Mode|FB Memory Usage|Utilization|ECC Mode|Temperature|(GPU )?Power Readings|Clocks|Max Clocks)$/ { print; next }
	sec == "ECC Errors" && (sub8 == "" || sub8 == "Volatile") { print }'
exit "$status"
