#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# clip-bench.sh: itsypad's clipboard-history performance targets, measured in
# one run against Debian's clipman on the same machine.
#
#   1. `clip add` median wall time at 1,000 entries no slower than clipman.
#   2. `clip add` median at 100,000 entries at least 5x faster than clipman.
#   3. `clip add` at 100,000 entries within 1.3x of itsypad's own at 1,000.
#   4. `clip ls --limit 20` at 100,000 entries within 1.3x of its own at 1,000.
#   5. Peak memory (max RSS) under 64 MiB for every listed command at 100,000.
#
# Usage: Tests/Benchmarks/clip-bench.sh
# Environment:
#   ITSYPAD    itsypad binary (default: <repo>/.build/release/itsypad); never built here
#   CLIPMAN    clipman binary (default: clipman from PATH)
#   RUNS       hyperfine runs per command (default 40)
#   WARMUP     hyperfine warmup runs per command (default 3)
#   BENCH_OUT  directory to keep the hyperfine JSON, memory TSV and summary in
#              (default: none; everything lives in a temporary directory that
#              is removed on exit)
# Exit status: 0 when every target passes, 1 when one fails, 2 on a setup error.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CLIPMAN=${CLIPMAN:-clipman}
RUNS=${RUNS:-40}
WARMUP=${WARMUP:-3}

SMALL=1000
LARGE=100000
MAX_ITEMS=200000        # history cap for both tools, so nothing is evicted
MEM_LIMIT_KIB=65536     # 64 MiB
GNU_TIME=/usr/bin/time

BENCH_NAME=clip-bench
# shellcheck source=common.sh
source "$repo_root/Tests/Benchmarks/common.sh"

# --- Prerequisites -----------------------------------------------------------

require_itsypad

command -v hyperfine >/dev/null || die "hyperfine not found (apt-get install -y hyperfine)"
CLIPMAN=$(command -v "$CLIPMAN") || die "clipman not found (apt-get install -y clipman)"
command -v python3 >/dev/null || die "python3 not found"
[[ -x $GNU_TIME ]] || die "$GNU_TIME not found (apt-get install -y time)"
"$GNU_TIME" -f %M -o /dev/null true 2>/dev/null || die "$GNU_TIME is not GNU time (needs -f %M -o FILE)"

make_work

# --- Seeding -----------------------------------------------------------------

# seed N: itsypad data dir $work/itsypad-N and clipman history $work/clipman-N.json
seed() {
    local n=$1 dir=$work/itsypad-$1
    python3 "$repo_root/Tests/Benchmarks/generate.py" clips "$n" "$work"
    "$ITSYPAD" --data-dir "$dir" --quiet settings set clipboard.maxEntries "$MAX_ITEMS"
    "$ITSYPAD" --data-dir "$dir" --quiet import "$work/itsypad-$n.json"
    local got
    got=$("$ITSYPAD" --data-dir "$dir" clip ls | wc -l)
    [[ $got -eq $n ]] || die "itsypad history has $got entries after seeding, expected $n"
    got=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$work/clipman-$n.json")
    [[ $got -eq $n ]] || die "clipman history has $got entries after seeding, expected $n"
}

step "Seeding histories of $SMALL and $LARGE entries"
seed "$SMALL"
seed "$LARGE"
# Pristine copy of the large itsypad history for the memory measurements.
cp -a "$work/itsypad-$LARGE" "$work/itsypad-$LARGE-pristine"

# --- Timing ------------------------------------------------------------------

# Every run adds a distinct text: the prepare step writes a fresh one (both
# tools skip a repeat of the newest entry). Both tools read it on stdin through
# the same shell (hyperfine subtracts the shell's own start-up time).
text_file=$work/text
prepare="printf 'bench entry %s %s' \"\$EPOCHREALTIME\" \"\$RANDOM\" > $(printf %q "$text_file")"
hyperfine_common=(--style basic --warmup "$WARMUP" --runs "$RUNS")

add_bench() {
    local n=$1 it_cmd cm_cmd
    printf -v it_cmd '%q --data-dir %q clip add < %q' "$ITSYPAD" "$work/itsypad-$n" "$text_file"
    printf -v cm_cmd '%q --histpath %q store --max-items %q -P < %q' "$CLIPMAN" "$work/clipman-$n.json" "$MAX_ITEMS" "$text_file"
    step "clip add at $n entries: itsypad vs clipman"
    hyperfine "${hyperfine_common[@]}" --shell=bash --prepare "$prepare" \
        --export-json "$results/add-$n.json" \
        -n "itsypad clip add @$n" "$it_cmd" \
        -n "clipman store @$n" "$cm_cmd"
}

ls_bench() {
    local n=$1
    step "clip ls --limit 20 at $n entries"
    hyperfine "${hyperfine_common[@]}" -N \
        --export-json "$results/ls-$n.json" \
        -n "itsypad clip ls --limit 20 @$n" \
        "$(printf '%q --data-dir %q clip ls --limit 20' "$ITSYPAD" "$work/itsypad-$n")"
}

add_bench "$SMALL"
add_bench "$LARGE"
ls_bench "$SMALL"
ls_bench "$LARGE"

# --- Peak memory -------------------------------------------------------------

step "Peak memory (max RSS) at $LARGE entries"
mem_tsv=$results/memory.tsv
printf 'command\tkib\tstatus\n' >"$mem_tsv"
mem_dir=$work/itsypad-mem
cp -a "$work/itsypad-$LARGE-pristine" "$mem_dir"
cp -a "$work/itsypad-$LARGE-pristine" "$work/itsypad-prune"
mapfile -t ids <"$work/ids-$LARGE.txt"
show_id=${ids[LARGE / 2]:0:8}
rm_id=${ids[LARGE / 3]:0:8}
printf 'bench memory entry %s' "$EPOCHREALTIME" >"$work/mem-text"

# measure LABEL STDIN CMD...: runs CMD once under GNU time, output discarded.
measure() {
    local label=$1 input=$2 status=0 kib
    shift 2
    "$GNU_TIME" -f %M -o "$work/rss" "$@" <"$input" >/dev/null 2>"$work/mem-stderr" || status=$?
    kib=$(tail -n 1 "$work/rss")
    printf '%s\t%s\t%s\n' "$label" "$kib" "$status" >>"$mem_tsv"
    printf '  %-32s %8s KiB  exit %s\n' "$label" "$kib" "$status" >&2
    if [[ $status -ne 0 ]]; then sed 's/^/    /' "$work/mem-stderr" >&2; fi
}

it=("$ITSYPAD" --data-dir "$mem_dir")
measure "clip add" "$work/mem-text" "${it[@]}" clip add
measure "clip ls --limit 20" /dev/null "${it[@]}" clip ls --limit 20
measure "clip ls" /dev/null "${it[@]}" clip ls
measure "clip ls --search x" /dev/null "${it[@]}" clip ls --search x
measure "clip ls --json" /dev/null "${it[@]}" clip ls --json
measure "clip show" /dev/null "${it[@]}" clip show "$show_id"
measure "clip rm" /dev/null "${it[@]}" clip rm "$rm_id"
measure "clip prune --keep 99000" /dev/null "$ITSYPAD" --data-dir "$work/itsypad-prune" clip prune --keep 99000
measure "export" /dev/null "${it[@]}" export
measure "tab ls" /dev/null "${it[@]}" tab ls
"$ITSYPAD" --data-dir "$work/itsypad-import" --quiet settings set clipboard.maxEntries "$MAX_ITEMS"
measure "import (100,000-entry export)" /dev/null "$ITSYPAD" --data-dir "$work/itsypad-import" import "$work/itsypad-$LARGE.json"
# For reference only (no target): clipman storing one entry at the same size.
printf 'bench memory entry clipman %s' "$EPOCHREALTIME" >"$work/mem-text"
measure "(ref) clipman store" "$work/mem-text" "$CLIPMAN" --histpath "$work/clipman-$LARGE.json" store --max-items "$MAX_ITEMS" -P

pruned=$("$ITSYPAD" --data-dir "$work/itsypad-prune" clip ls | wc -l)
[[ $pruned -eq 99000 ]] || printf 'clip-bench: warning: prune left %s entries, expected 99000\n' "$pruned" >&2

# --- Summary -----------------------------------------------------------------

step "Summary"
machine="$(nproc) cores, $(uname -srm); $("$ITSYPAD" --version 2>/dev/null | head -n 1 || echo '?'); $(hyperfine --version)"
status=0
PYTHONPATH="$repo_root/Tests/Benchmarks" python3 - "$results" "$SMALL" "$LARGE" "$MEM_LIMIT_KIB" "$RUNS" "$WARMUP" "$machine" <<'PY' | tee "$results/summary.txt" || status=$?
import sys
from targets import medians, print_medians, print_targets
res, small, large, limit_kib, runs, warmup, machine = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7]

med = medians(res, (f"add-{small}", f"add-{large}", f"ls-{small}", f"ls-{large}"))
print(f"clip-bench: {machine}; {runs} runs + {warmup} warmup per command")
print()
print_medians(med)

it_add_s, it_add_l = med[f"itsypad clip add @{small}"][0], med[f"itsypad clip add @{large}"][0]
cm_add_s, cm_add_l = med[f"clipman store @{small}"][0], med[f"clipman store @{large}"][0]
ls_s, ls_l = med[f"itsypad clip ls --limit 20 @{small}"][0], med[f"itsypad clip ls --limit 20 @{large}"][0]

targets = [
    (f"add @{small}: clipman / itsypad", cm_add_s / it_add_s, ">=", 1.0),
    (f"add @{large}: clipman / itsypad", cm_add_l / it_add_l, ">=", 5.0),
    (f"add flat: itsypad @{large} / @{small}", it_add_l / it_add_s, "<=", 1.3),
    (f"ls -n 20 flat: @{large} / @{small}", ls_l / ls_s, "<=", 1.3),
]
failed = print_targets(targets)

print()
print(f"{'peak memory @' + str(large) + ' (max RSS)':34} {'MiB':>8} {'needed':>9}  result")
for line in open(f"{res}/memory.tsv").read().splitlines()[1:]:
    label, kib, code = line.split("\t")
    kib, code = int(kib), int(code)
    ref = label.startswith("(ref)")
    ok = code == 0 and kib < limit_kib
    if not ref: failed += not ok
    result = "info" if ref else ("PASS" if ok else ("FAIL" if code == 0 else f"FAIL (exit {code})"))
    print(f"{label:34} {kib / 1024:>8.1f} {'-' if ref else '< ' + str(limit_kib // 1024):>9}  {result}")
print()
print("all targets met" if failed == 0 else f"{failed} target(s) not met")
sys.exit(1 if failed else 0)
PY
if [[ -n $BENCH_OUT ]]; then printf '\nresults kept in %s\n' "$BENCH_OUT" >&2; fi
exit "$status"
