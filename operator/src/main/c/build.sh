#!/bin/sh
# Builds drover-monitor into the agent's classes (see drover-monitor.c). Called by Maven in generate-resources
# with: SOURCE OUTPUT_DIR. Without a C compiler the build goes on without it: the agent then supervises tasks
# with a shell and says at start that the exit codes of tasks ended by a signal are ambiguous.
set -u
src=$1; out=$2
cc=${CC:-gcc}
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "[drover-monitor] $cc not found: not building the task monitor; the agent will use its shell supervisor"
    exit 0
fi
mkdir -p "$out" || exit 1
# Static when the C library allows it: with a launcher a task (and its monitor) runs in the host's mount
# namespace, whose C library is not the image's.
if "$cc" -Os -static -s -Wall -Werror -o "$out/drover-monitor.new" "$src" 2>/dev/null; then
    echo "[drover-monitor] built (static) into $out"
elif "$cc" -Os -s -Wall -Werror -o "$out/drover-monitor.new" "$src"; then
    echo "[drover-monitor] built (dynamic: no static C library) into $out"
else
    rm -f "$out/drover-monitor.new"
    echo "[drover-monitor] $cc failed: not building the task monitor; the agent will use its shell supervisor"
    exit 0
fi
mv -f "$out/drover-monitor.new" "$out/drover-monitor"
