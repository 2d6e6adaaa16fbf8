"""Between the battle engine and the screens: host commands to events, state to the pages' view.

Everything that knows the engine's shapes for the live session is here, so :mod:`appliance.service.session`
stays generic. Nothing here decides a rule: whether a command is allowed *now* is asked of the engine itself
by applying it to the (immutable) state and catching :class:`BattleRuleError` (``allowed``), so the host page
greys out exactly what the engine would refuse, with the engine's own rule citation.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from appliance.rules import battle as engine
from appliance.rules.battle import events as ev
import appliance.words as words

# LED colours of the four player buttons, by seat (the box's buttons are red, green, blue, yellow).
LED_COLOURS = ("#e53935", "#43a047", "#1e88e5", "#fdd835")


class HostCommand(engine.Choice):
    """The host's battle commands, in the order the page lists them (the wire carries the value: a member is its
    word). Each builds its events from the state (``_BUILDERS``); the pages get these names from
    :func:`page_names` (web/names.py), never spell them."""

    NEXT = "next"  # the next theme, or the next price and its reading (one gesture, eurocup 2.5)
    READING_DONE = "reading_done"
    RESUME_READING = "resume_reading"
    POINT = "point"
    PICK = "pick"  # on claps: point to a player by hand (mubc 4.4)
    RIGHT = "right"
    WRONG = "wrong"
    SHORT_FORM = "short_form"
    CLARIFY = "clarify"
    EXTEND = "extend"
    TIME = "time"
    WITHDRAW = "withdraw"
    ANNOUNCE = "announce"
    UNDO = "undo"
    CLAPS = "claps"
    CORRECT = "correct"
    APPEAL = "appeal"
    APPEAL_DECIDE = "appeal_decide"


HOST_COMMANDS = tuple(HostCommand)


def page_names() -> dict[str, dict[str, str]]:
    """Every battle name the pages use, by its Python name: ``window.SVOYAK.names`` (web/names.py renders it),
    so a page writes ``names.commands.NEXT`` or ``names.outcomes.QUEUED``, and a name changes here or nowhere."""
    groups = {"commands": HostCommand, "outcomes": engine.PressOutcome, "phases": engine.Phase,
              "reading": engine.Reading, "question_outcomes": engine.QuestionOutcome, "modes": engine.Mode,
              "sources": engine.PressSource, "deadlines": Deadline}
    return {group: {member.name: member.value for member in names} for group, names in groups.items()}


class Deadline(engine.Choice):
    """The deadlines the service runs for a battle (``BattleAdapter.deadlines``, the view's ``deadlines``)."""

    PRESS_WINDOW = "press_window"  # fed to the engine as PressWindowExpired (eurocup 2.11.3)
    ANSWER = "answer"  # shown; the host judges (eurocup 2.8)


# The engine's refusals, worded for people: one short line per refusal code (``BattleRuleError.code``, listed in
# ``appliance.rules.battle.errors.REFUSAL_CODES`` and docs/battle-engine.md), the catalogue's
# ``refusal.battle.<code>`` (appliance/locale), formatted from the error's ``params``. People count from 1:
# ``{player}``/``{first}``/``{answerer}`` are names, ``{question}``/``{appeal}`` are numbers + 1. Stale figures
# (seconds left) are left out: the countdown shows them. A name's gender is unknown: no past-tense verb agrees
# with a name (word around it: «ответ уже был»); a count is worded by the catalogue's plural forms.
REFUSAL_PREFIX = "refusal.battle."


def refusal_codes() -> list[str]:
    """Every battle refusal code the catalogue words."""
    return [key.removeprefix(REFUSAL_PREFIX) for key in words.keys(REFUSAL_PREFIX, plural=False)]


WORDED_CACHE_SIZE = 256  # distinct refusals kept worded for allowed(); a battle meets a few dozen
_NO_ARGS: dict = {}  # never mutated: command_events only reads its args
_NAMED = ("player", "first", "answerer")   # player indexes shown by name
_COUNTED = ("question", "appeal")          # 0-based indexes shown from 1


def refusal_fields(params: dict, players=()) -> dict:
    """An error's ``params`` as people read them: players by name, questions and appeals from 1.

    >>> refusal_fields({"player": 1, "first": 0, "question": 4, "expected": 20}, ("Анна", "Борис"))
    {'player': 'Борис', 'first': 'Анна', 'question': 5, 'expected': 20}
    """
    fields = dict(params)
    for name in _NAMED:
        value = fields.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            fields[name] = players[value] if 0 <= value < len(players) else f"№{value + 1}"
    for name in _COUNTED:
        value = fields.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            fields[name] = value + 1
    return fields


def word_refusal(code: str | None, params: dict, rule: str, message: str = "", players=()) -> dict:
    """One short line per language for an engine refusal: ``{"rule", "ru", "en", "code"}``.

    ``code`` and ``params`` are the :class:`BattleRuleError`'s; ``players`` the battle's names. A code the
    catalogue does not know (a newer engine) falls back, explicitly, to the engine's English ``message``.

    >>> word_refusal("reading_interrupted", {"question": 0}, "eurocup 2.7")["ru"]
    'Вопрос прерван — сначала укажите отвечающего (2.7)'
    >>> word_refusal("no_answer_to_correct", {"player": 0, "question": 4}, "eurocup 3.3", players=("Анна",))["en"]
    'Анна gave no answer to question 5 (eurocup 3.3)'
    >>> word_refusal("question_not_ended", {"question": 2}, "irkutsk (profile: question_end)")["ru"]
    'Вопрос ещё не закончен'

    The Russian line cites a section of the regulation (2.7), never a profile's id («(eurocup)» is no Russian);
    the English one names the rule as the engine does.
    >>> word_refusal("something_new", {}, "battle setup", "something new")["ru"]
    'Правила боя не позволяют: something new (battle setup)'
    """
    name, _, tail = rule.partition(" ")
    # "eurocup 2.7" -> "2.7"; "irkutsk (profile: question_end)" (no section of its own) -> "irkutsk";
    # "battle setup" stays whole
    section = tail if tail[:1].isdigit() else name if tail.startswith("(profile:") else rule
    rule = name if tail.startswith("(profile:") else rule
    if code and words.has(REFUSAL_PREFIX + code):
        fields = refusal_fields(params, players)
        try:
            ru, en = (words.word(REFUSAL_PREFIX + code, language, **fields) for language in ("ru", "en"))
        except (KeyError, IndexError):  # params missing a figure the line names: say the engine's own words
            pass
        else:
            cited = f"{ru} ({section})" if section[:1].isdigit() else ru
            return {"rule": rule, "code": code, "ru": cited, "en": f"{en} ({rule})"}
    # Not in the catalogue: say so plainly rather than hide it (the English message is the engine's own).
    return {"rule": rule, "code": code or "rule",
            "ru": words.word("refusal.battle_fallback", "ru", message=message, section=section),
            "en": words.word("refusal.battle_fallback", "en", message=message, section=rule)}


def _section(citation: str) -> str | None:
    """``"eurocup 2.11"`` -> ``"2.11"``; a rule the regulation gives no section (``"eurocup (profile: x)"``): None."""
    _name, _, tail = citation.partition(" ")
    return tail if tail[:1].isdigit() else None


class CommandError(ValueError):
    """Arguments a command cannot be built from; ``code`` words it (the session refuses it with that code).

    The session checks every argument's presence and type first (``appliance/service/arguments.py``); what is
    left here is what only the engine's data can tell (no such regulation profile).
    """

    def __init__(self, message: str, code: str = "error.bad_command", argument: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.params = {"argument": argument} if argument else {}


def _int(args: dict, key: str, default: int | None = None) -> int:
    """``args[key]`` as a whole number (a JSON 3.0 too); ``default`` if absent. Any size passes here: the engine
    bounds every figure by the profile and refuses by code; only what is no whole number at all (Infinity, NaN,
    text, a bool) is a bad command."""
    value = args.get(key, default) if default is not None else args.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or (isinstance(value, float) and not (math.isfinite(value) and value.is_integer())):
        raise CommandError(f"{key} must be a whole number, not {value!r}")
    return int(value)


def _next(state, args: dict, at_ns: int) -> list:
    if state.phase == engine.Phase.BETWEEN_THEMES:
        return [ev.ThemeStarted(at_ns=at_ns, name=_text(args, "name"))]
    value = state.expected_value()
    if value is None:  # let the engine say why (a question is on, the battle is over...)
        return [ev.PriceAnnounced(at_ns=at_ns, value_points=10)]
    # Announcing the price and starting to read are one gesture of the host (eurocup 2.5).
    return [ev.PriceAnnounced(at_ns=at_ns, value_points=value), ev.ReadingStarted(at_ns=at_ns)]


def _extend(state, args: dict, at_ns: int) -> list:
    default_ms = state.profile.answer_limit_ms or 3000  # one more answer time, unless the host says how long
    extra_ms = _int(args, "extra_ms") if args.get("extra_ms") else default_ms
    return [ev.AnswerTimeExtended(at_ns=at_ns, extra_ms=extra_ms)]


def _claps(state, args: dict, at_ns: int) -> list:
    on = _bool(args, "on", None)
    claps = on if on is not None else state.mode != engine.Mode.CLAPS  # no "on": toggle
    return [ev.ModeChanged(at_ns=at_ns, mode=engine.Mode.CLAPS if claps else engine.Mode.BUTTONS)]


def _correct(state, args: dict, at_ns: int) -> list:
    return [ev.RulingCorrected(at_ns=at_ns, question=_int(args, "question", len(state.questions) - 1),
                               player=_int(args, "player"), correct=_bool(args, "correct", False),
                               reason=_text(args, "reason"))]


def _appeal(state, args: dict, at_ns: int) -> list:
    return [ev.AppealLodged(at_ns=at_ns, player=_int(args, "player"),
                            question=_int(args, "question", len(state.questions) - 1), claim=_text(args, "claim"))]


def _appeal_decide(state, args: dict, at_ns: int) -> list:
    return [ev.AppealDecided(at_ns=at_ns, appeal=_int(args, "appeal"), accepted=_bool(args, "accepted", False),
                             correct=_bool(args, "correct", None))]  # correct None: the question is voided


# What each host command stands for: HostCommand -> (state, args, at_ns) -> events.
_BUILDERS = {
    HostCommand.NEXT: _next,
    HostCommand.READING_DONE: lambda state, args, at_ns: [ev.ReadingFinished(at_ns=at_ns)],
    HostCommand.RESUME_READING: lambda state, args, at_ns: [ev.ReadingResumed(at_ns=at_ns)],
    HostCommand.POINT: lambda state, args, at_ns: [
        ev.AnswererPointed(at_ns=at_ns, player=state.answerer if state.answerer is not None else -1)],
    HostCommand.PICK: lambda state, args, at_ns: [ev.AnswererPointed(at_ns=at_ns, player=_int(args, "player"))],
    HostCommand.RIGHT: lambda state, args, at_ns: [ev.AnswerJudged(at_ns=at_ns, correct=True)],
    HostCommand.WRONG: lambda state, args, at_ns: [ev.AnswerJudged(at_ns=at_ns, correct=False)],
    HostCommand.SHORT_FORM: lambda state, args, at_ns: [ev.ShortFormGiven(at_ns=at_ns)],
    HostCommand.CLARIFY: lambda state, args, at_ns: [ev.ClarificationRequested(at_ns=at_ns)],
    HostCommand.EXTEND: _extend,
    HostCommand.TIME: lambda state, args, at_ns: [ev.TimeCalled(at_ns=at_ns)],
    HostCommand.WITHDRAW: lambda state, args, at_ns: [
        ev.QuestionWithdrawn(at_ns=at_ns, reason=_text(args, "reason"))],
    HostCommand.ANNOUNCE: lambda state, args, at_ns: [ev.AnswerAnnounced(at_ns=at_ns)],
    HostCommand.UNDO: lambda state, args, at_ns: [ev.ActionUndone(at_ns=at_ns)],
    HostCommand.CLAPS: _claps,
    HostCommand.CORRECT: _correct,
    HostCommand.APPEAL: _appeal,
    HostCommand.APPEAL_DECIDE: _appeal_decide,
}
assert set(_BUILDERS) == set(HostCommand)


def _bool(args: dict, key: str, default: bool | None) -> bool | None:
    """``args[key]``: true, false (or null where ``default`` is None), else a bad command ("false" is no false)."""
    value = args.get(key, default)
    if value is None and default is None:
        return None
    if not isinstance(value, bool):
        raise CommandError(f"{key} is true or false, not {value!r}")
    return value


def _text(args: dict, key: str) -> str:
    """``args[key]``, a string ("" if absent), else a bad command."""
    value = args.get(key, "")
    if not isinstance(value, str):
        raise CommandError(f"{key} is text, not {value!r}")
    return value


class BattleAdapter:
    """The engine's events, view and plans for :class:`appliance.service.session.Session`."""

    def __init__(self, packages=None, board_answer: str = "announced") -> None:
        # The box's question packages (appliance/service/packages.py): a setup may take its themes from one,
        # and the host's reading view reads each question's comment and source from it.
        self.packages = packages
        self.board_answer = board_answer  # appliance/config.py board_answer: announced, over or never
        self._reading_shown: tuple | None = None  # the last reading view: (setup, positions, view)
        self._worded: dict[tuple, dict] = {}  # allowed(): refusals worded before, by (code, rule, message, ...)
        self._questions_shown: tuple = ((), [], [])  # the last view's (questions, theme names, rows)
        self._board_shown: tuple | None = None  # the last view's (setup, profile, themes, played, board)

    # ------------------------------------------------------------ setup and profiles
    def profiles(self) -> list[dict]:
        """Every regulation profile the setup form offers."""
        out = []
        for name in engine.profile_names():
            profile = engine.load_profile(name)
            title_ru, _, title_en = profile.title.partition(" / ")
            out.append({"name": name, "title_ru": title_ru, "title_en": title_en or title_ru,
                        "min_players": profile.players_min, "max_players": profile.players_max,
                        "themes": profile.themes_usual,
                        "theme_counts": list(profile.themes_counts),
                        "red_themes": profile.questions_red_theme_multiplier != 1,
                        "appeals": profile.corrections_appeals != engine.Appeals.NONE,
                        "host_corrections": profile.corrections_host != engine.HostCorrections.NEVER,
                        # what the tools panel says each regulation allows (words keyed by the policy, not the name)
                        "corrections_policy": profile.corrections_host,
                        "appeals_policy": profile.corrections_appeals,
                        "corrections_section": _section(profile.cite("corrections")),
                        "appeals_section": _section(profile.cite("appeals"))})
        return out

    def setup_event(self, args: dict, at_ns: int) -> ev.BattleSetUp:
        """``{profile, players: [names], themes: [{name, red}] | count, mode, package}`` to the setup event.

        ``package`` (``{id, themes: [numbers] | absent, spare: [numbers]}``) takes the themes from a question
        package: the chosen themes in order, or (``themes`` absent) the next unplayed as many as the form
        has, then the spare (red or shoot-out) themes picked beforehand; names, texts and sources come from
        the package, the red flags from the form. Raises PackageFileError (worded by its code) for a choice the
        package cannot give.

        Optional words for the protocol's title (:data:`PAPER_FIELDS`: ``tournament``, ``stage``, ``battle_name``,
        ``room``, ``host``, ``date``); ``date`` defaults to the box's calendar date today."""
        from appliance.rules.battle.errors import ProfileError

        try:
            profile = engine.load_profile(str(args.get("profile", "")))
        except ProfileError as error:
            raise CommandError(str(error), "error.unknown_profile", "profile") from None
        players = args.get("players")
        themes = args.get("themes")
        if not isinstance(players, list) or not all(isinstance(name, str) for name in players):
            raise CommandError("players is a list of names")
        if isinstance(themes, int) and not isinstance(themes, bool):
            themes = [{"name": "", "red": False} for _ in range(themes)]
        if not isinstance(themes, list) or not all(isinstance(theme, dict) for theme in themes):
            raise CommandError("themes is a list of {name, red}")
        # A seat left empty on the form is still a player: «Игрок 2», the name the form showed as a placeholder.
        names = tuple(name.strip() for name in players)
        if not any(names):
            names = tuple(f"Игрок {i + 1}" for i in range(max(len(names), profile.players_min)))
        else:
            names = tuple(name or f"Игрок {i + 1}" for i, name in enumerate(names))
        theme_names = tuple(str(theme.get("name", "")).strip() for theme in themes)
        count, questions, sources, theme_authors = len(themes), (), (), ()
        choice = args.get("package")
        if choice is not None:
            if self.packages is None:
                raise CommandError("this box keeps no question packages", "error.no_packages", "package")
            chosen = choice.get("themes")  # the choice's shape is checked first (appliance/service/arguments.py)
            parts = self.packages.battle_themes(
                choice["id"], themes=None if chosen is None else list(chosen), count=len(themes),
                spare=list(choice.get("spare") or ()), questions_per_theme=len(profile.questions_values))
            if chosen is not None:
                count = len(chosen)
            theme_names = tuple(parts["theme_names"])
            questions = tuple(tuple(tuple(pair) for pair in theme) for theme in parts["questions"])
            sources = tuple(tuple(source) for source in parts["sources"])
            theme_authors = tuple(tuple(names) for names in parts.get("theme_authors", ()))
        return ev.BattleSetUp(
            at_ns=at_ns, profile=profile, players=names, themes=count,
            red_themes=tuple(i for i, theme in enumerate(themes[:count]) if theme.get("red")),
            theme_names=theme_names, questions=questions, sources=sources, theme_authors=theme_authors,
            mode=str(args.get("mode", engine.Mode.BUTTONS)), **_paper_fields(args), **_slot_fields(args))

    def resumable(self, battles) -> str | None:
        """The newest battle, to show after a restart (the log is the truth): one in play resumes, a finished
        one shows its final standings until the host sets up the next."""
        listed = battles.list()
        return listed[-1]["battle_id"] if listed else None

    def battle_list(self, battles, current: str | None) -> list[dict]:
        """This box's battles for the host's list: unfinished first, newest first within each group.

        ``current`` (the live battle) is flagged and carries no scores: the page has them in ``players``, and
        so the list changes only when a battle is set up or resumed, not at every press.
        """
        rows = []
        for order, line in enumerate(battles.list()):
            state = battles.state(line["battle_id"])
            title_ru, _, title_en = state.profile.title.partition(" / ")
            theme = state.theme
            rows.append((not state.is_over, order, {
                "id": line["battle_id"], "profile": state.profile.name,
                "title_ru": title_ru, "title_en": title_en or title_ru,
                # a tournament battle by the names on its papers: «Сова · Первый отборочный этап · группа A, бой 2»
                "named": " · ".join(part.strip() for part in (getattr(state.setup, "tournament", ""),
                                                               getattr(state.setup, "stage", ""),
                                                               getattr(state.setup, "battle_name", ""))
                                    if part and part.strip()),
                "finished": state.is_over, "current": line["battle_id"] == current,
                "players": [{"name": name, "score": None if line["battle_id"] == current else state.scores[i]}
                            for i, name in enumerate(state.players)],
                "themes": state.setup.themes, "themes_started": sum(1 for t in state.themes if not t.shootout),
                "questions": len(state.questions),
                "theme_name": theme.name if theme is not None else "",
                "theme_index": theme.index if theme is not None else None,
                "theme_shootout": bool(theme is not None and theme.shootout),
                "slot": state.setup.slot}))
        rows.sort(key=lambda row: (not row[0], -row[1]))
        return [row[2] for row in rows]

    # ------------------------------------------------------------ commands
    @staticmethod
    def unnamed_next_theme(state) -> int | None:
        """The board number of the regular theme «next» would start now if it has no name yet, else ``None``
        (a theme is named at its start: the director may name a tournament battle's themes after it began)."""
        if state is None or state.phase != engine.Phase.BETWEEN_THEMES:
            return None
        number = state.regular_themes_played
        names = state.setup.theme_names
        if number >= state.setup.themes or (number < len(names) and names[number]):
            return None
        return number

    def command_events(self, name: str, state, args: dict, at_ns: int) -> list[ev.Event]:
        """The events one host command stands for (the engine then accepts or refuses them all).

        «Отменить» stands for one ``ActionUndone`` per host action the last command stored (:meth:`undo_nodes`):
        one tap is one intent, so undoing "next" takes back the reading's start and its price together."""
        build = _BUILDERS.get(name) if isinstance(name, str) else None  # a HostCommand is its name
        if build is None:
            raise CommandError(f"unknown command {name!r}")
        if name == HostCommand.UNDO:
            return [ev.ActionUndone(at_ns=at_ns) for _node in self.undo_nodes(state) or [None]]
        return build(state, args, at_ns)

    # Which events one command stored together, for undo: ``joined(seq)`` is true when the battle's event
    # ``seq`` was stored by the same command as the event before it (the session's, from the store:
    # ``Battles.same_command``). None: every event counts as a command of its own (bare events, no store).
    joined: Callable[[int], bool] | None = None

    def undo_nodes(self, state) -> list[tuple]:
        """The undo history nodes «Отменить» takes back now, newest first: the host's last action and every host
        action its command stored with it ([]: nothing to undo). A node's event is event ``before.seq + 1`` of
        the battle (``state.seq`` counts the events applied); presses and expiries are no host actions and the
        engine re-applies those after the undone ones (engine._action_undone)."""
        nodes: list[tuple] = []
        node = state.history
        while node is not None:
            if node[1].is_host_action:
                seq = node[0].seq + 1
                if nodes and seq != nodes[-1][0].seq:  # not the event right before the one taken: another command
                    break
                nodes.append(node)
                if self.joined is None or not self.joined(seq):
                    break
            elif nodes:
                break
            node = node[2]
        return nodes

    def starts_question(self, events: list) -> bool:
        """Whether these events start a question (its price or its reading): the button test must be over."""
        return any(isinstance(event, (ev.PriceAnnounced, ev.ReadingStarted)) for event in events)

    def check(self, state, events: list) -> Any:
        """Apply ``events`` to ``state`` without storing anything; raise the engine's error if refused."""
        for event in events:
            state = engine.apply(state, event)
        return state

    def press_event(self, state, press: dict) -> ev.ButtonPressed:
        """A press from the capture (kernel edge time ``t_ns``) or a phone (stamped at receipt)."""
        # whole numbers or a bad command (a ValueError the session logs): the engine bounds their range
        return ev.ButtonPressed(at_ns=_int(press, "t_ns"), player=_int(press, "player"),
                                source="phone" if press.get("source") == "phone" else "button")

    def press_counted(self, state, player: int, at_ns: int) -> bool:
        """Whether the press of ``player`` at ``at_ns``, just applied to ``state``, counts (answers or waits)."""
        question = state.current_question
        return question is not None and any(
            press.player == player and press.at_ns == at_ns and press.outcome in engine.COUNTED_OUTCOMES
            for press in question.presses)

    def expiry_event(self, state, key: str, at_ns: int):
        """The event a passed deadline stands for (``None``: only refresh the view)."""
        if key == Deadline.PRESS_WINDOW:
            return ev.PressWindowExpired(at_ns=at_ns)  # eurocup 2.11.3: nobody signalled in time
        return None  # the answer countdown: the host judges (eurocup 2.8), "Время" becomes available

    def deadlines(self, state) -> dict[str, int]:
        """The state's running deadlines: the press window (fed to the engine) and the answer countdown."""
        out = {}
        # the first instant after each deadline: a signal at the deadline itself is in time (eurocup 2.5, 2.8)
        if state.press_window_over_ns is not None:
            out[Deadline.PRESS_WINDOW] = state.press_window_over_ns
        if state.answer_time_up_ns is not None:
            out[Deadline.ANSWER] = state.answer_time_up_ns
        return out

    def capture_plan(self, state, battle_id: str) -> tuple:
        """What the capture must do now: ``("arm", eligible, round_id)`` or ``("disarm",)``."""
        question = state.current_question
        if not engine.buttons_armed(state) or question is None:
            return ("disarm",)
        # A new round whenever the set of players in play changes (a wrong answer, a pointing).
        round_id = f"{battle_id}/q{question.index}/r{len(question.rulings)}" + (
            "/p" if question.pointed_ns is not None else "")
        return ("arm", tuple(engine.eligible_players(state)), round_id)

    def event_dict(self, event) -> dict:
        data = engine.event_to_dict(event)
        if "profile" in data:
            data["profile"] = event.profile.name
        return data

    def word_rule_error(self, error, players=()) -> dict:
        """A refusal of the engine, Russian then English, with its rule citation, by the error's stable ``code``
        (``players``: the battle's names, for the lines that name a player)."""
        return word_refusal(getattr(error, "code", None), getattr(error, "params", {}), getattr(error, "rule", ""),
                            getattr(error, "message", str(error)), players)

    # ------------------------------------------------------------ undo, said before and after
    # The host command that does a host action again (after an undo, one tap takes the undo back).
    REDO_COMMANDS = {"ThemeStarted": HostCommand.NEXT, "PriceAnnounced": HostCommand.NEXT,
                     "ReadingStarted": HostCommand.NEXT, "ReadingFinished": HostCommand.READING_DONE,
                     "ReadingResumed": HostCommand.RESUME_READING, "AnswererPointed": HostCommand.POINT,
                     "ShortFormGiven": HostCommand.SHORT_FORM, "ClarificationRequested": HostCommand.CLARIFY,
                     "AnswerTimeExtended": HostCommand.EXTEND, "TimeCalled": HostCommand.TIME,
                     "QuestionWithdrawn": HostCommand.WITHDRAW, "AnswerAnnounced": HostCommand.ANNOUNCE}

    def _action(self, event, before) -> dict:
        """A host action as the page words it: its type, whose turn it was, the price, the ruling."""
        name = type(event).__name__
        question = before.current_question if before is not None else None
        player = getattr(event, "player", None)
        if player is None or player < 0:
            player = before.answerer if before is not None else None
        action = {"type": name, "player": player, "price": getattr(event, "value_points", None) or (
            question.value_points if question is not None else None), "correct": getattr(event, "correct", None)}
        command = self.REDO_COMMANDS.get(name)
        if name == "AnswerJudged":
            command = HostCommand.RIGHT if event.correct else HostCommand.WRONG
        elif name == "AnswererPointed" and before is not None and before.mode == engine.Mode.CLAPS:
            command = HostCommand.PICK
        action["redo"] = command  # None: taken back for good (a correction is made again from its form)
        return action

    def undo_view(self, state) -> dict:
        """``{next, last}``: what «Отменить» would take back now (or None), and the action the last undo took back
        while nothing has happened since (or None), with the command that does it again."""
        nodes = self.undo_nodes(state)  # the whole last command: said by its first action ("next": the price)
        upcoming = self._action(nodes[-1][1], nodes[-1][0]) if nodes else None
        last = None
        if state.undone and state.undone[-1].at_ns >= state.last_at_ns:
            last = self._action(state.undone[-1].event, state)
            last["at_ns"] = state.undone[-1].at_ns
        return {"next": upcoming, "last": last}

    # ------------------------------------------------------------ what the hall is told
    def announcement(self, before, after, events, current: dict | None) -> dict | None:
        """What the board and the host page announce after one command's ``events`` (``before`` -> ``after``),
        or ``current`` kept.

        A correction and an appeal's decision are announced (who, which question, the ruling from and to, every
        score that moved from and to, answers voided by it, the sections); the announcement stays in the view
        until the next question or theme starts, or an undo takes something back (then it no longer holds).
        """
        events = events if isinstance(events, (list, tuple)) else [events]
        if any(isinstance(event, (ev.PriceAnnounced, ev.ThemeStarted, ev.BattleSetUp)) for event in events):
            return None
        event = events[-1]  # a correction, a decision, an undo, a withdrawal, a mode: a command of one event
        moved = before is not None and before.scores != after.scores
        if isinstance(event, ev.ActionUndone):
            # the hall saw the score change, so it is told that it is taken back, and what (issue 21)
            if not moved or not after.undone:
                return None
            return self._told(before, after, "undone", action=self._action(after.undone[-1].event, after))
        if isinstance(event, ev.QuestionWithdrawn) and moved:
            return self._told(before, after, "withdrawn", question=before.last_question, reason=event.reason)
        if isinstance(event, ev.ModeChanged):
            on = after.mode == engine.Mode.CLAPS
            return self._told(before, after, "claps_on" if on else "claps_off", question=after.current_question,
                              section=_section(after.profile.cite("fallback")) if on else None)
        if isinstance(event, ev.RulingCorrected):
            kind, player, index, appeal = "correction", event.player, event.question, None
        elif isinstance(event, ev.AppealDecided):
            appeal = after.appeals[event.appeal]
            player, index = appeal.player, appeal.question
            kind = ("question_voided" if appeal.correct is None else "appeal_accepted") if appeal.accepted \
                else "appeal_rejected"
        else:
            return current
        old_q, new_q = before.questions[index], after.questions[index]
        old_ruling, new_ruling = old_q.ruling_of(player), new_q.ruling_of(player)
        theme = after.themes[new_q.theme]
        profile = after.profile
        voided = [r.player for r, was in zip(new_q.rulings, old_q.rulings) if r.void and not was.void]
        restored = [r.player for r, was in zip(new_q.rulings, old_q.rulings) if was.void and not r.void]
        names = after.players
        return {
            "id": after.seq, "kind": kind, "player": player, "name": names[player],
            "question": {"index": index, "theme": theme.index, "theme_name": theme.name,
                         "theme_shootout": theme.shootout,
                         "price": new_q.value_points},
            "was": None if old_ruling is None else old_ruling.effective,
            "now": None if new_ruling is None else new_ruling.effective,
            "scores": [{"player": i, "name": names[i], "old": old, "new": new}
                       for i, (old, new) in enumerate(zip(before.scores, after.scores)) if old != new],
            "voided": [{"player": i, "name": names[i]} for i in voided],
            "restored": [{"player": i, "name": names[i]} for i in restored],
            "claim": appeal.claim if appeal is not None else "",
            "reason": getattr(event, "reason", ""),
            "section": _section(profile.cite("appeals" if appeal is not None else "corrections")),
            "void_section": _section(profile.cite("question_end")) if voided or restored else None,
        }

    def _told(self, before, after, kind: str, question=None, reason: str = "", section: str | None = None,
              action: dict | None = None) -> dict:
        """An announcement of ``kind`` with no ruling in it: the scores that moved from ``before`` to ``after``,
        the question it was about (or None), the host's words and the action taken back (an undo)."""
        names = after.players
        if action is not None:  # the action taken back, with the name of the player it was about
            player = action.get("player")
            action = {**action, "name": names[player] if isinstance(player, int) and 0 <= player < len(names) else ""}
        theme = after.themes[question.theme] if question is not None and question.theme < len(after.themes) else None
        return {
            "id": after.seq, "kind": kind, "player": None, "name": "",
            "question": None if question is None or theme is None else {
                "index": question.index, "theme": theme.index, "theme_name": theme.name,
                "theme_shootout": theme.shootout, "price": question.value_points},
            "was": None, "now": None,
            "scores": [{"player": i, "name": names[i], "old": old, "new": new}
                       for i, (old, new) in enumerate(zip(before.scores, after.scores)) if old != new],
            "voided": [], "restored": [], "claim": "", "reason": reason or "", "section": section,
            "void_section": None, "action": action,
        }

    def battle_told(self, state, kind: str, battle_id: str) -> dict:
        """The hall is told that a battle is set aside (``kind`` "set_aside": its scores as they stay) or resumed
        ("resumed": its scores as it goes on): the board's players and scores change with no ruling."""
        return {
            "id": f"{kind}:{battle_id}:{state.seq}", "kind": kind, "player": None, "name": "", "question": None,
            "was": None, "now": None,
            # a tournament battle by the names on its papers («Сова · 1/9 финала · бой 3»), "" for a battle of the box
            "battle_named": " · ".join(part.strip() for part in (getattr(state.setup, "tournament", ""),
                                                                  getattr(state.setup, "stage", ""),
                                                                  getattr(state.setup, "battle_name", ""))
                                       if part and part.strip()),
            "scores": [{"player": i, "name": name, "old": None, "new": score}
                       for i, (name, score) in enumerate(zip(state.players, state.scores))],
            "voided": [], "restored": [], "claim": "", "reason": "", "section": None, "void_section": None,
            "action": None,
        }

    # ------------------------------------------------------------ view
    def allowed(self, state, at_ns: int) -> dict[str, dict | None]:
        """For each host command: ``None`` if the engine accepts it now, else the worded refusal.

        Built on every view (every press), so the work shared by the commands is done once: the probe
        arguments come from one look at the state, and a refusal met before is worded from a small cache (the
        same code, params, rule, message and names always give the same lines). The verdicts are the engine's
        own, event by event (tests/appliance/service/test_battle_adapter.py replays battles against a plain
        command-by-command dry run).
        """
        out: dict[str, dict | None] = {}
        at_ns = max(at_ns, state.last_at_ns)
        probes = self._probe_args(state)
        players = state.players
        for name in HOST_COMMANDS:
            try:
                self.check(state, self.command_events(name, state, probes.get(name, _NO_ARGS), at_ns))
                out[name] = None
            except engine.BattleRuleError as error:
                out[name] = self._word_refusal_cached(error, players)
            except (CommandError, IndexError, ValueError) as error:
                out[name] = {"rule": None, "ru": str(error), "en": str(error)}
        return out

    def _word_refusal_cached(self, error, players) -> dict:
        """:meth:`word_rule_error` for :meth:`allowed`, memoised. The lines are shared by the views that show
        them: views are never mutated (appliance/service/session.py), and ``word_rule_error`` itself (the
        replies to a refused command) always builds a fresh dict."""
        params = getattr(error, "params", None) or {}
        try:
            # the figures' types too: True == 1 as a key, but "{count}" words them differently
            key = (getattr(error, "code", None), getattr(error, "rule", ""), getattr(error, "message", str(error)),
                   tuple((name, type(value), value) for name, value in params.items()), players)
            cached = self._worded.get(key)
        except TypeError:  # a param that is not hashable (a list): word it afresh
            return self.word_rule_error(error, players)
        if cached is None:
            if len(self._worded) >= WORDED_CACHE_SIZE:
                self._worded.clear()  # figures in messages (ns, ms) vary: keep the cache small, not clever
            cached = self._worded[key] = self.word_rule_error(error, players)
        return cached

    def _probe_args(self, state) -> dict[str, dict]:
        """The arguments :meth:`allowed` tries the commands that need some with (the rest take none)."""
        eligible = engine.eligible_players(state)
        last = state.last_question
        ruling = last.rulings[-1] if last is not None and last.rulings else None
        open_appeals = [i for i, appeal in enumerate(state.appeals) if not appeal.decided]
        return {
            HostCommand.PICK: {"player": eligible[0] if eligible else 0},
            HostCommand.CORRECT: {"player": ruling.player if ruling else 0,
                                  "correct": not ruling.effective if ruling else True},
            HostCommand.APPEAL: {"player": ruling.player if ruling else 0},
            HostCommand.APPEAL_DECIDE: {"appeal": open_appeals[0] if open_appeals else -1, "accepted": True},
        }

    def _question_rows(self, state) -> list[dict]:
        """The view's ``questions``: one row per question played. A press or a ruling replaces only the current
        question in the state (the records are frozen and the engine keeps the others), so the rows of the
        questions that are the very same objects as last time, under the same theme name, are reused as they
        are (views are never mutated); the others are built."""
        known_questions, known_names, known_rows = self._questions_shown
        rows = []
        names = []
        for i, q in enumerate(state.questions):
            name = state.themes[q.theme].name  # "" when not named: the pages word it («Тема 2», SVOYAK.themeName)
            if i < len(known_questions) and known_questions[i] is q and known_names[i] == name:
                row = known_rows[i]
            else:
                row = {"index": q.index, "theme": q.theme, "theme_shootout": state.themes[q.theme].shootout,
                       "theme_name": name,
                       "price": q.value_points, "outcome": q.outcome,
                       "withdrawn": q.withdrawn,
                       "answers": [{"player": r.player, "correct": r.effective} for r in q.rulings]}
            rows.append(row)
            names.append(name)
        # The questions are held, so an id is never reused while it is compared against.
        self._questions_shown = (state.questions, names, rows)
        return list(rows)

    def _theme_board(self, state) -> list[dict]:
        """The view's ``themes``: the board, every theme with its prices and the prices played.

        It depends on the setup, the themes started and the prices played by theme only, so it is reused as a
        whole while those stay the same (a press, a ruling, a deadline); views are never mutated."""
        played_by_theme: dict[int, list] = {}
        for q in state.questions:
            played_by_theme.setdefault(q.theme, []).append(q.value_points)
        known = self._board_shown
        if (known is not None and known[0] is state.setup and known[1] is state.profile
                and known[2] is state.themes and known[3] == played_by_theme):
            return known[4]
        profile = state.profile
        # One pass over the themes (not one per theme): the first regular theme started at each board number.
        started_at: dict[int, Any] = {}
        for t in state.themes:
            if not t.shootout:
                started_at.setdefault(t.index, t)
        themes = []
        for number in range(state.setup.themes):
            started = started_at.get(number)
            name = (started.name if started else "") or (
                state.setup.theme_names[number] if number < len(state.setup.theme_names) else "")
            red = number in state.setup.red_themes
            multiplier = profile.questions_red_theme_multiplier if red else 1
            played = list(played_by_theme.get(started.index, ())) if started is not None else []
            themes.append({"index": number, "name": name, "red": red,
                           "prices": [v * multiplier for v in profile.questions_values], "played": played,
                           "current": state.theme is not None and started is state.theme})
        for theme in state.themes:
            if theme.shootout:
                played = list(played_by_theme.get(theme.index, ()))
                themes.append({"index": theme.index, "name": theme.name or "⚔", "red": False, "shootout": True,
                               "prices": list(profile.questions_values), "played": played,
                               "current": theme is state.theme})
        # Held, so the identities compared above are never reused by other objects.
        self._board_shown = (state.setup, state.profile, state.themes, played_by_theme, themes)
        return themes

    # ------------------------------------------------------------ the texts: host's reading view, board answer
    def _text(self, state, slot: int, number: int) -> tuple[str, str] | None:
        """(text, answer) of the question at ``number`` in the setup's theme ``slot``, if the setup has it."""
        texts = state.setup.questions
        if 0 <= slot < len(texts) and 0 <= number < len(texts[slot]):
            return texts[slot][number]
        return None

    def _board_answer(self, state, question) -> str | None:
        """The right answer for the board: after the question, per the board_answer setting; never before."""
        if self.board_answer == "never" or not question.is_over:
            return None
        if self.board_answer == "announced" and not question.answer_announced:
            return None
        theme = state.themes[question.theme]
        text = self._text(state, theme.index, question.number)
        return text[1] if text and text[1] else None

    def _reading_block(self, state, slot: int, number: int, price: int | None) -> dict | None:
        text = self._text(state, slot, number)
        if text is None:
            return None
        setup = state.setup
        block = {"theme_number": slot + 1, "number": number + 1, "price": price,
                 "theme_name": setup.theme_names[slot] if slot < len(setup.theme_names) else "",
                 "text": text[0], "answer": text[1], "comment": "", "source": "", "author": "",
                 "theme_authors": ", ".join(setup.theme_authors[slot]) if slot < len(setup.theme_authors) else ""}
        source = setup.sources[slot] if slot < len(setup.sources) else ()
        if source and self.packages is not None:
            found = self.packages.question(source[0], source[1], number)
            if found is not None:
                block.update(comment=found["comment"], source=found["source"], author=found["author"])
        return block

    def _reading(self, state) -> dict | None:
        """The view's ``reading`` (host only): the question being read (or the last one, its answer to show)
        and the next one ready, by the position the engine keeps (the theme started, the question's number in
        it); None for a battle without texts. Reused while the positions stay the same (a press, a ruling)."""
        setup = state.setup
        if not setup.questions:
            return None
        shown = state.current_question or state.last_question
        theme = state.theme
        values = state.profile.questions_values
        multiplier = state.profile.questions_red_theme_multiplier
        current = None if shown is None else (state.themes[shown.theme].index, shown.number, shown.value_points,
                                              shown.is_over, shown.answer_announced)
        if theme is not None and not state.is_theme_complete and state.questions_in_theme < len(values):
            slot, number = theme.index, state.questions_in_theme
        else:
            slot, number = len(state.themes), 0
        red = slot < setup.themes and slot in setup.red_themes
        upcoming = (slot, number, values[number] * (multiplier if red else 1) if number < len(values) else None)
        positions = (current, upcoming)
        known = self._reading_shown
        if known is not None and known[0] is setup and known[1] == positions:
            return known[2]
        sources = [source for source in setup.sources if source]
        title = self.packages.title(sources[0][0]) if sources and self.packages is not None else None
        view = {"package": title,
                "current": None if current is None else {
                    **(self._reading_block(state, current[0], current[1], current[2]) or {}),
                    "over": current[3], "announced": current[4]},
                "next": self._reading_block(state, *upcoming)}
        if view["current"] is not None and "text" not in view["current"]:
            view["current"] = None  # a shoot-out beyond the themes the setup has texts for
        self._reading_shown = (setup, positions, view)
        return view

    @staticmethod
    def _press_round(state, question) -> list[dict]:
        """The view's ``presses``: the current round of pressing only (after a «Минус» the new presses are a new
        list, gaps from its own first press; the protocol keeps every round). A queued signal that answers now
        (eurocup 2.10.1) was given in the round before: it leads the list, ``carried``, with no gap."""
        if question is None:
            return []
        order = state.press_order(question)
        counting = engine.COUNTED_OUTCOMES
        if question.is_over:  # the round of the last answer, with that answer's press
            shown = max(len(question.rulings) - 1, 0)
            last = question.rulings[-1].player if question.rulings else None
            answers = lambda press: press["player"] == last and press["outcome"] in counting  # noqa: E731
        else:
            shown = len(question.rulings)
            answers = lambda press: (press["player"], press["at_ns"]) == (  # noqa: E731
                question.answerer, question.answerer_press_ns)
        presses = []
        for press in order:
            carried = press["round"] < shown and answers(press)
            if press["round"] == shown or carried:
                presses.append({"player": press["player"], "t_ns": press["at_ns"], "round": shown,
                                "gap_ms": None if carried else press["gap_ns"] / 1e6, "carried": carried,
                                "source": press["source"], "outcome": press["outcome"]})
        presses.sort(key=lambda press: not press["carried"])
        return presses

    def view(self, state, battle_id: str, now_ns: int) -> dict:
        """The pages' view of ``state`` (docs/socketio-events.md, "view")."""
        question = state.current_question
        last = state.last_question
        shown = question or last
        profile = state.profile
        answered = question.answered if question else frozenset()
        eligible = set(engine.eligible_players(state))
        players = [{
            "index": i, "name": name, "score": state.scores[i], "led": LED_COLOURS[i % len(LED_COLOURS)],
            "eligible": i in eligible, "answered": i in answered, "answering": state.answerer == i,
            "absent": i in state.setup.absent,
        } for i, name in enumerate(state.players)]
        themes = self._theme_board(state)
        presses = self._press_round(state, shown)
        deadlines = {Deadline.PRESS_WINDOW: None, Deadline.ANSWER: None}
        if state.press_window_closes_ns is not None and question is not None:
            opened = max(question.reading_finished_ns or 0, question.reopened_ns or 0)
            deadlines[Deadline.PRESS_WINDOW] = {"at_ns": state.press_window_closes_ns,
                                         "total_ms": (state.press_window_closes_ns - opened) / 1e6}
        if state.answer_deadline_ns is not None and question is not None:
            started = question.pointed_ns or question.answer_deadline_ns - profile.answer_limit_ms * 10**6
            deadlines[Deadline.ANSWER] = {"at_ns": state.answer_deadline_ns,
                                   "total_ms": max(1.0, (state.answer_deadline_ns - started) / 1e6)}
        theme = state.theme
        standings_rows = None
        table = engine.standings(state)
        rows = []
        for line in table.lines:
            # Tie-break indicators, only those the ranking had to use (irkutsk 3.6, youth-cup 2.6)
            details = [[method, "/".join(map(str, value)) if isinstance(value, tuple) else str(value)]
                       for method, value in line.indicators.items() if method in table.methods_used]
            place = str(line.place) if line.place == line.place_to else f"{line.place}-{line.place_to}"
            rows.append({"place": place, "player": line.player, "name": line.name, "score": line.score,
                         "tiebreak": details, "placement_points": line.placement_points})
        standings_rows = rows
        return {
            "battle": {"id": battle_id, "profile": profile.name, "profile_title": profile.title,
                       "finished": state.is_over, "on_claps": state.mode == engine.Mode.CLAPS, "phase": state.phase,
                       "shootout": table.shootout is not None and not state.is_over},
            "players": players,
            "themes": themes,
            "theme": None if theme is None else {
                "index": theme.index, "name": theme.name, "red": theme.red,
                "shootout": theme.shootout, "complete": state.is_theme_complete},
            "question": None if shown is None or theme is None else {
                "index": shown.index, "theme": theme.index, "theme_name": theme.name,
                "theme_shootout": theme.shootout,
                "price": shown.value_points, "red": shown.red, "reading": shown.reading,
                "over": shown.is_over, "outcome": shown.outcome, "withdrawn": shown.withdrawn,
                "answer": self._board_answer(state, shown)},
            "answerer": state.answerer,
            "pointed": bool(question is not None and question.pointed_ns is not None),
            "presses": presses,
            "deadlines": deadlines,
            "allowed": self.allowed(state, now_ns),
            "standings": standings_rows,
            "questions": self._question_rows(state),
            "reading": self._reading(state),
            "undo": self.undo_view(state),
            "appeals": [{"index": i, "player": a.player, "question": a.question, "claim": a.claim,
                         "decided": a.decided, "accepted": a.accepted} for i, a in enumerate(state.appeals)],
        }


PAPER_FIELDS = ("tournament", "stage", "battle_name", "room", "host", "date")


def _paper_fields(args: dict) -> dict:
    """The setup's words for the papers (checked as text by ``appliance.service.arguments``), trimmed; the box's
    calendar date today unless one is given."""
    import datetime

    fields = {name: str(args.get(name) or "").strip() for name in PAPER_FIELDS}
    fields["date"] = fields["date"] or datetime.date.today().isoformat()
    return fields


def _slot_fields(args: dict) -> dict:
    """A tournament battle assigned to this box (docs/rooms.md): its slot, run and the stage's cuts."""
    fields: dict = {}
    if args.get("slot"):
        fields["slot"] = str(args["slot"])
    for key in ("run", "runs"):
        if args.get(key) is not None:
            fields[key] = int(args[key])
    if args.get("cuts") is not None:
        fields["cuts"] = tuple(int(cut) for cut in args["cuts"])
    return fields
