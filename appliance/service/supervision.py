"""Children that die with the process that started them, on a laptop as on the box (issue 19).

``svoyak run`` starts the capture service and gunicorn's worker; the web process (or ``svoyak nats``) starts
nats-server. If the starter is killed (``kill -9``, the out-of-memory killer), its children must not live on:
an orphaned worker keeps serving the open pages and storing commands beside the new one, an orphaned capture
holds the buttons, an orphaned nats-server holds the rooms' store and ports.

How: the kernel's parent-death signal (``prctl(PR_SET_PDEATHSIG)``), set in the child.

- Not a process group: a group is killed only by someone who is alive to do it; ``kill -9`` of the starter
  leaves nobody to send it (systemd does it on the box, a laptop has no one).
- Not a pipe the child watches: nats-server is not ours to change, so it would need a Python wrapper process
  of its own (about 10 MB more for each nats-server).
- The parent-death signal is delivered by the kernel the moment the parent ends, costs nothing while it lives,
  and survives ``execve``: a tiny launcher (:mod:`appliance.service.leash`) sets it and ``exec``s the program,
  so nats-server runs as itself. A gunicorn worker sets it on itself right after the fork (``svoyak serve``).

The catch: the kernel's "parent" is the *thread* that forked the child, not the process. A child started from
a request thread would be killed when that thread ends. :func:`spawn` therefore forks only from a thread that
lives as long as the process: the main thread when called there, else one spawner thread of its own.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

LEASH = Path(__file__).with_name("leash.py")


def spawn(argv: list[str], *, death_signal: int = signal.SIGTERM, **popen_arguments) -> subprocess.Popen:
    """Start ``argv`` (``subprocess.Popen`` arguments otherwise) so that it gets ``death_signal`` when this
    process ends, however it ends. Raises what ``Popen`` raises (OSError: the launcher's Python missing)."""
    command = [sys.executable, "-I", "-S", str(LEASH), str(os.getpid()), str(int(death_signal)), "--", *argv]
    if threading.current_thread() is threading.main_thread():
        return subprocess.Popen(command, **popen_arguments)
    return _spawner().run(command, popen_arguments)


def die_with_parent(expected_parent: int, death_signal: int = signal.SIGKILL) -> None:
    """In a forked child: take ``death_signal`` when the parent (the thread that forked us) ends; if it ended
    already (we were re-parented before asking), take the signal now."""
    from appliance.service.leash import die_with_parent as ask

    if not ask(expected_parent, death_signal):
        os.kill(os.getpid(), death_signal)


class _Spawner:
    """One long-lived thread of this process that forks the children asked for from other threads."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="spawner", daemon=True).start()

    def _serve(self) -> None:
        while True:
            command, arguments, answer = self._requests.get()
            try:
                answer.put((subprocess.Popen(command, **arguments), None))
            except BaseException as error:  # handed to the caller, raised there
                answer.put((None, error))

    def run(self, command: list[str], arguments: dict) -> subprocess.Popen:
        answer: queue.SimpleQueue = queue.SimpleQueue()
        self._requests.put((command, arguments, answer))
        process, error = answer.get()
        if error is not None:
            raise error
        return process


_lock = threading.Lock()
_instance: _Spawner | None = None


def _spawner() -> _Spawner:
    global _instance
    with _lock:
        if _instance is None or _instance.pid != os.getpid():  # a fork has no thread of its parent's
            _instance = _Spawner()
        return _instance


def is_alive(pid: int) -> bool:
    """``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def command_line(pid: int) -> list[str]:
    """The arguments ``pid`` runs with ([] if it is gone or not ours to read)."""
    try:
        return [part.decode(errors="replace") for part in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                if part]
    except OSError:
        return []
