#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # the copy and probe functions are called by sample_latency
# follow-bench.sh: copy here, paste there (`clip watch --follow`), on Wayland and on X11.
#
# For each desktop kind it can start, two desktops A and B (two headless sways run as
# nobody, or two Xvfbs), two data directories sharing one folder backend, and on each
# `sync watch` and `clip watch --follow`:
#   1. Latency: a text copied on A is what B's clipboard offers within 1 s at the
#      median and 2 s at worst over RUNS copies. Each sample runs from just before
#      the copy on A to the first paste on B that returns it (polled every 10 ms).
#   2. Idle CPU: B's follower and its children use under 0.5% of one core over
#      IDLE_SECONDS, from /proc/<pid>/stat.
#
# Usage: Tests/Benchmarks/follow-bench.sh
# Environment:
#   ITSYPAD       itsypad binary (default: <repo>/.build/release/itsypad); never built here
#   RUNS          copies per desktop kind (default 20)
#   IDLE_SECONDS  how long idle CPU is measured (default 30)
#   DESKTOPS      which to run (default: "wayland x11")
#   BENCH_OUT     directory to keep latencies-*.txt, the logs and summary.txt in (default: none)
# Needs sway, wl-clipboard and setpriv for Wayland, Xvfb and xclip for X11; a desktop
# whose tools are missing is skipped. Run as root (sway runs as nobody).
# Exit status: 0 when every target passes, 1 when one fails, 2 on a setup error.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RUNS=${RUNS:-20}
IDLE_SECONDS=${IDLE_SECONDS:-30}

MEDIAN_TARGET_MS=1000
WORST_TARGET_MS=2000
IDLE_TARGET_PERCENT=0.5

BENCH_NAME=follow-bench
# shellcheck source=common.sh
source "$repo_root/Tests/Benchmarks/common.sh"

# shellcheck source=desktops.sh
source "$repo_root/Tests/Benchmarks/desktops.sh"

for desktop in $DESKTOPS; do
    desktop_available "$desktop" || continue
    step "$desktop: two desktops, sync watch and clip watch --follow on each"
    backend=$work/backend-$desktop
    declare -A env_of=() follower_of=()
    for side in a b; do
        start_desktop "$desktop" "$desktop-$side"
        env_of[$side]=$desktop_env
        data=$work/data-$desktop-$side
        "$ITSYPAD" --data-dir "$data" -q sync enable "$backend" >/dev/null
        # shellcheck disable=SC2086 # the words are KEY=VALUE pairs
        env ${env_of[$side]} "$ITSYPAD" --data-dir "$data" sync watch --interval 600 2>"$results/sync-$desktop-$side.log" &
        pids+=($!)
        # shellcheck disable=SC2086
        env ${env_of[$side]} "$ITSYPAD" --data-dir "$data" clip watch --follow 2>"$results/follow-$desktop-$side.log" &
        pids+=($!)
        follower_of[$side]=$!
    done
    sleep 2
    copy() { copy_on "$desktop" "$1" "${env_of[a]}"; }
    # shellcheck disable=SC2086
    paste() { if [[ $desktop == wayland ]]; then env ${env_of[b]} wl-paste --no-newline 2>/dev/null; else env ${env_of[b]} xclip -o -selection clipboard 2>/dev/null; fi; }
    pasted() { [[ $(paste) == "$1" ]]; }

    latencies=$results/latencies-$desktop.txt
    : >"$latencies"
    for run in $(seq "$RUNS"); do
        sample_latency "$latencies" 10000 "follow-bench $desktop $run $RANDOM" copy pasted || echo 10000 >>"$latencies"
        sleep 0.3
    done
    read -r median worst < <(median_and_worst "$latencies")
    target "$desktop: copy on A to paste on B over $RUNS copies: median $median ms (target <= $MEDIAN_TARGET_MS)" \
        at_most "$median" "$MEDIAN_TARGET_MS"
    target "$desktop: worst $worst ms (target <= $WORST_TARGET_MS)" at_most "$worst" "$WORST_TARGET_MS"

    step "$desktop: idle CPU of B's follower over $IDLE_SECONDS s"
    idle_cpu "${follower_of[b]}"
    target "$desktop: idle CPU of the follower ${idle_percent}% (target < $IDLE_TARGET_PERCENT%)" below "$idle_percent" "$IDLE_TARGET_PERCENT"
    cleanup
done
exit "$status"
