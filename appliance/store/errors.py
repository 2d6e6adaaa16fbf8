"""Errors of the event store and its JSON Lines format."""

from __future__ import annotations

from appliance.errors import StoreError


class LogFormatError(StoreError, ValueError):
    """A battle log line (or stored row) that is not a valid event; ``line`` is its 1-based line number."""

    def __init__(self, message: str, line: int | None = None, source: str = "") -> None:
        where = f"{source}:{line}: " if line is not None else (f"{source}: " if source else "")
        super().__init__(f"{where}{message}")
        self.line = line
        self.source = source
        self.message = message


class StoreConflictError(StoreError, RuntimeError):
    """An append lost a race (the sequence number it expected is taken) or names an unknown battle."""


class DuplicateCommandError(StoreConflictError):
    """A command id already stored: ``stored`` (a ``StoredCommand``) says where its events went and its first
    result. Nothing was appended; the caller answers the resend with the stored result."""

    def __init__(self, stored) -> None:
        super().__init__(f"{stored.kind} command {stored.command_id!r} already stored")
        self.stored = stored


class StoreFormatError(StoreError, ValueError):
    """A file that is not an event store this build reads (another program's SQLite, a newer schema)."""
