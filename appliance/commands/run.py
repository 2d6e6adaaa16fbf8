"""``svoyak run``: the whole box on one machine. The capture service on mock pins (``svoyak capture
--simulator``) as a subprocess, then the web server; prints the URLs and the host PIN. ``./dev run`` runs it.

On a machine with GPIO (``/dev/gpiochip0``) and without ``--simulator`` the capture runs on real pins.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from appliance.commands import serve as serve_command


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
    capture = None
    if not args.no_capture:
        command = [sys.executable, "-m", "appliance.cli", "capture"] + (["--simulator"] if settings.simulator else [])
        capture = subprocess.Popen(command, env=capture_environment(settings))
        # The web side's link reconnects on its own; a short wait only makes the first page load show "connected".
        deadline = time.monotonic() + 5
        while not Path(settings.capture_socket).exists() and time.monotonic() < deadline and capture.poll() is None:
            time.sleep(0.05)
    spectators = None
    if settings.spectators and not args.no_spectators:
        # The spectators' fan-out (docs/spectators.md): on the box svoyak-spectators.service runs it.
        spectators = subprocess.Popen([sys.executable, "-m", "appliance.cli", "spectators"],
                                      env=capture_environment(settings), stdout=subprocess.DEVNULL)
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
