"""A store in a fresh temporary file and a short finished battle's events."""

from __future__ import annotations

import pytest

from appliance.store import EventStore
from tests.appliance.rules.battle.conftest import Game

collect_ignore = ["fixtures/make_v1.py"]  # runs against the code of commit cf360f2 only (it made the fixtures)


@pytest.fixture
def store(tmp_path):
    with EventStore(tmp_path / "events.sqlite") as opened:
        yield opened


@pytest.fixture
def battle_events():
    from appliance.rules.battle import RulingCorrected
    g = Game("eurocup", themes=1, theme_names=("Реки",))
    g.theme(); g.price(); g.read(); g.press(0, after=0.8); g.press(1, after=0.05); g.point(0)
    g.press(2, after=0.5); g.wrong(); g.point(2); g.right()
    g.question((1, True)); g.question(); g.question((0, True)); g.question((1, False), (2, True))
    g.do(RulingCorrected(at_ns=g.tick(), question=4, player=1, correct=True, reason="источник"))
    return g.log
