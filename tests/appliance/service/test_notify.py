"""sd_notify from the serving process: READY=1 and WATCHDOG=1 reach a datagram socket like systemd's."""

from __future__ import annotations

import socket

from appliance.service.notify import Notifier, systemd_environment


def test_ready_and_watchdog_reach_the_notify_socket(tmp_path):
    path = str(tmp_path / "notify.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as systemd:
        systemd.bind(path)
        systemd.settimeout(5)
        notifier = Notifier(path)
        assert notifier.send("READY=1")
        assert systemd.recv(100) == b"READY=1"
        notifier.start_watchdog(2_000, lambda: True)   # every 1 ms
        assert systemd.recv(100) == b"WATCHDOG=1"
        notifier.stop()


def test_an_unhealthy_session_withholds_the_watchdog(tmp_path):
    path = str(tmp_path / "notify.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as systemd:
        systemd.bind(path)
        systemd.settimeout(0.2)
        checked = []
        notifier = Notifier(path)
        notifier.start_watchdog(2_000, lambda: checked.append(1) or False)
        try:
            systemd.recv(100)
            received = True
        except TimeoutError:
            received = False
        notifier.stop()
        assert checked and not received


def test_the_variables_are_taken_from_the_arbiter():
    environ = {"NOTIFY_SOCKET": "@/org/freedesktop/systemd1/notify", "WATCHDOG_USEC": "15000000", "PATH": "/bin"}
    assert systemd_environment(environ, pop=True) == ("@/org/freedesktop/systemd1/notify", 15_000_000)
    assert environ == {"PATH": "/bin"}
