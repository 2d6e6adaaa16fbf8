"""The shape of what a Socket.IO client may send, checked at the web edge before anything reaches the session.

Anyone on the hotspot can open a socket and send anything JSON can carry (and Python's JSON more: ``Infinity``,
``NaN``, integers of any length). Each handler names the fields it reads and their kinds; a message of the wrong
shape is refused with a worded ``error.bad_command`` whose detail names the field, and nothing is applied. The rules
engine bounds the values that mean something in a battle (prices, milliseconds); this module bounds what any
value may be at all: finite numbers in the range a browser can hold exactly, strings and lists of sane length,
nesting a few levels deep.

>>> fields({"player": 2, "code": "0417"}, player=SEAT, code=SEAT_CODE)
{'player': 2, 'code': '0417'}
>>> fields({"player": float("inf")}, player=SEAT)
Traceback (most recent call last):
...
web.payloads.BadMessage: error.bad_command: player: a whole number is expected, not float
>>> plain({"extra_ms": 10**30})
Traceback (most recent call last):
...
web.payloads.BadMessage: error.argument_range: extra_ms: 1000000000000000000000000000000 is outside ±2**53
"""

from __future__ import annotations

import math
from typing import Any, Callable

from appliance.config import QUESTION_TEXT_CHARS
from appliance.errors import CommandRejected

REFUSAL = "error.bad_command"  # worded "unknown or incomplete command"; the detail names the field

SAFE_INTEGER = 2**53        # JavaScript's exact integers: what a page can have sent on purpose
MAX_TEXT_CHARS = QUESTION_TEXT_CHARS  # any one string (a question's text, the longest a setup holds)
MAX_ID_CHARS = 100          # command and press ids (the session keeps them)
MAX_NODES = 5_000           # values in one message, all levels counted (a 20-theme setup is a few hundred)
MAX_DEPTH = 8               # nesting of lists and objects (setup: args -> themes -> theme -> questions -> pair)


RANGE = "error.argument_range"  # a command argument out of any sane bound (the session's own code for its bounds)
KIND = "error.argument_type"    # a command argument that is not plain data


class BadMessage(CommandRejected):
    """A Socket.IO message whose shape is wrong: ``detail`` names the field and what was expected; ``params``
    carry the field as ``argument``, as the session's own argument refusals do."""

    def __init__(self, detail: str, argument: str = "", code: str = REFUSAL) -> None:
        super().__init__(code, detail, params={"argument": argument} if argument else None)


def _whole(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadMessage(f"{name}: a whole number is expected, not {type(value).__name__}", name)
    if not low <= value <= high:
        raise BadMessage(f"{name}: {value if abs(value) < 10**20 else 'a huge number'} is outside {low}-{high}", name)
    return value


def SEAT(name: str, value: Any) -> int:
    """A seat (player) number: 0-63 (the session says whether the battle has that seat)."""
    return _whole(name, value, 0, 63)


def BUTTON(name: str, value: Any) -> int | str:
    """A simulated button: a seat (:func:`SEAT`) or ``"host"``, the host's reset button on the box."""
    return value if value == "host" else SEAT(name, value)


def _text(limit: int, allow_empty: bool) -> Callable[[str, Any], str]:
    def check(name: str, value: Any) -> str:
        if not isinstance(value, str):
            raise BadMessage(f"{name}: text is expected, not {type(value).__name__}", name)
        if len(value) > limit or (not value and not allow_empty):
            raise BadMessage(f"{name}: text of {0 if allow_empty else 1}-{limit} characters is expected", name)
        return value
    return check


SEAT_CODE = _text(16, allow_empty=True)        # a seat code as typed (a wrong one is the session's call)
ID = _text(MAX_ID_CHARS, allow_empty=False)    # a command or press id
NAME = _text(64, allow_empty=False)            # a command or action name


def PLAIN(name: str, value: Any) -> Any:
    """Any plain data within the bounds (:func:`plain`); what it must be is the session's to say (a command's
    ``args``: ``appliance/service/arguments.py`` names the argument that is missing or of the wrong type)."""
    return plain(value)


def fields(data: Any, **kinds: Callable[[str, Any], Any]) -> dict:
    """The named fields of message ``data``, each checked by its kind; raise :class:`BadMessage` if the message
    is not an object, a field is missing or of the wrong kind. Fields not named are ignored.

    A kind is a callable ``(name, value) -> value``: :func:`SEAT`, :data:`SEAT_CODE`, :data:`ID`, :data:`NAME`,
    :func:`PLAIN`; wrap one in :func:`optional` for a field that may be left out.
    """
    if not isinstance(data, dict):
        raise BadMessage(f"the message is an object {{{', '.join(kinds)}}}, not {type(data).__name__}")
    out = {}
    for name, kind in kinds.items():
        if name not in data and not getattr(kind, "optional", False):
            raise BadMessage(f"{name}: missing", name)
        out[name] = kind(name, data.get(name))
    return out


def optional(kind: Callable[[str, Any], Any], default: Any = None) -> Callable[[str, Any], Any]:
    """``kind``, but a missing or ``null`` field gives ``default``."""
    def check(name: str, value: Any) -> Any:
        return default if value is None else kind(name, value)
    check.optional = True
    return check


def plain(value: Any, name: str = "") -> Any:
    """``value`` itself if it is plain data within the bounds above: objects with text keys, lists, text, booleans,
    ``null``, finite numbers within ±2**53. Raise :class:`BadMessage` naming the first offending field.

    >>> plain({"themes": [{"name": "Реки", "red": True}], "extra_ms": 3000})["extra_ms"]
    3000
    >>> plain([[[[[[[[[[]]]]]]]]]])
    Traceback (most recent call last):
    ...
    web.payloads.BadMessage: error.argument_range: [0][0][0][0][0][0][0][0]: nested deeper than 8 levels
    """
    budget = [MAX_NODES]

    def refuse(where: str, why: str, code: str = RANGE) -> BadMessage:
        return BadMessage(f"{where or 'value'}: {why}", where.split(".")[0].split("[")[0], code)

    def walk(item: Any, where: str, depth: int) -> None:
        budget[0] -= 1
        if budget[0] < 0:
            raise refuse(where, f"more than {MAX_NODES} values in one message")
        if item is None or isinstance(item, bool):
            return
        if isinstance(item, int):
            if not -SAFE_INTEGER <= item <= SAFE_INTEGER:
                raise refuse(where, f"{item if item.bit_length() < 128 else 'a huge number'} is outside ±2**53")
            return
        if isinstance(item, float):
            if not math.isfinite(item) or abs(item) > SAFE_INTEGER:
                raise refuse(where, f"{item!r} is not a finite number within ±2**53")
            return
        if isinstance(item, str):
            if len(item) > MAX_TEXT_CHARS:
                raise refuse(where, f"text longer than {MAX_TEXT_CHARS} characters")
            return
        if isinstance(item, (list, dict)):
            if depth >= MAX_DEPTH:
                raise refuse(where, f"nested deeper than {MAX_DEPTH} levels")
            if isinstance(item, list):
                for number, element in enumerate(item):
                    walk(element, f"{where}[{number}]", depth + 1)
            else:
                for key, element in item.items():
                    if not isinstance(key, str) or len(key) > 64:
                        raise refuse(where, "keys are text of up to 64 characters", KIND)
                    walk(element, f"{where}.{key}" if where else key, depth + 1)
            return
        raise refuse(where, f"{type(item).__name__} is not plain data", KIND)

    walk(value, name, 0)
    return value
