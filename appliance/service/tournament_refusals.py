"""The tournament desk's refusals worded for people, Russian first, then English, by their stable ``code``.

One catalogue (:data:`REFUSALS`) for every refusal the director can meet: the tournament engine's
(``appliance.rules.tournament.errors.REFUSAL_CODES``) and the desk's own (:data:`DESK_CODES`). Each line is
filled in from the error's ``params``; nothing here reads the English sentence. A test checks that every code
raised anywhere is worded here and documented in ``docs/tournament.md``.

>>> from appliance.rules.tournament.errors import DrawError
>>> error = DrawError("...", code="draw.too_few",
...                   params={"players": 18, "battles": 9, "size": 3, "needed": 27, "rule": "irkutsk 2.1-2.2"})
>>> word(error)["ru"]
'Игроков 18, а нужно не меньше 27, чтобы заполнить 9 боёв по 3 и более (irkutsk 2.1-2.2)'
>>> word(DrawError("...", code="draw.no_players", params={"rule": ""}))["en"]
'No players to draw'
"""

from __future__ import annotations

from typing import Any

from appliance.config import MAX_FIELD_CHARS as FIELD_CHARS
from appliance.words import format_counts

# Refusals of the desk itself and of its pages' fields (not the engine's): code -> what it means, params.
DESK_CODES: dict[str, str] = {
    "tournament.unknown": "no tournament with this id on this box; params: tid",
    "input.seed": "a draw seed typed on a form is not a whole number; params: seed",
    "input.team_rank": "a team rank typed on a form is not a whole number; params: rank",
    "input.spares": "spare themes typed on the «play on this box» form are not 0 to the limit; params: limit",
}

# code -> (Russian, English), each filled in from the error's params by name.
REFUSALS: dict[str, tuple[str, str]] = {
    "tournament.refused": ("Турнир: отказ ({message})", "Tournament: refused ({message})"),
    "tournament.not_created": ("Турнира ещё нет: журнал начинается с создания турнира",
                               "No tournament yet: a log starts with TournamentCreated"),
    "tournament.created_twice": ("Турнир уже создан", "The tournament already exists"),
    "tournament.exists": ("Турнир {tid} уже есть", "Tournament {tid} exists already"),
    "tournament.unknown": ("Нет турнира {tid}", "No tournament {tid}"),
    "registration.no_name": ("У игрока должно быть имя", "A player needs a name"),
    "registration.duplicate": ("Игрок {player} уже зарегистрирован", "Player {player} is already registered"),
    "registration.closed": ("Регистрация закрыта ({rule}); игрока ещё можно добавить как позднюю заявку",
                            "Registration is closed ({rule}); a late entry is still possible"),
    "registration.late_after_results": ("Результаты уже есть: поздняя заявка больше невозможна",
                                        "Results are in: a late entry can no longer join"),
    "registration.needs_team": ("В категории «{category}» нужно указать команду ({rule})",
                                "Category «{category}» needs a team ({rule})"),
    "registration.team_full": ("От команды «{team}» в категории «{category}» уже {count} "
                               "{count:игрок|игрока|игроков}, можно не больше {most} ({rule})",
                               "Team «{team}» already has {count} {count:player|players} in category «{category}»; "
                               "at most {most} ({rule})"),
    "registration.no_player": ("Нет игрока {player}", "No player {player}"),
    "registration.withdrawn": ("Игрок {player} уже снят", "Player {player} has already withdrawn"),
    "registration.already_closed": ("Регистрация уже закрыта", "Registration is already closed"),
    "registration.deadline": ("Срок «{deadline}» не понят: укажите дату и время",
                              "Deadline «{deadline}» not understood: give a date and a time"),
    "seeding.after_draw": ("Посев задаётся до первой жеребьёвки", "Seeds are set before the first draw"),
    "seeding.count": ("Сеяных должно быть ровно {wanted} ({rule}), указано {given}",
                      "The format seeds exactly {wanted} players ({rule}); {given} given"),
    "seeding.twice": ("Игрок указан в посеве дважды", "A player is seeded twice"),
    "seeding.inactive": ("Сеяный {player} не среди участников", "Seeded player {player} is not an active entrant"),
    "draw.nothing": ("Сейчас жеребьёвать нечего", "Nothing to draw now"),
    "draw.not_yet": ("Этап {stage} пока нельзя жеребьёвать: предыдущий не закончен или есть перестрелка",
                     "Stage {stage} cannot be drawn yet: an earlier stage is unfinished or has an open tie"),
    "draw.has_results": ("Результаты уже есть: пережеребьёвка невозможна", "Results are in: no re-draw"),
    "draw.rounds_done": ("Этап {stage}: все туры ({rounds}) уже разыграны",
                         "Stage {stage}: all {rounds} rounds are drawn"),
    "draw.round_order": ("Этап {stage}: жеребьёвка тура {round}, а очередь тура {expected}",
                         "Stage {stage}: round {round} drawn, round {expected} expected"),
    "draw.bracket_whole": ("Сетка жеребьёвается целиком, с этапа {stage} ({rule})",
                           "The whole bracket is drawn at once, from stage {stage} ({rule})"),
    "draw.records_ahead": ("Этап {stage}: сетку нельзя разыграть заранее через правило по местам в этапах",
                           "Stage {stage}: a bracket cannot be drawn ahead through a records rule"),
    "draw.battle_repeats": ("Номер боя {battle} повторяется", "Battle id {battle} repeats"),
    "draw.unknown_player": ("В бою {battle} неизвестный игрок {player}", "Battle {battle} seats unknown player {player}"),
    "draw.bad_seat": ("Бой {battle}: место «{seat}» не ссылается ни на один результат этапа",
                      "Battle {battle}: seat «{seat}» names no result of a stage"),
    "draw.no_players": ("Некого жеребьёвать: нет игроков ({rule})", "No players to draw ({rule})"),
    "draw.too_many": ("{players} {players:игрок|игрока|игроков} не помещаются в {battles} {battles:бой|боя|боёв} "
                      "по {size} ({rule})",
                      "{players} {players:player|players} do not fit {battles} {battles:battle|battles} of at most "
                      "{size} ({rule})"),
    "draw.too_few": ("Игроков {players}, а нужно не меньше {needed}, чтобы заполнить {battles} "
                     "{battles:бой|боя|боёв} по {size} и более ({rule})",
                     "{players} {players:player|players}, but {battles} {battles:battle|battles} of at least {size} "
                     "need {needed} ({rule})"),
    "draw.no_split": ("Игроков {players}: не делятся на бои по {low}–{high} ({rule})",
                      "{players} players cannot be split into battles of {low}-{high} ({rule})"),
    "draw.seat_count": ("Жеребьёвка не сошлась: {players} {players:игрок|игрока|игроков} на {seats} "
                        "{seats:место|места|мест}",
                        "The draw does not add up: {players} {players:player|players}, {seats} {seats:seat|seats}"),
    "draw.drawn_twice": ("Жеребьёвка не сошлась: игрок попал в бои дважды", "The draw seats a player twice"),
    "draw.constraints": ("Игрока {player} не посадить, не нарушив условия жеребьёвки ({rule})",
                         "Player {player} cannot be seated without breaking a draw constraint ({rule})"),
    "draw.teams_meet": ("От команды «{team}» {count} {count:игрок|игрока|игроков} на {battles} "
                        "{battles:бой|боя|боёв}: двое встретятся ({rule})",
                        "Team «{team}» has {count} {count:player|players} but only {battles} "
                        "{battles:battle|battles}: two would meet ({rule})"),
    "draw.seeds": ("По одному сеяному в бой: сеяных нужно {battles}, а посеяно {seeded} ({rule})",
                   "One seed per battle needs {battles} seeded players; {seeded} are seeded ({rule})"),
    "draw.no_source": ("Этап {stage} жеребьёвается по группам, но в него никто не выходит",
                       "Stage {stage} draws by group but no stage sends players to it"),
    "draw.no_source_battle": ("Игрок {player} вышел в этап {stage} без боя в этапе {source}: жеребьёвка вручную",
                              "Player {player} reached {stage} without a battle in {source}: draw it by hand"),
    "draw.group_size": ("Группа {group}: {count} {count:игрок|игрока|игроков}, а в бою от {low} до {high} ({rule})",
                        "Group {group}: {count} players for a battle of {low}-{high} ({rule})"),
    "draw.qualifying_fill": ("{players} {players:участник|участника|участников}: один отборочный этап (бои по "
                             "{low}–{high}) заполняет {fills} {fills:место|места|мест} не больше чем из {most} "
                             "{most:участника|участников|участников} ({rule})",
                             "{players} entrants: one qualifying stage of battles of {low}-{high} fills {fills} "
                             "places from at most {most} ({rule})"),
    "draw.qualifying_few": ("Отбор: игроков {players}, не заполнить боёв: {battles} ({rule})",
                            "Qualifying: {players} players cannot fill {battles} battles ({rule})"),
    "draw.qualifying_teams": ("Отбор: нужно игроков {players}, не больше {battles} от команды, а большие команды "
                              "оставляют только {left} ({rule})",
                              "Qualifying needs {players} players with at most {battles} of a team; the big teams "
                              "leave {left} ({rule})"),
    "draw.too_few_for_battle": ("{players} {players:участник|участника|участников}: для боя нужно не меньше "
                                "{size} ({rule})",
                                "{players} entrants cannot play a battle of at least {size} ({rule})"),
    "draw.byes_fixed": ("Этап {stage}: для пропусков нужны бои, из которых выходит определённое число игроков "
                        "({rule})",
                        "Stage {stage}: byes need battles that send a fixed number of places on ({rule})"),
    "draw.byes_small": ("Участников {players}: с пропусками в этап {joined} в этапе {stage} остаётся игроков "
                        "{playing} на боёв {battles}, и в одном бою меньше {size}; допустимы только бои по {low} "
                        "({rule})",
                        "{players} entrants: byes into {joined} leave {playing} players for {battles} battles of "
                        "{stage}, one below {size}; battles of {low} only ({rule})"),
    "rooms.none": ("Назовите хотя бы один зал", "Name at least one room"),
    "battle.unknown": ("Нет боя {battle}", "No battle {battle}"),
    "battle.not_ready": ("Бой {battle}: игроки ещё не известны (нет результатов предыдущих боёв)",
                         "Battle {battle}: its players are not known yet (earlier results missing)"),
    "battle.has_result": ("У боя {battle} уже есть результат", "Battle {battle} already has a result"),
    "box.no_session": ("На этом боксе не запущен бой", "This box has no battle session running"),
    "result.scores": ("Бой {battle}: у каждого игрока должны быть очки целым числом",
                      "Battle {battle}: every player needs a whole-number score"),
    "result.no_line": ("Бой {battle}: нет строки результата игрока {player}",
                       "Battle {battle}: no result line for player {player}"),
    "result.two_lines": ("Бой {battle}: у игрока две строки результата", "Battle {battle}: a player has two lines"),
    "result.players": ("Бой {battle}: в результате игроки {given}, а в бою — {seated}",
                       "Battle {battle}: result lines for {given}, the battle seats {seated}"),
    "result.places": ("Бой {battle}: места {places} должны идти 1, 2, …; разделённые места занимают свои номера "
                      "(1, 2, 2, 4)",
                      "Battle {battle}: places {places} must be 1, 2, ...; shared places take the places they "
                      "cover (1, 2, 2, 4)"),
    "result.later_stage": ("Бой {battle}: следующий этап уже сыгран, результат не меняется",
                           "Battle {battle}: a later stage has results; this result can no longer change"),
    "result.ranking_key": ("Неизвестный показатель для ранжирования «{key}»", "Unknown ranking key «{key}»"),
    "sheet.length": ("Бланк {player}: {got} {got:отметка|отметки|отметок}, а нужно {expected}",
                     "Sheet of {player}: {got} {got:mark|marks}, {expected} expected"),
    "sheet.marks": ("Бланк {player}: непонятные отметки «{marks}»; можно + − 2 x 0",
                    "Sheet of {player}: unknown marks «{marks}»; use + - 2 x 0"),
    "sheet.not_written": ("Этап {stage} — не письменный отбор", "Stage {stage} is not a written round"),
    "sheet.not_open": ("Этап {stage} ещё не начат (сначала жеребьёвка)", "Stage {stage} is not open yet (draw it first)"),
    "sheet.closed": ("Приём бланков этапа {stage} закрыт", "Sheet entry for stage {stage} is closed"),
    "sheet.not_writer": ("Игрок {player} не пишет этап {stage}", "Player {player} does not write stage {stage}"),
    "stage.closes_with_results": ("Этап {stage} закрывается результатами боёв, не вручную",
                                  "Stage {stage} closes with its battles' results, not by hand"),
    "stage.already_closed": ("Этап {stage} уже закрыт", "Stage {stage} is already closed"),
    "themes.unknown_pack": ("Ни один бой не играет набор тем {pack}", "No drawn battle plays theme pack {pack}"),
    "themes.not_text": ("Названия тем — текст", "Theme names are text"),
    "themes.too_many": ("Набор тем {pack}: названий больше, чем тем ({themes})",
                        "Theme pack {pack}: {names} names for {themes} themes"),
    "themes.too_long": ("Название темы длиннее {limit} знаков", "A theme name is longer than {limit} characters"),
    "themes.bad_sources": ("Набор тем {pack}: у каждой темы из пакета — пакет и номер темы в нём",
                           "Theme pack {pack}: each theme from a package needs its package and theme number"),
    "tie.unknown": ("Такой перестрелки нет", "No such open tie"),
    "tie.order": ("Перестрелка: укажите порядок ровно этих игроков: {players}",
                  "Shoot-out: the order must rank exactly {players}"),
    "format.unknown": ("Нет регламента «{name}»", "No regulation «{name}»"),
    "format.read": ("Файл формата {path} не читается: {reason}", "Cannot read format file {path}: {reason}"),
    "format.toml": ("Файл формата {path} — не TOML: {error}", "Format file {path} is not valid TOML: {error}"),
    "format.change": ("Изменение «{key}»: пишите этап.поле, этапы: {stages}",
                      "Change «{key}»: write stage.field; stages are {stages}"),
    "format.field": ("{where}: неизвестное поле {fields}; есть: {known}",
                     "{where}: unknown field(s) {fields}; known: {known}"),
    "format.value": ("{where}: неверное значение поля ({error})", "{where}: a field has a wrong value ({error})"),
    "format.type": ("{where}: поле «{field}»: {expected}", "{where}: field «{field}» {expected}"),
    "format.choice": ("{where}: поле {field} = «{value}», а можно: {choices}",
                      "{where}: {field} «{value}» is not one of {choices}"),
    "format.category": ("Неизвестная категория «{category}»; есть: {known}",
                        "Unknown entrant category «{category}»; known: {known}"),
    "format.stage": ("В формате {format} нет этапа «{stage}»; этапы: {stages}",
                     "Format {format} has no stage «{stage}»; stages are {stages}"),
    "format.no_stages": ("{where}: в формате нет ни одного этапа", "{where}: a format needs at least one stage"),
    "format.stage_ids": ("{where}: номера этапов повторяются: {ids}", "{where}: stage ids repeat: {ids}"),
    "format.battle_size": ("{where}: бои по {low}–{high} игроков, а за боксом от 2 до 4",
                           "{where}: battles of {low}-{high} players; a box seats 2-4"),
    "format.preliminary": ("{where}: preliminary_min_battle_size — от 2 до {high}",
                           "{where}: preliminary_min_battle_size must be 2-{high}"),
    "format.byes": ("{where}: пропуски возможны, только если дальше сетка с определённым числом боёв",
                    "{where}: byes need a bracket with a fixed number of battles from here on"),
    "format.red_values": ("{where}: в red_values нужна одна цена на вопрос",
                          "{where}: red_values must have one value per question"),
    "format.red_themes": ("{where}: красных тем больше, чем тем", "{where}: more red themes than themes"),
    "format.swiss_points": ("{where}: швейцарской системе нужны очки за места ({rule})",
                            "{where}: a Swiss stage needs placement_points ({rule})"),
    "format.advance_selector": ("{where}, правило выхода №{number}: задайте ровно одно из places, best, top, records",
                                "{where} advance #{number}: set exactly one of places, best, top, records"),
    "format.advance_best": ("{where}, правило выхода №{number}: для best нужно place",
                            "{where} advance #{number}: 'best' needs 'place'"),
    "format.advance_to": ("{where}: выход в этап «{stage}», а он не следующий",
                          "{where}: advance goes to «{stage}», which is not a later stage"),
    "format.record_stage": ("{where}: правило по местам называет этап «{stage}» — не этот и не предыдущий",
                            "{where}: a record names «{stage}», not this or an earlier stage"),
    "format.no_advance": ("{where}: нет правила выхода, дальше никто не пройдёт",
                          "{where}: no advance rule, so nobody reaches the later stages"),
    "format.joins_at": ("{where}: категория {category} вступает в неизвестный этап «{stage}»",
                        "{where}: category {category} joins at unknown stage «{stage}»"),
    "import.json": ("Это не JSON-экспорт турнира", "Not a tournament JSON export"),
    "import.log": ("В файле нет журнала турнира", "The file holds no tournament log"),
    "import.exists": ("Турнир {tid} уже есть на этом боксе", "Tournament {tid} is already on this box"),
    "import.event": ("В журнале неизвестное событие «{type}» (версия {version})",
                     "The log holds an unknown event «{type}» (version {version})"),
    "import.field": ("Событие №{number} журнала ({type}), поле «{field}»: {expected}",
                     "Event #{number} of the log ({type}): field «{field}» {expected}"),
    "event.field": ("Команда не сохранена ({type}), поле «{field}»: {expected}",
                    "Command not stored ({type}): field «{field}» {expected}"),
    "input.seed": ("Зерно жеребьёвки «{seed}» — не целое число", "The draw seed «{seed}» is not a whole number"),
    "input.team_rank": ("Место команды «{rank}» — не целое число", "The team rank «{rank}» is not a whole number"),
    "input.spares": ("Запасных тем — целое число от 0 до {limit}", "Spare themes: a whole number from 0 to {limit}"),
    "simulate.stuck": ("Моделирование остановилось на шаге {step} {stage}", "The simulation is stuck at {step} {stage}"),
}

# Params that are names of a kind, not figures: worded per language (``import.field``'s ``expected``).
PARAM_WORDS: dict[str, dict[str, tuple[str, str]]] = {
    "expected": {
        "bool": ("нужно да или нет (true/false)", "must be true or false"),
        "whole": ("нужно целое число", "must be a whole number"), "text": ("нужна строка", "must be text"),
        "object": ("нужен объект", "must be an object"), "list": ("нужен список", "must be a list"),
        "pair": ("нужен список из двух", "must be a list of two"), "known": ("неизвестного вида", "is of no known kind"),
        "absent": ("такого поля нет", "is not a field of this event"), "given": ("не указано", "is missing"),
        "themes": ("нужен список тем {colour, values}", 'must be a list of {"colour", "values"}'),
        "values": ("нужен объект «цена: число»", "must be an object of question values"),
        "short": (f"нужна строка не длиннее {FIELD_CHARS} знаков", f"must be text of at most {FIELD_CHARS:,} characters"),
        "range": ("нужно целое число от 0 до миллиона", "must be a whole number from 0 to a million"),
        "number": ("нужно число, по модулю не больше миллиона", "must be a number within a million either way"),
        "id": ("от 1 до 64 знаков: латинские буквы, цифры, «-», «_», «.»",
               "must be 1-64 letters, digits, '-', '_' or '.'"),
    },
}

# A refusal without a code the catalogue knows (another area's error reaching the desk): said plainly, never hidden.
FALLBACK = ("Команда не выполнена: {message}", "Command refused: {message}")
MAX_FIELD_CHARS = 200  # a param echoed back (a typed seed, a deadline) is cut: a page never repeats a huge field


def _shown(value: Any) -> str:
    if isinstance(value, (list, tuple, set, frozenset)):
        text = ", ".join(map(str, value)) or "—"
    else:
        text = str(value)
    return text if len(text) <= MAX_FIELD_CHARS else text[:MAX_FIELD_CHARS] + "…"


def _citation(params: dict, language: str) -> dict:
    """A format's rule line is its citation, then an English gloss («eurocup 3.1: the battle winner goes on»):
    the Russian line cites the section alone."""
    rule = params.get("rule")
    if language == "ru" and isinstance(rule, str) and ":" in rule:
        return {"rule": rule.split(":", 1)[0].strip()}
    return {}


def word(error: BaseException, battles: dict[str, tuple[str, str]] | None = None) -> dict[str, str]:
    """``{"code", "ru", "en"}`` for a refusal, from its ``code`` and ``params`` (no parsing of its sentence).

    An empty ``rule`` drops its parentheses; a code not in :data:`REFUSALS` (or params missing a figure) reads
    :data:`FALLBACK` with the error's own sentence. ``battles`` (a drawn battle's id -> its number and stage as
    people say them, «3 (1/27 финала)», in Russian and English) words a ``battle`` param instead of its id.
    """
    code = getattr(error, "code", None)
    params = {key: _shown(value) for key, value in (getattr(error, "params", None) or {}).items()}
    named = (battles or {}).get(params.get("battle", ""))
    lines = REFUSALS.get(code) if isinstance(code, str) else None
    if lines is not None:
        try:
            ru, en = (format_counts(line, name, **{**params, **{
                          key: PARAM_WORDS[key].get(value, (value, value))[index]
                          for key, value in params.items() if key in PARAM_WORDS}, **_citation(params, name),
                          **({"battle": named[index]} if named else {})})
                      for index, (name, line) in enumerate(zip(("ru", "en"), lines)))
        except (KeyError, IndexError, ValueError):
            lines = None
        else:
            if not params.get("rule", "x"):
                ru, en = ru.replace(" ()", "").replace("()", ""), en.replace(" ()", "").replace("()", "")
            return {"code": code, "ru": ru, "en": en}
    message = _shown(str(error))
    return {"code": code if isinstance(code, str) else type(error).__name__,
            "ru": FALLBACK[0].format(message=message), "en": FALLBACK[1].format(message=message)}
