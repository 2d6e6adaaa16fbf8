"""mubc: Swiss with rematches (3.1), placement points and shared places (3.3), absent players (3.5), final (3.4)."""

from __future__ import annotations

import pytest

from appliance.rules import tournament as t
from appliance.rules.tournament.results import placement_points_for


def test_shared_places_average_the_points():
    # mubc 3.3: 3/2/1/0; a shared place gets the mean of the places it covers.
    assert placement_points_for([1, 1, 3, 4], (3, 2, 1, 0)) == [2.5, 2.5, 1.0, 0.0]
    assert placement_points_for([1, 2, 2, 2], (3, 2, 1, 0)) == [3.0, 1.0, 1.0, 1.0]
    assert placement_points_for([1, 2, 3, 4], (3, 2, 1, 0), multiplier=2) == [6.0, 4.0, 2.0, 0.0]  # 3.4


def test_rounds_pair_players_nearest_in_the_table(desk):
    # mubc 3.1: from round 2, the players nearest in the table play together; rematches allowed.
    d = desk("mubc")
    d.register(12)
    d.draw("swiss")
    for battle in d.state.stage_battles("swiss", 1):
        players = t.battle_players(d.state, battle.id)
        d.result(battle.id, {p: 40 - 10 * i for i, p in enumerate(players)})
    table = t.swiss_table(d.state, "swiss")
    d.draw("swiss")
    round_2 = sorted(d.state.stage_battles("swiss", 2), key=lambda b: b.index)
    points = {row[0]: row[1] for row in table}
    assert sorted(points[p] for p in round_2[0].seats) == [2.0, 3.0, 3.0, 3.0]  # the 3 winners + a runner-up
    assert sorted(points[p] for p in round_2[2].seats) == [0.0, 0.0, 0.0, 1.0]
    assert [len(b.seats) for b in round_2] == [4, 4, 4]


def test_absent_player_scores_zero_and_still_gets_placement_points(desk):
    # mubc 3.5: an absent player has 0 game points and may get points for the place he takes.
    d = desk("mubc")
    d.register(4)
    d.draw("swiss")
    battle = d.state.stage_battles("swiss", 1)[0]
    a, b, c, e = t.battle_players(d.state, battle.id)
    lines = (t.PlayerResult(a, 50, 1), t.PlayerResult(b, 0, 2, absent=True), t.PlayerResult(c, -20, 3),
             t.PlayerResult(e, -40, 4))
    d.do(t.BattleResultRecorded, t.BattleResult(battle.id, lines, source="manual"))
    assert dict((row[0], row[1]) for row in t.swiss_table(d.state, "swiss"))[b] == 2.0


def test_final_doubles_points_and_standings_use_points_then_game_points(desk):
    d = desk("mubc", seed=8)
    d.register(19)
    d.play_all()
    assert d.state.rounds_drawn["swiss"] == 5
    for number in range(1, 6):  # a player is in at most one battle per round; everyone plays every round
        seated = [p for b in d.state.stage_battles("swiss", number) for p in t.battle_players(d.state, b.id)]
        assert sorted(seated) == sorted(d.state.entrants)
        assert sorted(len(b.seats) for b in d.state.stage_battles("swiss", number)) == [3, 4, 4, 4, 4]
    finalists = {a.player for a in t.outcome(d.state, "swiss").advancing}
    table = t.swiss_table(d.state, "swiss")
    assert finalists == {row[0] for row in table[:4]}  # 3.4
    final = t.outcome(d.state, "final")
    assert sorted(final.placement.values()) == [0.0, 2.0, 4.0, 6.0]  # 3.4: doubled
    rows = t.standings(d.state)
    totals = {row[0]: row[1] for row in table}
    for row in rows[:4]:
        assert row.placement_points == pytest.approx(totals[row.player] + final.placement[row.player])
    keys = [(r.placement_points, r.score) for r in rows]
    assert keys == sorted(keys, reverse=True)  # 3.6


def test_a_late_entry_joins_the_next_round(desk):
    d = desk("mubc")
    d.register(8)
    d.do(t.RegistrationClosed)
    d.draw("swiss")
    for battle in d.state.stage_battles("swiss", 1):
        players = t.battle_players(d.state, battle.id)
        d.result(battle.id, {p: 40 - 10 * i for i, p in enumerate(players)})
    d.register(1, start=8, late=True)
    d.draw("swiss")
    seated = [p for b in d.state.stage_battles("swiss", 2) for p in b.seats]
    assert "p008" in seated and len(seated) == 9
