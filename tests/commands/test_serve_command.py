"""`svoyak serve` as systemd runs it: gunicorn (gthread), READY=1 from the worker once the app and session run,
WATCHDOG=1 while the session is healthy, the pages served, a clean stop on SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_serve_notifies_ready_and_pings_the_watchdog_from_the_worker(tmp_path):
    notify = tmp_path / "notify"
    systemd = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    systemd.bind(str(notify))
    systemd.settimeout(60)
    port = free_port()
    (tmp_path / "none.toml").write_text("")
    env = {**os.environ, "SVOYAK_DATA_DIR": str(tmp_path), "SVOYAK_CONFIG": str(tmp_path / "none.toml"),
           "NOTIFY_SOCKET": str(notify), "WATCHDOG_USEC": "200000"}
    process = subprocess.Popen([sys.executable, "-m", "svoyak.cli", "serve", "--port", str(port)], env=env,
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        ready = systemd.recv(4096)
        assert ready.startswith(b"READY=1\nSTATUS=serving")  # from the worker, once the app is built
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/board", timeout=10) as response:
            assert response.status == 200
        assert systemd.recv(4096) == b"WATCHDOG=1"            # every WATCHDOG_USEC / 2 while healthy
        assert systemd.recv(4096) == b"WATCHDOG=1"
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
        systemd.close()
    assert process.returncode == 0, output.decode()
    assert b"Using worker: gthread" in output
    assert b"host PIN" in output                               # the console shows the PIN


def test_serve_without_its_data_partition_shows_the_fault_and_stores_nothing(tmp_path):
    """nofail data mount failed (image/image.sh): the service runs, the board says why, no store is opened."""
    notify = tmp_path / "notify"
    systemd = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    systemd.bind(str(notify))
    systemd.settimeout(60)
    port = free_port()
    (tmp_path / "none.toml").write_text("")
    env = {**os.environ, "SVOYAK_DATA_DIR": str(tmp_path / "data"), "SVOYAK_CONFIG": str(tmp_path / "none.toml"),
           "SVOYAK_DATA_MOUNT": str(tmp_path / "data"), "NOTIFY_SOCKET": str(notify), "WATCHDOG_USEC": "200000"}
    process = subprocess.Popen([sys.executable, "-m", "svoyak.cli", "serve", "--port", str(port)], env=env,
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        assert systemd.recv(4096).startswith(b"READY=1\nSTATUS=cannot store a battle")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/board", timeout=10)
            raise AssertionError("the board answered 200 without its data partition")
        except urllib.error.HTTPError as error:
            assert error.code == 503
            assert "Раздел данных не подключён" in error.read().decode()
        assert systemd.recv(4096) == b"WATCHDOG=1"
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
        systemd.close()
    assert process.returncode == 0, output.decode()
    assert b"host PIN" not in output                           # no identity read or made
    assert not (tmp_path / "data" / "identity.json").exists() and not (tmp_path / "data" / "events.sqlite").exists()
