"""Package refusals in words: every refusal of a package file or of a choice of its themes, by code
(docs/packages.md "Refusals"), Russian and English, with the place in the file. Shared by the packages screen,
the host's socket and the director's desk (a battle or a stage's themes from a package)."""

from __future__ import annotations

import re

import appliance.words as words
from appliance.errors import PackageError

# Every refusal of a package file or a choice of its themes (docs/packages.md "Refusals"): the catalogue's
# ``refusal.package.<code>`` (appliance/locale), worded from its params; the place in the file (``where``)
# follows the line. The places and columns a reader names are ``package.where.*`` and ``package.column.*``,
# a field a refusal names (package.field_too_long) ``package.field.*``.
REFUSAL_PREFIX = "refusal.package."  # + the code without its area: refusal.package.too_large
_COUNTED = {"themes": "count.themes", "questions": "count.questions", "media": "count.questions"}


def counted(key: str, count: int, language: str) -> str:
    """«6 тем», «1 вопрос»: the catalogue's count lines, by the one plural rule (appliance/words.py)."""
    return words.word(_COUNTED[key], language, count=count)


def refusal_codes() -> list[str]:
    """Every package refusal code the catalogue words (docs/packages.md lists the same)."""
    return ["package." + key.removeprefix(REFUSAL_PREFIX) for key in words.keys(REFUSAL_PREFIX, plural=False)]


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
        return words.word("package.where.at_line", "ru", line=line.group(1))
    return re.sub(r"\b(line|round|theme|question|column)\b(?= \d| «)",
                  lambda m: words.gettext(f"package.where.{m.group(1)}", "ru"), where)


def word_package_error(error: PackageError, where_label: bool = True) -> dict[str, str]:
    """``{"ru", "en"}`` for a package refusal, from its code and params, with the place in the file."""
    code = getattr(error, "code", "")
    params = dict(getattr(error, "params", {}) or {})
    message = REFUSAL_PREFIX + code.removeprefix("package.") if code else ""
    known = bool(code) and words.has(message)
    said = {}
    for language in words.LANGUAGES:
        fields = {key: value for key, value in params.items()}
        if isinstance(fields.get("theme"), int) and not isinstance(fields.get("theme"), bool):
            fields["theme"] = fields["theme"] + 1  # people count themes from 1
        if isinstance(fields.get("themes"), int):
            fields["themes"] = counted("themes", fields["themes"], language)
        if isinstance(fields.get("columns"), (list, tuple)):
            fields["columns"] = ", ".join(map(str, fields["columns"]))
        if code == "package.field_too_long" and words.has(f"package.field.{fields.get('field')}"):
            fields["field"] = words.gettext(f"package.field.{fields['field']}", language)
        if language == "ru" and isinstance(fields.get("columns"), str):
            fields["columns"] = ", ".join(_column(name.strip()) for name in fields["columns"].split(","))
        try:
            line = words.word(message, language, **fields) if known else str(error)
        except (KeyError, IndexError, ValueError):
            line = words.gettext(message, language) if known else str(error)
        where = params.get("where")
        if where and language == "ru":
            where = where_ru(str(where))
        if where and where_label:
            line = f"{line} — {where}"
        said[language] = line
    return said


def _column(name: str) -> str:
    """A CSV column as a Russian reader names it (``тема``, ``цена``); a column the catalogue lacks, as it is."""
    return words.gettext(f"package.column.{name}", "ru") if words.has(f"package.column.{name}") else name


