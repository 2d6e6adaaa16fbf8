"""The hub's link: the ``DESK`` stream sources every station's stream; the ledger applies what arrives; a
finished tournament battle enters the desk by itself; assignments and confirmations go out in each station's
KV bucket; claims and heartbeats are answered here.

A hub that restarts reads ``DESK`` from its first message again (the ledger drops nothing twice: results enter
the desk under a command id, ``rooms:<box>:<battle>``, that the tournament log remembers).
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import threading
import time

from appliance.service.rooms import protocol
from appliance.service.rooms.ledger import Ledger

log = logging.getLogger(__name__)

ONLINE_S = 4.0          # a station whose last heartbeat is older than this is shown offline
CONFIRM_EVERY_S = 0.5   # confirmations written to a station's bucket at most this often
# The net: a station online whose stream is this long ahead of the hub, with nothing arriving, gets its source
# added again. Its firings used to be the stalls of a source configured before its station could hear the request
# (see HubLink._source); sources are now added on the station's beat, and the bench counts firings (target: none).
# Normal flow is under 50 ms at p99, so 2 s of silence while the station says it holds more is a stall.
STALL_S = 2.0
RESOURCE_EVERY_S = 15.0  # at most this often per station
# A source whose consumer sent nothing, not even its idle heartbeat (every second, nats-server's sourceHealthHB),
# for this long is not flowing.
SILENT_S = 3.0
# Beats come every second: a longer gap (a link that hiccupped, a station restarted) has DESK's source checked.
RETURN_GAP_S = 2.5


def _stages(header: str) -> tuple[int, int, int] | None:
    """``Svoyak-Stages``: ``<committed> <noted> <published>`` (the station's monotonic ns; an older station sent
    the last two only)."""
    try:
        parts = [int(part) for part in header.split()]
    except ValueError:
        return None
    if len(parts) == 2:
        return 0, parts[0], parts[1]
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 else None


def _stored_wall_ns(reply: str) -> int:
    """When DESK stored a message (the server's wall clock, ns), from its delivery's ``$JS.ACK`` reply subject
    (nats-server's v1 and v2 forms); 0 if it is not one."""
    tokens = (reply or "").split(".")
    try:
        if len(tokens) == 9:
            return int(tokens[7])
        if len(tokens) >= 11:
            return int(tokens[9])
    except ValueError:
        pass
    return 0


class HubLink:
    def __init__(self, loop, client_url: str, user: str, password: str, stations, results) -> None:
        """``stations()``: ``{box_id: name}`` of the paired stations. ``results``: a :class:`ResultEntry`."""
        self.loop = loop
        self.client_url = client_url
        self.user, self.password = user, password
        self.stations = stations
        self.results = results
        self.ledger = Ledger()
        self.lock = threading.Lock()   # the ledger and status are read by the pages' threads
        self.beats: dict[str, dict] = {}      # box -> {"last_s", "since_s", "battle", "name"} (this box's clock)
        self.received = 0
        self.bad_messages = 0
        self.listeners: list = []
        self._assignments: dict[str, str] = {}   # box -> the value last written (touched on the loop only)
        self.carrier = None   # a carried.DeskCarrier: the themes an assignment plays travel with it (docs/rooms.md)
        self._entries: dict[str, dict] = {}      # box -> the carried KV entries each assignment needs now
        self._written: dict[str, set] = {}       # box -> carried keys written to its bucket (content-addressed)
        self._assignments_due = asyncio.Event()
        self._subscribed: set[str] = set()
        self._confirm_due: set[str] = set()
        self._tasks: list = []
        self.nc = None
        self.ready = False
        self._closing = False
        self.out_of_order = 0
        self.resourced = 0   # the stall detector's firings: a live station's source added again (target: never)
        self.sourced = 0     # sources added on a station's first beat
        self.revived = 0     # sources silent when their station was heard again, added again at once
        self._desk_lock = asyncio.Lock()  # DESK's configuration is read, changed and written by one at a time
        self._unsourced: set[str] = set()  # stations heard after a silence whose source is still to be checked
        self._sourcing: set[str] = set()
        self._restarted: set[str] = set()  # stations whose nats-server restarted: their source is added again
        self.stalls: collections.deque = collections.deque(maxlen=100)  # DESK's view of each stalled source
        self._resourced_at: dict[str, float] = {}
        self._lagging_since: dict[str, tuple[float, int]] = {}
        self.desk_seq = 0    # the last DESK message read
        self.desk_last = 0   # DESK's last message when this hub started: below it, the desk is being rebuilt
        # The bench's figures (``/director/rooms/lags.json``): kept only once the bench asked (``measuring``), so
        # a hub that is never measured holds none of them.
        self.measuring = False
        self.lags_ns: collections.deque = collections.deque(maxlen=100_000)
        self.stages_ns: collections.deque = collections.deque(maxlen=100_000)
        self._last_arrival: dict[tuple[str, str], int] = {}

    async def start(self) -> None:
        import nats

        self.nc = await nats.connect(self.client_url, user=self.user, password=self.password,
                                     max_reconnect_attempts=-1, reconnect_time_wait=0.5, name="svoyak-hub")
        self.js = self.nc.jetstream()
        await self._desk()
        await self.sync_stations()
        # Everything DESK holds, from its first message: the desk is rebuilt on every start. No filter subject:
        # DESK holds only what its sources bring, and nats-server 2.9 refuses a filter on a stream with no
        # subjects and no sources yet (a hub before its first station's beat).
        self.desk_sub = await self.js.subscribe("", stream=protocol.DESK_STREAM, ordered_consumer=True,
                                                cb=self._on_event, idle_heartbeat=2.0)
        self.ready = True
        self._tasks = [asyncio.ensure_future(self._confirmer()), asyncio.ensure_future(self._assigner())]

    async def _desk(self) -> None:
        """DESK exists; the sources it kept from before are left to each station's first beat (:meth:`_source`)."""
        from nats.js.api import StorageType, StreamConfig

        try:
            info = await self.js.stream_info(protocol.DESK_STREAM)
            self.desk_last = info.state.last_seq
        except Exception as error:  # nats.js.errors.NotFoundError: the first start
            log.debug("DESK: %r", error)
            await self.js.add_stream(StreamConfig(name=protocol.DESK_STREAM, storage=StorageType.FILE,
                                                  duplicate_window=protocol.DUPLICATE_WINDOW_S))

    async def sync_stations(self) -> None:
        """Each paired station has its subscriptions (beats, claims) and its KV bucket; DESK drops the source of
        a station no longer paired. A station's source is added when the station is first heard (its beat), not
        here: see :meth:`_source`."""
        from nats.js.api import KeyValueConfig, StorageType

        boxes = sorted(self.stations())
        for box in boxes:
            if box not in self._subscribed:
                # One subscription per station: the leaf forwards only subjects its user may publish, and a
                # wildcard over every box is wider than any station's permissions.
                await self.nc.subscribe(protocol.desk_subject(box, "beat"), cb=self._on_beat)
                await self.nc.subscribe(protocol.desk_subject(box, "claim"), cb=self._on_claim)
                self._subscribed.add(box)
            await self.js.create_key_value(KeyValueConfig(bucket=protocol.room_bucket(box), history=1,
                                                          storage=StorageType.FILE, direct=True))
        async with self._desk_lock:
            info = await self.js.stream_info(protocol.DESK_STREAM)
            kept = [s for s in info.config.sources or [] if s.name in {protocol.box_stream(b) for b in boxes}]
            if len(kept) != len(info.config.sources or []):
                info.config.sources = kept or None
                await self.js.update_stream(info.config)
        self.publish_assignments()

    # --- each station's source ---------------------------------------------------------------------------------
    def _source_config(self, box: str):
        from nats.js.api import ExternalStream, StreamSource

        return StreamSource(name=protocol.box_stream(box),
                            external=ExternalStream(api=f"$JS.{protocol.box_domain(box)}.API",
                                                    deliver=protocol.source_deliver(box)))

    async def _source(self, box: str, restarted: bool = False) -> bool:
        """The station was just heard after a silence (its first beat since this hub started, its return after
        an outage) or its nats-server restarted (``restarted``: a new ``server`` in its beat): DESK's source of its
        stream is made to flow now. True if it was left alone (it looked alive).

        Why here and not at pairing or at the hub's start: nats-server asks the station's JetStream for the source
        consumer the moment the source is configured (a stream update, or the stream's recovery when the server
        starts). A station whose leaf is not connected yet never hears that request, and the server then waits
        30 s for the answer (``srcConsumerWaitTime``; nats-server issue 6454) and more after (a 10 s backoff);
        the leaf connecting meanwhile does not cut the wait short, as the setup is "in progress" (nats-server
        PR 8111). Measured on loopback with the pinned 2.15.1: the first event of a station sourced at pairing
        reached DESK 35 s late, after a hub restart 37 s late; sourced on its first beat, 1-2 ms. A beat proves
        the leaf is up, the station's JetStream interest is already at the hub (it travels before the beat on the
        same connection) and its stream exists (the station makes it before it beats).

        A source DESK holds already is left alone while it is alive (its consumer's idle heartbeat comes every
        second; a late beat on a loaded machine must not restart a flowing source), else it is added again."""
        async with self._desk_lock:
            info = await self.js.stream_info(protocol.DESK_STREAM)
            name = protocol.box_stream(box)
            held = next((s for s in info.sources or [] if s.name == name), None)
            alive = held is not None and held.active is not None and 0 <= held.active < SILENT_S * 1e9
            if alive and not held.error and not restarted:
                return True  # flowing (or its consumer died less than SILENT_S ago: the caller looks again)
            config = info.config
            everyone = [s for s in config.sources or [] if s.name != name]
            if held is not None:  # silent: take it out first, so that nats-server forgets its pending request
                config.sources = everyone or None
                await self.js.update_stream(config)
                self.revived += 1
            else:
                self.sourced += 1
            config.sources = [*everyone, self._source_config(box)]
            await self.js.update_stream(config)
            return False

    async def _check_source(self, box: str) -> None:
        """:meth:`_source`, and once more after :data:`SILENT_S` if the source looked alive: a station that
        restarted within a second or two (its consumer gone with its server) still shows a recent heartbeat."""
        try:
            restarted = box in self._restarted
            self._restarted.discard(box)
            if await self._source(box, restarted):
                await asyncio.sleep(SILENT_S + 0.5)
                await self._source(box)
            self._unsourced.discard(box)
        except Exception as error:  # the next beat tries again
            log.warning("sourcing %s: %r", box, error)
        finally:
            self._sourcing.discard(box)

    # --- events from the stations --------------------------------------------------------------------------------
    async def _on_event(self, message) -> None:
        arrived_ns, arrived_wall_ns = time.monotonic_ns(), time.time_ns()
        try:
            data = protocol.decode_event(message.subject, message.data)
        except protocol.MessageError as error:
            self.bad_messages += 1
            log.warning("DESK message dropped: %s", error)
            return
        source = (message.headers or {}).get("Nats-Stream-Source", "")
        if source and not source.startswith(protocol.box_stream(data["box"]) + ":"):
            self.bad_messages += 1  # sourced from another box's stream: a station publishing as another
            return
        try:
            self.desk_seq = max(self.desk_seq, message.metadata.sequence.stream)
        except (AttributeError, ValueError):
            pass
        with self.lock:
            self.received += 1
            key = (data["box"], data["battle"])
            if data["seq"] > self._last_arrival.get(key, 0) + 1:
                self.out_of_order += 1  # ahead of a missing event: it waits in the ledger for the gap to fill
            self._last_arrival[key] = max(self._last_arrival.get(key, 0), data["seq"])
            applied = self.ledger.take(data["box"], data["battle"], data["seq"], data["event"])
            replica = self.ledger.replicas[(data["box"], data["battle"])]
        if applied and self.measuring:
            now_ns = time.monotonic_ns()
            stages = _stages((message.headers or {}).get(protocol.STAGES_HEADER, ""))
            stored_wall = _stored_wall_ns(message.reply)
            for seq, event in applied:
                # For the bench only (boxes on one machine share their clocks); no result depends on it.
                if 0 < now_ns - event.at_ns < 60 * 10**9:
                    self.lags_ns.append(now_ns - event.at_ns)
                    if stages and seq == data["seq"] and stages[1] and stored_wall:
                        self.stages_ns.append(self._split(event.at_ns, *stages, arrived_ns, arrived_wall_ns,
                                                          stored_wall, now_ns))
        if applied:
            self._confirm_due.add(data["box"])
            state = replica.state
            if state is not None and state.is_over:
                await asyncio.get_running_loop().run_in_executor(
                    None, self._enter, data["box"], data["battle"], state)
            for listener in list(self.listeners):
                listener(data["box"], data["battle"], state)

    @staticmethod
    def _split(stamp, committed, noted, published, arrived, arrived_wall, stored_wall, applied) -> tuple:
        """An event's time in stages (ns): stamp -> committed (the session and the SQLite commit) -> the loop
        heard of it (the publisher's wake-up) -> published -> stored in DESK (the station's stream, the source
        over the leaf, DESK's store) -> read by the hub (DESK's push) -> applied. DESK's store time is the
        server's wall clock: moved onto the monotonic one through the arrival, read on both."""
        stored = arrived - (arrived_wall - stored_wall)
        committed = committed or noted  # an older station: its commit and wake-up are one stage
        return (committed - stamp, noted - committed, published - noted, stored - published, arrived - stored,
                applied - arrived)

    def _enter(self, box: str, battle: str, state) -> None:
        try:
            self.results.enter(box, battle, state)
        except Exception:  # a process edge: the desk shows no result, the log says why; the link keeps serving
            log.exception("result of %s/%s not entered", box, battle)

    async def _confirmer(self) -> None:
        rounds = 0
        while not self._closing:
            await asyncio.sleep(CONFIRM_EVERY_S)
            rounds += 1
            if rounds % 10 == 0:
                self.publish_assignments()  # a put that failed is retried (the cache forgot it)
            for box in list(self._confirm_due):
                self._confirm_due.discard(box)
                with self.lock:
                    confirmed = self.ledger.confirmed(box)
                await self._put(box, "confirmed", json.dumps(confirmed))

    async def _put(self, box: str, key: str, value: str) -> None:
        try:
            kv = await self.js.key_value(protocol.room_bucket(box))
            await kv.put(key, value.encode())
        except Exception as error:
            log.warning("KV %s/%s: %r", box, key, error)
            if key == "assignments":
                self._assignments.pop(box, None)  # written again on the next round

    # --- assignments ---------------------------------------------------------------------------------------------
    def publish_assignments(self) -> None:
        """Ask for each station's assignments to be written to its bucket; returns at once (any thread).

        Never waits: the desk calls this from its listeners while it holds its own lock, and the loop reads the
        desk to compute the values (waiting here once deadlocked the desk against the loop: CI, a registration
        that never answered). The loop computes and writes them in order, so an older value never lands last.
        """
        if self.nc is None:
            return
        self.loop.loop.call_soon_threadsafe(self._assignments_due.set)

    async def _assigner(self) -> None:
        while not self._closing:
            await self._assignments_due.wait()
            self._assignments_due.clear()
            try:
                values = await asyncio.get_running_loop().run_in_executor(None, self._assignments_now)
            except Exception:  # a process edge: the desk could not be read; the next change or round retries
                log.exception("assignments not computed")
                continue
            for box, value in values.items():
                if self._assignments.get(box) != value:
                    # the themes first: a station that sees its assignment finds what it carries
                    if not await self._put_carried(box, self._entries.get(box, {})):
                        continue  # retried on the next round
                    self._assignments[box] = value
                    await self._put(box, "assignments", value)

    def _assignments_now(self) -> dict[str, str]:
        values = {}
        for box in self.stations():
            items = self.results.assignments_for(box)
            if self.carrier is not None:
                self._entries[box] = self.carrier.attach(items)
            values[box] = json.dumps(items, ensure_ascii=False, sort_keys=True)
        return values

    async def _put_carried(self, box: str, entries: dict) -> bool:
        """Write the carried entries the station's bucket lacks (each key names its content: written once)."""
        from appliance.service.rooms.carried import entry_bytes

        written = self._written.setdefault(box, set())
        if all(key in written for key in entries):
            return True
        try:
            kv = await self.js.key_value(protocol.room_bucket(box))
            for key, value in entries.items():
                if key not in written:
                    content = await asyncio.get_running_loop().run_in_executor(None, entry_bytes, value)
                    await kv.put(key, content)
                    written.add(key)
        except Exception as error:  # the bucket is away (a restarting server): the next round writes them
            log.warning("KV %s carried: %r", box, error)
            return False
        return True

    # --- requests from the stations ------------------------------------------------------------------------------
    def _box_of(self, subject: str) -> str:
        return subject.split(".")[2]

    async def _on_beat(self, message) -> None:
        box = self._box_of(message.subject)
        try:
            data = protocol.decode(message.data, "beat")
        except protocol.MessageError:
            self.bad_messages += 1
            return
        now = time.monotonic()
        with self.lock:
            beat = self.beats.get(box)
            server = str(data.get("server") or "")
            if beat is not None and server and beat.get("server") and server != beat["server"]:
                self._restarted.add(box)  # its nats-server restarted: DESK's source consumer died with it
            if beat is None or now - beat["last_s"] > RETURN_GAP_S or box in self._restarted:
                self._unsourced.add(box)  # first heard, back after a silence, or restarted: its source is checked
            if beat is None or now - beat["last_s"] > ONLINE_S:
                beat = self.beats[box] = {"since_s": now}
            beat.update(last_s=now, battle=str(data.get("battle") or ""), name=str(data.get("name") or box),
                        server=server)
        if box in self._unsourced and box not in self._sourcing and self.ready:
            self._sourcing.add(box)
            self.loop.submit(lambda: self._check_source(box))
        # Only a stalled source is sourced again: re-sourcing a flowing one delays what is in flight (bench: a
        # beat late on a loaded machine re-sourced live stations and cost seconds at p99).
        if self._behind(box, data.get("published"), now):
            last = self._resourced_at.get(box, -1e9)
            if now - last >= RESOURCE_EVERY_S:
                self._resourced_at[box] = now
                self.loop.submit(lambda: self._resource(box))

    def _behind(self, box: str, published, now: float) -> bool:
        """True when the station's stream has held events the hub lacks for :data:`STALL_S` (a stalled source)."""
        if not isinstance(published, dict):
            return False
        with self.lock:
            lagging = any(isinstance(seq, int) and self.ledger.replicas.get((box, str(battle))) is not None
                          and self.ledger.replicas[(box, str(battle))].seq < seq
                          or isinstance(seq, int) and seq > 0 and (box, str(battle)) not in self.ledger.replicas
                          for battle, seq in published.items())
            held = sum(replica.seq for replica in self.ledger.of_box(box))
        if not lagging:
            self._lagging_since.pop(box, None)
            return False
        since, held_then = self._lagging_since.get(box, (now, held))
        if held != held_then:
            since = now  # behind but moving: a busy station, not a stalled source
        self._lagging_since[box] = (since, held)
        return now - since >= STALL_S

    async def _resource(self, box: str) -> None:
        """The net under :meth:`_source`: a live station's stream is ahead of the hub and nothing arrives (the
        station says so in its beats, :data:`STALL_S`): its source is added again now. Each firing is counted
        (``resourced``, printed by the bench; target: never). A source added again resumes after the last
        message DESK holds from it (anything repeated is dropped by the ledger)."""
        try:
            async with self._desk_lock:
                info = await self.js.stream_info(protocol.DESK_STREAM)
                for source in info.sources or []:
                    if source.name == protocol.box_stream(box):  # what the server knew of the stalled source
                        self.stalls.append({"box": box, "lag": source.lag, "active_ns": source.active,
                                            "error": str(source.error or "")})
                config = info.config
                everyone = list(config.sources or [])
                others = [source for source in everyone if source.name != protocol.box_stream(box)]
                config.sources = others or None
                if len(others) != len(everyone):
                    await self.js.update_stream(config)
                config.sources = [*others, self._source_config(box)]
                await self.js.update_stream(config)
                self.resourced += 1
        except Exception as error:  # the next stall (or the station's next return) tries again
            log.warning("re-sourcing %s: %r", box, error)

    async def _on_claim(self, message) -> None:
        box = self._box_of(message.subject)
        try:
            data = protocol.decode(message.data, "claim")
            answer = await asyncio.get_running_loop().run_in_executor(
                None, self.results.claim, box, str(data["tournament"]), str(data["battle"]))
        except (protocol.MessageError, KeyError) as error:
            answer = {"ok": False, "error": str(error)}
        await message.respond(protocol.encode("claimed", **answer))
        self.publish_assignments()

    # --- what the pages show ---------------------------------------------------------------------------------------
    def status(self, box: str) -> dict:
        """``{"online", "since_s"}``: online since, or offline since, in seconds ago (this box's clock)."""
        now = time.monotonic()
        with self.lock:
            beat = self.beats.get(box)
        if beat is None:
            return {"online": False, "ago_s": None}
        if now - beat["last_s"] <= ONLINE_S:
            return {"online": True, "ago_s": now - beat["since_s"], "battle": beat.get("battle", "")}
        return {"online": False, "ago_s": now - beat["last_s"], "battle": beat.get("battle", "")}

    def counts(self) -> dict:
        """What arrived: messages, duplicates dropped, arrivals ahead of a gap, and each battle's applied seq."""
        with self.lock:
            return {"rebuilding": self.desk_seq < self.desk_last, "desk_seq": self.desk_seq,
                    "desk_last": self.desk_last, "received": self.received, "duplicates": self.ledger.duplicates, "applied": self.ledger.applied,
                    "out_of_order": self.out_of_order, "resourced": self.resourced, "sourced": self.sourced,
                    "revived": self.revived, "bad_messages": self.bad_messages,
                    "stalls": list(self.stalls),
                    "battles": {f"{box}/{battle}": r.seq for (box, battle), r in self.ledger.replicas.items()}}

    async def close(self) -> None:
        self._closing = True
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)  # ended, not left pending in a closed loop
        desk_sub = getattr(self, "desk_sub", None)
        if desk_sub is not None:
            try:
                await desk_sub.unsubscribe()  # also ends nats-py's heartbeat and flow-control tasks of the consumer
            except Exception as error:  # a connection already gone: nothing to end
                log.debug("DESK unsubscribe: %r", error)
        if self.nc is not None:
            try:
                if self.nc.is_connected:
                    await self.nc.drain()
                else:  # the server is gone (a dead box): nothing to drain, and a drain would wait on the reconnect
                    await self.nc.close()
            except Exception:
                pass
