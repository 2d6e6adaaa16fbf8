"""Run a program that dies with the process that started it: ``python -I -S leash.py PARENT_PID SIGNAL -- PROGRAM
ARGS...`` asks the kernel (``prctl(PR_SET_PDEATHSIG)``) to send SIGNAL to this process when its parent goes, checks
that the parent is still ``PARENT_PID`` (it may have died before the request: then the program is not started),
and ``exec``s PROGRAM, which keeps the request (it survives ``execve`` of a program that is not set-user-ID).

A script of the standard library only, run by path: it starts in about 20 ms and imports nothing of the project.
:func:`appliance.service.supervision.spawn` is how the project calls it; see there why this way.
"""

from __future__ import annotations

import os
import sys

PR_SET_PDEATHSIG = 1
EXIT_ORPHANED = 70  # the parent was gone before the program could be tied to it


def die_with_parent(parent_pid: int, signal_number: int) -> bool:
    """Ask for ``signal_number`` when the parent (the *thread* that forked this process) ends; False if the
    parent is already gone (this process was re-parented before the request took hold)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal_number, 0, 0, 0) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"prctl(PR_SET_PDEATHSIG): {os.strerror(error)}")
    return os.getppid() == parent_pid


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: leash.py PARENT_PID SIGNAL -- PROGRAM [ARGS...]\n")
        return 2
    parent_pid, signal_number, program = int(argv[0]), int(argv[1]), argv[3:]
    try:
        tied = die_with_parent(parent_pid, signal_number)
    except OSError as error:  # a sandbox that forbids prctl: the program still runs (systemd ends it there)
        sys.stderr.write(f"leash: {error}; {program[0]} runs untied\n")
        tied = os.getppid() == parent_pid
    if not tied:
        sys.stderr.write(f"leash: parent {parent_pid} is gone; {program[0]} not started\n")
        return EXIT_ORPHANED
    os.execvp(program[0], program)
    return 127  # not reached: execvp raises on failure


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
