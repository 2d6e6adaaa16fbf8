"""Play a drawn battle through the real battle engine (``appliance.rules.battle``) with random, rule-abiding play.

Every question goes through the events a host and the buttons would produce (price, reading, presses, the host
pointing and judging, the press window expiring), so the battle engine enforces its regulation; shoot-outs are
played when its standings call for them (eurocup 2.4, irkutsk 3.6, youth-cup 2.7, northern-owl 3.3).
The tournament then reads the engine's standings and tallies into a :class:`BattleResult`.

The battle engine is imported when a battle is played, so this module imports cleanly without it.
"""

from __future__ import annotations

from appliance.rules.tournament.events import BattleSpec
from appliance.rules.tournament.results import BattleResult, PlayerResult, Shootout

SECOND_NS = 1_000_000_000
MAX_SHOOTOUT_QUESTIONS = 60  # a sudden-death run this long is settled by the tournament's tie-break instead


def cuts_for(spec: BattleSpec, players: int, context: dict) -> tuple | None:
    """Places after which this battle's ranking must be strict, from the stage's advance rules."""
    cuts = context.get("cuts")
    if cuts is None:
        return None
    return tuple(sorted(c for c in set(cuts) if 1 <= c < players))


def play(spec: BattleSpec, players: tuple, profile_name: str, rng, context: dict) -> BattleResult:
    """Play ``spec`` with ``players`` (ids, also their names in the battle) under ``profile_name``, the profile
    given by ``context["profile_of"]`` (the service reads the files: ``appliance.service.presets``)."""
    from appliance.rules import battle as engine

    profile = context["profile_of"](profile_name)
    absent = tuple(i for i, p in enumerate(players) if p in set(context.get("absent", ())))
    red = tuple(i for i, (colour, _values) in enumerate(spec.themes) if colour == "red")
    skills = context.get("skills", {})
    clock = [context.get("start_ns", SECOND_NS)]

    def at(seconds: float = 1.0) -> int:
        clock[0] += int(seconds * SECOND_NS)
        return clock[0]

    state = engine.apply(None, engine.BattleSetUp(
        at_ns=at(0), profile=profile, players=tuple(players), themes=len(spec.themes), red_themes=red,
        absent=absent, cuts=cuts_for(spec, len(players), context), slot=spec.id, run=spec.run,
        runs=max(spec.run, context.get("runs", 1))))

    def question(state):
        state = engine.apply(state, engine.PriceAnnounced(at_ns=at(), value_points=state.expected_value()))
        state = engine.apply(state, engine.ReadingStarted(at_ns=at(0.5)))
        state = engine.apply(state, engine.ReadingFinished(at_ns=at(3)))
        current = state.current_question
        hard = current.value_points / 100.0
        buzzers = [p for p in current.participants
                   if rng.random() < 0.35 + 0.5 * skills.get(players[p], 0.5) - 0.2 * hard]
        rng.shuffle(buzzers)
        for player in buzzers:
            if state.current_question is None:
                break
            if not engine.can_press(state, player, clock[0] + SECOND_NS // 2):
                continue
            state = engine.apply(state, engine.ButtonPressed(at_ns=at(0.5), player=player))
            if state.current_question is None or state.current_question.answerer != player:
                continue
            state = engine.apply(state, engine.AnswererPointed(at_ns=at(0.3), player=player))
            right = rng.random() < skills.get(players[player], 0.5) * (1.05 - hard * 0.6)
            state = engine.apply(state, engine.AnswerJudged(at_ns=at(1), correct=right))
        if state.current_question is not None:
            closes = state.press_window_closes_ns
            clock[0] = max(clock[0], closes or clock[0]) + 1
            state = engine.apply(state, engine.PressWindowExpired(at_ns=clock[0]))
        return state

    for _theme in range(len(spec.themes)):
        state = engine.apply(state, engine.ThemeStarted(at_ns=at(), name=""))
        while not state.is_theme_complete:
            state = question(state)
    asked = 0
    while asked < MAX_SHOOTOUT_QUESTIONS:
        call = engine.standings(state).shootout
        if call is None:
            break
        if state.theme is None or state.is_theme_complete or not state.theme.shootout:
            state = engine.apply(state, engine.ThemeStarted(at_ns=at(), name=f"перестрелка {call.number}"))
        state = question(state)
        asked += 1
    return result_from_battle(state, spec.id, source="battle-engine")


def result_from_battle(state, battle_id: str, source: str = "box", log_id: str = "",
                       ids: dict | None = None) -> BattleResult:
    """A tournament :class:`BattleResult` from a finished battle engine state; the battle's players are named
    by tournament player id, or by name with ``ids`` mapping each name to its id.

    Scores and indicators count the regular themes only (shoot-outs separate the tied, they are not battle
    points: youth-cup 2.7 says so for its indicators); places are the engine's, shoot-outs included.
    """
    from appliance.rules import battle as engine
    from appliance.rules.battle.standings import tallies

    players = tuple((ids or {}).get(name, name) for name in state.players)
    table = engine.standings(state)
    regular = tallies(state, include_shootout=False)
    every = tallies(state, include_shootout=True)
    lines = []
    for line in table.lines:
        tally = regular[line.player]
        taken = tuple(sorted(((v, c) for v, c in tally["right_by_value"].items() if c), reverse=True))
        wrong = sum(1 for q in state.questions if not q.shootout and not q.withdrawn
                    for r in q.rulings if r.player == line.player and not r.effective and not r.void)
        lines.append(PlayerResult(players[line.player], score=tally["score"], place=line.place,
                                  right_points=tally["points_without_minuses"],
                                  right_answers=tally["right_answers_count"], wrong_answers=wrong,
                                  taken_by_value=taken, absent=line.absent))
    places = {line.player: line.place for line in table.lines}
    played, seen = [], set()
    for theme in state.themes:
        if not theme.shootout or tuple(theme.participants) in seen:
            continue
        seen.add(tuple(theme.participants))
        ranked = sorted(theme.participants, key=lambda p: places[p])
        played.append(Shootout(tuple(players[p] for p in theme.participants), tuple(players[p] for p in ranked),
                               state.profile.shootout_method or "theme",
                               tuple(every[p]["score"] - regular[p]["score"] for p in ranked),
                               state.profile.cite("tie_break")))
    return BattleResult(battle_id, tuple(lines), tuple(played), source=source, log_id=log_id,
                        themes_played=len(state.themes))
