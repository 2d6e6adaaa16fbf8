"""One entry point for every package file: the reader is chosen by what the file holds, not by its name."""

from __future__ import annotations

import dataclasses
from pathlib import PurePath

from appliance.packages import chgk, siq, table
from appliance.packages.archive import Limits
from appliance.packages.errors import PackageFileError
from appliance.packages.model import check_fields
from appliance.packages.siq import ReadPackage

ZIP_MAGIC = b"PK\x03\x04"


def read_package(filename: str, data: bytes, limits: Limits = Limits()) -> ReadPackage:
    """Read a package file whole: ``.siq`` (a ZIP), a db.chgk.info tour (XML or text), CSV or TOML.

    The title falls back to the file's name. Every field is held to what a setup typed by hand may hold
    (:func:`~appliance.packages.model.check_fields`). Raises PackageFileError: nothing of a refused file is kept.
    """
    if len(data) > limits.upload_bytes:
        raise PackageFileError("package.too_large", f"the file is {len(data) // 2**20} MB, at most "
                               f"{limits.upload_bytes // 2**20} MB", size_mb=len(data) // 2**20,
                               limit_mb=limits.upload_bytes // 2**20)
    if not data or data.isspace():  # (strip would copy the whole file)
        raise PackageFileError("package.empty", "the file is empty")
    suffix = PurePath(filename).suffix.casefold()
    head = data[:2048].lstrip(b"\xef\xbb\xbf \t\r\n")
    if data.startswith(ZIP_MAGIC) or suffix == ".siq":
        if not data.startswith(ZIP_MAGIC):  # an HTML page saved as .siq is "not a ZIP", not "XML with a DTD"
            raise PackageFileError("package.not_zip", "not a ZIP archive (it does not start with PK\\x03\\x04)")
        read = siq.read_siq(data, limits)
    elif head.startswith(b"<"):
        read = chgk.read_chgk_xml(data, limits)
    elif suffix == ".toml":
        read = table.read_toml(data, limits)
    elif suffix in (".csv", ".tsv"):
        read = table.read_csv(data, limits)
    else:
        text = table.decode(data, limits)
        if "Вопрос 1:" in text or "Вопрос 1 :" in text:
            read = chgk.read_chgk_text(text, limits)
        else:
            raise PackageFileError("package.unknown_format", f"{PurePath(filename).name or 'the file'}: not a .siq "
                                   "package, a db.chgk.info tour, a CSV or a TOML file", filename=filename[:100])
    package = read.package
    if not package.title:
        package = dataclasses.replace(package, title=PurePath(filename).stem[:200] or "?")
    check_fields(package)
    return ReadPackage(package, read.media)
