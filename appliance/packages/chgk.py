"""The «Своя игра» tours of the question database db.chgk.info: its tour XML, or its text export.

In the database a «Своя игра» "question" is a whole theme: its text is the theme's name followed by numbered
lines ``1. …`` to ``5. …``, one question each, and its answer field holds the numbered answers in the same
order. The numbers are positions priced 10-50 (``1.`` is 10), unless the tour numbers by price itself
(``10. … 20. …`` or ``100. …``): then the number is the price. Comments, pass criteria (Зачёт) and sources are
numbered the same way when they speak of single questions; otherwise they are the theme's.

The XML is the database's tour export (``<tournament><Title/>…<question><Question/><Answer/><Comments/>…``);
the text export is the same fields as ``Вопрос 1:`` / ``Ответ:`` / ``Комментарий:`` / ``Источник:`` blocks.
"""

from __future__ import annotations

import re

from appliance.packages.archive import Limits
from appliance.packages.errors import PackageFileError
from appliance.packages.model import Package, Question, Theme
from appliance.packages.siq import ReadPackage, check_counts, child, local, parse_xml

POSITION_PRICES = (10, 20, 30, 40, 50)
_NUMBERED = re.compile(r"(?:^|(?<=\s))(\d{1,4})\.\s+")
# The text export's field headers, as the database writes them ("Вопрос 3:", "Ответ:", "Источник(и):").
_FIELD = re.compile(r"^(Вопрос\s+\d+|Ответ|Зач[её]т|Комментари[йи]|Источник(?:и|\(и\))?|Автор(?:ы|\(ы\))?"
                    r"|Чемпионат|Тур|Дата|Редактор(?:ы|\(ы\))?|Инфо|Вид|Тип|URL|Ссылка):\s*(.*)$")


def split_numbered(text: str, expected: list[int] | None = None) -> tuple[str, list[tuple[int, str]]]:
    """(what stands before the first number, [(number, text), ...]) for a numbered text.

    Without ``expected``, a number counts only where it continues the sequence (1, 2, 3 or 10, 20, 30), so
    "в 1812. году" inside a question does not split it, and fewer than two numbers leave the text whole (the
    head). With ``expected`` (the numbers of a theme's questions), any of those numbers in increasing order
    counts, so a comment may speak of question 3 alone ("3. Наполеон…").
    """
    marks = [(match.start(), match.end(), int(match.group(1))) for match in _NUMBERED.finditer(text)]
    chosen: list[tuple[int, int, int]] = []
    for start, end, number in marks:
        if expected is not None:
            if number in expected and (not chosen or number > chosen[-1][2]):
                chosen.append((start, end, number))
        elif not chosen:
            if number in (1, 10, 100):
                chosen.append((start, end, number))
        elif number == chosen[-1][2] + chosen[0][2]:
            chosen.append((start, end, number))
    if len(chosen) < (1 if expected is not None else 2) or (expected is not None and text[:chosen[0][0]].strip()):
        return text.strip(), []
    parts = []
    for index, (start, end, number) in enumerate(chosen):
        stop = chosen[index + 1][0] if index + 1 < len(chosen) else len(text)
        parts.append((number, " ".join(text[end:stop].split())))
    return text[:chosen[0][0]].strip(), parts


def theme_from_fields(number: int, question: str, answer: str, comment: str = "", source: str = "",
                      author: str = "", criteria: str = "", where: str = "") -> Theme:
    """One database "question" (a theme) from its fields; raises PackageFileError if it is not a theme."""
    where = where or f"question {number}"
    head, items = split_numbered(question)
    if not items:
        raise PackageFileError("package.not_a_theme", "no numbered questions (1. … 2. …): not a «Своя игра» theme",
                               where=where)
    name = re.sub(r"^(Тема|Theme)\s*[:.]\s*", "", " ".join(head.split())).rstrip(".").strip()
    if not name:
        raise PackageFileError("package.theme_without_name", "the theme's name is missing before «1.»", where=where)
    numbers = [label for label, _ in items]
    by_price = numbers[0] in (10, 100)
    answers = _per_item(answer, numbers)
    if answers is None:
        raise PackageFileError("package.answers_do_not_match",
                               f"the answer field does not number {len(numbers)} answers as the questions are",
                               where=where, count=len(numbers))
    comments, sources, criterias = (_per_item(text, numbers) for text in (comment, source, criteria))
    questions = []
    for index, (label, text) in enumerate(items):
        price = label if by_price else (POSITION_PRICES[index] if index < len(POSITION_PRICES) else 10 * label)
        accepted = answers[index]
        if criterias is not None and criterias[index]:
            accepted += f"\nЗачёт: {criterias[index]}"
        questions.append(Question(price_points=price, text=text, answer=accepted,
                                  comment=comments[index] if comments else "",
                                  source=sources[index] if sources else " ".join(source.split()),
                                  author=" ".join(author.split())))
    theme_comment = "" if comments is not None else " ".join(comment.split())
    if criteria and criterias is None:
        theme_comment = " ".join(f"{theme_comment} Зачёт: {' '.join(criteria.split())}".split())
    authors = " ".join(author.split())
    # A database "question" is a whole theme: its authors are the theme's (and each question's, as before).
    return Theme(name=name, questions=tuple(questions), comment=theme_comment, authors=(authors,) if authors else ())


def _per_item(text: str, numbers: list[int]) -> list[str] | None:
    """The text's numbered parts in the order of ``numbers`` ("" where one is missing), or None if unnumbered."""
    if not text.strip():
        return None
    _, items = split_numbered(text, numbers)
    found = dict(items)
    if not items:
        return None
    return [found.get(number, "") for number in numbers]


def read_chgk_xml(data: bytes, limits: Limits = Limits()) -> ReadPackage:
    """A tour XML exported from db.chgk.info."""
    if len(data) > limits.xml_bytes:
        raise PackageFileError("package.too_large", f"the file is {len(data) // 2**20} MB, at most "
                               f"{limits.xml_bytes // 2**20} MB", size_mb=len(data) // 2**20,
                               limit_mb=limits.xml_bytes // 2**20)
    root = parse_xml(data, "XML", limits)
    if local(root.tag) not in ("tournament", "tour"):
        raise PackageFileError("package.bad_structure", f"the root element is <{local(root.tag)}>, not "
                               "<tournament>: not a db.chgk.info tour", where="XML")

    def field(element, name: str) -> str:
        found = child(element, name)
        return (found.text or "") if found is not None else ""

    themes = []
    for index, question in enumerate((node for node in root if local(node.tag) == "question"), start=1):
        number = field(question, "Number").strip() or str(index)
        check_counts(index, sum(len(theme.questions) for theme in themes), limits, f"<question> {number}")
        themes.append(theme_from_fields(index, field(question, "Question"), field(question, "Answer"),
                                        comment=field(question, "Comments"), source=field(question, "Sources"),
                                        author=field(question, "Authors"), criteria=field(question, "PassCriteria"),
                                        where=f"<question> {number}"))
    if not themes:
        raise PackageFileError("package.empty", "the tour has no <question> elements", where="XML")
    title = " ".join(field(root, "Title").split()) or "db.chgk.info"
    return ReadPackage(Package(title=title, themes=tuple(themes), origin="chgk"), {})


def _field_key(header: str) -> str | None:
    """The field a text-export header opens ("Источник(и)" → "source"); None for the ones not kept."""
    for prefix, key in (("Вопрос", "question"), ("Ответ", "answer"), ("Зач", "criteria"), ("Комментари", "comment"),
                        ("Источник", "source"), ("Автор", "author"), ("Чемпионат", "championship"), ("Тур", "tour")):
        if header.startswith(prefix):
            return key
    return None


def read_chgk_text(text: str, limits: Limits = Limits()) -> ReadPackage:
    """The database's text export: ``Вопрос N:`` blocks with ``Ответ:``, ``Комментарий:``, ``Источник:``..."""
    blocks: list[dict] = []
    heading: dict = {}  # the fields before the first question (the tour's title)
    key = None
    for line_number, line in enumerate(text.splitlines(), start=1):
        match = _FIELD.match(line.strip())
        if match:
            key = _field_key(match.group(1))
            if key == "question":
                blocks.append({"line": line_number})
            target = blocks[-1] if blocks else heading
            if key is not None:
                target[key] = target.get(key, "") + match.group(2)
        elif key is not None:
            target = blocks[-1] if blocks else heading
            target[key] = target.get(key, "") + "\n" + line
    if not blocks:
        raise PackageFileError("package.empty", "no «Вопрос 1:» blocks: not a db.chgk.info text export",
                               where="line 1")
    themes = []
    for index, block in enumerate(blocks, start=1):
        where = f"line {block['line']}"
        check_counts(index, sum(len(theme.questions) for theme in themes), limits, where)
        if not block.get("answer", "").strip():
            raise PackageFileError("package.answers_do_not_match", "a question without «Ответ:»", where=where,
                                   count=0)
        themes.append(theme_from_fields(index, block.get("question", ""), block["answer"],
                                        comment=block.get("comment", ""), source=block.get("source", ""),
                                        author=block.get("author", ""), criteria=block.get("criteria", ""),
                                        where=where))
    title = " — ".join(" ".join(heading[key].split()) for key in ("championship", "tour") if heading.get(key, "").strip())
    return ReadPackage(Package(title=title or "db.chgk.info", themes=tuple(themes), origin="chgk"), {})
