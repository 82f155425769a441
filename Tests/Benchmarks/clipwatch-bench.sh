#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # the copy and probe functions are called by sample_latency
# clipwatch-bench.sh: `itsypad clip watch` targets, on Wayland and on X11.
#
# For each desktop it can start (a headless sway run as nobody, an Xvfb):
#   1. Latency: a text copied with wl-copy (or xclip) is the newest entry of
#      `clip ls` within 0.5 s (median of RUNS). Each sample runs from just
#      before the copy to the first `clip ls -n 1` that shows it (polled every
#      10 ms), so it includes both commands' own run time.
#   2. Idle CPU: the watcher and its children (wl-paste --watch) use under
#      0.5% of one core over IDLE_SECONDS, from /proc/<pid>/stat.
#
# Usage: Tests/Benchmarks/clipwatch-bench.sh
# Environment:
#   ITSYPAD       itsypad binary (default: <repo>/.build/release/itsypad); never built here
#   RUNS          latency samples per desktop (default 20)
#   IDLE_SECONDS  how long idle CPU is measured (default 60)
#   DESKTOPS      which to run (default: "wayland x11")
#   BENCH_OUT     directory to keep latencies-*.txt, the logs and summary.txt in (default: none)
# Needs sway, wl-clipboard and setpriv for Wayland, Xvfb and xclip for X11; a
# desktop whose tools are missing is skipped. Run as root (sway runs as nobody).
# Exit status: 0 when every target passes, 1 when one fails, 2 on a setup error.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RUNS=${RUNS:-20}
IDLE_SECONDS=${IDLE_SECONDS:-60}

LATENCY_TARGET_MS=500
IDLE_TARGET_PERCENT=0.5

BENCH_NAME=clipwatch-bench
# shellcheck source=common.sh
source "$repo_root/Tests/Benchmarks/common.sh"

# shellcheck source=desktops.sh
source "$repo_root/Tests/Benchmarks/desktops.sh"

for desktop in $DESKTOPS; do
    desktop_available "$desktop" || continue
    step "$desktop: starting the desktop and clip watch"
    start_desktop "$desktop" "$desktop"
    # shellcheck disable=SC2086,SC2163 # the words are KEY=VALUE pairs
    export $desktop_env
    copy() { copy_on "$desktop" "$1" ""; }
    recorded() { "$ITSYPAD" --data-dir "$data" clip ls -n 1 | grep -qF "$1"; }
    data=$work/data-$desktop
    # Started directly: $! must be the watcher itself (for /proc).
    "$ITSYPAD" --data-dir "$data" clip watch 2>"$results/watch-$desktop.log" &
    watcher=$!
    pids+=("$watcher")
    sleep 1

    step "$desktop: latency, copy until clip ls -n 1 shows it ($RUNS runs)"
    latencies=$results/latencies-$desktop.txt
    : >"$latencies"
    for ((i = 1; i <= RUNS; i++)); do
        sample_latency "$latencies" 30000 "probe $i $RANDOM" copy recorded \
            || die "run $i: not recorded after 30 s; see $results/watch-$desktop.log"
        sleep 0.2
    done
    read -r median worst < <(median_and_worst "$latencies")

    step "$desktop: idle CPU of the watcher over $IDLE_SECONDS s"
    sleep 2
    idle_cpu "$watcher"
    cleanup

    target "$desktop: latency copy -> recorded: median ${median} ms, worst ${worst} ms of $RUNS (target <= ${LATENCY_TARGET_MS} ms)" \
        at_most "$median" "$LATENCY_TARGET_MS"
    target "$desktop: idle CPU of clip watch and its children over ${IDLE_SECONDS} s: ${idle_percent}% of one core, ${idle_ticks} ticks at ${hertz}/s (target < ${IDLE_TARGET_PERCENT}%)" \
        below "$idle_percent" "$IDLE_TARGET_PERCENT"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$results/summary.txt"
exit "$status"
