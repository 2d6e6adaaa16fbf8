"""Fixtures shared by every test area. Area fixtures live in the nearest conftest.py below."""

from __future__ import annotations

import itertools
from concurrent.futures import Future

import pytest

from appliance import config


@pytest.fixture
def settings(tmp_path):
    """Settings for one test: a fresh data dir, simulator pins, no file or environment read."""
    return config.load(overrides={"data_dir": tmp_path, "simulator": True}, environ={}, config_path=None)


# --- doubles for the live session's neighbours (used by tests/appliance/service and tests/web):
# an in-memory battle service over the real engine, a capture link that records what it is told, a hand clock.
def done(result=None) -> Future:
    future = Future()
    future.set_result(result or {})
    return future


class RecordingCapture:
    """A connected capture link that records commands; ``press`` plays the capture's press event back."""

    def __init__(self) -> None:
        self.connected = True
        self.commands: list[tuple] = []
        self.session = None
        self.seq = itertools.count(1)

    def arm(self, eligible, round_id):
        self.commands.append(("arm", tuple(eligible), round_id))
        return done({"armed_at_ns": 0})

    def disarm(self):
        self.commands.append(("disarm",))
        return done()

    def button_test(self, on):
        self.commands.append(("button_test", on))
        return done()

    def simulate_press(self, player):
        self.commands.append(("sim_press", player))
        return done()

    def simulate_release(self, player):
        self.commands.append(("sim_release", player))
        return done()

    def press(self, player_from_1: int, t_ns: int, status: str = "won") -> None:
        self.session.on_capture_event({"event": "press", "seq": next(self.seq), "player": player_from_1,
                                       "t_ns": t_ns, "status": status})


class FakeClock:
    def __init__(self, now_ns: int = 1_000_000_000) -> None:
        self.now_ns = now_ns

    def __call__(self) -> int:
        return self.now_ns

    def advance(self, ms: float) -> None:
        self.now_ns += int(ms * 1_000_000)



@pytest.fixture
def memory_battles():
    """The real ``Battles`` over an event store in memory (SQLite ``:memory:``): same code, no file."""
    from appliance.service.battles import Battles
    from appliance.store import EventStore

    store = EventStore(":memory:")
    yield Battles(store, new_id=(f"b{number}" for number in itertools.count(1)).__next__)
    store.close()


@pytest.fixture
def recording_capture():
    return RecordingCapture()


@pytest.fixture
def fake_clock():
    return FakeClock()


@pytest.fixture
def play_six_themes():
    """``play(battles, box_id, start_ns)``: six themes of a battle on the box, every question answered right by
    the first to press (player 0 takes themes 1-3, player 1 themes 4-5, player 2 theme 6), one second apart."""
    from appliance.rules import battle as engine

    def play(battles, box_id: str, start_ns: int) -> None:
        clock = [start_ns]

        def at(seconds: float = 1.0) -> int:
            clock[0] += int(seconds * 1e9)
            return clock[0]

        for theme in range(6):
            answerer = (0, 0, 0, 1, 1, 2)[theme]
            battles.submit(box_id, engine.ThemeStarted(at_ns=at(), name=f"Тема {theme}"))
            for value in (10, 20, 30, 40, 50):
                battles.submit(box_id, engine.PriceAnnounced(at_ns=at(), value_points=value))
                battles.submit(box_id, engine.ReadingStarted(at_ns=at()))
                battles.submit(box_id, engine.ReadingFinished(at_ns=at()))
                battles.submit(box_id, engine.ButtonPressed(at_ns=at(0.5), player=answerer))
                battles.submit(box_id, engine.AnswererPointed(at_ns=at(0.2), player=answerer))
                battles.submit(box_id, engine.AnswerJudged(at_ns=at(), correct=True))

    return play
