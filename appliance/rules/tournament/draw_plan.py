"""The draw of a stage (or of a whole bracket) as a :class:`StageDrawn` event, from a seed.

Pure: the seed comes in, the event goes out; nothing changes until the caller applies it. The constrained
partition itself (teams apart, one seed per battle) is :mod:`.draw`.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Sequence

from appliance.rules.tournament import events as ev
from appliance.rules.tournament.draw import battle_sizes, deal, partition, swiss_pairing
from appliance.rules.tournament.entry import field, playing_stages
from appliance.rules.tournament.errors import DrawError, StageError
from appliance.rules.tournament.formats import Stage
from appliance.rules.tournament.outcomes import battle_of, place_in, stage_lines, stage_participants
from appliance.rules.tournament.prng import Rng
from appliance.rules.tournament.results import ranking_key
from appliance.rules.tournament.seats import SeatRef
from appliance.rules.tournament.state import TournamentState


GROUP_LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _themes(stage: Stage) -> tuple[tuple[str, tuple[int, ...]], ...]:
    blue = stage.themes - stage.red_themes
    return tuple([("blue", stage.theme_values)] * blue + [("red", stage.red_values)] * stage.red_themes)


def _spec(stage: Stage, index: int, seats: Sequence[str], count: int, round_number: int = 1,
          group: str = "") -> ev.BattleSpec:
    if not group and stage.groups:
        per_group = max(1, math.ceil(count / stage.groups))
        group = GROUP_LABELS[index // per_group]
    if stage.room_by_group and group:
        room, run = group, 1
    elif stage.rooms:
        room, run = str(index % stage.rooms + 1), index // stage.rooms + 1
    else:
        room, run = "", 1
    if stage.runs > 1:
        per_run = math.ceil(count / stage.runs)
        run, pack = index // per_run + 1, f"{index % per_run + 1}"  # youth-cup 2.4: same themes in each run
    else:
        pack = f"{index + 1}"
    battle_id = f"{stage.id}/{index + 1:02d}" if stage.kind != "swiss" else f"{stage.id}/r{round_number}/{index + 1:02d}"
    return ev.BattleSpec(id=battle_id, stage=stage.id, index=index, seats=tuple(seats), round=round_number,
                         group=group, room=room, run=run, theme_pack=f"{stage.id}:{pack}", themes=_themes(stage))


def _refs_from(stage: Stage, battles: int, to: str, available: int | None = None) -> list[str]:
    """Ordered references to the players ``stage`` sends to ``to``: winners first, then runners-up, ..."""
    refs = []
    for rule in stage.advance:
        if rule.to != to:
            continue
        if rule.places:
            refs += [str(SeatRef.of_place(stage.id, i, place)) for place in rule.places for i in range(battles)]
        elif rule.best:
            refs += [str(SeatRef.best(stage.id, rule.place, rank)) for rank in range(1, rule.best + 1)]
        elif rule.top:
            count = rule.top if available is None else min(rule.top, available)
            refs += [str(SeatRef.top(stage.id, rank)) for rank in range(1, count + 1)]
        else:
            raise DrawError(f"stage {stage.id}: a bracket cannot be drawn ahead through a records rule",
                            code="draw.records_ahead", params={"stage": stage.id})
    return refs


def plan_draw(state: TournamentState, stage_id: str, seed: int, at_ns: int = 0) -> ev.StageDrawn:
    """The draw of a stage (or, for a bracket format, of the whole bracket) from ``seed``, as an event.

    Raises :class:`StageError` if the stage cannot be drawn now and :class:`DrawError` naming the constraint that
    cannot be met. Nothing changes until the caller applies the event.
    """
    fmt = state.fmt
    stage = fmt.stage(stage_id)
    rng = Rng(seed)
    if fmt.bracket:
        first = playing_stages(state)[0]
        if stage_id != first.id:
            raise StageError(f"{fmt.name}: the whole bracket is drawn at once, from stage {first.id} "
                             f"({first.rule or fmt.regulation})",
                             code="draw.bracket_whole",
                             params={"format": fmt.name, "stage": first.id, "rule": first.rule or fmt.regulation})
        if any(b.id in state.results for b in state.battles.values()) or any(state.sheets.values()):
            raise StageError("results are in: the bracket can no longer be re-drawn",
                             code="draw.has_results", params={"stage": stage_id})
        return _plan_bracket(state, seed, rng, at_ns)
    round_number = 1
    if stage.kind == "swiss":
        drawn = state.rounds_drawn.get(stage_id, 0)
        current = state.stage_battles(stage_id, drawn)
        if drawn and not all(b.id in state.results for b in current):
            round_number = drawn  # a re-draw of the unplayed current round
            if any(b.id in state.results for b in current):
                raise StageError(f"round {drawn} of {stage_id} has results: it can no longer be re-drawn",
                                 code="draw.has_results", params={"stage": stage_id, "round": drawn})
        else:
            round_number = drawn + 1
        if round_number > stage.rounds:
            raise StageError(f"stage {stage_id}: all {stage.rounds} rounds are drawn",
                             code="draw.rounds_done", params={"stage": stage_id, "rounds": stage.rounds})
    elif any(b.id in state.results for b in state.stage_battles(stage_id)):
        raise StageError(f"stage {stage_id} has results: it can no longer be re-drawn",
                         code="draw.has_results", params={"stage": stage_id})
    players = stage_participants(state, stage_id)
    if players is None:
        raise StageError(f"stage {stage_id} cannot be drawn yet: an earlier stage is unfinished or has an open tie",
                         code="draw.not_yet", params={"stage": stage_id})
    players = list(players)
    team_of = {p: state.entrants[p].team for p in players}
    rule = stage.rule or fmt.regulation
    if stage.kind == "written":
        return ev.StageDrawn(at_ns, stage_id, seed, (), round_number)
    if stage.draw == "swiss":
        groups = _swiss_order(state, stage, players, rng, round_number)
        sizes = battle_sizes(len(players), stage.battle_size, stage.smallest_battle, 0, rule)
        seated = swiss_pairing(groups, sizes)
        battles = tuple(_spec(stage, i, seats, len(seated), round_number) for i, seats in enumerate(seated))
        return ev.StageDrawn(at_ns, stage_id, seed, battles, round_number)
    if stage.draw in ("group", "group-place"):
        source = _source_stage(state, stage)
        buckets: dict[tuple, list[str]] = defaultdict(list)
        for player in players:
            battle = battle_of(state, player, source.id)
            if battle is None:
                raise DrawError(f"{player!r} reached {stage_id} without a battle in {source.id}; draw {stage_id} "
                                "by hand",
                                code="draw.no_source_battle",
                                params={"player": player, "stage": stage_id, "source": source.id})
            place = place_in(state, player, source.id) if stage.draw == "group-place" else 0
            buckets[(battle.group, place)].append(player)
        specs = []
        keys = sorted(buckets)
        for index, bucket_key in enumerate(keys):
            seats = buckets[bucket_key]
            rng.shuffle(seats)
            if not stage.smallest_battle <= len(seats) <= stage.battle_size:
                raise DrawError(f"group {bucket_key[0]}: {len(seats)} players for a battle of "
                                f"{stage.smallest_battle}-{stage.battle_size} ({rule})",
                                code="draw.group_size",
                                params={"group": bucket_key[0], "count": len(seats), "low": stage.smallest_battle,
                                        "high": stage.battle_size, "rule": rule})
            specs.append(_spec(stage, index, seats, len(keys), group=bucket_key[0]))
        return ev.StageDrawn(at_ns, stage_id, seed, tuple(specs), round_number)
    sizes = battle_sizes(len(players), stage.battle_size, stage.smallest_battle, stage.battles, rule)
    seated = partition(players, sizes, rng, team_of=team_of, seeds=state.seeds,
                       separate_teams=stage.separate_teams, one_seed_per_battle=stage.one_seed_per_battle,
                       rule=rule)
    battles = tuple(_spec(stage, i, seats, len(seated)) for i, seats in enumerate(seated))
    return ev.StageDrawn(at_ns, stage_id, seed, battles, round_number)


def _source_stage(state: TournamentState, stage: Stage) -> Stage:
    fmt = state.fmt
    for earlier in reversed(fmt.stages[: fmt.index(stage.id)]):
        if any(rule.to == stage.id for rule in earlier.advance):
            return earlier
    raise DrawError(f"stage {stage.id} draws by group but no stage sends players to it",
                    code="draw.no_source", params={"stage": stage.id})


def _swiss_order(state: TournamentState, stage: Stage, players: list[str], rng, round_number: int) -> list[str]:
    """Round 1 by draw; later rounds by the table, equal players in random order (mubc 3.1)."""
    order = list(players)
    rng.shuffle(order)
    if round_number == 1:
        return order
    lines, placement, _ = stage_lines(state, stage)

    def key(player: str) -> tuple:
        if player not in lines:  # a late entrant starts at the bottom with no points
            return (0.0, -10**9)
        return ranking_key(lines[player], stage.ranking, placement.get(player, 0.0))

    return sorted(order, key=key, reverse=True)


def _plan_bracket(state: TournamentState, seed: int, rng, at_ns: int) -> ev.StageDrawn:
    fmt = state.fmt
    players = list(field(state).accepted)
    stages = [s for s in fmt.stages if not (s.only_when_over and len(players) <= s.only_when_over)]
    skipped = tuple(s.id for s in fmt.stages if s not in stages)
    team_of = {p: state.entrants[p].team for p in players}
    first = stages[0]
    specs: list[ev.BattleSpec] = []
    rule = first.rule or fmt.regulation
    if first.kind == "written":
        current_refs = None  # the next stage takes ranks from the written round
        current_count = 0
        start = 1
    elif first.fills:
        # eurocup 3.2-3.3: a qualifying stage fills the next stage's places; byes fill the rest.
        winners = len(first.advance[0].places) if first.advance and first.advance[0].places else 1
        excess = len(players) - first.fills
        battles = math.ceil(excess / (first.battle_size - winners))
        if winners * battles > first.fills:
            raise DrawError(f"{len(players)} entrants: one qualifying stage of battles of {first.smallest_battle}-"
                            f"{first.battle_size} can fill {first.fills} places from at most "
                            f"{first.fills + first.fills // winners * (first.battle_size - winners)} ({rule})",
                            code="draw.qualifying_fill",
                            params={"players": len(players), "low": first.smallest_battle, "high": first.battle_size,
                                    "fills": first.fills,
                                    "most": first.fills + first.fills // winners * (first.battle_size - winners),
                                    "rule": rule})
        playing_count = excess + winners * battles
        if playing_count < first.smallest_battle * battles:
            raise DrawError(f"qualifying: {playing_count} players cannot fill {battles} battles ({rule})",
                            code="draw.qualifying_few",
                            params={"players": playing_count, "battles": battles, "rule": rule})
        order = list(players)
        rng.shuffle(order)
        seeded = set(state.seeds)
        order.sort(key=lambda p: p in seeded)  # seeded players, if the director named any, get the byes first
        chosen, per_team = [], Counter()
        for player in order:  # who plays the qualifying: at most one per battle from a team (eurocup 3.3)
            team = team_of.get(player)
            if len(chosen) < playing_count and (not first.separate_teams or not team or per_team[team] < battles):
                chosen.append(player)
                per_team[team] += 1
        if len(chosen) < playing_count:
            raise DrawError(f"qualifying needs {playing_count} players with at most {battles} of a team, but the "
                            f"big teams leave only {len(chosen)} ({rule})",
                            code="draw.qualifying_teams",
                            params={"players": playing_count, "battles": battles, "left": len(chosen), "rule": rule})
        byes = [p for p in order if p not in set(chosen)]
        sizes = battle_sizes(playing_count, first.battle_size, first.smallest_battle, battles, rule)
        seated = partition(chosen, sizes, rng, team_of=team_of, separate_teams=first.separate_teams, rule=rule)
        specs += [_spec(first, i, seats, len(seated)) for i, seats in enumerate(seated)]
        current_refs = byes + _refs_from(first, len(seated), stages[1].id)
        rng.shuffle(current_refs)  # 3.3: where each qualifier and each bye sits in the next stage is drawn
        nxt = stages[1]
        sizes = battle_sizes(len(current_refs), nxt.battle_size, nxt.smallest_battle, nxt.battles, nxt.rule)
        seated = swiss_pairing(current_refs, sizes)
        specs += [_spec(nxt, i, seats, len(seated)) for i, seats in enumerate(seated)]
        current_count = len(seated)
        start = 2
    elif first.byes and len(players) < first.battles * first.battle_size:
        opening, seated_specs, current_count = _plan_byes(state, stages, players, rng, team_of)
        specs += seated_specs
        skipped += tuple(s.id for s in stages[:opening])
        start = opening + 2
    else:
        sizes = battle_sizes(len(players), first.battle_size, first.smallest_battle, first.battles, rule)
        seated = partition(players, sizes, rng, team_of=team_of, seeds=state.seeds,
                           separate_teams=first.separate_teams, one_seed_per_battle=first.one_seed_per_battle,
                           rule=rule)
        specs += [_spec(first, i, seats, len(seated)) for i, seats in enumerate(seated)]
        current_count = len(seated)
        start = 1
    for position in range(start, len(stages)):
        previous, stage = stages[position - 1], stages[position]
        refs = _refs_from(previous, current_count, stage.id, available=len(players))
        sizes = battle_sizes(len(refs), stage.battle_size, stage.smallest_battle, stage.battles,
                             stage.rule or fmt.regulation)
        if previous.kind == "written" and stage.pots:
            seated = _pots(refs, sizes, rng)
        elif previous.kind == "written":
            rng.shuffle(refs)
            seated = swiss_pairing(refs, sizes)
        else:
            seated = deal(refs, sizes, serpentine=previous.feed == "deal")
        specs += [_spec(stage, i, seats, len(seated)) for i, seats in enumerate(seated)]
        current_count = len(seated)
    return ev.StageDrawn(at_ns, first.id, seed, tuple(specs), 1, skipped, bracket=True)


def _plan_byes(state: TournamentState, stages: list[Stage], players: list[str], rng,
               team_of: dict) -> tuple[int, list[ev.BattleSpec], int]:
    """A bracket for fewer entrants than its first round seats (eurocup 3.2: under 81 for the 1/27's 81).

    The tournament opens at the latest round whose seats still hold every entrant; there, just enough battles are
    played that their winners and the byes fill the next round exactly, so every later battle is full. Byes go
    to the seeded players first (best first), then by draw; where each winner and each bye sits in the next round
    is drawn (eurocup 3.3). A battle of three sends one player on, so the players lose two per battle: an even
    field needs one battle of two, and it is played in the opening round only, which is the preliminary stage of
    eurocup 2.1 (``preliminary_min_battle_size``); a format without that allowance gets a :class:`DrawError`.

    Returns the opening round's position in ``stages``, the specs of it and of the round the byes join, and how
    many battles that round has.
    """
    first = stages[0]
    count = len(players)
    seats = [stage.battles * stage.battle_size for stage in stages]
    fitting = [i for i, room in enumerate(seats) if room >= count]
    opening_at = fitting[-1]
    opening = stages[opening_at]
    rule = opening.rule or state.fmt.regulation
    smallest = first.preliminary_min_battle_size or opening.smallest_battle
    order = list(players)
    rng.shuffle(order)
    if opening_at == len(stages) - 1:  # so few that the final is the whole tournament
        if count < smallest:
            raise DrawError(f"{count} entrants cannot play a battle of at least {smallest} ({first.rule})",
                            code="draw.too_few_for_battle",
                            params={"players": count, "size": smallest, "rule": first.rule})
        seated = partition(order, [count], rng, team_of=team_of, rule=rule)
        return opening_at, [_spec(opening, 0, seated[0], 1)], 0
    joined = stages[opening_at + 1]
    going_on = next((len(r.places) for r in opening.advance if r.to == joined.id and r.places), 0)
    if not going_on or going_on >= opening.battle_size:
        raise DrawError(f"stage {opening.id}: byes need battles that send a fixed number of places on ({rule})",
                        code="draw.byes_fixed", params={"stage": opening.id, "rule": rule})
    room = seats[opening_at + 1]
    battles = math.ceil((count - room) / (opening.battle_size - going_on))
    playing = count - room + battles * going_on
    if playing < battles * smallest:
        raise DrawError(f"{count} entrants: byes into {joined.id} leave {playing} players for {battles} battles of "
                        f"{opening.id}, so one battle has fewer than {smallest} players; battles of "
                        f"{opening.smallest_battle} only ({first.rule})",
                        code="draw.byes_small",
                        params={"players": count, "stage": opening.id, "joined": joined.id, "playing": playing,
                                "battles": battles, "size": smallest, "low": opening.smallest_battle,
                                "rule": first.rule})
    sizes = battle_sizes(playing, opening.battle_size, smallest, battles, rule)
    seeded = [p for p in state.seeds if p in set(players)]
    bye_count = count - playing
    byes = (seeded + [p for p in order if p not in set(seeded)])[:bye_count]
    chosen = [p for p in order if p not in set(byes)]
    seated = partition(chosen, sizes, rng, team_of=team_of, separate_teams=opening.separate_teams, rule=rule)
    specs = [_spec(opening, i, seats_, len(seated)) for i, seats_ in enumerate(seated)]
    refs = byes + _refs_from(opening, len(seated), joined.id)
    rng.shuffle(refs)  # eurocup 3.3: where each winner and each bye sits in the next round is drawn
    sizes = battle_sizes(len(refs), joined.battle_size, joined.smallest_battle, joined.battles,
                         joined.rule or state.fmt.regulation)
    following = swiss_pairing(refs, sizes)
    specs += [_spec(joined, i, seats_, len(following)) for i, seats_ in enumerate(following)]
    return opening_at, specs, len(following)


def _pots(refs: list[str], sizes: list[int], rng) -> list[list[str]]:
    """One reference from each pot of consecutive ranks per battle, pots shuffled (a seeded bracket)."""
    count = len(sizes)
    battles: list[list[str]] = [[] for _ in sizes]
    for start in range(0, len(refs), count):
        pot = refs[start:start + count]
        targets = [i for i in range(count) if len(battles[i]) < sizes[i]]
        rng.shuffle(targets)
        for ref, target in zip(pot, targets):
            battles[target].append(ref)
    return battles
