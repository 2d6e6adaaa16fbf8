"""The SQLite event log and the JSON Lines format (docs/battle-log.md)."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from appliance.errors import StoreDriverError
from appliance.rules import tournament as t
from appliance.rules.battle import ButtonPressed, PriceAnnounced, ReadingStarted, replay
from appliance.store import (BATTLE, TOURNAMENT, DuplicateCommandError, EventStore, LogFormatError,
                             StoreConflictError, StoredCommand, StoreFormatError, dump_log, open_store, read_log)


def test_appended_events_read_back_equal_in_order_and_survive_reopening(store, battle_events, tmp_path):
    for number, event in enumerate(battle_events, start=1):
        assert store.append(BATTLE, "b1", [event]) == (number,)
    assert store.events(BATTLE, "b1") == battle_events
    store.close()
    with EventStore(tmp_path / "events.sqlite") as again:
        assert replay(again.events(BATTLE, "b1")) == replay(battle_events)
        assert again.stream_ids(BATTLE) == ["b1"] and again.stream_ids(TOURNAMENT) == []


def test_the_store_is_wal_with_full_sync(store):
    connection = store._connection
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert connection.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_expected_seq_and_command_ids_guard_against_double_appends(store):
    store.append(BATTLE, "b1", [ButtonPressed(at_ns=1, player=0)], command_id="x", result={"seq": 4})
    with pytest.raises(StoreConflictError):
        store.append(BATTLE, "b1", [ButtonPressed(at_ns=2, player=0)], expected_seq=5)
    with pytest.raises(DuplicateCommandError) as info:
        store.append(BATTLE, "b2", [ButtonPressed(at_ns=2, player=0)], command_id="x")  # per kind, any stream
    assert info.value.stored == StoredCommand("battle", "x", "b1", 1, 1, {"seq": 4})
    assert store.count(BATTLE, "b1") == 1 and store.count() == 1
    # the same id in another kind is another command
    assert store.append(TOURNAMENT, "t1", [t.DeadlineSet(1, "2026-12-01T10:00:00Z")], command_id="x") == (1,)


def test_a_command_of_several_events_is_stored_whole_with_its_result(store):
    events = [PriceAnnounced(at_ns=5, value_points=10), ReadingStarted(at_ns=5)]
    assert store.append(BATTLE, "b1", events, command_id="next-1", result={"ok": True}) == (1, 2)
    assert [row.command_id for row in store.read(BATTLE, "b1")] == ["next-1", "next-1"]
    assert store.command(BATTLE, "next-1") == StoredCommand("battle", "next-1", "b1", 1, 2, {"ok": True})
    assert store.append(BATTLE, "", [], command_id="phones-1", result={"on": 1}) == ()  # a command alone
    assert store.command(BATTLE, "phones-1").first_seq is None and store.count() == 2
    with pytest.raises(ValueError):
        store.append(BATTLE, "b1", [])


def test_a_fault_between_two_events_of_a_command_stores_neither(store):
    # A trigger fails the second row's INSERT inside the transaction: after the first row was written.
    store._connection.execute("CREATE TEMP TRIGGER fault BEFORE INSERT ON stream_events WHEN NEW.type = "
                              "'ReadingStarted' BEGIN SELECT RAISE(ABORT, 'injected fault'); END")
    with pytest.raises(StoreDriverError, match="injected fault") as raised:  # the driver's error, wrapped
        store.append(BATTLE, "b1", [PriceAnnounced(at_ns=5, value_points=10), ReadingStarted(at_ns=5)],
                     command_id="next-1", result={})
    assert isinstance(raised.value.__cause__, sqlite3.IntegrityError)
    assert store.count() == 0 and store.command(BATTLE, "next-1") is None
    store._connection.execute("DROP TRIGGER temp.fault")
    assert store.append(BATTLE, "b1", [PriceAnnounced(at_ns=5, value_points=10), ReadingStarted(at_ns=5)],
                        command_id="next-1", result={}) == (1, 2)


def test_read_after_a_seq_gives_a_station_the_events_it_has_not_published(store, battle_events):
    store.append(BATTLE, "b1", battle_events)
    tail = store.read(BATTLE, "b1", after_seq=3)
    assert [row.seq for row in tail] == list(range(4, len(battle_events) + 1))
    assert [row.event for row in tail] == battle_events[3:]
    assert [row.seq for row in store.read(BATTLE, "b1", after_seq=3, limit=2)] == [4, 5]
    assert store.last_seq(BATTLE, "b1") == len(battle_events) and store.last_seq(BATTLE, "nope") == 0
    assert store.read(BATTLE, "b1", after_seq=len(battle_events)) == []


def test_a_row_that_is_not_an_event_is_reported_with_its_seq(store):
    store.append(BATTLE, "b1", [ButtonPressed(at_ns=1, player=0)])
    with sqlite3.connect(store.path) as raw:
        raw.execute("UPDATE stream_events SET body='{\"type\":\"Nope\",\"at_ns\":1}'")
    with pytest.raises(LogFormatError) as info:
        store.read(BATTLE, "b1")
    assert info.value.line == 1 and "Nope" in str(info.value)


def test_jsonl_round_trip(battle_events):
    text = dump_log("b1", battle_events)
    header, rows = read_log(io.StringIO(text))
    assert header == {"format": "svoyak-battle-log", "version": 1, "battle_id": "b1"}
    assert [event for _, event in rows] == battle_events
    assert [line for line, _ in rows] == list(range(2, len(battle_events) + 2))


@pytest.mark.parametrize("bad, line, words", [
    ('{"format":"other","version":1}\n', 1, "header"),
    ('{"format":"svoyak-battle-log","version":9}\n', 1, "version 9"),
    ('{"format":"svoyak-battle-log","version":1}\n{not json\n', 2, "not JSON"),
    ('{"format":"svoyak-battle-log","version":1}\n{"type":"Boom","at_ns":1}\n', 2, "unknown event type"),
    ('{"format":"svoyak-battle-log","version":1}\n{"type":"AnswerJudged","at_ns":1,"correct":"yes"}\n', 2,
     "must be bool"),
    ('{"format":"svoyak-battle-log","version":1}\n{"type":"ButtonPressed","player":1}\n', 2, "needs at_ns"),
    ('{"format":"svoyak-battle-log","version":1}\n{"type":"ButtonPressed","at_ns":1,"player":1,"x":2}\n', 2,
     "no field"),
    ('{"format":"svoyak-battle-log","version":1}\n\n', 2, "blank"),
    ("", 1, "empty"),
])
def test_a_malformed_line_is_refused_naming_the_line(bad, line, words):
    with pytest.raises(LogFormatError) as info:
        read_log(io.StringIO(bad), source="b.jsonl")
    assert info.value.line == line and words in str(info.value) and str(info.value).startswith(f"b.jsonl:{line}:")


def test_the_box_store_lives_in_the_data_dir(settings):
    with open_store(settings.data_dir) as store:
        assert store.path == settings.data_dir / "events.sqlite"


def test_an_import_stores_all_events_or_none(store, battle_events):
    assert store.append(BATTLE, "b2", battle_events, expected_seq=1)[-1] == len(battle_events)
    with pytest.raises(StoreConflictError):
        store.append(BATTLE, "b2", battle_events, expected_seq=1)
    assert store.events(BATTLE, "b2") == battle_events


# ---------------------------------------------------------------- schema 1 files, made by the code before one store
FIXTURES = Path(__file__).parent / "fixtures"


def v1_copy(tmp_path, name):
    path = tmp_path / name
    shutil.copy(FIXTURES / name, path)
    return path


def test_a_schema_1_battle_file_is_migrated_in_place_and_loses_nothing(tmp_path):
    path = v1_copy(tmp_path, "events-v1.sqlite")
    with sqlite3.connect(path) as raw:
        before = raw.execute("SELECT battle_id, seq, at_ns, type, body FROM events ORDER BY rowid").fetchall()
    with EventStore(path) as store:
        assert store.schema_version() == 2
        assert store.stream_ids(BATTLE) == ["battle-one", "battle-two"]
        # every body kept as it was written (a decoded event re-encodes with the fields added since, such as
        # BattleSetUp.rules_version, so the bodies are compared as stored), and every one still decodes
        with sqlite3.connect(path) as raw:
            bodies = dict(((stream, seq), body) for stream, seq, body in raw.execute(
                "SELECT stream_id, seq, body FROM stream_events WHERE kind = 'battle'"))
        after = [(row.stream_id, row.seq, row.event.at_ns, type(row.event).__name__, bodies[row.stream_id, row.seq])
                 for battle in store.stream_ids(BATTLE) for row in store.read(BATTLE, battle)]
        assert after == before
        assert all(row.event.rules_version == 1 for battle in store.stream_ids(BATTLE)  # schema 1 predates versions
                   for row in store.read(BATTLE, battle) if type(row.event).__name__ == "BattleSetUp")
        assert replay(store.events(BATTLE, "battle-one")).is_over
        # "next" was stored as "n2#0", "n2#1": one command again, with both its events
        assert store.command(BATTLE, "n2") == StoredCommand("battle", "n2", "battle-one", 3, 4, None)
        assert store.command(BATTLE, "n2#0") is None
    with sqlite3.connect(path) as raw:  # the old table is gone: nothing reads it twice
        tables = {row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "events" not in tables and {"stream_events", "commands", "meta"} <= tables
    with EventStore(path) as again:  # and opening it again changes nothing
        assert again.count(BATTLE) == len(before)


def test_a_schema_1_file_opened_read_only_is_read_and_left_untouched(tmp_path):
    path = v1_copy(tmp_path, "events-v1.sqlite")
    original = path.read_bytes()
    with EventStore(path, read_only=True) as store:
        assert store.stream_ids(BATTLE) == ["battle-one", "battle-two"]
        assert replay(store.events(BATTLE, "battle-one")).is_over
        assert store.command(BATTLE, "n2").last_seq == 4
        with pytest.raises(StoreDriverError) as raised:
            store.append(BATTLE, "x", [ButtonPressed(at_ns=1, player=0)])
        assert isinstance(raised.value.__cause__, sqlite3.OperationalError)
    assert path.read_bytes() == original


def test_the_old_tournament_file_is_merged_into_the_one_store_once(tmp_path):
    v1_copy(tmp_path, "events-v1.sqlite").rename(tmp_path / "events.sqlite")
    v1_copy(tmp_path, "tournaments-v1.sqlite").rename(tmp_path / "tournaments.sqlite")
    with open_store(tmp_path) as store:
        assert store.stream_ids(TOURNAMENT) == ["cup"] and store.stream_ids(BATTLE) == ["battle-one", "battle-two"]
        events = store.events(TOURNAMENT, "cup")
        assert isinstance(events[0], t.TournamentCreated) and len(events) == 11
        assert store.command(TOURNAMENT, "res1").last_seq == 11
    assert not (tmp_path / "tournaments.sqlite").exists() and (tmp_path / "tournaments.sqlite.merged").exists()
    with open_store(tmp_path) as store:  # the next start finds one store
        assert store.count(TOURNAMENT) == 11
        assert store.merge_file(tmp_path / "tournaments.sqlite.merged") == 0  # merging twice copies nothing


def test_a_file_of_a_newer_schema_or_of_another_program_is_refused(tmp_path):
    newer = tmp_path / "newer.sqlite"
    with EventStore(newer) as store:
        store._connection.execute("UPDATE meta SET value='9' WHERE key='schema_version'")
    with pytest.raises(StoreFormatError, match="schema version 9"):
        EventStore(newer)
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as raw:
        raw.execute("CREATE TABLE photos (x)")
    with pytest.raises(StoreFormatError, match="not a svoyak event store"):
        EventStore(foreign, read_only=True)
