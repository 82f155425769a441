#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2016 # the `bash -c` scripts expand their own arguments ($1, $2)
# sync-bench.sh: itsypad's sync performance targets, measured in one run
# against Debian's unison and cp on the same machine.
#
#   1. Incremental: `itsypad sync` on device B pulling one change, with 10,000
#      synced tabs, within 1.3x of the same with 100 tabs.
#   2. Incremental: the same at 10,000 tabs at least 5x faster than `unison`
#      syncing two folders of 10,000 equivalent files after one change.
#   3. Bulk: the first sync of 10,000 tabs to a fresh device
#      (`itsypad sync enable DIR`) within 3x of `cp -r` of 10,000 equivalent
#      JSON files.
#   4. Encryption: the first sync of 10,000 tabs from an end-to-end encrypted
#      backend (`sync enable DIR --key -`) within 1.3x of the same unencrypted;
#      incremental sync at 10,000 encrypted tabs within noise of unencrypted
#      (reported, with the bound 1.1x).
#   6. Sending side: the first sync of 10,000 tabs, and of 10,000 clips, from
#      the device that holds them (`itsypad sync enable DIR` on a new backend)
#      within 3x of `cp -r` of the same record files followed by `sync -f` of
#      the copy; the first sync of 100,000 clips in one run, within 12x of the
#      10,000 one (linear), with its peak memory reported; the first push of
#      10,000 tabs to a git remote within 3x of `git add -A && git commit -q &&
#      git push -q` of the same files.
#   7. Scale: JOIN_LARGE and PENDING_HUGE clips pending, each sent in one
#      `sync enable` (PENDING_HUGE within 12x per tenfold of JOIN_LARGE: linear,
#      peak at most 64 MiB); a new device joining the JOIN_LARGE backend within 3x
#      of `cp -r` of that backend followed by `sync -f`, peak at most 64 MiB.
#   5. Files: once three devices that removed and concurrently edited tabs of
#      the 10,000 have synced until nothing moves, the backend holds at most
#      one file per live record, two per removal (its deleted version and its
#      tombstone record, both younger than the retention), zone.json, and
#      PER_DEVICE files per device.
#
# Every backend is in the one format (zone.json checked), the encrypted ones in its sealed form.
#
# Usage: Tests/Benchmarks/sync-bench.sh
# Environment:
#   ITSYPAD      itsypad binary (default: <repo>/.build/release/itsypad); never built here
#   UNISON_BIN   unison binary (default: unison from PATH). Not UNISON: unison
#                itself reads that as its archive directory, which this script
#                points at a private temporary one.
#   RUNS         hyperfine runs per incremental command (default 20)
#   WARMUP       hyperfine warmup runs per incremental command (default 3)
#   BULK_RUNS    interleaved rounds of the bulk commands (default 5)
#   BULK_WARMUP  warm-up rounds of the bulk commands (default 1)
#   SEND_LARGE   clips of the linear sending-side run (default 100000)
#   SENDING_ONLY set to 1 to measure the sending side (target 6) only
#   JOIN_LARGE   clips of the scale run a new device joins (default 100000; 0 skips the scale runs)
#   PENDING_HUGE clips of the longest pending queue, sent in one run (default 1000000; 0 skips it)
#   SCALE_ONLY   set to 1 to measure the scale runs (target 7) only
#   FRESH_FS     set to 1 to run each sending-side round (tabs, clips, git) and the JOIN_LARGE
#                scale run on a new ext4 (a loop image made for it, its baseline on the same
#                file system): ext4 creates files slowly where many were just removed, which
#                inflates later rounds and their baselines alike. Needs root (mount); without
#                it the option is skipped and the skip recorded in the summary. The
#                PENDING_HUGE run stays in the scratch directory (its image would need ~5 GiB).
#   BENCH_OUT    directory to keep the hyperfine JSON and the summary in
#                (default: none; everything lives in a temporary directory that
#                is removed on exit)
# Exit status: 0 when every target passes, 1 when one fails, 2 on a setup error.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
UNISON_BIN=${UNISON_BIN:-unison}
RUNS=${RUNS:-20}
WARMUP=${WARMUP:-3}
BULK_RUNS=${BULK_RUNS:-5}
BULK_WARMUP=${BULK_WARMUP:-1}

SMALL=100
LARGE=10000

BENCH_NAME=sync-bench
# shellcheck source=common.sh
source "$repo_root/Tests/Benchmarks/common.sh"

SEND_LARGE=${SEND_LARGE:-100000}
SENDING_ONLY=${SENDING_ONLY:-}
JOIN_LARGE=${JOIN_LARGE:-100000}
PENDING_HUGE=${PENDING_HUGE:-1000000}
SCALE_ONLY=${SCALE_ONLY:-}
FRESH_FS=${FRESH_FS:-}

# --- Prerequisites -----------------------------------------------------------

require_itsypad

command -v python3 >/dev/null || die "python3 not found"
command -v git >/dev/null || die "git not found (apt-get install -y git)"
if [[ -z $SENDING_ONLY && -z $SCALE_ONLY ]]; then
    command -v hyperfine >/dev/null || die "hyperfine not found (apt-get install -y hyperfine)"
    UNISON_BIN=$(command -v "$UNISON_BIN") || die "unison not found (apt-get install -y unison)"
fi

make_work

# --- A new file system a round (FRESH_FS=1) ------------------------------------

if [[ -n $FRESH_FS ]]; then
    why=""
    if [[ $EUID -ne 0 ]]; then
        why="mounting a loop image needs root"
    elif ! command -v mkfs.ext4 >/dev/null || ! command -v mount >/dev/null; then
        why="mkfs.ext4 or mount not found"
    fi
    if [[ -n $why ]]; then
        echo "FRESH_FS=1 skipped: $why; every round runs in the scratch directory" | tee -a "$results/summary.txt" >&2
        FRESH_FS=""
    fi
fi
# The file system mounted now, unmounted on exit before the scratch directory goes.
mounted=""
# shellcheck disable=SC2064 # expand now: $work is fixed from here on
trap '[[ -z $mounted ]] || umount "$mounted"; rm -rf '"'$work'" EXIT

# round_fs DIR [FILES]: sets $fs, where a round's files go. By default DIR itself, emptied of the
# last round's files (run, backend, copy and the git round's repositories); with FRESH_FS, DIR/fs
# with a new ext4 mounted on it (a 2 GiB image, or larger for FILES files, with an inode for
# each of them), removed by round_fs_done.
round_fs() {
    local dir=$1 files=${2:-0} megabytes
    if [[ -z $FRESH_FS ]]; then
        fs=$dir
        rm -rf "$fs/run" "$fs/backend" "$fs/copy" "$fs/remote.git" "$fs/files" "$fs/plain.git"
        return
    fi
    fs=$dir/fs
    megabytes=$((files * 12 / 1024 > 2048 ? files * 12 / 1024 : 2048))
    mkdir -p "$fs"
    rm -f "$dir/fs.img"
    truncate -s "${megabytes}M" "$dir/fs.img"
    if ((files > 0)); then
        mkfs.ext4 -q -F -N $((files + 65536)) "$dir/fs.img"
    else
        mkfs.ext4 -q -F "$dir/fs.img"
    fi
    mount -o loop "$dir/fs.img" "$fs"
    mounted=$fs
}

# round_fs_done DIR: with FRESH_FS, unmounts the round's file system and removes its image.
round_fs_done() {
    [[ -n $FRESH_FS ]] || return 0
    umount "$1/fs"
    mounted=""
    rm -f "$1/fs.img"
    rmdir "$1/fs"
}

# --- Sending side of a first sync --------------------------------------------

# seconds CMD...: runs CMD, prints its wall time in seconds.
seconds() {
    local start=$EPOCHREALTIME
    "$@"
    python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.3f}")' "$start" "$EPOCHREALTIME"
}

# sending KIND N ROUNDS: device A holds N tabs or clips (imported, never synced); each round
# copies it, times `sync enable` of the copy on a new backend, checks that the backend holds N
# records of the kind, and times `cp -r` of those record files followed by `sync -f` of the copy.
# Appends "KIND N ITSYPAD_SECONDS CP_SECONDS PEAK_KB" per round to $results/sending.txt.
sending() {
    local kind=$1 n=$2 rounds=$3 base=$work/send-$1-$2 type=ScratchTab history round got t_sync t_cp peak
    mkdir -p "$base"
    python3 "$repo_root/Tests/Benchmarks/generate.py" "$kind" "$n" "$base" >/dev/null
    history=$base/tabs-$n.json
    if [[ $kind == clips ]]; then
        type=ClipboardEntry history=$base/itsypad-$n.json
        "$ITSYPAD" --data-dir "$base/a" --quiet settings set clipboard.maxEntries "$n"
    fi
    "$ITSYPAD" --data-dir "$base/a" --quiet import "$history"
    for ((round = 1; round <= rounds; round++)); do
        # The backend's record files and their copy: an inode each.
        round_fs "$base" $((2 * n + 10000))
        cp -a "$base/a" "$fs/run"
        sync
        t_sync=$(seconds /usr/bin/time -f %M -o "$base/peak" "$ITSYPAD" --data-dir "$fs/run" --quiet sync enable "$fs/backend")
        peak=$(tail -n 1 "$base/peak")
        got=$(find "$fs/backend/records/$type" -name '*.json' | wc -l)
        [[ $got -eq $n ]] || die "the first sync of $n $kind left $got records in the backend"
        sync
        t_cp=$(seconds bash -c 'cp -r "$1" "$2" && sync -f "$2"' - "$fs/backend/records" "$fs/copy")
        printf '%s %s %s %s %s\n' "$kind" "$n" "$t_sync" "$t_cp" "$peak" | tee -a "$results/sending.txt" >&2
        round_fs_done "$base"
    done
    rm -rf "$base"
}

# sending_git N ROUNDS: device A holds N tabs (imported, never synced); each round copies it,
# times `sync enable` of the copy on a new bare git repository (end-to-end encrypted, a git
# remote's default), checks that the remote holds N tab records, and times `git add -A &&
# git commit -q && git push -q` of the same files from a new repository to another new bare one.
# Appends "git N ITSYPAD_SECONDS GIT_SECONDS PEAK_KB" per round to $results/sending.txt.
sending_git() {
    local n=$1 rounds=$2 base=$work/send-git-$1 round got t_sync t_git peak
    # git's own configuration stays out of the measurement: no global or system files.
    export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
    export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
    mkdir -p "$base"
    python3 "$repo_root/Tests/Benchmarks/generate.py" tabs "$n" "$base" >/dev/null
    "$ITSYPAD" --data-dir "$base/a" --quiet import "$base/tabs-$n.json"
    for ((round = 1; round <= rounds; round++)); do
        round_fs "$base"
        cp -a "$base/a" "$fs/run"
        git init -q --bare "$fs/remote.git"
        git init -q --bare "$fs/plain.git"
        sync
        t_sync=$(seconds /usr/bin/time -f %M -o "$base/peak" "$ITSYPAD" --data-dir "$fs/run" --quiet sync enable "git:$fs/remote.git")
        peak=$(tail -n 1 "$base/peak")
        git clone -q -b itsypad "$fs/remote.git" "$fs/files"
        got=$(find "$fs/files/records/ScratchTab" -name '*.json' | wc -l)
        [[ $got -eq $n ]] || die "the first push of $n tabs left $got records in the git remote"
        rm -rf "$fs/files/.git"
        git -C "$fs/files" init -q
        git -C "$fs/files" remote add origin "$fs/plain.git"
        sync
        t_git=$(seconds bash -c 'cd "$1" && git add -A && git commit -qm first && git push -q origin HEAD' - "$fs/files")
        printf 'git %s %s %s %s\n' "$n" "$t_sync" "$t_git" "$peak" | tee -a "$results/sending.txt" >&2
        round_fs_done "$base"
    done
    rm -rf "$base"
}

# --- Scale: long pending queues, a device joining ------------------------------

# scale N JOIN: device A holds N clips (imported, never synced); times one `sync enable` of A on
# a new backend with its peak memory, and checks that the backend holds all N; with JOIN=join, a
# new device joins that backend (timed, peak), checked to hold N clips, against `cp -r` of the
# backend followed by `sync -f`. Appends "send N SECONDS PEAK_KB" and "join N SECONDS PEAK_KB
# CP_SECONDS" to $results/scale.txt.
scale() {
    local n=$1 join=$2 base=$work/scale-$1 got t_send t_join t_cp peak
    mkdir -p "$base"
    python3 "$repo_root/Tests/Benchmarks/generate.py" clips "$n" "$base" >/dev/null
    "$ITSYPAD" --data-dir "$base/a" --quiet settings set clipboard.maxEntries "$n"
    "$ITSYPAD" --data-dir "$base/a" --quiet import "$base/itsypad-$n.json"
    # The joined run on a new file system with FRESH_FS: the backend, its copy, and the devices.
    fs=$base
    if [[ $join == join && -n $FRESH_FS ]]; then
        round_fs "$base" $((2 * n + 10000))
        cp -a "$base/a" "$fs/a"
    fi
    sync
    t_send=$(seconds /usr/bin/time -f %M -o "$base/peak" "$ITSYPAD" --data-dir "$fs/a" --quiet sync enable "$fs/backend")
    peak=$(tail -n 1 "$base/peak")
    got=$(find "$fs/backend/records/ClipboardEntry" -name '*.json' | wc -l)
    [[ $got -eq $n ]] || die "one sync of $n pending clips left $got records in the backend"
    printf 'send %s %s %s\n' "$n" "$t_send" "$peak" | tee -a "$results/scale.txt" >&2
    if [[ $join == join ]]; then
        "$ITSYPAD" --data-dir "$fs/b" --quiet settings set clipboard.maxEntries "$n"
        sync
        t_join=$(seconds /usr/bin/time -f %M -o "$base/peak" "$ITSYPAD" --data-dir "$fs/b" --quiet sync enable "$fs/backend")
        peak=$(tail -n 1 "$base/peak")
        got=$("$ITSYPAD" --data-dir "$fs/b" clip ls | wc -l)
        [[ $got -eq $n ]] || die "a device joining $n clips holds $got"
        sync
        t_cp=$(seconds bash -c 'cp -r "$1" "$2" && sync -f "$2"' - "$fs/backend" "$fs/copy")
        printf 'join %s %s %s %s\n' "$n" "$t_join" "$peak" "$t_cp" | tee -a "$results/scale.txt" >&2
        round_fs_done "$base"
    fi
    rm -rf "$base"
}

scale_status=0
if ((JOIN_LARGE > 0)); then
    step "Scale: $JOIN_LARGE clips sent in one sync, a device joining them vs cp -r + sync -f; $PENDING_HUGE pending (0: none)"
    scale "$JOIN_LARGE" join
    if ((PENDING_HUGE > 0)); then scale "$PENDING_HUGE" send-only; fi
    python3 - "$results/scale.txt" "$JOIN_LARGE" "$PENDING_HUGE" <<'PY' | tee "$results/scale-summary.txt" || scale_status=$?
import sys
rows = [line.split() for line in open(sys.argv[1])]
join_large, huge = sys.argv[2], sys.argv[3]
def row(kind, n): return next(r for r in rows if r[0] == kind and r[1] == n)
failed = 0
def check(name, value, bound, unit="x"):
    global failed
    ok = value <= bound
    failed += not ok
    print(f"{name:56} {value:>8.2f}{unit} {'<= ' + format(bound, '.1f') + unit:>10}  {'PASS' if ok else 'FAIL'}")
send, join = row("send", join_large), row("join", join_large)
print(f"one sync of {join_large} pending clips: {float(send[2]):.2f}s, peak {int(send[3]) // 1024} MiB")
print(f"a device joining {join_large} clips: {float(join[2]):.2f}s, peak {int(join[3]) // 1024} MiB; cp -r + sync -f {float(join[4]):.2f}s")
check(f"joining {join_large} clips / cp -r + sync -f of the backend", float(join[2]) / float(join[4]), 3.0)
check(f"peak memory joining {join_large} clips", int(join[3]) / 1024, 64.0, " MiB")
if int(huge) > 0:
    big = row("send", huge)
    print(f"one sync of {huge} pending clips: {float(big[2]):.2f}s, peak {int(big[3]) // 1024} MiB")
    check(f"one sync of {huge} pending / of {join_large}", float(big[2]) / float(send[2]), 12.0 * int(huge) / int(join_large) / 10)
    check(f"peak memory sending {huge} pending clips", int(big[3]) / 1024, 64.0, " MiB")
sys.exit(1 if failed else 0)
PY
fi
if [[ -n $SCALE_ONLY ]]; then exit "$scale_status"; fi

step "Sending side: first sync of $LARGE tabs, $LARGE clips and $SEND_LARGE clips vs cp -r + sync -f; git remote vs git"
sending tabs "$LARGE" "$BULK_RUNS"
sending clips "$LARGE" "$BULK_RUNS"
sending clips "$SEND_LARGE" 1
sending_git "$LARGE" "$BULK_RUNS"
sending_status=0
python3 - "$results/sending.txt" "$LARGE" "$SEND_LARGE" <<'PY' | tee "$results/sending-summary.txt" || sending_status=$?
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
large, send_large = sys.argv[2], sys.argv[3]
def runs(kind, n): return [(float(r[2]), float(r[3]), int(r[4])) for r in rows if r[0] == kind and r[1] == n]
failed = 0
def check(name, value, bound):
    global failed
    ok = value <= bound
    failed += not ok
    print(f"{name:52} {value:>7.2f}x {'<= ' + format(bound, '.1f') + 'x':>9}  {'PASS' if ok else 'FAIL'}")
print(f"{'sending side (median of rounds)':52} {'itsypad':>9} {'cp+sync':>9} {'peak':>9}")
for kind, n in (("tabs", large), ("clips", large), ("clips", send_large), ("git", large)):
    r = runs(kind, n)
    what = f"first push of {n} tabs to a git remote (git: add, commit, push)" if kind == "git" else f"first sync of {n} {kind}"
    print(f"{what:52} {statistics.median(x[0] for x in r):>8.2f}s "
          f"{statistics.median(x[1] for x in r):>8.2f}s {max(x[2] for x in r) // 1024:>6} MiB")
for kind in ("tabs", "clips"):
    check(f"first sync of {large} {kind}: itsypad / cp -r + sync -f", statistics.median(x[0] / x[1] for x in runs(kind, large)), 3.0)
check(f"git remote, first push of {large} tabs / git", statistics.median(x[0] / x[1] for x in runs("git", large)), 3.0)
check(f"first sync of {send_large} clips / of {large} clips",
      statistics.median(x[0] for x in runs("clips", send_large)) / statistics.median(x[0] for x in runs("clips", large)),
      12.0 * int(send_large) / int(large) / 10)
sys.exit(1 if failed else 0)
PY
if [[ -n $SENDING_ONLY ]]; then exit "$sending_status"; fi
# unison keeps its archives and log under $UNISON: keep them out of ~/.unison.
export UNISON=$work/unison-home
mkdir -p "$UNISON"
started=$SECONDS

# --- Seeding -----------------------------------------------------------------

tab_count() { "$ITSYPAD" --data-dir "$1" tab ls | wc -l; }

# expect_count DIR N WHAT: dies unless data dir DIR holds exactly N tabs.
expect_count() {
    local got
    got=$(tab_count "$1")
    [[ $got -eq $2 ]] || die "$3 has $got tabs, expected $2"
}

# tab_contents DIR: every tab's id, name and content, in id order.
tab_contents() {
    "$ITSYPAD" --data-dir "$1" tab ls --json \
        | python3 -c 'import json, sys; print(json.dumps(sorted((t["id"], t["name"], t["content"]) for t in json.load(sys.stdin))))'
}

zone_format() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["format"])' "$1/zone.json"; }

# seed N: device A ($work/nN/a) holding N synced tabs, device B ($work/nN/b)
# fully synced with it, both on backend $work/nN/backend.
# seed N encrypted: the same on an end-to-end encrypted backend, in $work/nNe.
seed() {
    local n=$1 base=$work/n$1${2:+e}
    local a=$base/a b=$base/b backend=$base/backend
    mkdir -p "$base"
    python3 "$repo_root/Tests/Benchmarks/generate.py" tabs "$n" "$base"
    "$ITSYPAD" --data-dir "$a" --quiet import "$base/tabs-$n.json"
    expect_count "$a" "$n" "device A"
    if [[ -n ${2:-} ]]; then
        "$ITSYPAD" --data-dir "$a" --quiet sync enable "$backend" --encrypt
        "$ITSYPAD" --data-dir "$a" sync key show >"$base/recovery-key"
        "$ITSYPAD" --data-dir "$b" --quiet sync enable "$backend" --key - <"$base/recovery-key"
    else
        "$ITSYPAD" --data-dir "$a" --quiet sync enable "$backend"
        "$ITSYPAD" --data-dir "$b" --quiet sync enable "$backend"
        [[ $(zone_format "$backend") == 4 ]] || die "the backend at $backend is format $(zone_format "$backend"), not 4"
    fi
    # Compact once, so that no timed run meets an automatic compaction (which
    # expires B's token and makes that one run a full re-fetch); B then
    # re-fetches once here and is in its steady state.
    "$ITSYPAD" --data-dir "$a" --quiet sync compact
    "$ITSYPAD" --data-dir "$a" --quiet sync
    "$ITSYPAD" --data-dir "$b" --quiet sync
    expect_count "$b" "$n" "device B"
}

step "Seeding devices with $SMALL and $LARGE synced tabs"
seed "$SMALL"
seed "$LARGE"
seed "$LARGE" encrypted

# The equivalent files: the backend's own record of every tab (one JSON file
# each, as synced), for unison and cp.
records=$work/n$LARGE/backend/records/ScratchTab
got=$(find "$records" -name '*.json' | wc -l)
[[ $got -eq $LARGE ]] || die "backend holds $got tab records, expected $LARGE"
cp -r "$records" "$work/json-src"
cp -r "$records" "$work/unison-1"
cp -r "$records" "$work/unison-2"
unison_flags=(-batch -auto -silent -log=false -times=false)
"$UNISON_BIN" "$work/unison-1" "$work/unison-2" "${unison_flags[@]}" >/dev/null \
    || die "initial unison sync failed"

# --- Incremental -------------------------------------------------------------

# Each run edits one tab on A and syncs A (untimed), then times B's sync.
cat >"$work/edit-tab.sh" <<'SH'
#!/usr/bin/env bash
# edit-tab.sh ITSYPAD DATA_DIR TAB_ID: one new change on a device, synced.
set -euo pipefail
"$1" --data-dir "$2" --quiet tab edit "$3" "bench edit $EPOCHREALTIME $RANDOM"
"$1" --data-dir "$2" --quiet sync
SH
# Each run changes one file in the first unison folder (new inode, so that
# unison's fast check cannot miss it).
cat >"$work/edit-file.sh" <<'SH'
#!/usr/bin/env bash
# edit-file.sh PRISTINE FILE: FILE becomes PRISTINE plus a distinct line.
set -euo pipefail
{ cat "$1"; printf 'bench edit %s %s\n' "$EPOCHREALTIME" "$RANDOM"; } >"$2.bench-tmp"
mv "$2.bench-tmp" "$2"
SH
# Before each bulk run: move the previous target aside (deleted on exit, not
# now: on ext4 without a journal, inodes freed in the last minutes are skipped,
# slowly, when new ones are allocated, which would tax whichever command runs
# next) and flush dirty pages, so no run pays for the previous one's writeback.
mkdir -p "$work/trash"
cat >"$work/reset.sh" <<'SH'
#!/usr/bin/env bash
# reset.sh DIR TRASH: DIR moved into TRASH, file system synced.
set -euo pipefail
if [[ -e $1 ]]; then mv "$1" "$(mktemp -d "$2/XXXXXX")/"; fi
sync
SH

q() { printf '%q' "$1"; }
incremental_common=(--style basic -N --warmup "$WARMUP" --runs "$RUNS")
edit_runs=$((WARMUP + RUNS))
declare -A edited_tab

incremental_bench() {
    local n=$1 base=$work/n$1${2:+e} id
    id=$(sed -n "$((n / 2))p" "$base/tab-ids-$n.txt")
    edited_tab[$n]=$id
    step "itsypad sync on B pulling one change, $n synced tabs"
    hyperfine "${incremental_common[@]}" \
        --prepare "bash $(q "$work/edit-tab.sh") $(q "$ITSYPAD") $(q "$base/a") $id" \
        --export-json "$results/incremental-$n${2:+e}.json" \
        -n "itsypad sync @$n${2:+ encrypted}" "$(q "$ITSYPAD") --data-dir $(q "$base/b") sync"
}

# check_pulled N: every timed run of B pulled exactly one change, and B ends
# with A's version of the edited tab.
check_pulled() {
    local n=$1 base=$work/n$1${2:+e} got
    got=$("$ITSYPAD" --data-dir "$base/b" sync log --limit "$edit_runs" | grep -c $'\tpulled 1\tpushed 0\t.*\tok$' || true)
    [[ $got -eq $edit_runs ]] || die "@$n: only $got of the last $edit_runs syncs on B pulled exactly one change"
    cmp -s <("$ITSYPAD" --data-dir "$base/a" tab show "${edited_tab[$n]}") \
           <("$ITSYPAD" --data-dir "$base/b" tab show "${edited_tab[$n]}") \
        || die "@$n: B's copy of the edited tab differs from A's"
}

incremental_bench "$SMALL"
check_pulled "$SMALL"
incremental_bench "$LARGE"
check_pulled "$LARGE"
incremental_bench "$LARGE" encrypted
check_pulled "$LARGE" encrypted

# Format 4 names a record's file <bucket>/<name>.<device>.json.
file=$(cd "$work/unison-1" && find . -maxdepth 2 -name "${edited_tab[$LARGE]}.*json" -printf '%P\n' | head -n 1)
[[ -n $file ]] || die "no record file of tab ${edited_tab[$LARGE]} in the unison folder"
cp "$work/unison-1/$file" "$work/pristine.json"
step "unison syncing two folders of $LARGE files after one change"
hyperfine "${incremental_common[@]}" \
    --prepare "bash $(q "$work/edit-file.sh") $(q "$work/pristine.json") $(q "$work/unison-1/$file")" \
    --export-json "$results/unison-$LARGE.json" \
    -n "unison @$LARGE" "$(q "$UNISON_BIN") $(q "$work/unison-1") $(q "$work/unison-2") ${unison_flags[*]}"
cmp -s "$work/unison-1/$file" "$work/unison-2/$file" || die "unison did not propagate the last change"

# --- Bulk --------------------------------------------------------------------

fresh=$work/fresh
fresh_encrypted=$work/fresh-encrypted
copy=$work/json-copy
# Interleaved rounds (see paired.py): each round runs the three once, each after its reset, so
# that the ratios compare runs made moments apart on the same disk state; a bulk run's time
# follows the file system's state (its free inodes, what the last reset left to write back)
# more than the code, and hyperfine's blocks of runs let that drift apart between commands.
step "First sync of $LARGE tabs to a fresh device (plain and encrypted) vs cp -r of $LARGE JSON files, interleaved"
python3 "$repo_root/Tests/Benchmarks/paired.py" --runs "$BULK_RUNS" --warmup "$BULK_WARMUP" \
    --export-json "$results/bulk-$LARGE.json" \
    -n "itsypad sync enable (fresh) @$LARGE" \
    --prepare "bash $(q "$work/reset.sh") $(q "$fresh") $(q "$work/trash")" \
    "$(q "$ITSYPAD") --data-dir $(q "$fresh") sync enable $(q "$work/n$LARGE/backend")" \
    -n "itsypad sync enable (fresh) @$LARGE encrypted" \
    --stdin "$work/n${LARGE}e/recovery-key" \
    --prepare "bash $(q "$work/reset.sh") $(q "$fresh_encrypted") $(q "$work/trash")" \
    "$(q "$ITSYPAD") --data-dir $(q "$fresh_encrypted") sync enable $(q "$work/n${LARGE}e/backend") --key -" \
    -n "cp -r @$LARGE" \
    --prepare "bash $(q "$work/reset.sh") $(q "$copy") $(q "$work/trash")" \
    "cp -r $(q "$work/json-src") $(q "$copy")"
expect_count "$fresh" "$LARGE" "the fresh device"
expect_count "$fresh_encrypted" "$LARGE" "the fresh device (encrypted)"
got=$(find "$copy" -name '*.json' | wc -l)
[[ $got -eq $LARGE ]] || die "cp -r copied $got files, expected $LARGE"

# --- Files after quiescence --------------------------------------------------

# On the plain 10,000-tab backend (which the bulk runs' fresh devices joined
# too, and left): device C joins, A removes REMOVED tabs, and A
# and B each edit EDITED tabs, half of them the same ones (A appends a line, B
# prepends one: concurrent versions, merged without a conflict). Then A, B and
# C sync in turn until two rounds in a row move nothing.
REMOVED=100
EDITED=200
PER_DEVICE=${PER_DEVICE:-6}
quiesce() {
    local base=$work/n$LARGE ids round quiet=0 moved d id
    ids=$base/tab-ids-$LARGE.txt
    "$ITSYPAD" --data-dir "$base/c" --quiet sync enable "$base/backend"
    mapfile -t removed < <(sed -n "1,${REMOVED}p" "$ids")
    "$ITSYPAD" --data-dir "$base/a" --quiet tab rm "${removed[@]}"
    while read -r id; do
        "$ITSYPAD" --data-dir "$base/a" --quiet tab edit "$id" "$("$ITSYPAD" --data-dir "$base/a" tab show "$id")"$'\nappended on A'
    done < <(sed -n "$((REMOVED + 1)),$((REMOVED + EDITED))p" "$ids")
    while read -r id; do
        "$ITSYPAD" --data-dir "$base/b" --quiet tab edit "$id" $'prepended on B\n'"$("$ITSYPAD" --data-dir "$base/b" tab show "$id")"
    done < <(sed -n "$((REMOVED + EDITED / 2 + 1)),$((REMOVED + EDITED / 2 + EDITED))p" "$ids")
    for round in 1 2 3 4 5 6 7 8; do
        moved=0
        for d in a b c; do
            "$ITSYPAD" --data-dir "$base/$d" --quiet sync
            "$ITSYPAD" --data-dir "$base/$d" sync log --limit 1 | grep -q $'\tpulled 0\tpushed 0\tconflicts 0\tok$' || moved=1
        done
        if ((moved)); then quiet=0; else quiet=$((quiet + 1)); fi
        ((quiet < 2)) || break
    done
    ((quiet >= 2)) || die "still moving changes after $round rounds"
    local live
    live=$(tab_count "$base/a")
    [[ $live -eq $((LARGE - REMOVED)) ]] || die "A holds $live tabs after quiescence, expected $((LARGE - REMOVED))"
    for d in b c; do
        cmp -s <(tab_contents "$base/a") <(tab_contents "$base/$d") || die "device $d's tabs differ from A's after quiescence"
    done
    printf '%s %s %s %s %s\n' "$(find "$base/backend" -type f | wc -l)" "$live" "$REMOVED" \
        "$(find "$base/backend/devices" -mindepth 1 -maxdepth 1 -type d | wc -l)" "$round" >"$results/files.txt"
    step "backend files after quiescence (files, live tabs, removed, devices, rounds): $(cat "$results/files.txt")"
}
step "Three devices remove and edit tabs of $LARGE, then sync until nothing moves"
quiesce

# --- Summary -----------------------------------------------------------------

step "Summary"
machine="$(nproc) cores, $(uname -srm); $("$ITSYPAD" --version 2>/dev/null | head -n 1 || echo '?'); $(hyperfine --version); $("$UNISON_BIN" -version)"
status=0
PYTHONPATH="$repo_root/Tests/Benchmarks" python3 - "$results" "$SMALL" "$LARGE" "$RUNS" "$WARMUP" "$BULK_RUNS" "$BULK_WARMUP" "$machine" "$PER_DEVICE" <<'PY' | tee "$results/summary.txt" || status=$?
import json, os, statistics, sys
from targets import print_targets
res, small, large = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs, warmup, bulk_runs, bulk_warmup, machine = sys.argv[4:9]
per_device = int(sys.argv[9])

med = {}
rounds = {}
for name in (f"incremental-{small}", f"incremental-{large}", f"unison-{large}", f"bulk-{large}", f"incremental-{large}e"):
    for r in json.load(open(f"{res}/{name}.json"))["results"]:
        med[r["command"]] = (r["median"], r["min"], r["max"], r["stddev"] or 0.0)
        rounds[r["command"]] = r["times"]

def paired(a, b):
    """The median of a/b over the rounds of an interleaved run (times in round order)."""
    return statistics.median(x / y for x, y in zip(rounds[a], rounds[b]))

def ms(s): return f"{s * 1000:.1f} ms"
print(f"sync-bench: {machine}")
print(f"incremental: {runs} runs + {warmup} warmup; bulk: {bulk_runs} interleaved rounds + {bulk_warmup} warmup")
print()
print(f"{'median wall time':46} {'median':>11} {'min':>11} {'max':>11} {'stddev':>10}")
for cmd, (m, lo, hi, sd) in med.items():
    print(f"{cmd:46} {ms(m):>11} {ms(lo):>11} {ms(hi):>11} {ms(sd):>10}")

inc_s, inc_l = med[f"itsypad sync @{small}"][0], med[f"itsypad sync @{large}"][0]
uni = med[f"unison @{large}"][0]
bulk, cp = f"itsypad sync enable (fresh) @{large}", f"cp -r @{large}"

targets = [
    (f"incremental flat: @{large} / @{small}", inc_l / inc_s, "<=", 1.3),
    (f"incremental @{large}: unison / itsypad", uni / inc_l, ">=", 5.0),
    (f"bulk @{large}: itsypad / cp -r (paired)", paired(bulk, cp), "<=", 3.0),
    (f"bulk @{large}: encrypted / plain (paired)", paired(f"{bulk} encrypted", bulk), "<=", 1.3),
    (f"incremental @{large}: encrypted / plain", med[f"itsypad sync @{large} encrypted"][0] / inc_l, "<=", 1.1),
]
failed = print_targets(targets)
files, live, removed, devices, rounds = map(int, open(f"{res}/files.txt").read().split())
bound = live + 2 * removed + 1 + per_device * devices
ok = files <= bound
failed += not ok
print(f"{'backend files after quiescence':42} {files:>8} {'<= ' + str(bound):>9}  {'PASS' if ok else 'FAIL'}")
print(f"  ({live} live tabs + 2 x {removed} removed + zone.json + {per_device} x {devices} devices; quiet after {rounds} rounds)")
print()
print("all targets met" if failed == 0 else f"{failed} target(s) not met")
sys.exit(1 if failed else 0)
PY
((sending_status == 0)) || status=1
((scale_status == 0)) || status=1
printf '\nsync-bench: finished in %ss\n' "$((SECONDS - started))" >&2
if [[ -n $BENCH_OUT ]]; then printf 'results kept in %s\n' "$BENCH_OUT" >&2; fi
exit "$status"
