"""Tournament engine speed: a constrained draw for 500, a Swiss round for 200, and each preset's whole simulation.

Targets (issue 5): the draw and the Swiss round under 1 s each on the box. Simulations are reported with the
battle engine driving every question (the real cost of ``svoyak tournament simulate``) and with the outline.
"""

from __future__ import annotations

import dataclasses
import time

from appliance.rules import tournament as t
from appliance.rules.tournament.draw import battle_sizes, partition
from appliance.rules.tournament.prng import Rng
from appliance.rules.tournament.simulate import play_battle_outline
from appliance.service.presets import simulate
from appliance.service import presets


def _best_of(runs: int, work) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def _swiss_state(players: int):
    fmt = presets.load_format("mubc")
    state = t.apply(t.TournamentState(), t.TournamentCreated(0, "bench", "bench", fmt.source["data"], 1))
    for i in range(players):
        state = t.apply(state, t.PlayerRegistered(i + 1, f"p{i:03d}", f"Игрок {i}"))
    state = t.apply(state, t.plan_draw(state, "swiss", 1, 10_000))
    rng = Rng(3)
    for battle in state.stage_battles("swiss", 1):
        seated = t.battle_players(state, battle.id)
        scores = [10 * rng.randrange(30) - 100 for _ in seated]
        ordered = sorted(scores, reverse=True)
        lines = tuple(t.PlayerResult(p, s, 1 + ordered.index(s)) for p, s in zip(seated, scores))
        state = t.apply(state, t.BattleResultRecorded(20_000, t.BattleResult(battle.id, lines)))
    return state


def run(report) -> None:
    runs = 1 if report.short else 5
    players = [f"p{i}" for i in range(500)]
    team_of = {p: f"T{i % 60}" for i, p in enumerate(players)}  # 60 teams of 8-9: every battle constrained
    sizes = battle_sizes(500, 3, 2)
    seconds = _best_of(runs, lambda: partition(players, sizes, Rng(7), team_of=team_of, separate_teams=True))
    report.figure("draw 500 players into battles of 3, teams apart", seconds, "s", target=1.0)

    state = _swiss_state(200)
    # A fresh copy each run: its memo of queries starts empty, as after a restart.
    seconds = _best_of(runs, lambda: t.plan_draw(dataclasses.replace(state), "swiss", 2, 30_000))
    report.figure("Swiss round 2 for 200 players (table, pairing)", seconds, "s", target=1.0)

    presets = ((("mubc", 12),) if report.short else
               (("eurocup", 200), ("irkutsk", 36), ("youth-cup", 150), ("northern-owl", 36), ("mubc", 40)))
    for preset, count in presets:
        seconds = _best_of(1, lambda: simulate(preset, count, 1))
        report.figure(f"simulate {preset} ({count} players, battle engine)", seconds, "s")
        seconds = _best_of(min(runs, 3), lambda: simulate(preset, count, 1, battle_player=play_battle_outline))
        report.figure(f"simulate {preset} ({count} players, outline battles)", seconds, "s")
