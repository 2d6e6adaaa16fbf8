"""Helpers for tournament engine tests: build a tournament from a preset, register players, play battles."""

from __future__ import annotations

import pytest

from appliance.rules import tournament as t
from appliance.rules.tournament.simulate import play_battle_outline
from appliance.service import presets


class Desk:
    """A tiny test desk: applies events with a fake clock and keeps the log."""

    def __init__(self, preset: str, seed: int = 1):
        self.fmt = presets.load_format(preset)
        self.clock = 0
        self.log = []
        self.state = t.TournamentState()
        self.seed = seed
        self.do(t.TournamentCreated, "test", self.fmt.title_ru, self.fmt.source["data"], seed)

    def now(self) -> int:
        self.clock += 1_000
        return self.clock

    def do(self, cls, *args, **kwargs):
        event = cls(self.now(), *args, **kwargs)
        self.state = t.apply(self.state, event)
        self.log.append(event)
        return event

    def register(self, count: int, start: int = 0, team=lambda i: "", category: str = "", **kwargs):
        ids = []
        for i in range(start, start + count):
            self.do(t.PlayerRegistered, f"p{i:03d}", f"Игрок {i}", team=team(i), category=category, **kwargs)
            ids.append(f"p{i:03d}")
        return ids

    def draw(self, stage: str | None = None, seed: int | None = None):
        stage = stage or t.next_step(self.state).stage
        event = t.plan_draw(self.state, stage, self.seed if seed is None else seed, self.now())
        self.state = t.apply(self.state, event)
        self.log.append(event)
        return event

    def result(self, battle_id: str, scores: dict, **line_fields):
        """Record a manual result: places from scores, ties shared (the desk breaks them later)."""
        players = t.battle_players(self.state, battle_id)
        assert set(players) == set(scores), (players, scores)
        ordered = sorted(scores.values(), reverse=True)
        lines = tuple(t.PlayerResult(p, s, 1 + ordered.index(s), right_points=max(s, 0), **line_fields.get(p, {}))
                      for p, s in scores.items())
        return self.do(t.BattleResultRecorded, t.BattleResult(battle_id, lines, source="manual"))

    def play_all(self, max_steps: int = 2000):
        """Play every step with the outline battle player; ties broken by the listed order."""
        from appliance.rules.tournament.prng import Rng, derive_seed

        for _ in range(max_steps):
            step = t.next_step(self.state)
            if step.kind == "done":
                return
            if step.kind == "draw":
                self.draw(step.stage, t.derive_seed(self.seed, step.stage, str(self.state.rounds_drawn.get(step.stage, 0))))
            elif step.kind == "play":
                for battle_id in step.battles:
                    spec = self.state.battles[battle_id]
                    result = play_battle_outline(spec, t.battle_players(self.state, battle_id), "",
                                                 Rng(derive_seed(self.seed, battle_id)), {"seed": self.seed})
                    self.do(t.BattleResultRecorded, result)
            elif step.kind == "tie":
                self.do(t.TieBroken, step.tie.id, tuple(sorted(step.tie.players)), "theme")
            elif step.kind == "sheets":
                for player in t.stage_participants(self.state, step.stage):
                    marks = "".join("+-0"[(sum(map(ord, player)) * 7 + i * i) % 3] for i in range(60))
                    self.do(t.WrittenSheetEntered, step.stage, player, marks)
                self.do(t.StageClosed, step.stage)
            else:
                raise AssertionError(step)
        raise AssertionError("tournament did not finish")


@pytest.fixture
def desk():
    return Desk
