"""A session wired to the doubles of tests/conftest.py: the real engine, no store, no threads."""

from __future__ import annotations

import pytest

from appliance.service.battle_adapter import BattleAdapter
from appliance.service.session import Session
from appliance.service.timers import Deadlines


@pytest.fixture
def clock(fake_clock):
    return fake_clock


@pytest.fixture
def capture(recording_capture):
    return recording_capture


@pytest.fixture
def session(clock, capture, memory_battles):
    """A started session (no threads: updates are delivered at once, deadlines run by ``run_due``)."""
    live = Session(memory_battles, BattleAdapter(), capture=capture, clock=clock, deadlines=Deadlines(clock),
                   simulator=True)
    capture.session = live
    live.updates = []
    live.subscribe(live.updates.append)
    return live.start(timer_thread=False)


def setup_args(profile="eurocup", players=("Аня", "Борис", "Вера"), themes=("Реки", "Кино", "Химия", "Спорт")):
    return {"profile": profile, "players": list(players), "themes": [{"name": name} for name in themes]}
