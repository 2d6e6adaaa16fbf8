"""The words of every page, Russian first, English second: one catalogue, built from each screen's ``STRINGS``.

Each screen module (``web/host.py``, ``web/board.py``, a director blueprint...) declares its own
``STRINGS = {"key": ("русский", "English"), ...}``; :func:`Catalogue.merge` joins them and refuses a key
declared twice, so every string has one home. Templates call ``t("key")``; scripts get the same catalogue as
``SVOYAK.strings`` and call ``t("key")`` from ``static/js/svoyak.js``.

>>> catalogue = Catalogue({"yes": ("да", "yes")})
>>> catalogue.text("yes", "ru"), catalogue.text("yes", "en")
('да', 'yes')
>>> catalogue.text("missing", "en")
'missing'
>>> catalogue.merge({"yes": ("ага", "yep")}, source="other")
Traceback (most recent call last):
...
web.strings.DuplicateStringError: string 'yes' is declared twice (again in other)
"""

from __future__ import annotations

from appliance.errors import WebError

LANGUAGES = ("ru", "en")


class DuplicateStringError(WebError, KeyError):
    """Two screens declared the same string key."""

    def __str__(self) -> str:
        return str(self.args[0])


class Catalogue:
    """Strings by key, each a ``(ru, en)`` pair."""

    def __init__(self, strings: dict[str, tuple[str, str]] | None = None) -> None:
        self._strings: dict[str, tuple[str, str]] = {}
        if strings:
            self.merge(strings, source="core")

    def merge(self, strings: dict[str, tuple[str, str]], source: str) -> None:
        """Add ``strings``; raise :class:`DuplicateStringError` if a key exists already."""
        for key, pair in strings.items():
            if key in self._strings:
                raise DuplicateStringError(f"string {key!r} is declared twice (again in {source})")
            if len(pair) != 2:
                raise ValueError(f"string {key!r} in {source} must be a (ru, en) pair")
            self._strings[key] = tuple(pair)

    def text(self, key: str, language: str) -> str:
        """The string in ``language``; a missing key shows as itself, so a gap is visible, not fatal."""
        pair = self._strings.get(key)
        if pair is None:
            return key
        return pair[LANGUAGES.index(language) if language in LANGUAGES else 0]

    def both(self, key: str) -> dict[str, str]:
        """``{"ru": ..., "en": ...}``: for messages that name both languages (rejections)."""
        return {language: self.text(key, language) for language in LANGUAGES}

    def for_language(self, language: str) -> dict[str, str]:
        return {key: self.text(key, language) for key in self._strings}

    def __contains__(self, key: str) -> bool:
        return key in self._strings


# Strings shared by every page (base template, connection indicator, errors of the web layer).
STRINGS = {
    "app.name": ("Своя игра", "Svoyak"),
    "lang.switch": ("English", "Русский"),
    "conn.online": ("на связи", "online"),
    "conn.offline": ("нет связи", "offline"),
    "conn.connecting": ("подключение…", "connecting…"),
    "conn.resync": ("синхронизация…", "resyncing…"),
    "capture.up": ("кнопки на связи", "buttons connected"),
    "capture.down": ("нет связи с кнопками", "buttons not connected"),
    "capture.coarse": ("кнопки на связи · время нажатий менее точное (RPi.GPIO)",
                       "buttons connected · press timing less precise (RPi.GPIO)"),
    "conn.banner": ("Нет связи с боксом — команды не доходят. Переподключаемся…",
                    "No connection to the box: commands do not get through. Reconnecting…"),
    "conn.pending": ("ждёт связи", "waiting for the link"),
    "unit.ms": ("мс", "ms"),
    # Why a press does not count (the engine's press outcomes, eurocup 2.9, irkutsk 3.4): short, on the lists
    "press.beaten": ("позже", "later"),
    "press.early": ("рано", "early"),
    "press.late": ("поздно", "late"),
    "press.during_answer": ("не в счёт", "void"),
    "press.blocked": ("блок", "blocked"),
    "press.answered": ("повтор", "again"),
    "press.locked": ("штраф", "locked out"),
    "press.not_playing": ("не играет", "not playing"),
    "press.claps": ("на хлопках", "on claps"),
    "press.no_question": ("нет вопроса", "no question"),
    # The hall is told what changed (a correction, an appeal's decision): the board and the host page
    "announce.correction": ("Исправление решения", "Ruling corrected"),
    "announce.appeal_accepted": ("Апелляция принята", "Appeal accepted"),
    "announce.appeal_rejected": ("Апелляция отклонена", "Appeal rejected"),
    "announce.question_voided": ("Апелляция принята: вопрос снят", "Appeal accepted: the question is voided"),
    "announce.question": ("{name} · «{theme}», {price}", "{name} · «{theme}», {price}"),
    "announce.question_only": ("«{theme}», {price}", "«{theme}», {price}"),
    "announce.undone": ("Отменено действие ведущего", "The host took an action back"),
    "announce.withdrawn": ("Вопрос снят: очки за него не в счёт", "Question withdrawn: its points no longer count"),
    "announce.claps_on": ("Вопрос разыгрывается на хлопках", "This question is played on claps"),
    "announce.claps_off": ("Снова играем на кнопках", "Back to the buttons"),
    "announce.set_aside": ("Бой отложен, счёт сохранён", "The battle is set aside, its scores kept"),
    "announce.resumed": ("Бой продолжается", "The battle goes on"),
    "announce.now_right": ("ответ засчитан как верный", "the answer now counts as right"),
    "announce.now_wrong": ("ответ засчитан как неверный", "the answer now counts as wrong"),
    "announce.stands": ("решение остаётся в силе", "the ruling stands"),
    "announce.voided": ("{name}: ответ не в счёт — вопрос закончился раньше, на верном ответе",
                        "{name}: the answer is void: the question had ended with an earlier right answer"),
    "announce.restored": ("{name}: ответ снова в счёт", "{name}: the answer counts again"),
    "announce.section": ("п.\u00a0{section}", "§\u00a0{section}"),
    "announce.close": ("Скрыть", "Hide"),
    # The button test, said on the host page and the board while it is on
    "test.on_host": ("Идёт проверка кнопок: нажатия в игре не считаются. Проверка закончится сама, когда начнётся "
                     "вопрос", "Button test on: presses do not count. It ends by itself when a question starts"),
    "test.on_board": ("Проверка кнопок: нажмите свою кнопку", "Button test: press your button"),
    "test.pressed": ("Работают:", "Working:"),
    "test.none_yet": ("нажатий ещё не было", "no presses yet"),
    "test.button_n": ("Кнопка {n}", "Button {n}"),
    "test.ended": ("Проверка кнопок закончена: начался вопрос", "Button test over: a question has started"),
    # A theme with no name yet (a tournament battle whose themes the director has not named), SVOYAK.themeName
    "theme.unnamed": ("Тема {n}", "Theme {n}"),
    "theme.shootout": ("Перестрелка", "Shoot-out"),
    # Counts, worded by the one plural rule (templates: tn("count.themes", count=6); scripts: SVOYAK.format)
    "count.themes": ("{count} {count:тема|темы|тем}", "{count} {count:theme|themes}"),
    "count.players": ("{count} {count:игрок|игрока|игроков}", "{count} {count:player|players}"),
    "count.battles": ("{count} {count:бой|боя|боёв}", "{count} {count:battle|battles}"),
    "count.questions": ("{count} {count:вопрос|вопроса|вопросов}", "{count} {count:question|questions}"),
    "count.points": ("{count} {count:очко|очка|очков}", "{count} {count:point|points}"),
    "count.red_themes": ("{count} {count:красная|красные|красных}", "{count} red"),
    "battle.run_n": ("прогон {run}", "run {run}"),
    "battle.placement_points": ("очки за место", "placement points"),
    "nav.host": ("Ведущий", "Host"),
    "nav.board": ("Табло", "Scoreboard"),
    "nav.watch": ("Смотреть", "Watch"),
    "nav.player": ("Кнопка игрока (телефон)", "Player buzzer (phone)"),
    "nav.simulator": ("Симулятор кнопок", "Button simulator"),
    "nav.director": ("Директор турнира", "Tournament director"),
    "index.title": ("Своя игра: бокс с кнопками", "Svoyak buzzer box"),
    "index.lead": ("Выберите, что открыть на этом устройстве.", "Pick what this device shows."),
    "error.pin": ("Неверный PIN", "Wrong PIN"),
    "error.pin_locked": ("Слишком много неверных PIN на боксе: попробуйте чуть позже",
                         "Too many wrong PINs on this box: try again a little later"),
    "error.role": ("Эта роль не может так делать", "This role may not do that"),
    "error.bad_command": ("Неизвестная или неполная команда", "Unknown or incomplete command"),
    "error.unknown_event": ("Такой команды здесь нет", "No such command here"),
    "error.no_battle": ("Бой не начат", "No battle in progress"),
    "error.unknown_command": ("Такой команды нет", "There is no such command"),
    "error.argument_missing": ("В команде не хватает значения", "The command lacks a value"),
    "error.argument_type": ("Значение в команде не того вида", "A value in the command is of the wrong kind"),
    "error.argument_unknown": ("В команде лишнее значение", "The command has a value it does not take"),
    "error.argument_range": ("Значение в команде вне допустимых пределов", "A value in the command is out of range"),
    "error.unknown_profile": ("Такого регламента нет", "There is no such regulation"),
    "error.busy": ("Предыдущая такая команда ещё выполняется", "The previous such command is still running"),
    "error.phones_off": ("Телефоны-кнопки выключены ведущим", "Phone buzzers are off (the host decides)"),
    "error.seat_code": ("Неверный код места: спросите код у ведущего",
                        "Wrong seat code: ask the host for your code"),
    "error.seat_code_locked": ("Слишком много неверных кодов мест на боксе: попробуйте чуть позже",
                               "Too many wrong seat codes on this box: try again a little later"),
    "error.simulator_off": ("Бокс работает не в режиме симулятора", "The box is not running as a simulator"),
    "error.capture_down": ("Нет связи с кнопками", "The buttons are not connected"),
    "error.battle_unfinished": ("Бой не окончен: продолжите его или отложите",
                                "The battle is not over: go on with it or set it aside"),
    "error.no_such_battle": ("На этом боксе нет такого боя", "This box holds no such battle"),
    "error.internal": ("Внутренняя ошибка, команда не применена", "Internal error: the command was not applied"),
}


def default_catalogue(*screen_modules) -> Catalogue:
    """The core strings plus each module's ``STRINGS`` (modules without one add nothing)."""
    catalogue = Catalogue(STRINGS)
    for module in screen_modules:
        extra = getattr(module, "STRINGS", None)
        if extra:
            catalogue.merge(extra, source=module.__name__)
    return catalogue
