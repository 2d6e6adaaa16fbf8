"""eurocup: single elimination, qualifying when over 81, whole bracket drawn first, teams kept apart (3.1-3.4)."""

from __future__ import annotations

from collections import Counter

import pytest

from appliance.rules import tournament as t
from appliance.rules.tournament.errors import DrawError, StageError
from appliance.rules.tournament.formats import with_changes
from appliance.service import presets


def team_of_five(i: int) -> str:
    return f"T{i // 5:02d}"  # teams of five players


def test_81_entrants_skip_the_qualifying_and_fill_the_1_27(desk):
    # eurocup 3.2: the main part starts with 81 players in the 1/27; no qualifying when 81 apply.
    d = desk("eurocup")
    d.register(81, team=team_of_five)
    drawn = d.draw()
    assert drawn.skipped == ("qualifying",)
    stages = Counter(b.stage for b in drawn.battles)
    assert stages == {"1-27": 27, "1-9": 9, "1-3": 3, "final": 1}
    first = [b for b in drawn.battles if b.stage == "1-27"]
    assert sorted(len(b.seats) for b in first) == [3] * 27
    assert sorted(p for b in first for p in b.seats) == sorted(d.state.entrants)


def test_over_81_a_qualifying_stage_fills_exactly_81_places(desk):
    # eurocup 3.2: 100 entrants -> qualifying winners and byes make the 81 of the 1/27.
    d = desk("eurocup")
    d.register(100, team=team_of_five)
    drawn = d.draw()
    qualifying = [b for b in drawn.battles if b.stage == "qualifying"]
    round_27 = [b for b in drawn.battles if b.stage == "1-27"]
    players_in_qualifying = sum(len(b.seats) for b in qualifying)
    byes = [s for b in round_27 for s in b.seats if not s.startswith("@")]
    refs = [s for b in round_27 for s in b.seats if s.startswith("@")]
    assert len(qualifying) == len(refs) == 10
    assert players_in_qualifying + len(byes) == 100
    assert len(byes) + len(refs) == 81
    assert all(2 <= len(b.seats) <= 3 for b in qualifying)  # 2.1: battles of two allowed here


def test_no_two_players_of_a_team_meet_in_a_qualifying_battle(desk):
    # eurocup 3.3: not two or three players of one team in one qualifying battle.
    d = desk("eurocup", seed=11)
    d.register(150, team=lambda i: f"T{i % 12:02d}")  # 12 teams of 12-13 players
    drawn = d.draw()
    for battle in drawn.battles:
        if battle.stage == "qualifying":
            teams = [d.state.entrants[p].team for p in battle.seats]
            assert len(teams) == len(set(teams)), battle


def test_a_team_too_big_for_the_qualifying_is_named(desk):
    # eurocup 3.3 cannot hold when a team has more qualifying players than there are battles.
    d = desk("eurocup")
    d.register(60, team=lambda i: "Giant")
    d.register(30, start=60, team=lambda i: "Giant")
    with pytest.raises(DrawError, match="eurocup 3.2-3.3"):
        d.draw()


def test_too_many_entrants_for_one_qualifying_stage(desk):
    d = desk("eurocup")
    d.register(250, team=lambda i: f"T{i:03d}")
    with pytest.raises(DrawError, match="at most 243"):
        d.draw()


def test_the_whole_bracket_is_drawn_before_the_qualifying_and_the_winner_goes_on(desk):
    # eurocup 3.3 (bracket first), 3.1 (the winner goes on), 3.4 (themes per stage; red themes in the final).
    d = desk("eurocup", seed=3)
    d.register(90, team=team_of_five)
    d.draw()
    assert {b.stage for b in d.state.battles.values()} == {"qualifying", "1-27", "1-9", "1-3", "final"}
    with pytest.raises(StageError):
        t.plan_draw(d.state, "1-9", 1)  # later stages are not drawn separately
    themes = {b.stage: len(b.themes) for b in d.state.battles.values()}
    assert themes == {"qualifying": 4, "1-27": 4, "1-9": 4, "1-3": 6, "final": 12}
    final = d.state.battles["final/01"]
    assert [c for c, _ in final.themes].count("red") == 6
    assert dict(final.themes)["red"] == (20, 40, 60, 80, 100)
    d.play_all()
    for battle in d.state.battles.values():
        result = d.state.results[battle.id]
        winners = [line.player for line in result.lines if line.place == 1]
        assert len(winners) == 1
        if battle.stage != "final":
            advanced = [a for a in t.outcome(d.state, battle.stage).advancing if a.player == winners[0]]
            assert advanced and advanced[0].rule.startswith("eurocup 3.1")
    standings = t.standings(d.state)
    assert [s.place for s in standings[:3]] == [1, 2, 3]  # eurocup 1.3: cup holder, silver, bronze


def test_redraw_before_play_changes_the_bracket_and_is_refused_after(desk):
    d = desk("eurocup")
    d.register(81, team=team_of_five)
    first = d.draw(seed=1)
    second = d.draw(seed=2)
    assert first.battles != second.battles
    d.result("1-27/01", dict(zip(t.battle_players(d.state, "1-27/01"), (30, 20, 10))))
    with pytest.raises(StageError):
        d.draw(seed=3)


def test_the_same_seed_draws_the_same_bracket(desk):
    a, b = desk("eurocup"), desk("eurocup")
    for d in (a, b):
        d.register(120, team=team_of_five)
    assert a.draw(seed=42).battles == b.draw(seed=42).battles


def test_seeded_players_get_the_byes_first(desk):
    # eurocup 3.2 names no order for byes; if the director seeds players, they skip the qualifying.
    d = desk("eurocup", seed=4)
    d.register(120, team=team_of_five)
    seeds = tuple(f"p{i:03d}" for i in range(0, 120, 3))
    d.do(t.SeedsSet, seeds)
    drawn = d.draw()
    qualifying = {p for b in drawn.battles if b.stage == "qualifying" for p in b.seats}
    assert not qualifying & set(seeds)


def bye_bracket(desk, entrants: int, seed: int = 1, **kwargs):
    d = desk("eurocup", seed=seed)
    d.register(entrants, team=team_of_five, **kwargs)
    return d, d.draw()


@pytest.mark.parametrize("entrants", [2, 3, 4, 10, 20, 27, 28, 29, 40, 53, 54, 60, 80])
def test_under_81_byes_fill_the_bracket_and_only_the_opening_round_may_have_a_battle_of_two(desk, entrants):
    # eurocup 3.2: the main part starts at the 1/27 of 81 players; with fewer, byes into the 1/9 fill the bracket
    # (under 28 the tournament opens at the 1/9, and so on). eurocup 2.1: three players a battle, two only at the
    # preliminary stage: the opening round, which needs one battle of two when the field is even (a battle of
    # three sends one of three on, so an odd number of players ends with one winner).
    d, drawn = bye_bracket(desk, entrants)
    order = [s.id for s in d.state.fmt.stages]
    played = [stage for stage in order if any(b.stage == stage for b in drawn.battles)]
    assert set(drawn.skipped) == set(order) - set(played)
    opening, later = played[0], played[1:]
    assert [s.id for s in t.playing_stages(d.state)] == played
    opening_sizes = sorted(len(b.seats) for b in drawn.battles if b.stage == opening)
    assert opening_sizes.count(2) == (1 if entrants % 2 == 0 else 0)
    assert set(opening_sizes) <= {2, 3}
    for battle in drawn.battles:
        if battle.stage in later:
            assert len(battle.seats) == 3  # every later battle is full: byes and winners fill it
    fmt = d.state.fmt
    assert [len([b for b in drawn.battles if b.stage == s]) for s in later] == [fmt.stage(s).battles for s in later]
    # Every entrant is seated exactly once: in an opening battle, or as a bye in the round after it.
    seated = [seat for b in drawn.battles for seat in b.seats if not seat.startswith("@")]
    assert sorted(seated) == sorted(d.state.entrants)
    d.play_all()
    assert t.next_step(d.state).kind == "done"
    assert len(t.standings(d.state)) == entrants and t.standings(d.state)[0].stage == "final"


def test_under_81_seeded_players_get_the_byes_first(desk):
    # eurocup 3.2 names no order for byes; if the director seeds players, they get them first, the rest by draw.
    d = desk("eurocup", seed=3)
    d.register(40, team=team_of_five)
    seeds = ("p007", "p011", "p023", "p031", "p039")
    d.do(t.SeedsSet, seeds)
    drawn = d.draw()
    opening = {p for b in drawn.battles if b.stage == "1-27" for p in b.seats}
    byes = {p for b in drawn.battles if b.stage == "1-9" for p in b.seats if not p.startswith("@")}
    assert len(opening) == 20 and len(byes) == 20 and set(seeds) <= byes


def test_battles_of_two_only_where_the_format_allows_them(desk):
    # eurocup 2.1 is data: without the preliminary allowance an even field cannot be drawn, and the error says why.
    fmt = with_changes(presets.load_format("eurocup"), {"1-27.preliminary_min_battle_size": 3})
    assert fmt.stage("1-27").min_battle_size == 3 and fmt.stage("1-9").smallest_battle == 3

    def drawn(entrants: int):
        state = t.apply(t.TournamentState(), t.TournamentCreated(0, "x", "x", fmt.source["data"], 1))
        for i in range(entrants):
            state = t.apply(state, t.PlayerRegistered(i + 1, f"p{i:03d}", f"P{i}"))
        return t.plan_draw(state, "1-27", 5, 100)

    with pytest.raises(DrawError, match=r"40 entrants: byes into 1-9 .* fewer than 3 players.*eurocup 3.2, 2.1"):
        drawn(40)
    assert {len(b.seats) for b in drawn(41).battles} == {3}
