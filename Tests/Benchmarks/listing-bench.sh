#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# listing-bench.sh: what reads many entries — listing, searching, --json,
# export, import, tab lookups — against plain tools on the same data in one
# run, plus a scaling table from 1,000 to 1,000,000 clips and peak memory.
# Targets (ratios of medians in this run):
#
#   clip ls @100k                     <= 10x  cat of the same entries as JSON lines
#   clip ls --search WORD @100k       <=  3x  grep -ci WORD of that file (9999, merge)
#   clip ls --json, export @100k      <= 15x  cat
#   import of 100k clips              <= 10x  cp of the export file + one fsync
#   tab show NAME|PREFIX, tab ls @10k <= 1.3x the same @100 tabs
#   import of 10k tabs                <=  3x  cp -r of the 10k tab files
#   clip add, clip ls -n 20, tab show <= 1.3x a static hello-world reading the same stdin
#   (informational, not targets: clip add against the hello-world plus two fdatasyncs, what durability costs;
#   clip ls -n 20 and tab show against the hello-world linked whole, as itsypad's release build is)
#   (the few-millisecond ratios above, tab and hello-world: interleaved runs, median of the per-round ratios)
#   scaling 1k..1M: add flat (max/min <= 1.5), the rest at most linear (each 10x step <= 15x)
#   peak memory @100k with a 16 MiB clip: ls, ls --json, export, prune, clear < 64 MiB;
#   clip add of the 16 MiB clip <= 3x its size
#
# Usage: Tests/Benchmarks/listing-bench.sh
# Environment:
#   ITSYPAD    itsypad binary (default: <repo>/.build/release/itsypad); never built here
#   SIZES      history sizes for the scaling table (default "1000 10000 100000 1000000")
#   RUNS       hyperfine runs per command (default 10; 3 at 1,000,000 but for clip ls -n 20)
#   SMALL_RUNS rounds of the interleaved few-millisecond commands (default 60, after 5 warm-up rounds)
#   BENCH_OUT  directory to keep the hyperfine JSON, memory TSV and summary in
# Exit status: 0 when every target passes, 1 when one fails, 2 on a setup error.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ITSYPAD=${ITSYPAD:-$repo_root/.build/release/itsypad}
SIZES=${SIZES:-"1000 10000 100000 1000000"}
RUNS=${RUNS:-10}
SMALL_RUNS=${SMALL_RUNS:-60}
BENCH_OUT=${BENCH_OUT:-}
GNU_TIME=/usr/bin/time
LARGE=100000
BIG_CLIP_BYTES=$((16 << 20))

BENCH_NAME=listing-bench
# shellcheck source=common.sh
source "$repo_root/Tests/Benchmarks/common.sh"

require_itsypad
command -v hyperfine >/dev/null || die "hyperfine not found (apt-get install -y hyperfine)"
command -v python3 >/dev/null || die "python3 not found"
command -v swiftc >/dev/null || die "swiftc not found (the Swift toolchain builds the hello-world baseline)"
[[ -x $GNU_TIME ]] || die "$GNU_TIME not found (apt-get install -y time)"
make_work
started=$SECONDS

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

runs_for() { if [[ $1 -ge 1000000 ]]; then echo 3; else echo "$RUNS"; fi; }
# bench NAME RUNS [hyperfine options] -- commands are named "label" "command" pairs after --
bench() {
    local name=$1 runs=$2
    shift 2
    hyperfine --style basic -N --output=pipe --warmup 1 --runs "$runs" --export-json "$results/$name.json" "$@" >/dev/null
}
it() { printf '%q --data-dir %q' "$ITSYPAD" "$1"; }

# --- Clips at every size ----------------------------------------------------------

text_file=$work/text
prepare_text="printf 'bench entry %s %s' \"\$EPOCHREALTIME\" \"\$RANDOM\" > $(printf %q "$text_file")"
for n in $SIZES; do
    step "Clips: $n entries"
    python3 "$repo_root/Tests/Benchmarks/generate.py" clips "$n" "$work"
    dir=$work/clips-$n
    "$ITSYPAD" --data-dir "$dir" --quiet settings set clipboard.maxEntries 2000000
    "$ITSYPAD" --data-dir "$dir" --quiet import "$work/itsypad-$n.json"
    got=$("$ITSYPAD" --data-dir "$dir" clip ls | wc -l)
    [[ $got -eq $n ]] || die "the history holds $got entries after seeding, expected $n"
    cp -a "$dir" "$dir-pristine"
    runs=$(runs_for "$n")
    bench "read-$n" "$runs" \
        -n "ls @$n" "$(it "$dir") clip ls" \
        -n "search 9999 @$n" "$(it "$dir") clip ls --search 9999" \
        -n "search merge @$n" "$(it "$dir") clip ls --search merge" \
        -n "json @$n" "$(it "$dir") clip ls --json" \
        -n "export @$n" "$(it "$dir") export"
    # A few milliseconds at every size: $RUNS runs even at 1,000,000 (three runs of a command this short
    # are noise on a shared machine, and the flatness check compares them).
    bench "latest-$n" "$RUNS" -n "ls -n 20 @$n" "$(it "$dir") clip ls -n 20"
    hyperfine --style basic --shell=bash --output=pipe --warmup 1 --runs "$runs" --prepare "$prepare_text" \
        --export-json "$results/add-$n.json" -n "add @$n" "$(it "$dir") clip add < $(printf %q "$text_file")" >/dev/null
    import_dir=$work/import-$n
    prepare_import="rm -rf $(printf %q "$import_dir") && $(it "$import_dir") --quiet settings set clipboard.maxEntries 2000000"
    hyperfine --style basic --shell=bash --output=pipe --warmup 0 --runs "$(( runs < 5 ? 2 : 3 ))" --prepare "$prepare_import" \
        --export-json "$results/import-$n.json" -n "import @$n" "$(it "$import_dir") --quiet import $(printf %q "$work/itsypad-$n.json")" >/dev/null
    rm -rf "$import_dir"
    if [[ $n -ne $LARGE ]]; then rm -rf "$dir" "$work/itsypad-$n.json" "$work/clipman-$n.json"; fi
done
[[ -d $work/clips-$LARGE ]] || die "SIZES must include $LARGE (the targets are set at 100,000 entries)"

step "Baselines on the same $LARGE entries"
lines=$work/lines-$LARGE.jsonl
copy_dir=$work/copy
mkdir -p "$copy_dir"
bench baselines "$RUNS" \
    -n "cat" "cat $(printf %q "$lines")" \
    -n "grep -ci 9999" "grep -ci 9999 $(printf %q "$lines")" \
    -n "grep -ci merge" "grep -ci merge $(printf %q "$lines")"
hyperfine --style basic --shell=bash --output=pipe --warmup 1 --runs "$RUNS" --prepare "rm -f $(printf %q "$copy_dir/export.json")" \
    --export-json "$results/copy.json" \
    -n "cp + fsync" "cp $(printf %q "$work/itsypad-$LARGE.json") $(printf %q "$copy_dir/export.json") && sync $(printf %q "$copy_dir/export.json")" >/dev/null

# --- Tabs -----------------------------------------------------------------------

for n in 100 10000; do
    step "Tabs: $n"
    python3 "$repo_root/Tests/Benchmarks/generate.py" tabs "$n" "$work"
    dir=$work/tabs-$n
    "$ITSYPAD" --data-dir "$dir" --quiet import "$work/tabs-$n.json"
    got=$("$ITSYPAD" --data-dir "$dir" tab ls | wc -l)
    [[ $got -eq $n ]] || die "$got tabs after seeding, expected $n"
done
import_dir=$work/tab-import
files_dir=$work/tab-files
hyperfine --style basic --shell=bash --output=pipe --warmup 1 --runs 5 \
    --prepare "rm -rf $(printf %q "$import_dir") $(printf %q "$files_dir") && sync" --export-json "$results/tab-import.json" \
    -n "import 10000 tabs" "$(it "$import_dir") --quiet import $(printf %q "$work/tabs-10000.json")" \
    -n "cp -r 10000 tab files" "cp -r $(printf %q "$work/tabs-10000/tabs") $(printf %q "$files_dir")" >/dev/null

# --- Few-millisecond commands, interleaved ---------------------------------------------

# Their targets are ratios of 2-10 ms commands: every round runs each command once (see paired.py), and a
# ratio is the median of the per-round ratios, so load that comes and goes moves both sides alike.
step "Few-millisecond commands: $SMALL_RUNS interleaved rounds"
tab_commands=()
for n in 100 10000; do
    prefix=$(sed -n "$((n / 2))p" "$work/tab-ids-$n.txt" | cut -c1-8)
    tab_commands+=(-n "tab show NAME @$n" "$(it "$work/tabs-$n") tab show 'note $((n / 3))'"
        -n "tab show PREFIX @$n" "$(it "$work/tabs-$n") tab show $prefix"
        -n "tab ls @$n" "$(it "$work/tabs-$n") tab ls")
done
python3 "$repo_root/Tests/Benchmarks/paired.py" --runs "$SMALL_RUNS" --warmup 5 --export-json "$results/small.json" \
    --fresh-text "$text_file" \
    -n "clip add @$LARGE (interleaved)" --stdin "$text_file" "$(it "$work/clips-$LARGE") clip add" \
    -n "hello (stdin)" --stdin "$text_file" "$work/hello" \
    -n "hello + 2 fdatasyncs (stdin)" --stdin "$text_file" "$(printf '%q %q' "$work/floor" "$work/floor-files")" \
    -n "ls -n 20 @$LARGE (interleaved)" "$(it "$work/clips-$LARGE") clip ls -n 20" \
    -n "hello (no input)" "$work/hello" \
    -n "hello linked whole (no input)" "$work/hello-static" \
    "${tab_commands[@]}"

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

# --- Summary ----------------------------------------------------------------------

step "Summary"
machine="$(nproc) cores, $(uname -srm), load $(cut -d' ' -f1-3 /proc/loadavg); $("$ITSYPAD" --version); $(hyperfine --version)"
status=0
python3 - "$results" "$SIZES" "$LARGE" "$machine" "$((SECONDS - started))" <<'PY' | tee "$results/summary.txt" || status=$?
import glob, json, statistics, sys
res, sizes, large, machine, seconds = sys.argv[1], [int(s) for s in sys.argv[2].split()], int(sys.argv[3]), sys.argv[4], sys.argv[5]
med, rounds = {}, {}
for path in glob.glob(f"{res}/*.json"):
    for r in json.load(open(path))["results"]:
        med[r["command"]] = r["median"]
        rounds[r["command"]] = r["times"]

def paired(a, b):
    """The median of a/b over the rounds of an interleaved run (times in round order)."""
    return statistics.median(x / y for x, y in zip(rounds[a], rounds[b]))

def ms(s): return f"{s * 1000:9.1f} ms"
L = f"@{large}"
print(f"listing-bench: {machine}; {seconds} s")
print()
print(f"{'median wall time':28}" + "".join(f"{n:>14,}" for n in sizes))
rows = ["add", "ls", "ls -n 20", "search 9999", "search merge", "json", "export", "import"]
for row in rows:
    print(f"{row:28}" + "".join(f"{ms(med[f'{row} @{n}']):>14}" for n in sizes))
print()
for name in ["cat", "grep -ci 9999", "grep -ci merge", "cp + fsync", "import 10000 tabs", "cp -r 10000 tab files"]:
    print(f"{name:28}{ms(med[name]):>14}")
print()
print(f"{'interleaved (see paired.py)':36}{'median':>12}{'min':>12}")
for name in [f"clip add {L} (interleaved)", "hello (stdin)", "hello + 2 fdatasyncs (stdin)", f"ls -n 20 {L} (interleaved)", "hello (no input)", "hello linked whole (no input)",
             "tab show NAME @100", "tab show NAME @10000", "tab show PREFIX @100", "tab show PREFIX @10000",
             "tab ls @100", "tab ls @10000"]:
    print(f"{name:36}{ms(med[name]):>12}{ms(min(rounds[name])):>12}")

targets = [
    (f"clip ls {L} / cat", med[f"ls {L}"] / med["cat"], 10.0),
    (f"search 9999 {L} / grep -ci", med[f"search 9999 {L}"] / med["grep -ci 9999"], 3.0),
    (f"search merge {L} / grep -ci", med[f"search merge {L}"] / med["grep -ci merge"], 3.0),
    (f"clip ls --json {L} / cat", med[f"json {L}"] / med["cat"], 15.0),
    (f"export {L} / cat", med[f"export {L}"] / med["cat"], 15.0),
    (f"import {L} / (cp + fsync)", med[f"import {L}"] / med["cp + fsync"], 10.0),
    ("tab show NAME @10k / @100 (paired)", paired("tab show NAME @10000", "tab show NAME @100"), 1.3),
    ("tab show PREFIX @10k / @100 (paired)", paired("tab show PREFIX @10000", "tab show PREFIX @100"), 1.3),
    ("tab ls @10k / @100 (paired)", paired("tab ls @10000", "tab ls @100"), 1.3),
    ("import 10k tabs / cp -r", med["import 10000 tabs"] / med["cp -r 10000 tab files"], 3.0),
    (f"clip add {L} / hello (stdin) (paired)", paired(f"clip add {L} (interleaved)", "hello (stdin)"), 1.3),
    (f"clip ls -n 20 {L} / hello (paired)", paired(f"ls -n 20 {L} (interleaved)", "hello (no input)"), 1.3),
    ("tab show NAME @10k / hello (paired)", paired("tab show NAME @10000", "hello (no input)"), 1.3),
]
# Scaling: add stays flat; everything else grows at most linearly (each 10x step within 15x).
for row in rows:
    times = [med[f"{row} @{n}"] for n in sizes]
    if row in ("add", "ls -n 20"):
        targets.append((f"scaling {row}: flat, max/min", max(times) / min(times), 1.5))
    else:
        steps = [b / a * (sizes[i] * 10 / sizes[i + 1]) for i, (a, b) in enumerate(zip(times, times[1:]))]
        targets.append((f"scaling {row}: linear, worst 10x step", max(steps), 15.0))
# Informational, not targets: the floor that durability sets for clip add (two fdatasyncs in a row), and the
# small commands against a hello-world linked as itsypad is (whole: no dynamic loader in either).
floor_name, whole = "hello + 2 fdatasyncs (stdin)", "hello linked whole (no input)"
print()
print(f"{'not targets':48} {'ratio':>8}")
for name, value in [
    ("2 fdatasyncs floor / hello (paired)", paired(floor_name, "hello (stdin)")),
    ("clip add / 2 fdatasyncs floor (paired)", paired(f"clip add {L} (interleaved)", floor_name)),
    ("hello linked whole / hello (paired)", paired(whole, "hello (no input)")),
    ("clip ls -n 20 / hello linked whole (paired)", paired(f"ls -n 20 {L} (interleaved)", whole)),
    ("tab show NAME @10k / hello linked whole (paired)", paired("tab show NAME @10000", whole)),
]:
    print(f"{name:48} {value:>7.2f}x")
failed = 0
print()
print(f"{'target':44} {'ratio':>8} {'needed':>8}  result")
for name, value, bound in targets:
    ok = value <= bound
    failed += not ok
    print(f"{name:44} {value:>7.2f}x {'<= ' + format(bound, 'g') + 'x':>8}  {'PASS' if ok else 'FAIL'}")
print()
print(f"{'peak memory (max RSS)':44} {'MiB':>8} {'limit':>8}  result")
for line in open(f"{res}/memory.tsv").read().splitlines()[1:]:
    label, kib, code, limit = line.split("\t")
    kib, code, limit = int(kib), int(code), int(limit)
    ok = code == 0 and kib <= limit
    failed += not ok
    print(f"{label:44} {kib / 1024:>8.1f} {limit / 1024:>8.1f}  {'PASS' if ok else 'FAIL' + ('' if code == 0 else f' (exit {code})')}")
print()
print("all targets met" if failed == 0 else f"{failed} target(s) not met")
sys.exit(1 if failed else 0)
PY
if [[ -n $BENCH_OUT ]]; then printf '\nresults kept in %s\n' "$BENCH_OUT" >&2; fi
exit "$status"
