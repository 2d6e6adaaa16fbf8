"""The battle protocol as rows: per question who pressed in what order with time gaps, who answered, the
ruling, the running scores, and any correction (the original ruling and its correction both shown).

Pure: rendering to CSV/HTML is :mod:`appliance.service.papers`.
"""

from __future__ import annotations

import dataclasses

from appliance.rules.battle.choices import CorrectionKind, PressSource
from appliance.rules.battle.standings import standings
from appliance.rules.battle.state import BattleState, Question

OUTCOMES = {
    "right": "взят / taken",
    "all_wrong": "все ошиблись / all wrong",
    "unanswered": "без ответа / no answer",
    "wrong": "неверно / wrong",  # answered, and no answer counted right: not «без ответа»
    "first_answer": "первый ответ / first answer",
    "withdrawn": "снят / withdrawn",
    None: "играется / in play",
}
PRESS_NOTES = {"answerer": "", "queued": "след.", "beaten": "опередили", "early": "рано", "late": "поздно",
               "during_answer": "во время ответа", "blocked": "блок", "answered": "ответ уже был", "locked": "блок",
               "not_playing": "не играет", "claps": "хлопки"}


@dataclasses.dataclass(frozen=True)
class ProtocolRow:
    theme: int  # 1-based for people
    theme_name: str
    question: int  # 1-based within the theme
    value_points: int
    kind: str  # "", "red", "shoot-out"
    presses: str  # "Аня 0.000; Борис +0.053 (во время ответа)"
    answers: str  # "Аня −10; Борис +10"
    outcome: str
    scores: tuple  # running scores after this question, corrections applied
    corrections: str
    # Where the question was read from, for an appeal: "пакет 0123456789ab, тема 3, вопрос 2 — ответ: Волга"
    # (BattleSetUp.sources; the text as set up), "" for a battle whose themes were typed by hand.
    source: str = ""


def _seconds(ns: int) -> str:
    return f"{ns / 1e9:.3f}"


def question_row(state: BattleState, question: Question, running: list[int]) -> ProtocolRow:
    names = state.players
    presses = []
    first = None
    for press in sorted(question.presses, key=lambda p: p.at_ns):
        first = press.at_ns if first is None else first
        gap = "0.000" if press.at_ns == first else f"+{_seconds(press.at_ns - first)}"
        note = PRESS_NOTES.get(press.outcome, press.outcome)
        source = "" if press.source == PressSource.BUTTON else f", {press.source}"
        presses.append(f"{names[press.player]} {gap}" + (f" ({note}{source})" if note or source else ""))
    answers, corrections = [], []
    value = question.value_points
    for ruling in question.rulings:
        sign = "+" if ruling.correct else "−"
        answers.append(f"{names[ruling.player]} {sign}{value}" + (" (время)" if ruling.by_time else ""))
        for correction in ruling.corrections:
            kind = "апелляция / appeal" if correction.kind == CorrectionKind.APPEAL else "ведущий / host"
            new = "+" if correction.correct else "−"
            corrections.append(f"{names[ruling.player]}: {sign}{value} → {new}{value} ({kind}"
                               + (f": {correction.reason}" if correction.reason else "") + ")")
        if ruling.void:
            # a name's gender is unknown: worded around it (not «исправлением ответа Борис»)
            corrections.append(f"{names[ruling.player]}: {sign}{value} → 0 (не в счёт — раньше засчитан верный "
                               f"ответ: {names[ruling.voided_by]} / voided by the correction of "
                               f"{names[ruling.voided_by]}'s answer)")
        if not question.withdrawn:
            running[ruling.player] += ruling.points(value)
    if question.withdrawn:
        corrections.append("вопрос снят / withdrawn" + (f": {question.withdrawn_reason}"
                                                       if question.withdrawn_reason else ""))
    theme = state.themes[question.theme]
    outcome = question.outcome
    if outcome == "unanswered" and any(not r.void and not r.effective for r in question.rulings):
        outcome = "wrong"
    kind = "перестрелка / shoot-out" if question.shootout else ("красная / red" if question.red else "")
    return ProtocolRow(theme=question.theme + 1, theme_name=theme.name, question=question.number + 1,
                       value_points=value, kind=kind, presses="; ".join(presses), answers="; ".join(answers),
                       outcome=OUTCOMES.get(outcome, outcome or ""), scores=tuple(running),
                       corrections="; ".join(corrections), source=question_source(state, question))


def question_source(state: BattleState, question: Question) -> str:
    """Which package, theme and question of it this question was read from, and the answer as set up."""
    setup = state.setup
    slot = question.theme  # themes are started in the setup's order: regular ones, then the spares
    parts = []
    sources = setup.sources
    if slot < len(sources) and sources[slot]:
        package_id, number = sources[slot]
        parts.append(f"пакет / package {package_id}, тема / theme {number + 1}, вопрос / question {question.number + 1}")
    if slot < len(setup.questions) and question.number < len(setup.questions[slot]):
        answer = setup.questions[slot][question.number][1]
        if answer:
            parts.append(f"ответ / answer: {answer}")
    return " — ".join(parts)


def protocol_rows(state: BattleState) -> list[ProtocolRow]:
    """One row per question asked, in order; the last row's scores equal ``state.scores``."""
    running = [0] * len(state.players)
    return [question_row(state, question, running) for question in state.questions]


def protocol_notes(state: BattleState) -> list[str]:
    """Appeals, undone actions and the final standing, as lines under the table."""
    notes = []
    for number, appeal in enumerate(state.appeals, start=1):
        decision = "не рассмотрена / pending"
        if appeal.decided:
            decision = ("принята / accepted" if appeal.accepted else "отклонена / rejected")
        notes.append(f"Апелляция / appeal {number}: {state.players[appeal.player]}, вопрос {appeal.question + 1}"
                     f" ({appeal.claim}) — {decision}")
    for undone in state.undone:
        notes.append(f"Отменено ведущим / undone by the host: {type(undone.event).__name__}")
    table = standings(state)
    for line in table.lines:
        place = str(line.place) if line.place == line.place_to else f"{line.place}-{line.place_to}"
        extra = f", {line.placement_points} очк. за место" if line.placement_points is not None else ""
        shootout = "" if line.shootout_score is None else f" (перестрелка / shoot-out {line.shootout_score:+d})"
        notes.append(f"{place}. {line.name}: {line.score}{shootout}{extra}"
                     + (" (отсутствовал / absent)" if line.absent else ""))
    if table.shootout is not None:
        names = ", ".join(state.players[p] for p in table.shootout.players)
        notes.append(f"Нужна перестрелка / shoot-out needed: {names} (места {table.shootout.places[0]}-"
                     f"{table.shootout.places[1]})")
    return notes
