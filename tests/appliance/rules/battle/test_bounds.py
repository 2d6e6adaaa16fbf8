"""Every figure an event carries is bounded at the engine, by the profile where the profile sets it: no number
reaches the deadlines, the view or the store unbounded. Out of range is a refusal with a stable code."""

from __future__ import annotations

import pytest

from appliance.rules.battle import (AnswerTimeExtended, BattleRuleError, BattleSetUp, ButtonPressed, RulingCorrected,
                                    ThemeStarted, apply)
from appliance.service.presets import load_profile
from appliance.rules.battle.engine import MAX_AT_NS, RUNS_MAX
from appliance.rules.battle.state import NEVER_NS

HUGE = 10**30


def answering(game):
    g = game("northern-owl")  # 3.7: the host may extend the answer time
    g.theme(); g.price(); g.read(); g.finish(); g.press(0); g.point(0)
    return g


def test_an_extension_is_bounded_by_the_profile(game):
    # northern-owl 3.7 «ведущий имеет право продлить время по своему усмотрению»: at his discretion, up to the
    # profile's [answer] extension_max_ms (a minute): a larger figure is refused, and no deadline is moved
    g = answering(game)
    deadline = g.state.answer_deadline_ns
    for extra_ms in (HUGE, 60_001):
        error = g.refused(AnswerTimeExtended(at_ns=g.tick(), extra_ms=extra_ms))
        assert (error.rule, error.code, error.params) == ("northern-owl 3.7", "extension_too_long",
                                                          {"max_ms": 60_000, "max_s": 60})
    assert g.state.answer_deadline_ns == deadline
    g.do(AnswerTimeExtended(at_ns=g.tick(), extra_ms=60_000))
    assert g.state.answer_deadline_ns == deadline + 60_000 * 1_000_000


def test_a_timestamp_is_a_64_bit_monotonic_time(game):
    g = answering(game)
    for at_ns in (MAX_AT_NS + 1, NEVER_NS, HUGE, -1, 1.5, True):
        assert g.refused(ButtonPressed(at_ns=at_ns, player=1)).code == "bad_timestamp"
    with pytest.raises(BattleRuleError) as info:
        apply(None, BattleSetUp(at_ns=HUGE, profile=load_profile("eurocup"), players=("А", "Б", "В"), themes=1))
    assert info.value.code == "bad_timestamp"


@pytest.mark.parametrize("changes, code, params", [
    ({"themes": HUGE}, "too_many_themes", {"themes": HUGE, "max": 60}),
    ({"themes": 61}, "too_many_themes", {"themes": 61, "max": 60}),
    ({"spare_themes": HUGE}, "bad_spare_themes", {"max": 60}),
    ({"runs": HUGE}, "bad_run", {"max": RUNS_MAX}),
    ({"run": 2, "runs": 1}, "bad_run", {"max": RUNS_MAX}),
])
def test_the_setup_bounds_its_figures_by_the_profile(changes, code, params):
    setup = dict(at_ns=0, profile=load_profile("eurocup"), players=("А", "Б", "В"), themes=1)
    with pytest.raises(BattleRuleError) as info:
        apply(None, BattleSetUp(**{**setup, **changes}))
    assert (info.value.code, info.value.params) == (code, params)
    apply(None, BattleSetUp(**{**setup, "themes": 60, "spare_themes": 60, "runs": RUNS_MAX}))  # the bounds pass


def test_indexes_out_of_range_are_refused_by_code(game):
    g = game("eurocup")
    g.theme(); g.question((0, False))
    assert g.refused(ButtonPressed(at_ns=g.tick(), player=HUGE)).code == "no_such_player"
    assert g.refused(RulingCorrected(at_ns=g.tick(), question=HUGE, player=0, correct=True)).code == "no_such_question"
    assert g.refused(ThemeStarted(at_ns=g.tick(), name=7)).code in ("theme_not_finished", "bad_theme_name")


EXTREME = [0, 1, -1, 2**31, 2**63 - 1, 2**63, -(2**63), 10**30, -(10**30), 7_000_000_000]


def test_no_figure_anywhere_makes_the_engine_raise_anything_but_a_refusal(game):
    """Every event with an int field, each field set to extreme values, at every phase of a played question:
    the engine answers with a state or a BattleRuleError, never another exception, and an accepted state keeps
    every deadline a 64-bit monotonic time."""
    import dataclasses

    from appliance.rules.battle import EVENT_TYPES
    from appliance.rules.battle.events import Event

    g = answering(game)
    states = [g.state]
    for step in (g.wrong, lambda: g.press(1), lambda: g.point(1)):
        step()
        states.append(g.state)
    tried = 0
    for state in states:
        for name, cls in EVENT_TYPES.items():
            if cls is BattleSetUp:
                continue
            ints = [f.name for f in dataclasses.fields(cls) if f.type in ("int", "int | None")]
            for field in ints:
                for value in EXTREME:
                    fields = {"at_ns": state.last_at_ns + 1, field: value}
                    event = cls(**fields)
                    assert isinstance(event, Event)
                    tried += 1
                    try:
                        after = apply(state, event)
                    except BattleRuleError:
                        continue
                    for deadline in (after.press_window_closes_ns, after.answer_deadline_ns):
                        assert deadline is None or 0 <= deadline <= NEVER_NS, (name, field, value)
    assert tried > 300
