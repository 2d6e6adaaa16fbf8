"""northern-owl: 36 places first come first served, waiting list, deadline (1.1-1.2); seeds and bushes (2.2-2.6)."""

from __future__ import annotations

from collections import Counter

import pytest

from appliance.rules import tournament as t
from appliance.rules.tournament.errors import DrawError, RegistrationError


def test_first_come_first_served_with_a_waiting_list(desk):
    # northern-owl 1.1: the first 36 play, the rest wait; a withdrawal lets the first in line in.
    d = desk("northern-owl")
    d.register(40)
    field = t.field(d.state)
    assert field.accepted == tuple(f"p{i:03d}" for i in range(36))
    assert field.waiting == ("p036", "p037", "p038", "p039")
    d.do(t.PlayerWithdrew, "p005")
    assert "p036" in t.field(d.state).accepted and t.field(d.state).waiting[0] == "p037"


def test_the_deadline_closes_registration_but_the_director_may_enter_late(desk):
    # northern-owl 1.2: registration by the deadline.
    d = desk("northern-owl")
    d.register(10)
    d.do(t.RegistrationClosed)
    with pytest.raises(RegistrationError, match="closed"):
        d.register(1, start=10)
    d.register(1, start=10, late=True)
    assert d.state.entrants["p010"].late


def test_seeds_one_per_group_three_per_bush_each_bush_in_its_room(desk):
    d = desk("northern-owl", seed=4)
    d.register(36, team=lambda i: f"T{i % 7}")
    seeds = tuple(f"p{i:03d}" for i in range(9))
    d.do(t.SeedsSet, seeds)
    drawn = d.draw("groups")
    assert len(drawn.battles) == 9 and all(len(b.seats) == 4 for b in drawn.battles)  # 2.4
    for battle in drawn.battles:
        assert sum(p in seeds for p in battle.seats) == 1  # 2.4: one seed per group
    bushes = Counter(b.group for b in drawn.battles)
    assert bushes == {"A": 3, "B": 3, "C": 3}  # 2.3: 3 bushes of 12 with 3 seeds each
    assert {b.group: b.room for b in drawn.battles} == {"A": "A", "B": "B", "C": "C"}  # 2.3: own room
    d.play_all()
    # 2.5: the three group winners of a bush play the third-final in the bush's room; its winner to the final.
    for battle in d.state.stage_battles("third-final"):
        players = t.battle_players(d.state, battle.id)
        source = {next(b.group for b in d.state.stage_battles("groups") if p in t.battle_players(d.state, b.id))
                  for p in players}
        assert source == {battle.group} and battle.room == battle.group and len(players) == 3
    final = d.state.stage_battles("final")[0]
    assert len(t.battle_players(d.state, final.id)) == 3  # 2.6


def test_seed_count_must_match_the_groups(desk):
    d = desk("northern-owl")
    d.register(36)
    with pytest.raises(RegistrationError, match="exactly 9"):
        d.do(t.SeedsSet, ("p000",))
    d.do(t.SeedsSet, tuple(f"p{i:03d}" for i in range(9)))
    d.do(t.PlayerWithdrew, "p000")  # a seed withdraws: 8 seeds for 9 groups
    with pytest.raises(DrawError, match="9 seeded players, 8"):
        d.draw("groups")
