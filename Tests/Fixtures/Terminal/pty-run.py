#!/usr/bin/python3
"""Runs a program with a new pseudo-terminal as its controlling terminal (its standard streams
stay those given to this script) and writes what the program wrote to the terminal into a file.

Usage: pty-run.py OUTPUT PROGRAM [ARGUMENT...]; exits with the program's status."""
import fcntl
import os
import sys
import termios

output, argv = sys.argv[1], sys.argv[2:]
master, terminal = os.openpty()
pid = os.fork()
if pid == 0:
    os.close(master)
    os.setsid()
    fcntl.ioctl(terminal, termios.TIOCSCTTY, 0)
    # Kept open until the program exits, so that the terminal ends only then.
    os.set_inheritable(terminal, True)
    os.execvp(argv[0], argv)
os.close(terminal)
written = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: the program and its terminal have ended.
        break
    if not chunk:
        break
    written += chunk
_, status = os.waitpid(pid, 0)
with open(output, "wb") as file:
    file.write(written)
sys.exit(os.waitstatus_to_exitcode(status))
