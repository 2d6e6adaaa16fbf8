"""sd_notify from the serving process: READY=1 and WATCHDOG=1 reach a datagram socket like systemd's."""

from __future__ import annotations

import socket

import pytest

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


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the thread is killed on purpose
def test_the_watchdog_stops_when_the_deadlines_or_capture_link_thread_dies(tmp_path, settings, memory_battles):
    """The worker pings only while the session's lock is free and its threads run (issue 10: a dead deadlines
    thread left press windows open for ever and systemd never knew)."""
    import threading

    from appliance.service.battle_adapter import BattleAdapter
    from appliance.service.capture_link import CaptureLink
    from appliance.service.session import Session

    path = str(tmp_path / "notify.sock")
    link = CaptureLink(tmp_path / "no-capture.sock", on_event=lambda event: None, heartbeat_ms=50, timeout_ms=400)
    session = Session(memory_battles, BattleAdapter(), capture=link)
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as systemd:
        systemd.bind(path)
        systemd.settimeout(5)
        session.start()
        link.start()                                     # reconnects in the background: its thread runs
        notifier = Notifier(path)
        notifier.start_watchdog(20_000, session.is_healthy)  # every 10 ms
        assert systemd.recv(100) == b"WATCHDOG=1"

        # the deadlines' thread dies (a bug in its loop): no more pings
        died = threading.Event()

        def broken_clock():
            died.set()
            raise RuntimeError("a bug in the deadlines' loop")

        session.deadlines._clock = broken_clock
        session.deadlines.set("press_window", 10**18, lambda key, at_ns: None)  # wakes it
        assert died.wait(5)
        session.deadlines._thread.join(5)
        assert not session.is_healthy()
        drain(systemd)
        systemd.settimeout(0.3)
        assert received_nothing(systemd)

        # the same for the capture link's thread, with the deadlines running again
        session.deadlines._clock = __import__("time").monotonic_ns
        session.deadlines.start()
        systemd.settimeout(5)
        assert systemd.recv(100) == b"WATCHDOG=1"
        link.close()
        assert not link.alive() and not session.is_healthy()
        drain(systemd)
        systemd.settimeout(0.3)
        assert received_nothing(systemd)
        notifier.stop()
        session.close()


def drain(sock) -> None:
    sock.settimeout(0.05)
    try:
        while True:
            sock.recv(100)
    except TimeoutError:
        pass


def received_nothing(sock) -> bool:
    try:
        sock.recv(100)
    except TimeoutError:
        return True
    return False
