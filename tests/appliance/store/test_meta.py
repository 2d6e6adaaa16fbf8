"""The store's ``meta`` values beside its streams (the battle timeline keeps its offset there: docs/battle-log.md)."""

from __future__ import annotations

import pytest

from appliance.store import EventStore


def test_a_meta_value_is_kept_across_a_reopen_and_read_by_a_read_only_store(tmp_path):
    path = tmp_path / "events.sqlite"
    with EventStore(path) as store:
        assert store.meta("battle_timeline") is None
        store.set_meta("battle_timeline", '{"boot_id":"a","offset_ns":0,"since_ns":0}')
        store.set_meta("battle_timeline", '{"boot_id":"b","offset_ns":5,"since_ns":9}')   # replaced
    with EventStore(path, read_only=True) as store:
        assert store.meta("battle_timeline") == '{"boot_id":"b","offset_ns":5,"since_ns":9}'
        assert store.schema_version() == 2


def test_the_schema_version_is_not_a_meta_value_to_set(tmp_path):
    with EventStore(tmp_path / "events.sqlite") as store:
        with pytest.raises(ValueError):
            store.set_meta("schema_version", "3")
        assert store.schema_version() == 2
