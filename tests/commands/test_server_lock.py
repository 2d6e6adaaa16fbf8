"""One web server per data directory (issue 19), with real processes: a second ``svoyak serve`` (or ``svoyak run``)
over the data directory of a live one refuses to start, in words, naming the process that holds it; the lock of a
killed server, or of an orphaned one (its starter gone), is taken over."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from appliance.service.supervision import is_alive
from tests.support.boxes import wait_for

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listens(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
        return True
    return False



def holder(data_dir: Path) -> int | None:
    try:
        return json.loads((data_dir / "server.lock").read_text())["pid"]
    except (OSError, ValueError, KeyError):
        return None


def group_members(group: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[3]) == group and fields[0] != "Z":
                    found.append(int(entry.name))
    return found


# Starts ``svoyak serve`` in a session of its own and exits once the server holds its lock: the server is orphaned
# (as one left by a killed starter of before), its lock naming a parent that is gone.
ORPHANER = """
import json, os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-m", "svoyak.cli", "serve", "--port", sys.argv[1]],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
open(sys.argv[2], "w").write(str(child.pid))  # first: the test ends it whatever happens next
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    try:
        if json.load(open(os.path.join(os.environ["SVOYAK_DATA_DIR"], "server.lock")))["pid"] == child.pid:
            break
    except (OSError, ValueError, KeyError):
        pass
    time.sleep(0.05)
print(child.pid, flush=True)
"""


class Servers:
    """Every process a test starts over one data directory; all of them (and their groups) ended at teardown."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        (data_dir / "none.toml").write_text("")
        self.env = {**os.environ, "SVOYAK_DATA_DIR": str(data_dir), "SVOYAK_CONFIG": str(data_dir / "none.toml"),
                    "SVOYAK_ROOMS_LEAF_PORT": "0", "SVOYAK_SPECTATORS": "0", "PYTHONPATH": str(ROOT)}
        self.groups: list[int] = []
        self.processes: list[subprocess.Popen] = []

    def start(self, *command: str) -> tuple[subprocess.Popen, int]:
        port = free_port()
        process = subprocess.Popen([sys.executable, "-m", "svoyak.cli", *command, "--port", str(port)],
                                   env=self.env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   text=True, start_new_session=True)
        self.processes.append(process)
        self.groups.append(process.pid)
        return process, port

    def serving(self, *command: str) -> tuple[subprocess.Popen, int]:
        process, port = self.start(*command)
        wait_for(lambda: listens(port) or process.poll() is not None, 60, f"svoyak {command[0]} listens")
        assert process.poll() is None, process.stderr.read()
        return process, port

    def refused(self, *command: str) -> tuple[str, int]:
        process, port = self.start(*command)
        _, error = process.communicate(timeout=60)
        return error, process.returncode, port

    def orphan(self) -> tuple[int, int]:
        port = free_port()
        pid_file = self.data_dir / "orphan.pid"
        try:
            done = subprocess.run([sys.executable, "-c", ORPHANER, str(port), str(pid_file)], env=self.env,
                                  cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
        finally:  # a helper that failed or timed out still leaves its server to end at teardown
            if pid_file.exists():
                self.groups.append(int(pid_file.read_text()))
        pid = int(done.stdout)
        wait_for(lambda: listens(port), 60, "the orphaned server listens")
        return pid, port

    def close(self) -> None:
        for group in self.groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
        for process in self.processes:
            process.wait(timeout=30)
            if process.stderr:
                process.stderr.close()
        for group in self.groups:
            wait_for(lambda: not group_members(group), 15, f"process group {group} gone")


@pytest.fixture
def servers(tmp_path):
    box = Servers(tmp_path)
    yield box
    box.close()


def test_a_second_server_over_one_data_directory_refuses_naming_the_first(servers):
    first, first_port = servers.serving("serve")
    wait_for(lambda: holder(servers.data_dir) == first.pid, 10, "the first server holds the lock")
    for command in (("serve",), ("run", "--no-capture", "--no-spectators"), ("run", "--simulator")):
        error, code, port = servers.refused(*command)
        assert code == 2, (command, code, error)
        assert error.startswith(f"svoyak {command[0]}: Папку данных {servers.data_dir} уже обслуживает веб-сервер "
                                f"(процесс {first.pid}, svoyak serve --port {first_port})"), error
        assert f"A web server (process {first.pid}, svoyak serve --port {first_port}) already serves the data " \
               f"directory {servers.data_dir}" in error, error
        assert "Traceback" not in error and not listens(port), error
    assert first.poll() is None and listens(first_port)  # the first one is left alone
    assert holder(servers.data_dir) == first.pid
    assert not (servers.data_dir / "capture.lock").exists()  # the refused run started no capture


def test_the_lock_of_a_killed_server_is_taken_over(servers):
    first, _port = servers.serving("serve")
    worker = wait_for(lambda: [pid for pid in group_members(first.pid) if pid != first.pid], 30, "its worker")
    os.kill(first.pid, signal.SIGKILL)  # its worker ends by its parent-death signal, and lets the lock go
    first.wait(timeout=10)
    second, second_port = servers.serving("serve")
    wait_for(lambda: holder(servers.data_dir) == second.pid, 10, "the second server holds the lock")
    assert not any(is_alive(pid) for pid in worker)
    assert listens(second_port)


def test_an_orphaned_server_is_taken_over(servers):
    orphan, orphan_port = servers.orphan()
    wait_for(lambda: holder(servers.data_dir) == orphan, 10, "the orphan holds the lock")
    newcomer, port = servers.serving("serve")
    wait_for(lambda: holder(servers.data_dir) == newcomer.pid, 10, "the newcomer holds the lock")
    wait_for(lambda: not group_members(orphan), 15, "the orphan and its worker ended")
    assert listens(port) and not listens(orphan_port)
