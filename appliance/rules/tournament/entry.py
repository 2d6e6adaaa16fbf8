"""Who plays: the field filled by the format's registration rules, and which stages are played at all.

Pure queries over a :class:`TournamentState` (records only); memoised in the state's ``cache``.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict

from appliance.rules.tournament.formats import Stage
from appliance.rules.tournament.state import TournamentState


@dataclasses.dataclass(frozen=True)
class Field:
    """Who plays: accepted entrants (in order), the waiting list, refusals with reasons, late joiners per stage."""

    accepted: tuple[str, ...]
    waiting: tuple[str, ...]
    refused: tuple[tuple[str, str], ...]
    joining: dict
    # each refusal's reason as a code and its figures, for the pages to word: player -> ("over_capacity", {capacity, rule})
    refused_why: dict = dataclasses.field(default_factory=dict)


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
    why = {e.player_id: ("over_capacity", {"capacity": capacity, "rule": c.rule or registration.rule}) for e, c in rest
           if not registration.waiting_list}
    result = Field(accepted, waiting, refused, {k: tuple(v) for k, v in joining.items()}, why)
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
