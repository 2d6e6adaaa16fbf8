"""Refusals carry a stable code and their figures as params, so tools and pages need not parse the English."""

from __future__ import annotations

import pytest

from appliance.rules.battle import (BattleRuleError, PriceAnnounced, RulingCorrected, TimeCalled, apply,
                                    event_from_dict)
from appliance.rules.battle.errors import REFUSAL_CODES

NS = 1_000_000_000


def test_a_wrong_price_names_the_expected_value(game):  # eurocup 2.2: a theme's questions in order of value
    battle = game("eurocup")
    battle.theme()
    error = battle.refused(PriceAnnounced(at_ns=battle.tick(), value_points=30))
    assert error.rule == "eurocup 2.2"
    assert (error.code, error.params) == ("wrong_price", {"value": 30, "expected": 10})
    assert str(error) == f"{error.rule}: {error.message}"


def test_calling_time_early_says_how_long_the_answer_time_still_runs(game):  # eurocup 2.8: 3 s to start the answer
    battle = game("eurocup")
    battle.theme()
    battle.price()
    battle.read()
    battle.finish()
    battle.press(1)
    battle.point(1)
    error = battle.refused(TimeCalled(at_ns=battle.tick(1.0)))
    assert error.code == "answer_time_running"
    assert error.params == {"remaining_ms": 2000, "question": 0}
    assert error.player is None


def test_a_correction_of_a_player_who_gave_no_answer_names_both_by_index(game):
    battle = game("eurocup")
    battle.theme()
    battle.question((0, False))
    error = battle.refused(RulingCorrected(at_ns=battle.tick(), question=0, player=2, correct=True))
    assert error.code == "no_answer_to_correct"
    assert error.params == {"player": 2, "question": 0} and error.player == 2


def test_the_battle_log_and_the_setup_refuse_with_codes_too(game):
    with pytest.raises(BattleRuleError) as log:
        event_from_dict({"type": "NoSuchEvent", "at_ns": 1})
    assert log.value.code == "bad_event_record"
    with pytest.raises(BattleRuleError) as setup:
        game("eurocup", players=("Аня", "Аня"))
    assert setup.value.code == "duplicate_player_name" and setup.value.params == {}
    with pytest.raises(BattleRuleError) as first:
        apply(None, TimeCalled(at_ns=NS))
    assert first.value.code == "setup_first" and first.value.params == {"event_type": "TimeCalled"}


def test_every_code_is_snake_case_and_documented():
    for code, (key, meaning) in REFUSAL_CODES.items():
        assert code.replace("_", "").isalpha() and code.islower(), code
        assert key and meaning, code
