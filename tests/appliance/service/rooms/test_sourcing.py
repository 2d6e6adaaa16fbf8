"""DESK sources each station's stream by itself, from the first event on, with no help from the stall detector
(issue 22): the hub and two stations as real nats-servers on loopback, the real hub and station links, paired
in the order the boxes pair (the hub's configuration reloaded and its link synced before the station's server
exists), then the hub restarted. The old order configured a station's source at pairing, before its leaf could
hear the request: nats-server waited 30 s for the answer (and the leaf's connection did not cut that short), so
the last-paired station's first events waited for the detector (``resourced``) to re-source it."""

from __future__ import annotations

import collections
import shutil
import socket
import time

import pytest

from appliance.rules.battle import event_from_dict
from appliance.service.rooms import natsconf, protocol
from appliance.service.rooms.hub import HubLink
from appliance.service.rooms.loop import Loop
from appliance.service.rooms.server import NatsServer, find_binary
from appliance.service.rooms.station import StationLink

Row = collections.namedtuple("Row", "seq event")
BOXES = ("room2", "room3")


def _binaries():
    found = [find_binary("")]
    debian = shutil.which("nats-server", path="/usr/sbin:/usr/bin")
    if debian and debian not in found:
        found.append(debian)
    return found


def _long_battle(questions: int = 12) -> list[dict]:
    """A real battle's events: set up, then questions pressed, pointed and judged right."""
    from appliance.rules.battle import apply, event_to_dict
    from appliance.service.battle_adapter import BattleAdapter

    adapter = BattleAdapter()
    setup = adapter.setup_event({"profile": "mubc", "players": ["Аня", "Борис", "Вера"], "themes": 6}, 0)
    state, events, clock = apply(None, setup), [setup], 1
    for number in range(questions):
        for name in ("next", "press", "point", "right"):
            clock += 1
            try:
                made = ([adapter.press_event(state, {"player": number % 3, "t_ns": clock, "source": "host"})]
                        if name == "press" else adapter.command_events(name, state, {}, clock))
                for event in made:
                    state = apply(state, event)
                    events.append(event)
            except Exception:  # the rules refuse (a theme just began): the next command goes on
                continue
    return [event_to_dict(event) for event in events]


class Log:
    """A station's battle log as its link reads it (``Battles.list`` and ``Battles.store.read``)."""

    def __init__(self, battle: str) -> None:
        self.battle = battle  # unique across boxes, as a box's random battle ids are (DESK drops a repeated msg id)
        self.events = [event_from_dict(event) for event in _long_battle()]
        self.upto = 0
        self.store = self
        self.reads = 0

    def list(self) -> list[dict]:
        return [{"battle_id": self.battle, "seq": self.upto}] if self.upto else []

    def read(self, kind, battle_id, start) -> list[Row]:
        self.reads += 1
        return [Row(seq, event) for seq, event in enumerate(self.events[:self.upto], start=1) if seq > start]


class Seq:
    def __init__(self, seq: int) -> None:
        self.seq = seq


class Results:
    def assignments_for(self, box):
        return []

    def claim(self, box, tournament, battle):
        return {"ok": True}


class Hub:
    def __init__(self, folder, binary) -> None:
        self.folder, self.binary = folder, binary
        self.passwords: dict[str, str] = {}
        self.server = NatsServer(folder / "hub", binary=binary)
        with socket.socket() as probe:  # a free port, kept across the hub's restart (the stations' remotes name it)
            probe.bind(("127.0.0.1", 0))
            self.leaf_port = probe.getsockname()[1]
        self.link = self.loop = None

    def config(self) -> str:
        return natsconf.hub_config(str(self.folder / "hub" / "js"), self.passwords, client_port=0,
                                   leaf_port=self.leaf_port, app_password="app", leaf_host="127.0.0.1",
                                   ports_dir=str(self.folder / "hub"))

    def start(self) -> None:
        self.server.write(self.config())
        self.server.start()
        self.loop = Loop("test-hub")
        self.link = HubLink(self.loop, self.server.client_url(), natsconf.APP_USER, "app",
                            lambda: {box: box for box in self.passwords}, Results())
        self.loop.call(self.link.start, timeout_s=20)

    def pair(self, box: str) -> None:
        """What ``Rooms.pair_station`` does: the new user, a reload, the link synced; then the station starts."""
        self.passwords[box] = f"secret-{box}"
        if self.server.write(self.config()):
            self.server.reload()
            time.sleep(0.3)
        self.loop.call(self.link.sync_stations, timeout_s=20)

    def stop(self) -> None:
        if self.link is not None:
            self.loop.call(self.link.close, timeout_s=10)
            self.loop.close()
            self.link = None
        self.server.stop()

    def holds(self, box: str) -> int:
        replica = self.link.ledger.replicas.get((box, f"b-{box}"))
        return replica.seq if replica is not None else 0


class Station:
    def __init__(self, folder, binary, box: str, leaf_port: int, log: Log | None = None) -> None:
        self.box = box
        self.log = log or Log(f"b-{box}")
        self.server = NatsServer(folder / box, binary=binary)
        self.server.write(natsconf.station_config(box, str(folder / box / "js"), 0, f"nats-leaf://127.0.0.1:{leaf_port}",
                                                  box, f"secret-{box}", ports_dir=str(folder / box)))
        self.server.start()
        self.loop = Loop(f"test-{box}")
        self.link = StationLink(self.loop, box, box, self.server.client_url(), self.log, folder / box)
        self.loop.call(self.link.start, timeout_s=20)

    def play(self, upto: int) -> None:
        """The log grows to ``upto``; the link hears only how far (as after a restart: it reads the store)."""
        self.log.upto = upto
        self.link.on_battle_event(self.log.battle, None, Seq(upto))

    def commit(self, upto: int) -> None:
        """The log grows to ``upto`` and the listener hands each committed event over, as ``Battles`` does."""
        first = self.log.upto + 1
        self.log.upto = upto
        for seq in range(first, upto + 1):
            self.link.on_battle_event(self.log.battle, self.log.events[seq - 1], Seq(seq))

    def stop(self) -> None:
        self.loop.call(self.link.close, timeout_s=10)
        self.loop.close()
        self.server.stop()


def _until(predicate, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout_s} s: {what}")
        time.sleep(0.02)


@pytest.mark.parametrize("binary", _binaries())
def test_each_station_is_sourced_from_its_first_event_without_the_stall_detector(tmp_path, binary):
    hub = Hub(tmp_path, binary)
    stations: list[Station] = []
    try:
        hub.start()
        for box in BOXES:
            hub.pair(box)
            stations.append(Station(tmp_path, binary, box, hub.leaf_port))
        for station in stations:
            station.play(2)
        # Far under nats-server's own retry of a lost request (30 s, then a 10 s backoff): only DESK's source
        # flowing by itself brings them; the detector would have fired after 2 s of lag.
        _until(lambda: all(hub.holds(box) == 2 for box in BOXES), 20, "every station's first events at the hub")
        assert hub.link.resourced == 0, hub.link.stalls
        assert hub.link.sourced == len(BOXES)

        hub.stop()  # the hub's box restarts: DESK recovered from its store, its sources with it
        hub.server = NatsServer(tmp_path / "hub", binary=binary)
        hub.start()
        _until(lambda: all(hub.holds(box) == 2 for box in BOXES), 20, "the hub rebuilt from DESK")
        for station in stations:
            station.play(4)
        _until(lambda: all(hub.holds(box) == 4 for box in BOXES), 20, "new events after the hub's restart")
        assert hub.link.resourced == 0, hub.link.stalls

        stations[0].stop()  # a station's box restarts at once (its server and its link): its consumer is gone
        stations[0] = Station(tmp_path, binary, BOXES[0], hub.leaf_port, log=stations[0].log)
        stations[0].play(6)
        _until(lambda: hub.holds(BOXES[0]) == 6, 20, "new events after the station's restart")
        assert hub.link.resourced == 0, hub.link.stalls
    finally:
        for station in stations:
            station.stop()
        hub.stop()


def test_events_handed_over_are_published_without_reading_the_store_and_a_gap_is_read(tmp_path):
    binary = find_binary("")
    hub = Hub(tmp_path, binary)
    station = None
    try:
        hub.start()
        hub.pair("room2")
        station = Station(tmp_path, binary, "room2", hub.leaf_port)
        station.commit(2)
        _until(lambda: hub.holds("room2") == 2, 20, "the handed-over events at the hub")
        assert station.log.reads == 0  # published as handed over: no store read
        station.log.upto = 3  # event 3 committed while nobody listened (the link missed it)
        station.commit(4)     # event 4 handed over: 3 is missing, so the publisher reads the store from 3
        _until(lambda: hub.holds("room2") == 4, 20, "the gap read from the store, in order")
        assert station.log.reads == 1 and station.link._fresh == {}
        assert hub.link.out_of_order == 0 and hub.link.ledger.duplicates == 0
    finally:
        if station is not None:
            station.stop()
        hub.stop()
