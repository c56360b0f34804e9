#!/bin/sh
# kubectl-drover-dist.sh BASEDIR TARGET VERSION: the build's step (package phase) that makes the plugin's
# release archive TARGET/kubectl-drover-VERSION.tar.gz (the launcher, kubectl_complete-drover, drover-java,
# the agent jar and, when the build recorded it, the AOT cache with its two stamps, flat: what
# krew/drover.yaml's files name; the launcher takes the cache only on the JDK build that recorded it)
# and TARGET/krew/drover.yaml, the krew manifest with the version and the archive's sha256 filled in.
set -e
base=$1
target=$2
version=$3
stage="$target/kubectl-drover-dist"
archive="$target/kubectl-drover-$version.tar.gz"
rm -rf "$stage" "$archive"
mkdir -p "$stage" "$target/krew"
cp "$base/bin/kubectl-drover" "$base/bin/kubectl_complete-drover" "$base/bin/drover-java" \
    "$target/drover-agent.jar" "$stage/"
chmod 755 "$stage/kubectl-drover" "$stage/kubectl_complete-drover" "$stage/drover-java"
files="kubectl-drover kubectl_complete-drover drover-java drover-agent.jar"
# The cache goes in only with stamps that match this jar (a build with -Ddrover.aot.skip=true may
# leave an older one in TARGET); krew installs every file its manifest names, so an archive without
# the cache still carries its name, as an empty file the launcher passes over.
stamp="$(wc -c <"$target/drover-agent.jar" | tr -d ' ') $(tail -c 65536 "$target/drover-agent.jar" | cksum | cut -d' ' -f1)"
if [ -f "$target/kubectl-drover.aot" ] && [ -f "$target/kubectl-drover.aot.jdk" ] &&
    [ "$(cat "$target/kubectl-drover.aot.jar" 2>/dev/null)" = "$stamp" ]; then
    cp "$target/kubectl-drover.aot" "$target/kubectl-drover.aot.jar" "$target/kubectl-drover.aot.jdk" "$stage/"
else
    echo "[kubectl-drover-dist] no AOT cache recorded for this jar: the archive goes without it" >&2
    : >"$stage/kubectl-drover.aot"
    : >"$stage/kubectl-drover.aot.jar"
    : >"$stage/kubectl-drover.aot.jdk"
fi
chmod 644 "$stage"/kubectl-drover.aot*
files="$files kubectl-drover.aot kubectl-drover.aot.jar kubectl-drover.aot.jdk"
# sorted names, fixed owner and time: the same inputs make the same archive, so its sha256 is stable
# shellcheck disable=SC2086 # $files is a list of names
(cd "$stage" && tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - $files) |
    gzip -n -9 >"$archive"
sum=$(sha256sum "$archive" | cut -d' ' -f1)
echo "$sum  $(basename "$archive")" >"$archive.sha256"
sed -e "s/@VERSION@/$version/g" -e "s/@SHA256@/$sum/g" "$base/../krew/drover.yaml" >"$target/krew/drover.yaml"
rm -rf "$stage"
echo "[kubectl-drover-dist] $archive (sha256 $sum), $target/krew/drover.yaml"
