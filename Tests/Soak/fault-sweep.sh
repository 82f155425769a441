#!/usr/bin/env bash
# fault-sweep.sh: the fault injection test (FaultInjectionTests) over every case, or over a larger
# sample than `swift test` runs: a crash (SIGKILL) before, or ENOSPC or EIO at, each call of fsync,
# fdatasync, rename(at/at2), unlink(at), (f)truncate, write, pwrite64 and creating openat of each
# command that changes data (see FaultCommand.all in Tests/ItsypadKitTests/EndToEnd/FaultInjection.swift).
#
# Usage: Tests/Soak/fault-sweep.sh
# Environment:
#   CASES  how many cases, or "all" (default all; `swift test` runs 16)
#   SEED   the seed that draws a sample (default 39, as `swift test`)
# Exit status: 0 when every case holds, 1 when one does not (the case and what it left are printed).
# Needs strace. Every case takes about two seconds on a debug build.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo_root"

command -v strace >/dev/null || { echo "fault-sweep.sh: strace is not installed" >&2; exit 1; }
swift build --build-tests
export ITSYPAD_FAULT_CASES=${CASES:-all}
export ITSYPAD_FAULT_SEED=${SEED:-39}
swift test --skip-build --filter 'FaultInjectionTests/faultsAtSystemCalls'
