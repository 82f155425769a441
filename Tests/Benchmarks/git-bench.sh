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
RUNS=${RUNS:-20}
WARMUP=${WARMUP:-3}

BENCH_NAME=git-bench
# shellcheck source=common.sh
source "$repo_root/Tests/Benchmarks/common.sh"
# shellcheck source=remotes.sh
source "$repo_root/Tests/Benchmarks/remotes.sh"
command -v git >/dev/null || die "git not found (apt-get install -y git)"
# git's own configuration stays out of the measurement: no global or system files.
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost

# --- Seeding -----------------------------------------------------------------

seed() {
    git init -q --bare "$work/n$1/remote.git"
    seed_devices "$1" "git:$work/n$1/remote.git"
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

one_change_bench "$SMALL" "a git remote"
one_change_bench "$LARGE" "a git remote"

step "git pull && git push of one changed file in a repository of $LARGE files"
hyperfine "${common[@]}" \
    --prepare "bash $(q "$work/edit-files.sh") $(q "$work/clone-1") $(q "$work/clone-2")" \
    --export-json "$results/git-$LARGE.json" \
    -n "git pull && git push @$LARGE" "bash $(q "$work/git-sync.sh") $(q "$work/clone-1")"
[[ $(git -C "$work/clone-1" rev-parse HEAD) == $(git --git-dir="$work/plain.git" rev-parse main) ]] || die "git did not push the last change"

# --- Summary -----------------------------------------------------------------

summarize "$(git --version)" <<'PY'
import sys
from targets import medians, print_medians, check_targets
res, small, large = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

print(sys.argv[4])
print(sys.argv[5])
print()
med = medians(res, (f"itsypad-{small}", f"itsypad-{large}", f"git-{large}"))
print_medians(med)
s, l, g = med[f"itsypad sync @{small}"][0], med[f"itsypad sync @{large}"][0], med[f"git pull && git push @{large}"][0]
sys.exit(check_targets([
    (f"one change @{large} / @{small}", l / s, 1.5),
    (f"itsypad sync / git pull && git push @{large}", l / g, 3.0),
]))
PY
exit "$status"
