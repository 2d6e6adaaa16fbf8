"""Package refusals in words: every refusal of a package file or of a choice of its themes, by code
(docs/packages.md "Refusals"), Russian and English, with the place in the file. Shared by the packages screen,
the host's socket and the director's desk (a battle or a stage's themes from a package)."""

from __future__ import annotations

import re

from appliance.errors import PackageError
from appliance.words import format_counts
from web.strings import STRINGS as CORE_STRINGS

# Every refusal of a package file or a choice of its themes (docs/packages.md "Refusals"), by code, worded from
# its params. The place in the file (``where``) follows the line.
REFUSALS: dict[str, tuple[str, str]] = {
    "package.too_large": ("Файл {size_mb} МБ, а можно не больше {limit_mb} МБ",
                          "The file is {size_mb} MB; at most {limit_mb} MB"),
    "package.empty": ("В файле нет ни одной темы", "The file holds no themes"),
    "package.unknown_format": ("Формат файла «{filename}» не распознан: нужен .siq, тур db.chgk.info, CSV или TOML",
                               "The format of «{filename}» is not recognised: a .siq, a db.chgk.info tour, CSV or TOML"),
    "package.not_zip": ("Файл .siq повреждён: это не ZIP-архив", "The .siq file is damaged: not a ZIP archive"),
    "package.too_many_entries": ("В архиве {count} файлов, а можно не больше {limit}",
                                 "The archive holds {count} files; at most {limit}"),
    "package.unsafe_entry": ("Файл «{entry}» в архиве указывает за пределы пакета",
                             "The archive's file «{entry}» points outside the package"),
    "package.duplicate_entry": ("Файл «{entry}» в архиве дважды", "The archive holds «{entry}» twice"),
    "package.bomb": ("Файл «{entry}» распаковывается больше чем в {limit_mb} МБ или слишком сжат (ZIP-бомба)",
                     "The file «{entry}» inflates past {limit_mb} MB or is compressed too far (a ZIP bomb)"),
    "package.entry_too_large": ("Файл «{entry}» в архиве — {size_mb} МБ, а можно не больше {limit_mb} МБ",
                                "The archive's file «{entry}» is {size_mb} MB; at most {limit_mb} MB"),
    "package.unpacked_too_large": ("Файлы архива вместе — {size_mb} МБ, а можно не больше {limit_mb} МБ",
                                   "The archive's files come to {size_mb} MB; at most {limit_mb} MB"),
    "package.unsupported_version": ("Пакет SIGame версии {version}, а бокс читает версии до {supported}",
                                    "A SIGame package of version {version}; the box reads versions up to {supported}"),
    "package.xml_too_many_elements": ("В XML больше {limit} элементов", "The XML has more than {limit} elements"),
    "package.xml_too_deep": ("XML вложен глубже {limit} уровней", "The XML is nested deeper than {limit} levels"),
    "package.field_too_long": ("{field} длиннее {limit} знаков ({length})",
                               "{field} is longer than {limit} characters ({length})"),
    "package.too_many_themes": ("В пакете больше {limit} тем", "The package has more than {limit} themes"),
    "package.too_many_questions": ("В пакете больше {limit} вопросов", "The package has more than {limit} questions"),
    "package.final_theme": ("Тема {theme} — из финального раунда: её не играют как обычную тему боя",
                            "Theme {theme} is from the final round: it is not played as an ordinary theme"),
    "package.corrupt_entry": ("Файл «{entry}» в архиве не распаковывается", "The archive's file «{entry}» cannot be inflated"),
    "package.no_content": ("В архиве нет content.xml: это не пакет SIGame", "The archive has no content.xml: not a SIGame package"),
    "package.unsafe_xml": ("XML с DTD или сущностями не принимается", "XML with a DTD or entities is refused"),
    "package.bad_xml": ("XML повреждён (строка {line})", "The XML is malformed (line {line})"),
    "package.bad_structure": ("Не то устройство файла: не тот корневой элемент",
                              "The file is not laid out as expected: the wrong root element"),
    "package.theme_without_name": ("У темы нет названия", "A theme has no name"),
    "package.question_without_text": ("У вопроса нет текста", "A question has no text"),
    "package.bad_price": ("Цена «{price}» — не целое число", "The price «{price}» is not a whole number"),
    "package.not_a_theme": ("В вопросе базы нет пронумерованных строк «1. …»: это не тема «Своей игры»",
                            "A database question has no numbered lines «1. …»: not a «Своя игра» theme"),
    "package.answers_do_not_match": ("Ответы пронумерованы не так, как вопросы ({count})",
                                     "The answers are not numbered like the questions ({count})"),
    "package.missing_columns": ("В заголовке таблицы нет столбцов: {columns}", "The table's header lacks the columns: {columns}"),
    "package.theme_split": ("Строки темы «{theme}» стоят не подряд", "The rows of the theme «{theme}» are not together"),
    "package.bad_field": ("Поле «{field}» не того вида или слишком длинное", "The field «{field}» is of the wrong kind or too long"),
    "package.bad_table": ("Таблица CSV не читается", "The CSV table cannot be read"),
    "package.bad_toml": ("TOML не читается", "The TOML does not parse"),
    "package.bad_encoding": ("Кодировка не UTF-8 и не Windows-1251", "The encoding is neither UTF-8 nor Windows-1251"),
    "package.not_found": ("Такого пакета на боксе нет", "There is no such package on this box"),
    "package.no_such_theme": ("В пакете нет темы {theme}: в нём {themes}", "The package has no theme {theme}: it has {themes}"),
    "package.theme_twice": ("Тема выбрана дважды", "A theme is chosen twice"),
    "package.too_few_unplayed": ("В пакете осталось несыгранных тем: {unplayed}, а нужно {needed}",
                                 "The package has {unplayed} unplayed themes; {needed} are needed"),
}


_COUNTED = {"themes": "count.themes", "questions": "count.questions", "media": "count.questions"}


def counted(key: str, count: int, language: str) -> str:
    """«6 тем», «1 вопрос»: the catalogue's count lines, by the one plural rule (appliance/words.py)."""
    ru, en = CORE_STRINGS[_COUNTED[key]]
    return format_counts(ru if language == "ru" else en, language, count=count)


_WHERE_RU = {"line": "строка", "round": "раунд", "theme": "тема", "question": "вопрос", "column": "столбец",
}
_COLUMNS_RU = {"theme": "тема", "price": "цена", "question": "вопрос", "answer": "ответ", "comment": "комментарий",
               "source": "источник", "author": "автор"}


# A field a refusal names (package.field_too_long), as a sentence starts with it.
_FIELDS = {
    "title": ("Название пакета", "The package's title"), "author": ("Автор", "An author"),
    "theme": ("Название темы", "The theme's name"), "name": ("Название темы", "The theme's name"),
    "round": ("Название раунда", "The round's name"), "comment": ("Комментарий", "The comment"),
    "question": ("Текст вопроса", "The question's text"), "answer": ("Ответ", "The answer"),
    "source": ("Источник", "The source"), "cell": ("Ячейка таблицы", "A cell of the table"),
}


def where_ru(where: str) -> str:
    """The place in a file, as the readers name it (``round «1» › theme 2 › question 3``, ``line 7``), in Russian;
    a place worded by a library (TOML's parser) is cut to its line number.

    >>> where_ru("round «1-й раунд» › theme 2 › question 3"), where_ru("content.xml line 4")
    ('раунд «1-й раунд» › тема 2 › вопрос 3', 'content.xml строка 4')
    >>> where_ru("Expected '=' after a key in a key/value pair (at line 3, column 5)")
    'строка 3'
    """
    line = re.search(r"\(at line (\d+)", where)
    if line:  # tomllib's own English sentence
        return f"строка {line.group(1)}"
    return re.sub(r"\b(line|round|theme|question|column)\b(?= \d| «)", lambda m: _WHERE_RU[m.group(1)], where)


def word_package_error(error: PackageError, where_label: bool = True) -> dict[str, str]:
    """``{"ru", "en"}`` for a package refusal, from its code and params, with the place in the file."""
    code = getattr(error, "code", "")
    params = dict(getattr(error, "params", {}) or {})
    pair = REFUSALS.get(code)
    words = {}
    for index, language in enumerate(("ru", "en")):
        fields = {key: value for key, value in params.items()}
        if isinstance(fields.get("theme"), int) and not isinstance(fields.get("theme"), bool):
            fields["theme"] = fields["theme"] + 1  # people count themes from 1
        if isinstance(fields.get("themes"), int):
            fields["themes"] = counted("themes", fields["themes"], language)
        if isinstance(fields.get("columns"), (list, tuple)):
            fields["columns"] = ", ".join(map(str, fields["columns"]))
        if code == "package.field_too_long" and fields.get("field") in _FIELDS:
            fields["field"] = _FIELDS[fields["field"]][index]
        if language == "ru" and isinstance(fields.get("columns"), str):
            fields["columns"] = ", ".join(_COLUMNS_RU.get(name.strip(), name.strip())
                                          for name in fields["columns"].split(","))
        try:
            line = pair[index].format(**fields) if pair else str(error)
        except (KeyError, IndexError, ValueError):
            line = pair[index] if pair else str(error)
        where = params.get("where")
        if where and language == "ru":
            where = where_ru(str(where))
        if where and where_label:
            line = f"{line} — {where}"
        words[language] = line
    return words


