"""The battle's choices by name: what a profile field, a press, a question or the battle can be.

Each is a :class:`Choice` (an :class:`enum.StrEnum`), so a member *is* its string: the battle log, the profiles'
TOML and the JSON on the wire keep the very same words (``PressOutcome.LATE == "late"``, ``json.dumps`` writes ``"late"``), and the
code names what it means instead of spelling it. The pages get the names they use from the service
(web/names.py renders them as ``window.SVOYAK.names``).

>>> PressOutcome.QUEUED == "queued", f"{Phase.OVER}", DuringAnswer("queue") is DuringAnswer.QUEUE
(True, 'over', True)
"""

from __future__ import annotations

import enum


class Choice(enum.StrEnum):
    """A named choice. It is its word (``==``, hash, ``str``, JSON) and shows as its word too, as the battle log
    and the TOML write it, so a record's repr reads the same as before the names."""

    def __repr__(self) -> str:
        return repr(self.value)


class PressOutcome(Choice):
    """How a press was taken (``queries.press_outcome``): the first two count, every other says why not."""

    ANSWERER = "answerer"  # it won the right to answer
    QUEUED = "queued"  # it counts as the next signal (eurocup 2.9)
    BEATEN = "beaten"  # it had the turn, then an earlier edge arrived
    EARLY = "early"
    LATE = "late"
    DURING_ANSWER = "during_answer"
    BLOCKED = "blocked"
    ANSWERED = "answered"
    LOCKED = "locked"
    NOT_PLAYING = "not_playing"
    CLAPS = "claps"  # on claps the host points (mubc 4.4): a press is kept for the protocol only
    NO_QUESTION = "no_question"


COUNTED_OUTCOMES = frozenset({PressOutcome.ANSWERER, PressOutcome.QUEUED})


class PressSource(Choice):
    BUTTON = "button"  # kernel edge, µs
    PHONE = "phone"  # stamped at receipt
    HOST = "host"  # the host records a press by hand


class Mode(Choice):
    BUTTONS = "buttons"
    CLAPS = "claps"  # no buttons: the host points to whoever he saw first (mubc 4.4)


class Phase(Choice):
    BETWEEN_THEMES = "between_themes"
    BETWEEN_QUESTIONS = "between_questions"
    QUESTION_OVER = "question_over"
    PRICE_ANNOUNCED = "price_announced"
    READING = "reading"
    ANSWERING = "answering"
    WAITING_FOR_PRESSES = "waiting_for_presses"
    OVER = "over"


class Reading(Choice):
    NOT_STARTED = "not_started"
    READING = "reading"
    INTERRUPTED = "interrupted"
    FINISHED = "finished"


class QuestionOutcome(Choice):
    RIGHT = "right"
    ALL_WRONG = "all_wrong"
    UNANSWERED = "unanswered"
    FIRST_ANSWER = "first_answer"  # a sudden-death question ends at the first answer (northern-owl 3.3)
    WITHDRAWN = "withdrawn"


class CorrectionKind(Choice):
    HOST = "host"
    APPEAL = "appeal"


# --- profile fields ([table] key = one of these)
class PressesOpenAt(Choice):
    PRICE_ANNOUNCED = "price_announced"
    READING_STARTED = "reading_started"
    READING_FINISHED = "reading_finished"


class DuringAnswer(Choice):
    QUEUE = "queue"  # a signal after the host's reset counts as the next one (eurocup 2.6, 2.9)
    IGNORE = "ignore"


class OutsideWindow(Choice):
    IGNORE = "ignore"
    LOCKOUT = "lockout"


class HostCorrections(Choice):
    ANY_TIME = "any_time"
    CURRENT_QUESTION = "current_question"
    APPEAL_WINDOW = "appeal_window"
    NEVER = "never"


class Appeals(Choice):
    NONE = "none"
    AFTER_THEME = "after_theme"
    BEFORE_NEXT_QUESTION = "before_next_question"


class TieBreak(Choice):
    POINTS_WITHOUT_MINUSES = "points_without_minuses"  # irkutsk 3.6, youth-cup 2.6: the sum of right answers only
    RIGHT_ANSWERS_COUNT = "right_answers_count"  # irkutsk 3.6: the number of right answers
    COUNT_RIGHT_BY_VALUE_DESC = "count_right_by_value_desc"  # youth-cup 2.6: how many 50s taken, then 40s...
    SHOOTOUT_THEME = "shootout_theme"  # eurocup 2.4, irkutsk 3.6, youth-cup 2.7: an extra theme among the tied
    SHOOTOUT_QUESTION = "shootout_question"  # northern-owl 3.3: single questions, dearest first, to the first answer


SHOOTOUT_METHODS = (TieBreak.SHOOTOUT_THEME, TieBreak.SHOOTOUT_QUESTION)
