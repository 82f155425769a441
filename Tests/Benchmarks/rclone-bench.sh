#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# rclone-bench.sh: sync through an rclone remote (`rclone serve webdav` on
# 127.0.0.1), measured in one run against rclone itself on the same machine.
#
#   1. One change synced each way with 10,000 synced tabs within 1.5x of the
#      same with 100 tabs (the cost follows the changes, not the backend).
#   2. The same at 10,000 tabs within 3x of `rclone copy` of one file to the
#      same server.
#   3. The first sync of 10,000 tabs (`sync enable` into an empty remote path)
#      within 3x of `rclone copy` of the same files to an empty path.
#
# "One change synced each way": device B edits one tab and syncs, device A
# edits another (both untimed); the timed `itsypad sync` on A lists the remote,
# downloads B's changed files, runs the engine and uploads A's. The backends
# are end-to-end encrypted, the default for a remote.
#
# Usage: Tests/Benchmarks/rclone-bench.sh
# Environment:
#   ITSYPAD      itsypad binary (default: <repo>/.build/release/itsypad); never built here
#   RUNS         hyperfine runs per command (default 20)
#   FIRST_RUNS   runs of each first sync's command (default RUNS/5, at least 3): about 7 min a
#                run at 10,000 tabs for each of itsypad and rclone
#   WARMUP       hyperfine warmup runs per command (default 3)
#   BENCH_OUT    directory to keep the hyperfine JSON and the summary in
#                (default: none; everything lives in a temporary directory that
#                is removed on exit)
# Exit status: 0 when every target passes, 1 when one fails, 2 on a setup error.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RUNS=${RUNS:-20}
WARMUP=${WARMUP:-3}
FIRST_RUNS=${FIRST_RUNS:-$((RUNS / 5 > 3 ? RUNS / 5 : 3))}

BENCH_NAME=rclone-bench
# shellcheck source=common.sh
source "$repo_root/Tests/Benchmarks/common.sh"
# shellcheck source=remotes.sh
source "$repo_root/Tests/Benchmarks/remotes.sh"
command -v rclone >/dev/null || die "rclone not found (apt-get install -y rclone)"

# --- The server --------------------------------------------------------------

port=$((20000 + RANDOM % 30000))
mkdir -p "$work/served"
rclone serve webdav "$work/served" --addr "127.0.0.1:$port" --user bench --pass bench >"$work/server.log" 2>&1 &
server=$!
# shellcheck disable=SC2064 # expand now: $work and $server are fixed from here on
trap "kill $server 2>/dev/null; wait $server 2>/dev/null || true; rm -rf '$work'" EXIT
export RCLONE_CONFIG=$work/rclone.conf
printf '[bench]\ntype = webdav\nurl = http://127.0.0.1:%s/\nuser = bench\npass = %s\n' "$port" "$(rclone obscure bench)" >"$RCLONE_CONFIG"
for _ in $(seq 100); do rclone lsf bench: >/dev/null 2>&1 && break; sleep 0.1; done
rclone lsf bench: >/dev/null 2>&1 || die "rclone serve webdav did not start: $(cat "$work/server.log")"

# --- Seeding -----------------------------------------------------------------

# timed_first_sync A REMOTE: the first sync of $LARGE tabs, which is also the seeding's: A's
# `sync enable` into the empty REMOTE path, timed FIRST_RUNS times, each from A as imported (its
# copy, made before the first run) into the path emptied. Its files are then kept for rclone copy.
# A remote path is emptied through the server (`rclone purge`): the server caches its folders'
# listings, and would go on listing files removed behind its back (the next sync's downloads fail).
# shellcheck disable=SC2317 # called by seed_devices
timed_first_sync() {
    local a=$1 remote=$2
    step "first sync of $LARGE tabs: itsypad sync enable into an empty remote path"
    cp -a "$a" "$work/first-template"
    hyperfine --style basic -N --warmup 0 --runs "$FIRST_RUNS" \
        --prepare "bash -c $(q "{ rclone purge $(q "${remote#rclone:}") 2>/dev/null || true; } && rm -rf $(q "$a") && cp -a $(q "$work/first-template") $(q "$a")")" \
        --export-json "$results/itsypad-first.json" \
        -n "itsypad first sync @$LARGE" "$(q "$ITSYPAD") --data-dir $(q "$a") --quiet sync enable $(q "$remote")"
    [[ $(tab_count "$a") -eq $LARGE ]] || die "the first sync's device lost tabs"
    # The same files, as the first sync left them in its mirror.
    cp -a "$a/sync/rclone/backend" "$work/first-files"
    rm -f "$work/first-files/devices/"*/lock
}

step "Seeding two devices on bench: with $SMALL and $LARGE synced tabs"
seed_devices "$SMALL" "rclone:bench:n$SMALL"
seed_devices "$LARGE" "rclone:bench:n$LARGE" timed_first_sync

# --- Measurements ------------------------------------------------------------

one_change_bench "$SMALL" rclone
one_change_bench "$LARGE" rclone

step "rclone copy of one changed file to the same server"
# hyperfine -N runs a prepare without a shell too: one that needs a shell runs through bash -c.
echo "one file" >"$work/one-file.json"
hyperfine "${common[@]}" \
    --prepare "bash -c $(q "echo changed \$RANDOM >>$(q "$work/one-file.json")")" \
    --export-json "$results/rclone-one.json" \
    -n "rclone copy of one file" "rclone copy $(q "$work/one-file.json") bench:one"

step "rclone copy of the same $(find "$work/first-files" -type f | wc -l) files into an empty remote path"
hyperfine --style basic -N --warmup 0 --runs "$FIRST_RUNS" \
    --prepare "bash -c $(q "rclone purge bench:copied 2>/dev/null || true")" \
    --export-json "$results/rclone-first.json" \
    -n "rclone copy @$LARGE" "rclone copy $(q "$work/first-files") bench:copied"

# --- Summary -----------------------------------------------------------------

summarize "$(rclone version | head -n 1)" <<'PY'
import sys
from targets import medians, print_medians, check_targets
res, small, large = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

print(sys.argv[4])
print(sys.argv[5] + " (first syncs: fewer, no warmup)")
print()
med = medians(res, (f"itsypad-{small}", f"itsypad-{large}", "rclone-one", "itsypad-first", "rclone-first"))
print_medians(med)
s, l = med[f"itsypad sync @{small}"][0], med[f"itsypad sync @{large}"][0]
one, first, copied = med["rclone copy of one file"][0], med[f"itsypad first sync @{large}"][0], med[f"rclone copy @{large}"][0]
sys.exit(check_targets([
    (f"one change @{large} / @{small}", l / s, 1.5),
    (f"itsypad sync @{large} / rclone copy of one file", l / one, 3.0),
    (f"first sync @{large} / rclone copy of its files", first / copied, 3.0),
]))
PY
exit "$status"
