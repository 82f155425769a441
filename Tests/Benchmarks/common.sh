# shellcheck shell=bash
# shellcheck disable=SC2154 # repo_root and BENCH_NAME come from the sourcing script
# Shared by the benchmark scripts: messages, the itsypad binary check and the
# scratch directory. Set repo_root and BENCH_NAME before sourcing; sets $work and $results.

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
