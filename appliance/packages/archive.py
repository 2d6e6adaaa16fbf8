"""Reading an untrusted ZIP (a ``.siq`` package) without letting it fill the card or escape its folder.

A ZIP says how large each entry is, and it may lie: a zip bomb declares a few kilobytes and inflates to
gigabytes. So every entry is read through a counter that stops at the limit, whatever the header says, and the
whole archive has a budget too. Names are checked before anything is read: no ``..``, no absolute path, no drive
letter, no backslash tricks, no duplicates (the same file twice could hide one version behind the other).
"""

from __future__ import annotations

import dataclasses
import io
import posixpath
import urllib.parse
import zipfile
import zlib

from appliance.packages.errors import PackageFileError

MB = 1024 * 1024


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one package file may hold. The service takes them from the settings (appliance/config.py)."""

    upload_bytes: int = 100 * MB  # the file as uploaded
    unpacked_bytes: int = 300 * MB  # all entries, inflated
    entries: int = 10_000
    xml_bytes: int = 20 * MB  # content.xml or a tour's XML, inflated
    ratio: int = 200  # inflated / compressed, for an entry of more than 1 MB


def entry_name(info: zipfile.ZipInfo) -> str:
    """The entry's path inside the package, URI-unescaped (SIGame stores ``Снимок.png`` as ``%D0%A1...``).

    Raises PackageFileError(package.unsafe_entry) for a name that would leave the package's folder.
    """
    raw = info.filename
    name = urllib.parse.unquote(raw)
    parts = name.split("/")
    if (not name or "\\" in name or "\x00" in name or name.startswith("/") or ":" in parts[0]
            or any(part in ("..", ".") for part in parts) or posixpath.normpath(name) != name.rstrip("/")):
        raise PackageFileError("package.unsafe_entry", f"entry {raw!r} points outside the package", entry=raw)
    return name


class SafeZip:
    """An opened ZIP whose entries are read within :class:`Limits`. Use as a context manager."""

    def __init__(self, data: bytes, limits: Limits):
        if len(data) > limits.upload_bytes:
            raise PackageFileError("package.too_large", f"the file is {len(data) // MB} MB, at most "
                                   f"{limits.upload_bytes // MB} MB", size_mb=len(data) // MB,
                                   limit_mb=limits.upload_bytes // MB)
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self._zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as error:
            raise PackageFileError("package.not_zip", f"not a ZIP archive ({error})") from None
        if len(infos) > limits.entries:
            raise PackageFileError("package.too_many_entries", f"{len(infos)} entries, at most {limits.entries}",
                                   count=len(infos), limit=limits.entries)
        self.limits = limits
        self._spent = 0
        self.entries: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            if info.is_dir():
                continue
            name = entry_name(info)
            if name.casefold() in (known.casefold() for known in self.entries):
                raise PackageFileError("package.duplicate_entry", f"entry {name!r} is in the archive twice",
                                       entry=name)
            self.entries[name] = info

    def __enter__(self) -> SafeZip:
        return self

    def __exit__(self, *exc) -> None:
        self._zip.close()

    def find(self, name: str) -> str | None:
        """The entry called ``name`` (compared without case, as SIGame on Windows wrote them), or None."""
        wanted = name.casefold()
        return next((entry for entry in self.entries if entry.casefold() == wanted), None)

    def read(self, name: str, limit: int | None = None) -> bytes:
        """The entry's bytes, inflated at most to ``limit`` (default: what is left of the archive's budget)."""
        info = self.entries[name]
        budget = self.limits.unpacked_bytes - self._spent
        cap = budget if limit is None else min(limit, budget)
        chunks, size = [], 0
        try:
            with self._zip.open(info) as stream:
                while chunk := stream.read(64 * 1024):
                    size += len(chunk)
                    if size > cap:
                        raise PackageFileError("package.bomb", f"entry {name!r} inflates past "
                                               f"{cap // MB} MB", entry=name, limit_mb=cap // MB)
                    if size > MB and size > self.limits.ratio * max(info.compress_size, 1):
                        raise PackageFileError("package.bomb", f"entry {name!r} inflates more than "
                                               f"{self.limits.ratio} times", entry=name, limit_mb=cap // MB)
                    chunks.append(chunk)
        except PackageFileError:
            raise
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError,
                zlib.error) as error:  # RuntimeError: an encrypted entry
            raise PackageFileError("package.corrupt_entry", f"entry {name!r} cannot be read ({error})",
                                   entry=name) from None
        self._spent += size
        return b"".join(chunks)
