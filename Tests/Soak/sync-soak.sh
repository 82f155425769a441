#!/usr/bin/env bash
# sync-soak.sh: the randomized multi-device sync test (RandomSyncSimulation) over
# many more seeds than `swift test` runs, for an occasional longer check.
#
# Usage: Tests/Soak/sync-soak.sh
# Environment:
#   SEEDS    how many seeds (default 500)
#   FIRST    the first seed (default 1000; `swift test` runs 1-100)
#   STEPS    operations per seed (default 150)
#   DEVICES  devices sharing the backend (default 3)
#   BACKEND  only this backend ("format 1", "in memory", "format 1, encrypted", "format 2", or
#            "format 2, replicated folder": each device on its own copy kept by the replication
#            simulator; default all)
# Exit status: 0 when every seed passes, 1 when one fails (its seed, what the
# oracle found and the operations that led there are printed).
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo_root"

swift build --build-tests
export ITSYPAD_SOAK_SEEDS=${SEEDS:-500}
export ITSYPAD_SOAK_FIRST=${FIRST:-1000}
export ITSYPAD_SOAK_STEPS=${STEPS:-150}
export ITSYPAD_SOAK_DEVICES=${DEVICES:-3}
if [ -n "${BACKEND:-}" ]; then export ITSYPAD_SOAK_BACKEND=$BACKEND; fi
echo "seeds $ITSYPAD_SOAK_FIRST..$((ITSYPAD_SOAK_FIRST + ITSYPAD_SOAK_SEEDS - 1)), $ITSYPAD_SOAK_STEPS steps, $ITSYPAD_SOAK_DEVICES devices"
swift test --skip-build --filter SyncSoakTests
