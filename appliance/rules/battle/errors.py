"""The battle engine's errors: an event the rules refuse, a profile that is not a valid regulation."""

from __future__ import annotations

from typing import Any

from appliance.errors import RulesError


class BattleRuleError(RulesError, ValueError):
    """An event the rules do not allow. The state it was applied to is unchanged (states are immutable).

    ``rule`` names the regulation and section that refuses it (``"eurocup 2.9"``), ``event`` is the event,
    ``player`` the player involved if any. ``str(error)`` is a human sentence that starts with the rule.

    >>> error = BattleRuleError("eurocup 2.6", "nobody is answering", event=None)
    >>> str(error)
    'eurocup 2.6: nobody is answering'
    """

    def __init__(self, rule: str, message: str, event: Any = None, player: int | None = None) -> None:
        super().__init__(f"{rule}: {message}")
        self.rule = rule
        self.message = message
        self.event = event
        self.player = player


class ProfileError(RulesError, ValueError):
    """A rules profile (TOML) is missing, malformed or names an unknown option; says which file and field."""
