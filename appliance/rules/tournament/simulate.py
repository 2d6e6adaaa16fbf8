"""A whole tournament played with random but rule-abiding results, as a log of events and a JSON report.

Pure and reproducible: every random choice comes from :class:`Rng` seeded from the one ``seed`` argument, and
time is a counter, so the same preset, player count and seed give the same JSON byte for byte.

Battles are played by a *battle player*: a callable ``(spec, players, profile_name, rng) -> BattleResult``.
:func:`play_battle_with_engine` drives the real battle engine (``appliance.rules.battle``) question by question
when it is installed; :func:`play_battle_outline` is a self-contained fallback that draws who answers what and
settles in-battle ties with shoot-out themes (it does not model the timing rules).
"""

from __future__ import annotations

import importlib
from typing import Callable

from appliance.rules.tournament import events as ev
from appliance.rules.tournament.draw_plan import plan_draw
from appliance.rules.tournament.entry import field
from appliance.rules.tournament.outcomes import battle_players, stage_participants
from appliance.rules.tournament.progress import next_step
from appliance.rules.tournament.seats import stage_cuts
from appliance.rules.tournament.errors import StageError
from appliance.rules.tournament.formats import Format, with_changes
from appliance.rules.tournament.prng import Rng, derive_seed
from appliance.rules.tournament.results import BattleResult, PlayerResult, Shootout, places_from_scores
from appliance.rules.tournament.state import TournamentState
from appliance.rules.tournament.transitions import apply

BattlePlayer = Callable[[ev.BattleSpec, tuple, str, Rng, dict], BattleResult]
STEP_NS = 1_000_000_000


def _skill(seed: int, player: str) -> float:
    return 0.45 + 0.45 * Rng(derive_seed(seed, "skill", player)).random()


def _play_theme(values, players, rng, skills, tally) -> None:
    """One theme: for each question, players buzz in random order weighted by skill; one answer each."""
    for value in values:
        hard = value / (2.0 * max(values))
        buzzers = [p for p in players if rng.random() < 0.35 + 0.5 * skills[p] - 0.2 * hard]
        rng.shuffle(buzzers)
        buzzers.sort(key=lambda p: -skills[p] * rng.random())
        for player in buzzers:
            if rng.random() < skills[player] * (1.05 - hard * 0.6):
                tally[player]["score"] += value
                tally[player]["right_points"] += value
                tally[player]["right"] += 1
                tally[player]["taken"][value] = tally[player]["taken"].get(value, 0) + 1
                break
            tally[player]["score"] -= value
            tally[player]["wrong"] += 1


def play_battle_outline(spec: ev.BattleSpec, players: tuple, profile: str, rng: Rng, context: dict) -> BattleResult:
    """Fallback battle: random answers per question; any tie for a place is played off on extra themes."""
    skills = {p: _skill(context.get("seed", 0), p) for p in players}
    absent = set(context.get("absent", ()))
    present = list(players)  # mubc 3.5: an absent player counts with 0 game points and takes his place
    tally = {p: {"score": 0, "right_points": 0, "right": 0, "wrong": 0, "taken": {}} for p in players}
    for _colour, values in spec.themes:
        _play_theme(values, [p for p in present if p not in absent], rng, skills, tally)
    scores = [tally[p]["score"] for p in present]
    places = places_from_scores(scores)
    order = sorted(range(len(present)), key=lambda i: places[i])
    final_places = dict(zip(present, places))
    shootouts = []
    for place in sorted(set(places)):
        tied = [present[i] for i in order if places[i] == place]
        if len(tied) < 2:
            continue
        ranked, extra_scores = _shootout(tied, spec.themes[0][1], rng, skills)
        shootouts.append(Shootout(tuple(tied), tuple(ranked), "theme", tuple(extra_scores[p] for p in ranked),
                                  f"{profile}: tie for place {place}"))
        for offset, player in enumerate(ranked):
            final_places[player] = place + offset
    lines = [PlayerResult(p, tally[p]["score"], final_places[p], tally[p]["right_points"], tally[p]["right"],
                          tally[p]["wrong"], tuple(sorted(tally[p]["taken"].items(), reverse=True)),
                          absent=p in absent)
             for p in present]
    return BattleResult(spec.id, tuple(lines), tuple(shootouts), source="simulated", themes_played=len(spec.themes))


def _shootout(tied, values, rng, skills):
    """Extra themes among the tied until their order is strict (then lots, after ten themes)."""
    extra = {p: 0 for p in tied}
    for _ in range(10):
        tally = {p: {"score": 0, "right_points": 0, "right": 0, "wrong": 0, "taken": {}} for p in tied}
        _play_theme(values, tied, rng, skills, tally)
        for p in tied:
            extra[p] += tally[p]["score"]
        if len({extra[p] for p in tied}) == len(tied):
            break
    lots = {p: rng.random() for p in tied}
    ranked = sorted(tied, key=lambda p: (extra[p], lots[p]), reverse=True)
    return ranked, extra


def play_battle_with_engine(spec, players, profile, rng, context):
    """Drive the real battle engine (``appliance.rules.battle``) when it is installed; else the outline."""
    try:
        driver = importlib.import_module("appliance.rules.tournament.battle_driver")
    except ImportError:
        return play_battle_outline(spec, players, profile, rng, context)
    return driver.play(spec, players, profile, rng, context)


def engine_used(outline: bool) -> str:
    """Which battle player a simulation uses: ``"battle-engine"`` or ``"outline"``."""
    if outline:
        return "outline"
    try:
        importlib.import_module("appliance.rules.tournament.battle_driver")
    except ImportError:
        return "outline"
    return "battle-engine"


def registrations(fmt: Format, players: int, rng: Rng) -> list[ev.PlayerRegistered]:
    """Entrants for a simulated tournament: teams of 1-4 where the format has teams, categories by priority."""
    entries = []
    categories = [c for c in fmt.registration.categories if not c.joins_at]
    joiners = [c for c in fmt.registration.categories if c.joins_at]
    team_number = 0
    index = 0
    while index < players:
        team_number += 1
        size = 1 + rng.randrange(4) if fmt.registration.teams else 1
        category = categories[min(len(categories) - 1, rng.randrange(len(categories)))]
        if category.per_team:
            size = min(size, category.per_team)
        for _ in range(min(size, players - index)):
            index += 1
            entries.append(ev.PlayerRegistered(index * STEP_NS, f"p{index:03d}", f"Игрок {index:03d}",
                                               team=f"Команда {team_number:02d}" if fmt.registration.teams else "",
                                               category=category.id, team_rank=team_number))
    for category in joiners:  # irkutsk 1.4: two first-league players join at each of QF and SF
        for _ in range(2):
            index += 1
            entries.append(ev.PlayerRegistered(index * STEP_NS, f"p{index:03d}", f"Игрок {index:03d}",
                                               category=category.id))
    return entries


def simulate(fmt: Format, players: int, seed: int, rooms: int = 3, battle_player: BattlePlayer | None = None,
             changes: dict | None = None, profile_of: Callable | None = None) -> tuple[list, TournamentState]:
    """Play a whole tournament of ``fmt``; return its event log and final state. Raises the engine's errors if
    the format cannot be played with ``players`` entrants (the message names the rule). ``changes``: stage
    fields the organisers set (``{"swiss.rounds": 7}``). ``profile_of(name) -> Profile``: the battles' profiles,
    for the battle engine (``appliance.service.presets.simulate`` reads a preset and passes its loader)."""
    if changes:
        fmt = with_changes(fmt, changes)
    play = battle_player or play_battle_with_engine
    rng = Rng(seed)
    clock = [0]

    def now() -> int:
        clock[0] += STEP_NS
        return clock[0]

    log: list = []
    state = TournamentState()

    def record(event) -> None:
        nonlocal state
        state = apply(state, event)
        log.append(event)

    record(ev.TournamentCreated(now(), f"sim-{fmt.name}-{seed}", fmt.title_ru, fmt.source["data"], seed))
    for entry in registrations(fmt, players, rng):
        record(ev.PlayerRegistered(now(), entry.player_id, entry.name, entry.team, entry.category, entry.team_rank))
    record(ev.RegistrationClosed(now()))
    if fmt.registration.seeds:
        accepted = list(field(state).accepted)
        # northern-owl 2.2: the coordinator seeds by past festivals' results; here, by simulated skill.
        ranked = sorted(accepted, key=lambda p: _skill(seed, p), reverse=True)
        record(ev.SeedsSet(now(), tuple(ranked[: fmt.registration.seeds])))
    room_turn = [0]
    for _ in range(10_000):
        step = next_step(state)
        if step.kind == "done":
            break
        if step.kind == "draw":
            round_number = state.rounds_drawn.get(step.stage, 0) + 1
            draw = plan_draw(state, step.stage, derive_seed(seed, "draw", step.stage, str(round_number)), now())
            record(draw)
            for battle in draw.battles:
                if not battle.room:  # the director assigns rooms; the simulation deals them round-robin
                    room_turn[0] += 1
                    record(ev.BattleAssigned(now(), battle.id, f"{(room_turn[0] - 1) % rooms + 1}"))
        elif step.kind == "sheets":
            stage = fmt.stage(step.stage)
            for player in stage_participants(state, step.stage) or ():
                record(ev.WrittenSheetEntered(now(), step.stage, player, _sheet(stage, rng, _skill(seed, player))))
            record(ev.StageClosed(now(), step.stage))
        elif step.kind == "play":
            for battle_id in step.battles:
                spec = state.battles[battle_id]
                players_now = battle_players(state, battle_id)
                stage = fmt.stage(spec.stage)
                context = {"seed": seed, "skills": {p: _skill(seed, p) for p in players_now},
                           "cuts": stage_cuts(fmt, stage), "runs": stage.runs, "profile_of": profile_of}
                if stage.kind == "swiss":
                    # mubc 3.5: now and then a player listed in the table is not there for a battle.
                    no_show = Rng(derive_seed(seed, "absent", battle_id))
                    absent = tuple(p for p in players_now if no_show.random() < 0.03)
                    context["absent"] = absent if len(absent) < len(players_now) else ()
                result = play(spec, players_now, fmt.profile_for(stage),
                              Rng(derive_seed(seed, "battle", battle_id)), context)
                record(ev.BattleResultRecorded(now(), result))
        elif step.kind == "tie":
            tie = step.tie
            tied = list(tie.players)
            if tie.shootout == "lots":
                Rng(derive_seed(seed, "lots", tie.id)).shuffle(tied)
                record(ev.TieBroken(now(), tie.id, tuple(tied), "lots", tie.rule))
            else:
                skills = {p: _skill(seed, p) for p in tied}
                ranked, extra = _shootout(tied, (10, 20, 30, 40, 50), Rng(derive_seed(seed, "tie", tie.id)),
                                          skills)
                detail = ", ".join(f"{p} {extra[p]}" for p in ranked)
                record(ev.TieBroken(now(), tie.id, tuple(ranked), tie.shootout, detail))
        else:
            raise StageError(f"the simulation is stuck at {step}",
                             code="simulate.stuck", params={"step": step.kind, "stage": step.stage})
    return log, state


def _sheet(stage, rng: Rng, skill: float) -> str:
    """A written-round sheet: mostly right/blank by skill, some wrong, a few double answers or crossings."""
    marks = []
    for _theme in range(stage.themes):
        for value in stage.theme_values:
            roll = rng.random()
            hard = value / (2.0 * max(stage.theme_values))
            if roll < skill * (1.0 - hard):
                marks.append("+")
            elif roll < skill * (1.0 - hard) + 0.15:
                marks.append("-")
            elif roll < skill * (1.0 - hard) + 0.18:
                marks.append("2")
            elif roll < skill * (1.0 - hard) + 0.21:
                marks.append("x")
            else:
                marks.append("0")
    return "".join(marks)
