"""The battle timeline: one monotone clock for the box's battles, across reboots (docs/battle-log.md, "Time").

Every time the session stamps or receives (host commands, phone presses, deadlines, capture press edges) is
the box's CLOCK_MONOTONIC plus one offset. CLOCK_MONOTONIC restarts near 0 at every boot, while the battle
log keeps the old boot's times: without the offset, after a power cut every host command would be "stamped
before the last event" and a press window computed in the old boot would mean nothing in the new one.

The rule:

- Within one boot the offset never changes (0 on a box that never lost its power in a battle), so presses are
  compared by their kernel edge timestamps exactly as they came, and a restart of the web process alone
  keeps every running window and countdown where it was.
- On a new boot (another ``/proc/sys/kernel/random/boot_id``) the timeline goes on right after the last
  stored event of any battle: ``offset = last_at_ns + 1 - now`` (negative if the new boot's clock is ahead).
  The time the box was off counts as nothing: an open press window or answer countdown has, when the box
  is back, the time it had left after that event.
- The offset is raised (never lowered) if a battle whose last event is ahead of the timeline is opened.
- ``since_ns`` is where this boot's timeline begins: a capture press stamped before it happened before the
  box served again (the capture works alone while the box boots) and is no signal in any battle.
- Nothing compares two boots' raw clocks. The offset and its boot are kept in the store (``meta``) so a
  restart within the same boot takes the very same offset.

>>> first = choose(None, "boot-a", now_ns=5_000, last_at_ns=0)
>>> first
Timeline(boot_id='boot-a', offset_ns=0, since_ns=0)
>>> after_cut = choose(first, "boot-b", now_ns=2_000, last_at_ns=90_000)   # the new boot's clock is behind
>>> after_cut, after_cut.now_ns(2_000)
(Timeline(boot_id='boot-b', offset_ns=88001, since_ns=90001), 90001)
>>> choose(after_cut, "boot-b", now_ns=9_000, last_at_ns=95_000) is after_cut    # the same boot: the same offset
True
>>> choose(after_cut, "boot-c", now_ns=500_000, last_at_ns=95_000)            # a new boot, its clock ahead
Timeline(boot_id='boot-c', offset_ns=-404999, since_ns=95001)
>>> Timeline.from_record(after_cut.record()) == after_cut
True
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

log = logging.getLogger(__name__)

BOOT_ID_PATH = Path("/proc/sys/kernel/random/boot_id")  # a new random id at every boot (Linux)
STORE_KEY = "battle_timeline"  # the store's meta key of the current timeline (docs/battle-log.md)


def current_boot_id(path: Path = BOOT_ID_PATH) -> str | None:
    """This boot's id, or None where the system gives none (then a new boot is told by the stored times)."""
    try:
        return path.read_text(encoding="ascii").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


@dataclasses.dataclass(frozen=True)
class Timeline:
    """Battle time = the boot's CLOCK_MONOTONIC ns + ``offset_ns``; this boot's battle time begins at ``since_ns``."""

    boot_id: str | None
    offset_ns: int = 0
    since_ns: int = 0

    def now_ns(self, raw_ns: int) -> int:
        return raw_ns + self.offset_ns

    def continued_after(self, now_ns: int, last_at_ns: int) -> "Timeline":
        """This timeline, or one whose offset is raised so that the raw ``now_ns`` comes after ``last_at_ns``
        (at it is in time too: the engine takes a host action stamped at the last event's time)."""
        if now_ns + self.offset_ns >= last_at_ns:
            return self
        return Timeline(self.boot_id, last_at_ns + 1 - now_ns, last_at_ns + 1)

    def record(self) -> str:
        return json.dumps({"boot_id": self.boot_id, "offset_ns": self.offset_ns, "since_ns": self.since_ns},
                          separators=(",", ":"))

    @classmethod
    def from_record(cls, text: str | None) -> "Timeline | None":
        """The stored timeline, or None (none stored, or a record this build cannot read: a new one is made)."""
        if text is None:
            return None
        try:
            data = json.loads(text)
            boot_id, offset_ns, since_ns = data["boot_id"], data["offset_ns"], data["since_ns"]
        except (ValueError, TypeError, KeyError):
            log.warning("stored battle timeline %r unreadable: a new one is chosen", text[:200])
            return None
        if not (boot_id is None or isinstance(boot_id, str)) or not all(
                isinstance(n, int) and not isinstance(n, bool) for n in (offset_ns, since_ns)) or since_ns < 0:
            log.warning("stored battle timeline %r unreadable: a new one is chosen", text[:200])
            return None
        return cls(boot_id, offset_ns, since_ns)


def choose(stored: Timeline | None, boot_id: str | None, now_ns: int, last_at_ns: int) -> Timeline:
    """The timeline of a session starting at raw ``now_ns`` whose battles' last event is at ``last_at_ns``.

    The stored one is kept on the same boot (or, with no boot id on either side, while it still continues the
    battles); on a new boot the timeline begins 1 ns after the last event. With none stored (a new store, or
    one from before the timeline) the raw clock is kept while it is not behind the battles.
    """
    if stored is None:
        return Timeline(boot_id).continued_after(now_ns, last_at_ns)
    if stored.boot_id == boot_id and (boot_id is not None or now_ns + stored.offset_ns >= last_at_ns):
        return stored.continued_after(now_ns, last_at_ns)
    # a new boot: a press the capture stamped before now came while the box was still booting
    return Timeline(boot_id, last_at_ns + 1 - now_ns, last_at_ns + 1)
