"""docs/capture-protocol.md is the contract: its tables and the code must agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from appliance.service.capture_link import CaptureLink
from gpio.arbiter import PRESS_STATUSES
from appliance.errors import CaptureCommandError
from gpio.commands import parse_command

DOC = (Path(__file__).resolve().parents[2] / "docs" / "capture-protocol.md").read_text(encoding="utf-8")
VALID_FIELDS = {"arm": {"eligible": [1, 2], "round_id": "q1"}, "eligible": {"eligible": [1]},
                "led": {"player": 1, "on": True}, "beep": {"ms": 100}, "button_test": {"on": True},
                "sim_press": {"player": 1}, "sim_release": {"player": 1}}
CLIENT_METHOD = {"arm": "arm", "eligible": "set_eligible", "disarm": "disarm", "reset": "reset", "led": "set_led",
                 "beep": "beep", "button_test": "button_test", "sim_press": "simulate_press",
                 "sim_release": "simulate_release", "status": "status"}


def documented_ops() -> list[str]:
    section = DOC.split("| op | fields | effect |", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.M)


def test_every_documented_op_is_parsed_and_has_a_client_method():
    ops = documented_ops()
    assert set(ops) == set(CLIENT_METHOD)
    for op in ops:
        command_id, parsed_op, _ = parse_command({"type": "cmd", "id": "x", "op": op, **VALID_FIELDS.get(op, {})}, 4)
        assert parsed_op == op
        assert callable(getattr(CaptureLink, CLIENT_METHOD[op]))


def test_documented_press_statuses_are_the_arbiters():
    section = DOC.split("| status | when | can win |", 1)[1].split("\n\n", 1)[0]
    assert tuple(re.findall(r"^\| `([a-z-]+)` \|", section, flags=re.M)) == PRESS_STATUSES


@pytest.mark.parametrize("code", ["bad-request", "bad-op", "bad-player", "not-simulator", "protocol"])
def test_documented_error_codes(code):
    assert f"`{code}`" in DOC.split("Error codes:", 1)[1]


def test_undocumented_op_is_refused():
    with pytest.raises(CaptureCommandError) as caught:
        parse_command({"type": "cmd", "id": "x", "op": "self_destruct"}, 4)
    assert caught.value.code == "bad-op"
