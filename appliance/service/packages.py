"""Question packages on the box: the library, which themes were played where, and a battle's themes from one.

The library (:mod:`appliance.packages.library`) keeps the files; the battle log keeps what was played: a battle
set up from a package records, per theme, the package and the theme's number in it (``BattleSetUp.sources``).
So "played" is derived from the log, never a second record that could disagree with it, and an appeal can be
checked against the very text the host read.
"""

from __future__ import annotations

import dataclasses
import threading

from appliance.errors import SvoyakError
from appliance.packages.archive import Limits
from appliance.packages.errors import PackageFileError, PackageNotFound
from appliance.packages.library import Library
from appliance.packages.model import Package, check_fields, media_markers


# A tournament battle's slot (appliance/service/tournaments.py SLOT_PREFIX): "tournament:<id>:<battle>".
TOURNAMENT_SLOT = "tournament:"


class PackageChoiceError(PackageFileError):
    """The themes asked of a package cannot be had: a number out of range, a theme twice, too few unplayed."""


class QuestionPackages:
    """The packages of this box, with what its battles played of them."""

    def __init__(self, library: Library, battles=None, tournament_of=None):
        self.library = library
        self.battles = battles
        # box battle id → tournament id, for battles linked to a tournament without a slot (the director's «play
        # on this box»): the tournament desk's ``box_battles``, given where both are built
        self.tournament_of = tournament_of
        # A package's id is the hash of its file, so what is read under an id never changes: kept once read
        # (the host's reading view asks for a question's comment on every view).
        self._read: dict[str, Package] = {}
        self._read_lock = threading.Lock()

    def package(self, package_id: str) -> Package:
        """The package as read (kept in memory after the first read); raises PackageNotFound."""
        with self._read_lock:
            known = self._read.get(package_id)
        if known is not None:
            return known
        package = self.library.package(package_id)
        with self._read_lock:
            if len(self._read) >= 16:
                self._read.clear()  # a box plays a few packages a day; never hold the whole library
            self._read[package_id] = package
        return package

    def title(self, package_id: str) -> str | None:
        try:
            return self.package(package_id).title
        except PackageNotFound:
            return None

    @classmethod
    def in_folder(cls, folder, battles=None, limits: Limits = Limits(), tournament_of=None) -> QuestionPackages:
        return cls(Library(folder, limits), battles, tournament_of)

    # ----------------------------------------------------------------- library
    def add(self, filename: str, data: bytes) -> dict:
        """Import a file; ``{..entry, duplicate}``. Raises PackageFileError (nothing kept) for a refused file."""
        entry, duplicate = self.library.add(filename, data)
        return {**dataclasses.asdict(entry), "duplicate": duplicate}

    def entries(self) -> list[dict]:
        """Every package, newest first, with how many of its themes this box has played."""
        played = self._played()
        return [{**dataclasses.asdict(entry), "played_themes": len(played.get(entry.id, {}))}
                for entry in self.library.entries()]

    def choices(self) -> list[dict]:
        """What a battle's setup chooses from: every package with its themes' names and whether this box played
        each (never a question's text)."""
        played = self._played()
        out = []
        for entry in self.library.entries():
            package = self.package(entry.id)
            marks = played.get(entry.id, {})
            out.append({"id": entry.id, "title": entry.title, "questions": entry.questions,
                        "themes": [{"number": number, "name": theme.name, "played": number in marks,
                                    "final": theme.is_final}
                                   for number, theme in enumerate(package.themes)]})
        return out

    def delete(self, package_id: str) -> None:
        self.library.delete(package_id)
        with self._read_lock:
            self._read.pop(package_id, None)

    def preview(self, package_id: str) -> dict:
        """The whole package for the host (never the audience): every theme with its questions and answers."""
        entry = self.library.entry(package_id)
        package = self.package(package_id)
        played = self._played().get(package_id, {})
        tournaments = self._played(by_tournament=True).get(package_id, {})
        return {**dataclasses.asdict(entry), "authors": list(package.authors), "themes": [
            {"number": number, "name": theme.name, "round": theme.round, "comment": theme.comment,
             "kind": theme.kind, "final": theme.is_final, "authors": list(theme.authors),
             "played_in": played.get(number, []), "played_in_tournaments": tournaments.get(number, []),
             "questions": [{"price_points": q.price_points, "text": q.text, "answer": q.answer, "comment": q.comment,
                            "source": q.source, "author": q.author,
                            "media": [{"kind": kind, "path": path} for kind, path in media_markers(q.text + q.answer)]}
                           for q in theme.questions]}
            for number, theme in enumerate(package.themes)]}

    def question(self, package_id: str, theme_number: int, question_number: int) -> dict | None:
        """One question's whole record (comment and source included), or None if the package is gone."""
        try:
            theme = self.package(package_id).themes[theme_number]
            q = theme.questions[question_number]
        except (PackageNotFound, IndexError):
            return None
        return {"theme": theme.name, "text": q.text, "answer": q.answer, "comment": q.comment, "source": q.source,
                "author": q.author, "theme_authors": list(theme.authors)}

    def written_round(self, package_id: str, *, themes: list[int] | None = None, count: int = 12) -> dict:
        """The themes of a written round (youth-cup 2.2: 12 themes) for its answer sheets and the host's key:
        the chosen themes, or the next ``count`` unplayed, each with every question (text, answer, comment)."""
        chosen = self.battle_themes(package_id, themes=themes, count=count)["sources"]
        package = self.package(package_id)
        out = []
        for _, number in chosen:
            theme = package.themes[number]
            out.append({"number": number, "name": theme.name, "questions": [
                {"price_points": q.price_points, "text": q.text, "answer": q.answer, "comment": q.comment,
                 "source": q.source} for q in theme.questions]})
        return {"id": package_id, "title": package.title, "themes": out}

    # ---------------------------------------------------------- what was played
    def _played(self, by_tournament: bool = False) -> dict[str, dict[int, list[str]]]:
        """package id → theme number → the battles of this box that played it (from their setups); with
        ``by_tournament``, the tournaments those battles belong to (their slot ``tournament:<id>:<battle>``)."""
        played: dict[str, dict[int, list[str]]] = {}
        if self.battles is None:
            return played
        linked = self.tournament_of() if by_tournament and self.tournament_of is not None else {}
        for listed in self.battles.list():
            battle_id = listed["battle_id"]
            try:
                setup = self.battles.state(battle_id).setup
            except SvoyakError:
                continue  # a log that no longer replays is reported elsewhere; it marks nothing here
            label = battle_id
            if by_tournament:
                slot = getattr(setup, "slot", "") or ""
                if slot.startswith(TOURNAMENT_SLOT):
                    label = slot[len(TOURNAMENT_SLOT):].partition(":")[0]
                elif battle_id in linked:
                    label = linked[battle_id]
                else:
                    continue
            for source in getattr(setup, "sources", ()) or ():
                if source:
                    package_id, theme_number = source
                    marks = played.setdefault(package_id, {}).setdefault(theme_number, [])
                    if label not in marks:
                        marks.append(label)
        return played

    # ------------------------------------------------------- a battle's themes
    def battle_themes(self, package_id: str, *, themes: list[int] | None = None, count: int = 0,
                      spare: list[int] = (), questions_per_theme: int = 5, exclude=()) -> dict:
        """What a battle set up from a package carries: ``{theme_names, questions, sources, theme_authors,
        skipped}``.

        ``themes`` are the chosen theme numbers in the order they are played; without them, the next ``count``
        themes this box has not played, in package order. A theme of SIGame's final round (one question for
        stakes) is never one of them: the next unplayed skip it, and choosing it is refused
        (``package.final_theme``); it may be a spare. ``spare`` themes (red or shoot-out themes the host picks
        beforehand: eurocup 2.4, irkutsk 3.6, youth-cup 2.7, northern-owl 3.3) follow the regular ones. Each
        theme carries its first ``questions_per_theme`` questions as (text, answer); ``skipped`` counts the
        questions a longer theme leaves out. The next unplayed also skip ``exclude`` (themes already given to
        another battle that has not been played yet). Raises PackageChoiceError naming what cannot be had.
        """
        package = self.package(package_id)
        played = self._played().get(package_id, {})
        if themes is None:
            unplayed = [number for number, theme in enumerate(package.themes) if number not in played
                        and number not in spare and number not in exclude and not theme.is_final]
            if len(unplayed) < count:
                raise PackageChoiceError("package.too_few_unplayed",
                                         f"the package has {len(unplayed)} unplayed themes, {count} are needed",
                                         where=package.title, unplayed=len(unplayed), needed=count)
            themes = unplayed[:count]
        chosen = list(themes) + list(spare)
        for number in chosen:
            if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number < len(package.themes):
                raise PackageChoiceError("package.no_such_theme", f"theme {number!r} is not in the package "
                                         f"(1-{len(package.themes)})", where=package.title, theme=number,
                                         themes=len(package.themes))
        if len(set(chosen)) != len(chosen):
            raise PackageChoiceError("package.theme_twice", "a theme is chosen twice", where=package.title)
        final = [number for number in themes if package.themes[number].is_final]
        if final:
            raise PackageChoiceError("package.final_theme", f"theme {final[0] + 1} «{package.themes[final[0]].name}» "
                                     "is from the final round, not an ordinary theme", where=package.title,
                                     theme=final[0])
        return _setup_parts(package, package_id, chosen, questions_per_theme)


def _setup_parts(package: Package, package_id: str, chosen: list[int], per_theme: int) -> dict:
    # A package kept before the field caps (or written by hand into the library) still gives a setup nothing a
    # typed one could not hold: the chosen themes are held to the same caps as an import.
    check_fields(dataclasses.replace(package, themes=tuple(package.themes[number] for number in chosen)))
    names, questions, sources, authors, skipped = [], [], [], [], 0
    for number in chosen:
        theme = package.themes[number]
        names.append(theme.name)
        questions.append([[q.text, q.answer] for q in theme.questions[:per_theme]])
        sources.append([package_id, number])
        authors.append(list(theme.authors))
        skipped += max(0, len(theme.questions) - per_theme)
    if not any(authors):
        authors = []  # a setup without theme authors records none (BattleSetUp.theme_authors is optional)
    return {"theme_names": names, "questions": questions, "sources": sources, "theme_authors": authors,
            "skipped": skipped}
