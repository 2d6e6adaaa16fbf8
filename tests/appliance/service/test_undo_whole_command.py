"""One tap is one intent: «Отменить» takes back the whole host command it follows, every event the command stored in
its one transaction, on every regulation, before and after a restart.

A battle of every profile is played command by command (its first themes) through the live session over a real store; before each
host command, every command allowed then whose effect is more than one event (today the host's "next": a price and
the start of its reading, eurocup 2.5) is tapped, undone, and the state and the host's view must be exactly those
before it, with «Вернуть» (the redo) offered; then the battle goes on.

Before: undo took back the last event only. After «Следующий вопрос» it took back the reading's start and left the
price: every button was disabled, «Вернуть» hidden, and a second undo was needed (issue 19).
"""

from __future__ import annotations

import pytest

from appliance.rules.battle.choices import Reading
from appliance.service.battle_adapter import HOST_COMMANDS, BattleAdapter, HostCommand
from appliance.service.battles import Battles
from appliance.service.session import Session
from appliance.service.timers import Deadlines
from appliance.store import EventStore

PROFILES = [profile["name"] for profile in BattleAdapter().profiles()]
MOST_STEPS = 2000
PROBES = 12  # multi-event commands tapped and undone per profile: two themes and more (a whole battle is slow)
# State fields an undo leaves as they are by design: the event count and time, the undo history itself, and how
# far the battle has reached (the rulings the next question closed stay closed: engine.correction_barrier)
KEPT_BY_UNDO = {"seq", "last_at_ns", "history", "undone", "themes_reached", "questions_reached"}
# Commands whose verdict rests on how far the battle reached (corrections, appeals), and undo itself
# (and withdrawing the question before: mubc 4.2)
REACHED = {HostCommand.CORRECT, HostCommand.APPEAL, HostCommand.APPEAL_DECIDE, HostCommand.WITHDRAW, HostCommand.UNDO}


class Box:
    """The live session over a store on disk, restartable (a new session over the same file)."""

    def __init__(self, path, clock, capture) -> None:
        self.path, self.clock, self.capture, self.store = path, clock, capture, None
        self.start()

    def start(self) -> "Box":
        if self.store is not None:
            self.store.close()
        self.store = EventStore(self.path)
        self.session = Session(Battles(self.store), BattleAdapter(), capture=self.capture, clock=self.clock,
                               deadlines=Deadlines(self.clock))
        self.capture.session = self.session
        self.session.start(timer_thread=False)
        return self

    @property
    def view(self) -> dict:
        return self.session._view  # the view the host's update carries (never mutated: session.py)


def fields(state) -> dict:
    return {name: value for name, value in vars(state).items() if name not in KEPT_BY_UNDO}


def allowed(view: dict, name: str) -> bool:
    return view["allowed"].get(name, "refused") is None


def shown(view: dict) -> dict:
    """The host's view of the battle, but for the undo bar (what was just undone), the verdicts, and the list of
    the box's battles (remade with their progress when the session starts)."""
    return {key: value for key, value in view.items() if key not in ("undo", "allowed", "battles")}


def verdicts(view: dict) -> dict:
    return {name: verdict for name, verdict in view["allowed"].items() if name not in REACHED}


def next_move(box: Box, step: int) -> str | None:
    """The host command the page highlights now (host.js renderExpected), or None after a player pressed or a
    deadline passed."""
    view = box.view
    question = view["question"]
    if view["answerer"] is not None and not view["pointed"] and allowed(view, "point"):
        return "point"
    if view["pointed"] and allowed(view, "right"):
        return "wrong" if step % 4 == 1 else "right"
    if question and not question["over"]:
        if question["reading"] == Reading.READING and allowed(view, "reading_done"):
            return "reading_done"
        if question["reading"] == Reading.INTERRUPTED and allowed(view, "resume_reading"):
            return "resume_reading"
        eligible = [player["index"] for player in view["players"] if player["eligible"]]
        if view["answerer"] is None and eligible:
            box.clock.advance(100)
            box.capture.press(1 + eligible[step % len(eligible)], box.clock())
            return None
    if allowed(view, "next"):
        return "next"
    box.clock.advance(10_000)  # nobody left to press: the window closes
    box.session.deadlines.run_due()
    return None


def tap_and_undo(box: Box, name: str, args: dict, number: int, restart: bool) -> None:
    """Tap ``name``, undo it (the session restarted between the two when ``restart``): everything as before."""
    session = box.session
    before_state, before_view = session.state, box.view
    box.clock.advance(10)
    stored = session.battles.store.count()
    events = session.adapter.command_events(name, session.state, args, session.clock())
    session.command(name, args, f"probe-{number}")
    assert session.battles.store.count() == stored + len(events)
    if restart:
        box.start()
        session = box.session
    box.clock.advance(10)
    session.command("undo", {}, f"undo-{number}")
    after = box.view
    assert fields(session.state) == fields(before_state), f"undo of «{name}» left {session.state.last_event}"
    assert shown(after) == shown(before_view)
    assert verdicts(after) == verdicts(before_view)
    # what the host's page shows: «Отменено: …» with «Вернуть», which does the command again
    assert after["undo"]["last"] is not None and after["undo"]["last"]["redo"] == name
    assert allowed(after, name), after["allowed"][name]


@pytest.mark.parametrize("profile", PROFILES)
def test_undo_takes_back_every_event_of_the_host_command_it_follows(profile, tmp_path, fake_clock,
                                                                   recording_capture):
    box = Box(tmp_path / "events.sqlite", fake_clock, recording_capture)
    shape = next(p for p in box.session.adapter.profiles() if p["name"] == profile)
    players = [f"Игрок {i + 1}" for i in range(shape["min_players"])]
    box.session.command("setup", {"profile": profile, "players": players,
                                  "themes": [{"name": f"Тема {i + 1}"} for i in range(shape["themes"])]}, "setup")
    probed: dict[str, int] = {}
    for step in range(MOST_STEPS):
        if box.session.state.is_over or sum(probed.values()) >= PROBES:
            break
        view = box.view
        for name in HOST_COMMANDS:
            if name == HostCommand.UNDO or not allowed(view, name):
                continue
            args = dict(box.session.adapter._probe_args(box.session.state).get(name, {}))  # as allowed() tries it
            events = box.session.adapter.command_events(name, box.session.state, args, box.session.clock())
            if len(events) > 1:
                tap_and_undo(box, name, args, step, restart=step % 3 == 0)
                probed[name] = probed.get(name, 0) + 1
        move = next_move(box, step)
        if move is not None:
            box.clock.advance(10)
            box.session.command(move, {}, f"c{step}")
    else:
        raise AssertionError(f"the {profile} battle did not end in {MOST_STEPS} steps")
    assert probed.get(HostCommand.NEXT, 0) >= 5, probed  # each question's "next": the price and the reading
    box.store.close()
