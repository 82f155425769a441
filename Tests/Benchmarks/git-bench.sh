#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# git-bench.sh: sync through a git remote (a local bare repository), measured
# in one run against git itself on the same machine.
#
#   1. One change synced through the remote with 10,000 synced tabs within 1.5x
#      of the same with 100 tabs.
#   2. The same at 10,000 tabs within 3x of `git pull && git push` of one
#      changed file in an equivalent repository of 10,000 files.
#
# "One change synced": device A edits one tab while its peer B has pushed one
# (both untimed); the timed `itsypad sync` on A fetches B's commit, puts A's
# commits on top, pulls B's change, pushes A's, commits and pushes. git's
# equivalent: clone 2 pushes one changed file, clone 1 changes another
# (untimed); timed in clone 1: `git commit -qam … && git pull -q --rebase &&
# git push -q`. The backends are end-to-end encrypted, the default for a git
# remote.
#
# Usage: Tests/Benchmarks/git-bench.sh
# Environment:
#   ITSYPAD      itsypad binary (default: <repo>/.build/release/itsypad); never built here
#   RUNS         hyperfine runs per command (default 20)
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

SMALL=100
LARGE=10000

BENCH_NAME=git-bench
# shellcheck source=common.sh
source "$repo_root/Tests/Benchmarks/common.sh"

# --- Prerequisites -----------------------------------------------------------

require_itsypad

command -v hyperfine >/dev/null || die "hyperfine not found (apt-get install -y hyperfine)"
command -v git >/dev/null || die "git not found (apt-get install -y git)"
command -v python3 >/dev/null || die "python3 not found"

make_work
started=$SECONDS
# git's own configuration stays out of the measurement: no global or system files.
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost

# --- Seeding -----------------------------------------------------------------

tab_count() { "$ITSYPAD" --data-dir "$1" tab ls | wc -l; }

# seed N: device A ($work/nN/a) holding N synced tabs and device B ($work/nN/b)
# synced with it through the bare repository $work/nN/remote.git.
seed() {
    local n=$1 base=$work/n$1
    local a=$base/a b=$base/b remote=git:$base/remote.git got
    mkdir -p "$base"
    git init -q --bare "$base/remote.git"
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

step "Seeding two devices on a git remote with $SMALL and $LARGE synced tabs"
seed "$SMALL"
seed "$LARGE"

# The equivalent repository: one file per tab, in two clones of a bare one.
step "Seeding a git repository of $LARGE files and two clones"
git init -q --bare "$work/plain.git"
git clone -q "$work/plain.git" "$work/clone-1" 2>/dev/null
git -C "$work/clone-1" checkout -q -b main
python3 - "$work/clone-1" "$LARGE" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(os.path.join(root, f"tab-{i:05}.json"), "w") as f:
        f.write('{"name": "tab %d", "content": "%s"}\n' % (i, ("line of text %d " % i) * 20))
PY
git -C "$work/clone-1" add -A
git -C "$work/clone-1" commit -qm seed
git -C "$work/clone-1" push -q -u origin main
git clone -q -b main "$work/plain.git" "$work/clone-2"

# --- Measurements ------------------------------------------------------------

# Before each itsypad run: B pushes an edit of one tab, A edits another.
cat >"$work/edit-tabs.sh" <<'SH'
#!/usr/bin/env bash
# edit-tabs.sh ITSYPAD A B TAB_A TAB_B: B syncs one change, A makes one.
set -euo pipefail
"$1" --data-dir "$3" --quiet tab edit "$5" "edited on B $EPOCHREALTIME $RANDOM"
"$1" --data-dir "$3" --quiet sync
"$1" --data-dir "$2" --quiet tab edit "$4" "edited on A $EPOCHREALTIME $RANDOM"
SH
# Before each git run: clone 2 pushes a change to one file, clone 1 changes another.
cat >"$work/edit-files.sh" <<'SH'
#!/usr/bin/env bash
# edit-files.sh CLONE_1 CLONE_2: clone 2 pushes one changed file, clone 1 changes one.
set -euo pipefail
echo "edited in clone 2 $EPOCHREALTIME $RANDOM" >>"$2/tab-07000.json"
git -C "$2" commit -qam "clone 2"
git -C "$2" pull -q --rebase
git -C "$2" push -q
echo "edited in clone 1 $EPOCHREALTIME $RANDOM" >>"$1/tab-03000.json"
SH
cat >"$work/git-sync.sh" <<'SH'
#!/usr/bin/env bash
# git-sync.sh CLONE: commit the change, pull, push.
set -euo pipefail
cd "$1"
git commit -qam "clone 1" && git pull -q --rebase && git push -q
SH

q() { printf '%q' "$1"; }
common=(--style basic -N --warmup "$WARMUP" --runs "$RUNS")
runs_total=$((WARMUP + RUNS))

itsypad_bench() {
    local n=$1 base=$work/n$1 tab_a tab_b
    tab_a=$(sed -n "$((n / 2))p" "$base/tab-ids-$n.txt")
    tab_b=$(sed -n "$((n / 3))p" "$base/tab-ids-$n.txt")
    step "itsypad sync through a git remote: one change each way, $n synced tabs"
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

step "git pull && git push of one changed file in a repository of $LARGE files"
hyperfine "${common[@]}" \
    --prepare "bash $(q "$work/edit-files.sh") $(q "$work/clone-1") $(q "$work/clone-2")" \
    --export-json "$results/git-$LARGE.json" \
    -n "git pull && git push @$LARGE" "bash $(q "$work/git-sync.sh") $(q "$work/clone-1")"
[[ $(git -C "$work/clone-1" rev-parse HEAD) == $(git --git-dir="$work/plain.git" rev-parse main) ]] || die "git did not push the last change"

# --- Summary -----------------------------------------------------------------

step "Summary"
machine="$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -srm); $("$ITSYPAD" --version 2>/dev/null | head -n 1 || echo '?'); $(hyperfine --version); $(git --version)"
status=0
python3 - "$results" "$SMALL" "$LARGE" "$RUNS" "$WARMUP" "$machine" <<'PY' | tee "$results/summary.txt" || status=$?
import json, sys
res, small, large = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs, warmup, machine = sys.argv[4:7]

med = {}
for name in (f"itsypad-{small}", f"itsypad-{large}", f"git-{large}"):
    for r in json.load(open(f"{res}/{name}.json"))["results"]:
        med[r["command"]] = (r["median"], r["min"], r["max"], r["stddev"] or 0.0)

def ms(s): return f"{s * 1000:.1f} ms"
print(f"git-bench: {machine}")
print(f"{runs} runs + {warmup} warmup per command")
print()
print(f"{'median wall time':36} {'median':>11} {'min':>11} {'max':>11} {'stddev':>10}")
for cmd, (m, lo, hi, sd) in med.items():
    print(f"{cmd:36} {ms(m):>11} {ms(lo):>11} {ms(hi):>11} {ms(sd):>10}")

s, l, g = med[f"itsypad sync @{small}"][0], med[f"itsypad sync @{large}"][0], med[f"git pull && git push @{large}"][0]
targets = [
    (f"one change @{large} / @{small}", l / s, 1.5),
    (f"itsypad sync / git pull && git push @{large}", l / g, 3.0),
]
failed = 0
print()
print(f"{'target':46} {'ratio':>8} {'needed':>9}  result")
for name, value, bound in targets:
    ok = value <= bound
    failed += not ok
    print(f"{name:46} {value:>7.2f}x {'<= ' + format(bound, '.1f') + 'x':>9}  {'PASS' if ok else 'FAIL'}")
print()
print("all targets met" if failed == 0 else f"{failed} target(s) not met")
sys.exit(1 if failed else 0)
PY
printf '\ngit-bench: finished in %ss\n' "$((SECONDS - started))" >&2
if [[ -n $BENCH_OUT ]]; then printf 'results kept in %s\n' "$BENCH_OUT" >&2; fi
exit "$status"
