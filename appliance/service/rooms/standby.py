"""A standby desk: a second box keeps a JetStream mirror of the desk and becomes the desk with one tap
(docs/rooms.md "The standby desk").

The hub ships what only it holds into its stream ``DESKLOG`` (domain ``hub``; :class:`DeskShipper`):

- ``svoyak.desklog.row``: every row of its event store in the order stored (tournaments: registrations, draws,
  hand-typed results; the rooms' conflicts and spares; the battles it played itself), message id
  ``row:<kind>:<stream>:<seq>``, so a resend after a restart is dropped;
- ``svoyak.desklog.roles``: the paired stations, names and passwords, each time they change (the standby's
  leaf port takes the same stations with the same passwords);
- ``svoyak.desklog.package.<id>``: each question package of its library as a tar of its folder, in chunks.

The standby (role ``standby``, paired with a code like a station, with a user that may read the hub's streams)
keeps two mirrors in its own domain (:class:`StandbyLink`): ``DESK_STANDBY`` of ``DESK`` (every station event the
desk heard) and ``DESKLOG_STANDBY`` of ``DESKLOG``. Every station's leaf knows both boxes (``urls``: the hub, then
the standby; the hub writes the standby's address in each station's bucket, key ``desk``). When the director taps
«Стать столом» on the standby, :func:`read_copy` reads the mirror, :func:`apply_copy` puts it into the standby's
own store, packages folder and role file, and the box restarts its rooms as the hub: domain ``hub``, its leaf
port open to the same stations, ``DESK`` sourcing every station's stream from its first event. The stations'
leaves reconnect to it by themselves (the hub is down), and nothing a station recorded is lost: its own stream
holds every event, and its battles' results enter the new desk as they did the old one.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import shutil
import sqlite3
import tarfile
from pathlib import Path

from appliance.service.rooms import protocol
from appliance.store.eventlog import StreamKind

log = logging.getLogger(__name__)

DESKLOG_STREAM = "DESKLOG"
DESK_MIRROR = "DESK_STANDBY"
DESKLOG_MIRROR = "DESKLOG_STANDBY"
ROWS_SUBJECT = f"{protocol.SUBJECT_ROOT}.desklog.row"
ROLES_SUBJECT = f"{protocol.SUBJECT_ROOT}.desklog.roles"
PACKAGE_SUBJECT = f"{protocol.SUBJECT_ROOT}.desklog.package"
CHUNK_BYTES = 512 * 1024
SHIP_EVERY_S = 0.3
ROWS_AT_ONCE = 500


class TakeOverError(protocol.RoomsError, RuntimeError):
    """The standby cannot become the desk now (not a standby, or its mirror is empty)."""


# --- the hub: what only it holds, into DESKLOG -----------------------------------------------------------------
class DeskShipper:
    """Publishes the hub's store rows, its stations and its packages to ``DESKLOG``; tells each station where the
    standby desk is. Runs on the rooms loop; ``js``/``nc`` are the hub link's."""

    def __init__(self, hub, store_path: Path, packages_folder: Path, stations, standbys) -> None:
        """``stations()``: ``{box: {"name", "password"}}``; ``standbys()``: ``["host:port"]`` of the standby
        desks' leaf ports."""
        self.hub = hub
        self.store_path = Path(store_path)
        self.packages_folder = Path(packages_folder)
        self.stations = stations
        self.standbys = standbys
        self.rowid = 0
        self.shipped_rows = 0
        self._roles = ""
        self._packages: set[str] = set()
        self._desk_keys: dict[str, str] = {}
        self._connection: sqlite3.Connection | None = None
        self._task = None
        self._closing = False

    async def start(self) -> None:
        from nats.js.api import StorageType, StreamConfig

        js = self.hub.js
        config = StreamConfig(name=DESKLOG_STREAM, subjects=[f"{protocol.SUBJECT_ROOT}.desklog.>"],
                              storage=StorageType.FILE, duplicate_window=protocol.DUPLICATE_WINDOW_S)
        try:
            await js.add_stream(config)
        except Exception as error:  # nats.js.errors.BadRequestError: it exists (a restart)
            log.debug("DESKLOG: %r", error)
        try:
            last = await js.get_last_msg(DESKLOG_STREAM, ROWS_SUBJECT)
            self.rowid = int(protocol.decode(last.data, "row")["rowid"])
        except Exception as error:  # nothing shipped yet
            log.debug("DESKLOG last row: %r", error)
        try:
            info = await js.stream_info(DESKLOG_STREAM, subjects_filter=f"{PACKAGE_SUBJECT}.>")
            self._packages = {subject.split(".")[3] for subject in (info.state.subjects or {})}
        except Exception as error:
            log.debug("DESKLOG packages: %r", error)
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        rounds = 0
        while not self._closing:
            try:
                shipped = await self._ship_rows()
                if rounds % 10 == 0:
                    await self._ship_roles()
                    await self._ship_packages()
                    await self._tell_stations()
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the server is restarting: the next round ships from the same row
                log.warning("DESKLOG: %r", error)
                shipped = 0
            rounds += 1
            if not shipped:
                await asyncio.sleep(SHIP_EVERY_S)

    def _rows_after(self, rowid: int) -> list[tuple]:
        if self._connection is None:
            if not self.store_path.exists():
                return []
            self._connection = sqlite3.connect(f"file:{self.store_path}?mode=ro", uri=True, check_same_thread=False)
        return self._connection.execute(
            "SELECT rowid, kind, stream_id, seq, at_ns, type, body, command_id FROM stream_events WHERE rowid > ? "
            "ORDER BY rowid LIMIT ?", (rowid, ROWS_AT_ONCE)).fetchall()

    async def _ship_rows(self) -> int:
        rows = await asyncio.get_running_loop().run_in_executor(None, self._rows_after, self.rowid)
        for rowid, kind, stream_id, seq, at_ns, type_name, body, command_id in rows:
            await self.hub.js.publish(ROWS_SUBJECT, protocol.encode(
                "row", rowid=rowid, store_kind=kind, stream=stream_id, seq=seq, at_ns=at_ns, type=type_name, body=body,
                command=command_id), headers={"Nats-Msg-Id": f"row:{kind}:{stream_id}:{seq}"})
            self.rowid = rowid
            self.shipped_rows += 1
        return len(rows)

    async def _ship_roles(self) -> None:
        body = protocol.encode("roles", stations=self.stations())
        if body != self._roles:
            await self.hub.js.publish(ROLES_SUBJECT, body)
            self._roles = body

    async def _ship_packages(self) -> None:
        if not self.packages_folder.is_dir():
            return
        for folder in sorted(self.packages_folder.iterdir()):
            if folder.name.startswith(".") or folder.name in self._packages or not (folder / "package.json").exists():
                continue
            if not protocol.BATTLE_ID.match(folder.name):
                continue  # not a package id (a NATS token): never one of ours
            content = await asyncio.get_running_loop().run_in_executor(None, _tar, folder)
            chunks = [content[i:i + CHUNK_BYTES] for i in range(0, len(content), CHUNK_BYTES)] or [b""]
            for index, chunk in enumerate(chunks):
                await self.hub.js.publish(f"{PACKAGE_SUBJECT}.{folder.name}", chunk, headers={
                    "Nats-Msg-Id": f"package:{folder.name}:{index}", "Svoyak-Chunk": f"{index}/{len(chunks)}"})
            self._packages.add(folder.name)

    async def _tell_stations(self) -> None:
        value = json.dumps({"standby": sorted(self.standbys())})
        for box in self.stations():
            if self._desk_keys.get(box) != value:
                kv = await self.hub.js.key_value(protocol.room_bucket(box))
                await kv.put("desk", value.encode())
                self._desk_keys[box] = value

    async def close(self) -> None:
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _tar(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        archive.add(folder, arcname=folder.name)
    return buffer.getvalue()


# --- the standby: two mirrors --------------------------------------------------------------------------------------
class StandbyLink:
    """The standby's mirrors of ``DESK`` and ``DESKLOG`` in its own domain, and what they hold."""

    def __init__(self, loop, client_url: str) -> None:
        self.loop = loop
        self.client_url = client_url
        self.nc = None
        self.ready = False

    async def start(self) -> None:
        import nats
        from nats.js.api import ExternalStream, StorageType, StreamConfig, StreamSource

        self.nc = await nats.connect(self.client_url, max_reconnect_attempts=-1, reconnect_time_wait=0.5,
                                     name="svoyak-standby")
        self.js = self.nc.jetstream()
        for name, source in ((DESK_MIRROR, protocol.DESK_STREAM), (DESKLOG_MIRROR, DESKLOG_STREAM)):
            config = StreamConfig(name=name, storage=StorageType.FILE, mirror=StreamSource(
                name=source, external=ExternalStream(api=f"$JS.{protocol.HUB_DOMAIN}.API")))
            try:
                await self.js.add_stream(config)
            except Exception as error:  # it exists (a restart): the mirror goes on from where it was
                log.debug("%s: %r", name, error)
        self.ready = True

    async def status(self) -> dict:
        """``{name: {"messages", "lag", "active_ns"}}`` of both mirrors (``None`` for one not readable now)."""
        out = {}
        for name in (DESK_MIRROR, DESKLOG_MIRROR):
            try:
                info = await self.js.stream_info(name)
                mirror = info.mirror
                out[name] = {"messages": info.state.messages, "lag": getattr(mirror, "lag", None),
                             "active_ns": getattr(mirror, "active", None)}
            except Exception as error:
                log.debug("%s info: %r", name, error)
                out[name] = None
        return out

    async def read_copy(self) -> dict:
        """Everything ``DESKLOG_STANDBY`` holds: ``{"rows": [...], "stations": {...}, "packages": {id: bytes}}``."""
        info = await self.js.stream_info(DESKLOG_MIRROR)
        rows, stations, chunks = [], None, {}
        for seq in range(info.state.first_seq, info.state.last_seq + 1) if info.state.messages else ():
            try:
                message = await self.js.get_msg(DESKLOG_MIRROR, seq)
            except Exception as error:  # a gap (nothing is deleted from it; a purge by hand): skipped
                log.debug("DESKLOG_STANDBY %d: %r", seq, error)
                continue
            if message.subject == ROWS_SUBJECT:
                rows.append(protocol.decode(message.data, "row"))
            elif message.subject == ROLES_SUBJECT:
                stations = protocol.decode(message.data, "roles")["stations"]
            elif message.subject.startswith(PACKAGE_SUBJECT + "."):
                index, _, count = (message.headers or {}).get("Svoyak-Chunk", "0/1").partition("/")
                parts = chunks.setdefault(message.subject.split(".")[3], {})
                parts[int(index)] = message.data
                parts["count"] = int(count)
        packages = {}
        for package_id, parts in chunks.items():
            count = parts.pop("count")
            if set(parts) == set(range(count)):
                packages[package_id] = b"".join(parts[i] for i in range(count))
        return {"rows": rows, "stations": stations, "packages": packages}

    async def close(self) -> None:
        if self.nc is not None:
            try:
                await self.nc.drain()
            except Exception:
                pass


async def drop_mirrors(js) -> None:
    """Delete both mirrors (after the take-over: their copy is in the store, and ``DESK_STANDBY`` would now mirror
    this box's own ``DESK``)."""
    for name in (DESK_MIRROR, DESKLOG_MIRROR):
        try:
            await js.delete_stream(name)
        except Exception as error:  # gone already
            log.debug("deleting %s: %r", name, error)


# --- the tap: the copy becomes this box's desk ---------------------------------------------------------------------
class _Raw:
    """A stored row as it was (its stamp and body), appended again unchanged; its class bears the row's type
    name, which the store records (:func:`_raw`)."""

    def __init__(self, at_ns: int, body: dict) -> None:
        self.at_ns, self.body = at_ns, body


_RAW_TYPES: dict[str, type] = {}


def _raw(type_name: str, at_ns: int, body: dict) -> _Raw:
    if type_name not in _RAW_TYPES:
        _RAW_TYPES[type_name] = type(str(type_name), (_Raw,), {})
    return _RAW_TYPES[type_name](at_ns, body)


def _raw_kind(name: str) -> StreamKind:
    return StreamKind(name, lambda event: event.body, lambda data: data)


def apply_copy(copy: dict, desk, store, packages_folder: Path) -> dict:
    """Put the mirrored desk into this box: tournaments through the desk's import (checked and replayed whole),
    every other stream (the rooms' conflicts and spares, the hub's own battles) appended as stored, packages
    unpacked into the library folder. Streams this box holds already are left as they are. Returns counts."""
    from appliance.store import DuplicateCommandError

    streams: dict[tuple[str, str], list[dict]] = {}
    seen = set()
    for row in sorted(copy["rows"], key=lambda row: row["rowid"]):
        key = (row["store_kind"], row["stream"], row["seq"])
        if key not in seen:
            seen.add(key)
            streams.setdefault((row["store_kind"], row["stream"]), []).append(row)
    counts = {"tournaments": 0, "streams": 0, "rows": 0, "packages": 0}
    known_tournaments = {item["id"] for item in desk.list()}
    for (kind, stream_id), rows in streams.items():
        rows.sort(key=lambda row: row["seq"])
        if kind == "tournament":
            if stream_id in known_tournaments:
                continue
            desk.import_events([json.loads(row["body"]) for row in rows])
            counts["tournaments"] += 1
            counts["rows"] += len(rows)
            continue
        raw = _raw_kind(kind)
        have = store.last_seq(raw, stream_id)
        batch: list = []
        command = None
        for row in [row for row in rows if row["seq"] > have] + [None]:
            if batch and (row is None or row["command"] is None or row["command"] != command):
                try:
                    store.append(raw, stream_id, [_raw(r["type"], r["at_ns"], json.loads(r["body"])) for r in batch],
                                 command_id=command)
                    counts["rows"] += len(batch)
                except DuplicateCommandError:
                    pass
                batch = []
            if row is not None:
                batch.append(row)
                command = row["command"]
        counts["streams"] += 1
    for package_id, content in copy["packages"].items():
        target = Path(packages_folder) / package_id
        if target.exists() or not protocol.BATTLE_ID.match(package_id):
            continue
        staging = Path(packages_folder) / f".standby-{package_id}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        with tarfile.open(fileobj=io.BytesIO(content), mode="r") as archive:
            members = archive.getmembers()
            for member in members:  # the desk's own folder: plain files and folders under the package's id only
                parts = Path(member.name).parts
                if not (member.isfile() or member.isdir()) or Path(member.name).is_absolute() or ".." in parts \
                        or not parts or parts[0] != package_id:
                    raise TakeOverError(f"package {package_id}: {member.name!r} is not a package's file")
            archive.extractall(staging, members=members)
        (staging / package_id).replace(target)
        shutil.rmtree(staging, ignore_errors=True)
        counts["packages"] += 1
    return counts
