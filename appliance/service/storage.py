"""Can the box store a battle? The data directory checked before the web service opens the event store.

On the box the data directory is its own partition (``LABEL=svoyak-data`` on ``/var/lib/svoyak``, image/image.sh).
The mount is ``nofail``: a card whose data partition is damaged, missing or too slow to appear must not stop
the boot in emergency mode (a box has no keyboard), so the services start anyway, on an empty directory of the
root file system. Whatever the box then stored would vanish the moment the partition mounts again. So when
the setting ``data_mount`` names a mount point, the web service first checks that the data directory is on it
and that a file written there reaches the card; if not it serves the fault page (web/fault.py) instead of the
game: the board and the host page say what is wrong and no battle starts that could not be stored.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import appliance.words as words
from appliance.config import Settings

PROBE_FILE = ".svoyak-write-check"


@dataclasses.dataclass(frozen=True)
class StorageFault:
    """Why the box cannot store a battle, worded for the person in front of it (Russian first)."""

    ru: str
    en: str
    detail: str

    @classmethod
    def worded(cls, key: str, detail: str, **params) -> StorageFault:
        """The fault of catalogue message ``key`` (``storage.*``, docs/words.md)."""
        return cls(ru=words.word(key, "ru", **params), en=words.word(key, "en", **params), detail=detail)

    def line(self) -> str:
        return f"{self.ru} / {self.en} ({self.detail})"


def _mounted(path: Path) -> bool:
    return os.path.ismount(path)


def check(settings: Settings, is_mount=_mounted) -> StorageFault | None:
    """None if battles can be stored in ``settings.data_dir``; else the fault to show.

    1. ``data_mount`` set (the box: ``/var/lib/svoyak``): it must be a mount point and ``data_dir`` inside it;
    2. ``data_dir`` must take a file: written, fsynced and removed (a read-only or full partition fails here).
    """
    data_dir = Path(settings.data_dir)
    if settings.data_mount:
        mount = Path(settings.data_mount)
        if not is_mount(mount):
            return StorageFault.worded("storage.not_mounted", mount=mount,
                                   detail=f"{mount} is not a mount point")
        try:
            data_dir.resolve().relative_to(mount.resolve())
        except ValueError:
            return StorageFault.worded("storage.outside_mount", data_dir=data_dir, mount=mount,
                                   detail=f"data_dir {data_dir} outside data_mount {mount}")
    probe = data_dir / PROBE_FILE
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(descriptor, b"svoyak\n")
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        probe.unlink()
    except OSError as error:
        return StorageFault.worded("storage.unwritable", data_dir=data_dir,
                                   detail=f"{type(error).__name__}: {error.strerror or error}")
    return None
