"""Packages stay on the desk: an assignment carries the themes it plays (docs/rooms.md "Packages on the desk").

The desk (hub) keeps the tournament's question packages. A battle given to a station whose theme pack was read
from a package (the themes page, or «Отдать бой станции» with a package) carries those themes: the hub writes
them, questions, answers, comments and pictures included, into the station's own KV bucket (``ROOM_<box>``, the
one its permissions let it read), and the assignment names the entry (``package.key``). The station keeps what
arrived under ``data_dir/rooms/carried/`` and its host reads the battle from the page as from a package of its
own: nobody carries a file to the room.

One record of what was played, for every room: the hub's copy of each station battle holds its ``BattleSetUp``
with its sources, so :class:`PlayedEverywhere` shows the desk's packages every theme played on any box, and the
desk never gives a theme twice in a tournament (the next unplayed skip them). Spare themes (youth-cup 2.7's
shoot-out themes) are held per theme pack in the hub's store (:class:`SparesBook`): both runs of a youth-cup 2.4
1/16 slot are one pack ("в два захода на одних и тех же темах"), so they carry the same spares, and no other pack
is given them.

Entries, each a KV value within JetStream's payload limit (1 MB by default): ``carried.<sha>`` (the JSON below,
content-addressed, so a changed pack is a new key) and ``media.<sha>.<n>`` (a picture's bytes in chunks of
:data:`CHUNK_BYTES`)::

    {"format": "svoyak-rooms", "v": 1, "kind": "carried", "package": "<id>", "title": "...",
     "themes": {"<number>": {"name", "round", "comment", "kind", "authors", "questions": [{...}]}},
     "media": [{"path": "Images/map.png", "sha256": "...", "bytes": 1234, "chunks": ["media.<sha>.0"]}]}
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import threading
import types
from pathlib import Path

from appliance.packages.errors import PackageError, PackageNotFound
from appliance.packages.model import STANDARD, Package, Question, Theme, check_fields, media_markers
from appliance.rules import tournament as t
from appliance.service.packages import QuestionPackages
from appliance.service.rooms import wire
from appliance.store.eventlog import StreamKind

log = logging.getLogger(__name__)

CHUNK_BYTES = 512 * 1024        # one KV value: under nats-server's default max_payload (1 MB)
MEDIA_MAX_BYTES = 64 * 1024**2  # the pictures one battle carries, at most (the rest stay on the desk, said in the log)
SPARES_STREAM = "spares"


# --- spare themes held per theme pack, in the hub's store -----------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SparesHeld:
    """The spare themes of ``package`` given to a tournament's theme pack (every battle of the pack shares them)."""

    at_ns: int
    tournament: str
    pack: str
    package: str
    themes: tuple[int, ...]


def _encode(event: SparesHeld) -> dict:
    return {"type": "SparesHeld", "v": 1, "at_ns": event.at_ns, "tournament": event.tournament,
            "pack": event.pack, "package": event.package, "themes": list(event.themes)}


def _decode(data: dict) -> SparesHeld:
    if data.get("type") != "SparesHeld" or data.get("v") != 1:
        raise ValueError(f"not a rooms spares event: {data.get('type')!r} v{data.get('v')!r}")
    themes = data["themes"]
    if not isinstance(themes, list) or not all(isinstance(n, int) and not isinstance(n, bool) for n in themes):
        raise ValueError("spare themes are theme numbers")
    return SparesHeld(int(data["at_ns"]), str(data["tournament"]), str(data["pack"]), str(data["package"]),
                      tuple(themes))


SPARES = StreamKind("rooms-spares", _encode, _decode, (ValueError, TypeError, KeyError))


class SparesBook:
    """``(tournament, pack) -> (package, themes)``, read from the store at start (thread-safe)."""

    def __init__(self, store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._held: dict[tuple[str, str], tuple[str, tuple[int, ...]]] = {}
        for event in store.events(SPARES, SPARES_STREAM):
            self._held[(event.tournament, event.pack)] = (event.package, event.themes)

    def held(self, tournament: str, pack: str) -> tuple[str, tuple[int, ...]] | None:
        with self._lock:
            return self._held.get((tournament, pack))

    def all(self) -> dict[tuple[str, str], tuple[str, tuple[int, ...]]]:
        with self._lock:
            return dict(self._held)

    def hold(self, at_ns: int, tournament: str, pack: str, package: str, themes) -> tuple[str, tuple[int, ...]]:
        """Store the pack's spares once: a pack that holds spares already keeps them (returned)."""
        event = SparesHeld(at_ns, tournament, pack, package, tuple(themes))
        with self._lock:
            known = self._held.get((tournament, pack))
            if known is not None:
                return known
            self.store.append(SPARES, SPARES_STREAM, [event])
            self._held[(tournament, pack)] = (package, event.themes)
            return self._held[(tournament, pack)]


# --- every theme played in every room --------------------------------------------------------------------------------
class PlayedEverywhere:
    """The battles :class:`~appliance.service.packages.QuestionPackages` reads "played" from, on the hub: this
    box's own battles, the hub's copy of every station battle (``replicas()``: the ledger's, each with its setup
    and sources) and the spares held for a pack (shown as played by ``spare:<tournament>:<pack>``: given, so
    never given again)."""

    def __init__(self, local, replicas, spares: SparesBook) -> None:
        self.local = local
        self.replicas = replicas
        self.spares = spares

    def _remote(self) -> dict[str, object]:
        return {f"{replica.box}/{replica.battle}": replica.state for replica in self.replicas()
                if replica.state is not None}

    def list(self) -> list[dict]:
        rows = list(self.local.list()) if self.local is not None else []
        rows += [{"battle_id": key} for key in self._remote()]
        rows += [{"battle_id": f"spare:{tournament}:{pack}"} for tournament, pack in self.spares.all()]
        return rows

    def state(self, battle_id: str):
        if battle_id.startswith("spare:"):
            tournament, _, pack = battle_id[len("spare:"):].partition(":")
            package, themes = self.spares.held(tournament, pack) or ("", ())
            setup = types.SimpleNamespace(slot=f"tournament:{tournament}:", sources=[(package, n) for n in themes])
            return types.SimpleNamespace(setup=setup)
        remote = self._remote()
        if battle_id in remote:
            return remote[battle_id]
        return self.local.state(battle_id)


# --- the hub's side: what an assignment carries ----------------------------------------------------------------------
def _key(prefix: str, content: bytes) -> str:
    return f"{prefix}.{hashlib.sha256(content).hexdigest()[:32]}"


class DeskCarrier:
    """Adds ``package`` to each assignment whose theme pack was read from a package, and gives the KV entries.

    ``desk()``: the TournamentDesk; ``packages``: the hub's QuestionPackages (its ``battles`` a
    :class:`PlayedEverywhere`); ``spares``: the :class:`SparesBook`; ``spare_count``: the setting
    ``rooms_spare_themes``."""

    def __init__(self, desk, packages: QuestionPackages, spares: SparesBook, spare_count: int = 1) -> None:
        self.desk = desk
        self.packages = packages
        self.spares = spares
        self.spare_count = spare_count
        self._digests: dict[tuple[str, str, int, int], str] = {}  # (package, path, size, mtime_ns) -> sha256

    def give_package(self, tournament_id: str, battle_id: str, package_id: str) -> None:
        """The director gives a battle (and its pack: both runs) themes of ``package_id``: the next that no room
        played and no other pack of the tournament holds (its spares included). A pack already read from a
        package keeps its themes. Raises PackageChoiceError (nothing named) when too few are left."""
        desk = self.desk()
        state = desk.state(tournament_id)
        spec = state.battles.get(battle_id)
        if spec is None or state.theme_sources.get(spec.theme_pack):
            return
        parts = self.packages.battle_themes(package_id, count=len(spec.themes),
                                            exclude=self._taken(state, tournament_id, package_id))
        desk.submit(tournament_id, t.ThemesNamed(desk.clock(), spec.theme_pack, tuple(parts["theme_names"]),
                                                 tuple((p, n) for p, n in parts["sources"])))

    def _taken(self, state, tournament_id: str, package_id: str) -> set[int]:
        """The themes of ``package_id`` a pack of the tournament plays or holds as its spares: never given again."""
        named = {number for sources in state.theme_sources.values() for package, number in sources
                 if package == package_id}
        spares = {number for (tournament, _pack), (package, numbers) in self.spares.all().items()
                  if tournament == tournament_id and package == package_id for number in numbers}
        return named | spares

    def _spares(self, state, tournament_id: str, pack: str, package_id: str, themes: list[int]) -> list[int]:
        held = self.spares.held(tournament_id, pack)
        if held is not None:
            return list(held[1]) if held[0] == package_id else []
        if not self.spare_count:
            return []
        taken = self._taken(state, tournament_id, package_id) | set(themes)
        try:
            parts = self.packages.battle_themes(package_id, count=self.spare_count, exclude=taken)
        except PackageError as error:  # too few left: the battle plays without spares (the director sees none)
            log.warning("spares for %s/%s: %s", tournament_id, pack, error)
            return []
        chosen = [number for _id, number in parts["sources"]]
        return list(self.spares.hold(self.desk().clock(), tournament_id, pack, package_id, chosen)[1])

    def _digest(self, package_id: str, path: str, file: Path) -> str:
        stat = file.stat()
        key = (package_id, path, stat.st_size, stat.st_mtime_ns)
        if key not in self._digests:
            digest = hashlib.sha256()
            with open(file, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            self._digests[key] = digest.hexdigest()
        return self._digests[key]

    def attach(self, items: list[dict]) -> dict[str, object]:
        """Add ``package`` to each assignment that plays a package's themes; return the KV entries they need,
        ``{key: bytes | (file, offset, length)}`` (a picture's chunk is read only when written)."""
        desk = self.desk()
        entries: dict[str, object] = {}
        for item in items:
            try:
                state = desk.state(item["tournament"])
                spec = state.battles[item["battle"]]
            except (LookupError, KeyError):
                continue
            sources = state.theme_sources.get(spec.theme_pack, ())
            ids = {package_id for package_id, _n in sources}
            if len(ids) != 1:
                continue  # named by hand (or from two packages): the names travel, as before
            package_id = next(iter(ids))
            themes = [number for _id, number in sources]
            try:
                package = self.packages.package(package_id)
                spare = self._spares(state, item["tournament"], spec.theme_pack, package_id, themes)
                carried, media = self._carried(package_id, package, themes + spare)
            except PackageError as error:  # the package left the desk: the names travel, the log says why
                log.warning("assignment %s/%s carries no package: %s", item["tournament"], item["battle"], error)
                continue
            body = wire.encode("carried", **carried)
            key = _key("carried", body)
            entries[key] = body
            entries.update(media)
            item["package"] = {"id": package_id, "title": package.title, "themes": themes, "spare": spare,
                               "key": key, "media": len(carried["media"])}
        return entries

    def _carried(self, package_id: str, package: Package, numbers: list[int]) -> tuple[dict, dict]:
        themes, media_list, media, total = {}, [], {}, 0
        kept = set(package.media_files)
        for number in numbers:
            theme = package.themes[number]
            themes[str(number)] = dataclasses.asdict(theme)
            for question in theme.questions:
                for _kind, path in media_markers(question.text + question.answer):
                    if path not in kept or any(m["path"] == path for m in media_list):
                        continue
                    try:
                        file = self.packages.library.media_path(package_id, path)
                        size = file.stat().st_size
                    except (PackageNotFound, OSError):
                        continue
                    if total + size > MEDIA_MAX_BYTES:
                        log.warning("package %s: pictures beyond %d bytes stay on the desk", package_id,
                                    MEDIA_MAX_BYTES)
                        continue
                    total += size
                    digest = self._digest(package_id, path, file)
                    chunks = []
                    for index, offset in enumerate(range(0, max(size, 1), CHUNK_BYTES)):
                        chunk_key = f"media.{digest[:32]}.{index}"
                        chunks.append(chunk_key)
                        media[chunk_key] = (file, offset, min(CHUNK_BYTES, size - offset))
                    media_list.append({"path": path, "sha256": digest, "bytes": size, "chunks": chunks})
        return {"package": package_id, "title": package.title, "themes": themes, "media": media_list}, media


def entry_bytes(value) -> bytes:
    """A KV entry's bytes: given, or a picture's chunk read now."""
    if isinstance(value, bytes):
        return value
    file, offset, length = value
    with open(file, "rb") as handle:
        handle.seek(offset)
        return handle.read(length)


# --- the station's side: what arrived, read as a package ----------------------------------------------------------
class CarriedStore:
    """What the desk's assignments carried to this station, under ``folder`` (``<key>.json``, ``media/<sha256>``).

    Written whole before it is used (a file renamed into place), checked on arrival: the JSON's shape and every
    field's length (:func:`~appliance.packages.model.check_fields`), each picture's sha256."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._lock = threading.Lock()
        self._packages: dict[str, dict[int, Theme]] = {}
        self._titles: dict[str, str] = {}
        self._media: dict[tuple[str, str], str] = {}
        for file in sorted(self.folder.glob("carried.*.json")):
            try:
                self._take(json.loads(file.read_text()))
            except (OSError, ValueError, KeyError, TypeError, PackageError) as error:
                log.warning("carried %s dropped: %s", file.name, error)

    def has(self, key: str) -> bool:
        return (self.folder / f"{key}.json").exists()

    def _take(self, data: dict) -> None:
        package_id, title = str(data["package"]), str(data["title"])
        themes = {}
        for number, theme in data["themes"].items():
            themes[int(number)] = Theme(
                name=str(theme["name"]), round=str(theme.get("round", "")), comment=str(theme.get("comment", "")),
                kind=str(theme.get("kind", STANDARD)), authors=tuple(str(a) for a in theme.get("authors", ())),
                questions=tuple(Question(int(q["price_points"]), str(q["text"]), str(q["answer"]),
                                         str(q.get("comment", "")), str(q.get("source", "")),
                                         str(q.get("author", ""))) for q in theme["questions"]))
        check_fields(Package(title=title, themes=tuple(themes.values()), origin="rooms"))
        with self._lock:
            self._packages.setdefault(package_id, {}).update(themes)
            self._titles[package_id] = title
            for item in data.get("media", ()):
                self._media[(package_id, str(item["path"]))] = str(item["sha256"])

    def keep(self, key: str, body: bytes, media: dict[str, bytes]) -> None:
        """Check and keep one carried entry and its pictures (``{sha256: bytes}``); raises ValueError."""
        data = wire.decode(body, "carried")
        for item in data.get("media", ()):
            content = media.get(item["sha256"])
            if content is None or hashlib.sha256(content).hexdigest() != item["sha256"]:
                raise ValueError(f"picture {item['path']!r} arrived damaged")
        self._take(data)
        (self.folder / "media").mkdir(parents=True, exist_ok=True)
        for digest, content in media.items():
            _write(self.folder / "media" / digest, content)
        _write(self.folder / f"{key}.json", body)

    def package(self, package_id: str) -> Package | None:
        """The carried themes of ``package_id`` at their own numbers (the others empty), or None."""
        with self._lock:
            themes = self._packages.get(package_id)
            if not themes:
                return None
            count = max(themes) + 1
            return Package(title=self._titles[package_id], origin="rooms",
                           themes=tuple(themes.get(n, Theme(name="", questions=())) for n in range(count)),
                           media_files=tuple(path for (pid, path) in self._media if pid == package_id))

    def media_file(self, package_id: str, path: str) -> Path:
        with self._lock:
            digest = self._media.get((package_id, path))
        if digest is None or not (self.folder / "media" / digest).exists():
            raise PackageNotFound(package_id)
        return self.folder / "media" / digest


def _write(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_bytes(content)
    temporary.replace(path)


class CarriedLibrary:
    """The station's library as its battles read it: what the desk carried first, then its own files."""

    def __init__(self, local, carried: CarriedStore) -> None:
        self.local = local
        self.carried = carried

    def package(self, package_id: str) -> Package:
        found = self.carried.package(package_id)
        if found is not None:
            return found
        return self.local.package(package_id)

    def media_path(self, package_id: str, path: str) -> Path:
        try:
            return self.carried.media_file(package_id, path)
        except PackageNotFound:
            return self.local.media_path(package_id, path)

    def __getattr__(self, name: str):
        return getattr(self.local, name)


def station_packages(local: QuestionPackages | None, carried: CarriedStore, battles) -> QuestionPackages:
    """The station's question packages for its battles: the carried ones over its own library (if any)."""
    from appliance.packages.library import Library

    library = local.library if local is not None else Library(carried.folder / "none")
    packages = QuestionPackages(CarriedLibrary(library, carried), battles)
    if local is not None:
        packages.tournament_of = local.tournament_of
    return packages
