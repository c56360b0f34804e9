#!/bin/sh
# Records what was built into the agent's classes, for drover_build_info (docs/metrics.md). Called by Maven in
# generate-resources with: VERSION BASEDIR OUTPUT_FILE. The revision is DROVER_REVISION when set (a build from a
# source archive can pass it), else the git commit of BASEDIR's checkout, else "unknown": a build never fails
# for want of git.
set -u
version=$1; base=$2; out=$3
rev=${DROVER_REVISION:-}
if [ -z "$rev" ] && command -v git >/dev/null 2>&1; then
    rev=$(git -C "$base" rev-parse HEAD 2>/dev/null || true)
fi
# Only a commit-like value goes into a label: anything else reads as unknown.
case "$rev" in
    ""|*[!0-9a-zA-Z._-]*) rev=unknown ;;
esac
rev=$(printf '%.64s' "$rev")
mkdir -p "$(dirname "$out")" || exit 1
printf 'version=%s\nrevision=%s\n' "$version" "$rev" > "$out.new" && mv -f "$out.new" "$out"
echo "[build-info] version $version, revision $rev"
