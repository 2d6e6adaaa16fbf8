"""One battle timeline across boots: a power cut or a reboot mid-battle, and the host goes on with the battle.

CLOCK_MONOTONIC restarts near 0 at every boot, and the battle log holds the old boot's times. A box is a
session over a real SQLite file; a "reboot" is a new process over the same file whose hand clock restarts
near 0 (and, where the box tells it, a new boot id). Presses come through the capture path with the
kernel-style timestamps of the boot they happen in.
"""

from __future__ import annotations

import pytest

from appliance.service.battle_adapter import BattleAdapter
from appliance.service.battles import Battles
from appliance.service.session import Session
from appliance.service.timers import Deadlines
from appliance.store import BATTLE, EventStore
from tests.conftest import FakeClock, RecordingCapture

from .conftest import setup_args

S = 1_000_000_000  # one second in ns


class Box:
    """A session over ``path``; :meth:`boot` is a power cut and a new boot (a new process, clock near 0)."""

    def __init__(self, path, clock: FakeClock, boot_id: str | None = None):
        self.path, self.store = path, None
        self.boot(clock, boot_id)

    def boot(self, clock: FakeClock, boot_id: str | None = None) -> "Box":
        if self.store is not None:
            self.store.close()
        self.clock, self.capture = clock, RecordingCapture()
        self.store = EventStore(self.path)
        self.battles = Battles(self.store)
        kwargs = {} if boot_id is None else {"boot_id": boot_id}
        self.session = Session(self.battles, BattleAdapter(), capture=self.capture, clock=clock,
                               deadlines=Deadlines(clock), **kwargs)
        self.capture.session = self.session
        self.session.start(timer_thread=False)
        return self

    def command(self, name, command_id, **args):
        return self.session.command(name, args, command_id)

    def view(self):
        return self.session.snapshot()["view"]

    def stored(self):
        return [row.event for row in self.store.read(BATTLE, self.session.battle_id)]


def play_into_a_question(box: Box) -> None:
    """A theme, one question answered right by Борис, and the second question's reading begun."""
    box.command("setup", "s1", **setup_args())
    box.command("next", "n1")
    box.command("next", "n2")
    box.clock.advance(4000)
    box.command("reading_done", "d1")
    box.clock.advance(1500)
    box.capture.press(2, t_ns=box.clock.now_ns)               # the capture numbers players from 1
    box.command("point", "p1")
    box.command("right", "r1")
    box.command("next", "n3")                                 # 20 points, reading
    box.clock.advance(3000)
    assert box.session.state.scores == (0, 10, 0)



def test_after_a_power_cut_the_host_goes_on_with_the_battle_in_the_new_boots_clock(tmp_path):
    """The old boot ran 50,000 s; the new one serves 3 s after its start. Nothing was said «со старым временем»."""
    box = Box(tmp_path / "events.sqlite", FakeClock(50_000 * S))
    play_into_a_question(box)
    battle = box.session.battle_id
    last_before = box.stored()[-1].at_ns

    box.boot(FakeClock(3 * S))                                # the power comes back: CLOCK_MONOTONIC near 0
    assert box.session.battle_id == battle and box.session.state.scores == (0, 10, 0)
    box.command("reading_done", "d2")                         # accepted: stamped after the last stored event
    done = box.stored()[-1]
    assert type(done).__name__ == "ReadingFinished" and done.at_ns > last_before
    window = box.view()["deadlines"]["press_window"]
    assert window["at_ns"] - box.session.snapshot()["server_now_ns"] == 7 * S   # eurocup 2.5: a whole 7 s
    box.clock.advance(2000)
    box.capture.press(3, t_ns=box.clock.now_ns)              # the new boot's kernel edge time
    assert box.session.state.answerer == 2
    box.command("point", "p2")
    box.command("wrong", "w2")                               # eurocup 2.9: the window opens again for 7 s
    assert box.session.state.scores == (0, 10, -20)
    box.clock.advance(6999)
    assert box.session.deadlines.run_due() == 0              # not before its time
    box.capture.press(1, t_ns=box.clock.now_ns)
    box.command("point", "p3")
    box.command("right", "r3")
    assert box.session.state.scores == (20, 10, -20)
    times = [event.at_ns for event in box.stored()]
    assert times == sorted(times)                             # one monotone timeline, across the cut
    box.store.close()
