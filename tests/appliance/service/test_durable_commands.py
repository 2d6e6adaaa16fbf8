"""Atomic host commands and durable command ids, through the live session over a real SQLite store.

A restart is a new ``Battles`` and ``Session`` over the same file (what systemd does after a crash). Every
command's events are stored in one transaction with its id and first result: a command is stored whole or
not at all, and its resend, before or after any restart, is answered ``duplicate: true`` and applies nothing.
"""

from __future__ import annotations

import pytest

from appliance.rules.battle import BattleRuleError
from appliance.service.battle_adapter import BattleAdapter
from appliance.service.battles import Battles
from appliance.service.session import CommandRejected, Session
from appliance.service.timers import Deadlines
from appliance.store import BATTLE, EventStore

from .conftest import setup_args


class Box:
    """A session over ``path`` that can be restarted; ``updates`` holds what this process broadcast."""

    def __init__(self, path, clock, capture):
        self.path, self.clock, self.capture = path, clock, capture
        self.store = None
        self.start()

    def start(self):
        if self.store is not None:
            self.store.close()
        self.store = EventStore(self.path)
        self.battles = Battles(self.store)
        self.session = Session(self.battles, BattleAdapter(), capture=self.capture, clock=self.clock,
                               deadlines=Deadlines(self.clock))
        self.capture.session = self.session
        self.updates = []
        self.session.subscribe(self.updates.append)
        self.session.start(timer_thread=False)
        del self.updates[:]  # the resumed battle's first view: what follows is what commands broadcast
        return self

    def command(self, name, command_id, **args):
        return self.session.command(name, args, command_id)

    def stored(self):
        return [(row.stream_id, type(row.event).__name__, row.command_id)
                for battle in self.store.stream_ids(BATTLE) for row in self.store.read(BATTLE, battle)]


@pytest.fixture
def box(tmp_path, fake_clock, recording_capture):
    made = Box(tmp_path / "events.sqlite", fake_clock, recording_capture)
    yield made
    made.store.close()


def test_a_resent_setup_after_a_restart_is_a_duplicate_not_a_second_battle(box):
    first = box.command("setup", "s1", **setup_args())
    assert first["duplicate"] is False and first["battle_id"] == box.session.battle_id
    box.start()
    again = box.command("setup", "s1", **setup_args())
    assert again == {**first, "duplicate": True}
    assert box.store.stream_ids(BATTLE) == [first["battle_id"]]
    assert box.updates == []  # nothing broadcast for a command that applied nothing


def test_a_resent_undo_after_a_restart_applies_nothing_and_broadcasts_nothing(box):
    box.command("setup", "s1", **setup_args())
    box.command("next", "n1")
    undo = box.command("undo", "u1")
    stored = box.stored()
    assert stored[-1][1:] == ("ActionUndone", "u1")
    box.start()
    assert box.command("undo", "u1") == {**undo, "duplicate": True}
    assert box.stored() == stored and box.updates == []
    # every other kind of resend too: the stored result, never a rule refusal
    assert box.command("next", "n1")["duplicate"] is True and box.stored() == stored


def test_next_is_stored_whole_with_one_command_id_and_one_update(box):
    box.command("setup", "s1", **setup_args())
    box.command("next", "n1")                               # a theme
    before = len(box.updates)
    box.command("next", "n2")                               # the price and the reading: one gesture (eurocup 2.5)
    assert box.stored()[-2:] == [(box.session.battle_id, "PriceAnnounced", "n2"),
                                 (box.session.battle_id, "ReadingStarted", "n2")]
    assert len(box.updates) == before + 1                   # one update, after both events were stored
    stored = box.store.command(BATTLE, "n2")
    assert (stored.last_seq - stored.first_seq, stored.result["seq"]) == (1, box.updates[-1]["seq"])


def test_a_fault_between_the_events_of_next_leaves_no_half_command_and_the_resend_applies_once(box):
    box.command("setup", "s1", **setup_args())
    box.command("next", "n1")
    state, stored, updates = box.session.state, box.stored(), len(box.updates)
    # the disk refuses the second row of the transaction, after the first was written
    box.store._connection.execute("CREATE TEMP TRIGGER fault BEFORE INSERT ON stream_events WHEN NEW.type = "
                                  "'ReadingStarted' BEGIN SELECT RAISE(ABORT, 'disk fault'); END")
    with pytest.raises(Exception, match="disk fault"):
        box.command("next", "n2")
    assert box.session.state is state and box.stored() == stored and len(box.updates) == updates
    assert box.battles.state(box.session.battle_id) is state
    box.store._connection.execute("DROP TRIGGER temp.fault")
    box.start()                                             # and after a restart the resend is a first send
    assert box.command("next", "n2")["duplicate"] is False
    assert box.command("next", "n2")["duplicate"] is True
    assert [row[1] for row in box.stored()[-2:]] == ["PriceAnnounced", "ReadingStarted"]
    assert sum(row[2] == "n2" for row in box.stored()) == 2


def test_a_refused_command_stores_no_id_and_may_be_sent_again(box):
    box.command("setup", "s1", **setup_args())
    with pytest.raises(BattleRuleError):
        box.command("right", "r1")                          # eurocup 2.6: nobody answers
    assert box.store.command(BATTLE, "r1") is None


def test_phones_and_deadlines_keep_their_ids_across_a_restart_too(box, fake_clock):
    box.command("setup", "s1", **setup_args())
    phones = box.command("phones", "p1", enabled=True)
    codes = box.session.snapshot()["view"]["seat_codes"]
    box.start()
    assert box.command("phones", "p1", enabled=True) == {**phones, "duplicate": True}
    # phones stay on across the restart (session.py PHONES_KEY), and the resend did not switch them again
    assert box.session.snapshot()["view"]["seat_codes"] == codes
    box.command("next", "n1")
    box.command("next", "n2")
    box.command("reading_done", "d1")
    fake_clock.advance(7001)                                # eurocup 2.5: the window closes after 7 s
    assert box.session.deadlines.run_due() == 1
    expiries = [row for row in box.stored() if row[1] == "PressWindowExpired"]
    assert len(expiries) == 1 and expiries[0][2].startswith("deadline:")


def test_after_a_restart_the_newest_battle_shows_even_when_it_is_over(box, play_six_themes):
    box.command("setup", "s1", **setup_args(profile="irkutsk", themes=[f"Тема {n}" for n in range(6)]))
    play_six_themes(box.battles, box.session.battle_id, box.clock.now_ns)
    finished = box.session.battle_id
    assert box.battles.state(finished).is_over
    box.start()
    assert box.session.battle_id == finished
    view = box.session.snapshot()["view"]
    assert view["battle"] is not None and view["battle"]["finished"] is True
    assert [line["place"] for line in view["standings"]] == ["1", "2", "3"]  # the final standings


@pytest.mark.parametrize("name, args, code, argument", [
    ("pick", {}, "error.argument_missing", "player"),
    ("pick", {"player": "1"}, "error.argument_type", "player"),
    ("pick", {"player": True}, "error.argument_type", "player"),
    ("pick", {"player": 1.5}, "error.argument_type", "player"),
    ("pick", {"player": float("inf")}, "error.argument_type", "player"),
    ("pick", {"player": -1}, "error.argument_range", "player"),
    ("pick", {"player": 10**30}, "error.argument_range", "player"),
    ("extend", {"extra_ms": float("nan")}, "error.argument_type", "extra_ms"),
    ("extend", {"extra_ms": 10**30}, "error.argument_range", "extra_ms"),
    ("right", {"player": 1}, "error.argument_unknown", "player"),
    ("withdraw", {"reason": 5}, "error.argument_type", "reason"),
    ("withdraw", {"reason": "x" * 501}, "error.argument_range", "reason"),
    ("correct", {"player": 0}, "error.argument_missing", "correct"),
    ("correct", {"player": 0, "correct": "yes"}, "error.argument_type", "correct"),
    ("appeal_decide", {"appeal": 0, "accepted": True, "correct": 1}, "error.argument_type", "correct"),
    ("claps", {"on": "on"}, "error.argument_type", "on"),
    ("phones", {}, "error.argument_missing", "enabled"),
    ("setup", {"profile": "eurocup", "players": ["А"], "themes": [{"name": "x", "colour": "red"}]},
     "error.argument_unknown", "themes.colour"),
    ("setup", {"profile": "eurocup", "players": ["А"] * 65, "themes": 1}, "error.argument_range", "players"),
    ("setup", {"profile": "eurocup", "players": ["А", 2], "themes": 1}, "error.argument_type", "players"),
    ("setup", {"profile": "eurocup", "players": ["А"], "themes": 1, "mode": "loud"}, "error.argument_type", "mode"),
    ("setup", {"profile": "nope", "players": ["А"], "themes": 1}, "error.unknown_profile", "profile"),
    ("dance", {}, "error.unknown_command", None),
])
def test_every_bad_argument_gets_its_own_refusal_code_and_changes_nothing(box, name, args, code, argument):
    box.command("setup", "s1", **setup_args())
    stored, updates = box.stored(), len(box.updates)
    with pytest.raises(CommandRejected) as refused:
        box.session.command(name, args, "bad-1")
    assert refused.value.code == code and refused.value.params.get("argument") == argument
    assert box.stored() == stored and len(box.updates) == updates
    assert box.store.command(BATTLE, "bad-1") is None


def test_a_bug_further_in_is_a_bug_not_a_refusal(box, monkeypatch):
    box.command("setup", "s1", **setup_args())

    def broken(*args):
        raise KeyError("a bug in the adapter")

    monkeypatch.setattr(box.session.adapter, "command_events", broken)
    with pytest.raises(KeyError):
        box.command("next", "n1")


@pytest.mark.parametrize("player, code", [("1", "0000"), (True, "0000"), (1.0, "0000"), (None, "0000"), (1, 1234)])
def test_phone_presses_and_claims_are_checked_at_the_edge_too(box, player, code):
    box.command("setup", "s1", **setup_args())
    box.command("phones", "p1", enabled=True)
    stored = box.stored()
    with pytest.raises(CommandRejected) as refused:
        box.session.phone_press(player, "press-1", code)
    assert refused.value.code == "error.argument_type" and box.stored() == stored
    with pytest.raises(CommandRejected):
        box.session.check_seat_code(player, code)
