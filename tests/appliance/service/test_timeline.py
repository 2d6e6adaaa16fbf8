"""One battle timeline across boots: a power cut or a reboot mid-battle, and the host goes on with the battle.

CLOCK_MONOTONIC restarts near 0 at every boot, and the battle log holds the old boot's times. A box is a
session over a real SQLite file; a "reboot" is a new process over the same file whose hand clock restarts
near 0 (and, where the box tells it, a new boot id). Presses come through the capture path with the
kernel-style timestamps of the boot they happen in.
"""

from __future__ import annotations

import io

from appliance.errors import StoreDriverError
from appliance.service.battle_adapter import BattleAdapter
from appliance.service.battles import Battles
from appliance.service.session import Session
from appliance.service.timeline import STORE_KEY, Timeline
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


def test_the_press_window_and_the_answer_countdown_run_on_after_the_cut_with_the_time_they_had_left(tmp_path):
    """The time the box was off counts as nothing: the window resumes with what it had after the last event."""
    box = Box(tmp_path / "events.sqlite", FakeClock(80_000 * S), boot_id="boot-1")
    play_into_a_question(box)
    box.command("reading_done", "d2")                       # eurocup 2.5: 7 s to press
    box.clock.advance(3000)
    box.boot(FakeClock(2 * S), boot_id="boot-2")            # 3 s after the last event, the power goes
    left = box.view()["deadlines"]["press_window"]["at_ns"] - box.session.clock()
    assert left == 7 * S - 1                                # the 7 s from the last stored event, less 1 ns
    box.clock.advance(6998)
    assert box.session.deadlines.run_due() == 0
    box.clock.advance(2)
    assert box.session.deadlines.run_due() == 1             # the window closes: nobody signalled (2.11.3)
    expired = box.stored()[-1]
    assert type(expired).__name__ == "PressWindowExpired" and box.session.state.current_question is None
    box.command("announce", "a2")
    box.command("next", "n4")                               # 30 points
    box.command("reading_done", "d3")
    box.clock.advance(500)
    box.capture.press(1, t_ns=box.clock.now_ns)
    box.command("point", "p4")                              # eurocup 2.8: 3 s to answer
    assert box.view()["deadlines"]["answer"]["at_ns"] - box.session.clock() == 3 * S
    box.clock.advance(3001)
    assert box.session.deadlines.run_due() == 1
    assert box.view()["allowed"]["time"] is None            # «Время» may be called now
    box.command("time", "t4")
    assert box.session.state.scores == (-30, 10, 0)         # wrong by time
    box.store.close()


def test_a_restart_within_the_same_boot_keeps_the_offset_so_a_running_window_closes_on_time(tmp_path):
    box = Box(tmp_path / "events.sqlite", FakeClock(90_000 * S), boot_id="boot-1")
    play_into_a_question(box)
    box.boot(FakeClock(4 * S), boot_id="boot-2")             # a power cut: an offset of about 90,000 s
    offset = box.session.timeline.offset_ns
    assert offset > 89_990 * S and box.session.timeline.boot_id == "boot-2"
    box.command("reading_done", "d2")
    box.clock.advance(5000)
    box.boot(box.clock, boot_id="boot-2")                   # only the web process restarts: the same clock
    assert box.session.timeline.offset_ns == offset         # the stored one, to the nanosecond
    box.clock.advance(1999)
    assert box.session.deadlines.run_due() == 0             # 7 s after reading done, not 7 s after the restart
    box.clock.advance(1)
    assert box.session.deadlines.run_due() == 0             # at the 7th second itself a signal is in time (2.5)
    box.clock.advance(1)
    assert box.session.deadlines.run_due() == 1
    assert type(box.stored()[-1]).__name__ == "PressWindowExpired"
    box.store.close()


def test_a_press_the_capture_stamped_while_the_box_was_booting_is_no_signal(tmp_path):
    """The capture works alone while the box boots and hands its presses over once the appliance connects.

    The old boot was short (its times are behind the new boot's clock, so the stored times alone would not tell
    a new boot): the boot id does. A press from before the session served is no signal in the battle."""
    box = Box(tmp_path / "events.sqlite", FakeClock(10 * S), boot_id="boot-1")
    play_into_a_question(box)
    box.command("reading_done", "d2")                       # the window: 7 s from about 20 s
    box.boot(FakeClock(30 * S), boot_id="boot-2")           # booted in 30 s
    box.capture.press(2, t_ns=22 * S)                       # pressed during the boot
    assert box.session.state.answerer is None and type(box.stored()[-1]).__name__ == "ReadingFinished"
    box.capture.press(3, t_ns=box.clock.now_ns)             # once the box serves: a signal in the window
    assert box.session.state.answerer == 2
    box.store.close()


def test_a_battle_from_another_box_ahead_of_the_timeline_is_resumed_and_played_on(tmp_path):
    """An imported log carries the other box's times; resuming it raises the offset, and never lowers it."""
    other = Box(tmp_path / "other.sqlite", FakeClock(500_000 * S), boot_id="other-boot")
    play_into_a_question(other)
    log_text = other.battles.export(other.session.battle_id)
    here = Box(tmp_path / "events.sqlite", FakeClock(60 * S), boot_id="boot-1")
    here.command("setup", "s1", **setup_args())
    first = here.session.battle_id
    imported = here.battles.import_log(io.StringIO(log_text), battle_id="imported")
    here.command("resume", "res1", battle="imported", set_aside=here.session.battle_id)
    assert here.session.timeline.offset_ns > 499_000 * S
    here.command("reading_done", "d2")
    here.clock.advance(1000)
    here.capture.press(1, t_ns=here.clock.now_ns)
    here.command("point", "p2")
    here.command("right", "r2")
    assert here.battles.state(imported).scores == (20, 10, 0)
    raised = here.session.timeline.offset_ns
    here.command("resume", "res2", battle=first, set_aside="imported")
    assert here.session.timeline.offset_ns == raised        # an older battle: the offset stays
    here.command("next", "n9")                              # and the first battle takes its commands
    other.store.close()
    here.store.close()


def test_capture_events_reach_the_pages_on_the_battle_timeline(tmp_path):
    box = Box(tmp_path / "events.sqlite", FakeClock(70_000 * S), boot_id="boot-1")
    play_into_a_question(box)
    box.boot(FakeClock(5 * S), boot_id="boot-2")
    updates = []
    box.session.subscribe(updates.append)
    box.session.on_capture_event({"event": "reset_button", "seq": 1, "t_ns": box.clock.now_ns, "round_id": "local-1"})
    event = updates[-1]["event"]
    assert event["type"] == "Capture_reset_button" and event["t_ns"] == box.session.clock()
    assert updates[-1]["server_now_ns"] == box.session.clock()
    box.store.close()


def test_the_timeline_is_stored_with_its_boot_and_a_junk_record_is_replaced(tmp_path):
    box = Box(tmp_path / "events.sqlite", FakeClock(40_000 * S), boot_id="boot-1")
    play_into_a_question(box)
    box.boot(FakeClock(1 * S), boot_id="boot-2")
    stored = Timeline.from_record(box.store.meta(STORE_KEY))
    assert stored == box.session.timeline and stored.boot_id == "boot-2" and stored.since_ns > 39_990 * S
    junk = ("not json", '{"boot_id": 5, "offset_ns": 1, "since_ns": 0}', '{"boot_id": null, "offset_ns": 0}',
            '{"boot_id": null, "offset_ns": 0, "since_ns": -5}', "[]", "")
    for number, record in enumerate(junk):
        box.store.set_meta(STORE_KEY, record)
        box.boot(box.clock, boot_id="boot-2")                # unreadable: chosen again from the stored times
        assert box.session.clock() >= box.session.state.last_at_ns
        box.command("undo" if number % 2 else "withdraw", f"j{number}")   # and the host's commands are taken
        assert Timeline.from_record(box.store.meta(STORE_KEY)) == box.session.timeline
    box.store.close()


def test_no_stored_timeline_and_a_clock_ahead_of_the_battles_leave_the_offset_at_zero(tmp_path):
    """A box that never lost its power mid-battle (and a store from before the timeline) stamps as it always
    did: the raw CLOCK_MONOTONIC."""
    box = Box(tmp_path / "events.sqlite", FakeClock(100 * S), boot_id="boot-1")
    play_into_a_question(box)
    assert box.session.timeline == Timeline("boot-1", 0, 0)
    box.store._connection.execute("DELETE FROM meta WHERE key=?", (STORE_KEY,))  # a store from before
    box.boot(box.clock, boot_id="boot-1")
    assert box.session.timeline.offset_ns == 0 and box.session.clock() == box.clock.now_ns
    box.store.close()


def test_a_store_that_cannot_keep_the_timeline_is_logged_and_the_battle_goes_on(tmp_path, monkeypatch, caplog):
    box = Box(tmp_path / "events.sqlite", FakeClock(20_000 * S), boot_id="boot-1")
    play_into_a_question(box)

    def refuse(key, value):
        raise StoreDriverError("disk I/O error")  # what the store makes of sqlite3's OperationalError

    monkeypatch.setattr(Battles, "set_meta", lambda self, key, value: refuse(key, value))
    box.boot(FakeClock(2 * S), boot_id="boot-2")
    assert "battle timeline not stored: disk I/O error" in caplog.text
    box.command("reading_done", "d2")                        # this process stamps on the timeline it chose
    assert box.stored()[-1].at_ns > 20_000 * S
    monkeypatch.undo()
    box.boot(box.clock, boot_id="boot-2")                    # a restart chooses again after the stored events
    box.clock.advance(100)
    box.capture.press(1, t_ns=box.clock.now_ns)
    assert box.session.state.answerer == 0
    box.store.close()
