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


def test_a_setup_records_where_each_theme_came_from_and_refuses_a_malformed_source(game):
    """BattleSetUp.sources: per theme (regular, then spare) a package id and the theme's number in it, or ()
    for a theme typed by hand (docs/battle-log.md); the log carries them through a round trip."""
    from appliance.rules.battle import event_to_dict

    battle = game("eurocup", themes=2, theme_names=("Реки", "Города"), sources=(("0123456789ab", 4), ()))
    setup = battle.log[0]
    assert event_from_dict(event_to_dict(setup)).sources == (("0123456789ab", 4), ())
    for bad in ((("0123456789ab", -1),), (("", 0),), (("0123456789ab", True),), (("0123456789ab",),),
                (["0123456789ab", 1],), (("a", 0), ("b", 1), ("c", 2))):
        with pytest.raises(BattleRuleError) as refused:
            game("eurocup", themes=2, sources=bad)
        assert refused.value.code == "bad_sources" and refused.value.params == {"themes": 2}
        assert refused.value.rule.startswith("eurocup")


def test_an_old_log_without_sources_still_reads():
    from appliance.rules.battle import event_to_dict, BattleSetUp
    from appliance.service.presets import load_profile

    data = event_to_dict(BattleSetUp(at_ns=0, profile=load_profile("eurocup"), players=("А", "Б"), themes=1))
    assert "sources" not in data  # a battle typed by hand writes the line it always did
    assert event_from_dict(data).sources == ()
