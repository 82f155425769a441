#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# listing-bench.sh: what reads many entries — listing, searching, --json,
# export, import, tab lookups — against plain tools on the same data in one
# run, plus a scaling table from 1,000 to 1,000,000 clips and peak memory.
# Every ratio target is the median of per-round ratios: a command and its baseline run in the same
# round of interleaved rounds (paired.py: each command once a round, in a random order), so that
# load and disk state, which change over minutes on a shared machine, move both sides alike.
#
#   clip ls @100k                     <= 10x  cat of the same entries as JSON lines
#   clip ls --search WORD @100k       <=  3x  grep -ci WORD of that file (9999, merge)
#   clip ls --json, export @100k      <= 15x  cat (export, with IMAGES=1: cat of the export file, which holds
#                                             the images' base64 as the output does; the lines file does not)
#   import of 100k clips              <= 10x  cp of the export file + one fsync (each round into a fresh target)
#   tab show NAME|PREFIX (names in ASCII, Cyrillic, Chinese), tab ls @10k <= 1.3x the same @100 tabs
#   import of 10k tabs                <=  3x  cp -r of the 10k tab files (each round into a fresh target)
#   clip add, clip ls -n 20, tab show <= 1.3x a static hello-world reading the same stdin
#   every script (Cyrillic, CJK, emoji, mixed) @100k: clip ls <= 10x cat, --json and export <= 15x cat,
#   --search <= 3x grep -ci (LC_ALL=C.UTF-8) for a query in the corpus's script, in lower and in upper case
#   (informational, not targets: clip add against the hello-world plus two fdatasyncs, what durability costs;
#   clip ls -n 20 and tab show against the hello-world linked whole, as itsypad's release build is)
#   clip ls -n 20 and clip ls --json -n 20 @1M <= 1.3x the same @1k (a listing reads only what it prints)
#   scaling 1k..1M, every size in each round: add, ls -n 20 and --json -n 20 flat (the largest ratio between two
#   sizes <= 1.5), the rest at most linear (each 10x step <= 15x)
#   peak memory @100k with a 16 MiB clip: ls, ls --json, export, prune, clear < 64 MiB;
#   peak memory @1M: clip ls --json, export, import, clip prune --keep 900000 <= 64 MiB;
#   clip add of the 16 MiB clip <= 3x its size
#   clip add at the cap (evicting) <= 1.3x clip add below it, @1k and @100k; its peak memory @100k <= 16 MiB
#
# Every size's history is kept until its last interleaved round: about 0.6 GB of disk at 1,000,000
# (history and export), and another 0.3 GB while the scaling rounds import 1,000,000 clips.
#
# Usage: Tests/Benchmarks/listing-bench.sh
# Environment:
#   ITSYPAD    itsypad binary (default: <repo>/.build/release/itsypad); never built here
#   SIZES      history sizes for the scaling table (default "1000 10000 100000 1000000"; must include 100000)
#   RUNS       rounds of the 100k targets: listing and search with cat and grep, import with cp + fsync
#              (default 30, after 2 and 1 warm-up rounds)
#   SCALE_RUNS rounds of the scaling table, every command at every size (default 5, after 1 warm-up round)
#   TAB_RUNS   rounds of the import of 10k tabs with cp -r (default 5, after 1 warm-up round)
#   SMALL_RUNS rounds of the few-millisecond commands (default 60, after 5 warm-up rounds)
#   SCRIPTS    corpora of other scripts measured at 100k (default "cyrillic cjk emoji mixed"; "" for none)
#   SCRIPT_RUNS rounds of each script's targets (default 15, after 2 warm-up rounds)
#   SCRIPTS_ONLY=1 measures the scripts' targets alone (and their summary)
#   IMAGES=1   every tenth clip of the histories is a PNG of 1-4 KiB (binary entries; see generate.py)
#   BENCH_OUT  directory to keep the rounds (paired.py's JSON), memory TSV and summary in
# Exit status: 0 when every target passes, 1 when one fails, 2 on a setup error.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SIZES=${SIZES:-"1000 10000 100000 1000000"}
RUNS=${RUNS:-30}
SCALE_RUNS=${SCALE_RUNS:-5}
TAB_RUNS=${TAB_RUNS:-5}
SMALL_RUNS=${SMALL_RUNS:-60}
SCRIPTS=${SCRIPTS-"cyrillic cjk emoji mixed"}
SCRIPT_RUNS=${SCRIPT_RUNS:-15}
SCRIPTS_ONLY=${SCRIPTS_ONLY:-}
IMAGES=${IMAGES:-}
GNU_TIME=/usr/bin/time
LARGE=100000
BIG_CLIP_BYTES=$((16 << 20))

BENCH_NAME=listing-bench
# shellcheck source=common.sh
source "$repo_root/Tests/Benchmarks/common.sh"

require_itsypad
[[ " $SIZES " == *" $LARGE "* ]] || die "SIZES must include $LARGE (the targets are set at 100,000 entries)"
command -v python3 >/dev/null || die "python3 not found"
command -v swiftc >/dev/null || die "swiftc not found (the Swift toolchain builds the hello-world baseline)"
[[ -x $GNU_TIME ]] || die "$GNU_TIME not found (apt-get install -y time)"
make_work
started=$SECONDS

# bench NAME ROUNDS WARMUP -n "label" [--stdin FILE] [--prepare PREP] "command" [--then "command"] ...:
# interleaved rounds (see paired.py), every command once a round, in a random order.
bench() {
    local name=$1 rounds=$2 warmup=$3
    shift 3
    python3 "$repo_root/Tests/Benchmarks/paired.py" --runs "$rounds" --warmup "$warmup" --export-json "$results/$name.json" "$@"
}
it() { printf '%q --data-dir %q' "$ITSYPAD" "$1"; }
q() { printf '%q' "$1"; }

# --- Every script: listing and search of Cyrillic, CJK, emoji and mixed clips ---------------
# (begin: scripts) Each corpus's targets in interleaved rounds of their own, against cat and
# LC_ALL=C.UTF-8 grep -ci of the same texts; a query in the corpus's script, lower and upper case
# (CJK has no case: a Chinese and a Japanese word).
script_queries() {
    case $1 in
    cyrillic) printf '%s\n' "ошибка коммит" "ОШИБКА КОММИТ" ;;
    cjk) printf '%s\n' "合并" "リリース" ;;
    emoji) printf '%s\n' "release 🚀" "RELEASE 🚀" ;;
    mixed) printf '%s\n' "naïve café" "NAÏVE CAFÉ" ;;
    esac
}
script_bench() {
    local script=$1 dir=$work/clips-$1 lines=$work/lines-$1-$LARGE.jsonl lower upper
    step "Clips in $script: $LARGE entries; listing and search against cat and grep -ci, $SCRIPT_RUNS interleaved rounds"
    python3 "$repo_root/Tests/Benchmarks/generate.py" script-clips "$script" "$LARGE" "$work"
    "$ITSYPAD" --data-dir "$dir" --quiet settings set clipboard.maxEntries 2000000
    "$ITSYPAD" --data-dir "$dir" --quiet import "$work/itsypad-$script-$LARGE.json"
    rm -f "$work/itsypad-$script-$LARGE.json"
    { read -r lower && read -r upper; } < <(script_queries "$script")
    for query in "$lower" "$upper"; do
        local found expected
        found=$("$ITSYPAD" --data-dir "$dir" clip ls --search "$query" | wc -l)
        expected=$(LC_ALL=C.UTF-8 grep -ci -- "$query" "$lines" || true)
        echo "    $script: --search '$query' lists $found entries, grep -ci counts $expected lines"
    done
    # grep's locale for every command of the block: the runner execs programs, not shell words.
    LC_ALL=C.UTF-8 bench "script-$script" "$SCRIPT_RUNS" 2 \
        -n "$script: cat" "cat $(q "$lines")" \
        -n "$script: clip ls" "$(it "$dir") clip ls" \
        -n "$script: clip ls --json" "$(it "$dir") clip ls --json" \
        -n "$script: export" "$(it "$dir") export" \
        -n "$script: grep -ci lower" "grep -ci -- $(q "$lower") $(q "$lines")" \
        -n "$script: search lower" "$(it "$dir") clip ls --search $(q "$lower")" \
        -n "$script: grep -ci upper" "grep -ci -- $(q "$upper") $(q "$lines")" \
        -n "$script: search upper" "$(it "$dir") clip ls --search $(q "$upper")"
    rm -rf "$dir" "$lines"
}
for script in $SCRIPTS; do script_bench "$script"; done
# (end: scripts)

if [[ -z $SCRIPTS_ONLY ]]; then
# --- Baseline programs ----------------------------------------------------------

step "Building the static hello-world baseline (reads stdin, prints a line)"
cat >"$work/hello.swift" <<'SWIFT'
#if canImport(Glibc)
import Glibc
#endif
var buffer = [UInt8](repeating: 0, count: 65536)
while buffer.withUnsafeMutableBytes({ read(0, $0.baseAddress, $0.count) }) > 0 {}
print("hello")
SWIFT
swiftc -O -static-stdlib "$work/hello.swift" -o "$work/hello" 2>/dev/null || die "could not build the hello-world baseline"
# The same hello-world linked as itsypad's release build is (whole, no dynamic loader): informational.
swiftc -O -static-executable "$work/hello.swift" -o "$work/hello-static" 2>/dev/null || die "could not build the static hello-world"
# What durability costs clip add: the hello-world plus, as clip add does, a line appended to each of two
# files in one directory, each made durable with fdatasync before the next. Informational, not a target.
cat >"$work/floor.swift" <<'SWIFT'
#if canImport(Glibc)
import Glibc
#endif
var buffer = [UInt8](repeating: 0, count: 65536)
var line: [UInt8] = []
while true {
    let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
    if count <= 0 { break }
    line += buffer[..<count]
}
line.append(10)
for name in ["first.log", "second.log"] {
    let fd = open(CommandLine.arguments[1] + "/" + name, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0, line.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == line.count, fdatasync(fd) == 0 else { exit(1) }
    close(fd)
}
print("hello")
SWIFT
swiftc -O -static-stdlib "$work/floor.swift" -o "$work/floor" 2>/dev/null || die "could not build the fdatasync floor baseline"
mkdir -p "$work/floor-files"


# What the timed runs of import and copies start from: the last run's result out of the way and the
# file system synced, so that no run pays for the writeback of the one before it.
# reset.sh PATH [TRASH]: PATH removed, or moved into TRASH when given. A tree of many files goes to
# TRASH: ext4 without a journal (as on the development machine) skips, at the cost of a lookup each,
# the inodes freed in the last minute (six while their inode table block is unwritten) when it
# allocates one, so after removing 10,000 files the next 10,000 creates took 2-7 s of system time
# instead of 0.5 (cp -r and import of the tabs), and more each round.
cat >"$work/reset.sh" <<'SH'
#!/usr/bin/env bash
set -euo pipefail
if [[ $# -eq 2 && -e $1 ]]; then mv "$1" "$(mktemp -d "$2/XXXXXX")/"; else rm -rf "$1"; fi
sync
SH
trash=$work/trash
mkdir -p "$trash"
# history.sh DIR: a new, empty history at DIR that takes every entry of the largest export. The last
# one is moved into the trash, as reset.sh does, not removed: with images it holds 10,000 files.
cat >"$work/history.sh" <<SH
#!/usr/bin/env bash
set -euo pipefail
if [[ -e \$1 ]]; then mv "\$1" "\$(mktemp -d $(q "$trash")/XXXXXX)/"; fi
$(q "$ITSYPAD") --data-dir "\$1" --quiet settings set clipboard.maxEntries 2000000
sync
SH

# --- Clips at every size ----------------------------------------------------------

# Every size's history and export stay until the scaling rounds and the few-millisecond rounds below
# have run, which take each command at every size in one round (about 0.6 GB at 1,000,000: its
# history 290 MB and export 210 MB, plus a 290 MB import in the scaling rounds).
for n in $SIZES; do
    step "Clips: $n entries"
    python3 "$repo_root/Tests/Benchmarks/generate.py" clips "$n" "$work"
    rm -f "$work/clipman-$n.json" "$work/ids-$n.txt"
    if [[ $n -ne $LARGE ]]; then rm -f "$work/lines-$n.jsonl"; fi
    dir=$work/clips-$n
    "$ITSYPAD" --data-dir "$dir" --quiet settings set clipboard.maxEntries 2000000
    "$ITSYPAD" --data-dir "$dir" --quiet import "$work/itsypad-$n.json"
    got=$("$ITSYPAD" --data-dir "$dir" clip ls | wc -l)
    [[ $got -eq $n ]] || die "the history holds $got entries after seeding, expected $n"
done
cp -a "$work/clips-$LARGE" "$work/clips-$LARGE-pristine"

# --- Targets at 100,000, interleaved with their baselines ----------------------------

# Every ratio target is the median of per-round ratios: a command and its baseline run in the same
# round (see paired.py), so load and disk state that change over minutes move both alike. Measured
# in separate hyperfine blocks minutes apart, their baselines moved by up to threefold between runs.
large=$work/clips-$LARGE
lines=$work/lines-$LARGE.jsonl
export_file=$work/itsypad-$LARGE.json
# With images, export's output is mostly their base64, which the lines file leaves out: export is
# measured against cat of the export file it was imported from (the same entries, the same form).
export_baseline=()
if [[ $IMAGES == 1 ]]; then export_baseline=(-n "cat (export file)" "cat $(q "$export_file")"); fi
step "Listing and search at $LARGE entries against cat and grep -ci: $RUNS interleaved rounds"
bench targets "$RUNS" 2 \
    -n "cat" "cat $(q "$lines")" "${export_baseline[@]}" \
    -n "clip ls" "$(it "$large") clip ls" \
    -n "clip ls --json" "$(it "$large") clip ls --json" \
    -n "export" "$(it "$large") export" \
    -n "grep -ci 9999" "grep -ci 9999 $(q "$lines")" \
    -n "clip ls --search 9999" "$(it "$large") clip ls --search 9999" \
    -n "grep -ci merge" "grep -ci merge $(q "$lines")" \
    -n "clip ls --search merge" "$(it "$large") clip ls --search merge"

step "Import of $LARGE clips against cp + fsync of the export: $RUNS interleaved rounds"
copy_file=$work/export-copy.json
bench import-target "$RUNS" 1 \
    -n "import $LARGE clips" --prepare "bash $(q "$work/history.sh") $(q "$work/import-target")" \
    "$(it "$work/import-target") --quiet import $(q "$export_file")" \
    -n "cp + fsync" --prepare "bash $(q "$work/reset.sh") $(q "$copy_file")" \
    "cp $(q "$export_file") $(q "$copy_file")" --then "sync $(q "$copy_file")"
rm -rf "$work/import-target" "$copy_file"

# --- Scaling ------------------------------------------------------------------------

# Each command at every size once a round, so that a step's ratio (1,000,000 / 100,000 ...) compares
# runs made moments apart. The rounds are few: at 1,000,000 one takes about 10 s.
step "Scaling: every command at every size, $SCALE_RUNS interleaved rounds"
scaling=()
for n in $SIZES; do
    dir=$work/clips-$n
    scaling+=(-n "ls @$n" "$(it "$dir") clip ls"
        -n "search 9999 @$n" "$(it "$dir") clip ls --search 9999"
        -n "search merge @$n" "$(it "$dir") clip ls --search merge"
        -n "json @$n" "$(it "$dir") clip ls --json"
        -n "export @$n" "$(it "$dir") export"
        -n "import @$n" --prepare "bash $(q "$work/history.sh") $(q "$work/import-$n")"
        "$(it "$work/import-$n") --quiet import $(q "$work/itsypad-$n.json")")
done
bench scaling "$SCALE_RUNS" 1 "${scaling[@]}"
for n in $SIZES; do rm -rf "$work/import-$n"; done

# --- Tabs -----------------------------------------------------------------------

for n in 100 10000; do
    step "Tabs: $n"
    python3 "$repo_root/Tests/Benchmarks/generate.py" tabs "$n" "$work"
    dir=$work/tabs-$n
    "$ITSYPAD" --data-dir "$dir" --quiet import "$work/tabs-$n.json"
    got=$("$ITSYPAD" --data-dir "$dir" tab ls | wc -l)
    [[ $got -eq $n ]] || die "$got tabs after seeding, expected $n"
done
step "Import of 10000 tabs against cp -r of their files: $TAB_RUNS interleaved rounds"
bench tab-import "$TAB_RUNS" 1 \
    -n "import 10000 tabs" --prepare "bash $(q "$work/reset.sh") $(q "$work/tab-import") $(q "$trash")" \
    "$(it "$work/tab-import") --quiet import $(q "$work/tabs-10000.json")" \
    -n "cp -r 10000 tab files" --prepare "bash $(q "$work/reset.sh") $(q "$work/tab-files") $(q "$trash")" \
    "cp -r $(q "$work/tabs-10000/tabs") $(q "$work/tab-files")"

# --- Few-millisecond commands, interleaved ---------------------------------------------

# Their targets are ratios of 2-10 ms commands, and the flatness of clip add and clip ls -n 20 from
# 1,000 to 1,000,000 entries: every size's history is still here, so one round takes each size.
step "Few-millisecond commands: $SMALL_RUNS interleaved rounds"
text_file=$work/text
small_commands=()
for n in $SIZES; do
    small_commands+=(-n "add @$n" --stdin "$text_file" "$(it "$work/clips-$n") clip add"
        -n "ls -n 20 @$n" "$(it "$work/clips-$n") clip ls -n 20"
        -n "json -n 20 @$n" "$(it "$work/clips-$n") clip ls --json -n 20")
done
for n in 100 10000; do
    prefix=$(sed -n "$((n / 2))p" "$work/tab-ids-$n.txt" | cut -c1-8)
    # Names in ASCII, Cyrillic and Chinese (generate.py names tab I by I modulo 3).
    third=$((n / 3 - n / 3 % 3))
    small_commands+=(-n "tab show NAME @$n" "$(it "$work/tabs-$n") tab show 'note $third'"
        -n "tab show Cyrillic NAME @$n" "$(it "$work/tabs-$n") tab show 'заметка $((third + 1))'"
        -n "tab show CJK NAME @$n" "$(it "$work/tabs-$n") tab show '笔记 $((third + 2))'"
        -n "tab show PREFIX @$n" "$(it "$work/tabs-$n") tab show $prefix"
        -n "tab ls @$n" "$(it "$work/tabs-$n") tab ls")
done
bench small "$SMALL_RUNS" 5 --fresh-text "$text_file" \
    -n "hello (stdin)" --stdin "$text_file" "$(q "$work/hello")" \
    -n "hello + 2 fdatasyncs (stdin)" --stdin "$text_file" "$(q "$work/floor") $(q "$work/floor-files")" \
    -n "hello (no input)" "$(q "$work/hello")" \
    -n "hello linked whole (no input)" "$(q "$work/hello-static")" \
    "${small_commands[@]}"
# --- At the cap (clip add evicting at clipboard.maxEntries) ------------------------------------------
# clip add on a history at its cap evicts the oldest entry with each add; it must cost what an add below
# the cap costs (<= 1.3x, median of per-round ratios, at 1,000 and 100,000 entries), and its peak memory at
# 100,000 stays under 16 MiB. Each size's history is copied twice: one with the cap above it (each round
# adds one entry), one with the cap at its size (each round adds one and evicts one).
cap_sizes=()
for n in 1000 $LARGE; do if [[ " $SIZES " == *" $n "* ]]; then cap_sizes+=("$n"); fi; done
step "clip add at the cap against below it (${cap_sizes[*]} entries): $SMALL_RUNS interleaved rounds"
cap_text=$work/cap-text
cap_commands=()
for n in "${cap_sizes[@]}"; do
    cp -a "$work/clips-$n" "$work/below-cap-$n"
    cp -a "$work/clips-$n" "$work/at-cap-$n"
    "$ITSYPAD" --data-dir "$work/at-cap-$n" --quiet settings set clipboard.maxEntries "$n"
    cap_commands+=(-n "add below the cap @$n" --stdin "$cap_text" "$(it "$work/below-cap-$n") clip add"
        -n "add at the cap @$n" --stdin "$cap_text" "$(it "$work/at-cap-$n") clip add")
done
bench at-cap "$SMALL_RUNS" 5 --fresh-text "$cap_text" "${cap_commands[@]}"
for n in "${cap_sizes[@]}"; do
    got=$("$ITSYPAD" --data-dir "$work/at-cap-$n" clip ls | wc -l)
    [[ $got -eq $n ]] || die "the history at its cap holds $got entries, expected $n"
done
printf 'command\tkib\tstatus\tlimit_kib\n' >"$results/at-cap-memory.tsv"
if [[ " ${cap_sizes[*]} " == *" $LARGE "* ]]; then
    printf 'one more at the cap' >"$cap_text"
    cap_status=0
    "$GNU_TIME" -f %M -o "$work/rss" "$ITSYPAD" --data-dir "$work/at-cap-$LARGE" clip add <"$cap_text" >/dev/null || cap_status=$?
    printf 'clip add at the cap @%s\t%s\t%s\t16384\n' "$LARGE" "$(tail -n 1 "$work/rss")" "$cap_status" >>"$results/at-cap-memory.tsv"
fi
for n in "${cap_sizes[@]}"; do rm -rf "$work/below-cap-$n" "$work/at-cap-$n"; done
# --- End of the at-the-cap block ---------------------------------------------------------------------

# The largest history stays for its peak memory, measured after the one at 100,000.
HUGE=1000000
for n in $SIZES; do
    if [[ $n -ne $LARGE && $n -ne $HUGE ]]; then rm -rf "$work/clips-$n" "$work/itsypad-$n.json"; fi
done

# --- Peak memory ------------------------------------------------------------------

step "Peak memory at $LARGE entries with a 16 MiB clip among them (clipboard.maxBytes at its default)"
mem_tsv=$results/memory.tsv
printf 'command\tkib\tstatus\tlimit_kib\n' >"$mem_tsv"
python3 - "$BIG_CLIP_BYTES" >"$work/big-clip" <<'PY2'
import sys
size = int(sys.argv[1])
unit = 'big clip line with "quotes", a tab\t, café and 日本\n'.encode()
data = (unit * (size // len(unit) + 1))[:size].decode(errors="ignore").encode()
sys.stdout.buffer.write(data + b"x" * (size - len(data)))
PY2
big_kib=$(( $(stat -c %s "$work/big-clip") / 1024 ))
# measure LABEL LIMIT_KIB STDIN CMD...: one run under GNU time, output discarded.
measure() {
    local label=$1 limit=$2 input=$3 status=0 kib
    shift 3
    "$GNU_TIME" -f %M -o "$work/rss" "$@" <"$input" >/dev/null 2>"$work/mem-stderr" || status=$?
    kib=$(tail -n 1 "$work/rss")
    printf '%s\t%s\t%s\t%s\n' "$label" "$kib" "$status" "$limit" >>"$mem_tsv"
    if [[ $status -ne 0 ]]; then sed 's/^/    /' "$work/mem-stderr" >&2; fi
}
mem=$work/mem
cp -a "$work/clips-$LARGE-pristine" "$mem"
measure "clip add (16 MiB clip)" $((big_kib * 3)) "$work/big-clip" "$ITSYPAD" --data-dir "$mem" clip add
for i in 1 2 3 4; do printf 'after the big clip %s' "$i" | "$ITSYPAD" --data-dir "$mem" clip add >/dev/null; done
measure "clip ls" 65536 /dev/null "$ITSYPAD" --data-dir "$mem" clip ls
measure "clip ls --json" 65536 /dev/null "$ITSYPAD" --data-dir "$mem" clip ls --json
measure "export" 65536 /dev/null "$ITSYPAD" --data-dir "$mem" export
measure "clip ls --search 9999" 65536 /dev/null "$ITSYPAD" --data-dir "$mem" clip ls --search 9999
cp -a "$mem" "$work/prune"
measure "clip prune --keep 10" 65536 /dev/null "$ITSYPAD" --data-dir "$work/prune" clip prune --keep 10
measure "clip clear" 65536 /dev/null "$ITSYPAD" --data-dir "$mem" clip clear
rm -rf "$work/import-mem"
"$ITSYPAD" --data-dir "$work/import-mem" --quiet settings set clipboard.maxEntries 2000000
measure "import (100,000 clips)" 65536 /dev/null "$ITSYPAD" --data-dir "$work/import-mem" --quiet import "$work/itsypad-$LARGE.json"
left=$("$ITSYPAD" --data-dir "$work/prune" clip ls | wc -l)
[[ $left -eq 10 ]] || die "prune left $left entries, expected 10"

# Peak memory at 1,000,000 entries (when SIZES has it): what walks the whole history streams it.
if [[ -d $work/clips-$HUGE ]]; then
    step "Peak memory at $HUGE entries"
    huge=$work/clips-$HUGE
    measure "clip ls --json @1M" 65536 /dev/null "$ITSYPAD" --data-dir "$huge" clip ls --json
    measure "export @1M" 65536 /dev/null "$ITSYPAD" --data-dir "$huge" export
    rm -rf "$work/import-huge"
    "$ITSYPAD" --data-dir "$work/import-huge" --quiet settings set clipboard.maxEntries 2000000
    measure "import @1M" 65536 /dev/null "$ITSYPAD" --data-dir "$work/import-huge" --quiet import "$work/itsypad-$HUGE.json"
    rm -rf "$work/import-huge" "$work/itsypad-$HUGE.json"
    measure "clip prune --keep 900000 @1M" 65536 /dev/null "$ITSYPAD" --data-dir "$huge" clip prune --keep 900000
    rm -rf "$huge"
fi

fi

# --- Summary ----------------------------------------------------------------------

step "Summary"
machine="$(nproc) cores, $(uname -srm), load $(cut -d' ' -f1-3 /proc/loadavg); $("$ITSYPAD" --version)"
status=0
python3 - "$results" "$SIZES" "$LARGE" "$machine" "$((SECONDS - started))" "$SCRIPTS" "$SCRIPTS_ONLY" "$IMAGES" <<'PY' | tee "$results/summary.txt" || status=$?
import itertools, json, os, statistics, sys
res, sizes, large, machine, seconds = sys.argv[1], [int(s) for s in sys.argv[2].split()], int(sys.argv[3]), sys.argv[4], sys.argv[5]
scripts, scripts_only, images = sys.argv[6].split(), bool(sys.argv[7]), sys.argv[8] == "1"
export_base = "cat (export file)" if images else "cat"
med, rounds, run_of = {}, {}, {}
for run in ([] if scripts_only else ["targets", "import-target", "scaling", "tab-import", "small", "at-cap"]) + [f"script-{s}" for s in scripts]:
    for r in json.load(open(f"{res}/{run}.json"))["results"]:
        assert r["command"] not in run_of, f"{r['command']!r} measured twice"
        med[r["command"]], rounds[r["command"]], run_of[r["command"]] = r["median"], r["times"], run

def ratios(a, b):
    """a / b round by round: both from one interleaved run (times in round order)."""
    assert run_of[a] == run_of[b], f"{a!r} and {b!r} are not from one run"
    return [x / y for x, y in zip(rounds[a], rounds[b])]

def paired(a, b):
    return statistics.median(ratios(a, b))

def ms(s): return f"{s * 1000:9.1f} ms"
L = f"@{large}"
# (name, ratio, bound, per-round ratios or None)
targets = []
def target(name, a, b, bound):
    targets.append((name, paired(a, b), bound, ratios(a, b)))
print(f"listing-bench: {machine}; {seconds} s")
if not scripts_only:
    print()
    print(f"{'median wall time':28}" + "".join(f"{n:>14,}" for n in sizes))
    rows = ["add", "ls", "ls -n 20", "json -n 20", "search 9999", "search merge", "json", "export", "import"]
    for row in rows:
        print(f"{row:28}" + "".join(f"{ms(med[f'{row} @{n}']):>14}" for n in sizes))
    print("(add, ls -n 20 and json -n 20: the few-millisecond rounds; the rest: the scaling rounds)")
    print()
    print(f"{'interleaved with baselines':36}{'median':>12}{'min':>12}")
    for name in ["cat"] + [export_base] * images + ["clip ls", "clip ls --json", "export", "grep -ci 9999", "clip ls --search 9999", "grep -ci merge",
                 "clip ls --search merge", f"import {large} clips", "cp + fsync", "import 10000 tabs", "cp -r 10000 tab files",
                 "hello (stdin)", "hello + 2 fdatasyncs (stdin)", "hello (no input)", "hello linked whole (no input)",
                 "tab show NAME @100", "tab show NAME @10000", "tab show Cyrillic NAME @100", "tab show Cyrillic NAME @10000",
                 "tab show CJK NAME @100", "tab show CJK NAME @10000", "tab show PREFIX @100", "tab show PREFIX @10000",
                 "tab ls @100", "tab ls @10000"]:
        print(f"{name:36}{ms(med[name]):>12}{ms(min(rounds[name])):>12}")

    target(f"clip ls {L} / cat", "clip ls", "cat", 10.0)
    target(f"search 9999 {L} / grep -ci", "clip ls --search 9999", "grep -ci 9999", 3.0)
    target(f"search merge {L} / grep -ci", "clip ls --search merge", "grep -ci merge", 3.0)
    target(f"clip ls --json {L} / cat", "clip ls --json", "cat", 15.0)
    target(f"export {L} / {export_base}", "export", export_base, 15.0)
    target(f"import {L} / (cp + fsync)", f"import {large} clips", "cp + fsync", 10.0)
    target("tab show NAME @10k / @100", "tab show NAME @10000", "tab show NAME @100", 1.3)
    target("tab show Cyrillic NAME @10k / @100", "tab show Cyrillic NAME @10000", "tab show Cyrillic NAME @100", 1.3)
    target("tab show CJK NAME @10k / @100", "tab show CJK NAME @10000", "tab show CJK NAME @100", 1.3)
    target("tab show PREFIX @10k / @100", "tab show PREFIX @10000", "tab show PREFIX @100", 1.3)
    target("tab ls @10k / @100", "tab ls @10000", "tab ls @100", 1.3)
    target("import 10k tabs / cp -r", "import 10000 tabs", "cp -r 10000 tab files", 3.0)
    target(f"clip add {L} / hello (stdin)", f"add {L}", "hello (stdin)", 1.3)
    target(f"clip ls -n 20 {L} / hello", f"ls -n 20 {L}", "hello (no input)", 1.3)
    # A listing reads only what it prints: 20 entries of 1,000,000 cost what 20 of 1,000 do.
    if 1000 in sizes and 1000000 in sizes:
        for row in ("ls -n 20", "json -n 20"):
            target(f"clip {row.replace('json', 'ls --json')} @1M / @1k", f"{row} @1000000", f"{row} @1000", 1.3)
    target("tab show NAME @10k / hello", "tab show NAME @10000", "hello (no input)", 1.3)
    # At the cap (see its block above): an add that evicts costs what one below the cap does.
    for n in sizes:
        if f"add at the cap @{n}" in med:
            target(f"clip add at the cap @{n:,} / below it", f"add at the cap @{n}", f"add below the cap @{n}", 1.3)
    # Scaling, each from one interleaved run: add and ls -n 20 flat (the largest ratio between two sizes,
    # each the median of its per-round ratios), the rest at most linear (each 10x step within 15x).
    # (With one size in SIZES there is no step to compare.)
    for row in rows if len(sizes) > 1 else []:
        if row in ("add", "ls -n 20", "json -n 20"):
            value, a, b = max((paired(f"{row} @{a}", f"{row} @{b}"), a, b) for a, b in itertools.permutations(sizes, 2))
            targets.append((f"scaling {row}: flat, max/min ({a:,}/{b:,})", value, 1.5, ratios(f"{row} @{a}", f"{row} @{b}")))
        else:
            value, a, b = max((paired(f"{row} @{b}", f"{row} @{a}") * (a * 10 / b), a, b) for a, b in zip(sizes, sizes[1:]))
            scale = a * 10 / b
            targets.append((f"scaling {row}: linear, worst 10x step", value, 15.0, [r * scale for r in ratios(f"{row} @{b}", f"{row} @{a}")]))
    # Informational, not targets: the floor that durability sets for clip add (two fdatasyncs in a row), and the
    # small commands against a hello-world linked as itsypad is (whole: no dynamic loader in either).
    floor_name, whole = "hello + 2 fdatasyncs (stdin)", "hello linked whole (no input)"
    print()
    print(f"{'not targets (median of per-round ratios)':48} {'ratio':>8}")
    for name, value in [
        ("2 fdatasyncs floor / hello", paired(floor_name, "hello (stdin)")),
        ("clip add / 2 fdatasyncs floor", paired(f"add {L}", floor_name)),
        ("hello linked whole / hello", paired(whole, "hello (no input)")),
        ("clip ls -n 20 / hello linked whole", paired(f"ls -n 20 {L}", whole)),
        ("tab show NAME @10k / hello linked whole", paired("tab show NAME @10000", whole)),
        (f"ratio of medians: clip ls {L} / cat", med["clip ls"] / med["cat"]),
    ] + [(f"export {L} / cat (texts only)", paired("export", "cat"))] * images + [
        (f"ratio of medians: search merge {L} / grep -ci", med["clip ls --search merge"] / med["grep -ci merge"]),
    ]:
        print(f"{name:48} {value:>7.2f}x")
print()
print(f"{'every script @' + format(large, ','):36}{'median':>12}{'min':>12}")
for script in scripts:
    for what in ["cat", "clip ls", "clip ls --json", "export", "grep -ci lower", "search lower", "grep -ci upper", "search upper"]:
        name = f"{script}: {what}"
        print(f"{name:36}{ms(med[name]):>12}{ms(min(rounds[name])):>12}")
    for what, base, bound in [("clip ls", "cat", 10.0), ("clip ls --json", "cat", 15.0), ("export", "cat", 15.0),
                              ("search lower", "grep -ci lower", 3.0), ("search upper", "grep -ci upper", 3.0)]:
        target(f"{script}: {what} {L} / {base}", f"{script}: {what}", f"{script}: {base}", bound)
failed = 0
print()
print("target: the median of per-round ratios (a command and its baseline in the same round); their spread:")
print(f"{'target':54} {'ratio':>8} {'needed':>8}  {'result':6} {'rounds':>6} {'min':>7} {'max':>7} {'stddev':>7}")
for name, value, bound, series in targets:
    ok = value <= bound
    failed += not ok
    spread = f"{len(series):>6} {min(series):>7.2f} {max(series):>7.2f} {statistics.pstdev(series):>7.2f}"
    print(f"{name:54} {value:>7.2f}x {'<= ' + format(bound, 'g') + 'x':>8}  {'PASS' if ok else 'FAIL':6} {spread}")
print()
print(f"{'peak memory (max RSS)':54} {'MiB':>8} {'limit':>8}  result")
# (SCRIPTS_ONLY measures no memory.)
memory = [f"{res}/{name}" for name in ("memory.tsv", "at-cap-memory.tsv") if os.path.exists(f"{res}/{name}")]
for line in [row for path in memory for row in open(path).read().splitlines()[1:]]:
    label, kib, code, limit = line.split("\t")
    kib, code, limit = int(kib), int(code), int(limit)
    ok = code == 0 and kib <= limit
    failed += not ok
    print(f"{label:54} {kib / 1024:>8.1f} {limit / 1024:>8.1f}  {'PASS' if ok else 'FAIL' + ('' if code == 0 else f' (exit {code})')}")
print()
print("all targets met" if failed == 0 else f"{failed} target(s) not met")
sys.exit(1 if failed else 0)
PY
if [[ -n $BENCH_OUT ]]; then printf '\nresults kept in %s\n' "$BENCH_OUT" >&2; fi
exit "$status"
