"""``svoyak rooms N``: a multi-room day on one machine: a hub and N stations, each a whole box (``svoyak run
--simulator``: web, capture on mock pins, its own nats-server) with its own data directory and ports, paired
with the hub; prints every URL and the PIN, and stops them all on Ctrl-C.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from appliance.service.supervision import spawn


def add_arguments(parser) -> None:
    parser.add_argument("stations", type=int, nargs="?", default=3, help="how many stations (rooms), 1-8")
    parser.add_argument("--folder", type=Path, default=Path.home() / ".local/share/svoyak-rooms",
                        help="where each box keeps its data directory (kept between runs)")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class _Box:
    def __init__(self, name: str, folder: Path, pin: str, director_pin: str) -> None:
        self.name, self.folder, self.port = name, folder, _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "none.toml").write_text("")
        env = {**os.environ, "SVOYAK_DATA_DIR": str(folder), "SVOYAK_CONFIG": str(folder / "none.toml"),
               "SVOYAK_HOST_PIN": pin, "SVOYAK_DIRECTOR_PIN": director_pin, "SVOYAK_ROOMS_LEAF_PORT": "0"}
        # spawn: each box dies with this command, kill -9 included (appliance/service/supervision.py)
        self.process = spawn([sys.executable, "-m", "svoyak.cli", "run", "--simulator", "--port", str(self.port)],
                             env=env, stdout=open(folder / "run.log", "ab"), stderr=subprocess.STDOUT,
                             start_new_session=True)
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.pin, self.director_pin = pin, director_pin

    def wait(self, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"svoyak rooms: {self.name} exited; see {self.folder}/run.log")
            try:
                self.opener.open(self.url + "/board", timeout=1).read()
                self.post("/director/login", {"pin": self.director_pin})  # the desk's PIN, not the host's
                return
            except OSError:
                time.sleep(0.2)
        raise SystemExit(f"svoyak rooms: {self.name} did not start; see {self.folder}/run.log")

    def post(self, path: str, form: dict) -> bytes:
        data = urllib.parse.urlencode(form).encode()
        return self.opener.open(urllib.request.Request(self.url + path, data=data), timeout=30).read()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        # its nats-server ends with the web process that started it (the parent-death signal): nothing to hunt


def run(args) -> int:
    if not 1 <= args.stations <= 8:
        raise SystemExit("svoyak rooms: 1 to 8 stations")
    pin = f"{secrets.randbelow(10000):04d}"
    director_pin = f"{secrets.randbelow(10 ** 6):06d}"
    hub = _Box("hub", args.folder / "hub", pin, director_pin)
    stations = [_Box(f"room{n}", args.folder / f"room{n}", pin, director_pin) for n in range(1, args.stations + 1)]
    boxes = [hub, *stations]
    try:
        for box in boxes:
            box.wait()
        hub.post("/director/rooms/role", {"role": "hub", "name": "Стол"})
        for number, box in enumerate(stations, start=1):
            code = json.loads(hub.post("/director/rooms/code.json", {}))["code"]
            box.post("/room/pair", {"hub": f"127.0.0.1:{hub.port}", "code": code, "name": f"Комната {number}"})
        print(f"Стол (hub):   {hub.url}/director/rooms   лобби {hub.url}/lobby   турниры {hub.url}/director/")
        for number, box in enumerate(stations, start=1):
            print(f"Комната {number}:   {box.url}/room   ведущий {box.url}/host   табло {box.url}/board   "
                  f"кнопки {box.url}/sim")
        print(f"PIN ведущего: {pin}   PIN стола: {director_pin}   (data: {args.folder}; Ctrl-C stops every box)",
              flush=True)
        while all(box.process.poll() is None for box in boxes):
            time.sleep(1)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        for box in boxes:
            box.stop()
