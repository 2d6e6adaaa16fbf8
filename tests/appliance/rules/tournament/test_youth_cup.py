"""youth-cup: written round (2.2), top 48 (2.2.1, 2.6), bracket drawn first (2.1), runs and rooms (2.4), thirds (2.3)."""

from __future__ import annotations

from collections import Counter

import pytest

from appliance.rules import tournament as t
from appliance.rules.tournament.errors import ResultError
from appliance.rules.tournament.results import score_written


def test_sheet_scoring_two_answers_wrong_crossed_and_blank_zero():
    # youth-cup 2.2.2: two answers on a line = wrong; crossed out or blank: no points either way.
    values = (10, 20, 30, 40, 50)
    line = score_written("ann", "+2x0-", values, themes=1)
    assert (line.score, line.right_points, line.right_answers, line.wrong_answers) == (10 - 20 - 50, 10, 1, 2)
    assert score_written("ann", "х. =*+", values + (60,), themes=1).score == -40 - 50 + 60  # keyboard spellings
    with pytest.raises(ResultError, match="expected 5"):
        score_written("ann", "+++", values, themes=1)
    with pytest.raises(ResultError, match="unknown mark"):
        score_written("ann", "++?++", values, themes=1)


def sheet(right: int, wrong: int = 0, fifties: int = 0) -> str:
    """60 marks: ``fifties`` right 50s, then right 10s, wrong 10s, blanks."""
    marks = ["0"] * 60
    for theme in range(fifties):
        marks[theme * 5 + 4] = "+"
    slots = [i for i in range(0, 60, 5) if marks[i] == "0"]
    for i in slots[:right]:
        marks[i] = "+"
    for i in slots[right:right + wrong]:
        marks[i] = "-"
    return "".join(marks)


def test_top_48_by_score_then_indicators_and_a_tie_at_the_cut_is_played_off(desk):
    # youth-cup 2.2.1 -> 2.6: score, points without minuses, then 50s, 40s ...; still equal at 48th: shoot-out.
    d = desk("youth-cup")
    players = d.register(60)
    d.draw("written")
    for i, player in enumerate(players):
        if i < 46:
            d.do(t.WrittenSheetEntered, "written", player, sheet(right=12, fifties=0 if i else 1))
        elif i < 49:
            d.do(t.WrittenSheetEntered, "written", player, sheet(right=3))  # three equal for 2 places
        else:
            d.do(t.WrittenSheetEntered, "written", player, sheet(right=1, wrong=1))
    out = t.outcome(d.state, "written")
    assert out.ranking[0] == "p000"  # a 50 taken breaks the tie (2.6)
    assert len(out.open_ties) == 1
    tie = out.open_ties[0]
    assert set(tie.players) == {"p046", "p047", "p048"} and tie.slots == 2
    d.do(t.TieBroken, tie.id, ("p048", "p046", "p047"), "theme")
    out = t.outcome(d.state, "written")
    assert len(out.advancing) == 48 and "p047" not in {a.player for a in out.advancing}


def test_bracket_runs_rooms_and_thirds(desk):
    d = desk("youth-cup", seed=9)
    d.register(130, team=lambda i: f"T{i % 20}")
    drawn = d.draw("written")
    stages = Counter(b.stage for b in drawn.battles)
    assert stages == {"1-16": 12, "1-8": 8, "1-4": 4, "1-2": 3, "final": 1}  # 2.1: drawn before stage 1
    r16 = sorted(d.state.stage_battles("1-16"), key=lambda b: b.index)
    # Pots: one of ranks 1-12, 13-24, 25-36, 37-48 in each 1/16 battle.
    for battle in r16:
        ranks = sorted(int(seat.rsplit(":", 1)[1]) for seat in battle.seats)
        assert [(r - 1) // 12 for r in ranks] == [0, 1, 2, 3]
    # 2.4: 6 rooms; the 1/16 in two runs of 6 battles, battle k of each run on the same themes.
    assert {b.room for b in r16} == {str(i) for i in range(1, 7)}
    assert Counter(b.run for b in r16) == {1: 6, 2: 6}
    packs = Counter(b.theme_pack for b in r16)
    assert len(packs) == 6 and set(packs.values()) == {2}
    assert {len(b.themes) for b in r16} == {8}  # 2.5
    assert {len(b.themes) for b in d.state.stage_battles("1-4")} == {10}
    assert {len(b.themes) for b in d.state.stage_battles("final")} == {12}
    d.play_all()
    qf = t.outcome(d.state, "1-4")
    assert len(qf.advancing) == 12  # 2.3: top 2 of 4 battles + the 4 best third places
    assert sum("third" in a.rule for a in qf.advancing) == 4
    assert len(t.outcome(d.state, "1-16").advancing) == 24
    assert len(t.outcome(d.state, "1-2").advancing) == 4
