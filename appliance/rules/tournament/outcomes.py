"""The queries over a tournament state: who plays each battle and stage, who goes on and by which rule, ties.

Seats, participants and outcomes depend on each other (a seat names a place of an earlier stage's outcome; a
stage's participants are the earlier outcomes' advancers), so they live together here, imported one way only:
records (:mod:`.state`) <- queries (this module) <- transitions (:mod:`.transitions`), draws, progress.
All pure: the same state gives the same answers; results are memoised in the state's ``cache``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict

from appliance.rules.tournament import events as ev
from appliance.rules.tournament.entry import field, is_skipped, playing_stages
from appliance.rules.tournament.formats import Stage
from appliance.rules.tournament.results import PlayerResult, placement_points_for, ranking_key, score_written
from appliance.rules.tournament.seats import (SeatRef, TieId, battle_at, effective_places, player_at_place,
                                              seat_places, seat_text, stage_cuts)
from appliance.rules.tournament.state import TournamentState


def resolve(state: TournamentState, seat: str) -> str | None:
    """The player behind a seat: an id, ``""`` for an empty seat, ``None`` while results are missing."""
    ref = SeatRef.parse(seat)
    if ref is None:
        return seat if state.active(seat) else ""
    if is_skipped(state, ref.stage):
        return ""
    result = outcome(state, ref.stage)
    if not result.complete or result.open_ties:
        # A battle's own seat may resolve before the whole stage is complete.
        if ref.kind == "place":
            battle = battle_at(state, ref.stage, ref.index)
            if battle is not None and battle.id in state.results:
                places, open_ties = effective_places(state, battle.id)
                if not open_ties:
                    return player_at_place(state, battle.id, places, ref.place)
        return None
    return result.seats.get(seat, "")


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


@dataclasses.dataclass(frozen=True)
class Advance:
    player: str
    from_stage: str
    to_stage: str
    rule: str  # the regulation's words, with the section
    how: str  # which selector matched: "place 1 in battle 1-27/04", "best runner-up", ...
    # The same as a code and its figures, for the pages to word in their language (appliance/service/bracket_words.py):
    # "bye" {}, "place" {place, battle}, "best" {place, rank}, "top" {rank}, "records" {records: ((stage, place),...)}
    how_code: str = ""
    how_params: dict = dataclasses.field(default_factory=dict, compare=False)


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
    # ``reason`` as a code and its figures: "shared_cut" {stage, place, last, battle, cuts}, "shared_seats" {stage,
    # place, battle, seats}, "best" {best, place, stage}, "top" {top, stage}
    reason_code: str = dataclasses.field(default="", compare=False)
    reason_params: dict = dataclasses.field(default_factory=dict, compare=False)


@dataclasses.dataclass(frozen=True)
class StageOutcome:
    stage: str
    complete: bool
    lines: dict  # player -> PlayerResult (a Swiss stage: the sums; placement points in .placement)
    placement: dict  # player -> placement points earned in the stage
    advancing: tuple[Advance, ...] = ()
    open_ties: tuple[Tie, ...] = ()
    seats: dict = dataclasses.field(default_factory=dict)  # a seat's text (str(SeatRef)) -> player
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


def stage_lines(state: TournamentState, stage: Stage) -> tuple[dict, dict, bool]:
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
         reason: str, rule: str, reason_code: str = "", reason_params: dict | None = None
         ) -> tuple[list[str], Tie | None]:
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
    return above, Tie(tie_id, stage.id, group, slots - len(above), reason, stage.shootout, rule, reason_code,
                      dict(reason_params or {}))


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
                                  "bye", "bye") for rule in stage.advance[:1] for p in players)
        return StageOutcome(stage.id, True, {}, {}, advancing)
    lines, placement, complete = stage_lines(state, stage)
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
    named_places = seat_places(state, stage.id)
    places_of: dict[str, int] = {}
    battle_for: dict[str, ev.BattleSpec] = {}
    for battle in battles:
        places, shared = effective_places(state, battle.id)
        for player, place in places.items():
            places_of[player] = place
            battle_for[player] = battle
        named = named_places.get(battle.index, set())
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
                reason_code, reason_params = "shared_cut", {"stage": stage.id, "place": place, "last": last,
                                                            "battle": battle.index + 1,
                                                            "cuts": tuple(sorted(inside))}
            else:  # a seat names a shared place (a format whose cuts miss it): never pick one of the tied
                slots = seated[-1] - place + 1
                reason = (f"shared place {place} in battle {battle.id}: seats of the next stage name places "
                          f"{', '.join(map(str, seated))}, each needs one player")
                reason_code, reason_params = "shared_seats", {"stage": stage.id, "place": place,
                                                              "battle": battle.index + 1,
                                                              "seats": tuple(seated)}
            rule_text = next((r.rule for r in stage.advance if r.places or r.records), stage.rule or fmt.regulation)
            tie = Tie(str(TieId.places(battle.id, recorded)), stage.id, group, slots, reason, stage.shootout, rule_text,
                      reason_code, reason_params)
            if tie not in ties:
                ties.append(tie)
        for index in sorted(set(range(1, 5)) | named):
            player = player_at_place(state, battle.id, places, index)
            if player is not None:
                seats[seat_text(stage.id, battle.index, index)] = player
    taken: set[str] = set()
    for rule in stage.advance:
        chosen: list[tuple[str, str]] = []
        if rule.places:
            for battle in battles:
                for player, line in ((p, state.results[battle.id].line(p)) for p in battle_players(state, battle.id)):
                    if player in present and places_of.get(player) in rule.places and battle_for[player] is battle:
                        chosen.append((player, f"place {places_of[player]} in battle {battle.id}", "place",
                                       {"place": places_of[player], "battle": battle.index + 1}))
        elif rule.best:
            candidates = [(p, key_of(p)) for p in present if places_of.get(p) == rule.place and p not in taken]
            best, tie = _cut(candidates, rule.best, str(TieId.best(stage.id, rule.place)), state, stage,
                             f"best {rule.best} of place {rule.place} in {stage.id}", rule.rule,
                             "best", {"best": rule.best, "place": rule.place, "stage": stage.id})
            if tie:
                ties.append(tie)
            for rank, player in enumerate(best, 1):
                seats[str(SeatRef.best(stage.id, rule.place, rank))] = player
                chosen.append((player, f"best of place {rule.place} (#{rank}) in {stage.id}", "best",
                               {"place": rule.place, "rank": rank}))
        elif rule.top:
            candidates = [(p, key_of(p)) for p in present if p not in taken]
            top, tie = _cut(candidates, rule.top, str(TieId.top(stage.id)), state, stage,
                            f"the top {rule.top} of {stage.id}", rule.rule, "top", {"top": rule.top, "stage": stage.id})
            if tie:
                ties.append(tie)
            for rank, player in enumerate(top, 1):
                seats[str(SeatRef.top(stage.id, rank))] = player
                chosen.append((player, f"#{rank} of {stage.id}", "top", {"rank": rank}))
        else:
            for player in present:
                for record in rule.records:
                    if all(place_in(state, player, s) == place for s, place in record):
                        chosen.append((player, ", ".join(f"{s} place {place}" for s, place in record), "records",
                                       {"records": tuple(record)}))
                        break
        for player, how, how_code, how_params in chosen:
            if player not in taken:
                taken.add(player)
                advancing.append(Advance(player, stage.id, rule.to, rule.rule, how, how_code, how_params))
    return StageOutcome(stage.id, True, lines, placement, tuple(advancing), tuple(ties), seats, ranking)


def place_in(state: TournamentState, player: str, stage_id: str) -> int | None:
    for battle in state.stage_battles(stage_id):
        if battle.id in state.results and player in battle_players(state, battle.id):
            places, _ = effective_places(state, battle.id)
            return places[player]
    return None


def battle_of(state: TournamentState, player: str, stage_id: str) -> ev.BattleSpec | None:
    for battle in state.stage_battles(stage_id):
        players = battle_players(state, battle.id)
        if players and player in players:
            return battle
    return None


def open_ties(state: TournamentState) -> list[Tie]:
    """Every tie that decides who goes on and still needs a shoot-out (or lots, where the format says so)."""
    ties = []
    for stage in playing_stages(state):
        if stage_participants(state, stage.id) is None:
            break  # later stages wait for this one
        ties += outcome(state, stage.id).open_ties
    return ties


def swiss_table(state: TournamentState, stage_id: str) -> list[tuple[str, float, int]]:
    """The Swiss table: (player, placement points, game points), best first (mubc 3.6)."""
    stage = state.fmt.stage(stage_id)
    lines, placement, _ = stage_lines(state, stage)
    rows = [(p, placement.get(p, 0.0), lines[p].score) for p in lines]
    return sorted(rows, key=lambda row: (row[1], row[2]), reverse=True)
