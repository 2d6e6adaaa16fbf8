"""Archived battles keep replaying: logs played with rules version 1 replay to the very same battle under the
current engine, which plays a log by the rules version its BattleSetUp names (docs/battle-log.md, "Rules
versions"). The logs were made once by generate_v1.py from v1-scripts.toml; they are the archive and are never
regenerated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from appliance.rules.battle import apply, standings
from appliance.store import read_log

HERE = Path(__file__).resolve().parent
LOGS = sorted(HERE.glob("v1-*.jsonl"))


def digest(state) -> dict:
    """What a battle came to, in plain values chosen to stay meaningful across engine versions: scores, phase,
    every question's outcome, presses (with the outcome the rules gave them) and rulings, appeals, places."""
    table = standings(state)
    return {
        "seq": state.seq, "scores": list(state.scores), "phase": state.phase, "is_over": state.is_over,
        "mode": state.mode,
        "questions": [{
            "value": q.value_points, "outcome": q.outcome, "withdrawn": q.withdrawn, "reading": q.reading,
            "presses": [[p.player, p.at_ns, p.outcome] for p in q.presses],
            "rulings": [[r.player, r.correct, r.effective, r.by_time, r.void] for r in q.rulings],
        } for q in state.questions],
        "appeals": [[a.player, a.question, a.decided, a.accepted, a.correct] for a in state.appeals],
        "places": [[line.player, line.place, line.place_to] for line in table.lines],
    }


def test_the_archive_is_there():
    assert len(LOGS) == 9  # one per shipped profile


@pytest.mark.parametrize("path", LOGS, ids=[path.stem for path in LOGS])
def test_a_version_1_log_replays_to_the_same_battle(path):
    expected = json.loads((HERE / "v1-expected.json").read_text(encoding="utf-8"))[path.stem[len("v1-"):]]
    with path.open(encoding="utf-8") as file:
        _header, rows = read_log(file)
    state = None
    for _line, event in rows:
        state = apply(state, event)
    assert digest(state) == expected


def test_an_archived_log_imports_into_the_battle_desk_and_survives_a_restart(tmp_path):
    from appliance.service.battles import Battles
    from appliance.store import EventStore

    path = HERE / "v1-youth-cup.jsonl"
    expected = json.loads((HERE / "v1-expected.json").read_text(encoding="utf-8"))["youth-cup"]
    store = EventStore(tmp_path / "events.sqlite")
    with path.open(encoding="utf-8") as file:
        battle = Battles(store).import_log(file)
    store.close()
    store = EventStore(tmp_path / "events.sqlite")  # a restart replays it from the store
    desk = Battles(store)
    assert desk.broken == {} and digest(desk.state(battle)) == expected
    assert desk.state(battle).rules.number == 1
    store.close()


def test_a_setup_without_rules_version_is_version_1_and_a_new_battle_takes_the_current_one():
    from appliance.rules.battle import RULES_VERSION, BattleSetUp, event_from_dict, event_to_dict
    from appliance.service.presets import load_profile

    with (HERE / "v1-eurocup.jsonl").open(encoding="utf-8") as file:
        first = file.readlines()[1]
    old = json.loads(first)
    assert "rules_version" not in old and event_from_dict(old).rules_version == 1
    new = BattleSetUp(at_ns=0, profile=load_profile("eurocup"), players=("А", "Б", "В"), themes=1)
    assert new.rules_version == RULES_VERSION == 2
    assert event_to_dict(new)["rules_version"] == 2 and event_from_dict(event_to_dict(new)) == new


def test_a_version_1_battle_keeps_its_reading_of_the_deadline_and_version_2_counts_the_signal():
    """eurocup 2.5 «не позднее чем через 7 секунд»: version 2 takes a signal at the deadline as in time;
    a battle played by version 1 keeps taking it as late, so its log replays as it was played."""
    from appliance.rules.battle import (BattleSetUp, ButtonPressed, PriceAnnounced, ReadingFinished, ReadingStarted,
                                        ThemeStarted)
    from appliance.service.presets import load_profile

    outcomes = {}
    for version in (1, 2):
        state = apply(None, BattleSetUp(at_ns=0, profile=load_profile("eurocup"), players=("А", "Б", "В"),
                                        themes=1, rules_version=version))
        for event in (ThemeStarted(at_ns=1), PriceAnnounced(at_ns=2, value_points=10), ReadingStarted(at_ns=3),
                      ReadingFinished(at_ns=4), ButtonPressed(at_ns=4 + 7 * 10**9, player=0)):
            state = apply(state, event)
        outcomes[version] = state.last_question.presses[-1].outcome
    assert outcomes == {1: "late", 2: "answerer"}


def test_a_log_from_a_newer_engine_is_refused_by_name_not_played_by_other_rules():
    from appliance.rules.battle import BattleRuleError, BattleSetUp
    from appliance.service.presets import load_profile

    for version in (0, 3, "2", True):
        with pytest.raises(BattleRuleError) as info:
            apply(None, BattleSetUp(at_ns=0, profile=load_profile("eurocup"), players=("А", "Б", "В"), themes=1,
                                    rules_version=version))
        assert info.value.code == "unknown_rules_version" and info.value.rule == "battle setup"
        assert info.value.params == {"version": version, "known": [1, 2]}
