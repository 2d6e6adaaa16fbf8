"""A station's link: every battle event into its own stream ``BOX_<id>``, assignments from the hub's KV.

The battle store stays the truth. The battle service's listener hands the committed event itself to the loop
(no wait on the press path); the publisher then publishes, in order, every event the stream lacks: the events it
was handed as they come, without a store read or a round trip each (their acknowledgements are awaited together),
and from the store any it was not handed (after a restart, or when a publish failed). At start it asks the local
stream (and, if reachable, the hub) how far each battle got and republishes from the lower mark: a resend inside
the duplicate window is dropped by the stream, an older one by the hub's ledger.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import time
from pathlib import Path

from appliance.rules.battle import event_to_dict
from appliance.service.rooms import protocol
from appliance.store import BATTLE

log = logging.getLogger(__name__)

BEAT_S = 1.0
ASSIGNMENT_POLL_S = 1.0
REQUEST_TIMEOUT_S = 2.0
MARKS_IN_BEAT = 4  # battles whose published seq a heartbeat carries (the newest)
FRESH_MAX = 10_000  # events handed over and not yet published, kept in memory (beyond: read from the store)
PUBLISH_TIMEOUT_S = 5.0
DESK_POLL_ROUNDS = 5  # the desk's ``desk`` key (the standby desks' addresses) is read every 5th poll


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
        self.carried = None  # a carried.CarriedStore: the themes the desk's assignments carry arrive there
        self.on_desk = None  # called with the desk's ``desk`` key when it changes (where the standby desks are)
        self._desk_info = None
        self.hub_seen_s: float | None = None  # this box's monotonic seconds of the last answer from the hub
        self.errors = 0
        self._kick: asyncio.Event | None = None
        # (battle, seq) -> (event, committed_ns, noted_ns): handed over by the listener, not yet published. The
        # two times (this box's monotonic clock, when the store had committed it and when the loop heard of it)
        # ride in the Svoyak-Stages header for the bench; no result depends on them.
        self._fresh: dict[tuple[str, int], tuple] = {}
        self.measuring = False  # the bench asked for figures (lags.json): only then are acknowledgements timed
        self.acks_ns: collections.deque = collections.deque(maxlen=100_000)  # publish -> stored here (bench)
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
        """``Battles`` listener (called once the store committed ``event``): hand it to the loop, which
        publishes it. Never waits. ``event`` None: only how far the battle is (read from the store)."""
        self.loop.loop.call_soon_threadsafe(self._note, battle_id, state.seq, event, time.monotonic_ns())

    def _note(self, battle_id: str, seq: int, event=None, committed_ns: int = 0) -> None:
        if seq > self.wanted.get(battle_id, 0):
            self.wanted[battle_id] = seq
        if event is not None and len(self._fresh) < FRESH_MAX and seq > self.published.get(battle_id, 0):
            self._fresh[(battle_id, seq)] = (event, committed_ns, time.monotonic_ns())
        if self._kick is not None:
            self._kick.set()

    # --- the loop ----------------------------------------------------------------------------------------------
    async def start(self) -> None:
        import nats

        self._kick = asyncio.Event()
        self.nc = await nats.connect(self.client_url, inbox_prefix=protocol.inbox_prefix(self.box_id),
                                     max_reconnect_attempts=-1, reconnect_time_wait=0.5,
                                     error_cb=self._on_error, name=f"svoyak-station-{self.box_id}")
        self.js = self.nc.jetstream()
        self.hub_js = self.nc.jetstream(domain=protocol.HUB_DOMAIN, timeout=REQUEST_TIMEOUT_S)
        from nats.js.api import StorageType, StreamConfig

        await self.js.add_stream(StreamConfig(
            name=protocol.box_stream(self.box_id), subjects=[protocol.box_subjects(self.box_id)],
            storage=StorageType.FILE, duplicate_window=protocol.DUPLICATE_WINDOW_S))
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
                message = await self.js.get_last_msg(protocol.box_stream(self.box_id),
                                                     protocol.event_subject(self.box_id, battle_id))
                local = protocol.decode_event(message.subject, message.data)["seq"]
            except Exception:  # nats.js.errors.NotFoundError: nothing of this battle in the stream yet
                local = 0
            mark = min(local, confirmed.get(battle_id, local)) if confirmed is not None else local
            self.published[battle_id] = mark
            self.wanted[battle_id] = max(seq, self.wanted.get(battle_id, 0))

    async def _kv(self):
        return await self.hub_js.key_value(protocol.room_bucket(self.box_id))

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
                    if not await self._publish_next(battle_id):
                        await asyncio.sleep(0.2)  # the local server is restarting: try again
                        break
            if any(self.published.get(b, 0) < s for b, s in self.wanted.items()):
                self._kick.set()

    async def _publish_next(self, battle_id: str) -> bool:
        """Publish the battle's next events: those handed over, in a run from the next seq; else from the store."""
        start = self.published.get(battle_id, 0)
        rows, seq = [], start + 1
        while (battle_id, seq) in self._fresh:
            event, committed, noted = self._fresh.pop((battle_id, seq))
            rows.append((seq, event, committed, noted))
            seq += 1
        if not rows:
            stored = await asyncio.get_running_loop().run_in_executor(None, self.battles.store.read, BATTLE,
                                                                      battle_id, start)
            rows = [(row.seq, row.event, 0, 0) for row in stored]
            done = await self._publish(battle_id, rows)
            upto = self.published.get(battle_id, 0)
            for key in [key for key in self._fresh if key[0] == battle_id and key[1] <= upto]:
                del self._fresh[key]  # handed over, then published from the store (a retry, or past FRESH_MAX)
            return done
        return await self._publish(battle_id, rows)

    async def _publish(self, battle_id: str, rows: list) -> bool:
        """Send every row, then wait for their acknowledgements together (one round trip for the lot, not one
        each); the stream stores them in order. A failure leaves ``published`` at the last acknowledged one, and
        the retry reads the store: the same message ids make a repeat harmless."""
        sent = []
        try:
            for seq, event, committed, noted in rows:
                body = protocol.encode_event(self.box_id, battle_id, seq, event_to_dict(event))
                published = time.monotonic_ns()
                # Svoyak-Stages: this box's monotonic ns when the store committed the event, when the loop heard of
                # it and when it published it. For the bench only (boxes on one machine share the clock).
                headers = {"Nats-Msg-Id": protocol.message_id(battle_id, seq),
                           protocol.STAGES_HEADER: f"{committed} {noted} {published}"}
                future = await self.js.publish_async(protocol.event_subject(self.box_id, battle_id), body,
                                                     headers=headers, wait_stall=PUBLISH_TIMEOUT_S)
                sent.append((seq, published, future))
            for seq, published, future in sent:
                await asyncio.wait_for(future, PUBLISH_TIMEOUT_S)
                if self.measuring:
                    self.acks_ns.append(time.monotonic_ns() - published)
                self.published[battle_id] = seq
        except Exception as error:  # a timeout or a reconnect: the same message ids make the retry harmless
            log.debug("publish %s: %r", battle_id, error)
            for _seq, _published, future in sent:
                future.cancel()
            return False
        return True

    async def _beats(self) -> None:
        while not self._closing:
            try:
                # How far the newest battles are in this box's stream: the hub re-sources a stream it lags behind.
                marks = dict(list(self.published.items())[-MARKS_IN_BEAT:])
                await self.nc.publish(protocol.desk_subject(self.box_id, "beat"),
                                      protocol.encode("beat", box=self.box_id, name=self.name,
                                                      battle=self.current_battle() or "", published=marks,
                                                      server=self._server_id()))
            except Exception as error:
                log.debug("beat: %r", error)
            await asyncio.sleep(BEAT_S)

    def _server_id(self) -> str:
        """This box's nats-server's id, new at each start of the server: a hub that sees it change knows DESK's
        source consumer (which lived in the old server) is gone."""
        return str((getattr(self.nc, "_server_info", None) or {}).get("server_id") or "")

    async def _assignment_poll(self) -> None:
        rounds = 0
        while not self._closing:
            if rounds % DESK_POLL_ROUNDS == 0 and self.on_desk is not None:
                info = await self._hub_get("desk")
                if isinstance(info, dict) and info != self._desk_info:
                    self._desk_info = info
                    self.on_desk(info)
            rounds += 1
            data = await self._hub_get("assignments")
            if isinstance(data, list) and data != self.assignments:
                self.assignments = data
                await asyncio.get_running_loop().run_in_executor(None, self._save_cache, data)
            if isinstance(data, list) and self.carried is not None:
                await self._fetch_carried(data)
            await asyncio.sleep(ASSIGNMENT_POLL_S)

    async def _fetch_carried(self, assignments: list) -> None:
        """Read from this station's bucket the themes (and pictures) its assignments carry and it lacks."""
        for item in assignments:
            ref = item.get("package") if isinstance(item, dict) else None
            key = ref.get("key") if isinstance(ref, dict) else None
            if not isinstance(key, str) or self.carried.has(key):
                continue
            try:
                kv = await self._kv()
                body = (await kv.get(key)).value
                media = {}
                for picture in protocol.decode(body, "carried").get("media", ()):
                    media[picture["sha256"]] = b"".join([(await kv.get(chunk)).value for chunk in picture["chunks"]])
                await asyncio.get_running_loop().run_in_executor(None, self.carried.keep, key, body, media)
            except Exception as error:  # the hub is away or the entry is not written yet: the next poll again
                log.debug("carried %s: %r", key, error)

    def _save_cache(self, data) -> None:
        self.cache_path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.cache_path.with_suffix(".tmp")
        temporary.write_text(json.dumps(data, ensure_ascii=False))
        temporary.replace(self.cache_path)

    async def claim(self, tournament_id: str, battle_id: str) -> dict:
        """Ask the hub for the slot: ``{"ok": True}`` or ``{"ok": False, "holder": name}``; ``None`` if the
        hub cannot be reached."""
        try:
            reply = await self.nc.request(protocol.desk_subject(self.box_id, "claim"),
                                          protocol.encode("claim", box=self.box_id, tournament=tournament_id,
                                                          battle=battle_id), timeout=REQUEST_TIMEOUT_S)
            self.hub_seen_s = time.monotonic()
            return protocol.decode(reply.data, "claimed")
        except protocol.MessageError:
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
