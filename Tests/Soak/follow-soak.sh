#!/usr/bin/env bash
# follow-soak.sh: copy here, paste there (ClipFollowTests) with copies on both sides for a
# minute instead of the few seconds `swift test` gives it: two desktops of each kind, two
# data directories on one folder backend, `sync watch` and `clip watch --follow` on both.
# Each history must end with exactly the copies made (no echo), both clipboards on the newest.
#
# Usage: Tests/Soak/follow-soak.sh
# Environment:
#   SECONDS_OF_COPIES  how long both sides copy (default 60)
# Needs sway, wl-clipboard and setpriv, and Xvfb and xclip (a missing kind is recorded as skipped).
# Exit status: 0 when the histories hold exactly the copies made, 1 otherwise.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo_root"

swift build --build-tests
export ITSYPAD_FOLLOW_SOAK_SECONDS=${SECONDS_OF_COPIES:-60}
echo "copies on both sides for $ITSYPAD_FOLLOW_SOAK_SECONDS s, on each desktop kind"
swift test --skip-build --filter 'ClipFollowTests/copiesOnBothSidesLeaveExactlyTheCopiesMade'
