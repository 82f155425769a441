#!/usr/bin/env python3
"""Interleaved timing of short commands, for ratios that load on a shared machine must not decide.

hyperfine runs all of one command's runs, then all of the next's: a burst of load during one
block moves that command's median and not its baseline's. Here every round runs each command
once, so a command and its baseline are measured moments apart; the per-round times are kept in
round order, so that a ratio can be taken round by round (paired) and its median reported.

Each round takes the commands in a new random order (seeded: every run draws the same orders).
A command's time depends on what ran just before it: on a 2-core machine, a command run right
after one that calls fdatasync (clip add) took 17-45% longer than after others. An order that
only rotates gives each command the same predecessor in almost every round, and so biased every
ratio with one side right after a syncing command (clip add / hello-world, the hello-world always
after clip add: 0.94x rotated, 1.27-1.42x in random orders, alternated within minutes).

Usage:
  paired.py --runs N --warmup W --export-json FILE [--fresh-text FILE]
            -n NAME [--stdin FILE] [--prepare PREP] COMMAND [--then COMMAND ...]
            [-n NAME ... COMMAND ...]

COMMAND is split as a shell would split it (no shell runs it). Its standard input is FILE or
/dev/null, its output goes to a pipe that `cat` drains into /dev/null (as hyperfine --output=pipe).
--then COMMAND runs after it, once it has succeeded, within the same timed run (same stdin and
output): `cp A B --then sync B` times a copy made durable, as `cp A B && sync B` in a shell would,
without a shell's start-up in the time.
PREP (split the same way) runs untimed before each run of its command, its output discarded, as
hyperfine's --prepare: for commands that need a fresh state each time (a first sync, a copy).
--fresh-text FILE writes a new, distinct line of text to FILE before every round (untimed), for
commands such as `clip add` that skip a repeat of the newest entry. Exits non-zero when a
command fails. The export has hyperfine's shape: results[].command, median, min, mean, times.
"""
import json
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import time


def on_path(argv):
    """argv with its program found on PATH, as a shell would (posix_spawn does not search)."""
    return [shutil.which(argv[0]) or argv[0]] + argv[1:]


def parse(argv):
    options = {"runs": 60, "warmup": 5, "export": None, "fresh": None}
    commands = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--runs":
            options["runs"] = int(argv[i + 1])
            i += 2
        elif arg == "--warmup":
            options["warmup"] = int(argv[i + 1])
            i += 2
        elif arg == "--export-json":
            options["export"] = argv[i + 1]
            i += 2
        elif arg == "--fresh-text":
            options["fresh"] = argv[i + 1]
            i += 2
        elif arg == "-n":
            name, stdin, prepare = argv[i + 1], "/dev/null", None
            i += 2
            while argv[i] in ("--stdin", "--prepare"):
                if argv[i] == "--stdin":
                    stdin = argv[i + 1]
                else:
                    prepare = shlex.split(argv[i + 1])
                i += 2
            argvs = [on_path(shlex.split(argv[i]))]
            i += 1
            while i < len(argv) and argv[i] == "--then":
                argvs.append(on_path(shlex.split(argv[i + 1])))
                i += 2
            commands.append({"name": name, "stdin": stdin, "prepare": prepare, "argvs": argvs})
        else:
            sys.exit(f"paired.py: unexpected argument {arg!r}")
    if not commands or options["export"] is None:
        sys.exit("paired.py: needs --export-json and at least one -n NAME COMMAND")
    return options, commands


def prepare(command):
    if command["prepare"]:
        done = subprocess.run(command["prepare"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if done.returncode != 0:
            sys.exit(f"paired.py: the preparation of {command['name']!r} exited with status {done.returncode}")


def run_once(command, out_fd):
    prepare(command)
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, command["stdin"], os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, out_fd, 1),
        (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0),
    ]
    start = time.perf_counter_ns()
    for argv in command["argvs"]:
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
        _, status = os.waitpid(pid, 0)
        if status != 0:
            sys.exit(f"paired.py: {command['name']!r} ({argv[0]}) exited with status {os.waitstatus_to_exitcode(status)}")
    return (time.perf_counter_ns() - start) / 1e9


def main():
    options, commands = parse(sys.argv[1:])
    read_end, write_end = os.pipe()
    # A process of its own drains the pipe (a thread of this one would wait for the interpreter's lock).
    drain = subprocess.Popen(["cat"], stdin=read_end, stdout=subprocess.DEVNULL)
    os.close(read_end)
    times = [[] for _ in commands]
    orders = random.Random(0)
    for round_number in range(options["warmup"] + options["runs"]):
        if options["fresh"]:
            with open(options["fresh"], "w") as text:
                text.write(f"bench entry {time.time_ns()} {random.getrandbits(32)}")
        order = list(range(len(commands)))
        orders.shuffle(order)
        for index in order:
            elapsed = run_once(commands[index], write_end)
            if round_number >= options["warmup"]:
                times[index].append(elapsed)
    os.close(write_end)
    drain.wait()
    results = [
        {
            "command": command["name"],
            "median": statistics.median(series),
            "min": min(series),
            "max": max(series),
            "mean": statistics.fmean(series),
            "stddev": statistics.stdev(series) if len(series) > 1 else 0.0,
            "times": series,
        }
        for command, series in zip(commands, times)
    ]
    with open(options["export"], "w") as export:
        json.dump({"results": results, "interleaved": True}, export)


if __name__ == "__main__":
    main()
