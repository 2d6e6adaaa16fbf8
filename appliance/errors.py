"""The project's error and warning tree.

One root (:class:`SvoyakError`), one base per area. Leaves also subclass the fitting builtin
(``ValueError``, ``LookupError``, ...) so ordinary ``except`` clauses keep working, as gpiozero's
``exc.py`` does. Errors carry the data involved (command, player, state); the web layer words them.

This module imports nothing from the project: every layer, the pure rules included, may use it.
"""


class SvoyakError(Exception):
    """Root of every error this project raises on purpose."""


class ConfigError(SvoyakError, ValueError):
    """A setting is missing, malformed or inconsistent (pins clash, bad port, unreadable file)."""


class RulesError(SvoyakError):
    """Base for errors raised by the pure rules engines (battle and tournament)."""


class StoreError(SvoyakError):
    """Base for errors of the event store and its import/export format."""


class PackageError(SvoyakError):
    """Base for errors of question packages: importing a file, the library on the box."""


class CaptureError(SvoyakError):
    """Base for errors of the buzzer capture service and its local protocol."""


class WebError(SvoyakError):
    """Base for errors of the web layer (roles, PIN, command ids)."""


class SvoyakWarning(UserWarning):
    """Root of the project's warnings."""


class DegradedModeWarning(SvoyakWarning):
    """The box runs in a degraded mode: fallback pin factory, phones as buzzers, no capture link."""
