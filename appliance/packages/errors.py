"""Why a package file is refused, or a library call fails: a stable code, its params, and an English sentence.

The web words the code (Russian first, English second) from its catalogue; the English text here is for logs and
the command line. Every code is documented in docs/packages.md, and a test keeps the two in step.
"""

from __future__ import annotations

from appliance.errors import PackageError


class PackageFileError(PackageError, ValueError):
    """The file cannot be imported: not a package, malformed, unsafe, or too large. Nothing of it was kept.

    ``where`` names the place in the file (``content.xml line 12``, ``round «1» › theme «Реки» › question 3``,
    ``line 7``); ``code`` is stable (``package.too_large``, ``package.unsafe_entry``, ...).
    """

    def __init__(self, code: str, message: str, *, where: str = "", **params):
        self.code = code
        self.where = where
        self.params = {"where": where, **params}
        super().__init__(f"{where}: {message}" if where else message)


class PackageNotFound(PackageError, LookupError):
    """No package with that id in the library."""

    def __init__(self, package_id: str):
        self.code = "package.not_found"
        self.params = {"package": package_id}
        super().__init__(f"no package {package_id!r} in the library")
