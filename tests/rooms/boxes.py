"""Real boxes for the rooms tests and bench: ``svoyak run --simulator`` processes (web, capture, nats-server),
each with its own data directory, optionally inside a network namespace; and a driver that plays a battle
through the host's Socket.IO commands and the simulator's buttons (the real session path).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import requests

from bench.sockets import close, connect

ROOT = Path(__file__).resolve().parents[2]
PIN = "2468"
DIRECTOR_PIN = "135790"  # the desk's own PIN (the host's does not open it)


class Box:
    def __init__(self, name: str, folder: Path, port: int, netns: str = "", address: str = "127.0.0.1",
                 leaf_port: int = 0) -> None:
        self.name, self.folder, self.port, self.netns, self.address = name, Path(folder), port, netns, address
        self.leaf_port = leaf_port
        self.process: subprocess.Popen | None = None
        self.http = requests.Session()

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self.port}"

    def start(self, timeout_s: float = 60) -> "Box":
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "none.toml").write_text("")
        env = {**os.environ, "SVOYAK_DATA_DIR": str(self.folder), "SVOYAK_CONFIG": str(self.folder / "none.toml"),
               "SVOYAK_HOST_PIN": PIN, "SVOYAK_DIRECTOR_PIN": DIRECTOR_PIN, "SVOYAK_ROOMS_LEAF_PORT": str(self.leaf_port),
               "SVOYAK_WEB_HOST": "0.0.0.0" if self.netns else "127.0.0.1"}
        command = [sys.executable, "-m", "appliance.cli", "run", "--simulator", "--port", str(self.port)]
        if self.netns:
            command = ["ip", "netns", "exec", self.netns, *command]
        self.process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=open(self.folder / "run.log", "ab"),
                                        stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"box {self.name} exited; see {self.folder}/run.log")
            try:
                if self.get("/board", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                time.sleep(0.1)
        else:
            raise RuntimeError(f"box {self.name} did not serve within {timeout_s} s")
        self.http = requests.Session()
        self.http.post(self.url + "/director/login", data={"pin": DIRECTOR_PIN}, timeout=10)
        return self

    def get(self, path: str, **kwargs):
        kwargs.setdefault("timeout", 10)
        return self.http.get(self.url + path, **kwargs)

    def post(self, path: str, **kwargs):
        kwargs.setdefault("timeout", 30)
        return self.http.post(self.url + path, **kwargs)

    def json(self, path: str):
        return self.get(path, headers={"Accept": "application/json"}).json()

    def kill(self) -> None:
        """Power cut: SIGKILL every process of the box (web, capture, its nats-server)."""
        if self.process is not None:
            _signal_box(self, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            _signal_box(self, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                _signal_box(self, signal.SIGKILL)
                self.process.wait(timeout=10)
        # nats-server runs in a session of its own (it must outlive nothing): end it by its pid file
        _kill_nats(self.folder)


def _signal_box(box: Box, sig) -> None:
    try:
        os.killpg(box.process.pid, sig)
    except ProcessLookupError:
        pass
    if sig == signal.SIGKILL:
        _kill_nats(box.folder, sig)


def _kill_nats(folder: Path, sig=signal.SIGTERM) -> None:
    for ports in (Path(folder) / "rooms" / "nats").glob("nats-server_*.ports"):
        pid = int(ports.stem.rsplit("_", 1)[1])
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


class Host:
    """The host tablet and the simulator's buttons of one box, over Socket.IO."""

    def __init__(self, box: Box) -> None:
        import socketio

        self.box = box
        self.client = socketio.Client(reconnection=False)
        connect(self.client, box.url, namespaces=["/host", "/sim"], auth={"pin": PIN}, transports=["websocket"],
                wait_timeout=15)
        self.ids = iter(range(1, 10 ** 9))
        self.prefix = f"{box.name}-{time.monotonic_ns()}"

    def command(self, name: str, **args) -> dict:
        return self.client.call("command", {"id": f"{self.prefix}-{next(self.ids)}", "name": name, "args": args},
                                namespace="/host", timeout=15)

    def press(self, player: int) -> None:
        self.client.call("simulate", {"player": player, "action": "press"}, namespace="/sim", timeout=15)
        self.client.call("simulate", {"player": player, "action": "release"}, namespace="/sim", timeout=15)

    def view(self) -> dict:
        box = {}

        def on_snapshot(data):
            box["view"] = data["view"]

        self.client.on("snapshot", on_snapshot, namespace="/host")
        self.client.emit("resync", {}, namespace="/host")
        deadline = time.monotonic() + 10
        while "view" not in box and time.monotonic() < deadline:
            time.sleep(0.01)
        return box["view"]

    def close(self) -> None:
        close(self.client)


def play_battle(host: Host, rng: random.Random, max_questions: int = 400, stop_after: int | None = None) -> int:
    """Play the box's current battle to its end (or for ``stop_after`` questions): every question a press of
    a random player, pointed and judged right or wrong; shoot-outs as the standings ask. Returns questions."""
    played = 0
    for _ in range(max_questions):
        view = host.view()
        if view["battle"]["finished"]:
            return played
        if stop_after is not None and played >= stop_after:
            return played
        ack = host.command("next")
        if not ack.get("ok"):
            raise AssertionError(f"next refused: {ack}")
        view = host.view()
        if view.get("question") is None or view["question"].get("over"):
            continue  # a theme began
        seats = [i for i, p in enumerate(view["players"]) if not p.get("absent")] or [0]
        for attempt in range(3):
            player = rng.choice(seats)
            host.press(player)
            if host.command("point").get("ok"):
                break
        else:
            host.command("withdraw")
            played += 1
            continue
        host.command("right" if rng.random() < 0.7 else "wrong")
        view = host.view()
        if view.get("question") and not view["question"].get("over"):
            host.command("withdraw")  # wrong and nobody else: the question ends without a right answer
        played += 1
    raise AssertionError("the battle did not end")


def wait_for(predicate, timeout_s: float, what: str, step_s: float = 0.1):
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(step_s)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what} (last: {last!r})")
