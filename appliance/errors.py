"""The project's error and warning tree.

One root (:class:`SvoyakError`), one base per area. Leaves also subclass the fitting builtin
(``ValueError``, ``LookupError``, ...) so ordinary ``except`` clauses keep working, as gpiozero's
``exc.py`` does. Errors carry the data involved (command, player, state); the web layer words them.

The whole tree::

    SvoyakError
    ├── ConfigError                       (appliance.service.bootsettings.SettingsFileError)
    ├── RulesError                        the pure engines' own: appliance/rules/battle/errors.py (BattleRuleError,
    │                                     ProfileError), appliance/rules/tournament/errors.py (TournamentError ...)
    ├── StoreError
    │   ├── StoreDriverError              the database driver failed (every sqlite3 error, wrapped by the store)
    │   └── LogFormatError, StoreConflictError, DuplicateCommandError, StoreFormatError  (appliance/store/errors.py)
    ├── PackageError                      PackageFileError, PackageNotFound (appliance/packages/errors.py),
    │                                     PackageChoiceError (appliance/service/packages.py)
    ├── CaptureError
    │   ├── CaptureCommandError           the capture service refused a command (both ends of the socket)
    │   ├── CaptureLinkDown               the appliance's link to the capture service is down
    │   └── CaptureLocked, PinFactoryUnavailable, PinsUnavailable, CdevUnavailable, SocketInUse  (gpio/)
    ├── ServiceError
    │   ├── CommandRejected               a host or phone command the session refuses (web.payloads.BadMessage)
    │   ├── ArgumentRejected              a command's argument refused by its declared kind
    │   ├── CommandError                  a battle command the engine's data cannot build (no such profile)
    │   ├── UnknownBattleError, UnknownTournamentError, DeskInputError, BoxBusyError
    │   └── NotOnTheAllowList             a value of a shape an audience's record does not declare
    ├── RoomsError                        the rooms link: appliance/service/rooms/ (MessageError, PairingError ...)
    └── WebError                          the web layer's own (web.strings.DuplicateStringError)
    SvoyakWarning
    └── DegradedModeWarning

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


class StoreDriverError(StoreError):
    """The database driver failed (disk, lock, damaged file): the store's wrapping of every ``sqlite3`` error."""


class PackageError(SvoyakError):
    """Base for errors of question packages: importing a file, the library on the box."""


class CaptureError(SvoyakError):
    """Base for errors of the buzzer capture service and its local protocol."""


class CaptureCommandError(CaptureError, ValueError):
    """The capture service refused a command; nothing changed. ``code`` is the protocol's error code."""

    def __init__(self, code: str, message: str, op: str = "") -> None:
        super().__init__(f"capture service refused {op!r}: {message} ({code})" if op else f"{message} ({code})")
        self.op, self.code, self.message = op, code, message


class CaptureLinkDown(CaptureError, ConnectionError):
    """The capture service is not connected (momentary command) or the link was closed."""


class ServiceError(SvoyakError):
    """Base for the service layer's refusals: commands, arguments, the desks' lookups."""


class CommandRejected(ServiceError, ValueError):
    """A command the session refuses before the engine (no battle, phones off, unknown command): ``code`` words it."""

    def __init__(self, code: str, detail: str = "", command: str | None = None, params: dict | None = None
                 ) -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail
        self.command = command
        self.params = params or {}


class ArgumentRejected(ServiceError, ValueError):
    """A host command refused for its arguments: ``code`` words it, ``params`` name the argument."""

    def __init__(self, code: str, detail: str, params: dict | None = None) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail
        self.params = params or {}


class CommandError(ServiceError, ValueError):
    """Arguments a battle command cannot be built from (no such profile): ``code`` words it."""

    def __init__(self, message: str, code: str = "error.bad_command", argument: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.params = {"argument": argument} if argument else {}


class UnknownBattleError(ServiceError, LookupError):
    """No battle with that id in the store."""


class UnknownTournamentError(ServiceError, LookupError):
    """No tournament with this id in the log (``code`` ``tournament.unknown``, ``params`` ``{"tid"}``)."""

    def __init__(self, message: str, *, code: str = "tournament.unknown", params: dict | None = None) -> None:
        super().__init__(message)
        self.code, self.params = code, dict(params or {})


class DeskInputError(ServiceError, ValueError):
    """A field typed on a desk form that is not what it says: a ``code`` of the desk's refusals and ``params``."""

    def __init__(self, message: str, *, code: str, params: dict | None = None) -> None:
        super().__init__(message)
        self.code, self.params = code, dict(params or {})


class BoxBusyError(ServiceError, RuntimeError):
    """The box's live battle is not over: a tournament battle would replace it (``play_on_box``)."""

    def __init__(self, live_battle_id: str, battle_id: str) -> None:
        super().__init__(f"battle {live_battle_id} is not over on this box; set it aside to play {battle_id}")
        self.live_battle_id = live_battle_id
        self.battle_id = battle_id


class NotOnTheAllowList(ServiceError, TypeError):
    """A value of a shape its record does not declare (a mapping where plain data was declared)."""


class RoomsError(SvoyakError):
    """Base for errors of the rooms link (pairing, roles, messages)."""


class WebError(SvoyakError):
    """Base for errors of the web layer (roles, PIN, command ids)."""


class SvoyakWarning(UserWarning):
    """Root of the project's warnings."""


class DegradedModeWarning(SvoyakWarning):
    """The box runs in a degraded mode: fallback pin factory, phones as buzzers, no capture link."""
