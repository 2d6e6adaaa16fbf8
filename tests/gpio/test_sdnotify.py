"""sd_notify over a real datagram socket, as systemd's NOTIFY_SOCKET would receive it."""

from __future__ import annotations

import os
import socket

from gpio.sdnotify import Notifier


def test_notify_sends_one_datagram_to_notify_socket(tmp_path):
    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as receiver:
        receiver.bind(str(path))
        notifier = Notifier(environ={"NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "3000000",
                                     "WATCHDOG_PID": str(os.getpid())})
        assert notifier.enabled and notifier.watchdog_interval_s == 1.0
        assert notifier.notify("READY=1", "STATUS=standalone")
        assert receiver.recv(4096) == b"READY=1\nSTATUS=standalone"


def test_abstract_socket_address_and_foreign_watchdog_pid():
    notifier = Notifier(environ={"NOTIFY_SOCKET": "@svoyak-test", "WATCHDOG_USEC": "3000000", "WATCHDOG_PID": "1"})
    assert notifier.address == "\0svoyak-test"
    assert notifier.watchdog_interval_s is None  # the watchdog is meant for another process


def test_service_notifies_ready_watchdog_and_stopping(capture_settings, tmp_path):
    from gpio.pins import open_backend
    from gpio.service import CaptureService

    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as receiver:
        receiver.bind(str(path))
        receiver.settimeout(5)
        notifier = Notifier(environ={"NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "30000"})
        service = CaptureService(capture_settings, backend=open_backend("mock"), notifier=notifier)
        service.start()
        ready = receiver.recv(4096).decode()
        assert ready.startswith("READY=1\nSTATUS=standalone, 4 players, mock")
        import threading

        serving = threading.Thread(target=service.serve)
        serving.start()
        assert receiver.recv(4096) == b"WATCHDOG=1"
        service.stop()
        serving.join(5)
        service.close()
        messages = []
        while True:
            message = receiver.recv(4096)
            messages.append(message)
            if message == b"STOPPING=1":
                break
        assert messages[-1] == b"STOPPING=1"


def test_watchdog_pats_stop_when_the_capture_core_is_stuck(service):
    assert service.healthy(timeout_s=0.5)
    holder_ready = __import__("threading").Event()
    release = __import__("threading").Event()

    def hold_the_lock():
        with service.capture.lock:
            holder_ready.set()
            release.wait(5)

    holder = __import__("threading").Thread(target=hold_the_lock)
    holder.start()
    holder_ready.wait(5)
    try:
        assert not service.healthy(timeout_s=0.05)  # a hung pin call: no WATCHDOG=1, systemd restarts us
    finally:
        release.set()
        holder.join(5)
    assert service.healthy(timeout_s=0.5)
