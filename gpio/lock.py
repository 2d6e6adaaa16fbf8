"""One capture service for a data directory: ``data_dir/capture.lock``, held with ``flock`` while it runs.

The kernel releases the lock when its holder ends, however it ends, so a lock that cannot be taken names a
process that still runs. The file says who holds it: the process, its start time (a reused pid is not taken
for it) and the parent that started it.

- The holder's parent is gone (it was orphaned: ``svoyak run`` killed before it could stop its capture, or a
  capture started before supervision existed): the holder is **stale**. The new service ends it (SIGTERM: it
  turns its LEDs off; SIGKILL if it does not go within :data:`STALE_TERM_S`) and takes the lock.
- The holder's parent still runs (systemd's unit, a live ``svoyak run``, a terminal): the new service refuses
  to start, naming the holder.

Not the socket's answer ("another capture service listens"): that cannot tell an orphan from a live service.

:class:`DirectoryLock` is the mechanism, with no words of its own; the web server's lock (``server.lock``,
``appliance/commands/serve.py``) is the same with its own words and error. A holder that is gone while its lock is
still held (a process it forked inherited the descriptor: a gunicorn worker ending by its parent-death signal) is
waited for, :data:`STALE_TERM_S` at most, not refused at once.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import time
from pathlib import Path

from appliance.errors import CaptureError

LOCK_NAME = "capture.lock"
STALE_TERM_S = 5.0
STALE_KILL_S = 3.0


class CaptureLocked(CaptureError, RuntimeError):
    """A live capture service already runs over this data directory."""


def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name (state first), or None if the process is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def _start_time(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[19]) if fields and fields[0] != "Z" else None  # field 22 of stat(5): starttime


def _parent(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[1]) if fields and fields[0] != "Z" else None


def holder_pid(data_dir: Path) -> int | None:
    """The pid the lock file of ``data_dir`` names (who holds it, or held it last), or None."""
    try:
        pid = json.loads((Path(data_dir) / LOCK_NAME).read_text()).get("pid")
    except (OSError, ValueError, AttributeError):
        return None
    return pid if isinstance(pid, int) else None


def command_line(pid: int) -> str:
    """What ``pid`` runs, as one line ("" if it is gone or not ours to read)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


class DirectoryLock:
    """One service of a kind per data directory: ``acquire()`` before it serves, ``release()`` when it stops.
    Subclasses word the refusals (:meth:`refusal`, :meth:`stuck`) and name the error raised."""

    error: type[Exception]  # raised with the words of refusal() or stuck()

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    def refusal(self, pid, command: str) -> str:
        """Why this service does not start: a live ``pid`` (running ``command``) holds the lock."""
        raise NotImplementedError

    def stuck(self, pid) -> str:
        """Why this service does not start: the stale holder ``pid`` was ended and the lock is still held."""
        raise NotImplementedError

    def acquire(self) -> None:
        """Take the lock, ending a stale holder first; raise :attr:`error` if a live one holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if not self._try(fd):
                holder = self._holder(fd)
                if self._is_gone(holder):
                    self._wait(fd, holder)  # what it forked holds the lock a moment longer
                elif self._is_stale(holder):
                    self._end(holder, fd)
                else:
                    pid = holder.get("pid", "?")
                    raise self.error(self.refusal(pid, command_line(pid) if isinstance(pid, int) else ""))
            record = {"pid": os.getpid(), "start": _start_time(os.getpid()), "parent": os.getppid()}
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(record).encode() + b"\n", 0)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock; the file stays (no unlink race)
            self._fd = None

    @staticmethod
    def _try(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    @staticmethod
    def _holder(fd: int) -> dict:
        try:
            holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
        except ValueError:
            return {}
        return holder if isinstance(holder, dict) else {}

    @staticmethod
    def _is_gone(holder: dict) -> bool:
        """The recorded holder no longer runs (no process of that pid and start time)."""
        pid, start = holder.get("pid"), holder.get("start")
        return isinstance(pid, int) and start is not None and _start_time(pid) != start

    def _wait(self, fd: int, holder: dict) -> None:
        deadline = time.monotonic() + STALE_TERM_S
        while time.monotonic() < deadline:
            if self._try(fd):
                return
            time.sleep(0.02)
        pid = holder.get("pid", "?")
        raise self.error(self.stuck(pid))

    @staticmethod
    def _is_stale(holder: dict) -> bool:
        """Stale: the recorded holder still runs (same start time) and its parent is no longer the one that
        started it. Anything unsure (no record yet, another start time) is taken as live: refused, not killed."""
        pid, start, parent = holder.get("pid"), holder.get("start"), holder.get("parent")
        if not isinstance(pid, int) or not isinstance(parent, int) or start is None:
            return False
        if _start_time(pid) != start:
            return False
        return _parent(pid) != parent

    def _end(self, holder: dict, fd: int) -> None:
        pid = holder["pid"]
        for signal_number, wait_s in ((signal.SIGTERM, STALE_TERM_S), (signal.SIGKILL, STALE_KILL_S)):
            if _start_time(pid) == holder["start"]:  # checked again right before each signal
                try:
                    os.kill(pid, signal_number)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline:
                if self._try(fd):
                    return
                time.sleep(0.02)
        raise self.error(self.stuck(pid))


class CaptureLock(DirectoryLock):
    """``acquire()`` before the socket is bound, ``release()`` after it is closed."""

    error = CaptureLocked

    def refusal(self, pid, command: str) -> str:
        return (f"Сервис захвата кнопок уже работает с папкой данных {self.path.parent} (процесс {pid}); "
                f"остановите его или дайте этому другую папку (SVOYAK_DATA_DIR). / Another capture "
                f"service (process {pid}) already runs over the data directory {self.path.parent}: stop "
                f"it, or give this one another data directory (SVOYAK_DATA_DIR).")

    def stuck(self, pid) -> str:
        return (f"Прежний сервис захвата (процесс {pid}) не отпускает {self.path} / The stale capture "
                f"service (process {pid}) does not let go of {self.path}")
