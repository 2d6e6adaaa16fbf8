"""Pairing names a new box only (issue 19): a code pairs one box; an already paired box id (public, on
``/lobby.json``) is refused unless the director re-pairs it on the desk, which rotates its credential (the real
nats-server's side, the old password cut, is tests/web/test_rooms_pages.py's)."""

from __future__ import annotations


import pytest

from appliance.service.rooms.protocol import PairingError
from appliance.service.rooms.roles import PAIRING_TRIES, AlreadyPairedError, Roles


def _hub(tmp_path) -> Roles:
    roles = Roles(tmp_path / "roles")
    roles.set_role("hub", "Стол")
    return roles


def test_a_code_pairs_one_box_and_is_then_used_up(tmp_path):
    roles = _hub(tmp_path)
    code = roles.new_code()
    first = roles.pair(code, "room2", "Комната 2")
    with pytest.raises(PairingError, match="stale"):
        roles.pair(code, "room3", "Комната 3")  # the same code again: used up
    other = roles.pair(roles.new_code(), "room3", "Комната 3")
    assert first.password != other.password
    assert set(Roles(tmp_path / "roles").stations()) == {"room2", "room3"}


def test_an_already_paired_id_is_refused_in_words_and_nothing_changes(tmp_path):
    roles = _hub(tmp_path)
    honest = roles.pair(roles.new_code(), "room2", "Комната 2")
    code = roles.new_code()  # live for the next box; an attacker names room2's public id
    with pytest.raises(AlreadyPairedError) as refused:
        roles.pair(code, "room2", "Чужой")
    assert "already paired" in str(refused.value)  # the log's words; the pages word its code (web/rooms.py)
    assert refused.value.code == "already_paired" and refused.value.params["box"] == "room2"
    kept = Roles(tmp_path / "roles").stations()["room2"]
    assert (kept.password, kept.name) == (honest.password, "Комната 2")  # no password given, no rename
    assert roles.pair(code, "room4", "Комната 4").box_id == "room4"  # the code still pairs the box it was for


def test_guessing_paired_ids_costs_tries_like_wrong_codes(tmp_path):
    roles = _hub(tmp_path)
    roles.pair(roles.new_code(), "room2", "")
    code = roles.new_code()
    for _ in range(PAIRING_TRIES):
        with pytest.raises(AlreadyPairedError):
            roles.pair(code, "room2", "")
    with pytest.raises(PairingError, match="stale"):
        roles.pair(code, "room5", "")


def test_a_re_paired_station_takes_a_new_credential_with_one_code(tmp_path):
    roles = _hub(tmp_path)
    old = roles.pair(roles.new_code(), "room2", "Комната 2")
    with pytest.raises(PairingError, match="not paired"):
        roles.repair("room9")
    roles.repair("room2")
    rotated = roles.stations()["room2"].password
    assert rotated != old.password  # cut at once: the server is given the new one before anyone pairs
    again = roles.pair(roles.new_code(), "room2", "Комната 2 (новый бокс)")
    assert (again.password, again.name) == (rotated, "Комната 2 (новый бокс)")
    with pytest.raises(AlreadyPairedError):
        roles.pair(roles.new_code(), "room2", "")  # once: a second pairing needs another re-pair
