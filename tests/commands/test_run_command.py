"""``kill -9`` of ``svoyak run`` leaves nothing behind (issue 19): its gunicorn worker, its capture service and the
rooms' nats-server end with it, an open page's WebSocket is cut at once, and the next ``svoyak run`` over the same
data directory has its buttons and its nats-server. Then the capture lock on its own: a stale capture (orphaned)
is taken over, a live one refuses the newcomer in words."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from svoyak.commands.run import _listens  # the same probe svoyak run waits on
from appliance.service.supervision import command_line, is_alive
from tests.support.boxes import wait_for

ROOT = Path(__file__).resolve().parents[2]
BOUND_S = 10  # how long the children may take to go (they go in well under a second)

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found



class Box:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        (data_dir / "none.toml").write_text("")
        self.env = {**os.environ, "SVOYAK_DATA_DIR": str(data_dir), "SVOYAK_CONFIG": str(data_dir / "none.toml"),
                    "SVOYAK_ROOMS_LEAF_PORT": "0", "PYTHONPATH": str(ROOT)}
        self.log = open(data_dir / "run.log", "ab")

    def run(self) -> subprocess.Popen:
        process = subprocess.Popen([sys.executable, "-m", "svoyak.cli", "run", "--simulator", "--port",
                                    str(self.port)], env=self.env, cwd=ROOT, stdout=self.log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        self.process = process
        return process

    def host(self):
        from bench.chaos import Host

        return Host(self)

    def connected_host(self, seconds: float = 60):
        """The host's Socket.IO client, tried again while a loaded machine keeps the first connect waiting."""
        import socketio

        deadline = time.monotonic() + seconds
        while True:
            try:
                return self.host()
            except (socketio.exceptions.ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pin(self) -> str:
        return json.loads((self.data_dir / "identity.json").read_text())["host_pin"]

    def nats_pids(self) -> list[int]:
        folder = self.data_dir / "rooms" / "nats"
        return [int(p.stem.rsplit("_", 1)[1]) for p in folder.glob("nats-server_*.ports")]

    def wait_ready(self) -> None:
        """Listening, the capture linked (buttons), nats-server up and answering."""
        def listening():
            if self.process.poll() is not None:
                raise AssertionError(f"svoyak run exited {self.process.returncode}: {self.output()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return True
            except OSError:
                return False

        wait_for(listening, 90, "svoyak run listens")
        host = self.connected_host()
        try:
            wait_for(lambda: host.wait_view()["capture"]["connected"], 30, "the capture linked (buttons)")
        finally:
            host.close()
        pid = wait_for(lambda: [p for p in self.nats_pids() if is_alive(p)], 30, "nats-server runs")[0]
        ports = json.loads((self.data_dir / "rooms" / "nats" / f"nats-server_{pid}.ports").read_text())
        host_port = ports["nats"][0].rsplit(":", 1)
        with socket.create_connection((host_port[0].removeprefix("nats://"), int(host_port[1])), timeout=5) as s:
            assert s.recv(4096).startswith(b"INFO ")

    def output(self) -> str:
        self.log.flush()
        return (self.data_dir / "run.log").read_text(errors="replace")[-3000:]

    def close(self) -> None:
        process = getattr(self, "process", None)
        left = descendants(process.pid) if process is not None else set()
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        for pid in left | set(self.nats_pids()):  # nothing may outlive a failing test either
            if is_alive(pid) and ("svoyak.cli" in " ".join(command_line(pid))
                                  or "nats-server" in " ".join(command_line(pid))):
                os.kill(pid, signal.SIGKILL)
        self.log.close()


@pytest.fixture
def box(tmp_path):
    from appliance.service.rooms.roles import Roles

    Roles(tmp_path / "rooms").set_role("hub", "Стол")  # so the web process runs the rooms' nats-server
    box = Box(tmp_path)
    yield box
    box.close()


def test_kill_9_of_svoyak_run_leaves_no_child_and_the_next_start_has_buttons_and_nats(box):
    first = box.run()
    box.wait_ready()
    children = descendants(first.pid)
    names = {pid: " ".join(command_line(pid)) for pid in children}
    assert any("capture" in line for line in names.values()), names
    assert any("nats-server" in line for line in names.values()), names
    assert len([line for line in names.values() if " run " in f"{line} "]) == 1, names  # the gunicorn worker

    # an open page: its WebSocket must be cut with the box, not served on by an orphaned worker
    host = box.connected_host()
    host.wait_view()
    cut = threading.Event()
    host.sio.on("disconnect", lambda *_: cut.set(), namespace="/host")

    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    wait_for(lambda: not any(is_alive(pid) for pid in children), BOUND_S,
             f"every child of svoyak run gone; left: {[names[p] for p in children if is_alive(p)]}")
    assert cut.wait(BOUND_S), "the open page's WebSocket was still served"
    host.close()

    box.run()
    box.wait_ready()  # buttons (the capture linked) and nats-server, in the same data directory
    assert "another capture service" not in box.output()


# --- the capture lock on its own ---------------------------------------------------------------------------------
ORPHANER = """
import json, os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-m", "svoyak.cli", "capture", "--simulator"], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
lock = os.path.join(os.environ["SVOYAK_DATA_DIR"], "capture.lock")
for _ in range(600):  # serving, with this process as its parent; then this one ends, as a killed svoyak run
    try:
        if json.load(open(lock))["pid"] == child.pid:
            break
    except (OSError, ValueError, KeyError):
        pass
    time.sleep(0.05)
print(child.pid, flush=True)
"""


def _capture(env, **arguments) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "svoyak.cli", "capture", "--simulator"], env=env, cwd=ROOT,
                            **arguments)


def _lock_holder(data_dir: Path) -> int | None:
    try:
        return json.loads((data_dir / "capture.lock").read_text())["pid"]
    except (OSError, ValueError, KeyError):
        return None


def test_a_stale_capture_is_taken_over_and_a_live_one_refuses_in_words(tmp_path):
    (tmp_path / "none.toml").write_text("")
    env = {**os.environ, "SVOYAK_DATA_DIR": str(tmp_path), "SVOYAK_CONFIG": str(tmp_path / "none.toml"),
           "PYTHONPATH": str(ROOT)}
    sock = tmp_path / "capture.sock"
    # an orphan: its starter is gone (as a capture left by a killed svoyak run of before)
    done = subprocess.run([sys.executable, "-c", ORPHANER], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=30, check=True)
    orphan = int(done.stdout)
    newcomer = live = None
    try:
        wait_for(lambda: _lock_holder(tmp_path) == orphan and _listens(sock), 30, "the orphan serves")
        newcomer = _capture(env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_for(lambda: _lock_holder(tmp_path) == newcomer.pid and _listens(sock), 30,
                 "the new capture took over")  # today: "another capture service listens", exit 2
        wait_for(lambda: not is_alive(orphan), BOUND_S, "the orphan ended")  # it lets go of the lock, then exits
        assert newcomer.poll() is None

        # the newcomer's parent (this test) lives: a third one is refused, in words, and the second keeps serving
        live = _capture(env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, error = live.communicate(timeout=30)
        assert live.returncode == 2, error
        assert f"процесс {newcomer.pid}" in error and f"process {newcomer.pid}" in error, error
        assert newcomer.poll() is None and _listens(sock)
    finally:
        for process in (newcomer, live):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=15)
            if process is not None and process.stderr:
                process.stderr.close()
        if is_alive(orphan):
            os.kill(orphan, signal.SIGKILL)


def test_svoyak_run_stops_with_the_reason_when_a_live_capture_holds_the_data_directory(box):
    """Not a box with no buttons: the capture's refusal is shown and ``svoyak run`` exits."""
    live = _capture(box.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: _lock_holder(box.data_dir) == live.pid and _listens(box.data_dir / "capture.sock"), 30,
                 "a capture serves the data directory")
        refused = box.run()
        assert refused.wait(timeout=60) != 0
        output = box.output()
        assert f"процесс {live.pid}" in output and "the capture service did not start" in output, output
        assert live.poll() is None  # the live one is left alone
    finally:
        live.terminate()
        live.wait(timeout=15)
