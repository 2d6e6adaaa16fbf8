"""First boot makes the box's identity once; later runs read the same one back; settings win."""

from __future__ import annotations

import json
import stat

import pytest

from appliance.errors import ConfigError
from appliance.service import identity


def test_identity_is_made_once_and_kept(settings):
    first = identity.load_or_create(settings)
    assert first == identity.load_or_create(settings)
    assert len(first.host_pin) == 6 and first.host_pin.isdigit()  # 6 digits: docs/security.md sizes the guess budget by it
    assert 8 <= len(first.hotspot_password) <= 63
    path = settings.data_dir / identity.IDENTITY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["hotspot_ssid"] == first.hotspot_ssid


def test_two_boxes_differ():
    assert identity.make() != identity.make()


def test_settings_override_the_file(settings):
    identity.load_or_create(settings)
    assert identity.load_or_create(settings.replace(host_pin="2468")).host_pin == "2468"


def test_a_corrupt_identity_file_is_a_clear_error(settings):
    (settings.data_dir / identity.IDENTITY_FILE).write_text("{not json")
    with pytest.raises(ConfigError, match="not a valid identity file"):
        identity.load_or_create(settings)


def test_the_session_secret_is_made_once_and_added_to_an_older_file(settings):
    first = identity.load_or_create(settings)
    assert len(first.session_secret) == 64
    assert identity.load_or_create(settings).session_secret == first.session_secret
    path = settings.data_dir / identity.IDENTITY_FILE
    older = json.loads(path.read_text())
    del older["session_secret"]
    path.write_text(json.dumps(older))
    upgraded = identity.load_or_create(settings)
    assert len(upgraded.session_secret) == 64 and upgraded.host_pin == first.host_pin
    assert json.loads(path.read_text())["session_secret"] == upgraded.session_secret


def test_the_director_pin_is_its_own_made_once_and_added_to_an_older_file(settings):
    # issue 12: the director has a PIN of its own, so a room's host cannot reach the desk.
    first = identity.load_or_create(settings)
    assert len(first.director_pin) == 6 and first.director_pin.isdigit()
    assert not first.director_pin.startswith(first.host_pin)
    path = settings.data_dir / identity.IDENTITY_FILE
    older = json.loads(path.read_text())
    del older["director_pin"]
    path.write_text(json.dumps(older))
    upgraded = identity.load_or_create(settings)
    assert len(upgraded.director_pin) == 6 and upgraded.host_pin == first.host_pin
    assert json.loads(path.read_text())["director_pin"] == upgraded.director_pin
    assert identity.load_or_create(settings.replace(director_pin="97531")).director_pin == "97531"
    with pytest.raises(ConfigError, match="director_pin must differ from host_pin"):
        identity.load_or_create(settings.replace(host_pin="2468", director_pin="2468"))


def test_the_console_names_every_screen_and_both_pins(settings):
    from svoyak.commands.serve import describe

    box = identity.load_or_create(settings)
    text = describe(settings)
    assert f"host PIN {box.host_pin}" in text and f"director PIN {box.director_pin}" in text
    urls = {word for line in text.splitlines() for word in line.split() if word.startswith("http://")}
    assert {url.split(f":{settings.web_port}", 1)[1] for url in urls} >= {"/host", "/board", "/watch", "/play",
                                                                           "/director/"}
