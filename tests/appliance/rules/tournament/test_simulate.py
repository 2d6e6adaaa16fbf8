"""Full simulated tournaments per preset: the structure of each regulation, reproducible from the seed."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from svoyak import cli
from appliance.rules import tournament as t
from appliance.rules.tournament.simulate import play_battle_outline
from appliance.service.presets import simulate
from appliance.service.tournament_view import report


def structure(state):
    return {stage.id: sorted(Counter(len(t.battle_players(state, b.id)) for b in state.stage_battles(stage.id)).items())
            for stage in state.fmt.stages}


@pytest.mark.parametrize("preset, players, expected", [
    ("eurocup", 100, {"qualifying": [(2, 1), (3, 9)], "1-27": [(3, 27)], "1-9": [(3, 9)], "1-3": [(3, 3)],
                      "final": [(3, 1)]}),
    ("irkutsk", 36, {"r1": [(4, 9)], "r2": [(3, 6)], "qf": [(4, 2)], "sf": [(4, 2)], "final": [(4, 1)]}),
    ("youth-cup", 100, {"written": [], "1-16": [(4, 12)], "1-8": [(3, 8)], "1-4": [(4, 4)], "1-2": [(4, 3)],
                        "final": [(4, 1)]}),
    ("northern-owl", 44, {"groups": [(4, 9)], "third-final": [(3, 3)], "final": [(3, 1)]}),
    ("mubc", 22, {"swiss": [(3, 10), (4, 20)], "final": [(4, 1)]}),
])
def test_structure_matches_the_regulation(preset, players, expected):
    _log, state = simulate(preset, players, seed=2026)
    assert structure(state) == expected
    data = report(state)
    assert data["standings"][0]["place"] == 1
    for stage in data["stages"]:
        for battle in stage.get("battles", []):
            assert battle["room"] and battle["themes"] and battle["lines"]
            assert {line["player"] for line in battle["lines"]} == set(battle["players"])
        for advanced in stage.get("advanced", []):
            assert advanced["rule"] and advanced["how"]


def test_same_seed_same_json_and_the_log_replays(capsys):
    args = ["tournament", "simulate", "--preset", "northern-owl", "--players", "38", "--seed", "5", "--events"]
    assert cli.main(args) == 0
    first = capsys.readouterr().out
    assert cli.main(args) == 0
    assert capsys.readouterr().out == first
    data = json.loads(first)
    assert len(data["field"]["waiting"]) == 2  # northern-owl 1.1
    events = [t.from_dict(e) for e in data["events"]]
    state = t.replay(events)
    assert [s.player for s in t.standings(state)] == [row["player"] for row in data["standings"]]


def test_another_seed_another_tournament():
    a = report(simulate("eurocup", 81, 1, battle_player=play_battle_outline)[1])
    b = report(simulate("eurocup", 81, 2, battle_player=play_battle_outline)[1])
    assert a["standings"] != b["standings"]


def test_a_format_that_cannot_be_met_says_which_rule(capsys):
    assert cli.main(["tournament", "simulate", "--preset", "northern-owl", "--players", "20"]) == 2
    assert "20 players cannot fill 9 battles" in capsys.readouterr().err


@pytest.mark.parametrize("preset, players", [("eurocup", 81), ("irkutsk", 40), ("northern-owl", 36),
                                             ("youth-cup", 70), ("mubc", 18)])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_battle_ties_at_a_cut_are_broken_in_the_battle(preset, players, seed):
    # eurocup 2.4, irkutsk 3.6, youth-cup 2.6-2.7, northern-owl 3.3: the battle engine settles ties at the cuts
    # the stage needs (mubc 3.3 keeps shared places: they share placement points).
    from appliance.rules.tournament.simulate import stage_cuts

    _log, state = simulate(preset, players, seed)
    for battle in state.battles.values():
        result = state.results[battle.id]
        cuts = stage_cuts(state.fmt, state.fmt.stage(battle.stage))
        if cuts is None:  # the final: the battle profile's prize places
            from appliance.service.presets import load_profile

            cuts = load_profile(state.fmt.profile_for(state.fmt.stage(battle.stage))).ranking_cuts
        places = sorted(line.place for line in result.lines if not line.absent)
        for cut in cuts:
            if cut < len(places):
                assert places.count(places[cut - 1]) == 1 or places[cut - 1] != places[cut], (battle.id, places)
        for shootout in result.shootouts:
            assert set(shootout.order) == set(shootout.players) and shootout.rule.startswith(preset.split("-")[0])
    assert not t.open_ties(state)


def test_simulated_draws_keep_teams_apart_and_seeds_spread():
    # eurocup 3.3 in a simulated tournament with teams of 1-4; northern-owl 2.3-2.4 with the simulated seeds.
    _log, euro = simulate("eurocup", 180, 9)
    for battle in euro.stage_battles("qualifying"):
        teams = [euro.entrants[p].team for p in t.battle_players(euro, battle.id)]
        assert len(teams) == len(set(teams))
    _log, owl = simulate("northern-owl", 40, 9)
    assert len(owl.seeds) == 9
    for battle in owl.stage_battles("groups"):
        assert sum(p in owl.seeds for p in battle.seats) == 1
    for bush in "ABC":
        assert sum(p in owl.seeds for b in owl.stage_battles("groups") if b.group == bush for p in b.seats) == 3
