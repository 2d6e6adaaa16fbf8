"""A question package as the box keeps it: themes of priced questions, each with its answer, comment and source.

Sport «Своя игра» plays text. Media (pictures, sound, video) is kept as files beside the package, and the
question's text holds a marker where each belonged: ``[[image Images/map.png]]``. The marker is plain text, so
a printed answer sheet or an old page still shows that something was there; :func:`media_markers` finds them.

Everything here is a frozen dataclass with a JSON form (:meth:`Package.to_json` / :func:`package_from_json`),
which is what the library stores (format ``FORMAT_VERSION``, docs/packages.md).
"""

from __future__ import annotations

import dataclasses
import re

FORMAT_VERSION = 1
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
    """A theme: its name, the round it came from (SIGame packages have rounds), and its questions in order."""

    name: str
    questions: tuple[Question, ...]
    round: str = ""
    comment: str = ""


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
    """The inverse of :meth:`Package.to_json`; refuses a stored form of another format version."""
    if data.get("format") != FORMAT_VERSION:
        raise ValueError(f"stored package format {data.get('format')!r}, this box reads {FORMAT_VERSION}")
    themes = tuple(Theme(name=theme["name"], round=theme.get("round", ""), comment=theme.get("comment", ""),
                         questions=tuple(Question(**question) for question in theme["questions"]))
                   for theme in data["themes"])
    return Package(title=data["title"], themes=themes, origin=data["origin"], authors=tuple(data.get("authors", ())),
                   media_files=tuple(data.get("media_files", ())))
