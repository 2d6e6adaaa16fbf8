"""The tournament desk: commands validated then stored, restarts lose nothing, box battles feed results."""

from __future__ import annotations

import csv
import io
import json

import pytest

from appliance.rules import tournament as t
from appliance.rules.tournament.errors import RegistrationError, ResultError, StageError
from appliance.service.battles import Battles
from appliance.service.tournaments import TournamentDesk
from appliance.store import TOURNAMENT, EventStore


@pytest.fixture
def desk(tmp_path):
    ticks = iter(range(1, 10**9))
    desk = TournamentDesk(EventStore(tmp_path / "tournaments.sqlite"), clock=lambda: next(ticks) * 1000,
                          seed_source=lambda: 42)
    yield desk
    desk.store.close()


def test_a_rejected_command_changes_nothing_and_restart_replays(desk, tmp_path):
    tid = desk.create("northern-owl", "Сова 2026", seed=1)
    for i in range(37):
        desk.register(tid, f"Игрок {i}", team="Ottawa" if i % 2 else "")
    count = len(desk.events(tid))
    desk.close_registration(tid)
    with pytest.raises(RegistrationError):
        desk.register(tid, "Опоздавший")  # northern-owl 1.2: after the deadline only a late entry
    assert len(desk.events(tid)) == count + 1
    desk.withdraw(tid, "p002")
    reopened = TournamentDesk(EventStore(tmp_path / "tournaments.sqlite"))
    assert t.field(reopened.state(tid)) == t.field(desk.state(tid))
    assert "p037" in t.field(reopened.state(tid)).accepted  # the waiting list moved up (1.1)


def test_manual_results_exports_and_duplicate_commands(desk):
    tid = desk.create("mubc", seed=3)
    for i in range(8):
        desk.register(tid, f"Игрок {i}")
    drawn = desk.draw(tid)
    assert drawn.seed == 42  # recorded: the same seed replays the same draw
    battle = drawn.battles[0]
    players = t.battle_players(desk.state(tid), battle.id)
    with pytest.raises(ResultError):
        desk.record_result(tid, battle.id, [{"player": players[0], "score": "lots"}])
    lines = [{"player": p, "score": 40 - 10 * i} for i, p in enumerate(players)]
    desk.record_result(tid, battle.id, lines, command_id="c1")
    desk.record_result(tid, battle.id, lines, command_id="c1")  # a retried command is stored once
    assert sum(isinstance(e, t.BattleResultRecorded) for e in desk.events(tid)) == 1
    rows = list(csv.reader(io.StringIO(desk.export_csv(tid).lstrip("\ufeff"))))
    assert rows[0][:3] == ["Место", "Номер", "Игрок"]  # the UI's language (Russian by default)
    assert any(row[:2] == ["Общий турнир (швейцарская система)", battle.id] for row in rows)  # a stage by its title
    exported = json.loads(desk.export_json(tid))
    assert exported["events"][0]["type"] == "TournamentCreated"


def test_written_sheets_and_ties_through_the_desk(desk):
    tid = desk.create("youth-cup", seed=5)
    for i in range(50):
        desk.register(tid, f"Игрок {i}")
    desk.draw(tid)
    line = desk.enter_sheet(tid, "written", "p001", "+-2x0" * 12)
    assert line.score == 12 * (10 - 20 - 30)
    with pytest.raises(ResultError):
        desk.enter_sheet(tid, "written", "p002", "+-")
    for i in range(2, 51):
        desk.enter_sheet(tid, "written", f"p{i:03d}", "+" * (i % 7) + "0" * (60 - i % 7))
    desk.close_stage(tid, "written")
    view = desk.view(tid)
    assert view["next"]["kind"] in ("tie", "play")


def test_a_battle_played_on_the_box_becomes_the_tournament_result(desk, tmp_path, play_six_themes):
    tid = desk.create("northern-owl", seed=2)
    for i in range(36):
        desk.register(tid, f"Игрок {i}")
    desk.set_seeds(tid, [f"p{i:03d}" for i in range(1, 10)])
    desk.draw(tid)
    battles = Battles(EventStore(tmp_path / "battles.sqlite"))
    battles.add_listener(desk.on_battle_event)
    battle_id = "groups/01"
    box_id = battles.create(desk.battle_setup(tid, battle_id, at_ns=1))
    play_six_themes(battles, box_id, start_ns=10)
    assert desk.rejected == []
    result = desk.state(tid).results[battle_id]
    assert result.source == "box" and result.log_id == box_id
    assert [line.place for line in sorted(result.lines, key=lambda l: l.place)] == [1, 2, 3, 4]
    winner = min(result.lines, key=lambda l: l.place).player
    assert winner in {a.player for a in t.outcome(desk.state(tid), "groups").advancing} or \
        not t.outcome(desk.state(tid), "groups").complete


def test_nothing_to_draw_is_said_plainly(desk):
    tid = desk.create("irkutsk", seed=1)
    with pytest.raises(Exception):
        desk.draw(tid)  # no players
    with pytest.raises(StageError):
        desk.draw(tid, "sf")


def test_organisers_set_the_open_parameters_at_creation(desk):
    # mubc 3.7: rounds and battle length are set by the organisers once registration closes.
    tid = desk.create("mubc", changes={"swiss.rounds": 7, "swiss.themes": 5})
    stage = desk.state(tid).fmt.stage("swiss")
    assert (stage.rounds, stage.themes) == (7, 5)
    with pytest.raises(t.FormatError, match="a box seats 2-4"):
        desk.create("mubc", changes={"swiss.battle_size": 6})
    with pytest.raises(t.FormatError, match="stage.field"):
        desk.create("mubc", changes={"rounds": 7})


def test_the_deadline_closes_registration_when_it_passes(tmp_path):
    # northern-owl 1.2: registration by 23:59 EDT, 1 October 2008.
    import datetime

    now = [datetime.datetime(2008, 10, 1, 20, 0, tzinfo=datetime.timezone.utc)]
    desk = TournamentDesk(EventStore(tmp_path / "t.sqlite"), wall_clock=lambda: now[0])
    tid = desk.create("northern-owl", seed=1)
    with pytest.raises(RegistrationError, match="offset"):
        desk.set_deadline(tid, "1 October")
    desk.set_deadline(tid, "2008-10-01T23:59-04:00")
    desk.register(tid, "Вовремя")
    now[0] = datetime.datetime(2008, 10, 2, 4, 0, tzinfo=datetime.timezone.utc)  # 00:00 EDT
    with pytest.raises(RegistrationError, match="closed"):
        desk.register(tid, "Опоздал")
    assert desk.state(tid).registration_closed
    desk.register(tid, "Опоздал", late=True)  # the director may still let him in


def test_rooms_are_dealt_to_battles_without_one(desk):
    tid = desk.create("eurocup", seed=1)
    for i in range(81):
        desk.register(tid, f"Игрок {i}", team=f"T{i}")
    desk.draw(tid)
    assigned = desk.assign_rooms(tid, ["101", "102", "103"])
    assert len(assigned) == 27 + 9 + 3 + 1
    rooms = desk.state(tid).assignments
    assert rooms["1-27/01"][0] == "101" and rooms["1-27/04"][0] == "101" and rooms["1-27/02"][0] == "102"


def test_a_log_stored_before_imports_were_checked_does_not_take_the_desk_down(desk, tmp_path):
    # Issue 10: a "team_rank": null stored by an old import made every /director/ page a 500, even after a restart.
    good = desk.create("mubc", "Хороший", seed=1)
    bad = desk.create("mubc", "Плохой", seed=2)
    desk.store.append(TOURNAMENT, bad, [t.PlayerRegistered(10**6, "p001", "Анна", team_rank=None)])
    reopened = TournamentDesk(EventStore(tmp_path / "tournaments.sqlite"))
    assert [item["id"] for item in reopened.list()] == [good]
    assert set(reopened.broken) == {bad} and "team_rank" in reopened.broken[bad]
    assert reopened.view(good)["title"] == "Хороший"


def test_an_import_refused_anywhere_stores_nothing(desk, tmp_path):
    from appliance.rules.tournament.simulate import play_battle_outline
    from appliance.service.presets import simulate

    log, _state = simulate("irkutsk", 30, 2, battle_player=play_battle_outline)
    events = [t.to_dict(e) for e in log]
    events[-1] = {**events[-1], "at_ns": None}  # the last record is broken: the first must not be kept either
    with pytest.raises(ResultError) as refused:
        desk.import_events(events)
    assert refused.value.code == "import.field" and refused.value.params["number"] == str(len(events))
    assert desk.list() == []
    assert TournamentDesk(EventStore(tmp_path / "tournaments.sqlite")).list() == []  # nothing stored


def test_a_command_the_log_could_not_read_back_is_refused_before_it_is_stored(desk, tmp_path):
    # A seed or a score of 5,000 digits would be stored and then refuse the whole tournament at the next start.
    with pytest.raises(ResultError) as huge_seed:
        desk.create("mubc", seed=10 ** 5000)
    assert huge_seed.value.code == "event.field" and huge_seed.value.params["field"] == "seed"
    tid = desk.create("mubc", seed=1)
    for i in range(8):
        desk.register(tid, f"Игрок {i}")
    desk.close_registration(tid)
    drawn = desk.draw(tid, seed=2)
    battle = drawn.battles[0]
    with pytest.raises(ResultError) as huge_score:
        desk.record_result(tid, battle.id, [{"player": p, "score": 10 ** 30} for p in battle.seats])
    assert huge_score.value.code == "event.field"
    reopened = TournamentDesk(EventStore(tmp_path / "tournaments.sqlite"))
    assert reopened.broken == {} and [item["id"] for item in reopened.list()] == [tid]
def test_desk_command_ids_survive_a_restart_with_their_first_result(desk, tmp_path):
    tid = desk.create("mubc", seed=3)
    first = desk.register(tid, "Аня", command_id="form-1")
    for i in range(7):
        desk.register(tid, f"Игрок {i}")
    drawn = desk.draw(tid)
    players = t.battle_players(desk.state(tid), drawn.battles[0].id)
    lines = [{"player": p, "score": 40 - 10 * i} for i, p in enumerate(players)]
    desk.record_result(tid, drawn.battles[0].id, lines, command_id="result-1")
    count = len(desk.events(tid))
    desk.store.close()
    again = TournamentDesk(EventStore(tmp_path / "tournaments.sqlite"))
    assert again.register(tid, "Аня", command_id="form-1") == first      # the same player, not a second Аня
    again.record_result(tid, drawn.battles[0].id, lines, command_id="result-1")
    assert len(again.events(tid)) == count and again.state(tid) == desk.state(tid)
    assert again.command_result("form-1") == {"player_id": first}
    again.store.close()
    desk.store = EventStore(tmp_path / "tournaments.sqlite")  # for the fixture's close


def test_a_failed_import_stores_nothing(desk):
    tid = desk.create("mubc", seed=3)
    events = desk.events(tid)
    desk.store.close()
    desk.store = EventStore(desk.store.path)
    fresh = TournamentDesk(EventStore(desk.store.path.with_name("other.sqlite")))
    broken = [t.to_dict(e) for e in events] + [{"type": "PlayerRegistered", "at_ns": 5}]
    with pytest.raises(Exception):
        fresh.import_events(broken)
    assert fresh.store.count() == 0 and fresh.list() == []
    fresh.store.close()


def test_every_desk_command_takes_a_command_id_and_a_resend_applies_nothing(desk):
    tid = desk.create("mubc", seed=3, command_id="new-1")
    assert desk.create("mubc", seed=3, command_id="new-1") == tid and len(desk.list()) == 1
    for i in range(8):
        desk.register(tid, f"Игрок {i}", command_id=f"reg-{i}")
    desk.withdraw(tid, "p008", command_id="w-1")
    desk.withdraw(tid, "p008", command_id="w-1")
    desk.close_registration(tid, command_id="close-1")
    desk.close_registration(tid, command_id="close-1")             # a resend: not refused, not stored twice
    drawn = desk.draw(tid, command_id="draw-1")
    assert desk.draw(tid, command_id="draw-1") == drawn              # the same draw, not a re-draw
    desk.assign(tid, drawn.battles[0].id, "Зал 1", command_id="room-1")
    desk.assign(tid, drawn.battles[0].id, "Зал 1", command_id="room-1")
    types = [type(e).__name__ for e in desk.events(tid)]
    assert types.count("RegistrationClosed") == 1 and types.count("StageDrawn") == 1
    assert types.count("BattleAssigned") == 1 and types.count("PlayerWithdrew") == 1
