"""Errors of the tournament engine: each names the rule, stage or player involved.

They subclass :class:`appliance.errors.RulesError` and the fitting builtin, so ``except ValueError`` works too.
"""

from __future__ import annotations

from appliance.errors import RulesError


class TournamentError(RulesError):
    """Base for every error of the tournament engine."""


class FormatError(TournamentError, ValueError):
    """A tournament format (TOML preset) is malformed: the message names the file, stage and field."""


class UnknownFormatError(TournamentError, LookupError):
    """No shipped preset has this name."""


class RegistrationError(TournamentError, ValueError):
    """A registration, withdrawal or seeding command breaks the format's registration rules."""


class DrawError(TournamentError, ValueError):
    """A draw cannot meet a constraint; the message says which one and why (``eurocup 3.3`` ...)."""


class ResultError(TournamentError, ValueError):
    """A battle result, written sheet or shoot-out does not fit the battle or stage it is for."""


class StageError(TournamentError, ValueError):
    """A command comes at the wrong moment (stage not drawn, results missing, already drawn and played)."""
