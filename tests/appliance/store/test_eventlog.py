"""The SQLite event log and the JSON Lines format (docs/battle-log.md)."""

from __future__ import annotations

import io
import sqlite3

import pytest

from appliance.rules.battle import ButtonPressed, replay
from appliance.store import EventStore, LogFormatError, StoreConflictError, dump_log, read_log


def test_appended_events_read_back_equal_in_order_and_survive_reopening(store, battle_events, tmp_path):
    for number, event in enumerate(battle_events, start=1):
        assert store.append("b1", event) == number
    assert store.events("b1") == battle_events
    store.close()
    with EventStore(tmp_path / "events.sqlite") as again:
        assert replay(again.events("b1")) == replay(battle_events)
        assert again.battle_ids() == ["b1"]


def test_the_store_is_wal_with_full_sync(store):
    connection = store._connection
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert connection.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_expected_seq_and_command_ids_guard_against_double_appends(store):
    store.append("b1", ButtonPressed(at_ns=1, player=0), command_id="x")
    with pytest.raises(StoreConflictError):
        store.append("b1", ButtonPressed(at_ns=2, player=0), expected_seq=5)
    with pytest.raises(StoreConflictError):
        store.append("b1", ButtonPressed(at_ns=2, player=0), command_id="x")
    assert store.count("b1") == 1 and store.command_seq("b1", "x") == 1


def test_a_row_that_is_not_an_event_is_reported_with_its_seq(store):
    store.append("b1", ButtonPressed(at_ns=1, player=0))
    with sqlite3.connect(store.path) as raw:
        raw.execute("UPDATE events SET body='{\"type\":\"Nope\",\"at_ns\":1}'")
    with pytest.raises(LogFormatError) as info:
        store.read("b1")
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
    from appliance.store import open_store

    with open_store(settings) as store:
        assert store.path == settings.data_dir / "events.sqlite"


def test_an_import_stores_all_events_or_none(store, battle_events):
    assert store.append_all("b2", battle_events) == len(battle_events)
    with pytest.raises(StoreConflictError):
        store.append_all("b2", battle_events)
    assert store.events("b2") == battle_events
