"""A power cut mid-battle, on a real box: `svoyak serve` and `svoyak capture` over a store that an earlier boot
left, whose times are far ahead of this boot's CLOCK_MONOTONIC (that boot ran 30 days). The host goes on with
the battle over Socket.IO, and the presses come through the capture process with this boot's edge times.

The earlier boot is a session in this test process over the same data folder, with a hand clock 30 days ahead
and its own boot id; the box then serves with the machine's real clock and boot id: no hook in the box.
"""

from __future__ import annotations

import time

import pytest

from appliance.service.battle_adapter import BattleAdapter
from appliance.service.battles import Battles
from appliance.service.session import Session
from appliance.service.timeline import STORE_KEY, Timeline
from appliance.store import BATTLE, open_store
from bench.chaos import Box, Host
from tests.conftest import FakeClock

from .conftest import setup_args

pytestmark = pytest.mark.slow

DAY_NS = 86_400 * 10**9


def earlier_boot(data_dir) -> str:
    """The battle as the earlier boot left it: question 1 won by Борис, question 2 being read."""
    clock = FakeClock(time.monotonic_ns() + 30 * DAY_NS)
    store = open_store(data_dir)
    session = Session(Battles(store), BattleAdapter(), clock=clock, boot_id="an-earlier-boot").start(
        timer_thread=False)
    for number, (name, args) in enumerate([("setup", setup_args()), ("next", {}), ("next", {}),
                                           ("reading_done", {}), ("press", {"player": 1}), ("point", {}),
                                           ("right", {}), ("next", {})]):
        clock.advance(700)
        if name == "press":  # a kernel edge of that boot, through the session's capture path
            session.on_capture_event({"event": "press", "seq": number, "player": 2, "t_ns": clock.now_ns,
                                      "status": "won"})
        else:
            session.command(name, args, f"earlier-{number}")
    assert session.state.scores == (0, 10, 0) and session.state.current_question.reading == "reading"
    battle = session.battle_id
    session.close()
    store.close()
    return battle


def wait_for(host: Host, test, what: str, timeout_s: float = 20) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        view = host.wait_view()
        if test(view):
            return view
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {timeout_s} s; the view: {view}")


def test_after_a_power_cut_the_box_serves_the_battle_on_and_presses_count(tmp_path):
    battle = earlier_boot(tmp_path)
    box = Box(tmp_path)
    host = None
    try:
        box.start_capture()
        box.start_server()
        host = Host(box)
        view = wait_for(host, lambda view: (view.get("capture") or {}).get("connected"), "the capture linked")
        assert view["battle"]["id"] == battle and [p["score"] for p in view["players"]] == [0, 10, 0]
        ack = host.command("reading_done", "after-cut-1")
        assert ack["ok"] is True, ack                    # not «Команда пришла со старым временем»
        view = wait_for(host, lambda view: view["deadlines"]["press_window"] is not None, "the press window")
        assert view["deadlines"]["press_window"]["total_ms"] == 7000    # eurocup 2.5, whole
        assert host.press(2)["ok"] is True                # Вера's button, in the capture process (mock pin)
        view = wait_for(host, lambda view: view["answerer"] == 2, "Вера's press as the answer")
        assert [press["source"] for press in view["presses"]] == ["button"]
        assert host.command("point", "after-cut-2")["ok"] is True
        assert host.command("right", "after-cut-3")["ok"] is True
        view = wait_for(host, lambda view: [p["score"] for p in view["players"]] == [0, 10, 20], "the score")
    finally:
        if host is not None:
            host.close()
        box.stop()
    store = open_store(tmp_path)
    try:
        times = [row.event.at_ns for row in store.read(BATTLE, battle)]
        timeline = Timeline.from_record(store.meta(STORE_KEY))
    finally:
        store.close()
    assert times == sorted(times)                         # one monotone timeline across the cut
    assert timeline.boot_id not in (None, "an-earlier-boot") and timeline.offset_ns > 29 * DAY_NS
