"""The rooms service the web process starts: the role, its nats-server, its link, pairing, assigned battles.

Standalone (the default) starts nothing: no nats-server, no thread. A hub or a paired station starts its
nats-server (a child process, :mod:`.server`), the asyncio loop thread and its link. A role change stops what
runs and starts what the new role needs.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from appliance.service.rooms import natsconf, wire
from appliance.service.rooms.wire import (ClaimRefusedError, NotAssignedError, PairingError, RoomsError,
                                              SlotTakenError)
from appliance.service.rooms.roles import RoleError, Roles

log = logging.getLogger(__name__)


class Rooms:
    def __init__(self, settings, session, desk) -> None:
        """``session``: the box's live session (its ``battles`` are published on a station); ``desk()``: the
        box's tournament desk (the hub enters results there)."""
        self.settings = settings
        self.session = session
        self.desk = desk
        self.folder = Path(settings.data_dir) / "rooms"
        self.roles = Roles(self.folder)
        self.server = None
        self.loop = None
        self.hub = None
        self.station = None
        self.results = None
        self.error = ""
        self._lock = threading.RLock()
        self._listening_battles = False
        self._listening_desk = False

    @property
    def role(self) -> str:
        return self.roles.role

    # --- lifecycle -------------------------------------------------------------------------------------------------
    def start(self) -> None:
        with self._lock:
            self.error = ""
            try:
                if self.role == "hub":
                    self._start_hub()
                elif self.role == "station" and self.roles.hub:
                    self._start_station()
            except (RoomsError, OSError, TimeoutError) as error:
                self.error = str(error)
                log.error("rooms: %s", error)

    def stop(self) -> None:
        with self._lock:
            for link in (self.hub, self.station):
                if link is not None and self.loop is not None:
                    try:
                        self.loop.call(link.close, timeout_s=5)
                    except Exception as error:  # a stuck connection must not keep the role from changing
                        log.warning("rooms: closing the link: %r", error)
            self.hub = self.station = None
            if self.loop is not None:
                self.loop.close()
                self.loop = None
            if self.server is not None:
                self.server.stop()
                self.server = None

    def set_role(self, role: str, name: str = "") -> None:
        with self._lock:
            self.stop()
            self.roles.set_role(role, name)
            self.start()

    def _server(self):
        from appliance.service.rooms.server import NatsServer

        return NatsServer(self.folder / "nats", binary=self.settings.nats_server,
                          external=self.settings.rooms_nats_unit)

    def _hub_config(self) -> str:
        return natsconf.hub_config(
            str(self.folder / "nats" / "jetstream"), {s.box_id: s.password for s in self.roles.stations().values()},
            client_port=self.settings.rooms_client_port, leaf_port=self._leaf_port(),
            app_password=self.roles.data["app_password"], ports_dir=str(self.folder / "nats"))

    def _leaf_port(self) -> int:
        """The setting; 0 (laptops running several boxes): a free port picked once and kept in the role file."""
        if self.settings.rooms_leaf_port:
            return self.settings.rooms_leaf_port
        if not self.roles.data.get("leaf_port"):
            import socket

            with socket.socket() as probe:
                probe.bind(("0.0.0.0", 0))
                self.roles.remember("leaf_port", probe.getsockname()[1])
        return int(self.roles.data["leaf_port"])

    def _start_hub(self) -> None:
        from appliance.service.rooms.hub import HubLink
        from appliance.service.rooms.loop import Loop
        from appliance.service.rooms.results import ResultEntry

        self.server = self._server()
        self.server.write(self._hub_config())
        self.server.start()
        self.loop = Loop()
        self.results = ResultEntry(self.desk, self.station_names)
        self.hub = HubLink(self.loop, self.server.client_url(), natsconf.APP_USER, self.roles.data["app_password"],
                           self.station_names, self.results)
        self.loop.call(self.hub.start, timeout_s=20)
        if not self._listening_desk:
            self.desk().add_listener(self._on_desk_change)
            self._listening_desk = True
        self.hub.publish_assignments()

    def _start_station(self) -> None:
        from appliance.service.rooms.loop import Loop
        from appliance.service.rooms.station import StationLink

        hub = self.roles.hub
        self.server = self._server()
        self.server.write(natsconf.station_config(
            self.roles.box_id, str(self.folder / "nats" / "jetstream"), self.settings.rooms_client_port,
            hub["leaf_url"], hub["user"], hub["password"], ports_dir=str(self.folder / "nats")))
        self.server.start()
        self.loop = Loop()
        self.station = StationLink(self.loop, self.roles.box_id, self.roles.name, self.server.client_url(),
                                   self.session.battles, self.folder, current_battle=lambda: self.session.battle_id)
        self.loop.call(self.station.start, timeout_s=20)
        if not self._listening_battles:
            self.session.battles.add_listener(self._on_battle_event)
            self._listening_battles = True
        # Events appended before the listener: the publisher compares with the store anyway.
        for row in self.session.battles.list():
            self.station.on_battle_event(row["battle_id"], None, _Seq(row["seq"]))

    def _on_battle_event(self, battle_id, event, state) -> None:
        station = self.station
        if station is not None:
            station.on_battle_event(battle_id, event, state)

    def _on_desk_change(self, tournament_id, event, state) -> None:
        hub = self.hub
        if hub is not None:
            hub.publish_assignments()

    def station_names(self) -> dict[str, str]:
        return {box: station.name for box, station in self.roles.stations().items()}

    # --- pairing -----------------------------------------------------------------------------------------------------
    def pair_station(self, code: str, box_id: str, name: str, hub_host: str) -> dict:
        """The hub's side: a station that gives the code gets its user; the server reloads; DESK sources it."""
        with self._lock:
            if self.role != "hub" or self.server is None:
                raise PairingError("this box is not a running hub")
            station = self.roles.pair(code, box_id, name)
            if self.server.write(self._hub_config()):
                self.server.reload()
                time.sleep(0.3)  # the reload is asynchronous; the station's first connect may race it
            self.loop.call(self.hub.sync_stations, timeout_s=20)
            return {"leaf_url": f"nats-leaf://{hub_host}:{self._leaf_port()}", "user": station.box_id,
                    "password": station.password}

    def repair_station(self, box_id: str) -> None:
        """The director re-pairs a station: its password is rotated, and the hub's nats-server restarted with the
        new configuration, so the old password no longer connects; the station pairs again with the next code.

        A restart, not a reload: nats-server's reload (SIGHUP) checks new connections against the new users but
        keeps a leaf already connected with the old password (measured: changed, even removed, users stay
        connected). Every station's leaf reconnects within seconds; the JetStream store is kept."""
        with self._lock:
            if self.role != "hub" or self.server is None:
                raise PairingError("this box is not a running hub")
            self.roles.repair(box_id)
            self.stop()
            self.start()

    def pair_with_hub(self, hub_web: str, code: str, name: str = "") -> None:
        """The station's side: ask the hub at ``hub_web`` (``host[:port]`` of its web pages) with its code."""
        hub_web = hub_web.strip().removeprefix("http://").rstrip("/")
        if not hub_web:
            raise PairingError("give the hub's address")
        with self._lock:
            if self.role == "hub":  # a pairing link opened on the desk itself must not turn it into a room
                raise PairingError("this box is the desk (hub): change its role on the rooms page first")
            if not self.roles.box_id or self.role != "station":
                self.roles.set_role("station", name)
            body = json.dumps({"code": code.strip(), "box_id": self.roles.box_id,
                               "name": name.strip() or self.roles.name}).encode()
            request = urllib.request.Request(f"http://{hub_web}/rooms/pair", data=body, method="POST",
                                             headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=20) as response:
                    answer = json.loads(response.read())
            except urllib.error.HTTPError as error:
                try:
                    why = json.loads(error.read()).get("error", "")
                except ValueError:
                    why = ""
                raise PairingError(f"the hub refused: {why or error.code}") from None
            except (urllib.error.URLError, OSError, ValueError) as error:
                raise PairingError(f"no hub at {hub_web}: {error}") from None
            self.stop()
            self.roles.paired(answer["leaf_url"], answer["user"], answer["password"], hub_web)
            self.start()

    # --- the station's assigned battles -------------------------------------------------------------------------------
    def assignments(self) -> list[dict]:
        station = self.station
        return list(station.assignments) if station is not None else []

    def start_assigned(self, tournament_id: str, battle_id: str, command_id: str) -> str:
        """Claim the slot at the hub, then set the battle up on this box's session; return its battle id.

        Raises :class:`NotAssignedError` for a battle the desk did not give this box (checked first: nothing is
        claimed), :class:`SlotTakenError` naming the box that holds it, :class:`ClaimRefusedError` with the hub's
        reason (no such battle, a result already). With the hub out of reach, a slot the hub
        assigned to this very box (it is in the kept assignments) starts anyway: nobody else was given it.
        """
        station = self.station
        if station is None:
            raise RoleError("this box is not a paired station")
        chosen = next((a for a in station.assignments
                       if a["tournament"] == tournament_id and a["battle"] == battle_id), None)
        if chosen is None:  # checked before the claim: a refusal changes nothing at the desk either
            raise NotAssignedError(f"battle {battle_id} of {tournament_id} is not assigned to this box")
        answer = self.loop.call(lambda: station.claim(tournament_id, battle_id), timeout_s=10)
        if answer is not None and not answer.get("ok"):
            if answer.get("holder"):
                raise SlotTakenError(f"battle {battle_id}: held by {answer['holder']}", answer["holder"])
            why = str(answer.get("error") or "")
            if wire.CLAIM_REASONS.get(why) == "not_assigned":  # the desk took it back since this box's copy
                raise NotAssignedError(f"battle {battle_id} of {tournament_id} is no longer assigned to this box")
            raise ClaimRefusedError(f"battle {battle_id}: the hub refused: {why}", wire.CLAIM_REASONS.get(why, ""))
        args = {key: chosen[key] for key in ("profile", "players", "themes", "slot", "run", "runs", "cuts")}
        args["mode"] = "buttons"
        self.session.command("setup", args, command_id)
        return self.session.battle_id

    # --- the hub's pages ---------------------------------------------------------------------------------------------
    def rooms_view(self) -> list[dict]:
        """Every paired station: online or offline and since when, the battle it plays (live scores), last result."""
        hub = self.hub
        out = []
        if hub is None:
            return out
        with hub.lock:
            replicas = {box: list(hub.ledger.of_box(box)) for box in self.roles.stations()}
        for box, station in self.roles.stations().items():
            status = hub.status(box)
            playing, last = None, None
            for replica in replicas.get(box, []):
                if replica.state is None:
                    continue
                line = {"battle": replica.battle, "players": list(replica.state.players),
                        "scores": list(replica.state.scores), "over": replica.state.is_over,
                        "slot": replica.state.setup.slot, "events": replica.seq, "broken": replica.broken}
                if replica.state.is_over:
                    last = line
                else:
                    playing = line
            out.append({"box": box, "name": station.name, **status, "playing": playing, "last": last,
                        "repairing": self.roles.is_repairing(box)})
        return out

    def conflicts(self) -> list[dict]:
        """The open conflicts (kept in the store: shown again after a restart), each with ``names``: the
        players' names by id, as the desk knows them."""
        if self.results is None:
            return []
        out = []
        for conflict in self.results.conflicts.values():
            try:
                entrants = self.desk().state(conflict["tournament"]).entrants
                names = {player: entrant.name for player, entrant in entrants.items()}
            except LookupError:
                names = {}
            out.append({**conflict, "names": names})
        return out


class _Seq:
    def __init__(self, seq: int) -> None:
        self.seq = seq

