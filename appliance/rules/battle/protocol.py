"""The battle protocol as rows: per question who pressed in what order with time gaps, who answered, the
ruling, the running scores, and any correction (the original ruling and its correction both shown).

Pure: rendering to CSV/HTML is :mod:`appliance.service.papers`.
"""

from __future__ import annotations

import dataclasses

import appliance.words as words
from appliance.rules.battle.choices import CorrectionKind, PressSource
from appliance.rules.battle.standings import standings
from appliance.rules.battle.state import BattleState, Question, press_rounds


# Every word of the protocol is the catalogue's ``protocol.*`` (appliance/locale): a paper speaks the language it
# was asked in (the screens' one). The outcomes, press notes, sources and undone events are keyed by their values.
OUTCOMES = ("right", "all_wrong", "unanswered", "wrong", "first_answer", "withdrawn", None)


def _say(key: str, language: str, **params) -> str:
    return words.word(key, language, **params) if params else words.gettext(key, language)


def _known(key: str, otherwise: str, language: str) -> str:
    return _say(key, language) if words.has(key) else otherwise


@dataclasses.dataclass(frozen=True)
class ProtocolRow:
    theme: int  # 1-based for people
    theme_name: str
    question: int  # 1-based within the theme
    value_points: int
    kind: str  # "", "red", "shoot-out"
    presses: str  # "Аня 0.000; Борис +0.053 (во время ответа) | Борис 0.000": a round of pressing per «Минус»
    answers: str  # "Аня −10; Борис +10"
    outcome: str
    scores: tuple  # running scores after this question, corrections applied
    corrections: str
    # Where the question was read from, for an appeal: "пакет 0123456789ab, тема 3, вопрос 2 — ответ: Волга"
    # (BattleSetUp.sources; the text as set up), "" for a battle whose themes were typed by hand.
    source: str = ""


def _seconds(ns: int) -> str:
    return f"{ns / 1e9:.3f}"


def question_row(state: BattleState, question: Question, running: list[int], language: str = "ru",
                 titles: dict | None = None) -> ProtocolRow:
    names = state.players
    # each round of pressing (a «Минус» reopens the question) with its own gaps: "Аня 0.000; Борис +0.053 | Вера 0.000"
    rounds: dict[int, list[str]] = {}
    for press in press_rounds(question):
        presses = rounds.setdefault(press["round"], [])
        gap = "0.000" if press["gap_ns"] == 0 else f"+{_seconds(press['gap_ns'])}"
        outcome, kind = press["outcome"], press["source"]
        note = "" if outcome == "answerer" else _known(f"protocol.press.{outcome}", outcome, language)
        source_key = "protocol.source." + str(getattr(kind, "value", kind))
        source = "" if kind == PressSource.BUTTON else f", {_known(source_key, str(kind), language)}"
        presses.append(f"{names[press['player']]} {gap}" + (f" ({note}{source})" if note or source else ""))
    answers, corrections = [], []
    value = question.value_points
    for ruling in question.rulings:
        sign = "+" if ruling.correct else "−"
        answers.append(f"{names[ruling.player]} {sign}{value}"
                       + (f" ({_say('protocol.time', language)})" if ruling.by_time else ""))
        for correction in ruling.corrections:
            kind = _say("protocol.appeal" if correction.kind == CorrectionKind.APPEAL else "protocol.host", language)
            new = "+" if correction.correct else "−"
            corrections.append(f"{names[ruling.player]}: {sign}{value} → {new}{value} ({kind}"
                               + (f": {correction.reason}" if correction.reason else "") + ")")
        if ruling.void:
            # a name's gender is unknown: worded around it (not «исправлением ответа Борис»)
            corrections.append(_say("protocol.void", language,
                name=names[ruling.player], was=f"{sign}{value}", by=names[ruling.voided_by]))
        if not question.withdrawn:
            running[ruling.player] += ruling.points(value)
    if question.withdrawn:
        corrections.append(_say("protocol.withdrawn", language) + (f": {question.withdrawn_reason}"
                                                                 if question.withdrawn_reason else ""))
    theme = state.themes[question.theme]
    # a withdrawn question is «снят», whatever was ruled before it was withdrawn (not «взят»)
    outcome = "withdrawn" if question.withdrawn else question.outcome
    if outcome == "unanswered" and any(not r.void and not r.effective for r in question.rulings):
        outcome = "wrong"
    kind = _say("protocol.shootout", language) if question.shootout else (_say("protocol.red", language)
                                                                         if question.red else "")
    return ProtocolRow(theme=question.theme + 1, theme_name=theme.name, question=question.number + 1,
                       value_points=value, kind=kind, presses=" | ".join("; ".join(one) for one in rounds.values()), answers="; ".join(answers),
                       outcome=_say(f"protocol.outcome.{outcome or 'in_play'}", language) if outcome in OUTCOMES else (outcome or ""),
                       scores=tuple(running),
                       corrections="; ".join(corrections), source=question_source(state, question, language, titles))


def question_source(state: BattleState, question: Question, language: str = "ru", titles: dict | None = None) -> str:
    """Which package, theme and question of it this question was read from, and the answer as set up. A package
    is named by its title when ``titles`` (package id -> title) has it, never by a bare id where it does."""
    setup = state.setup
    slot = question.theme  # themes are started in the setup's order: regular ones, then the spares
    parts = []
    sources = setup.sources
    if slot < len(sources) and sources[slot]:
        package_id, number = sources[slot]
        parts.append(_say("protocol.source", language, package=package_name(package_id, titles), theme=number + 1,
                                                            question=question.number + 1))
    authors = getattr(setup, "theme_authors", ())
    if slot < len(authors) and authors[slot]:
        parts.append(_say("protocol.theme_authors", language, authors=", ".join(authors[slot])))
    if slot < len(setup.questions) and question.number < len(setup.questions[slot]):
        answer = setup.questions[slot][question.number][1]
        if answer:
            parts.append(_say("protocol.source_answer", language, answer=answer))
    return " — ".join(parts)


def package_name(package_id: str, titles: dict | None = None) -> str:
    """«Кубок двора» (its title, in quotes) when ``titles`` has it, else the id (a package no longer on the box)."""
    title = (titles or {}).get(package_id)
    return f"«{title}»" if title else package_id


def protocol_rows(state: BattleState, language: str = "ru", titles: dict | None = None) -> list[ProtocolRow]:
    """One row per question asked, in order; the last row's scores equal ``state.scores``."""
    running = [0] * len(state.players)
    return [question_row(state, question, running, language, titles) for question in state.questions]


def protocol_notes(state: BattleState, language: str = "ru") -> list[str]:
    """Appeals, undone actions and the final standing, as lines under the table."""
    notes = []
    for number, appeal in enumerate(state.appeals, start=1):
        decision = "protocol.appeal_pending" if not appeal.decided else (
            "protocol.appeal_accepted" if appeal.accepted else "protocol.appeal_rejected")
        notes.append(_say("protocol.appeal_line", language,
            number=number, name=state.players[appeal.player], question=appeal.question + 1, claim=appeal.claim,
            decision=_say(decision, language)))
    for undone in _undone_commands(state.undone):
        action = _known(f"protocol.undone.{type(undone.event).__name__}", _say("protocol.undone_other", language),
                        language)
        notes.append(_say("protocol.undone", language, action=action))
    table = standings(state)
    for line in table.lines:
        place = str(line.place) if line.place == line.place_to else f"{line.place}-{line.place_to}"
        extra = _say("protocol.placement", language, points=line.placement_points) \
            if line.placement_points is not None else ""
        shootout = "" if line.shootout_score is None else \
            _say("protocol.shootout_score", language, score=f"{line.shootout_score:+d}")
        notes.append(f"{place}. {line.name}: {line.score}{shootout}{extra}"
                     + (_say("protocol.absent", language) if line.absent else ""))
    if table.shootout is not None:
        names = ", ".join(state.players[p] for p in table.shootout.players)
        notes.append(_say("protocol.shootout_needed", language,
            names=names, first=table.shootout.places[0], last=table.shootout.places[1]))
    return notes


def _undone_commands(undone: tuple) -> list:
    """One line per «Отменить»: a tap takes back the host's whole last command, one ``ActionUndone`` per action
    it stored, all stamped with the tap's one ``at_ns`` («Следующий вопрос» is a price and a reading's start:
    two events, one undo). Each run of equal stamps is said by its last record, the command's first action
    (as the host page says it), in the order the taps came."""
    lines: list = []
    for item in undone:
        if lines and lines[-1].at_ns == item.at_ns:
            lines[-1] = item
        else:
            lines.append(item)
    return lines
