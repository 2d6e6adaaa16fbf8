"""The spectators' nats-server: its folder, its configuration and publisher secret, the ports it listens on.

``svoyak spectators`` (the box's ``svoyak-spectators.service``; ``svoyak run`` starts it on a laptop) calls
:func:`prepare` and then becomes nats-server. The web process never starts it: it reads :func:`ports` and the
secret to publish, and falls back to Socket.IO and a polled snapshot while there is none (docs/spectators.md).
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from appliance.service.rooms.server import find_binary
from appliance.service.spectators import conf


def folder(settings) -> Path:
    return Path(settings.data_dir) / "spectators"


def secret_path(settings) -> Path:
    return folder(settings) / "publisher.secret"


def _write(path: Path, text: str) -> None:
    temporary = path.with_suffix(".tmp")
    with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


def prepare(settings) -> list[str]:
    """Write a new publisher secret and the configuration (0600 both), remove stale ports files; return the
    nats-server command line to run."""
    where = folder(settings)
    where.mkdir(parents=True, exist_ok=True)
    for old in where.glob("*.ports"):
        old.unlink(missing_ok=True)
    password = secrets.token_urlsafe(24)
    text = conf.server_config(settings.spectators_client_port, settings.spectators_ws_port, password,
                              secrets.token_urlsafe(24), uplink=settings.spectators_uplink, ports_dir=str(where))
    _write(where / "nats.conf", text)
    _write(secret_path(settings), password + "\n")
    return [find_binary(settings.nats_server), "-c", str(where / "nats.conf")]


def ports(settings) -> dict | None:
    """``{"client": port, "websocket": port}`` of the running server (its ports file, its process alive), or
    None when none runs."""
    for path in sorted(folder(settings).glob("*.ports"), key=lambda item: item.stat().st_mtime, reverse=True):
        try:
            pid = int(path.stem.rsplit("_", 1)[1])
            found = json.loads(path.read_text())
        except (ValueError, OSError, IndexError):
            continue
        if not Path(f"/proc/{pid}").exists():
            continue
        client, websocket = found.get("nats") or [], found.get("websocket") or []
        if client and websocket:
            return {"client": _port(client[0]), "websocket": _port(websocket[0])}
    return None


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].rstrip("/"))


def cores(setting: str, available: set[int]) -> set[int]:
    """The cores the server runs on (setting ``spectators_cpus``), of ``available`` (the process's own): ``auto``
    is the upper half on 4 or more (a Pi 3: 2 and 3, the game keeping 0 and 1 to itself when the hall's phones
    are many), else all; ``all`` all; a list those of it that exist (none existing: all)."""
    ordered = sorted(available)
    if setting == "all" or (setting == "auto" and len(ordered) < 4):
        return set(ordered)
    if setting == "auto":
        return set(ordered[len(ordered) // 2:])
    chosen = {int(part) for part in setting.split(",")} & available
    return chosen or set(ordered)

