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
