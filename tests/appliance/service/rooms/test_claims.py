"""A station starts only what the desk gave it, and a refusal changes nothing (issue 22): a battle not in the
station's assignments is refused on the station before any claim; a claim that reaches the hub anyway (the
station's copy of its assignments is older than the desk's) is refused there and assigns nothing."""

from __future__ import annotations

import asyncio

import pytest

from appliance.service.rooms.protocol import NotAssignedError, SlotTakenError
from appliance.service.rooms.results import ResultEntry
from appliance.service.rooms.service import Rooms
from tests.appliance.service.rooms.test_rooms import desk  # noqa: F401 (the fixture)

NAMES = {"room2": "Комната 2", "room3": "Комната 3"}


def test_a_claim_for_a_battle_nobody_gave_the_station_is_refused_and_assigns_nothing(desk):  # noqa: F811
    entry = ResultEntry(lambda: desk, lambda: NAMES)
    battle = sorted(desk.state("t1").battles)[0]
    assert entry.claim("room2", "t1", battle) == {"ok": False, "error": "not assigned to this box"}
    assert desk.state("t1").assignments.get(battle, ("", ""))[1] == ""  # still nobody's
    assert entry.assignments_for("room2") == []
    entry.check_free("room3", "t1", battle)  # the director gives it to room3
    assert entry.claim("room2", "t1", battle) == {"ok": False, "holder": "Комната 3", "holder_id": "room3"}
    with pytest.raises(SlotTakenError):
        entry.check_free("room2", "t1", battle)  # nor can the director give it to a second box
    assert desk.state("t1").assignments[battle][1] == "room3"


class _Station:
    def __init__(self, assignments, answer) -> None:
        self.assignments, self.answer, self.claims = assignments, answer, []

    async def claim(self, tournament, battle):
        self.claims.append((tournament, battle))
        return self.answer


class _Loop:
    def call(self, factory, timeout_s=10):
        return asyncio.run(factory())


class _Session:
    def __init__(self) -> None:
        self.commands = []

    def command(self, *args):
        self.commands.append(args)


def _rooms(tmp_path, station) -> Rooms:
    from appliance import config

    rooms = Rooms(config.load(overrides={"data_dir": tmp_path}, environ={}, config_path=None), _Session(), None)
    rooms.station, rooms.loop = station, _Loop()
    return rooms


ASSIGNED = {"tournament": "t1", "battle": "1-1", "profile": "mubc", "players": ["А", "Б", "В"], "themes": [],
            "slot": "tournament:t1:1-1", "run": 1, "runs": 1, "cuts": None}


def test_a_station_refuses_a_battle_not_in_its_assignments_before_asking_the_hub(tmp_path):
    station = _Station([ASSIGNED], {"ok": True})
    rooms = _rooms(tmp_path, station)
    with pytest.raises(NotAssignedError):
        rooms.start_assigned("t1", "2-1", "c1")
    assert station.claims == [] and rooms.session.commands == []  # nothing asked, nothing set up


def test_a_battle_the_desk_took_back_is_refused_as_not_assigned_and_nothing_is_set_up(tmp_path):
    station = _Station([ASSIGNED], {"ok": False, "error": "not assigned to this box"})  # the hub's answer
    rooms = _rooms(tmp_path, station)
    with pytest.raises(NotAssignedError, match="no longer assigned"):
        rooms.start_assigned("t1", "1-1", "c1")
    assert station.claims == [("t1", "1-1")] and rooms.session.commands == []
