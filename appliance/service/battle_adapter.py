"""Between the battle engine and the screens: host commands to events, state to the pages' view.

Everything that knows the engine's shapes for the live session is here, so :mod:`appliance.service.session`
stays generic. Nothing here decides a rule: whether a command is allowed *now* is asked of the engine itself
by applying it to the (immutable) state and catching :class:`BattleRuleError` (``allowed``), so the host page
greys out exactly what the engine would refuse, with the engine's own rule citation.
"""

from __future__ import annotations

from typing import Any

from appliance.rules import battle as engine
from appliance.rules.battle import events as ev

# LED colours of the four player buttons, by seat (the box's buttons are red, green, blue, yellow).
LED_COLOURS = ("#e53935", "#43a047", "#1e88e5", "#fdd835")

# Host commands the page offers, in the order the page lists them. Each builds events from the state.
HOST_COMMANDS = ("next", "reading_done", "resume_reading", "point", "pick", "right", "wrong", "short_form",
                 "clarify", "extend", "time", "withdraw", "announce", "undo", "claps", "correct", "appeal",
                 "appeal_decide")

# Russian glosses of the engine's rule keys (the engine words its refusals in English; the page shows both).
RULE_GLOSSES_RU = {
    "players": "состав игроков", "themes": "темы боя", "values": "порядок вопросов в теме",
    "red_themes": "красные темы", "scoring": "начисление очков", "press_open": "когда можно нажимать",
    "window_after_reading": "время на нажатие после чтения", "window_after_wrong": "время на нажатие после «Минус»",
    "during_answer": "нажатия во время ответа", "one_answer": "один ответ на вопрос",
    "stop_reading": "остановка чтения", "short_form": "краткая форма вопроса", "answer_limit": "время на ответ",
    "resume_reading": "продолжение чтения", "question_end": "конец вопроса", "answer_announced": "объявление ответа",
    "tie_break": "дополнительные темы", "clarify": "«уточните»", "extension": "продление времени ответа",
    "withdraw": "снятие вопроса", "corrections": "исправления", "appeals": "апелляции", "fallback": "игра без кнопок",
    "absent": "неявка игрока", "runs": "заходы",
}


class CommandError(ValueError):
    """Arguments a command cannot be built from (the session words it as ``error.bad_command``)."""


def _int(args: dict, key: str) -> int:
    value = args.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
        raise CommandError(f"{key} must be a whole number, not {value!r}")
    return int(value)


class BattleAdapter:
    """The engine's events, view and plans for :class:`appliance.service.session.Session`."""

    # ------------------------------------------------------------ setup and profiles
    def profiles(self) -> list[dict]:
        """Every regulation profile the setup form offers."""
        out = []
        for name in engine.profile_names():
            profile = engine.load_profile(name)
            title_ru, _, title_en = profile.title.partition(" / ")
            out.append({"name": name, "title_ru": title_ru, "title_en": title_en or title_ru,
                        "min_players": profile.players_min, "max_players": profile.players_max,
                        "themes": 4, "red_themes": profile.questions_red_theme_multiplier != 1})
        return out

    def setup_event(self, args: dict, at_ns: int) -> ev.BattleSetUp:
        """``{profile, players: [names], themes: [{name, red}] | count, mode}`` to the setup event."""
        from appliance.rules.battle.errors import ProfileError

        try:
            profile = engine.load_profile(str(args.get("profile", "")))
        except ProfileError as error:
            raise CommandError(str(error)) from None
        players = args.get("players")
        themes = args.get("themes")
        if not isinstance(players, list) or not all(isinstance(name, str) for name in players):
            raise CommandError("players is a list of names")
        if isinstance(themes, int) and not isinstance(themes, bool):
            themes = [{"name": "", "red": False} for _ in range(themes)]
        if not isinstance(themes, list) or not all(isinstance(theme, dict) for theme in themes):
            raise CommandError("themes is a list of {name, red}")
        return ev.BattleSetUp(
            at_ns=at_ns, profile=profile, players=tuple(name.strip() for name in players), themes=len(themes),
            red_themes=tuple(i for i, theme in enumerate(themes) if theme.get("red")),
            theme_names=tuple(str(theme.get("name", "")).strip() for theme in themes),
            mode=str(args.get("mode", "buttons")))

    def resumable(self, battles) -> str | None:
        """The newest battle that is not over, to resume after a restart (the log is the truth)."""
        listed = battles.list()
        if not listed:
            return None
        newest = listed[-1]
        return None if newest["is_over"] else newest["battle_id"]

    # ------------------------------------------------------------ commands
    def command_events(self, name: str, state, args: dict, at_ns: int) -> list[ev.Event]:
        """The events one host command stands for (the engine then accepts or refuses them all)."""
        if name == "next":
            if state.phase == "between_themes":
                return [ev.ThemeStarted(at_ns=at_ns, name=str(args.get("name", "")))]
            value = state.expected_value()
            if value is None:  # let the engine say why (a question is on, the battle is over...)
                return [ev.PriceAnnounced(at_ns=at_ns, value_points=10)]
            # Announcing the price and starting to read are one gesture of the host (eurocup 2.5).
            return [ev.PriceAnnounced(at_ns=at_ns, value_points=value), ev.ReadingStarted(at_ns=at_ns)]
        if name == "reading_done":
            return [ev.ReadingFinished(at_ns=at_ns)]
        if name == "resume_reading":
            return [ev.ReadingResumed(at_ns=at_ns)]
        if name == "point":
            return [ev.AnswererPointed(at_ns=at_ns, player=state.answerer if state.answerer is not None else -1)]
        if name == "pick":
            return [ev.AnswererPointed(at_ns=at_ns, player=_int(args, "player"))]
        if name in ("right", "wrong"):
            return [ev.AnswerJudged(at_ns=at_ns, correct=name == "right")]
        if name == "short_form":
            return [ev.ShortFormGiven(at_ns=at_ns)]
        if name == "clarify":
            return [ev.ClarificationRequested(at_ns=at_ns)]
        if name == "extend":
            return [ev.AnswerTimeExtended(at_ns=at_ns, extra_ms=int(args.get("extra_ms") or
                                                                    state.profile.answer_limit_ms or 3000))]
        if name == "time":
            return [ev.TimeCalled(at_ns=at_ns)]
        if name == "withdraw":
            return [ev.QuestionWithdrawn(at_ns=at_ns, reason=str(args.get("reason", "")))]
        if name == "announce":
            return [ev.AnswerAnnounced(at_ns=at_ns)]
        if name == "undo":
            return [ev.ActionUndone(at_ns=at_ns)]
        if name == "claps":
            on = args.get("on")
            mode = ("claps" if on else "buttons") if on is not None else (
                "buttons" if state.mode == "claps" else "claps")
            return [ev.ModeChanged(at_ns=at_ns, mode=mode)]
        if name == "correct":
            question = args.get("question", len(state.questions) - 1)
            return [ev.RulingCorrected(at_ns=at_ns, question=int(question), player=_int(args, "player"),
                                       correct=bool(args.get("correct")), reason=str(args.get("reason", "")))]
        if name == "appeal":
            question = args.get("question", len(state.questions) - 1)
            return [ev.AppealLodged(at_ns=at_ns, player=_int(args, "player"), question=int(question),
                                    claim=str(args.get("claim", "")))]
        if name == "appeal_decide":
            correct = args.get("correct")
            return [ev.AppealDecided(at_ns=at_ns, appeal=_int(args, "appeal"), accepted=bool(args.get("accepted")),
                                     correct=None if correct is None else bool(correct))]
        raise CommandError(f"unknown command {name!r}")

    def check(self, state, events: list) -> Any:
        """Apply ``events`` to ``state`` without storing anything; raise the engine's error if refused."""
        for event in events:
            state = engine.apply(state, event)
        return state

    def press_event(self, state, press: dict) -> ev.ButtonPressed:
        """A press from the capture (kernel edge time ``t_ns``) or a phone (stamped at receipt)."""
        return ev.ButtonPressed(at_ns=int(press["t_ns"]), player=int(press["player"]),
                                source="phone" if press.get("source") == "phone" else "button")

    def expiry_event(self, state, key: str, at_ns: int):
        """The event a passed deadline stands for (``None``: only refresh the view)."""
        if key == "press_window":
            return ev.PressWindowExpired(at_ns=at_ns)  # eurocup 2.11.3: nobody signalled in time
        return None  # the answer countdown: the host judges (eurocup 2.8), "Время" becomes available

    def deadlines(self, state) -> dict[str, int]:
        """The state's running deadlines: the press window (fed to the engine) and the answer countdown."""
        out = {}
        if state.press_window_closes_ns is not None:
            out["press_window"] = state.press_window_closes_ns
        if state.answer_deadline_ns is not None:
            out["answer"] = state.answer_deadline_ns
        return out

    def capture_plan(self, state, battle_id: str) -> tuple:
        """What the capture must do now: ``("arm", eligible, round_id)`` or ``("disarm",)``."""
        question = state.current_question
        if not state.buttons_armed or question is None:
            return ("disarm",)
        # A new round whenever the set of players in play changes (a wrong answer, a pointing).
        round_id = f"{battle_id}/q{question.index}/r{len(question.rulings)}" + (
            "/p" if question.pointed_ns is not None else "")
        return ("arm", tuple(state.eligible_players), round_id)

    def event_dict(self, event) -> dict:
        data = engine.event_to_dict(event)
        if "profile" in data:
            data["profile"] = event.profile.name
        return data

    def word_rule_error(self, error) -> dict:
        """A refusal of the engine, Russian then English, with its rule citation."""
        rule = getattr(error, "rule", "")
        message = getattr(error, "message", str(error))
        key = self._rule_key(error)
        gloss = RULE_GLOSSES_RU.get(key, "правила боя")
        return {"rule": rule, "ru": f"Регламент ({rule}, {gloss}) не позволяет: {message}",
                "en": f"{rule}: {message}"}

    def _rule_key(self, error) -> str | None:
        """The profile's rule key behind a citation ("eurocup 2.8" -> "answer_limit"), for its Russian gloss."""
        name, _, section = getattr(error, "rule", "").partition(" ")
        if section.startswith("(profile: "):
            return section[len("(profile: "):-1]
        if name not in engine.profile_names():
            return None  # "battle setup", "battle log": not a profile's citation
        for key, cited in engine.load_profile(name).sections:
            if cited == section:
                return key
        return None

    # ------------------------------------------------------------ view
    def allowed(self, state, at_ns: int) -> dict[str, dict | None]:
        """For each host command: ``None`` if the engine accepts it now, else the worded refusal."""
        out: dict[str, dict | None] = {}
        at_ns = max(at_ns, state.last_at_ns)
        for name in HOST_COMMANDS:
            args = self._probe_args(name, state)
            try:
                self.check(state, self.command_events(name, state, args, at_ns))
                out[name] = None
            except engine.BattleRuleError as error:
                out[name] = self.word_rule_error(error)
            except (CommandError, IndexError, ValueError) as error:
                out[name] = {"rule": None, "ru": str(error), "en": str(error)}
        return out

    def _probe_args(self, name: str, state) -> dict:
        eligible = state.eligible_players
        last = state.last_question
        if name == "pick":
            return {"player": eligible[0] if eligible else 0}
        if name == "correct":
            ruling = last.rulings[-1] if last is not None and last.rulings else None
            return {"player": ruling.player if ruling else 0, "correct": not ruling.effective if ruling else True}
        if name == "appeal":
            ruling = last.rulings[-1] if last is not None and last.rulings else None
            return {"player": ruling.player if ruling else 0}
        if name == "appeal_decide":
            open_appeals = [i for i, appeal in enumerate(state.appeals) if not appeal.decided]
            return {"appeal": open_appeals[0] if open_appeals else -1, "accepted": True}
        return {}

    def view(self, state, battle_id: str, now_ns: int) -> dict:
        """The pages' view of ``state`` (docs/socketio-events.md, "view")."""
        question = state.current_question
        last = state.last_question
        shown = question or last
        profile = state.profile
        answered = question.answered if question else frozenset()
        eligible = set(state.eligible_players)
        players = [{
            "index": i, "name": name, "score": state.scores[i], "led": LED_COLOURS[i % len(LED_COLOURS)],
            "eligible": i in eligible, "answered": i in answered, "answering": state.answerer == i,
            "absent": i in state.setup.absent,
        } for i, name in enumerate(state.players)]
        themes = []
        for number in range(state.setup.themes):
            started = next((t for t in state.themes if not t.shootout and t.index == number), None)
            name = (started.name if started else "") or (
                state.setup.theme_names[number] if number < len(state.setup.theme_names) else "")
            red = number in state.setup.red_themes
            multiplier = profile.questions_red_theme_multiplier if red else 1
            played = [q.value_points for q in state.questions if started is not None and q.theme == started.index]
            themes.append({"index": number, "name": name or f"{number + 1}", "red": red,
                           "prices": [v * multiplier for v in profile.questions_values], "played": played,
                           "current": state.theme is not None and started is state.theme})
        for theme in state.themes:
            if theme.shootout:
                played = [q.value_points for q in state.questions if q.theme == theme.index]
                themes.append({"index": theme.index, "name": theme.name or "⚔", "red": False, "shootout": True,
                               "prices": list(profile.questions_values), "played": played,
                               "current": theme is state.theme})
        presses = []
        if shown is not None:
            for press in state.press_order(shown):
                presses.append({"player": press["player"], "t_ns": press["at_ns"],
                                "gap_ms": press["gap_ns"] / 1e6, "source": press["source"],
                                "outcome": press["outcome"]})
        deadlines = {"press_window": None, "answer": None}
        if state.press_window_closes_ns is not None and question is not None:
            opened = max(question.reading_finished_ns or 0, question.reopened_ns or 0)
            deadlines["press_window"] = {"at_ns": state.press_window_closes_ns,
                                         "total_ms": (state.press_window_closes_ns - opened) / 1e6}
        if state.answer_deadline_ns is not None and question is not None:
            started = question.pointed_ns or question.answer_deadline_ns - profile.answer_limit_ms * 10**6
            deadlines["answer"] = {"at_ns": state.answer_deadline_ns,
                                   "total_ms": max(1.0, (state.answer_deadline_ns - started) / 1e6)}
        theme = state.theme
        standings_rows = None
        table = engine.standings(state)
        rows = []
        for line in table.lines:
            details = ", ".join(f"{key}: {value}" for key, value in line.indicators.items())
            place = str(line.place) if line.place == line.place_to else f"{line.place}-{line.place_to}"
            rows.append({"place": place, "player": line.player, "name": line.name, "score": line.score,
                         "tiebreak": details, "placement_points": line.placement_points})
        standings_rows = rows
        return {
            "battle": {"id": battle_id, "profile": profile.name, "profile_title": profile.title,
                       "finished": state.is_over, "on_claps": state.mode == "claps", "phase": state.phase,
                       "shootout": table.shootout is not None and not state.is_over},
            "players": players,
            "themes": themes,
            "theme": None if theme is None else {
                "index": theme.index, "name": theme.name or f"{theme.index + 1}", "red": theme.red,
                "shootout": theme.shootout, "complete": state.is_theme_complete},
            "question": None if shown is None or theme is None else {
                "index": shown.index, "theme": theme.index, "theme_name": theme.name or f"{theme.index + 1}",
                "price": shown.value_points, "red": shown.red, "reading": shown.reading,
                "over": shown.is_over, "outcome": shown.outcome, "withdrawn": shown.withdrawn},
            "answerer": state.answerer,
            "pointed": bool(question is not None and question.pointed_ns is not None),
            "presses": presses,
            "deadlines": deadlines,
            "allowed": self.allowed(state, now_ns),
            "standings": standings_rows,
            "questions": [{"index": q.index, "theme_name": (state.themes[q.theme].name or f"{q.theme + 1}"),
                           "price": q.value_points, "outcome": q.outcome, "withdrawn": q.withdrawn}
                          for q in state.questions],
            "appeals": [{"index": i, "player": a.player, "question": a.question, "claim": a.claim,
                         "decided": a.decided, "accepted": a.accepted} for i, a in enumerate(state.appeals)],
        }
