#!/bin/sh
# kubectl-drover-dist.sh BASEDIR TARGET VERSION: the build's step (package phase) that makes the plugin's
# release archive TARGET/kubectl-drover-VERSION.tar.gz (the launcher, drover-java and the agent jar, flat:
# what krew/drover.yaml's files name; not the AOT cache, which only the JDK build that recorded it can use)
# and TARGET/krew/drover.yaml, the krew manifest with the version and the archive's sha256 filled in.
set -e
base=$1
target=$2
version=$3
stage="$target/kubectl-drover-dist"
archive="$target/kubectl-drover-$version.tar.gz"
rm -rf "$stage" "$archive"
mkdir -p "$stage" "$target/krew"
cp "$base/bin/kubectl-drover" "$base/bin/drover-java" "$target/drover-agent.jar" "$stage/"
chmod 755 "$stage/kubectl-drover" "$stage/drover-java"
# sorted names, fixed owner and time: the same inputs make the same archive, so its sha256 is stable
(cd "$stage" && tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - \
    kubectl-drover drover-java drover-agent.jar) | gzip -n -9 >"$archive"
sum=$(sha256sum "$archive" | cut -d' ' -f1)
echo "$sum  $(basename "$archive")" >"$archive.sha256"
sed -e "s/@VERSION@/$version/g" -e "s/@SHA256@/$sum/g" "$base/../krew/drover.yaml" >"$target/krew/drover.yaml"
rm -rf "$stage"
echo "[kubectl-drover-dist] $archive (sha256 $sum), $target/krew/drover.yaml"
