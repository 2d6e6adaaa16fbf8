"""The box's identity: its name, hotspot credentials, host PIN and director PIN, made once at first boot.

No secret is hard-coded: the first process that needs the identity (the first-boot unit on a box, ``./dev run``
on a laptop) makes it from ``secrets`` and keeps it in ``data_dir/identity.json``; later runs read it back.
Settings that name a value (``box_name``, ``host_pin``, ``director_pin``, ``hotspot_ssid``, ``hotspot_password``)
win over the file (the first-boot settings file on the card's boot partition sets them: firstboot.py). The director PIN is the box owner's: shown in the console (``svoyak run``, first boot), never on the board,
and a different secret from the host's, so a room's host cannot reach the tournament desk.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
from pathlib import Path

from appliance.config import Settings
from appliance.errors import ConfigError

IDENTITY_FILE = "identity.json"
# No 0/O, 1/l/I: the password is read off a TV and typed on a phone.
_READABLE = "abcdefghijkmnpqrstuvwxyz23456789"


@dataclasses.dataclass(frozen=True)
class Identity:
    box_name: str
    hotspot_ssid: str
    hotspot_password: str
    host_pin: str
    # Signs the web pages' session cookies; kept so a restart does not log the host and director out.
    session_secret: str = ""
    # Opens the tournament desk (web/director.py); 6 digits: it guards the whole day, not one room.
    director_pin: str = ""


def make(token_source=secrets) -> Identity:
    """A fresh identity: a short box name, an SSID from it, a 10-character WPA2 password, a 6-digit PIN."""
    suffix = "".join(token_source.choice("0123456789ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(4))
    password = "".join(token_source.choice(_READABLE) for _ in range(10))
    pin = f"{token_source.randbelow(1_000_000):06d}"  # 6 digits: web/guard.py sizes the guess budget by it
    return Identity(box_name=f"svoyak-{suffix}", hotspot_ssid=f"Svoyak-{suffix}", hotspot_password=password,
                    host_pin=pin, session_secret=token_source.token_hex(32),
                    director_pin=make_director_pin(pin, token_source))


def make_director_pin(host_pin: str, token_source=secrets) -> str:
    """A 6-digit director PIN that does not start with the host's 4 digits (typing one must not half-open the
    other)."""
    for _ in range(100):
        pin = f"{token_source.randbelow(1_000_000):06d}"
        if not pin.startswith(host_pin):
            return pin
    return pin


def _write(path: Path, identity: Identity) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as file:
        json.dump(dataclasses.asdict(identity), file, ensure_ascii=False, indent=2)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


def load_or_create(settings: Settings) -> Identity:
    """The box's identity: read from ``data_dir/identity.json``, made and written there if absent.

    The file is written atomically (temp file, fsync, rename) and readable by its owner only. A file from an
    older version that lacks a field made since (``session_secret``, ``director_pin``) gets it added and is
    written again.
    Raises :class:`ConfigError` if the file exists but is not a valid identity.
    """
    path = Path(settings.data_dir) / IDENTITY_FILE
    if path.exists():
        try:
            identity = Identity(**json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, TypeError) as error:
            raise ConfigError(f"{path} is not a valid identity file: {error}") from None
        if not identity.session_secret or not identity.director_pin:
            identity = dataclasses.replace(
                identity, session_secret=identity.session_secret or secrets.token_hex(32),
                director_pin=identity.director_pin or make_director_pin(identity.host_pin))
            _write(path, identity)
    else:
        identity = make()
        _write(path, identity)
    overrides = {
        "box_name": settings.box_name,
        "host_pin": settings.host_pin,
        "director_pin": settings.director_pin,
        "hotspot_ssid": settings.hotspot_ssid,
        "hotspot_password": settings.hotspot_password,
    }
    identity = dataclasses.replace(identity, **{key: value for key, value in overrides.items() if value})
    if identity.director_pin == identity.host_pin:
        raise ConfigError("director_pin must differ from host_pin: a room's host must not open the tournament desk")
    if not (8 <= len(identity.hotspot_password) <= 63):
        raise ConfigError("hotspot_password must be 8-63 characters (WPA2)")
    return identity
