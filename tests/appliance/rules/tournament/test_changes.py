"""Withdrawals, no-shows, late entries, corrections and re-draws, handled as organisers expect."""

from __future__ import annotations

import pytest

from appliance.rules import tournament as t
from appliance.rules.tournament.errors import DrawError, ResultError


def test_a_player_withdrawing_after_the_draw_leaves_a_smaller_battle(desk):
    d = desk("irkutsk")
    d.register(36, category="top-league")
    d.draw("r1")
    battle = d.state.stage_battles("r1")[0]
    leaving = battle.seats[0]
    d.do(t.PlayerWithdrew, leaving, "ill")
    players = t.battle_players(d.state, battle.id)
    assert leaving not in players and len(players) == 3
    with pytest.raises(ResultError, match="seats"):
        lines = tuple(t.PlayerResult(p, 10 * i, 4 - i) for i, p in enumerate(battle.seats))
        d.do(t.BattleResultRecorded, t.BattleResult(battle.id, lines))  # the withdrawn player has no line
    d.result(battle.id, {p: 10 * i for i, p in enumerate(players)})


def test_a_withdrawn_or_absent_winner_is_replaced_by_the_runner_up(desk):
    # eurocup: the winner of a 1/27 battle withdraws before the 1/9; the runner-up of his battle takes his seat.
    d = desk("eurocup")
    d.register(81, team=lambda i: f"T{i}")
    d.draw()
    for battle in d.state.stage_battles("1-27"):
        players = t.battle_players(d.state, battle.id)
        d.result(battle.id, {p: 30 - 10 * i for i, p in enumerate(players)})
    by_place = {line.place: line.player for line in d.state.results["1-27/01"].lines}
    d.do(t.PlayerWithdrew, by_place[1])
    seated = t.battle_players(d.state, "1-9/01")
    assert len(seated) == 3 and by_place[2] in seated and by_place[1] not in seated
    # A no-show in a battle (absent) does not take a place that sends a player on either.
    second = t.battle_players(d.state, "1-27/02")
    lines = (t.PlayerResult(second[0], 0, 1, absent=True), t.PlayerResult(second[1], -10, 2),
             t.PlayerResult(second[2], -20, 3))
    d.do(t.BattleResultRecorded, t.BattleResult("1-27/02", lines, source="manual"))
    assert second[1] in t.battle_players(d.state, "1-9/01")


def test_a_correction_before_the_next_stage_changes_who_goes_on_and_is_refused_after(desk):
    d = desk("northern-owl")
    d.register(36)
    d.do(t.SeedsSet, tuple(f"p{i:03d}" for i in range(9)))
    d.draw("groups")
    for battle in d.state.stage_battles("groups"):
        players = t.battle_players(d.state, battle.id)
        d.result(battle.id, {p: 40 - 10 * i for i, p in enumerate(players)})
    first = d.state.stage_battles("groups")[0]
    players = t.battle_players(d.state, first.id)
    d.result(first.id, {p: 10 * i for i, p in enumerate(players)})  # the protocol was wrong: corrected
    assert players[-1] in {a.player for a in t.outcome(d.state, "groups").advancing}
    d.draw("third-final")
    third = d.state.stage_battles("third-final")[0]
    d.result(third.id, {p: 30 - 10 * i for i, p in enumerate(t.battle_players(d.state, third.id))})
    with pytest.raises(ResultError, match="later stage"):
        d.result(first.id, {p: 10 * i for i, p in enumerate(reversed(players))})


def test_withdrawal_before_the_draw_lets_the_waiting_list_in_and_redraw_takes_them(desk):
    d = desk("northern-owl")
    d.register(37)
    d.do(t.SeedsSet, tuple(f"p{i:03d}" for i in range(9)))
    first = d.draw("groups")
    assert "p036" not in {p for b in first.battles for p in b.seats}
    d.do(t.PlayerWithdrew, "p020")
    second = d.draw("groups", seed=99)  # a re-draw before any result
    seated = {p for b in second.battles for p in b.seats}
    assert "p036" in seated and "p020" not in seated and len(seated) == 36


def test_a_shared_place_across_a_cut_in_a_typed_result_needs_a_shootout(desk):
    d = desk("northern-owl")
    d.register(36)
    d.do(t.SeedsSet, tuple(f"p{i:03d}" for i in range(9)))
    d.draw("groups")
    battles = d.state.stage_battles("groups")
    for battle in battles:
        players = t.battle_players(d.state, battle.id)
        scores = [50, 50, 10, 0] if battle is battles[0] else [40, 30, 20, 10]
        d.result(battle.id, dict(zip(players, scores)))
    step = t.next_step(d.state)
    assert step.kind == "tie" and step.tie.id == f"{battles[0].id}:places:1" and step.tie.slots == 1
    tied = step.tie.players
    d.do(t.TieBroken, step.tie.id, (tied[1], tied[0]), "questions", "northern-owl 3.3")
    assert tied[1] in {a.player for a in t.outcome(d.state, "groups").advancing}
    assert tied[0] not in {a.player for a in t.outcome(d.state, "groups").advancing}


def test_eurocup_with_fewer_than_81_and_too_few(desk):
    # eurocup 3.2 + 2.1: 60 entrants: 17 battles of the 1/27 (one of two: an even field) and 10 byes into the 1/9.
    d = desk("eurocup")
    d.register(60, team=lambda i: f"T{i}")
    drawn = d.draw()
    sizes = sorted(len(b.seats) for b in drawn.battles if b.stage == "1-27")
    assert sizes == [2] + [3] * 16
    small = desk("eurocup")
    small.register(1)
    with pytest.raises(DrawError, match="1 entrants cannot play a battle of at least 2 \\(eurocup"):
        small.draw()
