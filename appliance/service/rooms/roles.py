"""A box's role in the rooms and its credentials, kept in ``data_dir/rooms/rooms.json`` (0600).

``standalone`` (the default, today's box), ``hub`` or ``station``. A hub keeps the stations it paired, each
with its own password, and the pairing code it shows (short-lived; it pairs one box). A station keeps the hub's leaf URL and its
own user and password. Changing the role rewrites this file; nothing is reflashed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import threading
import time
from pathlib import Path

from appliance.service.rooms import protocol
from appliance.service.rooms.protocol import PairingError, RoomsError

ROLES = ("standalone", "hub", "station", "standby")  # standby: the desk's twin (standby.py)
PAIRING_CODE_DIGITS = 6
PAIRING_CODE_TTL_S = 600
PAIRING_TRIES = 10  # wrong codes before the code is void (a stranger cannot try them all)


class RoleError(RoomsError, ValueError):
    """An unknown role, or a change the box cannot make now."""


class AlreadyPairedError(PairingError):
    """A box id that is already paired with this desk and that the director has not re-paired."""

    def __init__(self, box_id: str, name: str) -> None:
        self.box_id, self.name = box_id, name
        super().__init__(f"box {box_id} ({name}) is already paired with this desk; to pair it again, press "
                         f"«Подключить заново» (pair again) beside that station on the desk's rooms page",
                         code="already_paired", params={"box": box_id, "name": name})


@dataclasses.dataclass
class Station:
    box_id: str
    name: str
    password: str


class Roles:
    """The role file; thread-safe; every change written durably before it is used."""

    def __init__(self, folder: Path, clock=time.monotonic) -> None:
        self.folder = Path(folder)
        self.path = self.folder / "rooms.json"
        self.clock = clock
        self._lock = threading.Lock()
        self.data = {"role": "standalone", "box_id": "", "name": "", "app_password": "", "stations": {},
                     "hub": {}}
        if self.path.exists():
            try:
                self.data.update(json.loads(self.path.read_text()))
            except ValueError as error:
                raise RoleError(f"{self.path} is not JSON: {error}", code="roles_file",
                                params={"path": str(self.path)}) from None
        self._code: tuple[str, float] | None = None
        self._tries = 0

    @property
    def role(self) -> str:
        return self.data["role"]

    @property
    def box_id(self) -> str:
        return self.data["box_id"]

    @property
    def name(self) -> str:
        return self.data["name"] or self.data["box_id"]

    def stations(self) -> dict[str, Station]:
        """The paired rooms (a standby desk is not one: :meth:`standbys`)."""
        return {box: Station(box, info["name"], info["password"]) for box, info in self.data["stations"].items()
                if not info.get("standby")}

    def standbys(self) -> dict[str, dict]:
        """The paired standby desks: ``{box: {"name", "password", "address", "leaf_port"}}``."""
        return {box: dict(info) for box, info in self.data["stations"].items() if info.get("standby")}

    def take_over(self, stations: dict[str, dict]) -> None:
        """This standby becomes the desk: role ``hub`` with the stations the desk had (same names, same
        passwords, so their leaves connect here as they did there)."""
        with self._lock:
            self.data["role"] = "hub"
            self.data["stations"] = {protocol.check_box_id(box): {"name": str(info["name"])[:40],
                                                                  "password": str(info["password"])}
                                     for box, info in stations.items()}
            self.data["took_over"] = dict(self.data.get("hub") or {})
            self.data["hub"] = {}
            self._save()

    def _save(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as file:
            json.dump(self.data, file, ensure_ascii=False, indent=1)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.path)

    def set_role(self, role: str, name: str = "", box_id: str = "") -> None:
        """Become ``role``. A station must then pair (:meth:`paired`); a hub keeps its stations."""
        if role not in ROLES:
            raise RoleError(f"role {role!r}: standalone, hub or station", code="bad_role")
        with self._lock:
            self.data["role"] = role
            if name.strip():
                self.data["name"] = name.strip()[:40]
            if box_id:
                self.data["box_id"] = protocol.check_box_id(box_id)
            if not self.data["box_id"]:
                self.data["box_id"] = "box-" + secrets.token_hex(3)
            if not self.data["app_password"]:
                self.data["app_password"] = secrets.token_hex(16)
            self._save()

    def remember(self, key: str, value) -> None:
        with self._lock:
            self.data[key] = value
            self._save()

    # --- the hub side of pairing -------------------------------------------------------------------------------
    def new_code(self) -> str:
        """A fresh pairing code (the previous one is void), valid for :data:`PAIRING_CODE_TTL_S`."""
        code = f"{secrets.randbelow(10 ** PAIRING_CODE_DIGITS):0{PAIRING_CODE_DIGITS}d}"
        with self._lock:
            self._code = (code, self.clock() + PAIRING_CODE_TTL_S)
            self._tries = 0
        return code

    def current_code(self) -> tuple[str, float] | None:
        with self._lock:
            if self._code and self._code[1] > self.clock():
                return self._code[0], self._code[1] - self.clock()
        return None

    def pair(self, code: str, box_id: str, name: str, standby: dict | None = None) -> Station:
        """A box that gives the current code gets its own user and password; the code is then used up (one code,
        one box). A box id already paired is refused (box ids are public, on ``/lobby.json``): only a station the
        director re-paired on the desk (:meth:`repair`) takes its new credential, and its name, with a code.

        Raises :class:`PairingError` (wrong or stale code; ten wrong tries void it) or :class:`AlreadyPairedError`.
        """
        import hmac

        protocol.check_box_id(box_id)
        with self._lock:
            if self.data["role"] != "hub":
                raise PairingError("this box is not a hub", code="not_hub")
            current = self._code if self._code and self._code[1] > self.clock() else None
            if current is None or not hmac.compare_digest(str(code).strip().encode(), current[0].encode()):
                self._wrong_try()
                raise PairingError("wrong or stale pairing code", code="bad_code")
            stations = self.data["stations"]
            if box_id in stations and not stations[box_id].get("repairing"):
                self._wrong_try()  # counted like a wrong code: ids are public, so a guess at one costs a try
                raise AlreadyPairedError(box_id, stations[box_id]["name"])
            if box_id in stations:
                stations[box_id] = {"name": name.strip()[:40] or box_id, "password": stations[box_id]["password"]}
            else:
                stations[box_id] = {"name": name.strip()[:40] or box_id, "password": secrets.token_hex(16)}
            if standby is not None:  # a standby desk: where its leaf port will listen once it is the desk
                stations[box_id].update(standby=True, address=str(standby["address"]),
                                        leaf_port=int(standby["leaf_port"]))
            self._code = None  # used up: the next box needs the next code
            self._save()
            info = stations[box_id]
        return Station(box_id, info["name"], info["password"])

    def _wrong_try(self) -> None:
        self._tries += 1
        if self._tries >= PAIRING_TRIES:
            self._code = None

    def repair(self, box_id: str) -> None:
        """The director re-pairs a station on the desk: its credential is rotated now (the old password no longer
        connects once the server has the new configuration) and its id may pair once more, with a code.

        Raises :class:`PairingError` for a box that is not paired here."""
        with self._lock:
            station = self.data["stations"].get(box_id)
            if station is None:
                raise PairingError(f"box {box_id!r} is not paired with this desk", code="not_paired",
                                   params={"box": box_id})
            station["password"] = secrets.token_hex(16)
            station["repairing"] = True
            self._save()

    def is_repairing(self, box_id: str) -> bool:
        return bool(self.data["stations"].get(box_id, {}).get("repairing"))

    def forget(self, box_id: str) -> None:
        with self._lock:
            self.data["stations"].pop(box_id, None)
            self._save()

    # --- the station side ----------------------------------------------------------------------------------------
    def paired(self, leaf_url: str, user: str, password: str, hub_web: str) -> None:
        with self._lock:
            self.data["hub"] = {"leaf_url": leaf_url, "user": user, "password": password, "web": hub_web}
            self._save()

    @property
    def hub(self) -> dict:
        return self.data["hub"]
