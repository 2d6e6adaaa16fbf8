"""A question package as the box keeps it: themes of priced questions, each with its answer, comment and source.

Sport «Своя игра» plays text. Media (pictures, sound, video) is kept as files beside the package, and the
question's text holds a marker where each belonged: ``[[image Images/map.png]]``. The marker is plain text, so
a printed answer sheet or an old page still shows that something was there; :func:`media_markers` finds them.

Everything here is a frozen dataclass with a JSON form (:meth:`Package.to_json` / :func:`package_from_json`),
which is what the library stores (format ``FORMAT_VERSION``, docs/packages.md). Every field holds to what a
battle's setup typed by hand may hold (:func:`check_fields`, appliance/config.py): a package is read into a
setup, so it can put nothing there that the host's form would refuse.
"""

from __future__ import annotations

import dataclasses
import re

from appliance.config import QUESTION_TEXT_CHARS, SETUP_TEXT_CHARS
from appliance.packages.errors import PackageFileError

FORMAT_VERSION = 2  # 2: a theme's kind (a final round's) and its authors; format 1 is read as standard themes
READS_FORMATS = (1, 2)
# The kind of round a theme came from. SIGame's final round (round type "final") is one question per theme
# played for stakes: never one of a battle's ordinary themes.
STANDARD, FINAL = "standard", "final"
THEME_KINDS = (STANDARD, FINAL)
MEDIA_KINDS = ("image", "audio", "video", "html")
_MARKER = re.compile(r"\[\[(image|audio|video|html) ([^\]\n]{1,300})\]\]")


def media_marker(kind: str, path: str) -> str:
    """The marker that stands in a question's text where a media file belonged."""
    if kind not in MEDIA_KINDS:
        raise ValueError(f"unknown media kind {kind!r}")
    return f"[[{kind} {path}]]"


def media_markers(text: str) -> list[tuple[str, str]]:
    """(kind, path) of every media marker in ``text``, in order."""
    return _MARKER.findall(text)


@dataclasses.dataclass(frozen=True)
class Question:
    """One question of a theme. ``price_points`` is its value as the package gives it (10-50 in sport play)."""

    price_points: int
    text: str
    answer: str
    comment: str = ""
    source: str = ""
    author: str = ""

    @property
    def has_media(self) -> bool:
        return bool(media_markers(self.text) or media_markers(self.answer))


@dataclasses.dataclass(frozen=True)
class Theme:
    """A theme: its name, the round it came from (SIGame packages have rounds) and that round's kind
    (:data:`STANDARD` or :data:`FINAL`), its authors, and its questions in order."""

    name: str
    questions: tuple[Question, ...]
    round: str = ""
    comment: str = ""
    kind: str = STANDARD
    authors: tuple[str, ...] = ()

    @property
    def is_final(self) -> bool:
        return self.kind == FINAL


@dataclasses.dataclass(frozen=True)
class Package:
    """A whole package. ``origin`` says which reader made it (``siq``, ``chgk``, ``table``)."""

    title: str
    themes: tuple[Theme, ...]
    origin: str
    authors: tuple[str, ...] = ()
    media_files: tuple[str, ...] = ()  # paths kept beside the package (relative, e.g. "Images/map.png")

    @property
    def question_count(self) -> int:
        return sum(len(theme.questions) for theme in self.themes)

    @property
    def media_question_count(self) -> int:
        """How many questions carry media (the import says so: sport play reads text)."""
        return sum(question.has_media for theme in self.themes for question in theme.questions)

    def to_json(self) -> dict:
        return {"format": FORMAT_VERSION, **dataclasses.asdict(self)}


def package_from_json(data: dict) -> Package:
    """The inverse of :meth:`Package.to_json`; refuses a stored form of a format version it does not read."""
    if data.get("format") not in READS_FORMATS:
        raise ValueError(f"stored package format {data.get('format')!r}, this box reads {READS_FORMATS}")
    themes = tuple(Theme(name=theme["name"], round=theme.get("round", ""), comment=theme.get("comment", ""),
                         kind=theme.get("kind", STANDARD), authors=tuple(theme.get("authors", ())),
                         questions=tuple(Question(**question) for question in theme["questions"]))
                   for theme in data["themes"])
    return Package(title=data["title"], themes=themes, origin=data["origin"], authors=tuple(data.get("authors", ())),
                   media_files=tuple(data.get("media_files", ())))


# field → (its words in a refusal's params, its limit): the words name the field (docs/packages.md)
_QUESTION_FIELDS = (("text", "question", QUESTION_TEXT_CHARS), ("answer", "answer", QUESTION_TEXT_CHARS),
                    ("comment", "comment", QUESTION_TEXT_CHARS), ("source", "source", QUESTION_TEXT_CHARS),
                    ("author", "author", SETUP_TEXT_CHARS))


def _too_long(field: str, value: str, limit: int, where: str) -> PackageFileError:
    return PackageFileError("package.field_too_long", f"the {field} is {len(value)} characters long, at most "
                            f"{limit}", where=where, field=field, length=len(value), limit=limit)


def check_fields(package: Package) -> None:
    """Refuse (PackageFileError ``package.field_too_long``, naming the field and its place) any field longer
    than a setup typed by hand may hold: names (title, theme, round, author) ``SETUP_TEXT_CHARS``, a question's
    texts ``QUESTION_TEXT_CHARS`` (appliance/config.py)."""
    if len(package.title) > SETUP_TEXT_CHARS:
        raise _too_long("title", package.title, SETUP_TEXT_CHARS, "title")
    for author in package.authors:
        if len(author) > SETUP_TEXT_CHARS:
            raise _too_long("author", author, SETUP_TEXT_CHARS, "authors")
    for number, theme in enumerate(package.themes, start=1):
        shown = theme.name if len(theme.name) <= 60 else theme.name[:57] + "..."
        where = f"theme {number}" + (f" «{shown}»" if theme.name else "")
        for field, value, limit in (("theme", theme.name, SETUP_TEXT_CHARS), ("round", theme.round, SETUP_TEXT_CHARS),
                                    ("comment", theme.comment, QUESTION_TEXT_CHARS)):
            if len(value) > limit:
                raise _too_long(field, value, limit, where)
        for author in theme.authors:
            if len(author) > SETUP_TEXT_CHARS:
                raise _too_long("author", author, SETUP_TEXT_CHARS, where)
        for index, question in enumerate(theme.questions, start=1):
            for attribute, field, limit in _QUESTION_FIELDS:
                value = getattr(question, attribute)
                if len(value) > limit:
                    raise _too_long(field, value, limit, f"{where} › question {index}")
