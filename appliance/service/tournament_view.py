"""What the desk shows, as plain data: the tournament's report and the pages' view dicts (no engine objects).

:func:`report` is the JSON-able account of a tournament (the desk's view, the JSON export, ``svoyak tournament
simulate``); :func:`desk_view` adds what the director's pages need (names, the next step, the format's stages
and registration rules as dicts). Templates read only these dicts: a page never reaches into the engine's records.
"""

from __future__ import annotations

from appliance.rules import tournament as t
from appliance.service.bracket_words import add_bracket_words
from appliance.service import presets


def report(state: t.TournamentState) -> dict:
    """The JSON-able account of a tournament: every stage's battles, who went on and why, final standings."""
    fmt = state.fmt
    entrants = state.entrants
    field = t.field(state)
    data = {
        "tournament": state.tournament_id, "format": fmt.name, "title": state.title, "seed": state.seed,
        "regulation": fmt.regulation,
        "entrants": len([e for e in entrants.values() if not e.withdrawn]),
        "field": {"accepted": list(field.accepted), "waiting": list(field.waiting),
                  "refused": [list(pair) for pair in field.refused],
                  "refused_why": {p: {"code": code, "params": _plain(params)}
                                  for p, (code, params) in field.refused_why.items()},
                  "joining": {k: list(v) for k, v in field.joining.items()}},
        "seeds": list(state.seeds),
        "stages": [],
    }
    playing = t.playing_stages(state)
    for stage in fmt.stages:
        entry = {"id": stage.id, "title": stage.title_en, "title_ru": stage.title_ru, "rule": stage.rule}
        if stage not in playing:
            entry["skipped"] = f"not played: entrants fit the next stage ({stage.rule})"  # pages: director.skipped_why
            data["stages"].append(entry)
            continue
        result = t.outcome(state, stage.id)
        entry["draw_seed"] = state.draw_seeds.get(stage.id, state.draw_seeds.get(f"{stage.id}/1"))
        if stage.kind == "written":
            sheets = state.sheets.get(stage.id, {})
            entry["sheets"] = [
                {"player": p, "marks": sheets.get(p, ""), **_line(result.lines[p])} if p in result.lines
                else {"player": p, "absent": True} for p in result.ranking]
        else:
            entry["battles"] = [_battle(state, battle)
                                for battle in sorted(state.stage_battles(stage.id), key=lambda b: (b.round, b.index))]
        entry["advanced"] = [{"player": a.player, "to": a.to_stage, "rule": a.rule, "how": a.how,
                              "how_code": a.how_code, "how_params": _plain(a.how_params)}
                             for a in result.advancing]
        entry["ties_broken"] = [
            {"tie": tie_id, "order": list(order), "how": state.tie_notes.get(tie_id, ("", ""))[0],
             "detail": state.tie_notes.get(tie_id, ("", ""))[1]}
            for tie_id, order in sorted(state.ties.items()) if t.TieId.parse(tie_id).stage == stage.id]
        data["stages"].append(entry)
    data["standings"] = [{"place": s.place if s.place == s.place_to else f"{s.place}-{s.place_to}",
                          "player": s.player, "name": entrants[s.player].name, "team": entrants[s.player].team,
                          "reached": s.stage, "reached_title": fmt.stage(s.stage).title_ru,
                          "reached_title_en": fmt.stage(s.stage).title_en, "battle_place": s.battle_place,
                          "placement_points": s.placement_points, "score": s.score}
                         for s in t.standings(state)]
    return data


def _battle(state: t.TournamentState, battle: t.BattleSpec) -> dict:
    played = state.results.get(battle.id)
    room, box = state.assignments.get(battle.id, (battle.room, ""))
    return {
        "id": battle.id, "round": battle.round, "group": battle.group, "room": room, "box": box,
        "run": battle.run, "theme_pack": battle.theme_pack, "seats": list(battle.seats),
        "players": list(t.battle_players(state, battle.id) or ()),
        "themes": [{"colour": colour, "values": list(values)} for colour, values in battle.themes],
        "lines": [_line(line) for line in sorted(played.lines, key=lambda l: l.place)] if played else [],
        "shootouts": [{"players": list(s.players), "order": list(s.order), "kind": s.kind,
                       "scores": list(s.scores), "rule": s.rule} for s in played.shootouts]
        if played else [],
        "source": played.source if played else "",
    }


def _plain(value):
    """A reason's figures as JSON reads them back (tuples as lists), so a view and its export agree."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _line(line: t.PlayerResult) -> dict:
    data = {"player": line.player, "score": line.score, "place": line.place, "right_points": line.right_points,
            "right_answers": line.right_answers, "wrong_answers": line.wrong_answers,
            "taken_by_value": {str(v): c for v, c in line.taken_by_value}}
    if line.absent:
        data["absent"] = True
    return data


def stage_view(stage) -> dict:
    """A format stage as the pages read it: titles, rule, kind, sizes (a written round's marks too)."""
    return {"id": stage.id, "title_ru": stage.title_ru, "title_en": stage.title_en, "rule": stage.rule,
            "kind": stage.kind, "battles": stage.battles, "rounds": stage.rounds, "themes": stage.themes,
            "marks": stage.themes * len(stage.theme_values) if stage.kind == "written" else 0}


def format_view(fmt: t.Format) -> dict:
    """A tournament format as the pages read it: its titles, stages (in order and ``by_id``), registration."""
    registration = fmt.registration
    stages = [stage_view(stage) for stage in fmt.stages]
    return {
        "name": fmt.name, "title_ru": fmt.title_ru, "title_en": fmt.title_en, "regulation": fmt.regulation,
        "stages": stages, "by_id": {stage["id"]: stage for stage in stages},
        "registration": {
            "rule": registration.rule, "capacity": registration.capacity, "teams": registration.teams,
            "seeds": registration.seeds,
            "categories": [{"id": c.id, "title_ru": c.title_ru, "title_en": c.title_en, "rule": c.rule}
                           for c in registration.categories],
        },
    }


def presets_view() -> list[dict]:
    """Every shipped tournament preset, as :func:`format_view` dicts, for the new-tournament form."""
    return [format_view(presets.load_format(name)) for name in presets.list_formats()]


def desk_view(state: t.TournamentState) -> dict:
    """Everything the director's and public pages show: the :func:`report`, the next step, names, the format."""
    data = report(state)
    step = t.next_step(state)
    data["next"] = {"kind": step.kind, "stage": step.stage, "battles": list(step.battles),
                    "tie": None if step.tie is None else {
                        "id": step.tie.id, "players": list(step.tie.players), "slots": step.tie.slots,
                        "reason": step.tie.reason, "reason_code": step.tie.reason_code,
                        "reason_params": _plain(step.tie.reason_params), "shootout": step.tie.shootout,
                        "rule": step.tie.rule}}
    data["names"] = {p: e.name for p, e in state.entrants.items()}
    data["teams"] = {p: e.team for p, e in state.entrants.items()}
    data["withdrawn"] = [p for p, e in state.entrants.items() if e.withdrawn]
    data["registration_closed"] = state.registration_closed
    data["deadline"] = state.deadline
    return add_bracket_words(state, data)


def page_view(state: t.TournamentState) -> dict:
    """:func:`desk_view` plus what only the director's own pages read: each entrant's category and the format."""
    data = desk_view(state)
    data["categories"] = {p: e.category for p, e in state.entrants.items()}
    data["rules"] = format_view(state.fmt)
    return data


def battle_view(state: t.TournamentState, battle_id: str) -> dict:
    """One drawn battle for its result form: :func:`report`'s battle dict plus its stage and that stage's rule."""
    spec = state.battles[battle_id]
    return {**_battle(state, spec), "stage": spec.stage, "rule": state.fmt.stage(spec.stage).rule}
