"""Hostile package files, made in one place for the tests (tests/appliance/packages/test_hostile.py) and the
benchmark (bench/bench_packages.py, which prints each one's peak memory and time).

Each :class:`Hostile` is a file an attacker could upload, with the refusal the box must give. The ZIPs are written
by hand (:func:`zip_of`), so a header may declare any size, count or codec whatever the bytes hold; bombs are made
without inflating them here (a deflate stream of identical full-flush segments; a bzip2 stream of 1 GiB of zeros
kept as its 785 bytes, ``bz2.compress(bytes(2**30), 9)``; lzma of 64 MiB made once per process).
"""

from __future__ import annotations

import base64
import bz2
import dataclasses
import functools
import lzma
import struct
import zipfile
import zlib

from tests.support.packages import NS

MB = 1024 * 1024
GIB = 1024 * MB

# bz2.compress(bytes(2**30), 9): 1 GiB of zeros in 785 bytes (30 s to make; its CRC-32 is ZEROS_GIB_CRC)
BZ2_ZEROS_GIB = base64.b64decode(
    "QlpoOTFBWSZTWQ4J4t8BX45AAMAAAAggADCATUZCoCWpCoCXMUFZJlNZDgni3wFfjkAAwAAACCAAMIBNRkKgJakKgJcxQVkmU1kOCeLf"
    "AV+OQADAAAAIIAAwgE1GQqAlqQqAlzFBWSZTWQ4J4t8BX45AAMAAAAggADCATUZCoCWpCoCXMUFZJlNZDgni3wFfjkAAwAAACCAAMIBN"
    "RkKgJakKgJcxQVkmU1kOCeLfAV+OQADAAAAIIAAwgE1GQqAlqQqAlzFBWSZTWQ4J4t8BX45AAMAAAAggADCATUZCoCWpCoCXMUFZJlNZ"
    "Dgni3wFfjkAAwAAACCAAMIBNRkKgJakKgJcxQVkmU1kOCeLfAV+OQADAAAAIIAAwgE1GQqAlqQqAlzFBWSZTWQ4J4t8BX45AAMAAAAgg"
    "ADCATUZCoCWpCoCXMUFZJlNZDgni3wFfjkAAwAAACCAAMIBNRkKgJakKgJcxQVkmU1kOCeLfAV+OQADAAAAIIAAwgE1GQqAlqQqAlzFB"
    "WSZTWQ4J4t8BX45AAMAAAAggADCATUZCoCWpCoCXMUFZJlNZDgni3wFfjkAAwAAACCAAMIBNRkKgJakKgJcxQVkmU1kOCeLfAV+OQADA"
    "AAAIIAAwgE1GQqAlqQqAlzFBWSZTWQ4J4t8BX45AAMAAAAggADCATUZCoCWpCoCXMUFZJlNZDgni3wFfjkAAwAAACCAAMIBNRkKgJakK"
    "gJcxQVkmU1kOCeLfAV+OQADAAAAIIAAwgE1GQqAlqQqAlzFBWSZTWQ4J4t8BX45AAMAAAAggADCATUZCoCWpCoCXMUFZJlNZDgni3wFf"
    "jkAAwAAACCAAMIBNRkKgJakKgJcxQVkmU1kOCeLfAV+OQADAAAAIIAAwgE1GQqAlqQqAlzFBWSZTWQ4J4t8BX45AAMAAAAggADCATUZC"
    "oCWpCoCXMUFZJlNZDgni3wFfjkAAwAAACCAAMIBNRkKgJakKgJcxQVkmU1kOCeLfAV+OQADAAAAIIAAwgE1GQqAlqQqAlzFBWSZTWQ4J"
    "4t8BX45AAMAAAAggADCATUZCoCWpCoCXMUFZJlNZSHxfyQCKUsgAwAAAEAAggADDMBSmmkSJDYUSJDxdyRThQkPaI5AI=")
ZEROS_GIB_CRC = 0x5B64C2B0


@dataclasses.dataclass(frozen=True)
class Entry:
    """One ZIP entry as written: its name, codec, the compressed bytes, and what the headers declare."""

    name: str
    raw: bytes
    method: int = zipfile.ZIP_STORED
    crc: int = 0
    file_size: int = 0  # declared inflated size
    compress_size: int | None = None  # declared compressed size (None: the true one)


def stored(name: str, data: bytes) -> Entry:
    return Entry(name, data, zipfile.ZIP_STORED, zlib.crc32(data), len(data))


def deflated(name: str, data: bytes) -> Entry:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return Entry(name, packer.compress(data) + packer.flush(), zipfile.ZIP_DEFLATED, zlib.crc32(data), len(data))


def zip_of(entries: list[Entry], *, declared_count: int | None = None) -> bytes:
    """A ZIP of ``entries`` exactly as given (sizes and CRCs as declared, not as true); ``declared_count``
    makes the end record lie about how many entries there are."""
    local, central = bytearray(), bytearray()
    for entry in entries:
        name = entry.name.encode("utf-8")
        compress_size = len(entry.raw) if entry.compress_size is None else entry.compress_size
        offset = len(local)
        version = 63 if entry.method == zipfile.ZIP_LZMA else (46 if entry.method == zipfile.ZIP_BZIP2 else 20)
        local += struct.pack("<4s2B4HL2L2H", b"PK\x03\x04", version, 0, 0x800, entry.method, 0, 0x21, entry.crc,
                             compress_size, entry.file_size, len(name), 0) + name + entry.raw
        central += struct.pack("<4s4B4HL2L5H2L", b"PK\x01\x02", version, 3, version, 0, 0x800, entry.method, 0,
                               0x21, entry.crc, compress_size, entry.file_size, len(name), 0, 0, 0, 0, 0,
                               offset) + name
    count = len(entries) if declared_count is None else declared_count
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, min(count, 0xFFFF), min(count, 0xFFFF), len(central),
                      len(local), 0)
    return bytes(local + central + end)


CONTENT = (f'<?xml version="1.0" encoding="utf-8"?><package name="Враждебный" version="4" xmlns="{NS}"><rounds>'
           '<round name="1"><themes><theme name="Реки"><questions><question price="10"><scenario>'
           '<atom>Самая длинная река Европы.</atom>{media}</scenario><right><answer>Волга</answer></right>'
           "</question></questions></theme></themes></round></rounds></package>")


def content(pictures: int = 1) -> Entry:
    """A small valid content.xml whose question shows ``pictures`` pictures Images/p0.png, Images/p1.png..."""
    media = "".join(f'<atom type="image">@p{number}.png</atom>' for number in range(pictures))
    return deflated("content.xml", CONTENT.format(media=media).encode("utf-8"))


def deflate_zeros(megabytes: int) -> bytes:
    """A raw deflate stream of ``megabytes`` MiB of zeros, about 1 KB per MiB, made without inflating it:
    full-flush segments of one MiB each are byte-aligned and identical."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    segment = packer.compress(bytes(MB)) + packer.flush(zlib.Z_FULL_FLUSH)
    return segment * megabytes + zlib.compressobj(9, zlib.DEFLATED, -15).flush()


@functools.lru_cache(maxsize=None)
def zeros_crc(megabytes: int) -> int:
    if megabytes == 1024:
        return ZEROS_GIB_CRC
    crc, block = 0, bytes(MB)
    for _ in range(megabytes):
        crc = zlib.crc32(block, crc)
    return crc


@functools.lru_cache(maxsize=None)
def lzma_zeros(megabytes: int) -> bytes:
    """ZIP's lzma form (version, properties size, properties, raw LZMA1) of ``megabytes`` MiB of zeros."""
    filters = [{"id": lzma.FILTER_LZMA1, "preset": 1}]
    packer = lzma.LZMACompressor(lzma.FORMAT_RAW, filters=filters)
    block = bytes(MB)
    body = b"".join(packer.compress(block) for _ in range(megabytes)) + packer.flush()
    properties = lzma._encode_filter_properties(filters[0])  # what zipfile writes too
    return struct.pack("<BBH", 9, 4, len(properties)) + properties + body


def bomb(method: int, megabytes: int, declared: int | None = None) -> bytes:
    """A .siq whose picture is ``megabytes`` MiB of zeros packed with ``method``; its header declares
    ``declared`` bytes (default: the truth)."""
    if method == zipfile.ZIP_BZIP2:
        assert megabytes == 1024, "the bzip2 bomb is the 1 GiB one"
        raw = BZ2_ZEROS_GIB
    elif method == zipfile.ZIP_LZMA:
        raw = lzma_zeros(megabytes)
    else:
        raw = deflate_zeros(megabytes)
    size = megabytes * MB if declared is None else declared
    return zip_of([content(), Entry("Images/p0.png", raw, method, zeros_crc(megabytes), size)])


@dataclasses.dataclass(frozen=True)
class Hostile:
    """A hostile file: its name on upload, how to make it, and the refusal it must get."""

    label: str
    filename: str
    make: object  # () -> bytes
    code: str

    def data(self) -> bytes:
        return self.make()


def _many_entries(count: int, declared_count: int | None = None) -> bytes:
    return zip_of([content(0)] + [stored(f"Images/{number}.png", b"x") for number in range(count)],
                  declared_count=declared_count)


def _many_small_bombs(count: int, declared: int | None) -> bytes:
    """``count`` pictures of 1 MiB of zeros each (1 KB packed: under the 1 MB the ratio is not asked of)."""
    raw = deflate_zeros(1)
    pictures = [Entry(f"Images/p{number}.png", raw, zipfile.ZIP_DEFLATED, zeros_crc(1),
                      MB if declared is None else declared) for number in range(count)]
    return zip_of([content(count)] + pictures)


def _siq_with(xml: bytes, packed: bool = True) -> bytes:
    return zip_of([deflated("content.xml", xml) if packed else stored("content.xml", xml)])


def _huge_xml() -> bytes:
    """content.xml of 10 MB, stored (no ratio to catch): 2.6 million empty elements, about 1 GB of objects if all
    were built."""
    body = b"<a/>" * (10 * MB // 4 - 40)
    return _siq_with(b'<package name="x" version="4"><info>' + body + b"</info></package>", packed=False)


def _deep_xml() -> bytes:
    depth = 500_000
    return _siq_with(b'<package name="x" version="4">' + b"<a>" * depth + b"</a>" * depth + b"</package>",
                     packed=False)


def _version(version: str) -> bytes:
    xml = CONTENT.format(media="").replace('version="4"', f'version="{version}"')
    return _siq_with(xml.encode("utf-8"))


def _long_theme_name(chars: int) -> bytes:
    xml = CONTENT.format(media="").replace('name="Реки"', f'name="{"Р" * chars}"')
    return _siq_with(xml.encode("utf-8"))


def _csv_cell(chars: int) -> bytes:
    return ("тема,цена,вопрос,ответ\nРеки,10,Самая длинная река Европы.," + "В" * chars + "\n").encode("utf-8")


def _csv_rows(rows: int) -> bytes:
    return ("тема,цена,вопрос,ответ\n" + "Т,10,В,О\n" * rows).encode("utf-8")


def _toml_questions(questions: int) -> bytes:
    return ('[[theme]]\nname = "Т"\n' + '[[theme.question]]\nprice = 10\nquestion = "В"\nanswer = "О"\n'
            * questions).encode("utf-8")


def _laughs() -> bytes:
    xml = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
           '<package name="&lol2;"><rounds/></package>')
    return _siq_with(xml.encode())


HOSTILE = (
    Hostile("bzip2 bomb, 1 GiB declared (the issue's file)", "bomb.siq",
            lambda: bomb(zipfile.ZIP_BZIP2, 1024), "package.entry_too_large"),
    Hostile("bzip2 bomb, 1 GiB declaring 1 KB", "bomb.siq",
            lambda: bomb(zipfile.ZIP_BZIP2, 1024, declared=1000), "package.corrupt_entry"),
    Hostile("bzip2 bomb, 1 GiB declaring 250 MB", "bomb.siq",
            lambda: bomb(zipfile.ZIP_BZIP2, 1024, declared=250 * MB), "package.bomb"),
    Hostile("deflate bomb, 1 GiB declared", "bomb.siq",
            lambda: bomb(zipfile.ZIP_DEFLATED, 1024), "package.entry_too_large"),
    Hostile("deflate bomb, 1 GiB declaring 1 KB", "bomb.siq",
            lambda: bomb(zipfile.ZIP_DEFLATED, 1024, declared=1000), "package.corrupt_entry"),
    Hostile("deflate bomb, 1 GiB declaring 1 MB (no ratio asked)", "bomb.siq",
            lambda: bomb(zipfile.ZIP_DEFLATED, 1024, declared=MB), "package.corrupt_entry"),
    Hostile("lzma bomb, 64 MiB declared", "bomb.siq",
            lambda: bomb(zipfile.ZIP_LZMA, 64), "package.bomb"),
    Hostile("lzma bomb, 64 MiB declaring 1 KB", "bomb.siq",
            lambda: bomb(zipfile.ZIP_LZMA, 64, declared=1000), "package.corrupt_entry"),
    Hostile("400 pictures of 1 MiB zeros (1 KB each packed)", "many.siq",
            lambda: _many_small_bombs(400, None), "package.unpacked_too_large"),
    Hostile("400 pictures of 1 MiB zeros, each declaring 1 KB", "many.siq",
            lambda: _many_small_bombs(400, 1000), "package.corrupt_entry"),
    Hostile("100,000 entries", "entries.siq", lambda: _many_entries(100_000), "package.too_many_entries"),
    Hostile("100,000 entries, the end record saying 5", "entries.siq",
            lambda: _many_entries(100_000, declared_count=5), "package.too_many_entries"),
    Hostile("content.xml of 10 MB of empty elements", "xml.siq", _huge_xml, "package.xml_too_many_elements"),
    Hostile("content.xml nested 500,000 deep", "deep.siq", _deep_xml, "package.xml_too_deep"),
    Hostile("a tour XML of 10 MB of empty elements", "tour.xml",
            lambda: b"<tournament>" + b"<a/>" * (10 * MB // 4 - 10) + b"</tournament>", "package.xml_too_many_elements"),
    Hostile("billion laughs in content.xml", "laughs.siq", _laughs, "package.unsafe_xml"),
    Hostile("format version 6", "v6.siq", lambda: _version("6"), "package.unsupported_version"),
    Hostile("an HTML page saved as .siq", "page.siq",
            lambda: b'<!DOCTYPE html><html><head><title>x</title></head><body>404</body></html>', "package.not_zip"),
    Hostile("a theme name of 200,000 characters", "name.siq", lambda: _long_theme_name(200_000),
            "package.field_too_long"),
    Hostile("a CSV with a 3,000,000-character cell", "cell.csv", lambda: _csv_cell(3_000_000),
            "package.field_too_long"),
    Hostile("a CSV of 9 MB", "big.csv", lambda: _csv_cell(4_700_000), "package.too_large"),
    Hostile("a CSV with a 100,000-character cell", "cell.csv", lambda: _csv_cell(100_000), "package.field_too_long"),
    Hostile("a CSV with a 1,000,000-character cell", "cell.csv", lambda: _csv_cell(1_000_000),
            "package.field_too_long"),
    Hostile("a CSV of 600,000 one-letter rows", "rows.csv", lambda: _csv_rows(600_000), "package.too_many_questions"),
    Hostile("a TOML of 20,000 questions", "many.toml", lambda: _toml_questions(20_000), "package.too_large"),
)
