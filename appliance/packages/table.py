"""A package an organiser writes by hand: a spreadsheet saved as CSV, or a TOML file.

CSV: one row per question, with a header row naming the columns (Russian or English, any order):
``theme,price,question,answer,comment,source`` (``тема,цена,вопрос,ответ,комментарий,источник``). Rows of one
theme stand together; a theme's name may be left empty after its first row. Separators ``,`` ``;`` or tab.

TOML::

    title = "Кубок двора, тур 1"

    [[theme]]
    name = "Реки"
    [[theme.question]]
    price = 10
    question = "Самая длинная река Европы."
    answer = "Волга"
    comment = "Около 3530 км."

docs/packages.md has a whole example of each, and tests import both.
"""

from __future__ import annotations

import csv
import tomllib

from appliance.config import QUESTION_TEXT_CHARS, SETUP_TEXT_CHARS
from appliance.packages.archive import Limits
from appliance.packages.errors import PackageFileError
from appliance.packages.model import Package, Question, Theme
from appliance.packages.siq import ReadPackage, check_counts

COLUMNS = {
    "theme": ("theme", "тема"), "price": ("price", "цена", "стоимость", "номинал"),
    "question": ("question", "вопрос", "text", "текст"), "answer": ("answer", "ответ"),
    "comment": ("comment", "комментарий"), "source": ("source", "источник", "источники"),
    "author": ("author", "автор"),
}
REQUIRED = ("theme", "price", "question", "answer")
# What one cell may hold: what a setup typed by hand may (appliance/config.py); names are shorter than texts.
NAME_COLUMNS = ("theme", "name", "title", "author")


def _price(value, where: str) -> int:
    text = str(value).strip()
    if isinstance(value, bool) or not text.lstrip("-").isdigit() or len(text) > 7:
        raise PackageFileError("package.bad_price", f"price {text[:20]!r} is not a whole number", where=where,
                               price=text[:20])
    return int(text)


def _text(value, where: str, column: str) -> str:
    if not isinstance(value, str):
        raise PackageFileError("package.bad_field", f"{column} must be text", where=where, field=column)
    limit = SETUP_TEXT_CHARS if column in NAME_COLUMNS else QUESTION_TEXT_CHARS
    value = value.strip()
    if len(value) > limit:
        raise PackageFileError("package.field_too_long", f"the {column} is {len(value)} characters long, at most "
                               f"{limit}", where=where, field=column, length=len(value), limit=limit)
    return value


def decode(data: bytes, limits: Limits, limit: int | None = None) -> str:
    """A text file (a table, a TOML, a tour's text export) as text: at most ``limit`` bytes (default
    ``limits.text_bytes``)."""
    limit = limits.text_bytes if limit is None else limit
    if len(data) > limit:
        raise PackageFileError("package.too_large", f"the file is {len(data) / 2**20:.1f} MB, at most "
                               f"{limit / 2**20:g} MB", size_mb=round(len(data) / 2**20, 1),
                               limit_mb=limit // 2**20 if limit % 2**20 == 0 else round(limit / 2**20, 1))
    for encoding in ("utf-8-sig", "cp1251"):  # Excel in Russian saves CSV as Windows-1251
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise PackageFileError("package.bad_encoding", "the text is neither UTF-8 nor Windows-1251")


def read_csv(data: bytes, limits: Limits = Limits()) -> ReadPackage:
    text = decode(data, limits)
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    rows = csv.reader(_lines(text), dialect)
    try:
        header = next(rows)
    except (StopIteration, csv.Error):
        raise PackageFileError("package.empty", "the table is empty", where="line 1") from None
    names = [cell.strip().casefold() for cell in header]
    position = {}
    for key, aliases in COLUMNS.items():
        found = [index for index, name in enumerate(names) if name in aliases]
        if found:
            position[key] = found[0]
    missing = [key for key in REQUIRED if key not in position]
    if missing:
        raise PackageFileError("package.missing_columns", f"the header has no column {', '.join(missing)} "
                               f"(it reads: {', '.join(header)[:200]})", where="line 1", columns=", ".join(missing))
    themes: list[tuple[str, list[Question]]] = []
    count = 0
    try:
        for row in rows:
            where = f"line {rows.line_num}"
            if not any(cell.strip() for cell in row):
                continue
            count += 1
            cell = {key: row[index] if index < len(row) else "" for key, index in position.items()}
            name = _text(cell["theme"], where, "theme")
            if name and (not themes or themes[-1][0] != name):
                if any(existing == name for existing, _ in themes):
                    raise PackageFileError("package.theme_split", f"theme «{name}» appears again after other "
                                           "themes: keep its rows together", where=where, theme=name)
                themes.append((name, []))
            elif not themes:
                raise PackageFileError("package.theme_without_name", "the first row names no theme", where=where)
            check_counts(len(themes), count, limits, where)
            question = _text(cell["question"], where, "question")
            if not question:
                raise PackageFileError("package.question_without_text", "a row with no question", where=where)
            themes[-1][1].append(Question(
                price_points=_price(cell["price"], where), text=question, answer=_text(cell["answer"], where, "answer"),
                comment=_text(cell.get("comment", ""), where, "comment"),
                source=_text(cell.get("source", ""), where, "source"),
                author=_text(cell.get("author", ""), where, "author")))
    except csv.Error as error:
        if "field larger than field limit" in str(error):  # the csv module's own limit, 131,072 characters
            raise PackageFileError("package.field_too_long", f"a cell is longer than {csv.field_size_limit()} "
                                   f"characters, at most {QUESTION_TEXT_CHARS}", where=f"line {rows.line_num}",
                                   field="cell", length=csv.field_size_limit(), limit=QUESTION_TEXT_CHARS) from None
        raise PackageFileError("package.bad_table", f"the CSV cannot be read ({error})",
                               where=f"line {rows.line_num}") from None
    if not themes:
        raise PackageFileError("package.empty", "the table has a header but no questions", where="line 2")
    return ReadPackage(Package(title="", themes=tuple(Theme(name, tuple(questions)) for name, questions in themes),
                               origin="table"), {})


def _lines(text: str):
    """The text's lines with their ends, one at a time (a StringIO would copy the whole text at 4 bytes a
    character)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        yield text[start:end]
        start = end


def read_toml(data: bytes, limits: Limits = Limits()) -> ReadPackage:
    text = decode(data, limits, limits.toml_bytes)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PackageFileError("package.bad_toml", f"not valid TOML ({error})", where=str(error)) from None
    entries = document.get("theme", document.get("тема"))
    if not isinstance(entries, list) or not entries:
        raise PackageFileError("package.empty", "no [[theme]] tables", where="TOML")
    themes = []
    count = 0
    for number, entry in enumerate(entries, start=1):
        where = f"[[theme]] {number}"
        count += len(entry.get("question", ())) if isinstance(entry, dict) and isinstance(entry.get("question"),
                                                                                          list) else 0
        check_counts(number, count, limits, where)
        if not isinstance(entry, dict):
            raise PackageFileError("package.bad_field", "a theme must be a table", where=where, field="theme")
        name = _text(entry.get("name", ""), where, "name")
        if not name:
            raise PackageFileError("package.theme_without_name", "a theme without name", where=where)
        questions = entry.get("question", [])
        if not isinstance(questions, list) or not questions:
            raise PackageFileError("package.empty", f"theme «{name}» has no [[theme.question]]", where=where)
        items = []
        for index, question in enumerate(questions, start=1):
            place = f"theme «{name}» › question {index}"
            if not isinstance(question, dict):
                raise PackageFileError("package.bad_field", "a question must be a table", where=place,
                                       field="question")
            text = _text(question.get("question", question.get("text", "")), place, "question")
            if not text:
                raise PackageFileError("package.question_without_text", "a question with no text", where=place)
            items.append(Question(price_points=_price(question.get("price", ""), place), text=text,
                                  answer=_text(question.get("answer", ""), place, "answer"),
                                  comment=_text(question.get("comment", ""), place, "comment"),
                                  source=_text(question.get("source", ""), place, "source"),
                                  author=_text(question.get("author", ""), place, "author")))
        author = _text(entry.get("author", ""), where, "author")
        themes.append(Theme(name=name, questions=tuple(items), comment=_text(entry.get("comment", ""), where,
                                                                              "comment"),
                            authors=(author,) if author else ()))
    title = document.get("title", "")
    return ReadPackage(Package(title=_text(title, "title", "title"), themes=tuple(themes), origin="table"), {})
