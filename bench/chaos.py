"""The adversary: scripted battles played against a real box while its web server and capture process are
SIGKILLed at random moments, with resend storms across the restarts; then every acknowledged command is checked
in the store (lost = 0, doubled = 0).

The box is two process groups, as on the Pi: ``svoyak capture --simulator`` (mock pins) and ``svoyak serve
--simulator`` (gunicorn, one gthread worker), over one data directory. The host is a python-socketio client
that plays from the view's own ``allowed`` verdicts; presses go through the ``/sim`` namespace into the capture
process (the real path). A kill lands while a command is on its way; the killed part is started again and the
host resends the command that got no answer (same id: applied at most once), then resends earlier commands
(they must come back ``duplicate: true`` with their first result and change nothing).

Used by ``tests/adversarial/test_kills.py`` (bounded) and ``bench/bench_chaos.py`` (longer, prints figures).
Every loop is bounded by ``commands`` and ``kills``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from bench.sockets import close, connect

ROOT = Path(__file__).resolve().parent.parent
SETUP = {"profile": "eurocup", "players": ["Аня", "Борис", "Вера"],
         "themes": [{"name": "Реки"}, {"name": "Кино"}]}
# the events each host command may store (checked for every acknowledged command)
EVENTS_OF = {
    "setup": [("BattleSetUp",)],
    "next": [("ThemeStarted",), ("PriceAnnounced", "ReadingStarted")],
    "reading_done": [("ReadingFinished",)],
    "point": [("AnswererPointed",)],
    "right": [("AnswerJudged",)],
    "wrong": [("AnswerJudged",)],
    "phones": [()],
}


@dataclasses.dataclass
class Figures:
    server_kills: int = 0
    capture_kills: int = 0
    commands_acknowledged: int = 0
    commands_in_flight_at_a_kill: int = 0
    in_flight_already_stored: int = 0   # of those, stored before the kill: the resend answered duplicate
    resends: int = 0
    duplicates_answered: int = 0
    unanswered_resends: int = 0         # a resend that got no answer in 3 tries of 15 s (a loaded machine)
    refused: int = 0
    presses: int = 0
    battles: int = 0
    lost: int = 0
    doubled: int = 0
    wrong_events: int = 0
    wrong_resend_answers: int = 0
    problems: list = dataclasses.field(default_factory=list)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Box:
    """The capture process and the web server over ``data_dir``; either may be killed and started again."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        (data_dir / "none.toml").write_text("")
        self.env = {**os.environ, "SVOYAK_DATA_DIR": str(data_dir), "SVOYAK_CONFIG": str(data_dir / "none.toml"),
                    "SVOYAK_CAPTURE_SOCKET": str(data_dir / "capture.sock"), "PYTHONPATH": str(ROOT)}
        self.log = open(data_dir / "box.log", "a")
        self.capture: subprocess.Popen | None = None
        self.server: subprocess.Popen | None = None

    def _spawn(self, *argv: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "appliance.cli", *argv], env=self.env, cwd=ROOT,
                                stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def start_capture(self) -> None:
        self.capture = self._spawn("capture", "--simulator")

    def start_server(self) -> None:
        self.server = self._spawn("serve", "--simulator", "--port", str(self.port))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                raise RuntimeError(f"svoyak serve exited with {self.server.returncode}: see {self.log.name}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise TimeoutError("svoyak serve did not listen within 60 s")

    @property
    def pin(self) -> str:
        return json.loads((self.data_dir / "identity.json").read_text())["host_pin"]

    @staticmethod
    def _kill(process: subprocess.Popen | None) -> None:
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait(timeout=30)

    def kill_server(self) -> None:
        self._kill(self.server)

    def kill_capture(self) -> None:
        self._kill(self.capture)

    def stop(self) -> None:
        for process in (self.server, self.capture):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    self._kill(process)
        self.log.close()


class Host:
    """The host's tablet and the simulator page as Socket.IO clients; ``view`` follows the updates."""

    def __init__(self, box: Box) -> None:
        import socketio

        self.view: dict | None = None
        self.seq = -1
        self.changed = threading.Condition()
        self.sio = socketio.Client(reconnection=False)
        self.sio.on("snapshot", self._snapshot, namespace="/host")
        self.sio.on("update", self._update, namespace="/host")
        connect(self.sio, box.url, namespaces=["/host", "/sim"], auth={"pin": box.pin}, transports=["websocket"],
                wait_timeout=10)

    def _snapshot(self, data) -> None:
        with self.changed:
            self.view, self.seq = data["view"], data["seq"]
            self.changed.notify_all()

    def _update(self, data) -> None:
        with self.changed:
            if self.view is None or data["seq"] != self.seq + 1:
                self.sio.emit("resync", {}, namespace="/host")
                return
            self.view.update(data["changes"])
            for key in data["removed"]:
                self.view.pop(key, None)
            self.seq = data["seq"]
            self.changed.notify_all()

    def wait_view(self, timeout: float = 10) -> dict:
        with self.changed:
            self.changed.wait_for(lambda: self.view is not None, timeout=timeout)
            if self.view is None:
                raise TimeoutError("no snapshot")
            return json.loads(json.dumps(self.view))

    def command(self, name: str, command_id: str, args: dict | None = None, timeout: float = 15) -> dict:
        return self.sio.call("command", {"id": command_id, "name": name, "args": args or {}}, namespace="/host",
                             timeout=timeout)

    def press(self, player: int) -> dict:
        ack = self.sio.call("simulate", {"player": player, "action": "press"}, namespace="/sim", timeout=5)
        self.sio.call("simulate", {"player": player, "action": "release"}, namespace="/sim", timeout=5)
        return ack

    def close(self) -> None:
        close(self.sio)


def allowed(view: dict, name: str) -> bool:
    verdicts = view.get("allowed") or {}
    return name in verdicts and not verdicts[name]


def choose(view: dict, rng: random.Random) -> tuple[str, dict] | tuple[None, int]:
    """The next host command the script plays from the view, or ``(None, player)``: a player must press."""
    battle = view.get("battle")
    if battle is None or battle.get("finished"):
        return "setup", SETUP
    if allowed(view, "point"):
        return "point", {}
    if allowed(view, "right"):
        return ("right" if rng.random() < 0.6 else "wrong"), {}
    if allowed(view, "next"):
        return "next", {}
    if allowed(view, "reading_done") and rng.random() < 0.3:
        return "reading_done", {}
    eligible = [p["index"] for p in view.get("players") or [] if p.get("eligible")]
    return None, rng.choice(eligible) if eligible else 0


def play(data_dir: Path, commands: int, kills: int, seed: int, resend_storm: int = 5,
         log=lambda text: None) -> Figures:
    """Play ``commands`` host commands with ``kills`` random SIGKILLs among them; check the store after."""
    rng = random.Random(seed)
    figures = Figures()
    box = Box(data_dir)
    box.start_capture()
    box.start_server()
    host = Host(box)
    acked: dict[str, tuple[str, dict]] = {}   # command id -> (name, first ack)
    sent_names: dict[str, str] = {}
    numbers = iter(range(1, 10**9))
    kill_at = sorted(rng.sample(range(1, commands), min(kills, commands - 1)))
    steps = 0
    try:
        while figures.commands_acknowledged < commands and steps < commands * 20:
            steps += 1
            view = host.wait_view()
            name, args = choose(view, rng)
            if name is None:
                try:
                    ack = host.press(args)
                    figures.presses += bool(ack.get("ok"))
                except Exception:  # the link may be down right now: the script tries something else
                    pass
                time.sleep(0.01)
                continue
            command_id = f"chaos-{seed}-{next(numbers)}"
            sent_names[command_id] = name
            killer = None
            if kill_at and figures.commands_acknowledged >= kill_at[0]:
                kill_at.pop(0)
                which = rng.choice(("server", "server", "capture", "both"))
                delay_s = rng.uniform(0, 0.006)  # a random moment around the command's way in and its commit
                killer = threading.Thread(target=_kill_after, args=(box, which, delay_s, figures))
                killer.start()
            try:
                ack = host.command(name, command_id, args)
            except Exception:
                ack = None
            if killer is not None:
                killer.join()
            if ack is None or (not ack.get("ok") and ack.get("error", {}).get("code") == "error.internal"):
                # no answer: the box died under the command. Start what was killed, resend the same id.
                figures.commands_in_flight_at_a_kill += 1
                host.close()
                host = _restart(box, log)
                ack = _resend_until_answered(host, name, command_id, args, figures)
                if ack is None:
                    figures.problems.append(f"{command_id} {name}: no answer after the restart")
                    continue
            elif killer is not None and box.server.poll() is None and box.capture.poll() is not None:
                box.start_capture()  # only the capture died: the link reconnects on its own
            if box.server.poll() is not None:  # killed right after answering
                host.close()
                host = _restart(box, log)
            if ack.get("ok"):
                if command_id in acked:
                    pass
                elif ack.get("duplicate"):
                    # the first send was stored before the kill and its answer was lost: still one command
                    figures.in_flight_already_stored += 1
                    acked[command_id] = (name, {**ack, "duplicate": False})
                else:
                    acked[command_id] = (name, ack)
                figures.commands_acknowledged = len(acked)
                figures.battles += name == "setup"
                if killer is not None or rng.random() < 0.05:
                    _storm(host, acked, rng, resend_storm, figures)
            else:
                figures.refused += 1
        _storm(host, acked, rng, len(acked), figures)  # at the end: every acknowledged command once more
    finally:
        host.close()
        box.stop()
    _check(data_dir, acked, sent_names, figures)
    return figures


def _kill_after(box: Box, which: str, delay_s: float, figures: Figures) -> None:
    time.sleep(delay_s)
    if which in ("server", "both"):
        box.kill_server()
        figures.server_kills += 1
    if which in ("capture", "both"):
        box.kill_capture()
        figures.capture_kills += 1


def _restart(box: Box, log) -> Host:
    if box.capture.poll() is not None:
        box.start_capture()
    if box.server.poll() is not None:
        box.start_server()
    log("restarted")
    for _attempt in range(50):
        try:
            return Host(box)
        except Exception:  # the server listens a moment before it serves
            time.sleep(0.1)
    raise RuntimeError("could not reconnect to the box")


def _resend_until_answered(host: Host, name, command_id, args, figures: Figures) -> dict | None:
    for _attempt in range(5):
        figures.resends += 1
        try:
            return host.command(name, command_id, args, timeout=10)
        except Exception:
            time.sleep(0.2)
    return None


def _storm(host: Host, acked: dict, rng: random.Random, count: int, figures: Figures) -> None:
    """Resend ``count`` acknowledged commands: each must answer ``duplicate: true`` with its first result."""
    for command_id in rng.sample(sorted(acked), min(count, len(acked))):
        name, first = acked[command_id]
        again = None
        for _attempt in range(3):  # a slow moment of a loaded machine is not a wrong answer: ask again
            figures.resends += 1
            try:
                again = host.command(name, command_id, SETUP if name == "setup" else {})
                break
            except Exception:
                time.sleep(0.2)
        if again is None:
            figures.unanswered_resends += 1
            continue
        if again.get("ok") and again.get("duplicate"):
            figures.duplicates_answered += 1
            if again.get("battle_id") != first.get("battle_id"):
                figures.wrong_resend_answers += 1
                figures.problems.append(f"{command_id}: resend answered for {again.get('battle_id')}")
        else:
            figures.wrong_resend_answers += 1
            figures.problems.append(f"{command_id} {name}: resend answered {again}")


def _check(data_dir: Path, acked: dict, sent_names: dict, figures: Figures) -> None:
    """Every acknowledged command is in the store, once, with the events its name stands for; every stored
    command (acknowledged or not) is whole: no "next" with its price and without its reading; all replays."""
    from appliance.service.battles import Battles
    from appliance.store import BATTLE, open_store

    with open_store(data_dir) as store:
        battles = Battles(store)
        if battles.broken:
            figures.problems.append(f"battles that do not replay: {battles.broken}")
        by_command: dict[str, list] = {}
        for battle_id in store.stream_ids(BATTLE):
            for row in store.read(BATTLE, battle_id):
                if row.command_id is not None:
                    by_command.setdefault(row.command_id, []).append(row)
        for command_id, (name, ack) in acked.items():
            stored = store.command(BATTLE, command_id)
            rows = by_command.get(command_id, [])
            if stored is None:
                figures.lost += 1
                figures.problems.append(f"lost: {command_id} {name}")
                continue
            types = tuple(type(row.event).__name__ for row in rows)
            if types not in EVENTS_OF.get(name, [types]):
                if len(rows) > max(len(option) for option in EVENTS_OF[name]):
                    figures.doubled += 1
                    figures.problems.append(f"doubled: {command_id} {name} stored {types}")
                else:
                    figures.wrong_events += 1
                    figures.problems.append(f"wrong events: {command_id} {name} stored {types}")
            if stored.result is not None and stored.result.get("battle_id") != ack.get("battle_id"):
                figures.problems.append(f"{command_id}: stored for {stored.result.get('battle_id')}, "
                                        f"acknowledged for {ack.get('battle_id')}")
        for command_id, rows in by_command.items():
            name = sent_names.get(command_id)
            types = tuple(type(row.event).__name__ for row in rows)
            if command_id not in acked and name in EVENTS_OF and types not in EVENTS_OF[name]:
                figures.wrong_events += 1
                figures.problems.append(f"half a command: {command_id} {name} stored {types}")
        # a command id under two streams, or events of one command not side by side: applied twice
        for command_id, rows in by_command.items():
            if len({row.stream_id for row in rows}) > 1 or \
                    [row.seq for row in rows] != list(range(rows[0].seq, rows[0].seq + len(rows))):
                figures.doubled += 1
                figures.problems.append(f"doubled: {command_id} spread over {[(r.stream_id, r.seq) for r in rows]}")
