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

from appliance.service.rooms import natsconf, protocol
from appliance.service.rooms.protocol import (ClaimRefusedError, NotAssignedError, PackageNotArrivedError,
                                              PairingError, RoomsError, SlotTakenError)
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
        self.standby = None   # standby.StandbyLink on a standby desk
        self.shipper = None   # standby.DeskShipper on a hub
        self.results = None
        self.error = ""
        self._lock = threading.RLock()
        self._listening_battles = False
        self._listening_desk = False
        self._own_played = None    # (the hub's packages, their own battles) while "played" counts every room
        self._own_packages = None  # (the station's own packages,) while its battles read the carried ones too

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
                elif self.role == "standby" and self.roles.hub:
                    self._start_standby()
            except (RoomsError, OSError, TimeoutError) as error:
                self.error = str(error)
                log.error("rooms: %s", error)

    def stop(self) -> None:
        with self._lock:
            for link in (self.shipper, self.hub, self.station, self.standby):
                if link is not None and self.loop is not None:
                    try:
                        self.loop.call(link.close, timeout_s=5)
                    except Exception as error:  # a stuck connection must not keep the role from changing
                        log.warning("rooms: closing the link: %r", error)
            self.hub = self.station = self.standby = self.shipper = None
            if self.loop is not None:
                self.loop.close()
                self.loop = None
            if self.server is not None:
                self.server.stop()
                self.server = None
            if self._own_played is not None:
                self._own_played[0].battles = self._own_played[1]
                self._own_played = None
            if self._own_packages is not None:
                self.session.adapter.packages = self._own_packages[0]
                self._own_packages = None

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
            app_password=self.roles.data["app_password"], ports_dir=str(self.folder / "nats"),
            standbys={box: info["password"] for box, info in self.roles.standbys().items()})

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
        self._carry_packages(self.hub)
        self.loop.call(self.hub.start, timeout_s=20)
        self._start_shipper()
        if not self._listening_desk:
            self.desk().add_listener(self._on_desk_change)
            self._listening_desk = True
        self.hub.publish_assignments()

    def _start_shipper(self) -> None:
        """What only the desk holds goes into DESKLOG for a standby desk to mirror (:mod:`.standby`)."""
        from appliance.service.rooms.standby import DeskShipper

        def stations() -> dict:
            return {box: {"name": s.name, "password": s.password} for box, s in self.roles.stations().items()}

        def standbys() -> list[str]:
            return [f"{info['address']}:{info['leaf_port']}" for info in self.roles.standbys().values()]

        self.shipper = DeskShipper(self.hub, Path(self.desk().store.path), Path(self.settings.data_dir) / "packages",
                                   stations, standbys)
        self.loop.call(self.shipper.start, timeout_s=20)

    def _start_standby(self) -> None:
        from appliance.service.rooms.loop import Loop
        from appliance.service.rooms.standby import StandbyLink

        hub = self.roles.hub
        self.server = self._server()
        self.server.write(natsconf.station_config(
            self.roles.box_id, str(self.folder / "nats" / "jetstream"), self.settings.rooms_client_port,
            hub["leaf_url"], hub["user"], hub["password"], ports_dir=str(self.folder / "nats")))
        self.server.start()
        self.loop = Loop()
        self.standby = StandbyLink(self.loop, self.server.client_url())
        self.loop.call(self.standby.start, timeout_s=20)

    def standby_status(self) -> dict | None:
        """The standby's mirrors: ``{"DESK_STANDBY": {"messages", "lag", "active_ns"}, "DESKLOG_STANDBY": ...}``."""
        standby = self.standby
        if standby is None or self.loop is None:
            return None
        try:
            return self.loop.call(standby.status, timeout_s=5)
        except Exception as error:  # the page shows the mirror as unknown; nothing else depends on it
            log.debug("standby status: %r", error)
            return None

    def take_over(self) -> dict:
        """The director's one tap on the standby: its mirror of the desk becomes this box's desk, and the box
        the hub (domain ``hub``, the same stations on its leaf port). Returns what was copied.

        Raises :class:`~.standby.TakeOverError` on a box that is not a running standby, or whose mirror holds
        nothing of the desk yet (nothing is changed then). A copy the desk refuses (a tournament that does not
        replay) raises its error and the box stays the standby, its mirrors kept; what was put in already is
        skipped by the next tap (tournaments, streams and packages the box holds are left as they are)."""
        from appliance.service.rooms.standby import TakeOverError, apply_copy, drop_mirrors

        with self._lock:
            if self.role != "standby" or self.standby is None:
                raise TakeOverError("this box is not a running standby desk")
            copy = self.loop.call(self.standby.read_copy, timeout_s=300)
            if copy["stations"] is None:
                raise TakeOverError("the standby's mirror holds nothing of the desk yet")
            self.stop()
            try:
                counts = apply_copy(copy, self.desk(), self.desk().store, Path(self.settings.data_dir) / "packages")
            except BaseException:
                self.start()  # still the standby, its mirrors as they were
                raise
            self.roles.take_over(copy["stations"])
            self.start()
            if self.hub is not None:  # the mirrors would now mirror this box's own DESK: the copy is in the store
                self.loop.call(lambda: drop_mirrors(self.hub.js), timeout_s=20)
            log.warning("rooms: this box is the desk now (%s)", counts)
            return counts

    def _carry_packages(self, hub) -> None:
        """The desk's packages travel with its assignments (:mod:`.carried`); "played" counts every room."""
        from appliance.service.rooms.carried import DeskCarrier, PlayedEverywhere, SparesBook

        packages = getattr(self.session.adapter, "packages", None)
        if packages is None:
            return
        spares = SparesBook(self.desk().store)
        if self._own_played is None:
            self._own_played = (packages, packages.battles)

        def replicas():
            with hub.lock:
                return list(hub.ledger.replicas.values())

        packages.battles = PlayedEverywhere(self._own_played[1], replicas, spares)
        hub.carrier = DeskCarrier(self.desk, packages, spares, self.settings.rooms_spare_themes)

    def _start_station(self) -> None:
        from appliance.service.rooms.loop import Loop
        from appliance.service.rooms.station import StationLink

        hub = self.roles.hub
        self.server = self._server()
        self.server.write(natsconf.station_config(
            self.roles.box_id, str(self.folder / "nats" / "jetstream"), self.settings.rooms_client_port,
            hub["leaf_url"], hub["user"], hub["password"], ports_dir=str(self.folder / "nats"),
            standby=tuple(hub.get("standby", ()))))
        self.server.start()
        self.loop = Loop()
        self.station = StationLink(self.loop, self.roles.box_id, self.roles.name, self.server.client_url(),
                                   self.session.battles, self.folder, current_battle=lambda: self.session.battle_id)
        from appliance.service.rooms.carried import CarriedStore, station_packages

        self.station.carried = CarriedStore(self.folder / "carried")
        self.station.on_desk = self._on_desk_info
        if self._own_packages is None:
            self._own_packages = (self.session.adapter.packages,)
        self.session.adapter.packages = station_packages(self._own_packages[0], self.station.carried,
                                                         self.session.battles)
        self.loop.call(self.station.start, timeout_s=20)
        if not self._listening_battles:
            self.session.battles.add_listener(self._on_battle_event)
            self._listening_battles = True
        # Events appended before the listener: the publisher compares with the store anyway.
        for row in self.session.battles.list():
            self.station.on_battle_event(row["battle_id"], None, _Seq(row["seq"]))

    def _on_desk_info(self, info: dict) -> None:
        """The desk's ``desk`` key named a standby desk this station does not know: its leaf learns it (its
        nats-server is restarted with the new URLs, in a thread of its own: the rooms loop is the one being
        replaced). Addresses are only ever added: the standby that took over names no standby of its own, and
        the leaf must keep the address it now reaches the desk at."""
        known = list(self.roles.hub.get("standby", ()))
        standby = sorted(set(known) | {str(address) for address in info.get("standby", ()) if isinstance(address, str)})
        if standby == sorted(known):
            return
        hub = {**self.roles.hub, "standby": standby}
        self.roles.remember("hub", hub)

        def restart() -> None:
            with self._lock:
                if self.role == "station":
                    self.stop()
                    self.start()

        threading.Thread(target=restart, name="svoyak-rooms-standby-urls", daemon=True).start()

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
    def pair_station(self, code: str, box_id: str, name: str, hub_host: str, standby: dict | None = None) -> dict:
        """The hub's side: a station that gives the code gets its user; the server reloads; DESK sources it.
        ``standby`` (``{"address", "leaf_port"}``): the box pairs as a standby desk (:mod:`.standby`)."""
        with self._lock:
            if self.role != "hub" or self.server is None:
                raise PairingError("this box is not a running hub", code="not_hub")
            station = self.roles.pair(code, box_id, name, standby=standby)
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
                raise PairingError("this box is not a running hub", code="not_hub")
            self.roles.repair(box_id)
            self.stop()
            self.start()

    def pair_with_hub(self, hub_web: str, code: str, name: str = "", standby: bool = False) -> None:
        """The station's side: ask the hub at ``hub_web`` (``host[:port]`` of its web pages) with its code.
        ``standby``: pair as the desk's standby (role ``standby``), not as a room."""
        hub_web = hub_web.strip().removeprefix("http://").rstrip("/")
        if not hub_web:
            raise PairingError("give the hub's address", code="no_hub_address")
        with self._lock:
            if self.role == "hub":  # a pairing link opened on the desk itself must not turn it into a room
                raise PairingError("this box is the desk (hub): change its role on the rooms page first",
                                  code="is_hub")
            role = "standby" if standby else "station"
            if not self.roles.box_id or self.role != role:
                self.roles.set_role(role, name)
            request_body = {"code": code.strip(), "box_id": self.roles.box_id, "name": name.strip() or self.roles.name}
            if standby:
                request_body["standby"] = {"leaf_port": self._leaf_port()}
            body = json.dumps(request_body).encode()
            request = urllib.request.Request(f"http://{hub_web}/rooms/pair", data=body, method="POST",
                                             headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=20) as response:
                    answer = json.loads(response.read())
            except urllib.error.HTTPError as error:
                try:
                    said = json.loads(error.read())
                except ValueError:
                    said = {}
                why = said.get("error", "") if isinstance(said, dict) else ""
                code = said.get("code", "") if isinstance(said, dict) else ""  # the hub's refusal, worded here
                params = said.get("params") if isinstance(said, dict) else None
                known = code in protocol.PAIRING_CODES and isinstance(params, dict)
                raise PairingError(f"the hub refused: {why or error.code}", code=code if known else "hub_refused",
                                   params={key: str(value)[:200] for key, value in params.items()} if known else {}
                                   ) from None
            except (urllib.error.URLError, OSError, ValueError) as error:
                raise PairingError(f"no hub at {hub_web}: {error}", code="no_hub_at",
                                   params={"address": hub_web}) from None
            self.stop()
            self.roles.paired(answer["leaf_url"], answer["user"], answer["password"], hub_web)
            self.start()

    # --- the station's assigned battles -------------------------------------------------------------------------------
    def assignments(self) -> list[dict]:
        """The desk's assignments to this station, each with ``carried``: its themes have arrived (or it plays
        none from a package)."""
        station = self.station
        if station is None:
            return []
        return [{**item, "carried": self._has_carried(item)} for item in station.assignments]

    def _has_carried(self, item: dict) -> bool:
        ref = item.get("package")
        carried = getattr(self.station, "carried", None)
        return not isinstance(ref, dict) or (carried is not None and carried.has(str(ref.get("key", ""))))

    def start_assigned(self, tournament_id: str, battle_id: str, command_id: str) -> str:
        """Claim the slot at the hub, then set the battle up on this box's session; return its battle id.

        Raises :class:`NotAssignedError` for a battle the desk did not give this box (checked first: nothing is
        claimed), :class:`SlotTakenError` naming the box that holds it, :class:`ClaimRefusedError` with the hub's
        reason (no such battle, a result already). With the hub out of reach, a slot the hub
        assigned to this very box (it is in the kept assignments) starts anyway: nobody else was given it.
        """
        station = self.station
        if station is None:
            raise RoleError("this box is not a paired station", code="not_station")
        chosen = next((a for a in station.assignments
                       if a["tournament"] == tournament_id and a["battle"] == battle_id), None)
        if chosen is None:  # checked before the claim: a refusal changes nothing at the desk either
            raise NotAssignedError(f"battle {battle_id} of {tournament_id} is not assigned to this box")
        if not self._has_carried(chosen):  # a battle set up without the themes the desk gave it would be wrong
            raise PackageNotArrivedError(f"battle {battle_id}: its themes have not arrived from the desk yet")
        answer = self.loop.call(lambda: station.claim(tournament_id, battle_id), timeout_s=10)
        if answer is not None and not answer.get("ok"):
            if answer.get("holder"):
                raise SlotTakenError(f"battle {battle_id}: held by {answer['holder']}", answer["holder"])
            why = str(answer.get("error") or "")
            if protocol.CLAIM_REASONS.get(why) == "not_assigned":  # the desk took it back since this box's copy
                raise NotAssignedError(f"battle {battle_id} of {tournament_id} is no longer assigned to this box")
            raise ClaimRefusedError(f"battle {battle_id}: the hub refused: {why}", protocol.CLAIM_REASONS.get(why, ""))
        args = {key: chosen[key] for key in ("profile", "players", "themes", "slot", "run", "runs", "cuts")}
        args["mode"] = "buttons"
        ref = chosen.get("package")
        if isinstance(ref, dict):  # read from the carried themes (carried.py): no file on this box
            args["package"] = {"id": ref["id"], "themes": list(ref["themes"]),
                               **({"spare": list(ref["spare"])} if ref.get("spare") else {})}
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

