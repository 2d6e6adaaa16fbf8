"""The battle log's JSON Lines format, version 1 (docs/battle-log.md).

Line 1 is a header ``{"format": "svoyak-battle-log", "version": 1, "battle_id": ...}``; every further line is
one event as :func:`event_to_dict` gives it (``"type"`` plus the event's fields), optionally with
``"command_id"``. UTF-8, one JSON object per line, no blank lines inside.

>>> import io
>>> from appliance.rules.battle import ButtonPressed
>>> text = dump_log("b1", [ButtonPressed(at_ns=5, player=0)])
>>> text.splitlines()[0]
'{"format":"svoyak-battle-log","version":1,"battle_id":"b1"}'
>>> header, rows = read_log(io.StringIO(text))
>>> header["battle_id"], rows[0][0], rows[0][1]
('b1', 2, ButtonPressed(at_ns=5, player=0, source='button'))
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Iterable, Iterator

from appliance.rules.battle.errors import BattleRuleError
from appliance.rules.battle.events import Event, event_from_dict, event_to_dict
from appliance.store.errors import LogFormatError

FORMAT = "svoyak-battle-log"
FORMAT_VERSION = 1


def _line(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def dump_log(battle_id: str, events: Iterable[Event], command_ids: Iterable[str | None] | None = None) -> str:
    """The whole log as text: header line, then one event per line."""
    lines = [_line({"format": FORMAT, "version": FORMAT_VERSION, "battle_id": battle_id})]
    ids = list(command_ids) if command_ids is not None else None
    for index, event in enumerate(events):
        data = event_to_dict(event)
        if ids is not None and ids[index] is not None:
            data["command_id"] = ids[index]
        lines.append(_line(data))
    return "\n".join(lines) + "\n"


def write_log(path: str | Path, battle_id: str, events: Iterable[Event]) -> None:
    Path(path).write_text(dump_log(battle_id, events), encoding="utf-8")


def iter_log(file: IO[str], source: str = "log") -> Iterator[tuple[int, object]]:
    """Yield ``(line_number, header dict)`` first, then ``(line_number, Event)``; raise :class:`LogFormatError`
    at the first malformed line, naming it. Lazy, so a caller can stop at a line the rules refuse."""
    header_seen = False
    for number, raw in enumerate(file, start=1):
        text = raw.strip()
        if not text:
            raise LogFormatError("blank line", line=number, source=source)
        try:
            data = json.loads(text)
        except ValueError as error:
            raise LogFormatError(f"not JSON: {error}", line=number, source=source) from None
        if not header_seen:
            if not isinstance(data, dict) or data.get("format") != FORMAT:
                raise LogFormatError(f'the first line must be the header {{"format": "{FORMAT}", ...}}',
                                     line=number, source=source)
            if data.get("version") != FORMAT_VERSION:
                raise LogFormatError(f"format version {data.get('version')!r}; this build reads {FORMAT_VERSION}",
                                     line=number, source=source)
            header_seen = True
            yield number, data
            continue
        if isinstance(data, dict):
            data = {key: value for key, value in data.items() if key != "command_id"}
        try:
            yield number, event_from_dict(data)
        except BattleRuleError as error:
            raise LogFormatError(error.message, line=number, source=source) from None
    if not header_seen:
        raise LogFormatError("empty log: no header line", line=1, source=source)


def read_log(file: IO[str], source: str = "log") -> tuple[dict, list[tuple[int, Event]]]:
    """The header and every ``(line_number, event)``; raises :class:`LogFormatError` naming a bad line."""
    rows = iter_log(file, source)
    _, header = next(rows)
    return header, list(rows)  # type: ignore[arg-type]
