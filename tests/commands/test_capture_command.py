"""`svoyak capture` as a real process: ready notification, socket, SIGTERM, clean exit; `svoyak hwcheck`."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

from svoyak.cli import main
from appliance.service.capture_link import CaptureLink


def test_capture_process_notifies_ready_serves_and_stops_cleanly_on_sigterm(tmp_path):
    notify = tmp_path / "notify"
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    receiver.bind(str(notify))
    receiver.settimeout(20)
    env = {**os.environ, "SVOYAK_DATA_DIR": str(tmp_path), "NOTIFY_SOCKET": str(notify), "SVOYAK_CONFIG": "",
           "PYTHONWARNINGS": "error"}
    env.pop("GPIOZERO_PIN_FACTORY", None)
    process = subprocess.Popen([sys.executable, "-m", "svoyak.cli", "capture", "--simulator"], env=env,
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert receiver.recv(4096).startswith(b"READY=1")
        events = []
        with CaptureLink(tmp_path / "capture.sock", events.append, 100, 1000) as link:
            assert link.wait_connected(10)
            link.arm({1, 2}, "q1").result(5)
            link.simulate_press(2).result(5)
            assert link.status().result(5)["leds"] == [False, True, False, False]
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=20)
        assert process.returncode == 0, output.decode()
        assert b"capture service stopped" in output
        assert not (tmp_path / "capture.sock").exists()
        received = []
        receiver.settimeout(1)
        while b"STOPPING=1" not in received:
            received.append(receiver.recv(4096))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
        receiver.close()


def test_keyboard_without_simulator_is_a_clear_error(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("SVOYAK_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("SVOYAK_CONFIG", str(tmp_path / "svoyak.toml"))
    (tmp_path / "svoyak.toml").write_text('pin_factory = "lgpio"\n')
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    assert main(["capture", "--keyboard"]) == 2
    assert "--keyboard needs the mock pin factory" in capsys.readouterr().err


def test_hwcheck_jumper_dry_run_on_mock_pins(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("SVOYAK_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("SVOYAK_CONFIG", str(tmp_path / "svoyak.toml"))
    (tmp_path / "svoyak.toml").write_text("capture_debounce_ms = 1\n")
    assert main(["hwcheck", "--simulator", "--jumper", "--presses", "10"]) == 0
    out = capsys.readouterr().out
    assert "jumper check, 10 presses" in out and "edge_to_led" in out and out.rstrip().endswith("OK")


def test_simulator_keyboard_in_a_real_terminal(tmp_path):
    """`svoyak capture --simulator --keyboard` in a pseudo-terminal: a key lights a player, q quits cleanly."""
    import pty
    import select
    import time

    env = {**os.environ, "SVOYAK_DATA_DIR": str(tmp_path), "SVOYAK_CONFIG": "", "PYTHONWARNINGS": "error"}
    env.pop("GPIOZERO_PIN_FACTORY", None)
    pid, fd = pty.fork()
    if pid == 0:  # the child becomes the capture process on the terminal
        os.chdir(tmp_path)
        os.execve(sys.executable, [sys.executable, "-m", "svoyak.cli", "capture", "--simulator", "--keyboard"],
                  env)
    output = b""

    def read_until(needle: bytes, timeout: float = 20) -> None:
        nonlocal output
        deadline = time.monotonic() + timeout
        while needle not in output:
            assert time.monotonic() < deadline, output.decode(errors="replace")
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                try:
                    output += os.read(fd, 4096)
                except OSError:
                    break

    try:
        read_until(b"keys: 1-4")
        os.write(fd, b"n")  # player 3
        read_until(b"LOCKOUT: player 3 lights")
        os.write(fd, b"q")
        read_until(b"capture service stopped")
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(fd)
