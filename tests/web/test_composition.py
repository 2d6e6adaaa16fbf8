"""One composition root (issue 24): ``web.sync.build_services`` builds and starts what runs; registering a screen's
blueprint starts nothing (the rooms' blueprint used to start the rooms service, and its NATS, when registered)."""

from __future__ import annotations

import types

from flask import Flask

from web import SCREENS, rooms


def test_registering_the_rooms_blueprint_starts_nothing(settings):
    app = Flask(__name__)
    app.config["SVOYAK_SETTINGS"] = settings
    # what the old hook looked for: a hub whose session plays battles
    app.extensions["svoyak.hub"] = types.SimpleNamespace(session=types.SimpleNamespace(battles=object()))
    app.register_blueprint(rooms.blueprint)
    assert "svoyak.rooms" not in app.extensions


def test_every_screen_is_imported_by_name_and_registered_in_order():
    names = [module.__name__ for module in SCREENS]
    assert names[0] == "web.captive"  # its redirect must see every request first
    assert len(names) == len(set(names)) and all(name.startswith("web.") for name in names)
