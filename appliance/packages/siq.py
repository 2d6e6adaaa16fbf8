"""SIGame's ``.siq`` packages: a ZIP with ``content.xml`` (package → rounds → themes → questions) and media.

What this reader relies on, from packages SIGame writes:
- ``<package name=... version=...>``: version 4 (and older) writes a question's content as
  ``<scenario><atom type=...>``, version 5 as ``<params><param name="question" type="content"><item ...>``.
  The element names carry an XML namespace (ygpackage3.0.xsd); it is ignored.
- A v4 atom of type ``image``/``voice``/``video``/``html`` whose text starts with ``@`` is a file of the package
  (in ``Images/``, ``Audio/``, ``Video/``, ``Html/``); a ``marker`` atom ends the question and starts what is shown
  with the answer. A v5 item with ``isRef="True"`` is such a file; the ``answer`` param is shown with the answer.
- ``<right><answer>`` holds the accepted answers, ``<info>`` the comments, sources and authors (of the package,
  a theme or a question; ``@id`` names one of the shared ``<global><Authors>`` of version 5).
- ``<round type="final">`` is SIGame's final round: one question per theme, played for stakes. Its themes keep
  that kind (:data:`~appliance.packages.model.FINAL`) and are never a battle's ordinary themes.
- ``version`` above 5 is refused, as SIGame's own reader refuses it.
Sport play reads text: media stays as files, with a marker (:func:`~appliance.packages.model.media_marker`)
where it belonged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from xml.etree import ElementTree

import defusedxml
import defusedxml.ElementTree as SafeTree

from appliance.packages.archive import Limits, SafeZip
from appliance.packages.errors import PackageFileError
from appliance.packages.model import FINAL, STANDARD, Package, Question, Theme, media_marker

# A media atom's type → (the marker's kind, the package folder its file is in)
MEDIA = {"image": ("image", "Images"), "voice": ("audio", "Audio"), "audio": ("audio", "Audio"),
         "video": ("video", "Video"), "html": ("html", "Html")}
TEXT_TYPES = ("", "text", "say")


@dataclasses.dataclass(frozen=True)
class ReadPackage:
    """What a reader returns: the package, and the media files it keeps (path → :class:`MediaFile`)."""

    package: Package
    media: dict


@dataclasses.dataclass(frozen=True)
class MediaFile:
    """A media file of a package, checked whole once (``size`` bytes) and read again in chunks where it is kept,
    so a package's pictures never sit in memory all at once."""

    archive: SafeZip
    entry: str
    size: int

    def chunks(self) -> Iterator[bytes]:
        return self.archive.stream(self.entry, counted=False)

    def read(self) -> bytes:
        return b"".join(self.chunks())


def local(tag: str) -> str:
    """An element's name without its namespace."""
    return tag.rsplit("}", 1)[-1]


def children(element, name: str) -> list:
    return [child for child in element if local(child.tag) == name]


def child(element, name: str):
    found = children(element, name)
    return found[0] if found else None


def texts(element, *path: str) -> list[str]:
    """The stripped texts of the elements at ``path`` below ``element`` (e.g. "info", "comments")."""
    nodes = [element]
    for name in path:
        nodes = [found for node in nodes for found in children(node, name)]
    return [(node.text or "").strip() for node in nodes if (node.text or "").strip()]


class _Counted(ElementTree.TreeBuilder):
    """A tree builder that stops a document of more elements, or nested deeper, than the limits allow (an XML
    of 10 MB of ``<a/>`` would otherwise make two million elements: about 1 GB of objects)."""

    def __init__(self, elements: int, depth: int):
        super().__init__()
        self.elements, self.depth = elements, depth
        self.count = self.level = 0

    def start(self, tag, attrs):
        self.count += 1
        self.level += 1
        if self.count > self.elements:
            raise PackageFileError("package.xml_too_many_elements", f"more than {self.elements} XML elements",
                                   limit=self.elements)
        if self.level > self.depth:
            raise PackageFileError("package.xml_too_deep", f"XML nested deeper than {self.depth} levels",
                                   limit=self.depth)
        return super().start(tag, attrs)

    def end(self, tag):
        self.level -= 1
        return super().end(tag)


XML_DEPTH = 64  # SIGame nests 8 levels, a db.chgk.info tour 3


def parse_xml(data, where: str, limits: Limits = Limits()):
    """Parse untrusted XML (bytes, or an iterable of byte chunks: read as it inflates): no DTD, no entities, no
    external references (defusedxml), at most ``limits.xml_elements`` elements nested at most 64 deep; errors
    name the line."""
    builder = _Counted(limits.xml_elements, XML_DEPTH)
    parser = SafeTree.DefusedXMLParser(target=builder, forbid_dtd=True)
    try:
        for chunk in ((data,) if isinstance(data, (bytes, bytearray)) else data):
            parser.feed(chunk)
        return parser.close()
    except defusedxml.DefusedXmlException as error:
        raise PackageFileError("package.unsafe_xml", f"refused: {type(error).__name__} (DTDs and entities are "
                               "not allowed)", where=where) from None
    except SafeTree.ParseError as error:
        line = error.position[0] if getattr(error, "position", None) else 0
        raise PackageFileError("package.bad_xml", f"not well-formed XML ({error})",
                               where=f"{where} line {line}" if line else where, line=line) from None


# SIGame's reader (SIPackages Package.ReadXml) refuses a package of a version above the one it knows; so does this
# one, naming the version, rather than misread a format it has never seen.
SUPPORTED_VERSION = 5.0


def check_version(root) -> None:
    """Refuse (package.unsupported_version) a ``<package version=...>`` this reader does not know: not a number,
    or above 5. No version is SIGame's default, 4."""
    text = (root.get("version") or "").strip()
    if not text:
        return
    try:
        version = float(text.replace(",", "."))
    except ValueError:
        version = None
    if version is None or not 0 < version <= SUPPORTED_VERSION:
        raise PackageFileError("package.unsupported_version", f"SIGame package format version {text[:20]!r}: this "
                               f"box reads versions up to {SUPPORTED_VERSION:g}", where="content.xml",
                               version=text[:20], supported=f"{SUPPORTED_VERSION:g}")


def _global_authors(root) -> dict[str, str]:
    """SIGame's shared authors (``<global><Authors><Author id=...><Name>...``, format 5): id → «Name Surname»,
    which an ``<author>@id</author>`` names (SIDocument.GetRealAuthors)."""
    found = {}
    for holder in children(root, "global"):
        for authors in children(holder, "Authors"):
            for author in children(authors, "Author"):
                parts = [" ".join(texts(author, name)) for name in ("Name", "SecondName", "Surname")]
                place = ", ".join(part for part in (" ".join(texts(author, "City")),
                                                    " ".join(texts(author, "Country"))) if part)
                words = " ".join(part for part in parts if part) + (f" ({place})" if place else "")
                if author.get("id") and words:
                    found[author.get("id")] = words
    return found


def authors_of(element, shared: dict[str, str]) -> tuple[str, ...]:
    """The ``<info><authors><author>`` of an element, a link ``@id`` named by the package's shared authors (a
    link to none names nobody: it is left out)."""
    out = []
    for author in texts(element, "info", "authors", "author"):
        if author.startswith("@"):
            link, _, tail = author[1:].partition(" ")
            author = (shared.get(link, "") + (f" {tail}" if tail else "")).strip()
        if author and author not in out:
            out.append(author)
    return tuple(out)


def read_siq(data: bytes, limits: Limits = Limits()) -> ReadPackage:
    """Read a ``.siq`` file whole. Raises PackageFileError naming the entry, element or line that is wrong.

    Every media file the questions name is inflated once to check it (size, ratio, CRC); :class:`MediaFile`
    reads it again, in chunks, where it is stored."""
    with SafeZip(data, limits) as archive:
        content = archive.find("content.xml")
        if content is None:
            raise PackageFileError("package.no_content", "no content.xml: not a SIGame package")
        root = parse_xml(archive.stream(content, limits.xml_bytes), "content.xml", limits)
        if local(root.tag) != "package":
            raise PackageFileError("package.bad_structure", f"the root element is <{local(root.tag)}>, "
                                   "not <package>", where="content.xml")
        check_version(root)
        shared = _global_authors(root)
        wanted: dict[str, str] = {}  # media path in the package → the archive entry holding it
        themes = []
        questions_read = 0
        for round_number, round_element in enumerate(_all(root, "rounds", "round"), start=1):
            round_name = round_element.get("name", "").strip() or str(round_number)
            kind = FINAL if (round_element.get("type") or "").strip().casefold() == FINAL else STANDARD
            for theme_number, theme_element in enumerate(_all(round_element, "themes", "theme"), start=1):
                name = theme_element.get("name", "").strip()
                where = f"round «{round_name}» › theme {theme_number}"
                if not name:
                    raise PackageFileError("package.theme_without_name", "a theme without a name", where=where)
                questions = tuple(
                    _question(question, f"round «{round_name}» › theme «{name}» › question {number}", archive,
                              wanted)
                    for number, question in enumerate(_all(theme_element, "questions", "question"), start=1))
                questions_read += len(questions)
                check_counts(len(themes) + 1, questions_read, limits, where)
                themes.append(Theme(name=name, questions=questions, round=round_name,
                                    comment="\n".join(texts(theme_element, "info", "comments")), kind=kind,
                                    authors=authors_of(theme_element, shared)))
        if not themes:
            raise PackageFileError("package.empty", "the package has no themes", where="content.xml")
        media = {}
        for path, entry in sorted(wanted.items()):
            media[path] = MediaFile(archive, entry, archive.check(entry))
        package = Package(title=root.get("name", "").strip() or "SIGame", themes=tuple(themes), origin="siq",
                          authors=authors_of(root, shared), media_files=tuple(media))
        return ReadPackage(package, media)


def check_counts(themes: int, questions: int, limits: Limits, where: str) -> None:
    """Refuse a package of more themes or questions than a library keeps (``Limits.themes``, ``.questions``), as
    soon as the reader counts one too many."""
    if themes > limits.themes:
        raise PackageFileError("package.too_many_themes", f"more than {limits.themes} themes", where=where,
                               limit=limits.themes)
    if questions > limits.questions:
        raise PackageFileError("package.too_many_questions", f"more than {limits.questions} questions",
                               where=where, limit=limits.questions)


def _all(element, container: str, name: str) -> list:
    return [found for holder in children(element, container) for found in children(holder, name)]


def _question(element, where: str, archive: SafeZip, wanted: dict) -> Question:
    price_text = element.get("price", "").strip()
    try:
        price = int(price_text)
    except ValueError:
        raise PackageFileError("package.bad_price", f"price {price_text[:20]!r} is not a whole number",
                               where=where, price=price_text[:20]) from None
    if not -1_000_000 <= price <= 1_000_000:
        raise PackageFileError("package.bad_price", f"price {price} is out of range", where=where, price=price)
    scenario, params = child(element, "scenario"), child(element, "params")
    if params is not None:  # version 5
        by_name = {param.get("name"): param for param in children(params, "param")}
        asked = _items(by_name.get("question"), archive, wanted, where)
        shown_with_answer = _items(by_name.get("answer"), archive, wanted, where)
    elif scenario is not None:  # version 4 and older
        atoms = children(scenario, "atom")
        cut = next((index for index, atom in enumerate(atoms) if atom.get("type") == "marker"), len(atoms))
        asked = _atoms(atoms[:cut], archive, wanted, where)
        shown_with_answer = _atoms(atoms[cut + 1:], archive, wanted, where)
    else:
        raise PackageFileError("package.question_without_text", "a question with neither <scenario> nor <params>",
                               where=where)
    answers = texts(element, "right", "answer")
    answer = " / ".join(answers)
    if shown_with_answer:
        answer = f"{answer}\n{shown_with_answer}" if answer else shown_with_answer
    if not asked and not answer:
        raise PackageFileError("package.question_without_text", "an empty question", where=where)
    return Question(price_points=price, text=asked, answer=answer,
                    comment="\n".join(texts(element, "info", "comments")),
                    source="\n".join(texts(element, "info", "sources", "source")),
                    author=", ".join(texts(element, "info", "authors", "author")))


def _media(kind: str, value: str, archive: SafeZip, wanted: dict) -> str:
    """The marker for one media reference; a file of the package is kept (an outside link stays a link)."""
    marker_kind, folder = MEDIA[kind]
    name = value.strip().lstrip("@")
    entry = archive.find(f"{folder}/{name}") or archive.find(name)
    if entry is None:
        return media_marker(marker_kind, name or "?")
    wanted[entry] = entry
    return media_marker(marker_kind, entry)


def _atoms(atoms: list, archive: SafeZip, wanted: dict, where: str) -> str:
    parts = []
    for atom in atoms:
        kind = (atom.get("type") or "").strip()
        value = (atom.text or "").strip()
        if kind in TEXT_TYPES:
            parts.append(value)
        elif kind in MEDIA:
            parts.append(_media(kind, value, archive, wanted))
        # other atom types (SIGame's own stage directions) carry nothing to read
    return "\n".join(part for part in parts if part)


def _items(param, archive: SafeZip, wanted: dict, where: str) -> str:
    if param is None:
        return ""
    parts = []
    for item in children(param, "item"):
        kind = (item.get("type") or "text").strip()
        value = (item.text or "").strip()
        if kind in TEXT_TYPES:
            parts.append(value)
        elif kind in MEDIA:
            parts.append(_media(kind, value, archive, wanted) if item.get("isRef", "").lower() == "true"
                         else media_marker(MEDIA[kind][0], value or "?"))
    return "\n".join(part for part in parts if part)
