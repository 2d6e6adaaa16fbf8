"""Scenarios as data: each ``scenarios/*.toml`` is a short game (times in seconds, one host word or press per
line) and what must follow. One parametrised test replays them all, so a new case is a new file.

Step verbs: ``theme [name]``, ``price N``, ``read``, ``finish``, ``resume``, ``press P [source]``, ``point P``,
``right``, ``wrong``, ``time``, ``expire`` (at the press window's deadline), ``short``, ``clarify``,
``extend MS``, ``withdraw``, ``announce``, ``correct Q P right|wrong``, ``appeal P Q``, ``decide A right|wrong|void|reject``,
``claps``, ``buttons``, ``undo``. A step ending in ``!`` must be refused; ``refused = "rule"`` names the rule.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from appliance.rules.battle import (ActionUndone, AnswerAnnounced, AnswererPointed, AnswerJudged, AnswerTimeExtended,
                                    AppealDecided, AppealLodged, BattleRuleError, BattleSetUp, ButtonPressed,
                                    ClarificationRequested, ModeChanged, PressWindowExpired, PriceAnnounced,
                                    QuestionWithdrawn, ReadingFinished, ReadingResumed, ReadingStarted,
                                    RulingCorrected, ShortFormGiven, ThemeStarted, TimeCalled, apply, replay, standings)
from appliance.service.presets import load_profile

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.toml"))


def event_for(state, words: list[str], at_ns: int):
    verb, args = words[0], words[1:]
    simple = {"read": ReadingStarted, "finish": ReadingFinished, "resume": ReadingResumed, "short": ShortFormGiven,
              "clarify": ClarificationRequested, "time": TimeCalled, "announce": AnswerAnnounced,
              "undo": ActionUndone}
    if verb in simple:
        return simple[verb](at_ns=at_ns)
    if verb == "theme":
        return ThemeStarted(at_ns=at_ns, name=" ".join(args))
    if verb == "price":
        return PriceAnnounced(at_ns=at_ns, value_points=int(args[0]))
    if verb == "press":
        return ButtonPressed(at_ns=at_ns, player=int(args[0]), source=args[1] if len(args) > 1 else "button")
    if verb == "point":
        return AnswererPointed(at_ns=at_ns, player=int(args[0]))
    if verb in ("right", "wrong"):
        return AnswerJudged(at_ns=at_ns, correct=verb == "right")
    if verb == "expire":
        return PressWindowExpired(at_ns=max(at_ns, state.press_window_over_ns or at_ns))
    if verb == "extend":
        return AnswerTimeExtended(at_ns=at_ns, extra_ms=int(args[0]))
    if verb == "withdraw":
        return QuestionWithdrawn(at_ns=at_ns, reason=" ".join(args))
    if verb == "correct":
        return RulingCorrected(at_ns=at_ns, question=int(args[0]), player=int(args[1]), correct=args[2] == "right")
    if verb == "appeal":
        return AppealLodged(at_ns=at_ns, player=int(args[0]), question=int(args[1]), claim=" ".join(args[2:]))
    if verb == "decide":
        verdict = args[1]
        return AppealDecided(at_ns=at_ns, appeal=int(args[0]), accepted=verdict != "reject",
                             correct=None if verdict in ("void", "reject") else verdict == "right")
    if verb in ("claps", "buttons"):
        return ModeChanged(at_ns=at_ns, mode=verb)
    raise ValueError(f"unknown step verb {verb!r}")


@pytest.mark.parametrize("path", SCENARIOS, ids=[path.stem for path in SCENARIOS])
def test_scenario(path):
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    setup = BattleSetUp(at_ns=0, profile=load_profile(data["profile"]), players=tuple(data["players"]),
                        themes=data.get("themes", 1), red_themes=tuple(data.get("red_themes", ())),
                        absent=tuple(data.get("absent", ())), spare_themes=data.get("spare_themes"))
    state = apply(None, setup)
    log = [setup]
    refusals = iter(data.get("refused", []))
    for line in data["steps"]:
        time_text, *words = line.split()
        at_ns = round(float(time_text) * 1_000_000_000)
        must_fail = words[-1].endswith("!")
        if must_fail:
            words[-1] = words[-1].rstrip("!")
            words = [w for w in words if w]
        event = event_for(state, words, at_ns)
        if must_fail:
            with pytest.raises(BattleRuleError) as info:
                apply(state, event)
            expected_rule = next(refusals, None)
            if expected_rule is not None:
                assert info.value.rule == expected_rule, f"{path.name}: {line}"
            continue
        state = apply(state, event)
        log.append(event)
    expect = data["expect"]
    if "scores" in expect:
        assert list(state.scores) == expect["scores"]
    if "answerer" in expect:
        assert state.answerer == (None if expect["answerer"] < 0 else expect["answerer"])
    if "phase" in expect:
        assert state.phase == expect["phase"]
    if "is_over" in expect:
        assert state.is_over == expect["is_over"]
    table = standings(state)
    if "order" in expect:
        assert [line.name for line in table.lines] == expect["order"]
    if "places" in expect:
        assert [[line.place, line.place_to] for line in table.lines] == expect["places"]
    if "placement_points" in expect:
        assert [line.placement_points for line in table.lines] == expect["placement_points"]
    if "shootout" in expect:
        assert (list(table.shootout.players) if table.shootout else []) == expect["shootout"]
    if "press_outcomes" in expect:
        assert [press.outcome for press in state.last_question.presses] == expect["press_outcomes"]
    assert replay(log) == state
