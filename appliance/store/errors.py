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
