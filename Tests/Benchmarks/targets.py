"""Shared by the benchmark scripts' summaries: hyperfine's results read, their medians printed, and
targets (ratios of medians) checked.

A script's summary runs with this folder on PYTHONPATH (see `summarize` in remotes.sh) and imports
what it needs: `from targets import medians, print_medians, check_targets` (or `print_targets`, for targets
that also bound a ratio from below).
"""
import json


def medians(results, names):
    """command -> (median, min, max, stddev) in seconds, from results/<name>.json of hyperfine."""
    found = {}
    for name in names:
        for r in json.load(open(f"{results}/{name}.json"))["results"]:
            found[r["command"]] = (r["median"], r["min"], r["max"], r["stddev"] or 0.0)
    return found


def print_medians(med):
    """A table of every command's median, min, max and standard deviation."""
    def ms(s): return f"{s * 1000:.1f} ms"
    width = max(36, *(len(cmd) for cmd in med))
    print(f"{'median wall time':{width}} {'median':>11} {'min':>11} {'max':>11} {'stddev':>10}")
    for cmd, (m, lo, hi, sd) in med.items():
        print(f"{cmd:{width}} {ms(m):>11} {ms(lo):>11} {ms(hi):>11} {ms(sd):>10}")


def print_targets(targets):
    """Prints each (name, ratio, op, bound) target, op ">=" or "<=", and its verdict; returns how
    many are not met."""
    width = max(len("target"), *(len(name) for name, *_ in targets))
    failed = 0
    print()
    print(f"{'target':{width}} {'ratio':>8} {'needed':>9}  result")
    for name, value, op, bound in targets:
        ok = value >= bound if op == ">=" else value <= bound
        failed += not ok
        print(f"{name:{width}} {value:>7.2f}x {op + ' ' + format(bound, '.1f') + 'x':>9}  {'PASS' if ok else 'FAIL'}")
    return failed


def check_targets(targets):
    """Prints each (name, ratio, bound) target, a ratio of at most its bound, and the verdict;
    returns the exit status: 1 when one is not met."""
    failed = print_targets([(name, value, "<=", bound) for name, value, bound in targets])
    print()
    print("all targets met" if failed == 0 else f"{failed} target(s) not met")
    return 1 if failed else 0
