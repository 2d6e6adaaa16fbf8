"""Boxes for the tests and the benchmarks: a free loopback port, the wait for a box's first page, and
``svoyak run --simulator`` as its own process (:func:`simulator_box`)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_http(url: str, process: subprocess.Popen, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"svoyak run exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"{url} did not answer")


@contextlib.contextmanager
def simulator_box(data_dir: Path, env: dict | None = None):
    """``svoyak run --simulator`` over ``data_dir`` on a free port, in its own process group, stopped with SIGTERM:
    ``{"url", "host_pin", "director_pin", "data_dir", "log", "pid"}`` (``pid``: the process group's leader).
    ``env``: more ``SVOYAK_*`` settings."""
    port = free_port()
    env = {**os.environ, **(env or {}), "SVOYAK_DATA_DIR": str(data_dir), "SVOYAK_CONFIG": str(data_dir / "none.toml")}
    (data_dir / "none.toml").write_text("")
    log = open(data_dir / "run.log", "w")
    process = subprocess.Popen([sys.executable, "-m", "svoyak.cli", "run", "--simulator", "--port", str(port)],
                               env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(url + "/board", process)
        identity = json.loads((data_dir / "identity.json").read_text())
        yield {"url": url, "host_pin": identity["host_pin"], "director_pin": identity["director_pin"],
               "data_dir": data_dir, "log": data_dir / "run.log", "pid": process.pid}
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()
