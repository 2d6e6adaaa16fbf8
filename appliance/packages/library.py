"""The packages kept on this box: ``<data_dir>/packages/<id>/`` holds ``package.json`` and the media files.

A package's id is the start of the SHA-256 of the file as uploaded, so the same file uploaded twice is one
package. Adding is all or nothing: the file is read and validated whole, written into a hidden folder, flushed,
and only then renamed into place; a crash leaves either the whole package or none (a hidden folder left behind
is swept on the next start). Deleting renames the folder away first, then removes it.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import os
import shutil
from pathlib import Path

from appliance.packages.archive import Limits
from appliance.packages.errors import PackageFileError, PackageNotFound
from appliance.packages.formats import read_package
from appliance.packages.model import FORMAT_VERSION, Package, package_from_json

ID_LENGTH = 12
INDEX_FILE = "package.json"


@dataclasses.dataclass(frozen=True)
class Entry:
    """One package in the library, as the list shows it (no question texts)."""

    id: str
    title: str
    origin: str
    filename: str
    imported_at: str  # ISO 8601, UTC
    themes: int
    questions: int
    media_questions: int
    media_files: int


class Library:
    """Add, list, read and delete packages in ``folder``."""

    def __init__(self, folder: Path, limits: Limits = Limits()):
        self.folder = Path(folder)
        self.limits = limits
        self.folder.mkdir(parents=True, exist_ok=True)
        for leftover in self.folder.glob(".*"):  # an add or delete a crash interrupted
            shutil.rmtree(leftover, ignore_errors=True)

    def add(self, filename: str, data: bytes) -> tuple[Entry, bool]:
        """Import a package file. Returns (its entry, True if it was already in the library). A file kept in an
        older stored format is read again and its index replaced (so a package imported before the final round
        was kept learns it by being uploaded again).

        Raises PackageFileError (nothing is kept) for a file that cannot be imported.
        """
        package_id = hashlib.sha256(data).hexdigest()[:ID_LENGTH]
        older = False
        if (self.folder / package_id / INDEX_FILE).exists():
            if self._record(package_id)["package"].get("format") == FORMAT_VERSION:
                return self.entry(package_id), True
            older = True  # kept in an older format (no final round, no theme authors): read the file again
        read = read_package(filename, data, self.limits)
        staging = self.folder / f".new-{package_id}-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        try:
            for path, media in read.media.items():
                target = staging / "media" / path
                if staging / "media" not in target.parents:
                    raise PackageFileError("package.unsafe_entry", f"entry {path!r} points outside the package",
                                           entry=path)
                target.parent.mkdir(parents=True, exist_ok=True)
                _write(target, media.chunks())  # chunk by chunk: a package's media never sit in memory whole
            record = {"id": package_id, "filename": Path(filename).name[:200],
                      "imported_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                      "package": read.package.to_json()}
            _write(staging / INDEX_FILE, json.dumps(record, ensure_ascii=False).encode("utf-8"))
            _fsync_dir(staging)
            if older:  # the same file, so the same media: only the index changes, replaced in one rename
                os.replace(staging / INDEX_FILE, self.folder / package_id / INDEX_FILE)
                _fsync_dir(self.folder / package_id)
            else:
                os.rename(staging, self.folder / package_id)
            _fsync_dir(self.folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return self.entry(package_id), False

    def _record(self, package_id: str) -> dict:
        if len(package_id) != ID_LENGTH or not all(char in "0123456789abcdef" for char in package_id):
            raise PackageNotFound(package_id)
        try:
            return json.loads((self.folder / package_id / INDEX_FILE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise PackageNotFound(package_id) from None

    def entry(self, package_id: str) -> Entry:
        record = self._record(package_id)
        package = package_from_json(record["package"])
        return Entry(id=record["id"], title=package.title, origin=package.origin, filename=record["filename"],
                     imported_at=record["imported_at"], themes=len(package.themes),
                     questions=package.question_count, media_questions=package.media_question_count,
                     media_files=len(package.media_files))

    def entries(self) -> list[Entry]:
        """Every package, newest first."""
        found = [self.entry(path.name) for path in self.folder.iterdir()
                 if not path.name.startswith(".") and (path / INDEX_FILE).exists()]
        return sorted(found, key=lambda entry: (entry.imported_at, entry.id), reverse=True)

    def package(self, package_id: str) -> Package:
        return package_from_json(self._record(package_id)["package"])

    def media_path(self, package_id: str, path: str) -> Path:
        """The file of a media marker, if the package kept it; raises PackageNotFound otherwise."""
        package = self.package(package_id)
        if path not in package.media_files:
            raise PackageNotFound(f"{package_id}/{path}")
        return self.folder / package_id / "media" / path

    def delete(self, package_id: str) -> None:
        self._record(package_id)
        doomed = self.folder / f".deleted-{package_id}-{os.getpid()}"
        os.rename(self.folder / package_id, doomed)
        _fsync_dir(self.folder)
        shutil.rmtree(doomed, ignore_errors=True)


def _write(path: Path, content) -> None:
    """``content`` (bytes, or an iterable of byte chunks) written and flushed to the card."""
    with open(path, "wb") as file:
        for chunk in ((content,) if isinstance(content, bytes) else content):
            file.write(chunk)
        file.flush()
        os.fsync(file.fileno())


def _fsync_dir(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
