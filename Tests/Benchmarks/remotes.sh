# shellcheck shell=bash
# shellcheck disable=SC2154 # ITSYPAD, RUNS, WARMUP, work and results come from the sourcing script and common.sh
# shellcheck disable=SC2034 # started, SMALL, LARGE, common and runs_total are for the sourcing script
# Shared by the remote benchmarks (git-bench.sh, rclone-bench.sh): two devices seeded on a remote,
# and one change synced each way timed with hyperfine. Source after common.sh: it checks the tools
# both need and makes the scratch directory.

require_itsypad
command -v hyperfine >/dev/null || die "hyperfine not found (apt-get install -y hyperfine)"
command -v python3 >/dev/null || die "python3 not found"
make_work
started=$SECONDS
# The remote's two sizes: the cost of one change must follow the changes, not the tabs.
SMALL=100
LARGE=10000

tab_count() { "$ITSYPAD" --data-dir "$1" tab ls | wc -l; }

# seed_devices N REMOTE [ENABLE]: device A ($work/nN/a) holding N synced tabs and device B
# ($work/nN/b) synced with it through REMOTE, which the caller has made. ENABLE, when given, is a
# command run as `ENABLE A REMOTE` for A's first sync (A's tabs imported, never synced), which it
# must leave enabled on REMOTE: a script that times the first sync times this one.
seed_devices() {
    local n=$1 remote=$2 enable=${3:-} base=$work/n$1 got
    local a=$base/a b=$base/b
    mkdir -p "$base"
    python3 "$repo_root/Tests/Benchmarks/generate.py" tabs "$n" "$base"
    "$ITSYPAD" --data-dir "$a" --quiet import "$base/tabs-$n.json"
    if [[ -n $enable ]]; then
        "$enable" "$a" "$remote"
    else
        "$ITSYPAD" --data-dir "$a" --quiet sync enable "$remote"
    fi
    "$ITSYPAD" --data-dir "$a" sync key show >"$base/recovery-key"
    "$ITSYPAD" --data-dir "$b" --quiet sync enable "$remote" --key - <"$base/recovery-key"
    # Compact once, so that no timed run meets an automatic compaction.
    "$ITSYPAD" --data-dir "$a" --quiet sync compact
    "$ITSYPAD" --data-dir "$a" --quiet sync
    "$ITSYPAD" --data-dir "$b" --quiet sync
    got=$(tab_count "$b")
    [[ $got -eq $n ]] || die "device B has $got tabs, expected $n"
}

# Before each timed itsypad run: B pushes an edit of one tab, A edits another.
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

# one_change_bench N THROUGH: `itsypad sync` on A timed (results/itsypad-N.json), each run after
# B pushed one change and A made one; every run must have pulled one and pushed one.
one_change_bench() {
    local n=$1 base=$work/n$1 tab_a tab_b got
    tab_a=$(sed -n "$((n / 2))p" "$base/tab-ids-$n.txt")
    tab_b=$(sed -n "$((n / 3))p" "$base/tab-ids-$n.txt")
    step "itsypad sync through $2: one change each way, $n synced tabs"
    hyperfine "${common[@]}" \
        --prepare "bash $(q "$work/edit-tabs.sh") $(q "$ITSYPAD") $(q "$base/a") $(q "$base/b") $tab_a $tab_b" \
        --export-json "$results/itsypad-$n.json" \
        -n "itsypad sync @$n" "$(q "$ITSYPAD") --data-dir $(q "$base/a") sync"
    got=$("$ITSYPAD" --data-dir "$base/a" sync log --limit "$runs_total" | grep -c $'\tpulled 1\tpushed 1\t.*\tok$' || true)
    [[ $got -eq $runs_total ]] || die "@$n: only $got of the last $runs_total syncs on A pulled and pushed exactly one change"
}

# summarize TOOL_VERSION: the script's summary, Python on standard input run with `targets.py` at hand
# and given the results' folder, the two sizes and a line on the machine and the runs; printed, kept
# in summary.txt, and its exit status left in status. The script then ends with finish.
summarize() {
    step "Summary"
    local machine
    machine="$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -srm); $("$ITSYPAD" --version 2>/dev/null | head -n 1 || echo '?'); $(hyperfine --version); $1"
    status=0
    PYTHONPATH="$repo_root/Tests/Benchmarks" python3 - "$results" "$SMALL" "$LARGE" \
        "$BENCH_NAME: $machine" "$RUNS runs + $WARMUP warmup per command" | tee "$results/summary.txt" || status=$?
    printf '\n%s: finished in %ss\n' "$BENCH_NAME" "$((SECONDS - started))" >&2
    if [[ -n $BENCH_OUT ]]; then printf 'results kept in %s\n' "$BENCH_OUT" >&2; fi
}
