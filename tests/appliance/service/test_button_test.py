"""The host's button test over the real capture link and a real capture service on mock pins.

The session used to wait for the capture's reply holding its lock; the reply comes on the link's thread, which
first delivers the capture's events under that same lock: the test always failed after 2 s with
``error.capture_down``, the heartbeat lapsed, the link dropped and presses stalled for everyone.
"""

from __future__ import annotations

import threading

import pytest

from appliance.service.battle_adapter import BattleAdapter
from appliance.service.battles import Battles
from appliance.service.capture_link import CaptureLink
from appliance.service.session import Session
from appliance.store import BATTLE, EventStore
from gpio.pins import open_backend
from gpio.sdnotify import Notifier
from gpio.service import CaptureService, wait_for

from .conftest import setup_args

HEARTBEAT_MS, TIMEOUT_MS = 50, 400


@pytest.fixture
def box(settings, tmp_path):
    capture_settings = settings.replace(capture_socket=tmp_path / "c.sock", capture_heartbeat_ms=HEARTBEAT_MS,
                                        capture_link_timeout_ms=TIMEOUT_MS)
    service = CaptureService(capture_settings, backend=open_backend("mock"), notifier=Notifier(environ={}))
    service.start()
    store = EventStore(tmp_path / "events.sqlite")
    session = Session(Battles(store), BattleAdapter(), simulator=True)
    seen: list[dict] = []

    def on_event(message):  # every capture event the session is handed, in order
        seen.append(message)
        session.on_capture_event(message)

    link = CaptureLink(capture_settings.capture_socket, on_event=on_event, heartbeat_ms=HEARTBEAT_MS,
                       timeout_ms=TIMEOUT_MS, on_connection=session.on_capture_connection)
    session.capture = link
    session.updates = []
    session.subscribe(session.updates.append)
    session.start(timer_thread=False)
    link.start()
    assert link.wait_connected(5)
    session.seen = seen
    yield session
    link.close()
    service.close()
    session.close()
    store.close()


def link_drops(session) -> list:
    return [u for u in session.updates if (u["event"] or {}).get("type") == "CaptureDisconnected"]


def test_the_button_test_answers_keeps_the_link_and_loses_no_press(box):
    box.command("setup", setup_args(), "s1")
    box.command("next", {}, "n1")
    box.command("next", {}, "n2")                              # armed: eurocup 2.5, presses from the price on
    assert wait_for(lambda: box.snapshot()["view"]["capture"]["connected"])
    # a press lands while the button test's request is on its way (and the link's thread delivers it)
    started = threading.Event()
    presser = threading.Thread(target=lambda: (started.wait(2), box.capture.simulate_press(2).result(2)))
    presser.start()
    started.set()
    result = box.command("button_test", {"on": True}, "t1")
    presser.join(5)
    assert result["duplicate"] is False and box.snapshot()["view"]["button_test"] is True
    assert wait_for(lambda: any(m["event"] == "press" for m in box.seen), timeout=10)  # delivered, not lost
    press = next(m for m in box.seen if m["event"] == "press")
    if press["status"] == "won":                               # before the test began: a signal, stored
        assert any(type(row.event).__name__ == "ButtonPressed"
                   for row in box.battles.store.read(BATTLE, box.battle_id))
    else:
        assert press["status"] == "test"                       # during the test: its LED, not a signal
    # while the test is on, a press lights its LED and is no signal; the link stays up throughout
    box.capture.simulate_press(3).result(2)
    assert wait_for(lambda: sum(m["event"] == "press" for m in box.seen) >= 2, timeout=10)
    assert box.command("button_test", {"on": False}, "t2")["duplicate"] is False
    assert box.command("button_test", {"on": False}, "t2")["duplicate"] is True
    assert link_drops(box) == [] and box.capture.connected
    # the battle's plan is back: a press is a signal again (won, or disarmed if Борис got the turn before the
    # test began: either way no more a test press, and handed to the engine)
    box.capture.simulate_press(1).result(2)
    assert wait_for(lambda: any(m["event"] == "press" and m["player"] == 1 for m in box.seen), timeout=10)
    last = [m for m in box.seen if m["event"] == "press" and m["player"] == 1][-1]
    assert last["status"] in box.FORWARDED_PRESSES


def test_a_button_test_while_the_capture_is_down_is_refused_at_once(box):
    box.capture.close()
    assert wait_for(lambda: not box.capture.connected)
    from appliance.service.session import CommandRejected
    with pytest.raises(CommandRejected) as refused:
        box.command("button_test", {"on": True}, "t1")
    assert refused.value.code == "error.capture_down"
    assert box.battles.command("t1") is None
