#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# lock-bench.sh: a sync never holds the data directory hostage. While a device
# runs its first sync of 10,000 tabs, `clip add` runs on that device over and
# over, as a clipboard watcher would. Three first syncs are timed:
#   receiving  device B joins a folder backend that A filled (`sync enable DIR`);
#   sending    device C, holding the tabs, pushes them to a new folder backend;
#   git        device D, holding the tabs, pushes them to a new bare git repository.
# For each:
#   1. the median `clip add` during the sync is within 2x the median idle
#      `clip add` (measured on the same device just before, in the same run);
#   2. no `clip add` waits longer than 100 ms: its time exceeds the idle
#      median by at most 100 ms.
#
# Usage: Tests/Benchmarks/lock-bench.sh
# Environment:
#   ITSYPAD    itsypad binary (default: <repo>/.build/release/itsypad); never built here
#   TABS       tabs in the first sync (default 10000)
#   IDLE_RUNS  idle `clip add` runs (default 40)
#   SIDES      first syncs to time (default: "receiving sending git")
#   BENCH_OUT  directory to keep the timings and the summary in (default: none)
# Exit status: 0 when every target passes, 1 when one fails, 2 on a setup error.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TABS=${TABS:-10000}
IDLE_RUNS=${IDLE_RUNS:-40}
SIDES=${SIDES:-receiving sending git}

BENCH_NAME=lock-bench
# shellcheck source=common.sh
source "$repo_root/Tests/Benchmarks/common.sh"

require_itsypad
command -v python3 >/dev/null || die "python3 not found"
make_work

step "Seeding the devices with $TABS tabs"
python3 - "$TABS" "$work/tabs.json" <<'PY'
import json, random, sys, uuid
n, out = int(sys.argv[1]), sys.argv[2]
rng = random.Random(20261124)
words = "the a of to and in is for on with meeting notes todo fix bug release build deploy server client".split()
tabs = [{"id": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "name": f"note {i}",
         "content": "\n".join(" ".join(rng.choice(words) for _ in range(rng.randint(3, 12))) for _ in range(rng.randint(1, 20))),
         "language": "plain", "languageLocked": False, "lastModified": "2026-01-01T00:00:00.000Z"} for i in range(n)]
json.dump({"format": "itsypad-export", "version": 1, "tabs": tabs, "clips": [], "settings": []}, open(out, "w"))
PY
# Each device timed keeps every clip added during the run.
sync_commands=()
for side in $SIDES; do
    case $side in
        receiving)
            "$ITSYPAD" --data-dir "$work/a" --quiet import "$work/tabs.json"
            "$ITSYPAD" --data-dir "$work/a" --quiet sync enable "$work/backend"
            "$ITSYPAD" --data-dir "$work/b" --quiet settings set clipboard.maxEntries 100000
            sync_commands+=("receiving" "$work/b" "$work/backend") ;;
        sending)
            "$ITSYPAD" --data-dir "$work/c" --quiet import "$work/tabs.json"
            "$ITSYPAD" --data-dir "$work/c" --quiet settings set clipboard.maxEntries 100000
            sync_commands+=("sending" "$work/c" "$work/sent") ;;
        git)
            command -v git >/dev/null || die "git not found (apt-get install -y git)"
            "$ITSYPAD" --data-dir "$work/d" --quiet import "$work/tabs.json"
            "$ITSYPAD" --data-dir "$work/d" --quiet settings set clipboard.maxEntries 100000
            git init -q --bare "$work/remote.git"
            sync_commands+=("git" "$work/d" "git:$work/remote.git") ;;
        *) die "unknown side '$side' in SIDES (receiving, sending, git)" ;;
    esac
done

step "Timing clip add on each device, idle and during its first sync of $TABS tabs"
python3 - "$ITSYPAD" "$TABS" "$IDLE_RUNS" "$results" "${sync_commands[@]}" <<'PY'
import os, statistics, subprocess, sys, time
itsypad, tabs, idle_runs, results = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sides = [sys.argv[i:i + 3] for i in range(5, len(sys.argv), 3)]

def clip_add(device, text):
    started = time.perf_counter()
    done = subprocess.run([itsypad, "--data-dir", device, "clip", "add", text], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        sys.exit(f"lock-bench: clip add exited {done.returncode}: {done.stderr.decode().strip()}")
    return elapsed

def timed_sync(side, device, backend):
    """Times `clip add` on `device` idle, then during its first sync with `backend`: the summary lines and whether both targets pass."""
    idle = [clip_add(device, f"idle {i}") for i in range(idle_runs)]
    load_before = open("/proc/loadavg").read().split()[:3]
    sync_started = time.perf_counter()
    sync = subprocess.Popen([itsypad, "--data-dir", device, "--quiet", "sync", "enable", backend], stderr=subprocess.PIPE)
    during = []
    while sync.poll() is None:
        during.append(clip_add(device, f"during {len(during)}"))
        time.sleep(0.02)
    sync_seconds = time.perf_counter() - sync_started
    load_after = open("/proc/loadavg").read().split()[:3]
    if sync.returncode != 0:
        sys.exit(f"lock-bench: the {side} sync exited {sync.returncode}: {sync.stderr.read().decode().strip()}")
    listed = subprocess.run([itsypad, "--data-dir", device, "tab", "ls"], capture_output=True, text=True).stdout.count("\n")
    if listed != tabs:
        sys.exit(f"lock-bench: the {side} device holds {listed} tabs after its sync, expected {tabs}")
    if len(during) < 10:
        sys.exit(f"lock-bench: only {len(during)} clip adds ran during the {side} sync; too few to judge")
    with open(f"{results}/timings-{side}.tsv", "w") as f:
        f.write("".join(f"idle\t{t:.3f}\n" for t in idle) + "".join(f"during\t{t:.3f}\n" for t in during))
    idle_median, during_median, worst = statistics.median(idle), statistics.median(during), max(during)
    ratio_ok = during_median <= 2 * idle_median
    wait_ok = worst - idle_median <= 100
    return [
        f"{side}: load average before/after the sync: {' '.join(load_before)} / {' '.join(load_after)} ({os.cpu_count()} CPUs)",
        f"{side}: first sync of {tabs} tabs: {sync_seconds:.1f} s, {len(during)} clip adds meanwhile",
        f"{side}: clip add idle:   median {idle_median:.1f} ms (n={len(idle)}, max {max(idle):.1f} ms)",
        f"{side}: clip add during: median {during_median:.1f} ms, p90 {statistics.quantiles(during, n=10)[-1]:.1f} ms, max {worst:.1f} ms",
        f"{side}: {'PASS' if ratio_ok else 'FAIL'}: median during the sync {during_median:.1f} ms <= 2x idle ({2 * idle_median:.1f} ms)",
        f"{side}: {'PASS' if wait_ok else 'FAIL'}: longest wait {worst - idle_median:.1f} ms (max minus idle median) <= 100 ms",
    ], ratio_ok and wait_ok

passed = True
with open(f"{results}/summary.txt", "w") as summary:
    for side, device, backend in sides:
        lines, ok = timed_sync(side, device, backend)
        passed = passed and ok
        print("\n".join(lines), flush=True)
        summary.write("\n".join(lines) + "\n")
sys.exit(0 if passed else 1)
PY
