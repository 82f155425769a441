#!/usr/bin/env bash
# first-push-sweep.sh: the first-push kill test (FirstPushTests/killedAtRandomPoints) with more
# kills of a larger push than `swift test` runs: a sender's first push of CLIPS clips (2,500: a
# batch of the backend's 2,000 and a smaller one), killed at KILLS random system calls, each on its
# own copy; after each kill the next sync must finish the push and a joining device get every clip
# exactly once.
#
# Usage: Tests/Soak/first-push-sweep.sh
# Environment:
#   KILLS  kills that must land (default 200; `swift test` runs 50)
#   CLIPS  clips of the push (default 2500; `swift test` pushes 300)
#   SEED   the seed that draws the kill points (default 36, as `swift test`)
#   KIND   `clips` (default) or `tabs`: what the push sends (CLIPS items of it); for tabs the next
#          sync must also leave every tab with its tag on both devices (the tag store, sync/tab-tags)
# Exit status: 0 when every kill holds, 1 when one does not (the kill point is printed).
# Needs strace.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo_root"

command -v strace >/dev/null || { echo "first-push-sweep.sh: strace is not installed" >&2; exit 1; }
swift build --build-tests
export ITSYPAD_FIRST_PUSH_KILLS=${KILLS:-200}
export ITSYPAD_FIRST_PUSH_CLIPS=${CLIPS:-2500}
export ITSYPAD_FIRST_PUSH_SEED=${SEED:-36}
export ITSYPAD_FIRST_PUSH_KIND=${KIND:-clips}
swift test --skip-build --filter 'FirstPushTests/killedAtRandomPoints'
