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
#   RUNS         hyperfine runs per command (default 20; the first syncs run RUNS/5, at least 3)
#   WARMUP       hyperfine warmup runs per command (default 3)
#   BENCH_OUT    directory to keep the hyperfine JSON and the summary in
#                (default: none; everything lives in a temporary directory that
#                is removed on exit)
# Exit status: 0 when every target passes, 1 when one fails, 2 on a setup error.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ITSYPAD=${ITSYPAD:-$repo_root/.build/release/itsypad}
RUNS=${RUNS:-20}
WARMUP=${WARMUP:-3}
BENCH_OUT=${BENCH_OUT:-}
FIRST_RUNS=$((RUNS / 5 > 3 ? RUNS / 5 : 3))

SMALL=100
LARGE=10000

BENCH_NAME=rclone-bench
# shellcheck source=common.sh
source "$repo_root/Tests/Benchmarks/common.sh"

# --- Prerequisites -----------------------------------------------------------

require_itsypad

command -v hyperfine >/dev/null || die "hyperfine not found (apt-get install -y hyperfine)"
command -v rclone >/dev/null || die "rclone not found (apt-get install -y rclone)"
command -v python3 >/dev/null || die "python3 not found"

make_work
started=$SECONDS

# --- The server --------------------------------------------------------------

port=$((20000 + RANDOM % 30000))
mkdir -p "$work/served"
rclone serve webdav "$work/served" --addr "127.0.0.1:$port" --user bench --pass bench >"$work/server.log" 2>&1 &
server=$!
# shellcheck disable=SC2064 # expand now: $work and $server are fixed from here on
trap "kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf '$work'" EXIT
export RCLONE_CONFIG=$work/rclone.conf
printf '[bench]\ntype = webdav\nurl = http://127.0.0.1:%s/\nuser = bench\npass = %s\n' "$port" "$(rclone obscure bench)" >"$RCLONE_CONFIG"
for _ in $(seq 100); do rclone lsf bench: >/dev/null 2>&1 && break; sleep 0.1; done
rclone lsf bench: >/dev/null 2>&1 || die "rclone serve webdav did not start: $(cat "$work/server.log")"

# --- Seeding -----------------------------------------------------------------

tab_count() { "$ITSYPAD" --data-dir "$1" tab ls | wc -l; }

# seed N: device A ($work/nN/a) holding N synced tabs and device B ($work/nN/b)
# synced with it through bench:nN.
seed() {
    local n=$1 base=$work/n$1
    local a=$base/a b=$base/b remote=rclone:bench:n$1 got
    mkdir -p "$base"
    python3 "$repo_root/Tests/Benchmarks/generate.py" tabs "$n" "$base"
    "$ITSYPAD" --data-dir "$a" --quiet import "$base/tabs-$n.json"
    "$ITSYPAD" --data-dir "$a" --quiet sync enable "$remote"
    "$ITSYPAD" --data-dir "$a" sync key show >"$base/recovery-key"
    "$ITSYPAD" --data-dir "$b" --quiet sync enable "$remote" --key - <"$base/recovery-key"
    # Compact once, so that no timed run meets an automatic compaction.
    "$ITSYPAD" --data-dir "$a" --quiet sync compact
    "$ITSYPAD" --data-dir "$a" --quiet sync
    "$ITSYPAD" --data-dir "$b" --quiet sync
    got=$(tab_count "$b")
    [[ $got -eq $n ]] || die "device B has $got tabs, expected $n"
}

step "Seeding two devices on bench: with $SMALL and $LARGE synced tabs"
seed "$SMALL"
seed "$LARGE"

# The first sync's device: $LARGE tabs imported, sync never enabled (copied afresh before each run).
step "Seeding a device of $LARGE tabs that never synced"
"$ITSYPAD" --data-dir "$work/first-template" --quiet import "$work/n$LARGE/tabs-$LARGE.json"

# --- Measurements ------------------------------------------------------------

cat >"$work/edit-tabs.sh" <<'SH'
#!/usr/bin/env bash
# edit-tabs.sh ITSYPAD A B TAB_A TAB_B: B syncs one change, A makes one.
set -euo pipefail
"$1" --data-dir "$3" --quiet tab edit "$5" "edited on B $EPOCHREALTIME $RANDOM"
"$1" --data-dir "$3" --quiet sync
"$1" --data-dir "$2" --quiet tab edit "$4" "edited on A $EPOCHREALTIME $RANDOM"
SH

q() { printf '%q' "$1"; }
common=(--style basic -N --warmup "$WARMUP" --runs "$RUNS")
runs_total=$((WARMUP + RUNS))

itsypad_bench() {
    local n=$1 base=$work/n$1 tab_a tab_b
    tab_a=$(sed -n "$((n / 2))p" "$base/tab-ids-$n.txt")
    tab_b=$(sed -n "$((n / 3))p" "$base/tab-ids-$n.txt")
    step "itsypad sync through rclone: one change each way, $n synced tabs"
    hyperfine "${common[@]}" \
        --prepare "bash $(q "$work/edit-tabs.sh") $(q "$ITSYPAD") $(q "$base/a") $(q "$base/b") $tab_a $tab_b" \
        --export-json "$results/itsypad-$n.json" \
        -n "itsypad sync @$n" "$(q "$ITSYPAD") --data-dir $(q "$base/a") sync"
    # Every timed run pulled B's change and pushed A's.
    local got
    got=$("$ITSYPAD" --data-dir "$base/a" sync log --limit "$runs_total" | grep -c $'\tpulled 1\tpushed 1\t.*\tok$' || true)
    [[ $got -eq $runs_total ]] || die "@$n: only $got of the last $runs_total syncs on A pulled and pushed exactly one change"
}

itsypad_bench "$SMALL"
itsypad_bench "$LARGE"

step "rclone copy of one changed file to the same server"
echo "one file" >"$work/one-file.json"
hyperfine "${common[@]}" \
    --prepare "echo $(q "changed") \$RANDOM >>$(q "$work/one-file.json")" \
    --export-json "$results/rclone-one.json" \
    -n "rclone copy of one file" "rclone copy $(q "$work/one-file.json") bench:one"

step "first sync of $LARGE tabs: itsypad sync enable into an empty remote path"
hyperfine --style basic -N --warmup 0 --runs "$FIRST_RUNS" \
    --prepare "rm -rf $(q "$work/first") $(q "$work/served/first") && cp -a $(q "$work/first-template") $(q "$work/first")" \
    --export-json "$results/itsypad-first.json" \
    -n "itsypad first sync @$LARGE" "$(q "$ITSYPAD") --data-dir $(q "$work/first") --quiet sync enable rclone:bench:first"
[[ $(tab_count "$work/first") -eq $LARGE ]] || die "the first sync's device lost tabs"
# The same files, as the first sync left them in its mirror.
cp -a "$work/first/sync/rclone/backend" "$work/first-files"
rm -f "$work/first-files/devices/"*/lock

step "rclone copy of the same $(find "$work/first-files" -type f | wc -l) files into an empty remote path"
hyperfine --style basic -N --warmup 0 --runs "$FIRST_RUNS" \
    --prepare "rm -rf $(q "$work/served/copied")" \
    --export-json "$results/rclone-first.json" \
    -n "rclone copy @$LARGE" "rclone copy $(q "$work/first-files") bench:copied"

# --- Summary -----------------------------------------------------------------

step "Summary"
machine="$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -srm); $("$ITSYPAD" --version 2>/dev/null | head -n 1 || echo '?'); $(hyperfine --version); $(rclone version | head -n 1)"
status=0
python3 - "$results" "$SMALL" "$LARGE" "$RUNS" "$WARMUP" "$machine" <<'PY' | tee "$results/summary.txt" || status=$?
import json, sys
res, small, large = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs, warmup, machine = sys.argv[4:7]

med = {}
for name in (f"itsypad-{small}", f"itsypad-{large}", "rclone-one", "itsypad-first", "rclone-first"):
    for r in json.load(open(f"{res}/{name}.json"))["results"]:
        med[r["command"]] = (r["median"], r["min"], r["max"], r["stddev"] or 0.0)

def ms(s): return f"{s * 1000:.1f} ms"
print(f"rclone-bench: {machine}")
print(f"{runs} runs + {warmup} warmup per command (first syncs: fewer, no warmup)")
print()
print(f"{'median wall time':36} {'median':>11} {'min':>11} {'max':>11} {'stddev':>10}")
for cmd, (m, lo, hi, sd) in med.items():
    print(f"{cmd:36} {ms(m):>11} {ms(lo):>11} {ms(hi):>11} {ms(sd):>10}")

s, l = med[f"itsypad sync @{small}"][0], med[f"itsypad sync @{large}"][0]
one, first, copied = med["rclone copy of one file"][0], med[f"itsypad first sync @{large}"][0], med[f"rclone copy @{large}"][0]
targets = [
    (f"one change @{large} / @{small}", l / s, 1.5),
    (f"itsypad sync @{large} / rclone copy of one file", l / one, 3.0),
    (f"first sync @{large} / rclone copy of its files", first / copied, 3.0),
]
failed = 0
print()
print(f"{'target':50} {'ratio':>8} {'needed':>9}  result")
for name, value, bound in targets:
    ok = value <= bound
    failed += not ok
    print(f"{name:50} {value:>7.2f}x {'<= ' + format(bound, '.1f') + 'x':>9}  {'PASS' if ok else 'FAIL'}")
print()
print("all targets met" if failed == 0 else f"{failed} target(s) not met")
sys.exit(1 if failed else 0)
PY
printf '\nrclone-bench: finished in %ss\n' "$((SECONDS - started))" >&2
if [[ -n $BENCH_OUT ]]; then printf 'results kept in %s\n' "$BENCH_OUT" >&2; fi
exit "$status"
