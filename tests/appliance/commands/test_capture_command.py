"""`svoyak capture` as a real process: ready notification, socket, SIGTERM, clean exit; `svoyak hwcheck`."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

from appliance.cli import main
from appliance.service.capture_link import CaptureLink


def test_capture_process_notifies_ready_serves_and_stops_cleanly_on_sigterm(tmp_path):
    notify = tmp_path / "notify"
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    receiver.bind(str(notify))
    receiver.settimeout(20)
    env = {**os.environ, "SVOYAK_DATA_DIR": str(tmp_path), "NOTIFY_SOCKET": str(notify), "SVOYAK_CONFIG": "",
           "PYTHONWARNINGS": "error"}
    env.pop("GPIOZERO_PIN_FACTORY", None)
    process = subprocess.Popen([sys.executable, "-m", "appliance.cli", "capture", "--simulator"], env=env,
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
