"""The host commands' arguments, checked at the session's edge before anything reaches the adapter or engine.

Each command names the arguments it takes, their types and whether they are required. A command with a missing,
unknown or mistyped argument is refused with a code that says which (``error.argument_missing``,
``error.argument_type``, ``error.argument_unknown``, ``error.argument_range``) and the argument's name in
``params``, so a ``TypeError`` or ``KeyError`` further in is a bug in the box, never a refusal of bad input.
Ranges that are rules (how long an extension may be, which player or question exists) stay with the engine and
its profile; only what no rule can accept (a name that is not text, a negative count) is refused here.

>>> check_arguments("pick", {"player": 2})
{'player': 2}
>>> check_arguments("pick", {"player": "2"})
Traceback (most recent call last):
...
appliance.errors.ArgumentRejected: error.argument_type: player must be a whole number, not '2'
"""

from __future__ import annotations

import math
from typing import Any

from appliance.config import SETUP_LIST_ITEMS, SETUP_TEXT_CHARS
from appliance.errors import ArgumentRejected
from appliance.service.battle_adapter import HostCommand

MAX_TEXT_CHARS = SETUP_TEXT_CHARS  # a name, a theme, a reason or a claim: a line of text, not a document
MAX_LIST_ITEMS = SETUP_LIST_ITEMS  # players or themes in a setup: a battle has a handful
MAX_WHOLE = 10**12          # far above any seat, question or millisecond count, far below what breaks a timer


# The kinds an argument may be (checked by _check below)
WHOLE, TEXT, FLAG, OPTIONAL_FLAG, NAMES, THEMES, PROFILE, MODE, OPTIONAL_WHOLES, PACKAGE = (
    "whole", "text", "flag", "optional_flag", "names", "themes", "profile", "mode", "optional_wholes", "package")

# command -> {argument: (kind, required)}
COMMANDS: dict[str, dict[str, tuple[str, bool]]] = {
    "setup": {"profile": (PROFILE, True), "players": (NAMES, True), "themes": (THEMES, True),
              "mode": (MODE, False), "set_aside": (TEXT, False),
              # words for the papers: the protocol's title (battle_adapter.PAPER_FIELDS)
              "tournament": (TEXT, False), "stage": (TEXT, False), "battle_name": (TEXT, False),
              "room": (TEXT, False), "host": (TEXT, False), "date": (TEXT, False),
              # a tournament battle assigned to this box (docs/rooms.md): its slot, run and the stage's cuts
              "slot": (TEXT, False), "run": (WHOLE, False), "runs": (WHOLE, False), "cuts": (OPTIONAL_WHOLES, False),
              "package": (PACKAGE, False)},
    # a battle of this box becomes the live one again; set_aside names the unfinished live one it replaces
    "resume": {"battle": (TEXT, True), "set_aside": (TEXT, False),
              "package": (PACKAGE, False)},
    "phones": {"enabled": (FLAG, True)},
    "button_test": {"on": (FLAG, False)},
    # the battle's host commands, by name (battle_adapter.HostCommand; every one has its line here)
    HostCommand.NEXT: {"name": (TEXT, False)},
    HostCommand.READING_DONE: {}, HostCommand.RESUME_READING: {}, HostCommand.POINT: {}, HostCommand.RIGHT: {},
    HostCommand.WRONG: {}, HostCommand.SHORT_FORM: {}, HostCommand.CLARIFY: {}, HostCommand.TIME: {},
    HostCommand.ANNOUNCE: {}, HostCommand.UNDO: {},
    HostCommand.PICK: {"player": (WHOLE, True)},
    HostCommand.EXTEND: {"extra_ms": (WHOLE, False)},
    HostCommand.WITHDRAW: {"reason": (TEXT, False)},
    HostCommand.CLAPS: {"on": (FLAG, False)},
    HostCommand.CORRECT: {"question": (WHOLE, False), "player": (WHOLE, True), "correct": (FLAG, True),
                          "reason": (TEXT, False)},
    HostCommand.APPEAL: {"player": (WHOLE, True), "question": (WHOLE, False), "claim": (TEXT, False)},
    HostCommand.APPEAL_DECIDE: {"appeal": (WHOLE, True), "accepted": (FLAG, True),
                                "correct": (OPTIONAL_FLAG, False)},
}
assert set(HostCommand) <= set(COMMANDS), "a host command without its arguments"


def check_arguments(name: str, args: Any) -> dict:
    """``args`` checked against command ``name``'s table: the same dict, or :class:`ArgumentRejected`.

    ``None`` stands for no arguments. An unknown command is ``error.unknown_command``.
    """
    spec = COMMANDS.get(name)
    if spec is None:
        raise ArgumentRejected("error.unknown_command", f"there is no host command {name!r}"[:200],
                               {"command": str(name)[:100]})
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ArgumentRejected("error.argument_type", "the arguments are an object of names and values",
                               {"argument": "args"})
    for key in args:
        if key not in spec:
            raise ArgumentRejected("error.argument_unknown", f"{name} takes no argument {str(key)[:100]!r}",
                                   {"argument": str(key)[:100]})
    for key, (kind, required) in spec.items():
        if key not in args or (args[key] is None and kind != OPTIONAL_FLAG):
            if required:
                raise ArgumentRejected("error.argument_missing", f"{name} needs {key}", {"argument": key})
            continue
        _check(key, kind, args[key])
    return dict(args)


def _check(key: str, kind: str, value: Any) -> None:
    def wrong(expected: str) -> ArgumentRejected:
        return ArgumentRejected("error.argument_type", f"{key} must be {expected}, not {_shown(value)}",
                                {"argument": key, "expected": expected})

    if kind == WHOLE:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong("a whole number")
        if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
            raise wrong("a whole number")
        if not 0 <= value <= MAX_WHOLE:
            raise ArgumentRejected("error.argument_range", f"{key} must be from 0 to {MAX_WHOLE}, not {_shown(value)}",
                                   {"argument": key, "least": 0, "most": MAX_WHOLE})
    elif kind in (TEXT, PROFILE, MODE):
        if not isinstance(value, str):
            raise wrong("text")
        if len(value) > MAX_TEXT_CHARS:
            raise ArgumentRejected("error.argument_range", f"{key} is longer than {MAX_TEXT_CHARS} characters",
                                   {"argument": key, "most": MAX_TEXT_CHARS})
        if kind == MODE and value not in ("buttons", "claps"):
            raise wrong('"buttons" or "claps"')
    elif kind == FLAG:
        if not isinstance(value, bool):
            raise wrong("true or false")
    elif kind == OPTIONAL_FLAG:
        if value is not None and not isinstance(value, bool):
            raise wrong("true, false or null")
    elif kind == NAMES:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise wrong("a list of names")
        _check_length(key, value)
        for item in value:
            _check(key, TEXT, item)
    elif kind == THEMES:
        if isinstance(value, int) and not isinstance(value, bool):
            if not 0 <= value <= MAX_LIST_ITEMS:
                raise ArgumentRejected("error.argument_range", f"{key} must be from 0 to {MAX_LIST_ITEMS}",
                                       {"argument": key, "least": 0, "most": MAX_LIST_ITEMS})
            return
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise wrong("a list of {name, red}")
        _check_length(key, value)
        for theme in value:
            for field in theme:
                if field not in ("name", "red"):
                    raise ArgumentRejected("error.argument_unknown", f"a theme has no field {str(field)[:100]!r}",
                                           {"argument": f"{key}.{str(field)[:100]}"})
            if theme.get("name") is not None:
                _check(f"{key}.name", TEXT, theme["name"])
            if theme.get("red") is not None:
                _check(f"{key}.red", FLAG, theme["red"])
    elif kind == PACKAGE:
        # {id, themes: [numbers] (absent: the next unplayed), spare: [numbers]}: docs/socketio-events.md
        if not isinstance(value, dict):
            raise wrong("{id, themes, spare}")
        for field in value:
            if field not in ("id", "themes", "spare"):
                raise ArgumentRejected("error.argument_unknown", f"a package choice has no field {str(field)[:100]!r}",
                                       {"argument": f"{key}.{str(field)[:100]}"})
        if "id" not in value:
            raise ArgumentRejected("error.argument_missing", f"{key} needs id", {"argument": f"{key}.id"})
        _check(f"{key}.id", TEXT, value["id"])
        for field in ("themes", "spare"):
            numbers = value.get(field)
            if numbers is None:
                continue
            if not isinstance(numbers, list):
                raise ArgumentRejected("error.argument_type", f"{key}.{field} must be a list of theme numbers",
                                       {"argument": f"{key}.{field}", "expected": "a list of theme numbers"})
            _check_length(f"{key}.{field}", numbers)
            for number in numbers:
                _check(f"{key}.{field}", WHOLE, number)
    elif kind == OPTIONAL_WHOLES:
        if value is None:
            return
        if not isinstance(value, list):
            raise wrong("a list of whole numbers or null")
        _check_length(key, value)
        for item in value:
            _check(key, WHOLE, item)
    else:  # pragma: no cover - the table above names only the kinds handled here
        raise AssertionError(f"no check for argument kind {kind!r}")


def _check_length(key: str, value: list) -> None:
    if len(value) > MAX_LIST_ITEMS:
        raise ArgumentRejected("error.argument_range", f"{key} has more than {MAX_LIST_ITEMS} items",
                               {"argument": key, "most": MAX_LIST_ITEMS})


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
