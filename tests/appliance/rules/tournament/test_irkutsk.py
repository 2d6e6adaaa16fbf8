"""irkutsk: 36 places by priority (1.3-1.7), groups and quartets (2.1-2.3), QF/SF with first league (1.4, 2.4-2.6)."""

from __future__ import annotations

from collections import Counter

import pytest

from appliance.rules import tournament as t
from appliance.rules.tournament.errors import RegistrationError, StageError


def irkutsk_field(d, top=10, bgueu_teams=6, teams=16, organisers=2):
    d.register(top, category="top-league")
    n = top
    for team in range(bgueu_teams):
        d.register(2, start=n, team=lambda i, team=team: f"BGUEP-{team}", category="bgueu-team")
        n += 2
    for team in range(teams):
        d.register(1, start=n, team=lambda i, team=team: f"Team-{team:02d}", category="team", team_rank=team + 1)
        n += 1
    d.register(organisers, start=n, category="organisers")
    n += organisers
    d.register(2, start=n, category="first-league-qf")
    d.register(2, start=n + 2, category="first-league-sf")


def test_places_are_filled_by_priority_and_team_rank(desk):
    # irkutsk 1.3, 1.5, 1.6, 1.7: top league and BGUEP pairs first; over 36, only the best teams' players.
    d = desk("irkutsk")
    irkutsk_field(d, top=10, bgueu_teams=6, teams=16, organisers=2)  # 10 + 12 + 16 + 2 = 40 for 36 places
    field = t.field(d.state)
    assert len(field.accepted) == 36
    cats = Counter(d.state.entrants[p].category for p in field.accepted)
    assert cats == {"top-league": 10, "bgueu-team": 12, "team": 14}
    refused_teams = sorted(d.state.entrants[p].team for p, _ in field.refused if d.state.entrants[p].team)
    assert refused_teams == ["Team-14", "Team-15"]  # the two worst-ranked teams
    assert field.joining == {"qf": ("p040", "p041"), "sf": ("p042", "p043")}


def test_vacancies_go_to_the_organisers_choice(desk):
    # irkutsk 1.7: places left after 1.3, 1.5, 1.6 are the organisers' to fill.
    d = desk("irkutsk")
    irkutsk_field(d, top=8, bgueu_teams=4, teams=10, organisers=6)
    assert Counter(d.state.entrants[p].category for p in t.field(d.state).accepted)["organisers"] == 6


def test_team_quotas(desk):
    # irkutsk 1.5: a BGUEP team enters 2 players; 1.6: other teams 1.
    d = desk("irkutsk")
    d.register(2, team=lambda i: "BGUEP-A", category="bgueu-team")
    with pytest.raises(RegistrationError, match="irkutsk 1.5"):
        d.register(1, start=2, team=lambda i: "BGUEP-A", category="bgueu-team")
    d.register(1, start=3, team=lambda i: "X", category="team")
    with pytest.raises(RegistrationError, match="irkutsk 1.6"):
        d.register(1, start=4, team=lambda i: "X", category="team")


def test_the_whole_format(desk):
    d = desk("irkutsk", seed=5)
    irkutsk_field(d)
    # 2.1: 3 groups of 3 quartets.
    r1 = d.draw("r1")
    assert sorted(len(b.seats) for b in r1.battles) == [4] * 9
    assert Counter(b.group for b in r1.battles) == {"A": 3, "B": 3, "C": 3}
    assert all(len(b.themes) == 6 for b in r1.battles)  # 2.2
    d.play_all()
    state = d.state
    # 2.3: per group a battle of the quartet winners and one of the runners-up, 6 themes each.
    r2 = state.stage_battles("r2")
    assert len(r2) == 6 and all(len(t.battle_players(state, b.id)) == 3 for b in r2)
    for battle in r2:
        places = {t.outcome(state, "r1").lines[p].place for p in t.battle_players(state, battle.id)}
        groups = {next(b.group for b in state.stage_battles("r1") if p in t.battle_players(state, b.id))
                  for p in t.battle_players(state, battle.id)}
        assert len(places) == 1 and len(groups) == 1
    r2_out = t.outcome(state, "r2")
    to_sf = [a for a in r2_out.advancing if a.to_stage == "sf"]
    to_qf = [a for a in r2_out.advancing if a.to_stage == "qf"]
    assert len(to_sf) == 3 and len(to_qf) == 6  # two wins -> SF; a win and a 2nd -> QF
    assert all("two wins" in a.rule for a in to_sf)
    # 2.4: QF of 8 (6 + 2 first league), two quartets, 7 themes; winners and the best runner-up go on.
    qf = state.stage_battles("qf")
    qf_players = {p for b in qf for p in t.battle_players(state, b.id)}
    assert qf_players == {a.player for a in to_qf} | {"p040", "p041"}
    assert all(len(b.themes) == 7 for b in qf)
    qf_out = t.outcome(state, "qf")
    assert sorted(a.how.split(" ")[0] for a in qf_out.advancing) == ["best", "place", "place"]
    # 2.5: SF of 8: 3 group winners, 2 first league, 3 from the QF; 8 themes; top 2 to the final.
    sf_players = {p for b in state.stage_battles("sf") for p in t.battle_players(state, b.id)}
    assert sf_players == {a.player for a in to_sf} | {"p042", "p043"} | {a.player for a in qf_out.advancing}
    final = state.stage_battles("final")
    assert len(final) == 1 and len(t.battle_players(state, final[0].id)) == 4 and len(final[0].themes) == 9


def test_best_runner_up_tie_calls_a_shootout(desk):
    # irkutsk 2.4 + 3.6: runners-up equal on score and both indicators: a shoot-out theme decides.
    d = desk("irkutsk", seed=2)
    irkutsk_field(d)
    for _ in range(200):
        step = t.next_step(d.state)
        if step.stage == "qf":
            break
        if step.kind == "draw":
            d.draw(step.stage)
        elif step.kind == "play":
            for battle_id in step.battles:
                players = t.battle_players(d.state, battle_id)
                d.result(battle_id, {p: 100 - 10 * i for i, p in enumerate(players)})
        else:
            raise AssertionError(step)
    d.draw("qf")
    a, b = (t.battle_players(d.state, x.id) for x in d.state.stage_battles("qf"))
    d.result("qf/01", {a[0]: 200, a[1]: 150, a[2]: 10, a[3]: 0})
    d.result("qf/02", {b[0]: 180, b[1]: 150, b[2]: 20, b[3]: -10})
    step = t.next_step(d.state)
    assert step.kind == "tie" and set(step.tie.players) == {a[1], b[1]} and step.tie.slots == 1
    assert step.tie.shootout == "theme" and "irkutsk 2.4" in step.tie.rule
    with pytest.raises(StageError):
        t.plan_draw(d.state, "sf", 1)
    d.do(t.TieBroken, step.tie.id, (b[1], a[1]), "theme", "30 : 10")
    advancing = {x.player for x in t.outcome(d.state, "qf").advancing}
    assert advancing == {a[0], b[0], b[1]}
    assert t.next_step(d.state).kind == "draw"

