"""Queries over a tournament state: who is in, the draws, who goes on and by which rule, ties, standings.

All pure: the same state gives the same answers, and draws take their seed as an argument.

Seats of a drawn battle hold a player id or a reference filled in by results:

- ``@1-27:4:1``: place 1 of battle 4 (0-based index) of stage 1-27;
- ``@qf:best:2:1``: the best of the 2nd places across stage qf;
- ``@written:top:17``: 17th of stage written's ranking.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter, defaultdict
from typing import Iterable, Sequence

from appliance.rules.tournament import events as ev
from appliance.rules.tournament.draw import battle_sizes, deal, partition, swiss_pairing
from appliance.rules.tournament.errors import DrawError, StageError
from appliance.rules.tournament.formats import AdvanceRule, Format, Stage
from appliance.rules.tournament.prng import Rng
from appliance.rules.tournament.results import (BattleResult, PlayerResult, placement_points_for, ranking_key,
                                                score_written)
from appliance.rules.tournament.state import TournamentState

GROUP_LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


# --- registration ----------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Field:
    """Who plays: accepted entrants (in order), the waiting list, refusals with reasons, late joiners per stage."""

    accepted: tuple[str, ...]
    waiting: tuple[str, ...]
    refused: tuple[tuple[str, str], ...]
    joining: dict


def field(state: TournamentState) -> Field:
    """Fill the places by the format's registration rules (northern-owl 1.1 arrival order; irkutsk 1.3-1.7).

    Withdrawn players free their place: the first on the waiting list moves up (northern-owl 1.1).
    """
    if "field" in state.cache:
        return state.cache["field"]
    registration = state.fmt.registration
    active = [e for e in state.entrants.values() if not e.withdrawn]
    joining: dict[str, list[str]] = defaultdict(list)
    main = []
    for entrant in sorted(active, key=lambda e: e.order):
        category = registration.category(entrant.category)
        if category.joins_at:
            joining[category.joins_at].append(entrant.player_id)
        else:
            main.append((entrant, category))
    if registration.order == "priority":
        def priority(item):
            entrant, category = item
            rank = entrant.team_rank if entrant.team_rank > 0 else math.inf
            return (category.priority, rank if category.by_team_rank else 0, entrant.order)
        main.sort(key=priority)
    capacity = registration.capacity or len(main)
    accepted = tuple(e.player_id for e, _ in main[:capacity])
    rest = main[capacity:]
    if registration.waiting_list:
        waiting, refused = tuple(e.player_id for e, _ in rest), ()
    else:
        waiting = ()
        refused = tuple((e.player_id, f"over the {capacity} places, filled by priority ({c.rule or registration.rule})")
                        for e, c in rest)
    result = Field(accepted, waiting, refused, {k: tuple(v) for k, v in joining.items()})
    state.cache["field"] = result
    return result


def is_skipped(state: TournamentState, stage_id: str) -> bool:
    """A stage with ``only_when_over`` is not played when the entrants fit the next stage (eurocup 3.2)."""
    if state.bracket_drawn or state.rounds_drawn:
        return stage_id in state.skipped
    stage = state.fmt.stage(stage_id)
    return bool(stage.only_when_over) and len(field(state).accepted) <= stage.only_when_over


def playing_stages(state: TournamentState) -> list[Stage]:
    return [stage for stage in state.fmt.stages if not is_skipped(state, stage.id)]


# --- seats and results -----------------------------------------------------------------------------------------

def resolve(state: TournamentState, seat: str) -> str | None:
    """The player behind a seat: an id, ``""`` for an empty seat, ``None`` while results are missing."""
    if not seat.startswith("@"):
        return seat if state.active(seat) else ""
    parts = seat[1:].split(":")
    stage_id = parts[0]
    if is_skipped(state, stage_id):
        return ""
    result = outcome(state, stage_id)
    if not result.complete or result.open_ties:
        # A battle's own seat may resolve before the whole stage is complete.
        if len(parts) == 3 and parts[1].isdigit():
            battle = _battle_at(state, stage_id, int(parts[1]))
            if battle is not None and battle.id in state.results:
                places, open_ties = effective_places(state, battle.id)
                if not open_ties:
                    return _player_at_place(state, battle.id, places, int(parts[2]))
        return None
    return result.seats.get(seat[1:], "")


def _battle_at(state: TournamentState, stage_id: str, index: int) -> ev.BattleSpec | None:
    for battle in state.stage_battles(stage_id):
        if battle.index == index:
            return battle
    return None


def _player_at_place(state: TournamentState, battle_id: str, places: dict, place: int) -> str | None:
    """The one player holding ``place`` in a battle; ``""`` if nobody does, ``None`` if it is shared (then a
    shoot-out must split it: a seat is never filled by picking one of the tied players)."""
    result = state.results[battle_id]
    holders = [line.player for line in result.lines
               if places[line.player] == place and not line.absent and state.active(line.player)]
    if len(holders) > 1:
        return None
    return holders[0] if holders else ""


def stage_cuts(fmt: Format, stage: Stage) -> tuple | None:
    """Places after which a battle of ``stage`` must rank strictly (cut ``c``: places ``c`` and ``c + 1`` are held
    by different players); ``None`` for the last stage (the battle profile's prize places).

    A cut follows every boundary of who goes on (``places = [1, 2]``: after 2nd), and every place that must be
    held by one player because a later seat or draw names it: a bracket seat ``@stage:i:place`` (youth-cup 2.1,
    2.3: the two best of a battle take different seats of the next round), a draw per place (irkutsk 2.3: a battle
    of the round-1 winners and one of the runners-up), a record naming the place (irkutsk 2.3) and a best-of-place
    rule (irkutsk 2.4). A shared place such a cut falls inside is a tie for a shoot-out (:func:`outcome`).
    Stages ranked only by table (mubc 3.3) get ``()``: shared places stand.
    """
    if stage is fmt.stages[-1] or stage.id == fmt.stages[-1].id:
        return None
    cuts: set[int] = set()

    def single(place: int) -> None:  # ``place`` is held by one player: strict before it and after it
        cuts.update({place - 1, place})

    for rule in stage.advance:
        if rule.places:
            cuts.add(max(rule.places))
            target = fmt.stage(rule.to)
            if target.draw == "group-place" or (fmt.bracket and target.draw == "bracket"):
                for place in rule.places:
                    single(place)
        elif rule.best:
            single(rule.place)
    for later in fmt.stages[fmt.index(stage.id):]:
        for rule in later.advance:
            for record in rule.records:
                for stage_id, place in record:
                    if stage_id == stage.id:
                        single(place)
    cuts.discard(0)
    return tuple(sorted(cuts))


def battle_players(state: TournamentState, battle_id: str) -> tuple[str, ...] | None:
    """Who plays this battle (withdrawn players and empty seats dropped); ``None`` while seats are unresolved."""
    key = ("players", battle_id)
    if key in state.cache:
        return state.cache[key]
    if battle_id in state.results:
        players = tuple(line.player for line in state.results[battle_id].lines)
    else:
        battle = state.battles[battle_id]
        resolved = [resolve(state, seat) for seat in battle.seats]
        players = None if any(p is None for p in resolved) else tuple(p for p in resolved if p)
    state.cache[key] = players
    return players


def effective_places(state: TournamentState, battle_id: str) -> tuple[dict, list]:
    """Places in a battle among the players who count for going on, and the groups still sharing a place.

    A shared place is split by a recorded tie-break (``<battle>:places:<recorded place>``). Players absent from
    the battle or withdrawn since do not block a place: the others move up (a no-show winner is replaced by the
    runner-up), and they are placed after everyone who counts. Returns ``(places, shared)`` with ``shared`` as
    ``(place, players, recorded place)``.
    """
    result: BattleResult = state.results[battle_id]
    counted = [line for line in result.lines if not line.absent and state.active(line.player)]
    groups: dict[int, list[str]] = defaultdict(list)
    for line in counted:
        groups[line.place].append(line.player)
    key: dict[str, tuple[int, int]] = {}
    for place, players in groups.items():
        order = [p for p in state.ties.get(f"{battle_id}:places:{place}", ()) if p in players]
        if len(players) > 1 and sorted(order) == sorted(players):
            key.update({player: (place, offset) for offset, player in enumerate(order)})
        else:
            key.update({player: (place, 0) for player in players})
    places = {player: 1 + sum(other < mine for other in key.values()) for player, mine in key.items()}
    for line in result.lines:
        places.setdefault(line.player, len(counted) + 1)
    shared = []
    for place, players in sorted(groups.items()):
        still = [p for p in players if key[p][1] == 0] if len(players) > 1 else []
        if len(still) > 1 and len({key[p] for p in still}) == 1:
            shared.append((places[still[0]], tuple(sorted(still)), place))
    return places, shared


# --- outcomes --------------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Advance:
    player: str
    from_stage: str
    to_stage: str
    rule: str  # the regulation's words, with the section
    how: str  # which selector matched: "place 1 in battle 1-27/04", "best runner-up", ...


@dataclasses.dataclass(frozen=True)
class Tie:
    """A tie the ranking keys cannot break at a cut: ``slots`` of ``players`` go on; a shoot-out decides."""

    id: str
    stage: str
    players: tuple[str, ...]
    slots: int
    reason: str
    shootout: str
    rule: str


@dataclasses.dataclass(frozen=True)
class StageOutcome:
    stage: str
    complete: bool
    lines: dict  # player -> PlayerResult (a Swiss stage: the sums; placement points in .placement)
    placement: dict  # player -> placement points earned in the stage
    advancing: tuple[Advance, ...] = ()
    open_ties: tuple[Tie, ...] = ()
    seats: dict = dataclasses.field(default_factory=dict)  # reference (without '@') -> player
    ranking: tuple[str, ...] = ()  # participants best first by the stage's ranking (ties in any order)


def stage_participants(state: TournamentState, stage_id: str) -> tuple[str, ...] | None:
    """The players of a stage, or ``None`` while an earlier stage is unfinished or has an open tie."""
    key = ("participants", stage_id)
    if key in state.cache:
        return state.cache[key]
    fmt = state.fmt
    stage = fmt.stage(stage_id)
    stages = playing_stages(state)
    joiners = field(state).joining.get(stage_id, ())
    if stage.kind == "swiss" or (stages and stages[0].id == stage_id):
        players: tuple[str, ...] | None = field(state).accepted + tuple(joiners)
    else:
        collected: list[str] = []
        players = None
        known = True
        for earlier in fmt.stages[: fmt.index(stage_id)]:
            if not any(rule.to == stage_id for rule in earlier.advance):
                continue
            if is_skipped(state, earlier.id):
                continue
            result = outcome(state, earlier.id)
            if not result.complete or result.open_ties:
                known = False
                break
            collected += [a.player for a in result.advancing if a.to_stage == stage_id]
        if known:
            players = tuple(dict.fromkeys(collected + list(joiners)))
        if known and state.fmt.bracket and stage.draw == "bracket":
            resolved = [battle_players(state, b.id) for b in state.stage_battles(stage_id)]
            players = tuple(p for battle in resolved if battle for p in battle)
    if players is not None:
        players = tuple(p for p in players if state.active(p))
    state.cache[key] = players
    return players


def _stage_lines(state: TournamentState, stage: Stage) -> tuple[dict, dict, bool]:
    """Per-player lines of a stage (summed over Swiss rounds), placement points, and whether it is complete."""
    lines: dict[str, PlayerResult] = {}
    placement: dict[str, float] = defaultdict(float)
    if stage.kind == "written":
        participants = stage_participants(state, stage.id) or ()
        sheets = state.sheets.get(stage.id, {})
        for player in participants:
            if player in sheets:
                lines[player] = score_written(player, sheets[player], stage.theme_values, stage.themes)
        complete = stage.id in state.rounds_drawn and (
            stage.id in state.closed or bool(participants) and all(p in sheets for p in participants))
        return lines, dict(placement), complete
    battles = state.stage_battles(stage.id)
    rounds_needed = stage.rounds if stage.kind == "swiss" else 1
    complete = bool(battles) and state.rounds_drawn.get(stage.id, 0) >= rounds_needed and all(
        b.id in state.results for b in battles)
    for battle in sorted(battles, key=lambda b: (b.round, b.index)):
        result = state.results.get(battle.id)
        if result is None:
            continue
        points = placement_points_for([line.place for line in result.lines], stage.placement_points,
                                      stage.placement_multiplier) if stage.placement_points else [0.0] * len(result.lines)
        for line, earned in zip(result.lines, points):
            placement[line.player] += earned
            if stage.kind == "swiss" and line.player in lines:
                lines[line.player] = _summed(lines[line.player], line)
            else:
                lines[line.player] = line
    return lines, dict(placement), complete


def _summed(a: PlayerResult, b: PlayerResult) -> PlayerResult:
    taken = Counter(dict(a.taken_by_value)) + Counter(dict(b.taken_by_value))
    return PlayerResult(a.player, score=a.score + b.score, place=0, right_points=a.right_points + b.right_points,
                        right_answers=a.right_answers + b.right_answers,
                        wrong_answers=a.wrong_answers + b.wrong_answers,
                        taken_by_value=tuple(sorted(taken.items(), reverse=True)), absent=a.absent and b.absent)


def _cut(ranked: list[tuple[str, tuple]], slots: int, tie_id: str, state: TournamentState, stage: Stage,
         reason: str, rule: str) -> tuple[list[str], Tie | None]:
    """The first ``slots`` of a ranked list; if equal keys straddle the cut, a recorded tie-break or a Tie."""
    ranked = sorted(ranked, key=lambda item: item[1], reverse=True)
    if slots >= len(ranked):
        return [p for p, _ in ranked], None
    boundary = ranked[slots - 1][1] if slots else None
    if slots == 0 or ranked[slots][1] != boundary:
        return [p for p, _ in ranked[:slots]], None
    above = [p for p, key in ranked if key > boundary]
    group = tuple(sorted(p for p, key in ranked if key == boundary))
    order = state.ties.get(tie_id)
    if order and sorted(order) == list(group):
        return above + list(order[: slots - len(above)]), None
    return above, Tie(tie_id, stage.id, group, slots - len(above), reason, stage.shootout, rule)


def outcome(state: TournamentState, stage_id: str) -> StageOutcome:
    """Who goes on from a stage and by which rule, the open ties, and the stage's ranking."""
    key = ("outcome", stage_id)
    if key in state.cache:
        return state.cache[key]
    result = _outcome(state, state.fmt.stage(stage_id))
    state.cache[key] = result
    return result


def _outcome(state: TournamentState, stage: Stage) -> StageOutcome:
    fmt = state.fmt
    if is_skipped(state, stage.id):
        players = stage_participants(state, stage.id) or ()
        advancing = tuple(Advance(p, stage.id, rule.to, f"{stage.rule}: not played, the entrants fit the next stage",
                                  "bye") for rule in stage.advance[:1] for p in players)
        return StageOutcome(stage.id, True, {}, {}, advancing)
    lines, placement, complete = _stage_lines(state, stage)
    present = {p: line for p, line in lines.items() if not line.absent and state.active(p)}

    def key_of(player: str) -> tuple:
        return ranking_key(lines[player], stage.ranking, placement.get(player, 0.0))

    ranking = tuple(sorted(lines, key=lambda p: (p in present, key_of(p)), reverse=True))
    if not complete:
        return StageOutcome(stage.id, False, lines, placement, ranking=ranking)
    advancing: list[Advance] = []
    ties: list[Tie] = []
    seats: dict[str, str] = {}
    battles = sorted(state.stage_battles(stage.id), key=lambda b: (b.round, b.index))
    cuts = set(stage_cuts(fmt, stage) or ())
    seat_places = _seat_places(state, stage.id)
    places_of: dict[str, int] = {}
    battle_of: dict[str, ev.BattleSpec] = {}
    for battle in battles:
        places, shared = effective_places(state, battle.id)
        for player, place in places.items():
            places_of[player] = place
            battle_of[player] = battle
        named = seat_places.get(battle.index, set())
        for place, group, recorded in shared:
            last = place + len(group) - 1
            inside = [cut for cut in cuts if place <= cut < last]
            seated = sorted(p for p in named if place <= p <= last)
            if not inside and not seated:
                continue  # e.g. two players sharing the last places, none going on (the places stand)
            if inside:
                slots = max(inside) - place + 1
                reason = (f"shared place {place} in battle {battle.id}: places {place}-{last} decide who goes on, "
                          f"or where (a cut after place {', '.join(map(str, sorted(inside)))})")
            else:  # a seat names a shared place (a format whose cuts miss it): never pick one of the tied
                slots = seated[-1] - place + 1
                reason = (f"shared place {place} in battle {battle.id}: seats of the next stage name places "
                          f"{', '.join(map(str, seated))}, each needs one player")
            rule_text = next((r.rule for r in stage.advance if r.places or r.records), stage.rule or fmt.regulation)
            tie = Tie(f"{battle.id}:places:{recorded}", stage.id, group, slots, reason, stage.shootout, rule_text)
            if tie not in ties:
                ties.append(tie)
        for index in sorted(set(range(1, 5)) | named):
            player = _player_at_place(state, battle.id, places, index)
            if player is not None:
                seats[f"{stage.id}:{battle.index}:{index}"] = player
    taken: set[str] = set()
    for rule in stage.advance:
        chosen: list[tuple[str, str]] = []
        if rule.places:
            for battle in battles:
                for player, line in ((p, state.results[battle.id].line(p)) for p in battle_players(state, battle.id)):
                    if player in present and places_of.get(player) in rule.places and battle_of[player] is battle:
                        chosen.append((player, f"place {places_of[player]} in battle {battle.id}"))
        elif rule.best:
            candidates = [(p, key_of(p)) for p in present if places_of.get(p) == rule.place and p not in taken]
            best, tie = _cut(candidates, rule.best, f"{stage.id}:best:{rule.place}", state, stage,
                             f"best {rule.best} of place {rule.place} in {stage.id}", rule.rule)
            if tie:
                ties.append(tie)
            for rank, player in enumerate(best, 1):
                seats[f"{stage.id}:best:{rule.place}:{rank}"] = player
                chosen.append((player, f"best of place {rule.place} (#{rank}) in {stage.id}"))
        elif rule.top:
            candidates = [(p, key_of(p)) for p in present if p not in taken]
            top, tie = _cut(candidates, rule.top, f"{stage.id}:top", state, stage,
                            f"the top {rule.top} of {stage.id}", rule.rule)
            if tie:
                ties.append(tie)
            for rank, player in enumerate(top, 1):
                seats[f"{stage.id}:top:{rank}"] = player
                chosen.append((player, f"#{rank} of {stage.id}"))
        else:
            for player in present:
                for record in rule.records:
                    if all(_place_in(state, player, s) == place for s, place in record):
                        chosen.append((player, ", ".join(f"{s} place {place}" for s, place in record)))
                        break
        for player, how in chosen:
            if player not in taken:
                taken.add(player)
                advancing.append(Advance(player, stage.id, rule.to, rule.rule, how))
    return StageOutcome(stage.id, True, lines, placement, tuple(advancing), tuple(ties), seats, ranking)


def _seat_places(state: TournamentState, stage_id: str) -> dict[int, set[int]]:
    """Battle index -> the places of that battle named by seats of drawn battles (``@stage:index:place``)."""
    key = ("seat places", stage_id)
    if key not in state.cache:
        named: dict[int, set[int]] = defaultdict(set)
        for battle in state.battles.values():
            for seat in battle.seats:
                parts = seat[1:].split(":")
                if seat.startswith("@") and parts[0] == stage_id and len(parts) == 3 and parts[1].isdigit():
                    named[int(parts[1])].add(int(parts[2]))
        state.cache[key] = dict(named)
    return state.cache[key]


def _place_in(state: TournamentState, player: str, stage_id: str) -> int | None:
    for battle in state.stage_battles(stage_id):
        if battle.id in state.results and player in battle_players(state, battle.id):
            places, _ = effective_places(state, battle.id)
            return places[player]
    return None


def open_ties(state: TournamentState) -> list[Tie]:
    """Every tie that decides who goes on and still needs a shoot-out (or lots, where the format says so)."""
    ties = []
    for stage in playing_stages(state):
        if stage_participants(state, stage.id) is None:
            break  # later stages wait for this one
        ties += outcome(state, stage.id).open_ties
    return ties


# --- draws -----------------------------------------------------------------------------------------------------

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
            refs += [f"@{stage.id}:{i}:{place}" for place in rule.places for i in range(battles)]
        elif rule.best:
            refs += [f"@{stage.id}:best:{rule.place}:{rank}" for rank in range(1, rule.best + 1)]
        elif rule.top:
            count = rule.top if available is None else min(rule.top, available)
            refs += [f"@{stage.id}:top:{rank}" for rank in range(1, count + 1)]
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
            battle = _battle_of(state, player, source.id)
            if battle is None:
                raise DrawError(f"{player!r} reached {stage_id} without a battle in {source.id}; draw {stage_id} "
                                "by hand",
                                code="draw.no_source_battle",
                                params={"player": player, "stage": stage_id, "source": source.id})
            place = _place_in(state, player, source.id) if stage.draw == "group-place" else 0
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


def _battle_of(state: TournamentState, player: str, stage_id: str) -> ev.BattleSpec | None:
    for battle in state.stage_battles(stage_id):
        players = battle_players(state, battle.id)
        if players and player in players:
            return battle
    return None


def _swiss_order(state: TournamentState, stage: Stage, players: list[str], rng, round_number: int) -> list[str]:
    """Round 1 by draw; later rounds by the table, equal players in random order (mubc 3.1)."""
    order = list(players)
    rng.shuffle(order)
    if round_number == 1:
        return order
    lines, placement, _ = _stage_lines(state, stage)

    def key(player: str) -> tuple:
        if player not in lines:  # a late entrant starts at the bottom with no points
            return (0.0, -10**9)
        return ranking_key(lines[player], stage.ranking, placement.get(player, 0.0))

    return sorted(order, key=key, reverse=True)


def swiss_table(state: TournamentState, stage_id: str) -> list[tuple[str, float, int]]:
    """The Swiss table: (player, placement points, game points), best first (mubc 3.6)."""
    stage = state.fmt.stage(stage_id)
    lines, placement, _ = _stage_lines(state, stage)
    rows = [(p, placement.get(p, 0.0), lines[p].score) for p in lines]
    return sorted(rows, key=lambda row: (row[1], row[2]), reverse=True)


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


# --- what next, and standings ----------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Step:
    """What the desk must do next: ``draw``, ``sheets``, ``play`` (battle ids), ``tie`` or ``done``."""

    kind: str
    stage: str = ""
    battles: tuple[str, ...] = ()
    tie: Tie | None = None


def next_step(state: TournamentState) -> Step:
    """The next thing to do; battles that can be played now are all listed (they run in parallel)."""
    for stage in playing_stages(state):
        participants = stage_participants(state, stage.id)
        if participants is None:
            ties = open_ties(state)
            return Step("tie", stage.id, tie=ties[0]) if ties else Step("wait", stage.id)
        drawn = state.rounds_drawn.get(stage.id, 0)
        if not drawn:
            return Step("draw", stage.id)
        if stage.kind == "written":
            result = outcome(state, stage.id)
            if not result.complete:
                return Step("sheets", stage.id)
        else:
            ready = [b.id for b in sorted(state.stage_battles(stage.id), key=lambda b: (b.round, b.index))
                     if b.id not in state.results and battle_players(state, b.id) is not None]
            if ready:
                return Step("play", stage.id, tuple(ready))
            if stage.kind == "swiss" and drawn < stage.rounds:
                return Step("draw", stage.id)
        result = outcome(state, stage.id)
        if result.open_ties:
            return Step("tie", stage.id, tie=result.open_ties[0])
        if not result.complete:
            return Step("wait", stage.id)
    return Step("done")


@dataclasses.dataclass(frozen=True)
class Standing:
    place: int
    place_to: int  # equal to place unless shared ("5-8")
    player: str
    stage: str  # the last stage played
    battle_place: int
    placement_points: float
    score: int


def standings(state: TournamentState) -> list[Standing]:
    """Final (or current) standings: by stage reached and place there, or by points (mubc 3.6)."""
    fmt = state.fmt
    stages = playing_stages(state)
    if fmt.standings == "points":
        totals: dict[str, list] = {}
        for stage in stages:
            lines, placement, _ = _stage_lines(state, stage)
            for player, line in lines.items():
                row = totals.setdefault(player, [0.0, 0, stage.id, 0])
                row[0] += placement.get(player, 0.0)
                row[1] += line.score
                row[2] = stage.id
                row[3] = line.place
        keyed = sorted(totals.items(), key=lambda item: (item[1][0], item[1][1]), reverse=True)
        return _shared(keyed, key=lambda row: (row[0], row[1]),
                       make=lambda p, row: (p, row[2], row[3], row[0], row[1]))
    reached: dict[str, tuple] = {}
    for position, stage in enumerate(stages):
        result = outcome(state, stage.id)
        for player, line in result.lines.items():
            battle = _battle_of(state, player, stage.id) if stage.kind != "written" else None
            place = effective_places(state, battle.id)[0][player] if battle and battle.id in state.results else 0
            if line.absent:
                place = 99
            rank_key = ranking_key(line, stage.ranking, result.placement.get(player, 0.0))
            if stage.kind == "written":
                group_key = (position, 0, rank_key)
            else:
                group_key = (position, -place, ())
            reached[player] = (group_key, rank_key, stage.id, place, line.score)
    keyed = sorted(reached.items(), key=lambda item: (item[1][0], item[1][1]), reverse=True)
    return _shared(keyed, key=lambda row: row[0], make=lambda p, row: (p, row[2], row[3], 0.0, row[4]))


def _shared(keyed: list, key, make) -> list[Standing]:
    rows: list[Standing] = []
    index = 0
    while index < len(keyed):
        end = index
        while end + 1 < len(keyed) and key(keyed[end + 1][1]) == key(keyed[index][1]):
            end += 1
        for player, row in keyed[index:end + 1]:
            p, stage, battle_place, points, score = make(player, row)
            rows.append(Standing(index + 1, end + 1, p, stage, battle_place, points, score))
        index = end + 1
    return rows


def advancement_log(state: TournamentState) -> Iterable[Advance]:
    for stage in playing_stages(state):
        result = outcome(state, stage.id)
        if result.complete and not result.open_ties:
            yield from result.advancing
