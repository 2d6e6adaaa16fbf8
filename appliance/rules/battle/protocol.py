"""The battle protocol as rows: per question who pressed in what order with time gaps, who answered, the
ruling, the running scores, and any correction (the original ruling and its correction both shown).

Pure: rendering to CSV/HTML is :mod:`appliance.service.papers`.
"""

from __future__ import annotations

import dataclasses

from appliance.rules.battle.choices import CorrectionKind, PressSource
from appliance.rules.battle.standings import standings
from appliance.rules.battle.state import BattleState, Question, press_rounds

# Every word of the protocol, (Russian, English): a paper speaks the language it was asked in (the screens' one).
OUTCOMES = {
    "right": ("взят", "taken"),
    "all_wrong": ("все ошиблись", "all wrong"),
    "unanswered": ("без ответа", "no answer"),
    "wrong": ("неверно", "wrong"),  # answered, and no answer counted right: not «без ответа»
    "first_answer": ("первый ответ", "first answer"),
    "withdrawn": ("снят", "withdrawn"),
    None: ("играется", "in play"),
}
PRESS_NOTES = {"answerer": ("", ""), "queued": ("след.", "next"), "beaten": ("опередили", "beaten"),
               "early": ("рано", "early"), "late": ("поздно", "late"),
               "during_answer": ("во время ответа", "during an answer"), "blocked": ("блок", "blocked"),
               "answered": ("ответ уже был", "answered already"), "locked": ("блок", "locked out"),
               "not_playing": ("не играет", "not playing"), "claps": ("хлопки", "claps")}
SOURCES = {"phone": ("телефон", "phone"), "host": ("вручную", "by hand")}
# What the host undid, by the undone event's type (the host page's «Отменить» says the same things)
UNDONE = {"ThemeStarted": ("начало темы", "a theme's start"), "PriceAnnounced": ("объявление цены", "a price"),
          "ReadingStarted": ("начало чтения", "a reading's start"),
          "ReadingFinished": ("«Вопрос прочитан»", "«Reading done»"),
          "ReadingResumed": ("«Читать дальше»", "«Resume reading»"),
          "AnswererPointed": ("«Отвечает»", "«Answering»"), "AnswerJudged": ("оценка ответа", "a ruling"),
          "TimeCalled": ("«Время»", "«Time»"), "ShortFormGiven": ("«Краткая форма»", "«Short form»"),
          "ClarificationRequested": ("«Уточните»", "«Clarify»"), "AnswerTimeExtended": ("«Ещё время»", "«Extend time»"),
          "QuestionWithdrawn": ("снятие вопроса", "a withdrawal"), "AnswerAnnounced": ("«Ответ объявлен»",
                                                                                     "«Answer announced»"),
          "RulingCorrected": ("исправление решения", "a correction"), "AppealLodged": ("апелляция", "an appeal"),
          "AppealDecided": ("решение по апелляции", "an appeal's decision"), "ModeChanged": ("смена режима",
                                                                                             "a mode change")}
WORDS = {
    "time": ("время", "time"),
    "appeal": ("апелляция", "appeal"), "host": ("ведущий", "host"),
    "void": ("{name}: {was} → 0 (не в счёт — раньше засчитан верный ответ: {by})",
             "{name}: {was} → 0 (void: {by}'s answer was made right first)"),
    "withdrawn": ("вопрос снят", "withdrawn"),
    "shootout": ("перестрелка", "shoot-out"), "red": ("красная", "red"),
    "appeal_pending": ("не рассмотрена", "pending"), "appeal_accepted": ("принята", "accepted"),
    "appeal_rejected": ("отклонена", "rejected"),
    "appeal_line": ("Апелляция {number}: {name}, вопрос {question} ({claim}) — {decision}",
                    "Appeal {number}: {name}, question {question} ({claim}): {decision}"),
    "undone": ("Отменено ведущим: {action}", "Undone by the host: {action}"),
    "undone_other": ("действие", "an action"),
    "placement": (", очки за место: {points}", ", placement points: {points}"),
    "shootout_score": (" (перестрелка {score})", " (shoot-out {score})"),
    "absent": (" (не было на бою)", " (absent)"),  # a name's gender is unknown: not «отсутствовал»
    # where a question was read from (BattleSetUp.sources) and its answer as set up: the appeal's text
    "source": ("пакет {package}, тема {theme}, вопрос {question}", "package {package}, theme {theme}, question {question}"),
    "source_answer": ("ответ: {answer}", "answer: {answer}"),
    "theme_authors": ("автор темы: {authors}", "theme by {authors}"),
    "shootout_needed": ("Нужна перестрелка: {names} (места {first}-{last})",
                        "A shoot-out is needed: {names} (places {first}-{last})"),
}


def word(pair: tuple[str, str], language: str = "ru") -> str:
    """One of a ``(ru, en)`` pair: English when asked, else Russian."""
    return pair[1] if language == "en" else pair[0]


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


def question_row(state: BattleState, question: Question, running: list[int], language: str = "ru") -> ProtocolRow:
    names = state.players
    # each round of pressing (a «Минус» reopens the question) with its own gaps: "Аня 0.000; Борис +0.053 | Вера 0.000"
    rounds: dict[int, list[str]] = {}
    for press in press_rounds(question):
        presses = rounds.setdefault(press["round"], [])
        gap = "0.000" if press["gap_ns"] == 0 else f"+{_seconds(press['gap_ns'])}"
        outcome, kind = press["outcome"], press["source"]
        note = word(PRESS_NOTES.get(outcome, (outcome, outcome)), language)
        source = "" if kind == PressSource.BUTTON else \
            f", {word(SOURCES.get(getattr(kind, 'value', kind), (str(kind),) * 2), language)}"
        presses.append(f"{names[press['player']]} {gap}" + (f" ({note}{source})" if note or source else ""))
    answers, corrections = [], []
    value = question.value_points
    for ruling in question.rulings:
        sign = "+" if ruling.correct else "−"
        answers.append(f"{names[ruling.player]} {sign}{value}"
                       + (f" ({word(WORDS['time'], language)})" if ruling.by_time else ""))
        for correction in ruling.corrections:
            kind = word(WORDS["appeal" if correction.kind == CorrectionKind.APPEAL else "host"], language)
            new = "+" if correction.correct else "−"
            corrections.append(f"{names[ruling.player]}: {sign}{value} → {new}{value} ({kind}"
                               + (f": {correction.reason}" if correction.reason else "") + ")")
        if ruling.void:
            # a name's gender is unknown: worded around it (not «исправлением ответа Борис»)
            corrections.append(word(WORDS["void"], language).format(
                name=names[ruling.player], was=f"{sign}{value}", by=names[ruling.voided_by]))
        if not question.withdrawn:
            running[ruling.player] += ruling.points(value)
    if question.withdrawn:
        corrections.append(word(WORDS["withdrawn"], language) + (f": {question.withdrawn_reason}"
                                                                 if question.withdrawn_reason else ""))
    theme = state.themes[question.theme]
    outcome = question.outcome
    if outcome == "unanswered" and any(not r.void and not r.effective for r in question.rulings):
        outcome = "wrong"
    kind = word(WORDS["shootout"], language) if question.shootout else (word(WORDS["red"], language)
                                                                         if question.red else "")
    return ProtocolRow(theme=question.theme + 1, theme_name=theme.name, question=question.number + 1,
                       value_points=value, kind=kind, presses=" | ".join("; ".join(one) for one in rounds.values()), answers="; ".join(answers),
                       outcome=word(OUTCOMES[outcome], language) if outcome in OUTCOMES else (outcome or ""),
                       scores=tuple(running),
                       corrections="; ".join(corrections), source=question_source(state, question, language))


def question_source(state: BattleState, question: Question, language: str = "ru") -> str:
    """Which package, theme and question of it this question was read from, and the answer as set up."""
    setup = state.setup
    slot = question.theme  # themes are started in the setup's order: regular ones, then the spares
    parts = []
    sources = setup.sources
    if slot < len(sources) and sources[slot]:
        package_id, number = sources[slot]
        parts.append(word(WORDS["source"], language).format(package=package_id, theme=number + 1,
                                                            question=question.number + 1))
    authors = getattr(setup, "theme_authors", ())
    if slot < len(authors) and authors[slot]:
        parts.append(word(WORDS["theme_authors"], language).format(authors=", ".join(authors[slot])))
    if slot < len(setup.questions) and question.number < len(setup.questions[slot]):
        answer = setup.questions[slot][question.number][1]
        if answer:
            parts.append(word(WORDS["source_answer"], language).format(answer=answer))
    return " — ".join(parts)


def protocol_rows(state: BattleState, language: str = "ru") -> list[ProtocolRow]:
    """One row per question asked, in order; the last row's scores equal ``state.scores``."""
    running = [0] * len(state.players)
    return [question_row(state, question, running, language) for question in state.questions]


def protocol_notes(state: BattleState, language: str = "ru") -> list[str]:
    """Appeals, undone actions and the final standing, as lines under the table."""
    notes = []
    for number, appeal in enumerate(state.appeals, start=1):
        decision = "appeal_pending" if not appeal.decided else ("appeal_accepted" if appeal.accepted
                                                                  else "appeal_rejected")
        notes.append(word(WORDS["appeal_line"], language).format(
            number=number, name=state.players[appeal.player], question=appeal.question + 1, claim=appeal.claim,
            decision=word(WORDS[decision], language)))
    for undone in _undone_commands(state.undone):
        action = UNDONE.get(type(undone.event).__name__, WORDS["undone_other"])
        notes.append(word(WORDS["undone"], language).format(action=word(action, language)))
    table = standings(state)
    for line in table.lines:
        place = str(line.place) if line.place == line.place_to else f"{line.place}-{line.place_to}"
        extra = word(WORDS["placement"], language).format(points=line.placement_points) \
            if line.placement_points is not None else ""
        shootout = "" if line.shootout_score is None else \
            word(WORDS["shootout_score"], language).format(score=f"{line.shootout_score:+d}")
        notes.append(f"{place}. {line.name}: {line.score}{shootout}{extra}"
                     + (word(WORDS["absent"], language) if line.absent else ""))
    if table.shootout is not None:
        names = ", ".join(state.players[p] for p in table.shootout.players)
        notes.append(word(WORDS["shootout_needed"], language).format(
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
