"""What the brackets and the public table need to say who went on, added to the desk's view as plain data.

A drawn seat reads as a player once its result is in (``@1-27:0:1`` is the winner of 1/27 battle 1: once that
battle ended, the 1/9's card names the winner); a seat still waiting says where its player comes from, as data
the page words («1-е место, бой 1 · 1/27 финала»). Battles get their number as people say it («Бой 3»), the box
battle that plays (or played) them, and the lines of their result say who went on to which stage; withdrawn
players are marked; shoot-outs and tie-breaks carry names; the next step names its stage and what is left.

Pure data over the engine's own queries: no rule is decided here.
"""

from __future__ import annotations

from appliance.rules import tournament as t
from appliance.rules.tournament.outcomes import resolve
from appliance.rules.tournament.seats import effective_places


def seat_source(state: t.TournamentState, seat: str) -> dict | None:
    """Where a seat's player comes from: ``{"kind": "place", "stage", "stage_ru", "stage_en", "battle" (1-based),
    "place"}``, ``{"kind": "best", ..., "place", "rank"}`` (the rank-th best of the place-th places) or
    ``{"kind": "top", ..., "rank"}`` (a ranking's rank-th); ``None`` for a seat holding a player id."""
    if not seat.startswith("@"):
        return None
    parts = seat[1:].split(":")
    stage_id = parts[0]
    try:
        stage = state.fmt.stage(stage_id)
        titles = {"stage": stage_id, "stage_ru": stage.title_ru, "stage_en": stage.title_en}
    except t.TournamentError:
        titles = {"stage": stage_id, "stage_ru": stage_id, "stage_en": stage_id}
    numbers = [int(part) for part in parts[1:] if part.isdigit()]
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return {"kind": "place", **titles, "battle": numbers[0] + 1, "place": numbers[1]}
    if len(parts) == 4 and parts[1] == "best" and len(numbers) == 2:
        return {"kind": "best", **titles, "place": numbers[0], "rank": numbers[1]}
    if len(parts) == 3 and parts[1] == "top" and len(numbers) == 1:
        return {"kind": "top", **titles, "rank": numbers[0]}
    return {"kind": "other", **titles, "text": seat[1:]}


def _box_battle(state: t.TournamentState, battle_id: str) -> str:
    """The box battle that is this slot's own: its result's log, else its newest link (a re-link replaces)."""
    played = state.results.get(battle_id)
    if played is not None and getattr(played, "log_id", ""):
        return played.log_id
    linked = [box for box, slot in state.links.items() if slot == battle_id]
    return linked[-1] if linked else ""


def _titled(params: dict, titles: dict) -> dict:
    """A reason's figures with its stages named for the page (``stage`` -> ``stage_ru``/``stage_en``; ``records``
    as ``[{"stage_ru", "stage_en", "place"}]``) and lists of places joined, so the catalogue's line fills in."""
    worded = dict(params)
    if "stage" in worded:
        title = titles.get(worded["stage"], {"ru": worded["stage"], "en": worded["stage"]})
        worded["stage_ru"], worded["stage_en"] = title["ru"], title["en"]
    if "records" in worded:
        worded["records"] = [{"stage_ru": titles.get(stage, {}).get("ru", stage),
                              "stage_en": titles.get(stage, {}).get("en", stage), "place": place}
                             for stage, place in worded["records"]]
    for key in ("cuts", "seats"):
        if isinstance(worded.get(key), (list, tuple)):
            worded[key] = ", ".join(map(str, worded[key]))
    return worded


def add_bracket_words(state: t.TournamentState, view: dict) -> dict:
    """``view`` (the desk's view dict) with the words above added in place; returns it."""
    withdrawn = {p for p, e in state.entrants.items() if e.withdrawn}
    names = {p: e.name for p, e in state.entrants.items()}
    titles = {stage.id: {"ru": stage.title_ru, "en": stage.title_en} for stage in state.fmt.stages}
    view["withdrawn"] = sorted(withdrawn)
    view["stage_titles"] = titles
    # Who went on, and where: the stage's advancement once it is complete, and before that every drawn seat
    # already filled from a battle's result (a bracket seat resolves as soon as its battle ended).
    seated = {}
    seated_in = {}  # (player, stage) -> the battle of that stage (1-based) the draw or a result seats them in
    for spec in state.battles.values():
        for seat in spec.seats:
            player = resolve(state, seat) if seat.startswith("@") else seat
            if player:
                seated_in[(player, spec.stage)] = spec.index + 1
            if seat.startswith("@") and player:
                seated[player] = spec.stage
    # A battle's places that go on by place alone (``places = [1]``: the winner, northern-owl 2.4) are known as
    # soon as it ended, before the rest of the stage plays; other selectors wait for the stage's outcome.
    for battle_id in state.results:
        spec = state.battles.get(battle_id)
        if spec is None:
            continue
        by_place = [rule for rule in state.fmt.stage(spec.stage).advance if rule.places]
        if not by_place:
            continue
        places, shared = effective_places(state, battle_id)
        undecided = {p for _place, players, _recorded in shared for p in players}
        for player, place in places.items():
            for rule in by_place:
                if place in rule.places and player not in undecided and state.active(player):
                    seated.setdefault(player, rule.to)
    order = {stage.id: index for index, stage in enumerate(state.fmt.stages)}
    for stage in view.get("stages", []):
        # a seat in this stage or an earlier one is where a player came from, not where the player went on
        later = {p: to for p, to in seated.items() if order.get(to, -1) > order.get(stage["id"], -1)}
        went = {**later, **{a["player"]: a["to"] for a in stage.get("advanced", [])}}
        for advanced in stage.get("advanced", []):
            advanced["to_title"] = titles.get(advanced["to"], {"ru": advanced["to"], "en": advanced["to"]})
            advanced["how_params"] = _titled(advanced.get("how_params") or {}, titles)
        for battle in stage.get("battles", []):
            spec = state.battles.get(battle["id"])
            battle["number"] = spec.index + 1 if spec is not None else 0
            battle["theme_names"] = list(state.theme_names.get(spec.theme_pack, ())) if spec is not None else []
            # the question packages the pack's themes were read from (the play form preselects it)
            battle["theme_packages"] = sorted({package for package, _number in state.theme_sources.get(
                spec.theme_pack, ())}) if spec is not None else []
            battle["box_battle"] = _box_battle(state, battle["id"])
            battle["seat_views"] = [
                {"player": player or "", "empty": player == "", "withdrawn": player in withdrawn,
                 "from": seat_source(state, seat)}
                for seat, player in ((seat, resolve(state, seat)) for seat in battle.get("seats", []))]
            for line in battle.get("lines", []):
                line["withdrawn"] = line["player"] in withdrawn
                to = went.get(line["player"], "")
                line["went_to"] = titles.get(to)
                if line["went_to"] is not None:
                    # «→ 1/9 финала, бой 3»: which battle, once the draw has seated the player in one
                    line["went_to"] = {**line["went_to"], "battle": seated_in.get((line["player"], to))}
            for shootout in battle.get("shootouts", []):
                shootout["names"] = [names.get(p, p) for p in shootout.get("order", [])]
        for tie in stage.get("ties_broken", []):
            tie["names"] = [names.get(p, p) for p in tie.get("order", [])]
        for sheet in stage.get("sheets", []):
            sheet["withdrawn"] = sheet["player"] in withdrawn
    for row in view.get("standings", []):
        row["withdrawn"] = row["player"] in withdrawn
    step = view.get("next")
    if isinstance(step, dict):
        step["stage_title"] = titles.get(step.get("stage") or "")
        battles = {b["id"]: b for stage in view.get("stages", []) for b in stage.get("battles", [])}
        step["battle_numbers"] = [battles[b]["number"] for b in step.get("battles", []) if b in battles]
        if step.get("stage"):
            in_stage = [b for stage in view.get("stages", []) if stage["id"] == step["stage"]
                        for b in stage.get("battles", [])]
            step["battles_total"] = len(in_stage)
        if step.get("tie"):
            step["tie"]["names"] = [names.get(p, p) for p in step["tie"].get("players", [])]
            step["tie"]["reason_params"] = _titled(step["tie"].get("reason_params") or {}, titles)
    return view
