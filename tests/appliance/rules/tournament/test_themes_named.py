"""Theme names per theme pack (issue 12: tournament battles arrive with theme names): validated whole, replayed
from the log, a later naming replaces."""

from __future__ import annotations

import pytest

from appliance.rules import tournament as t
from appliance.rules.tournament.transitions import THEME_NAME_MAX_CHARS
from appliance.service import presets


@pytest.fixture
def drawn():
    fmt = presets.load_format("northern-owl")
    state = t.apply(t.TournamentState(), t.TournamentCreated(0, "t1", "Сова", fmt.source["data"], seed=7))
    for n in range(36):
        state = t.apply(state, t.PlayerRegistered(n + 1, f"p{n:02d}", f"Игрок {n}"))
    state = t.apply(state, t.RegistrationClosed(40))
    state = t.apply(state, t.SeedsSet(41, tuple(f"p{n:02d}" for n in range(9))))
    return t.apply(state, t.plan_draw(state, "groups", 7, 42))


def test_a_pack_is_named_and_renamed_and_the_log_replays_it(drawn):
    named = t.apply(drawn, t.ThemesNamed(50, "groups:1", (" Реки ", "Кино")))
    assert named.theme_names["groups:1"] == ("Реки", "Кино")
    renamed = t.apply(named, t.ThemesNamed(51, "groups:1", ("Реки", "Кино", "Химия")))
    assert renamed.theme_names["groups:1"] == ("Реки", "Кино", "Химия")
    event = t.from_dict(t.to_dict(t.ThemesNamed(51, "groups:1", ("Реки", "Кино", "Химия"))))
    assert event == t.ThemesNamed(51, "groups:1", ("Реки", "Кино", "Химия"))


@pytest.mark.parametrize("pack, names, why", [
    ("groups:99", ("Реки",), "no drawn battle plays theme pack"),
    ("groups:1", tuple(f"Тема {n}" for n in range(7)), "7 names for 6 themes"),
    ("groups:1", ("Р" * (THEME_NAME_MAX_CHARS + 1),), "longer than"),
])
def test_a_bad_naming_is_refused_whole(drawn, pack, names, why):
    with pytest.raises(t.StageError, match=why):
        t.apply(drawn, t.ThemesNamed(50, pack, names))
    assert drawn.theme_names == {}
