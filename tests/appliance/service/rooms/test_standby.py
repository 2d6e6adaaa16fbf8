"""The standby's copy of the desk put into a box (docs/rooms.md "The standby desk"), without NATS: the rows the
hub's shipper reads from its store, as DESKLOG carries them, become a fresh box's desk (a tournament through the
desk's import, the rooms' streams as stored with their command ids), a second tap changes nothing, and a package
archive that reaches outside its folder is refused."""

from __future__ import annotations

import asyncio
import io
import tarfile

import pytest

from appliance.rules import tournament as t
from appliance.rules.tournament import BattleResult
from appliance.service.rooms.carried import SPARES, SPARES_STREAM, SparesBook
from appliance.service.rooms.conflicts import ConflictBook
from appliance.service.rooms.standby import DeskShipper, TakeOverError, apply_copy
from appliance.service.tournaments import TournamentDesk


class _Published:
    """The hub link as the shipper uses it: its JetStream publishes, kept."""

    def __init__(self) -> None:
        self.js = self
        self.sent: list = []

    async def publish(self, subject, body, headers=None):
        self.sent.append((subject, body, headers))


def _desk_log(hub_dir) -> tuple[TournamentDesk, list[dict]]:
    from appliance.service.rooms import protocol

    desk = TournamentDesk.open(hub_dir)
    tid = desk.create("mubc", "Кубок", seed=3, tournament_id="t1")
    for number in range(1, 9):
        desk.register(tid, f"Игрок {number}")
    desk.close_registration(tid)
    desk.draw(tid)
    battle = sorted(desk.state(tid).battles)[0]
    players = sorted(t.battle_players(desk.state(tid), battle))
    desk.record_result(tid, battle, [{"player": p, "score": 10 * i} for i, p in enumerate(players)])
    typed = desk.state(tid).results[battle]
    ConflictBook(desk.store).hold(5, tid, battle, "room2", "b9", BattleResult(battle, (), log_id="room2/b9"), typed)
    SparesBook(desk.store).hold(6, tid, "1", "pkg", (7, 8))
    hub = _Published()
    shipper = DeskShipper(hub, desk.store.path, hub_dir / "packages", lambda: {}, lambda: [])
    while asyncio.run(shipper._ship_rows()):
        pass
    shipper._connection.close()
    return desk, [protocol.decode(body, "row") for _subject, body, _headers in hub.sent]


def test_the_desks_copy_becomes_a_fresh_boxs_desk_once(tmp_path):
    hub, rows = _desk_log(tmp_path / "hub")
    box = TournamentDesk.open(tmp_path / "box")
    copy = {"rows": rows + rows[:3], "stations": {}, "packages": {}}  # a resend in the mirror: dropped
    counts = apply_copy(copy, box, box.store, tmp_path / "box" / "packages")
    assert counts["tournaments"] == 1 and counts["streams"] == 2
    assert box.state("t1") == hub.state("t1")  # registrations, draw, the typed result
    assert list(ConflictBook(box.store).open()) == [("t1", sorted(hub.state("t1").results)[0])]
    assert SparesBook(box.store).held("t1", "1") == ("pkg", (7, 8))
    assert [row.command_id for row in box.store.read(SPARES, SPARES_STREAM)] == \
        [row.command_id for row in hub.store.read(SPARES, SPARES_STREAM)]
    # a second tap (after a failure further on) puts in nothing twice
    again = apply_copy(copy, box, box.store, tmp_path / "box" / "packages")
    assert again["tournaments"] == 0 and again["rows"] == 0
    assert len(box.store.events(SPARES, SPARES_STREAM)) == 1
    hub.store.close()
    box.store.close()


def test_a_package_archive_reaching_outside_its_folder_is_refused(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("abc123/../../evil.txt")
        info.size = 4
        archive.addfile(info, io.BytesIO(b"evil"))
    box = TournamentDesk.open(tmp_path / "box")
    with pytest.raises(TakeOverError, match="not a package's file"):
        apply_copy({"rows": [], "stations": {}, "packages": {"abc123": buffer.getvalue()}}, box, box.store,
                   tmp_path / "box" / "packages")
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path / "box" / "packages" / "abc123").exists()
    box.store.close()
