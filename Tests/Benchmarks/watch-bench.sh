#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # the copy and probe functions are called by sample_latency
# watch-bench.sh: `itsypad sync watch` targets, measured in one run.
#
#   1. Latency: with `sync watch` running on two devices sharing a local
#      backend folder, a `clip add` on one is listed by `clip ls` on the other
#      within 1 s (median of RUNS). Each sample runs from just before `clip add`
#      to the first `clip ls` that shows the clip (polled every 10 ms), so it
#      includes both commands' own run time.
#   2. Idle CPU: a watcher with nothing to do (and its children) uses under 1% of one core over
#      IDLE_SECONDS (utime + stime from /proc/<pid>/stat), polling syncs
#      at the default interval included.
#
# Usage: Tests/Benchmarks/watch-bench.sh
# Environment:
#   ITSYPAD       itsypad binary (default: <repo>/.build/release/itsypad); never built here
#   RUNS          latency samples (default 20)
#   IDLE_SECONDS  how long idle CPU is measured (default 60)
#   BENCH_OUT     directory to keep latencies.txt and summary.txt in (default: none)
# Exit status: 0 when every target passes, 1 when one fails, 2 on a setup error.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RUNS=${RUNS:-20}
IDLE_SECONDS=${IDLE_SECONDS:-60}

LATENCY_TARGET_MS=1000
IDLE_TARGET_PERCENT=1

BENCH_NAME=watch-bench
# shellcheck source=common.sh
source "$repo_root/Tests/Benchmarks/common.sh"

require_itsypad
[[ -r /proc/self/stat ]] || die "/proc is not mounted: idle CPU cannot be read"
make_work

laptop() { "$ITSYPAD" --data-dir "$work/laptop" "$@"; }
desktop() { "$ITSYPAD" --data-dir "$work/desktop" "$@"; }

watchers=()
stop_watchers() {
    for pid in "${watchers[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${watchers[@]}"; do wait "$pid" 2>/dev/null || true; done
    watchers=()
}
# shellcheck disable=SC2064 # expand $work now, as make_work's trap does
trap "stop_watchers; rm -rf '$work'" EXIT

step "Two devices sharing $work/backend, each running sync watch"
laptop sync enable "$work/backend" >/dev/null
desktop sync enable "$work/backend" >/dev/null
# Started directly, not through the functions: $! must be the watcher itself (for kill and /proc).
"$ITSYPAD" --data-dir "$work/laptop" sync watch 2>"$results/laptop-watch.log" &
watchers+=($!)
"$ITSYPAD" --data-dir "$work/desktop" sync watch 2>"$results/desktop-watch.log" &
watchers+=($!)
sleep 1

step "Latency: clip add on the laptop until clip ls lists it on the desktop ($RUNS runs)"
add() { laptop clip add "$1" >/dev/null; }
listed() { desktop clip ls -n 5 | grep -qF "$1"; }
latencies=$results/latencies.txt
: >"$latencies"
for ((i = 1; i <= RUNS; i++)); do
    sample_latency "$latencies" 30000 "probe $i $RANDOM" add listed || die "run $i: not visible after 30 s; see $results/desktop-watch.log"
    sleep 0.2
done
read -r median worst < <(median_and_worst "$latencies")

step "Idle CPU of the laptop's watcher over $IDLE_SECONDS s"
sleep 2
idle_cpu "${watchers[0]}"
stop_watchers

: >"$results/summary.txt"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$results/summary.txt"
target "latency clip add -> visible on the other device: median ${median} ms, worst ${worst} ms of $RUNS (target <= ${LATENCY_TARGET_MS} ms)" \
    at_most "$median" "$LATENCY_TARGET_MS"
target "idle CPU of a watcher over ${IDLE_SECONDS} s: ${idle_percent}% of one core, ${idle_ticks} ticks at ${hertz}/s (target < ${IDLE_TARGET_PERCENT}%)" \
    below "$idle_percent" "$IDLE_TARGET_PERCENT"
exit "$status"
