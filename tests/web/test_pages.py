"""Pages, strings and the captive portal over HTTP (Flask's test client on the app from the factory)."""

from __future__ import annotations

import re

import pytest

from appliance.service.battle_adapter import BattleAdapter
from appliance.service.session import Session
from web import SCREENS, create_app
from web.sync import Services

from .conftest import IDENTITY

BOX = {"Host": "10.42.0.1"}


@pytest.fixture
def client(settings, memory_battles):
    session = Session(memory_battles, BattleAdapter(), simulator=True).start(timer_thread=False)
    return create_app(settings, Services(session=session, identity=IDENTITY)).test_client()


@pytest.mark.parametrize("path", ["/generate_204", "/gen_204", "/hotspot-detect.html", "/library/test/success.html",
                                  "/connecttest.txt", "/ncsi.txt", "/success.txt", "/canonical.html"])
def test_connectivity_checks_lead_phones_to_the_start_page(client, path):
    for host in ("connectivitycheck.gstatic.com", "captive.apple.com", "www.msftconnecttest.com", "10.42.0.1"):
        response = client.get(path, headers={"Host": host})
        # Not the 204/"Success" the phone expects: it shows its "sign in to network" page.
        assert response.status_code == 302
        assert response.headers["Location"] == "http://10.42.0.1:8080/"


def test_an_unknown_host_is_redirected_to_the_box_and_known_ones_are_served(client):
    assert client.get("/board", headers={"Host": "example.org"}).headers["Location"] == "http://10.42.0.1:8080/"
    for host in ("10.42.0.1", "10.42.0.1:8080", "127.0.0.1:8080", "localhost", "svoyak-t3st.local", "[::1]:80"):
        assert client.get("/board", headers={"Host": host}).status_code == 200, host


def test_the_start_page_links_every_screen(client):
    page = client.get("/", headers=BOX).get_data(as_text=True)
    for href in ("/host", "/watch", "/play", "/board", "/sim", "/director/"):
        assert f'href="{href}"' in page


@pytest.mark.parametrize("path", ["/", "/host", "/board", "/watch", "/play", "/sim"])
def test_every_page_has_the_connection_indicator_and_no_outside_asset(client, path):
    page = client.get(path, headers=BOX).get_data(as_text=True)
    assert 'id="conn"' in page
    assert not re.search(r'(src|href)="(https?:)?//', page), "every asset ships with the box"


def test_pages_speak_russian_first_and_english_on_request(client):
    assert "Ведущий" in client.get("/host", headers=BOX).get_data(as_text=True)
    english = client.get("/host?lang=en", headers=BOX)
    assert "Host PIN" in english.get_data(as_text=True)
    assert "svoyak_lang=en" in english.headers["Set-Cookie"]
    assert "Host PIN" in client.get("/host", headers=BOX).get_data(as_text=True)  # the cookie remembers


def test_the_vendored_socketio_client_and_fonts_are_served(client):
    with client.get("/static/vendor/socket.io/socket.io.min.js", headers=BOX) as script:
        assert script.status_code == 200 and b"Socket.IO v4.8" in script.data[:200]
    with client.get("/static/vendor/fonts/DejaVuSans-Bold.ttf", headers=BOX) as font:
        assert font.status_code == 200


def test_the_wifi_qr_is_an_svg_made_on_the_box(client):
    response = client.get("/board/wifi.svg", headers=BOX)
    assert response.mimetype == "image/svg+xml"
    assert response.get_data(as_text=True).lstrip().startswith("<svg")


def test_the_simulator_page_exists_only_on_a_simulator(settings, memory_battles):
    box_settings = settings.replace(simulator=False)
    session = Session(memory_battles, BattleAdapter()).start(timer_thread=False)
    client = create_app(box_settings, Services(session=session, identity=IDENTITY)).test_client()
    assert client.get("/sim", headers=BOX).status_code == 404


def test_every_string_the_scripts_use_is_in_the_catalogue(client):
    """Scripts call t("key"); a key missing from the catalogue would show as itself."""
    import importlib
    from pathlib import Path

    from web.strings import default_catalogue

    catalogue = default_catalogue(*(importlib.import_module(name) for name in SCREENS))
    static = Path(__file__).resolve().parents[2] / "web" / "static" / "js"
    used = set()
    for script in static.glob("*.js"):
        used |= set(re.findall(r'\b(?:t|word)\("([a-z_]+\.[a-z_.]+)"[,)]', script.read_text(encoding="utf-8")))
    assert used and sorted(key for key in used if key not in catalogue) == []
    shipped = catalogue.for_language("ru")["messages"]  # what a page embeds (appliance.words.SERVER_ONLY left out)
    assert sorted(key for key in used if key not in shipped) == []
