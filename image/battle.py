"""The host side of ./dev image-test's battle runs: a host tablet and a scoreboard over Socket.IO, and the
button pressed through QEMU's QMP socket (``system_powerdown`` raises PL061 line 3 of the virt board).

    python image/battle.py press URL PIN QMP_SOCKET [--presses N]   press player 1's button N times (--gpio)
    python image/battle.py play URL PIN [--commands N]              a scripted battle (or more of the one on)
    python image/battle.py view URL PIN                             the host's view now (after a reboot)
    python image/battle.py status URL                               the capture service, as the board shows it
    python image/battle.py push QMP_SOCKET [--presses N]            just press (no battle): for gpio-bench

Each prints one JSON object on its last line. Run with the project's venv (python-socketio).
"""

from __future__ import annotations

import argparse
import json
import queue
import socket
import sys
import time

import socketio

SETUP = {"profile": "eurocup", "players": ["Аня", "Борис"],
         "themes": [{"name": "Реки"}, {"name": "Кино"}, {"name": "Химия"}, {"name": "Спорт"}]}
# View keys that change by themselves (clocks, links), not by the battle's events.
VOLATILE = ("server_now_ns", "capture", "capture_link", "clock", "now_ns", "phones_connected", "links")


class Client:
    """One Socket.IO namespace, its view kept up to date from snapshot and update messages."""

    def __init__(self, url: str, namespace: str, auth: dict | None = None, timeout_s: float = 20):
        self.namespace, self.view, self.seq = namespace, None, None
        self.changes: queue.Queue = queue.Queue()
        self.sio = socketio.Client(reconnection=False)
        self.sio.on("snapshot", self._snapshot, namespace=namespace)
        self.sio.on("update", self._update, namespace=namespace)
        self.sio.connect(url, namespaces=[namespace], auth=auth, transports=["websocket"], wait_timeout=timeout_s)

    def _snapshot(self, data):
        self.seq, self.view = data["seq"], data["view"]
        self.changes.put((time.monotonic_ns(), dict(self.view)))

    def _update(self, data):
        if self.seq is not None and data["seq"] == self.seq + 1:
            self.view.update(data["changes"])
            for key in data["removed"]:
                self.view.pop(key, None)
            self.seq = data["seq"]
            self.changes.put((time.monotonic_ns(), dict(self.view)))
        else:
            self.sio.emit("resync", {}, namespace=self.namespace)

    def wait(self, predicate, timeout_s: float) -> tuple[int, dict]:
        """(host monotonic ns when it arrived, view) of the first view that satisfies ``predicate``."""
        deadline = time.monotonic() + timeout_s
        if self.view is not None and predicate(self.view):
            return time.monotonic_ns(), dict(self.view)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.namespace}: no such view in {timeout_s} s (last: {self.view})")
            try:
                arrived, view = self.changes.get(timeout=left)
            except queue.Empty:
                continue
            if predicate(view):
                return arrived, view

    def command(self, name: str, command_id: str, **args) -> dict:
        ack = self.sio.call("command", {"id": command_id, "name": name, "args": args}, namespace=self.namespace,
                            timeout=30)
        if not ack or not ack.get("ok"):
            raise RuntimeError(f"{name} refused: {ack}")
        return ack

    def close(self):
        self.sio.disconnect()


class Qmp:
    """QEMU's machine protocol on a Unix socket: one command at a time."""

    def __init__(self, path: str):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.file = self.sock.makefile("rwb")
        self._read()  # greeting
        self.execute("qmp_capabilities")

    def _read(self) -> dict:
        while True:
            message = json.loads(self.file.readline())
            if "event" not in message:
                return message

    def execute(self, command: str) -> dict:
        self.file.write(json.dumps({"execute": command}).encode() + b"\n")
        self.file.flush()
        reply = self._read()
        if "error" in reply:
            raise RuntimeError(f"qmp {command}: {reply['error']}")
        return reply


def stable(view: dict) -> dict:
    return {key: value for key, value in view.items() if key not in VOLATILE}


def press(args) -> dict:
    host = Client(args.url, "/host", {"pin": args.pin})
    board = Client(args.url, "/board")
    host.command("setup", "t-setup", **SETUP)
    if args.qmp == "sim":  # a dry run against `svoyak run --simulator`: the on-screen buzzer instead of QMP
        sim = Client(args.url, "/sim")
        def push():
            for action in ("press", "release"):
                sim.sio.call("simulate", {"player": 0, "action": action}, namespace="/sim", timeout=10)
    else:
        push = lambda: Qmp(args.qmp).execute("system_powerdown")  # noqa: E731
    latencies_ms, answerers, presses = [], [], []
    for number in range(1, args.presses + 1):
        if number == 1:
            host.command("next", "t-theme")  # the theme's announcement, then each "next" reads a question
        host.command("next", f"t-next-{number}")
        board.wait(lambda view: view.get("answerer") is None, 10)
        sent = time.monotonic_ns()
        push()  # QMP system_powerdown: PL061 line 3 high for ~100 ms, player 1's button
        arrived, seen = board.wait(lambda view: view.get("answerer") is not None, 30)
        answerers.append(seen["answerer"])
        presses.append(seen.get("presses", []))
        latencies_ms.append(round((arrived - sent) / 1e6, 1))
        time.sleep(0.5)  # past the pulse's falling edge
        try:
            host.command("right", f"t-right-{number}")
        except RuntimeError as error:
            allowed = sorted(name for name, refusal in host.view.get("allowed", {}).items() if refusal is None)
            raise RuntimeError(f"press {number}: {error}; allowed {allowed}, answerer {host.view.get('answerer')}, "
                               f"board answerer {board.view.get('answerer')}") from None
    result = {"latencies_ms": latencies_ms, "answerers": answerers, "presses": presses, "view": stable(board.view)}
    host.close()
    board.close()
    return result


def played(view: dict) -> int:
    """Questions played so far: the battle's progress that a lost command would set back."""
    return sum(len(theme["played"]) for theme in view.get("themes", []))


def play(args) -> dict:
    """Set a battle up (unless one is on), then ``--commands`` host steps: "next" and "withdraw" in turn.

    Each acknowledged step is printed as it comes (``{"acked": seq, "played": n}``): a run killed mid-way
    still says what the box had acknowledged."""
    host = Client(args.url, "/host", {"pin": args.pin})
    host.wait(lambda view: True, 20)
    if not host.view.get("battle") or host.view["battle"].get("finished"):
        host.command("setup", f"t-setup-{time.monotonic_ns()}", **SETUP)
        host.wait(lambda view: view.get("battle"), 10)
    for number in range(args.commands):
        allowed = {name for name, refusal in host.view.get("allowed", {}).items() if refusal is None}
        name = "next" if "next" in allowed else "withdraw"
        ack = host.command(name, f"t-{time.monotonic_ns()}-{number}")
        host.wait(lambda view, seq=ack["seq"]: host.seq >= seq, 10)
        print(json.dumps({"acked": ack["seq"], "played": played(host.view)}), flush=True)
    result = {"played": played(host.view), "view": stable(host.view)}
    host.close()
    return result


def view(args) -> dict:
    host = Client(args.url, "/host", {"pin": args.pin})
    host.wait(lambda view: True, 20)
    result = {"view": stable(host.view)}
    host.close()
    return result


def status(args) -> dict:
    """What the scoreboard says about the capture service (its pin factory, precision, link)."""
    board = Client(args.url, "/board")
    _, seen = board.wait(lambda view: view.get("capture", {}).get("connected"), 60)
    board.close()
    return {"capture": seen["capture"]}


def push(args) -> dict:
    """Press the button ``--presses`` times over QMP, ``--gap`` seconds apart (for gpio-bench)."""
    qmp = Qmp(args.qmp)
    for _ in range(args.presses):
        qmp.execute("system_powerdown")
        time.sleep(args.gap)
    return {"pushed": args.presses}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("press", "play", "view", "status"):
        sub = commands.add_parser(name)
        sub.add_argument("url")
        if name != "status":
            sub.add_argument("pin")
        if name == "press":
            sub.add_argument("qmp")
            sub.add_argument("--presses", type=int, default=3)
        if name == "play":
            sub.add_argument("--commands", type=int, default=3)
    sub = commands.add_parser("push")
    sub.add_argument("qmp")
    sub.add_argument("--presses", type=int, default=5)
    sub.add_argument("--gap", type=float, default=0.4)
    args = parser.parse_args(argv)
    result = {"press": press, "play": play, "view": view, "status": status, "push": push}[args.command](args)
    print(json.dumps(result, ensure_ascii=False, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
