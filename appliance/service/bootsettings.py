"""The first-boot settings file: a plain text file on the card's boot partition that a person edits on any
computer before the first boot (image/README.md, "Settings before the first boot").

``svoyak-settings.txt`` on the FAT partition (``/boot/firmware`` on the box) holds ``key = value`` lines; ``#``
starts a comment; a BOM, CRLF line ends and quotes around a value (Notepad, TextEdit) are accepted. The keys::

    wifi_country     = RU                Wi-Fi country (ISO 3166), the radio's channels and power
    hotspot_name     = Svoyak-Club       the hotspot's Wi-Fi name (SSID)
    hotspot_password = correct-horse-42  its WPA2 password, 8-63 characters
    box_name         = club-1            the box's name on the board and the console
    hub              = 192.168.1.20      a station's hub: the address the pairing form starts with

The whole file is checked first (unknown keys, bad values: every problem named, Russian first, English second)
and then applied at once into the box's settings file ``/etc/svoyak/svoyak.toml`` (the settings
``wifi_country``, ``hotspot_ssid``, ``hotspot_password``, ``box_name``, ``rooms_hub``), or not at all. Applied, the
file is removed from the card (it holds a password) and ``svoyak-settings.applied.txt`` says what was taken,
the password masked. Raspberry Pi OS treats its own first-run files the same way.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import tempfile
import tomllib
from pathlib import Path

import appliance.config as config
from appliance.errors import ConfigError

FILE_NAME = "svoyak-settings.txt"
APPLIED_NAME = "svoyak-settings.applied.txt"
MAX_FILE_BYTES = 16 * 1024
# file key -> setting name (appliance/config.py)
KEYS = {
    "wifi_country": "wifi_country",
    "hotspot_name": "hotspot_ssid",
    "hotspot_password": "hotspot_password",
    "box_name": "box_name",
    "hub": "rooms_hub",
}
SECRET_KEYS = ("hotspot_password",)


class SettingsFileError(ConfigError):
    """The settings file cannot be applied; ``problems`` lists each, worded for a person."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f"{path}: " + "; ".join(problems))


@dataclasses.dataclass(frozen=True)
class Applied:
    settings: dict[str, str]   # setting name -> value, as written to the box's settings file
    config_path: Path
    applied_note: Path


def parse(text: str, path: Path) -> dict[str, str]:
    """``key = value`` lines to ``{setting name: value}``; raises :class:`SettingsFileError` naming every bad line."""
    problems = []
    found: dict[str, str] = {}
    for number, raw in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not sep or not key:
            problems.append(f"строка {number}: нужно «ключ = значение» / line {number}: expected 'key = value'")
            continue
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if key not in KEYS:
            problems.append(f"строка {number}: неизвестный ключ {key!r} (известные: {', '.join(KEYS)}) / "
                            f"line {number}: unknown key {key!r}")
            continue
        if KEYS[key] in found:
            problems.append(f"строка {number}: ключ {key!r} повторяется / line {number}: key {key!r} given twice")
            continue
        if key == "wifi_country":
            value = value.upper()
        found[KEYS[key]] = value
    if problems:
        raise SettingsFileError(path, problems)
    return found


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    # a JSON string is a TOML basic string (the same escapes)
    return json.dumps(str(value), ensure_ascii=False)


def render_toml(values: dict) -> str:
    lines = ["# The box's settings (appliance/config.py; `svoyak config` lists them)."]
    lines += [f"{name} = {_toml_value(value)}" for name, value in values.items()]
    return "\n".join(lines) + "\n"


def apply(boot_dir: Path, config_path: Path, group_id: int | None = None, now=None) -> Applied | None:
    """Apply ``boot_dir/svoyak-settings.txt`` to ``config_path``; None if there is no such file.

    Nothing is half applied: the merged settings are checked by :func:`appliance.config.load` from a temporary
    file beside ``config_path``, which then replaces it (fsynced). The box's settings file becomes 0640 (group
    ``group_id``, the service's: it may hold the hotspot password). Raises :class:`SettingsFileError`.
    """
    source = Path(boot_dir) / FILE_NAME
    if not source.exists():
        return None
    if source.stat().st_size > MAX_FILE_BYTES:
        raise SettingsFileError(source, [f"файл больше {MAX_FILE_BYTES // 1024} КБ / "
                                         f"the file is larger than {MAX_FILE_BYTES // 1024} KB"])
    try:
        text = source.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise SettingsFileError(source, [f"файл не в UTF-8 (байт {error.start}) / the file is not UTF-8 "
                                         f"(byte {error.start})"]) from None
    found = parse(text, source)
    config_path = Path(config_path)
    current: dict = {}
    if config_path.exists():
        try:
            current = tomllib.loads(config_path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise SettingsFileError(config_path, [f"файл настроек коробки испорчен / the box's settings file is "
                                                  f"damaged: {error}"]) from None
    merged = {**current, **found}
    config_path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=config_path.parent, prefix=".svoyak-", suffix=".toml")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(render_toml(merged))
            file.flush()
            os.fsync(file.fileno())
        try:
            config.load(environ={}, config_path=temporary)
        except ConfigError as error:
            raise SettingsFileError(source, [f"значение не подходит / a value does not fit: {error}"]) from None
        os.chmod(temporary, 0o640)
        if group_id is not None:
            os.chown(temporary, 0, group_id)
        os.replace(temporary, config_path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    stamp = (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%d %H:%M:%S UTC")
    shown = {key: ("(задан / set)" if key in SECRET_KEYS else found[KEYS[key]])
             for key in KEYS if KEYS[key] in found}
    note = Path(boot_dir) / APPLIED_NAME
    note.write_text(
        f"# Применено при загрузке {stamp} и перенесено в {config_path}; {FILE_NAME} удалён с карты.\n"
        f"# Applied at boot {stamp} into {config_path}; {FILE_NAME} was removed from the card.\n"
        + "".join(f"{key} = {value}\n" for key, value in shown.items()), encoding="utf-8")
    source.unlink()
    return Applied(settings=found, config_path=config_path, applied_note=note)


def modprobe_country(country: str) -> str:
    """The cfg80211 option that sets the Wi-Fi country from the next boot on (and svoyak-hotspot's ``iw reg``)."""
    return f"# svoyak: the Wi-Fi country (svoyak firstboot, from {FILE_NAME})\noptions cfg80211 ieee80211_regdom={country}\n"
