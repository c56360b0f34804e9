#!/bin/sh
# chart-package.sh BASEDIR TARGET VERSION: the build's step (package phase) that makes the Helm chart archive
# TARGET/drover-CHARTVERSION.tgz from BASEDIR/../charts/drover, as `helm package` would (a gzipped tar of the
# chart's files under drover/, less what .helmignore names) without needing helm. The chart's version must be
# the build's VERSION less -SNAPSHOT, so the archive the build makes is the release it names.
set -e
base=$1
target=$2
version=${3%-SNAPSHOT}
chart="$base/../charts/drover"
chart_version=$(sed -n 's/^version:[[:space:]]*"\{0,1\}\([^"[:space:]]*\)"\{0,1\}[[:space:]]*$/\1/p' "$chart/Chart.yaml")
if [ "$chart_version" != "$version" ]; then
    echo "[chart-package] charts/drover/Chart.yaml has version '$chart_version' and the build is $version: make them the same" >&2
    exit 1
fi
archive="$target/drover-$chart_version.tgz"
stage="$target/chart-package"
rm -rf "$stage" "$archive"
mkdir -p "$stage"
cp -R "$chart" "$stage/drover"
# .helmignore's patterns (comments and blank lines left out; a trailing / is a directory, as tar matches it)
sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' -e 's|/$||' "$chart/.helmignore" >"$stage/excludes"
# sorted names, fixed owner, mode and time: the same chart makes the same archive
(cd "$stage" && tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 --mode=u+rw,go+r,go-w \
    --exclude-from=excludes -cf chart.tar drover)
gzip -n -9 <"$stage/chart.tar" >"$archive"
rm -rf "$stage"
echo "[chart-package] $archive"
