"""Reading an untrusted ZIP (a ``.siq`` package) without letting it fill the memory, the card or escape its folder.

A ZIP says how many entries it holds and how large each is, and it may lie: a zip bomb declares a few kilobytes
and inflates to gigabytes, or declares its gigabyte honestly and counts on nobody looking. So, in this order:

1. Before anything is parsed, the end record and the central directory are walked (no objects made): more
   entries than the limit are refused, whatever the end record claims.
2. Before any entry is inflated, the declared sizes are checked: an entry over the budget, entries whose sum is
   over it, an entry of more than 1 MB declaring a ratio above the limit.
3. Every entry is inflated by this module, not by :mod:`zipfile` (whose bzip2 and lzma readers inflate a whole
   input chunk at once: a 1,243-byte bzip2 entry became 1 GB in one call), in chunks of at most 64 KB of output
   whatever the codec (stored, deflate, bzip2, lzma), through a counter that stops at the budget, at the ratio
   measured on the bytes actually consumed, and at the size the header declared (more is a lie). The CRC and
   the size are checked at the end.

Names are checked before anything is read: no ``..``, no absolute path, no drive letter, no backslash tricks, no
duplicates (the same file twice could hide one version behind the other), and the local header must name the
entry the central directory names.
"""

from __future__ import annotations

import bz2
import dataclasses
import io
import lzma
import posixpath
import struct
import urllib.parse
import zipfile
import zlib
from collections.abc import Iterator

from appliance.packages.errors import PackageFileError

MB = 1024 * 1024
CHUNK = 64 * 1024       # the most output one step of any codec may produce
INPUT_CHUNK = 16 * 1024  # compressed bytes fed per step

_END = struct.Struct("<4s4H2LH")            # end of central directory record
_END64_LOCATOR = struct.Struct("<4sLQL")
_END64 = struct.Struct("<4sQ2H2L4Q")
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")  # central directory file header
_LOCAL = struct.Struct("<4s2B4HL2L2H")      # local file header


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one package file may hold. The service takes the upload limit from the settings (appliance/config.py).

    Peak memory while reading stays within a few tens of MB over the file itself whatever the file
    (``./dev bench packages`` measures every hostile file of tests/support/hostile.py)."""

    upload_bytes: int = 100 * MB  # the file as uploaded
    unpacked_bytes: int = 300 * MB  # all entries, inflated (declared, and as counted)
    entries: int = 10_000
    xml_bytes: int = 10 * MB  # content.xml or a tour's XML, inflated
    xml_elements: int = 100_000  # elements in one XML (a 500-question package has about 5,000)
    text_bytes: int = 8 * MB  # a CSV or a tour's text export (a 500-question table is about 200 KB)
    toml_bytes: int = 1 * MB  # a TOML, written by hand (500 questions are about 80 KB; its parser keeps all)
    themes: int = 1_000  # in one package (a big SIGame package has a few hundred)
    questions: int = 10_000
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


def _not_zip(why: str) -> PackageFileError:
    return PackageFileError("package.not_zip", f"not a ZIP archive ({why})")


def count_entries(data: bytes, limit: int) -> int:
    """How many entries the central directory holds, walked record by record (no objects made), before
    :mod:`zipfile` parses it; raises PackageFileError(package.too_many_entries) past ``limit`` (the end record's
    own count is checked first, and not trusted), or package.not_zip for no end record."""
    at = data.rfind(b"PK\x05\x06", max(0, len(data) - _END.size - 65535))
    if at < 0 or at + _END.size > len(data):
        raise _not_zip("no end of central directory")
    _, _, _, _, declared, size, offset, _ = _END.unpack_from(data, at)
    end = at
    locator = at - _END64_LOCATOR.size
    if locator >= 0 and data[locator:locator + 4] == b"PK\x06\x07":  # ZIP64, as zipfile reads it
        end = locator - _END64.size
        if end < 0 or data[end:end + 4] != b"PK\x06\x06":
            raise _not_zip("a ZIP64 end record is missing")
        declared, size = _END64.unpack_from(data, end)[7:9]
    if declared > limit:
        raise PackageFileError("package.too_many_entries", f"{declared} entries, at most {limit}",
                               count=declared, limit=limit)
    start = end - size  # where zipfile looks too (it allows data before the archive)
    if start < 0:
        raise _not_zip("the central directory is larger than the file")
    count, position = 0, start
    while position < end:
        if data[position:position + 4] != b"PK\x01\x02" or position + _CENTRAL.size > end:
            break  # zipfile refuses the same bytes
        fields = _CENTRAL.unpack_from(data, position)
        position += _CENTRAL.size + fields[12] + fields[13] + fields[14]
        count += 1
        if count > limit:
            raise PackageFileError("package.too_many_entries", f"more than {limit} entries", count=count,
                                   limit=limit)
    return count


class SafeZip:
    """An opened ZIP whose entries are read within :class:`Limits`. Use as a context manager.

    Nothing of the archive is inflated by opening it; :meth:`read` and :meth:`stream` inflate one entry.
    """

    def __init__(self, data: bytes, limits: Limits):
        if len(data) > limits.upload_bytes:
            raise PackageFileError("package.too_large", f"the file is {len(data) // MB} MB, at most "
                                   f"{limits.upload_bytes // MB} MB", size_mb=len(data) // MB,
                                   limit_mb=limits.upload_bytes // MB)
        count_entries(data, limits.entries)
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self._zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, struct.error) as error:
            raise _not_zip(str(error)) from None
        self._data = data
        self.limits = limits
        self._spent = 0
        self.entries: dict[str, zipfile.ZipInfo] = {}
        self._folded: dict[str, str] = {}  # casefolded name → the entry (a set, not a scan: 10,000 entries)
        declared = 0
        for info in infos:
            if info.is_dir():
                continue
            name = entry_name(info)
            if name.casefold() in self._folded:
                raise PackageFileError("package.duplicate_entry", f"entry {name!r} is in the archive twice",
                                       entry=name)
            self._check_declared(name, info, limits.unpacked_bytes)
            declared += info.file_size
            self.entries[name] = info
            self._folded[name.casefold()] = name
        if declared > limits.unpacked_bytes:
            raise PackageFileError("package.unpacked_too_large", f"the entries declare {declared // MB} MB "
                                   f"inflated, at most {limits.unpacked_bytes // MB} MB",
                                   size_mb=declared // MB, limit_mb=limits.unpacked_bytes // MB)

    def _check_declared(self, name: str, info: zipfile.ZipInfo, cap: int) -> None:
        """Refuse an entry by what its header declares, before a byte of it is inflated."""
        if info.file_size > cap:
            raise PackageFileError("package.entry_too_large", f"entry {name!r} declares {info.file_size // MB} MB, "
                                   f"at most {cap // MB} MB", entry=name, size_mb=info.file_size // MB,
                                   limit_mb=cap // MB)
        if info.file_size > MB and info.file_size > self.limits.ratio * max(info.compress_size, 1):
            raise PackageFileError("package.bomb", f"entry {name!r} declares {info.file_size // MB} MB from "
                                   f"{info.compress_size} bytes: more than {self.limits.ratio} times",
                                   entry=name, limit_mb=cap // MB)

    def __enter__(self) -> SafeZip:
        return self

    def __exit__(self, *exc) -> None:
        self._zip.close()  # the entries stay readable: they are read from the bytes, not through zipfile

    def find(self, name: str) -> str | None:
        """The entry called ``name`` (compared without case, as SIGame on Windows wrote them), or None."""
        return self._folded.get(name.casefold())

    def read(self, name: str, limit: int | None = None) -> bytes:
        """The entry's bytes, inflated at most to ``limit`` (default: what is left of the archive's budget)."""
        return b"".join(self.stream(name, limit))

    def check(self, name: str, limit: int | None = None) -> int:
        """Inflate the entry to nothing, counting it against the budget: its size, or PackageFileError."""
        return sum(len(chunk) for chunk in self.stream(name, limit))

    def stream(self, name: str, limit: int | None = None, *, counted: bool = True) -> Iterator[bytes]:
        """The entry's bytes in chunks of at most 64 KB, inflated at most to ``limit`` (default: what is left of
        the archive's budget; ``counted=False`` reads an entry again without spending the budget twice).

        Raises PackageFileError: package.entry_too_large (declared over the limit, before reading),
        package.bomb (past the limit or the ratio while inflating), package.corrupt_entry (more than the header
        declares, a wrong CRC, a truncated or encrypted entry, an unknown codec)."""
        info = self.entries[name]
        budget = self.limits.unpacked_bytes - (self._spent if counted else 0)
        cap = budget if limit is None else min(limit, budget)
        self._check_declared(name, info, cap)
        raw = self._raw(name, info)
        size, crc = 0, 0
        try:
            for chunk, consumed in _inflate(info.compress_type, raw):
                size += len(chunk)
                if size > info.file_size:
                    raise PackageFileError("package.corrupt_entry", f"entry {name!r} inflates past the "
                                           f"{info.file_size} bytes its header declares", entry=name)
                if size > cap:
                    raise PackageFileError("package.bomb", f"entry {name!r} inflates past {cap // MB} MB",
                                           entry=name, limit_mb=cap // MB)
                if size > MB and size > self.limits.ratio * max(consumed, 1):
                    raise PackageFileError("package.bomb", f"entry {name!r} inflates more than "
                                           f"{self.limits.ratio} times", entry=name, limit_mb=cap // MB)
                crc = zlib.crc32(chunk, crc)
                if counted:
                    self._spent += len(chunk)
                yield chunk
        except (zlib.error, OSError, EOFError, lzma.LZMAError, ValueError) as error:
            raise _corrupt(name, str(error)) from None
        if size != info.file_size or crc != info.CRC:
            raise _corrupt(name, f"{size} bytes with CRC {crc:08x}, the header says {info.file_size} with "
                                 f"{info.CRC:08x}")

    def _raw(self, name: str, info: zipfile.ZipInfo) -> memoryview:
        """The entry's compressed bytes, after its local header (which must agree with the central one)."""
        if info.flag_bits & 0x1:
            raise _corrupt(name, "encrypted")
        at = info.header_offset
        if at < 0 or at + _LOCAL.size > len(self._data) or self._data[at:at + 4] != b"PK\x03\x04":
            raise _corrupt(name, "no local header")
        fields = _LOCAL.unpack_from(self._data, at)
        method, name_length, extra_length = fields[4], fields[10], fields[11]
        local_name = self._data[at + _LOCAL.size:at + _LOCAL.size + name_length]
        encoding = "utf-8" if info.flag_bits & 0x800 else "cp437"
        if local_name.decode(encoding, "replace") != info.orig_filename or method != info.compress_type:
            raise _corrupt(name, "the local header names another entry or codec")
        start = at + _LOCAL.size + name_length + extra_length
        if start + info.compress_size > len(self._data):
            raise _corrupt(name, "truncated")
        return memoryview(self._data)[start:start + info.compress_size]


def _corrupt(name: str, why: str) -> PackageFileError:
    return PackageFileError("package.corrupt_entry", f"entry {name!r} cannot be read ({why})", entry=name)


def _lzma(raw: memoryview):
    """ZIP's lzma (APPNOTE 5.8.8): a 2-byte version, a 2-byte properties size, 5 bytes of LZMA1 properties, then
    raw LZMA1. Returns (decompressor, the raw stream)."""
    if len(raw) < 4:
        raise EOFError("no lzma header")
    size = int.from_bytes(raw[2:4], "little")
    properties = bytes(raw[4:4 + size])
    if size != 5 or len(properties) != 5 or properties[0] >= 9 * 5 * 5:
        raise ValueError("bad lzma properties")
    lc, rest = properties[0] % 9, properties[0] // 9
    lp, pb = rest % 5, rest // 5
    dict_size = int.from_bytes(properties[1:5], "little")
    lzma_filter = {"id": lzma.FILTER_LZMA1, "lc": lc, "lp": lp, "pb": pb, "dict_size": max(dict_size, 4096)}
    return lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[lzma_filter]), raw[4 + size:]


def _inflate(method: int, raw: memoryview) -> Iterator[tuple[bytes, int]]:
    """(output of at most CHUNK bytes, compressed bytes consumed so far) until the entry ends, for every codec
    a package may use; raises ValueError for any other."""
    if method == zipfile.ZIP_STORED:
        for offset in range(0, len(raw), CHUNK):
            piece = bytes(raw[offset:offset + CHUNK])
            yield piece, offset + len(piece)
        return
    if method == zipfile.ZIP_DEFLATED:
        inflater = zlib.decompressobj(-15)
        fed, tail = 0, b""
        while not inflater.eof:
            if not tail and fed < len(raw):
                tail = raw[fed:fed + INPUT_CHUNK]
                fed += len(tail)
            out = inflater.decompress(tail, CHUNK)
            tail = inflater.unconsumed_tail
            if out:
                yield out, fed - len(tail)
            elif not tail and fed >= len(raw):
                break  # input used up: the CRC and size check says whether the entry was whole
        return
    if method == zipfile.ZIP_BZIP2:
        inflater = bz2.BZ2Decompressor()
    elif method == zipfile.ZIP_LZMA:
        inflater, raw = _lzma(raw)
    else:
        raise ValueError(f"compression method {method} is not one a package uses")
    fed = 0
    while not inflater.eof:
        if inflater.needs_input:
            if fed >= len(raw):
                break
            piece = raw[fed:fed + INPUT_CHUNK]
            fed += len(piece)
        else:
            piece = b""
        out = inflater.decompress(piece, CHUNK)
        if out:
            yield out, fed  # fed bounds what was consumed from above: the ratio is never overstated
        elif not piece and not inflater.needs_input and not inflater.eof:
            raise EOFError("the codec makes no progress")
