"""``svoyak run``: the whole box on one machine. The capture service on mock pins (``svoyak capture
--simulator``) as a subprocess, then the web server; prints the URLs and the host PIN. ``./dev run`` runs it.

On a machine with GPIO (``/dev/gpiochip0``) and without ``--simulator`` the capture runs on real pins.

The children die with this process, however it ends (``kill -9`` included): the capture service and nats-server
through the kernel's parent-death signal (:mod:`appliance.service.supervision`), gunicorn's worker likewise
(``svoyak serve``). A capture service that cannot start (another, live one holds this data directory) stops
this command with its reason, instead of a box that runs with no buttons.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from svoyak.commands import serve as serve_command
from appliance.service.supervision import spawn
from gpio.lock import holder_pid

CAPTURE_START_S = 15  # a capture taking over from a stale one waits for it to end (gpio/lock.py)


def add_arguments(parser) -> None:
    serve_command.add_arguments(parser)
    parser.add_argument("--no-capture", action="store_true", help="do not start the capture service")
    parser.add_argument("--no-spectators", action="store_true",
                        help="do not start the spectators' nats-server (/watch then uses Socket.IO)")


def capture_environment(settings) -> dict:
    """The capture subprocess resolves the same settings: pass the ones that differ as SVOYAK_* variables."""
    env = dict(os.environ)
    env.update({
        "SVOYAK_DATA_DIR": str(settings.data_dir),
        "SVOYAK_CAPTURE_SOCKET": str(settings.capture_socket),
        "SVOYAK_SIMULATOR": "1" if settings.simulator else "0",
    })
    return env


def run(args) -> int:
    if args.simulator is None and not Path("/dev/gpiochip0").exists():
        args.simulator = True  # a laptop: mock pins and on-screen buzzers
    settings = serve_command.settings_from(args)
    Path(settings.data_dir).mkdir(parents=True, exist_ok=True)
    # one server per data directory, taken before the capture starts: a second ``svoyak run`` is refused with the
    # server that holds it, not with a capture that "did not start" (svoyak/commands/serve.py)
    lock = serve_command.hold_data_dir(settings)
    try:
        return _run(args, settings)
    finally:
        lock.release()


def _run(args, settings) -> int:
    capture = None
    if not args.no_capture:
        command = [sys.executable, "-m", "svoyak.cli", "capture"] + (["--simulator"] if settings.simulator else [])
        capture = spawn(command, env=capture_environment(settings))
        # The web side's link reconnects on its own; the wait makes the first page load show "connected", and
        # a capture that refuses to start is told here, not discovered as a box with no buttons.
        deadline = time.monotonic() + CAPTURE_START_S
        while not (holder_pid(settings.data_dir) == capture.pid and _listens(settings.capture_socket)) \
                and time.monotonic() < deadline and capture.poll() is None:
            time.sleep(0.05)  # its own capture (the leash execs it: the same pid) holds the lock and listens
        if capture.poll() is not None:
            print(f"svoyak run: the capture service did not start (exit {capture.returncode}), see above; "
                  "--no-capture runs the web server alone", file=sys.stderr, flush=True)
            return capture.returncode or 1
    spectators = None
    if settings.spectators and not args.no_spectators:
        # The spectators' fan-out (docs/spectators.md): on the box svoyak-spectators.service runs it. It becomes
        # nats-server (exec), which dies with this process like the capture (appliance/service/supervision.py).
        spectators = spawn([sys.executable, "-m", "svoyak.cli", "spectators"], env=capture_environment(settings),
                           stdout=subprocess.DEVNULL)
    print(serve_command.describe(settings), flush=True)
    try:
        return serve_command.serve(settings, threads=args.threads)
    finally:
        if spectators is not None and spectators.poll() is None:
            spectators.terminate()
            try:
                spectators.wait(timeout=5)
            except subprocess.TimeoutExpired:
                spectators.kill()
        if capture is not None and capture.poll() is None:
            capture.terminate()
            try:
                capture.wait(timeout=5)
            except subprocess.TimeoutExpired:
                capture.kill()


def _listens(path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()
