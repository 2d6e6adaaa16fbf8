"""``svoyak replay LOG``: replay a battle log (JSON Lines, docs/battle-log.md) and print the final state and
standings as JSON. A line the rules refuse stops the replay there: the error names the line and the rule, and
the exit status is 1."""

from __future__ import annotations

import json
import os
import stat
import sys

MAX_LINE_CHARS = 4 * 1024 * 1024  # a battle log line is one event: a setup with its profile is about 10 KB


def add_arguments(parser) -> None:
    parser.add_argument("log", help="battle log in JSON Lines (docs/battle-log.md), - for standard input, or the "
                                    "box's SQLite event store (then --battle)")
    parser.add_argument("--battle", help="with an SQLite store: the battle id (default: the newest battle)")
    parser.add_argument("--questions", action="store_true",
                        help="add every question's protocol row (presses, gaps, rulings, corrections)")


def is_sqlite(path: str) -> bool:
    if path == "-":
        return False
    try:
        with open(path, "rb") as file:
            return file.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def replay_store(path: str, battle: str | None):
    """(header, state, events applied) from the box's SQLite store, opened read-only (the file is not written,
    whoever's it is); ``.line`` of an error is the event's seq."""
    from appliance.errors import StoreDriverError, StoreError
    from appliance.rules.battle import BattleRuleError, apply
    from appliance.store import BATTLE, EventStore

    try:
        with EventStore(path, read_only=True) as store:  # never writes (nor migrates) the file it reads
            ids = store.stream_ids(BATTLE)
            if not ids:
                raise StoreError(f"{path}: the store holds no battle")
            battle = battle or ids[-1]
            if battle not in ids:
                raise StoreError(f"{path}: no battle {battle[:100]!r}; have {', '.join(ids)}")
            state = None
            for row in store.read(BATTLE, battle):
                try:
                    state = apply(state, row.event)
                except BattleRuleError as error:
                    error.line = row.seq
                    raise
    except StoreDriverError as error:  # a damaged file: a page that does not read
        raise StoreError(f"{path}: not a readable SQLite event store ({error})") from None
    return {"format": "svoyak-battle-log", "version": 1, "battle_id": battle}, state, state.seq


def check_input(path: str) -> None:
    """Refuse, in one line, a path that is not a regular file: a directory, a device (``/dev/zero`` never ends), a
    FIFO (it may never open). A missing file raises ``FileNotFoundError``, which the CLI words."""
    from appliance.store.errors import LogFormatError

    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        raise LogFormatError("is a directory, not a battle log", source=path)
    if not stat.S_ISREG(mode):
        raise LogFormatError("is not a regular file (a device or a pipe): give a battle log file, or - for "
                             "standard input", source=path)


def bounded_lines(file, source: str):
    """The lines of ``file``, each at most :data:`MAX_LINE_CHARS` (standard input from ``/dev/zero`` has no end of
    line to wait for)."""
    from appliance.store.errors import LogFormatError

    number = 0
    while True:
        line = file.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_CHARS:
            raise LogFormatError(f"line longer than {MAX_LINE_CHARS} characters: not a battle log", line=number,
                                 source=source)
        yield line


def load(args):
    """(header, state, count, source) for ``args.log``, a JSON Lines file, stdin or an SQLite store."""
    source = "<stdin>" if args.log == "-" else args.log
    if args.log != "-":
        check_input(args.log)
    if is_sqlite(args.log):
        header, state, count = replay_store(args.log, getattr(args, "battle", None))
        return header, state, count, source
    file = sys.stdin if args.log == "-" else open(args.log, encoding="utf-8")
    try:
        header, state, count = replay_file(file, source)
    finally:
        if file is not sys.stdin:
            file.close()
    return header, state, count, source


def replay_file(file, source: str):
    """(header, state, events applied); raises LogFormatError or a BattleRuleError carrying ``.line``."""
    from appliance.rules.battle import BattleRuleError, apply
    from appliance.store.jsonl import iter_log

    from appliance.store.errors import LogFormatError

    rows = iter_log(bounded_lines(file, source), source)
    first = next(rows, None)
    if first is None:
        raise LogFormatError("the file is empty: not a battle log", source=source)
    _, header = first
    state = None
    count = 0
    for line, event in rows:
        try:
            state = apply(state, event)
        except BattleRuleError as error:
            error.line = line
            raise
        count += 1
    return header, state, count


def result_dict(header: dict, state, include_questions: bool = False) -> dict:
    """The result, and the battle as the pages show it: the one battle view (BattleAdapter.view, docs/socketio-
    events.md "view"), at the last event. ``include_questions`` adds the protocol's rows (svoyak protocol)."""
    import dataclasses

    from appliance.rules.battle import standings
    from appliance.service.protocol_paper import protocol_rows
    from appliance.service.battle_adapter import BattleAdapter

    table = standings(state)
    return {
        "battle_id": header.get("battle_id"),
        "events": state.seq,
        "profile": state.profile.name,
        "is_over": state.is_over,
        "phase": state.phase,
        "scores": {name: score for name, score in zip(state.players, state.scores)},
        "standings": [{"player": line.player, "name": line.name, "score": line.score, "place": line.place,
                       "place_to": line.place_to, "indicators": line.indicators,
                       "placement_points": line.placement_points, "absent": line.absent} for line in table.lines],
        "shootout": table.to_dict()["shootout"],
        "unresolved_ties": table.to_dict()["unresolved_ties"],
        "view": BattleAdapter().view(state, header.get("battle_id") or "", state.last_at_ns),
        **({"protocol": [dataclasses.asdict(row) for row in protocol_rows(state)]} if include_questions else {}),
    }


def load_or_explain(args, command: str):
    """``(header, state)`` of the log ``args`` names, or None once it has said on stderr why there is none
    (a refused line, with its number and rule, or an empty log): ``svoyak replay`` and ``protocol`` then exit 1."""
    from appliance.rules.battle import BattleRuleError

    source = "<stdin>" if args.log == "-" else args.log
    try:
        header, state, _count, source = load(args)
    except BattleRuleError as error:
        print(f"svoyak {command}: {source}:{error.line}: refused by {error.rule}: {error.message}", file=sys.stderr)
        return None
    if state is None:
        print(f"svoyak {command}: {source}: the log holds no events", file=sys.stderr)
        return None
    return header, state


def run(args) -> int:
    loaded = load_or_explain(args, "replay")
    if loaded is None:
        return 1
    header, state = loaded
    json.dump(result_dict(header, state, args.questions), sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    return 0
