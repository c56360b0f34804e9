#!/bin/sh
# kubectl-drover-aot.sh BIN TARGET: the build's step (package phase, after the shaded jar) that records
# kubectl drover's ahead-of-time cache TARGET/kubectl-drover.aot for TARGET/drover-agent.jar, by the
# launcher BIN/kubectl-drover's own training run (dev.drover.cli.AotTraining: the plugin's calls against
# a fake API server in the same JVM; no cluster needed), then what the launcher checks before it uses
# the cache: TARGET/kubectl-drover.aot.jar (the jar's size and the checksum of its last 64 KiB) and
# TARGET/kubectl-drover.aot.jdk (the recording JDK's release lines). Skip it with -Ddrover.aot.skip=true.
set -e
bin=$1
target=$2
keystore="$target/kubectl-drover-training.p12"
rm -f "$target/kubectl-drover.aot" "$target/kubectl-drover.aot.size" "$target/kubectl-drover.aot.jar" \
    "$target/kubectl-drover.aot.jdk" "$target/kubectl-drover.aot.config" "$keystore"
# the fake API server's key, made by the JDK's keytool: the training loads no certificate library
"$("$bin/drover-java" --home)/bin/keytool" -genkeypair -alias training -keyalg EC -groupname secp256r1 \
    -dname CN=localhost -ext san=ip:127.0.0.1 -validity 2 -storetype PKCS12 -keystore "$keystore" \
    -storepass training >"$target/kubectl-drover-aot.log" 2>&1
if ! DROVER_JAR="$target/drover-agent.jar" DROVER_AOT_TRAIN="$target/kubectl-drover.aot" "$bin/kubectl-drover" \
    "$keystore" training >>"$target/kubectl-drover-aot.log" 2>&1 || [ ! -f "$target/kubectl-drover.aot" ]; then
    cat "$target/kubectl-drover-aot.log" >&2
    echo "kubectl-drover-aot: the training run did not record $target/kubectl-drover.aot (log above)" >&2
    exit 1
fi
rm -f "$keystore"
jar="$target/drover-agent.jar"
echo "$(wc -c <"$jar" | tr -d ' ') $(tail -c 65536 "$jar" | cksum | cut -d' ' -f1)" >"$target/kubectl-drover.aot.jar"
"$bin/drover-java" --release "$("$bin/drover-java" --home)" >"$target/kubectl-drover.aot.jdk"
echo "[kubectl-drover-aot] recorded $target/kubectl-drover.aot ($(wc -c <"$target/kubectl-drover.aot" | tr -d ' ') bytes)"
