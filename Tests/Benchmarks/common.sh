# shellcheck shell=bash
# shellcheck disable=SC2154 # repo_root and BENCH_NAME come from the sourcing script
# shellcheck disable=SC2034 # idle_ticks, hertz and idle_percent are read by the sourcing script
# Shared by the benchmark scripts: messages, the itsypad binary check, the scratch directory,
# latency and idle CPU readings and the targets' verdicts. Set repo_root and BENCH_NAME before
# sourcing; make_work sets $work and $results.

# The binary measured, never built here, and where results are kept (none: a temporary directory).
ITSYPAD=${ITSYPAD:-$repo_root/.build/release/itsypad}
BENCH_OUT=${BENCH_OUT:-}

die() { printf '%s: %s\n' "$BENCH_NAME" "$*" >&2; exit 2; }
step() { printf '\n==> %s\n' "$*" >&2; }

# Exits with build instructions when $ITSYPAD is missing; makes it absolute.
require_itsypad() {
    if [[ ! -x $ITSYPAD ]]; then
        cat >&2 <<MSG
$BENCH_NAME: no itsypad binary at $ITSYPAD
Build it first (this script builds nothing):
    cd $repo_root && swift build -c release --static-swift-stdlib
or point ITSYPAD at a binary:
    ITSYPAD=/path/to/itsypad $0
MSG
        exit 2
    fi
    case $ITSYPAD in /*) ;; *) ITSYPAD=$PWD/$ITSYPAD ;; esac
}

# A scratch directory removed on exit, and where results are kept.
make_work() {
    work=$(mktemp -d "${TMPDIR:-/tmp}/$BENCH_NAME.XXXXXX")
    # shellcheck disable=SC2064 # expand now: $work is fixed from here on
    trap "rm -rf '$work'" EXIT
    results=${BENCH_OUT:-$work/results}
    mkdir -p "$results"
}

# The exit status: 1 once a target failed.
status=0
# target LINE COMMAND...: appends LINE and its verdict to the summary: "pass" when COMMAND
# succeeds, else "FAIL" (and the exit status becomes 1). Runs in this shell, never in $(...).
target() {
    local line=$1
    shift
    if "$@"; then line+=": pass"; else line+=": FAIL"; status=1; fi
    echo "$line" | tee -a "$results/summary.txt"
}
# below VALUE LIMIT: whether VALUE < LIMIT (decimals); at_most VALUE LIMIT: VALUE <= LIMIT.
below() { awk -v v="$1" -v l="$2" 'BEGIN { exit !(v < l) }'; }
at_most() { awk -v v="$1" -v l="$2" 'BEGIN { exit !(v <= l) }'; }

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
# sample_latency FILE LIMIT_MS TEXT ACT SEEN: runs `ACT TEXT`, then `SEEN TEXT` every 10 ms until it
# succeeds, and appends the milliseconds from just before ACT to FILE; returns 1 after LIMIT_MS.
sample_latency() {
    local file=$1 limit_ms=$2 text=$3 act=$4 seen=$5 start
    start=$(now_ms)
    "$act" "$text"
    until "$seen" "$text"; do
        (($(now_ms) - start < limit_ms)) || return 1
        sleep 0.01
    done
    echo $(($(now_ms) - start)) >>"$file"
}
# median_and_worst FILE: the median and the largest of FILE's numbers, one a line.
median_and_worst() {
    sort -n "$1" | awk '{ v[NR] = $1 } END { print ((NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[NR] }'
}

# utime + stime of a process and its children, in clock ticks.
ticks() {
    local total=0 pid
    for pid in "$1" $(pgrep -P "$1" || true); do
        total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    echo "$total"
}
# idle_cpu PID: the CPU a process and its children use over IDLE_SECONDS, in clock ticks (idle_ticks,
# hertz a second) and in percent of one core (idle_percent).
idle_cpu() {
    local before
    before=$(ticks "$1")
    sleep "$IDLE_SECONDS"
    idle_ticks=$(($(ticks "$1") - before))
    hertz=$(getconf CLK_TCK)
    idle_percent=$(awk -v t="$idle_ticks" -v hz="$hertz" -v s="$IDLE_SECONDS" 'BEGIN { printf "%.3f", 100 * t / hz / s }')
}
