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

from appliance.service.rooms import wire
from appliance.service.rooms.ledger import Ledger

log = logging.getLogger(__name__)

ONLINE_S = 4.0          # a station whose last heartbeat is older than this is shown offline
CONFIRM_EVERY_S = 0.5   # confirmations written to a station's bucket at most this often
# A station online whose stream is this long ahead of the hub, with nothing arriving: its source is added again.
# Bench (six stations at ten times the press rate, one run in five): DESK's source of a live station now and then
# stops inside nats-server (a source-consumer retry, whose backoff after a failed re-create is 10 s); with 5 s
# here the slowest 1% waited 4.95 s on average, all of it between the station's stream and DESK. Normal flow
# is under 150 ms at p99, so 2 s of silence while the station says it holds more is a stall, not a busy link.
STALL_S = 2.0
RESOURCE_EVERY_S = 15.0  # at most this often per station


def _stages(header: str) -> tuple[int, int] | None:
    try:
        noted, published = (int(part) for part in header.split())
        return noted, published
    except ValueError:
        return None


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
        self._assignments_due = asyncio.Event()
        self._subscribed: set[str] = set()
        self._confirm_due: set[str] = set()
        self._tasks: list = []
        self.nc = None
        self.ready = False
        self._closing = False
        self.out_of_order = 0
        self.resourced = 0   # sources added again when a station came back or its source stalled
        self.stalls: collections.deque = collections.deque(maxlen=100)  # DESK's view of each stalled source
        self._resourced_at: dict[str, float] = {}
        self._lagging_since: dict[str, tuple[float, int]] = {}
        self.desk_seq = 0    # the last DESK message read
        self.desk_last = 0   # DESK's last message when this hub started: below it, the desk is being rebuilt
        self.lags_ns: collections.deque = collections.deque(maxlen=100_000)
        self.stages_ns: collections.deque = collections.deque(maxlen=100_000)
        self._last_arrival: dict[tuple[str, str], int] = {}

    async def start(self) -> None:
        import nats

        self.nc = await nats.connect(self.client_url, user=self.user, password=self.password,
                                     max_reconnect_attempts=-1, reconnect_time_wait=0.5, name="svoyak-hub")
        self.js = self.nc.jetstream()
        await self.sync_stations()
        try:
            self.desk_last = (await self.js.stream_info(wire.DESK_STREAM)).state.last_seq
        except Exception as error:  # the desk shows no rebuild progress; nothing else depends on it
            log.debug("DESK info: %r", error)
        # Everything DESK holds, from its first message: the desk is rebuilt on every start.
        self.desk_sub = await self.js.subscribe(f"{wire.SUBJECT_ROOT}.box.>", stream=wire.DESK_STREAM,
                                                ordered_consumer=True, cb=self._on_event, idle_heartbeat=2.0)
        self.ready = True
        self._tasks = [asyncio.ensure_future(self._confirmer()), asyncio.ensure_future(self._assigner())]

    async def sync_stations(self) -> None:
        """DESK sources every paired station's stream through its domain; each station has its KV bucket."""
        from nats.js.api import ExternalStream, KeyValueConfig, StorageType, StreamConfig, StreamSource

        boxes = sorted(self.stations())
        sources = [StreamSource(name=wire.box_stream(box),
                                external=ExternalStream(api=f"$JS.{wire.box_domain(box)}.API",
                                                        deliver=wire.source_deliver(box)))
                   for box in boxes]
        config = StreamConfig(name=wire.DESK_STREAM, storage=StorageType.FILE, sources=sources or None,
                              duplicate_window=wire.DUPLICATE_WINDOW_S)
        try:
            await self.js.stream_info(wire.DESK_STREAM)
            await self.js.update_stream(config)
        except Exception as error:  # nats.js.errors.NotFoundError: the first start
            log.debug("DESK: %r", error)
            await self.js.add_stream(config)
        for box in boxes:
            if box not in self._subscribed:
                # One subscription per station: the leaf forwards only subjects its user may publish, and a
                # wildcard over every box is wider than any station's permissions.
                await self.nc.subscribe(wire.desk_subject(box, "beat"), cb=self._on_beat)
                await self.nc.subscribe(wire.desk_subject(box, "claim"), cb=self._on_claim)
                self._subscribed.add(box)
            await self.js.create_key_value(KeyValueConfig(bucket=wire.room_bucket(box), history=1,
                                                          storage=StorageType.FILE, direct=True))
        self.publish_assignments()

    # --- events from the stations --------------------------------------------------------------------------------
    async def _on_event(self, message) -> None:
        arrived_ns = time.monotonic_ns()
        try:
            data = wire.decode_event(message.subject, message.data)
        except wire.MessageError as error:
            self.bad_messages += 1
            log.warning("DESK message dropped: %s", error)
            return
        source = (message.headers or {}).get("Nats-Stream-Source", "")
        if source and not source.startswith(wire.box_stream(data["box"]) + ":"):
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
        if applied:
            now_ns = time.monotonic_ns()
            stages = _stages((message.headers or {}).get(wire.STAGES_HEADER, ""))
            for seq, event in applied:
                # For the bench only (boxes on one machine share CLOCK_MONOTONIC); no result depends on it.
                if 0 < now_ns - event.at_ns < 60 * 10**9:
                    self.lags_ns.append(now_ns - event.at_ns)
                    if stages and seq == data["seq"]:
                        noted, published = stages
                        # event stamp -> the station's loop hears of it -> published -> at the hub -> applied
                        self.stages_ns.append((noted - event.at_ns if noted else -1,
                                               published - noted if noted else -1,
                                               arrived_ns - published, now_ns - arrived_ns))
            self._confirm_due.add(data["box"])
            state = replica.state
            if state is not None and state.is_over:
                await asyncio.get_running_loop().run_in_executor(
                    None, self._enter, data["box"], data["battle"], state)
            for listener in list(self.listeners):
                listener(data["box"], data["battle"], state)

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
            kv = await self.js.key_value(wire.room_bucket(box))
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
                    self._assignments[box] = value
                    await self._put(box, "assignments", value)

    def _assignments_now(self) -> dict[str, str]:
        return {box: json.dumps(self.results.assignments_for(box), ensure_ascii=False, sort_keys=True)
                for box in self.stations()}

    # --- requests from the stations ------------------------------------------------------------------------------
    def _box_of(self, subject: str) -> str:
        return subject.split(".")[2]

    async def _on_beat(self, message) -> None:
        box = self._box_of(message.subject)
        try:
            data = wire.decode(message.data, "beat")
        except wire.MessageError:
            self.bad_messages += 1
            return
        now = time.monotonic()
        with self.lock:
            beat = self.beats.get(box)
            if beat is None or now - beat["last_s"] > ONLINE_S:
                beat = self.beats[box] = {"since_s": now}
            beat.update(last_s=now, battle=str(data.get("battle") or ""), name=str(data.get("name") or box))
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
        """A station's source stalled (after its link came back): source its stream again now. The server would
        retry by itself, but only after its own wait (about 30 s, nats-server issue 6454); a source added again
        resumes after the last message DESK holds from it (anything repeated is dropped by the ledger)."""
        try:
            info = await self.js.stream_info(wire.DESK_STREAM)
            for source in info.sources or []:
                if source.name == wire.box_stream(box):  # what the server knew of the stalled source
                    self.stalls.append({"box": box, "lag": source.lag, "active_ns": source.active,
                                        "error": str(source.error or "")})
            config = info.config
            everyone = list(config.sources or [])
            others = [source for source in everyone if source.name != wire.box_stream(box)]
            if len(others) == len(everyone):
                return
            config.sources = others or None
            await self.js.update_stream(config)
            config.sources = everyone
            await self.js.update_stream(config)
            self.resourced += 1
        except Exception as error:  # the server's own retry still comes
            log.warning("re-sourcing %s: %r", box, error)

    async def _on_claim(self, message) -> None:
        box = self._box_of(message.subject)
        try:
            data = wire.decode(message.data, "claim")
            answer = await asyncio.get_running_loop().run_in_executor(
                None, self.results.claim, box, str(data["tournament"]), str(data["battle"]))
        except (wire.MessageError, KeyError) as error:
            answer = {"ok": False, "error": str(error)}
        await message.respond(wire.encode("claimed", **answer))
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
                    "out_of_order": self.out_of_order, "resourced": self.resourced, "bad_messages": self.bad_messages,
                    "stalls": list(self.stalls),
                    "battles": {f"{box}/{battle}": r.seq for (box, battle), r in self.ledger.replicas.items()}}

    async def close(self) -> None:
        self._closing = True
        for task in self._tasks:
            task.cancel()
        desk_sub = getattr(self, "desk_sub", None)
        if desk_sub is not None:
            try:
                await desk_sub.unsubscribe()  # also ends nats-py's heartbeat and flow-control tasks of the consumer
            except Exception as error:  # a connection already gone: nothing to end
                log.debug("DESK unsubscribe: %r", error)
        if self.nc is not None:
            try:
                await self.nc.drain()
            except Exception:
                pass
