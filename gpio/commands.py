"""The capture link's commands, validated server side (docs/capture-protocol.md, version 1).

The wire format both ends share (records, limits, lines) is ``appliance/capture_wire.py``; this module checks a
command completely before anything is applied (a rejected command changes nothing).

>>> parse_command({"type": "cmd", "id": "c1", "op": "arm", "eligible": [1, 3], "round_id": "q1"}, players=4)
('c1', 'arm', {'eligible': [1, 3], 'round_id': 'q1'})
>>> parse_command({"type": "cmd", "id": "c2", "op": "led", "player": 5, "on": True}, players=4)
Traceback (most recent call last):
...
appliance.errors.CaptureCommandError: led: player 5 is outside 1-4 (bad-player)
"""

from __future__ import annotations

from appliance.capture_wire import MAX_BEEP_MS, MAX_HOLD_MS, MAX_ID_CHARS
from appliance.errors import CaptureCommandError

def _player(op: str, value, players: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise CaptureCommandError("bad-request", f"{op}: player must be an integer, not {value!r}")
    if not 1 <= value <= players:
        raise CaptureCommandError("bad-player", f"{op}: player {value} is outside 1-{players}")
    return value


def _flag(op: str, fields: dict, name: str) -> bool:
    value = fields.get(name)
    if not isinstance(value, bool):
        raise CaptureCommandError("bad-request", f"{op}: {name!r} must be true or false, not {value!r}")
    return value


def parse_command(message: dict, players: int) -> tuple[str, str, dict]:
    """Validate a ``cmd`` message; return ``(id, op, arguments)`` or raise :class:`CaptureCommandError`."""
    command_id = message.get("id")
    if not isinstance(command_id, str) or not 1 <= len(command_id) <= MAX_ID_CHARS:
        raise CaptureCommandError("bad-request", f"a command needs a string 'id' of 1-{MAX_ID_CHARS} characters")
    op = message.get("op")
    if op == "arm":
        eligible = message.get("eligible")
        if not isinstance(eligible, list):
            raise CaptureCommandError("bad-request", "arm: 'eligible' must be a list of players")
        players_set = sorted({_player(op, player, players) for player in eligible})
        round_id = message.get("round_id")
        if not isinstance(round_id, str) or not 1 <= len(round_id) <= MAX_ID_CHARS:
            raise CaptureCommandError("bad-request", f"arm: 'round_id' must be a string of 1-{MAX_ID_CHARS} characters")
        return command_id, op, {"eligible": players_set, "round_id": round_id}
    if op == "eligible":
        eligible = message.get("eligible")
        if not isinstance(eligible, list):
            raise CaptureCommandError("bad-request", "eligible: 'eligible' must be a list of players")
        return command_id, op, {"eligible": sorted({_player(op, player, players) for player in eligible})}
    if op in ("disarm", "reset", "status"):
        return command_id, op, {}
    if op == "led":
        return command_id, op, {"player": _player(op, message.get("player"), players), "on": _flag(op, message, "on")}
    if op == "beep":
        ms = message.get("ms")
        if ms is not None and (not isinstance(ms, int) or isinstance(ms, bool) or not 1 <= ms <= MAX_BEEP_MS):
            raise CaptureCommandError("bad-request", f"beep: 'ms' must be an integer 1-{MAX_BEEP_MS}, not {ms!r}")
        return command_id, op, {"ms": ms}
    if op == "button_test":
        return command_id, op, {"on": _flag(op, message, "on")}
    if op in ("sim_press", "sim_release"):
        # "button": "reset" drives the host's reset button instead of a player's (player 0 inside the service)
        if message.get("button") == "reset" and "player" not in message:
            player = 0
        elif "button" in message:
            raise CaptureCommandError("bad-request", f"{op}: 'button' is \"reset\" (players are given by 'player')")
        else:
            player = _player(op, message.get("player"), players)
        if op == "sim_release":
            return command_id, op, {"player": player}
        hold_ms = message.get("hold_ms")
        if hold_ms is not None and (not isinstance(hold_ms, int) or isinstance(hold_ms, bool)
                                    or not 1 <= hold_ms <= MAX_HOLD_MS):
            raise CaptureCommandError("bad-request", f"sim_press: 'hold_ms' must be an integer 1-{MAX_HOLD_MS}")
        return command_id, op, {"player": player, "hold_ms": hold_ms}
    raise CaptureCommandError("bad-op", f"unknown op {op!r}")
