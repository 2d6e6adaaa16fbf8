"""A station's link: every battle event into its own stream ``BOX_<id>``, assignments from the hub's KV.

The battle store stays the truth. The battle service's listener only hands ``(battle, seq)`` to the loop
(no wait on the press path); the publisher then publishes, in order, every event the stream lacks, reading the
store for any it has not seen (after a restart, or if a publish failed). At start it asks the local stream
(and, if reachable, the hub) how far each battle got and republishes from the lower mark: a resend inside the
duplicate window is dropped by the stream, an older one by the hub's ledger.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

from appliance.rules.battle import event_to_dict
from appliance.service.rooms import wire
from appliance.store import BATTLE

log = logging.getLogger(__name__)

BEAT_S = 1.0
ASSIGNMENT_POLL_S = 1.0
REQUEST_TIMEOUT_S = 2.0
MARKS_IN_BEAT = 4  # battles whose published seq a heartbeat carries (the newest)


class StationLink:
    def __init__(self, loop, box_id: str, name: str, client_url: str, battles, cache_dir: Path,
                 current_battle=lambda: None) -> None:
        self.loop = loop
        self.box_id = box_id
        self.name = name
        self.client_url = client_url
        self.battles = battles
        self.cache_path = Path(cache_dir) / "assignments.json"
        self.current_battle = current_battle
        self.published: dict[str, int] = {}
        self.wanted: dict[str, int] = {}
        self.assignments: list[dict] = self._load_cache()
        self.hub_seen_s: float | None = None  # this box's monotonic seconds of the last answer from the hub
        self.errors = 0
        self._kick: asyncio.Event | None = None
        self._noted_ns: dict[tuple[str, int], int] = {}  # when the loop heard of an event (bench stages only)
        self._tasks: list = []
        self.nc = None
        self.ready = False
        self._closing = False

    def _load_cache(self) -> list[dict]:
        try:
            return json.loads(self.cache_path.read_text())
        except (OSError, ValueError):
            return []

    # --- from the battle service (any thread) --------------------------------------------------------------------
    def on_battle_event(self, battle_id: str, event, state) -> None:
        """``Battles`` listener: note how far the battle is; the loop publishes. Never waits."""
        self.loop.loop.call_soon_threadsafe(self._note, battle_id, state.seq)

    def _note(self, battle_id: str, seq: int) -> None:
        if seq > self.wanted.get(battle_id, 0):
            self.wanted[battle_id] = seq
        if len(self._noted_ns) < 10_000:
            self._noted_ns[(battle_id, seq)] = time.monotonic_ns()
        if self._kick is not None:
            self._kick.set()

    # --- the loop ----------------------------------------------------------------------------------------------
    async def start(self) -> None:
        import nats

        self._kick = asyncio.Event()
        self.nc = await nats.connect(self.client_url, inbox_prefix=wire.inbox_prefix(self.box_id),
                                     max_reconnect_attempts=-1, reconnect_time_wait=0.5,
                                     error_cb=self._on_error, name=f"svoyak-station-{self.box_id}")
        self.js = self.nc.jetstream()
        self.hub_js = self.nc.jetstream(domain=wire.HUB_DOMAIN, timeout=REQUEST_TIMEOUT_S)
        from nats.js.api import StorageType, StreamConfig

        await self.js.add_stream(StreamConfig(
            name=wire.box_stream(self.box_id), subjects=[wire.box_subjects(self.box_id)],
            storage=StorageType.FILE, duplicate_window=wire.DUPLICATE_WINDOW_S))
        await self._resume_marks()
        self.ready = True
        self._tasks = [asyncio.ensure_future(self._publisher()), asyncio.ensure_future(self._beats()),
                       asyncio.ensure_future(self._assignment_poll())]

    async def _on_error(self, error) -> None:
        self.errors += 1
        log.debug("station nats: %s", error)

    async def _resume_marks(self) -> None:
        """Where each battle's publishing resumes: the lower of the local stream's and the hub's marks."""
        confirmed = await self._hub_confirmed()
        for row in self.battles.list():
            battle_id, seq = row["battle_id"], row["seq"]
            local = 0
            try:
                message = await self.js.get_last_msg(wire.box_stream(self.box_id),
                                                     wire.event_subject(self.box_id, battle_id))
                local = wire.decode_event(message.subject, message.data)["seq"]
            except Exception:  # nats.js.errors.NotFoundError: nothing of this battle in the stream yet
                local = 0
            mark = min(local, confirmed.get(battle_id, local)) if confirmed is not None else local
            self.published[battle_id] = mark
            self.wanted[battle_id] = max(seq, self.wanted.get(battle_id, 0))

    async def _kv(self):
        return await self.hub_js.key_value(wire.room_bucket(self.box_id))

    async def _hub_get(self, key: str):
        try:
            kv = await self._kv()
            entry = await kv.get(key)
            self.hub_seen_s = time.monotonic()
            return json.loads(entry.value)
        except Exception as error:  # no route to the hub, no bucket yet, timeout: the hub is away
            log.debug("hub KV %s: %r", key, error)
            return None

    async def _hub_confirmed(self) -> dict | None:
        data = await self._hub_get("confirmed")
        return data if isinstance(data, dict) else None

    async def _publisher(self) -> None:
        while not self._closing:
            await self._kick.wait()
            self._kick.clear()
            for battle_id in list(self.wanted):
                while self.published.get(battle_id, 0) < self.wanted[battle_id] and not self._closing:
                    if not await self._publish_from_store(battle_id):
                        await asyncio.sleep(0.2)  # the local server is restarting: try again
                        break
            if any(self.published.get(b, 0) < s for b, s in self.wanted.items()):
                self._kick.set()

    async def _publish_from_store(self, battle_id: str) -> bool:
        start = self.published.get(battle_id, 0)
        rows = await asyncio.get_running_loop().run_in_executor(None, self.battles.store.read, BATTLE, battle_id,
                                                                start)
        for row in rows:
            body = wire.encode_event(self.box_id, battle_id, row.seq, event_to_dict(row.event))
            noted = self._noted_ns.pop((battle_id, row.seq), 0)
            # Svoyak-Stages: this box's monotonic ns when the loop heard of the event and when it published it.
            # For the bench only (boxes on one machine share the clock); nothing reads it for a result.
            headers = {"Nats-Msg-Id": wire.message_id(battle_id, row.seq),
                       wire.STAGES_HEADER: f"{noted} {time.monotonic_ns()}"}
            try:
                await self.js.publish(wire.event_subject(self.box_id, battle_id), body, timeout=5,
                                      headers=headers)
            except Exception as error:  # timeout or a reconnect: the same message id makes the retry harmless
                log.debug("publish %s:%s: %r", battle_id, row.seq, error)
                return False
            self.published[battle_id] = row.seq
        return True

    async def _beats(self) -> None:
        while not self._closing:
            try:
                # How far the newest battles are in this box's stream: the hub re-sources a stream it lags behind.
                marks = dict(list(self.published.items())[-MARKS_IN_BEAT:])
                await self.nc.publish(wire.desk_subject(self.box_id, "beat"),
                                      wire.encode("beat", box=self.box_id, name=self.name,
                                                      battle=self.current_battle() or "", published=marks))
            except Exception as error:
                log.debug("beat: %r", error)
            await asyncio.sleep(BEAT_S)

    async def _assignment_poll(self) -> None:
        while not self._closing:
            data = await self._hub_get("assignments")
            if isinstance(data, list) and data != self.assignments:
                self.assignments = data
                await asyncio.get_running_loop().run_in_executor(None, self._save_cache, data)
            await asyncio.sleep(ASSIGNMENT_POLL_S)

    def _save_cache(self, data) -> None:
        self.cache_path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.cache_path.with_suffix(".tmp")
        temporary.write_text(json.dumps(data, ensure_ascii=False))
        temporary.replace(self.cache_path)

    async def claim(self, tournament_id: str, battle_id: str) -> dict:
        """Ask the hub for the slot: ``{"ok": True}`` or ``{"ok": False, "holder": name}``; ``None`` if the
        hub cannot be reached."""
        try:
            reply = await self.nc.request(wire.desk_subject(self.box_id, "claim"),
                                          wire.encode("claim", box=self.box_id, tournament=tournament_id,
                                                          battle=battle_id), timeout=REQUEST_TIMEOUT_S)
            self.hub_seen_s = time.monotonic()
            return wire.decode(reply.data, "claimed")
        except wire.MessageError:
            raise
        except Exception as error:
            log.debug("claim: %r", error)
            return None

    def backlog(self) -> int:
        return sum(max(0, seq - self.published.get(b, 0)) for b, seq in self.wanted.items())

    async def close(self) -> None:
        self._closing = True
        for task in self._tasks:
            task.cancel()
        if self._kick is not None:
            self._kick.set()
        if self.nc is not None:
            try:
                await self.nc.drain()
            except Exception:
                pass
