#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# lock-bench.sh: a sync never holds the data directory hostage. While device B
# runs its first sync of 10,000 tabs (`itsypad sync enable DIR`), `clip add`
# runs on B over and over, as a clipboard watcher would:
#
#   1. the median `clip add` during the sync is within 2x the median idle
#      `clip add` (measured on B just before, in the same run);
#   2. no `clip add` waits longer than 100 ms: its time exceeds the idle
#      median by at most 100 ms.
#
# Usage: Tests/Benchmarks/lock-bench.sh
# Environment:
#   ITSYPAD    itsypad binary (default: <repo>/.build/release/itsypad); never built here
#   TABS       tabs in the first sync (default 10000)
#   IDLE_RUNS  idle `clip add` runs (default 40)
#   BENCH_OUT  directory to keep the timings and the summary in (default: none)
# Exit status: 0 when every target passes, 1 when one fails, 2 on a setup error.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TABS=${TABS:-10000}
IDLE_RUNS=${IDLE_RUNS:-40}

BENCH_NAME=lock-bench
# shellcheck source=common.sh
source "$repo_root/Tests/Benchmarks/common.sh"

require_itsypad
command -v python3 >/dev/null || die "python3 not found"
make_work

step "Seeding device A with $TABS synced tabs"
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
"$ITSYPAD" --data-dir "$work/a" --quiet import "$work/tabs.json"
"$ITSYPAD" --data-dir "$work/a" --quiet sync enable "$work/backend"
# B, a fresh device, keeps every clip added during the run.
"$ITSYPAD" --data-dir "$work/b" --quiet settings set clipboard.maxEntries 100000

step "Timing clip add on B, idle and during its first sync of $TABS tabs"
python3 - "$ITSYPAD" "$work" "$TABS" "$IDLE_RUNS" "$results" <<'PY'
import os, statistics, subprocess, sys, time
itsypad, work, tabs, idle_runs, results = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
b = f"{work}/b"

def clip_add(text):
    started = time.perf_counter()
    done = subprocess.run([itsypad, "--data-dir", b, "clip", "add", text], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        sys.exit(f"lock-bench: clip add exited {done.returncode}: {done.stderr.decode().strip()}")
    return elapsed

idle = [clip_add(f"idle {i}") for i in range(idle_runs)]
load_before = open("/proc/loadavg").read().split()[:3]
sync_started = time.perf_counter()
sync = subprocess.Popen([itsypad, "--data-dir", b, "--quiet", "sync", "enable", f"{work}/backend"], stderr=subprocess.PIPE)
during = []
while sync.poll() is None:
    during.append(clip_add(f"during {len(during)}"))
    time.sleep(0.02)
sync_seconds = time.perf_counter() - sync_started
load_after = open("/proc/loadavg").read().split()[:3]
if sync.returncode != 0:
    sys.exit(f"lock-bench: the sync exited {sync.returncode}: {sync.stderr.read().decode().strip()}")
listed = subprocess.run([itsypad, "--data-dir", b, "tab", "ls"], capture_output=True, text=True).stdout.count("\n")
if listed != tabs:
    sys.exit(f"lock-bench: B holds {listed} tabs after its sync, expected {tabs}")
if len(during) < 10:
    sys.exit(f"lock-bench: only {len(during)} clip adds ran during the sync; too few to judge")

idle_median, during_median, worst = statistics.median(idle), statistics.median(during), max(during)
ratio_ok = during_median <= 2 * idle_median
wait_ok = worst - idle_median <= 100
lines = [
    f"load average before/after the sync: {' '.join(load_before)} / {' '.join(load_after)} ({os.cpu_count()} CPUs)",
    f"first sync of {tabs} tabs: {sync_seconds:.1f} s, {len(during)} clip adds meanwhile",
    f"clip add idle:   median {idle_median:.1f} ms (n={len(idle)}, max {max(idle):.1f} ms)",
    f"clip add during: median {during_median:.1f} ms, p90 {statistics.quantiles(during, n=10)[-1]:.1f} ms, max {worst:.1f} ms",
    f"{'PASS' if ratio_ok else 'FAIL'}: median during the sync {during_median:.1f} ms <= 2x idle ({2 * idle_median:.1f} ms)",
    f"{'PASS' if wait_ok else 'FAIL'}: longest wait {worst - idle_median:.1f} ms (max minus idle median) <= 100 ms",
]
print("\n".join(lines))
with open(f"{results}/summary.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
with open(f"{results}/timings.tsv", "w") as f:
    f.write("".join(f"idle\t{t:.3f}\n" for t in idle) + "".join(f"during\t{t:.3f}\n" for t in during))
sys.exit(0 if ratio_ok and wait_ok else 1)
PY
