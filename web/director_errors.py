"""The tournament desk's refusals worded for the director: Russian first, then English.

The tournament engine (``appliance.rules.tournament``) and the desk (``appliance.service.tournaments``) refuse
with an error class and an English sentence that names the rule. This catalogue words each known refusal by a
code: the error class and a pattern of its English sentence, whose named parts (numbers, ids, rules) fill both
wordings. A refusal the catalogue does not know yet still reads Russian first: its class's heading, then the
engine's English sentence, so nothing is hidden.

>>> from appliance.rules.tournament.errors import DrawError
>>> words = word(DrawError("18 players cannot fill 9 battles of at least 3: 27 needed (irkutsk 2.1-2.2)"))
>>> words["code"], words["ru"]
('draw.too_few', 'Игроков 18, а нужно не меньше 27, чтобы заполнить 9 боёв по 3 и более (irkutsk 2.1-2.2)')
>>> word(DrawError("something new"))["ru"]
'Жеребьёвка невозможна: something new'
"""

from __future__ import annotations

import re

from appliance.errors import SvoyakError
from appliance.rules.tournament.errors import (DrawError, FormatError, RegistrationError, ResultError, StageError,
                                               TournamentError, UnknownFormatError)
from appliance.service.tournaments import UnknownTournamentError

# code: (error class, pattern of the English sentence, Russian wording, English wording)
CATALOGUE: dict[str, tuple[type, str, str, str]] = {
    "registration.no_name": (
        RegistrationError, r"a player needs an id and a name",
        "У игрока должно быть имя", "A player needs a name"),
    "registration.duplicate": (
        RegistrationError, r"player '(?P<player>[^']*)' is already registered",
        "Игрок {player} уже зарегистрирован", "Player {player} is already registered"),
    "registration.closed": (
        RegistrationError, r"registration is closed \((?P<rule>[^)]*)\)",
        "Регистрация закрыта ({rule}); игрока ещё можно добавить как позднюю заявку",
        "Registration is closed ({rule}); a late entry is still possible"),
    "registration.late_after_results": (
        RegistrationError, r"results are in: a late entry",
        "Результаты уже есть: поздняя заявка больше невозможна",
        "Results are in: a late entry can no longer join"),
    "registration.needs_team": (
        RegistrationError, r"category (?P<category>\S+) needs a team \((?P<rule>[^)]*)\)",
        "В категории «{category}» нужно указать команду ({rule})",
        "Category «{category}» needs a team ({rule})"),
    "registration.team_full": (
        RegistrationError, r"team '(?P<team>[^']*)' already has (?P<count>\d+) player\(s\) in category "
                           r"(?P<category>\S+); at most (?P<most>\d+) \((?P<rule>[^)]*)\)",
        "От команды «{team}» в категории «{category}» уже {count}, можно не больше {most} ({rule})",
        "Team «{team}» already has {count} in category «{category}»; at most {most} ({rule})"),
    "registration.no_player": (
        RegistrationError, r"no player '(?P<player>[^']*)'",
        "Нет игрока {player}", "No player {player}"),
    "registration.withdrawn": (
        RegistrationError, r"player '(?P<player>[^']*)' has already withdrawn",
        "Игрок {player} уже снят", "Player {player} has already withdrawn"),
    "registration.already_closed": (
        RegistrationError, r"registration is already closed",
        "Регистрация уже закрыта", "Registration is already closed"),
    "registration.deadline": (
        RegistrationError, r"deadline '(?P<deadline>[^']*)': give a date",
        "Срок «{deadline}» не понят: укажите дату и время",
        "Deadline «{deadline}» not understood: give a date and a time"),
    "seeding.count": (
        RegistrationError, r"the format seeds exactly (?P<wanted>\d+) players \((?P<rule>[^)]*)\); (?P<given>\d+) given",
        "Сеяных должно быть ровно {wanted} ({rule}), указано {given}",
        "The format seeds exactly {wanted} players ({rule}); {given} given"),
    "seeding.twice": (
        RegistrationError, r"a player is seeded twice",
        "Игрок указан в посеве дважды", "A player is seeded twice"),
    "seeding.inactive": (
        RegistrationError, r"seeded player '(?P<player>[^']*)' is not an active entrant",
        "Сеяный {player} не среди участников", "Seeded player {player} is not an active entrant"),
    "seeding.after_draw": (
        StageError, r"seeds are set before the first draw",
        "Посев задаётся до первой жеребьёвки", "Seeds are set before the first draw"),
    "draw.too_few": (
        DrawError, r"(?P<players>\d+) players cannot fill (?P<battles>\d+) battles of at least (?P<size>\d+): "
                   r"(?P<needed>\d+) needed(?: \((?P<rule>[^)]*)\))?",
        "Игроков {players}, а нужно не меньше {needed}, чтобы заполнить {battles} боёв по {size} и более ({rule})",
        "{players} players, but {battles} battles of at least {size} need {needed} ({rule})"),
    "draw.too_many": (
        DrawError, r"(?P<players>\d+) players do not fit (?P<battles>\d+) battles of at most (?P<size>\d+)"
                   r"(?: \((?P<rule>[^)]*)\))?",
        "Игроков {players}: не помещаются в {battles} боёв по {size} ({rule})",
        "{players} players do not fit {battles} battles of at most {size} ({rule})"),
    "draw.no_split": (
        DrawError, r"(?P<players>\d+) players cannot be split into battles of (?P<low>\d+)-(?P<high>\d+)"
                   r"(?: \((?P<rule>[^)]*)\))?",
        "{players} игроков не делятся на бои по {low}–{high} ({rule})",
        "{players} players cannot be split into battles of {low}-{high} ({rule})"),
    "draw.no_players": (
        DrawError, r"no players to draw", "Некого жеребьёвать: нет игроков", "No players to draw"),
    "draw.teams_meet": (
        DrawError, r"team '(?P<team>[^']*)' has (?P<count>\d+) players in this stage but there are only "
                   r"(?P<battles>\d+) battles",
        "От команды «{team}» {count} игроков, а боёв только {battles}: двое встретятся",
        "Team «{team}» has {count} players but only {battles} battles: two would meet"),
    "draw.seeds": (
        DrawError, r"one seed per battle needs (?P<battles>\d+) seeded players, (?P<seeded>\d+) are seeded",
        "По одному сеяному в бой: нужно {battles} сеяных, посеяно {seeded}",
        "One seed per battle needs {battles} seeded players; {seeded} are seeded"),
    "draw.nothing": (
        StageError, r"nothing to draw now",
        "Сейчас жеребьёвать нечего", "Nothing to draw now"),
    "draw.not_yet": (
        StageError, r"stage (?P<stage>\S+) cannot be drawn yet",
        "Этап {stage} пока нельзя жеребьёвать: предыдущий не закончен или есть перестрелка",
        "Stage {stage} cannot be drawn yet: an earlier stage is unfinished or has an open tie"),
    "draw.has_results": (
        StageError, r"(?:stage (?P<stage>\S+) has results|results are in: the bracket|round \d+ of (?P<of>\S+) has "
                    r"results)",
        "Результаты уже есть: пережеребьёвка невозможна", "Results are in: no re-draw"),
    "rooms.none": (
        StageError, r"(?:name at least one room|a room needs a name)",
        "Назовите хотя бы один зал", "Name at least one room"),
    "battle.unknown": (
        StageError, r"no battle '(?P<battle>[^']*)'", "Нет боя {battle}", "No battle {battle}"),
    "battle.has_result": (
        StageError, r"battle (?P<battle>\S+) already has a result",
        "У боя {battle} уже есть результат", "Battle {battle} already has a result"),
    "result.scores": (
        ResultError, r"battle (?P<battle>\S+): each line needs a player and a whole-number score",
        "Бой {battle}: у каждого игрока должны быть очки целым числом",
        "Battle {battle}: every player needs a whole-number score"),
    "result.places": (
        ResultError, r"battle (?P<battle>\S+): places (?P<places>\[[^]]*\]) are not 1, 2",
        "Бой {battle}: места {places} должны идти 1, 2, …; разделённые места занимают свои номера (1, 2, 2, 4)",
        "Battle {battle}: places {places} must be 1, 2, ...; shared places take the places they cover (1, 2, 2, 4)"),
    "result.later_stage": (
        ResultError, r"battle (?P<battle>\S+): a later stage has results",
        "Бой {battle}: следующий этап уже сыгран, результат не меняется",
        "Battle {battle}: a later stage has results; this result can no longer change"),
    "sheet.length": (
        ResultError, r"sheet of '(?P<player>[^']*)': (?P<got>\d+) marks, expected (?P<expected>\d+)",
        "Бланк {player}: отметок {got}, а нужно {expected}", "Sheet of {player}: {got} marks, {expected} expected"),
    "sheet.marks": (
        ResultError, r"sheet of '(?P<player>[^']*)': unknown mark\(s\) '(?P<marks>[^']*)'",
        "Бланк {player}: непонятные отметки «{marks}»; можно + − 2 x 0",
        "Sheet of {player}: unknown marks «{marks}»; use + - 2 x 0"),
    "sheet.not_writer": (
        ResultError, r"player '(?P<player>[^']*)' does not write stage (?P<stage>\S+)",
        "Игрок {player} не пишет этап {stage}", "Player {player} does not write stage {stage}"),
    "sheet.closed": (
        StageError, r"stage (?P<stage>\S+) is closed: no more sheets",
        "Приём бланков этапа {stage} закрыт", "Sheet entry for stage {stage} is closed"),
    "sheet.not_open": (
        StageError, r"stage (?P<stage>\S+) is not open yet",
        "Этап {stage} ещё не начат (сначала жеребьёвка)", "Stage {stage} is not open yet (draw it first)"),
    "tie.unknown": (
        ResultError, r"no open tie", "Такой перестрелки нет", "No such open tie"),
    "tie.order": (
        ResultError, r"tie (?P<tie>\S+): order must rank exactly (?P<players>\[[^]]*\])",
        "Перестрелка: укажите порядок ровно этих игроков: {players}",
        "Shoot-out: the order must rank exactly {players}"),
    "format.change": (
        FormatError, r"change '(?P<key>[^']*)': say stage.field; stages are (?P<stages>\[[^]]*\])",
        "Изменение «{key}»: пишите этап.поле, этапы: {stages}",
        "Change «{key}»: write stage.field; stages are {stages}"),
    "format.field": (
        FormatError, r"(?P<where>.+?): unknown field\(s\) (?P<fields>[^;]+); known: (?P<known>.+)",
        "{where}: неизвестное поле {fields}; есть: {known}",
        "{where}: unknown field(s) {fields}; known: {known}"),
    "format.unknown": (
        UnknownFormatError, r"no tournament preset '(?P<name>[^']*)'",
        "Нет регламента «{name}»", "No regulation «{name}»"),
    "import.json": (
        ResultError, r"not a JSON export",
        "Это не JSON-экспорт турнира", "Not a tournament JSON export"),
    "import.log": (
        ResultError, r"(?:not a tournament log|a tournament log starts with TournamentCreated)",
        "В файле нет журнала турнира", "The file holds no tournament log"),
    "import.exists": (
        StageError, r"tournament '(?P<tid>[^']*)' is already on this box",
        "Турнир {tid} уже есть на этом боксе", "Tournament {tid} is already on this box"),
    "tournament.unknown": (
        UnknownTournamentError, r"no tournament '(?P<tid>[^']*)'",
        "Нет турнира {tid}", "No tournament {tid}"),
    "box.no_session": (
        ResultError, r"this box has no battle session running",
        "На этом боксе не запущен бой", "This box has no battle session running"),
    "seed.number": (
        ValueError, r"seed '(?P<seed>[^']*)' is not a whole number",
        "Зерно жеребьёвки «{seed}» — не целое число", "The draw seed «{seed}» is not a whole number"),
}

# A refusal not in the catalogue: its class's heading, then the engine's sentence (most specific class first).
HEADINGS: tuple[tuple[type, str, str], ...] = (
    (UnknownTournamentError, "Турнир не найден", "Tournament not found"),
    (RegistrationError, "Регистрация: отказ", "Registration refused"),
    (DrawError, "Жеребьёвка невозможна", "The draw is not possible"),
    (ResultError, "Результат не принят", "Result not accepted"),
    (StageError, "Этап: отказ", "Stage refused"),
    (FormatError, "Формат турнира: ошибка", "Tournament format error"),
    (TournamentError, "Турнир: отказ", "Tournament refused"),
    (SvoyakError, "Команда не выполнена", "Command refused"),
)

_COMPILED = {code: (cls, re.compile(pattern), ru, en) for code, (cls, pattern, ru, en) in CATALOGUE.items()}


class DeskInputError(SvoyakError, ValueError):
    """A desk form field that is not what it says (a seed that is not a number...), caught in the web layer."""


def word(error: BaseException) -> dict[str, str]:
    """``{"code", "ru", "en"}`` for a refusal: the catalogue's wording, else its class's heading + the sentence."""
    text = str(error)
    for code, (cls, pattern, ru, en) in _COMPILED.items():
        if isinstance(error, cls):
            match = pattern.search(text)
            if match:
                parts = {key: value or "" for key, value in match.groupdict().items()}
                ru_text, en_text = ru.format(**parts), en.format(**parts)
                if "rule" in parts and not parts["rule"]:
                    ru_text, en_text = ru_text.replace(" ()", ""), en_text.replace(" ()", "")
                return {"code": code, "ru": ru_text, "en": en_text}
    for cls, ru, en in HEADINGS:
        if isinstance(error, cls):
            return {"code": cls.__name__, "ru": f"{ru}: {text}", "en": f"{en}: {text}"}
    return {"code": type(error).__name__, "ru": text, "en": text}
