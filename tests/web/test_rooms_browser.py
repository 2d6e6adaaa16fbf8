"""The rooms' pages in a real browser (Chromium via Playwright), two real boxes in this process on loopback: the
desk shows its pairing code and QR code; the station's tablet opens the link the QR code holds, logs in, taps
once and is paired (its nats-server joins the hub's as a leaf); the desk's rooms view and the hall's lobby then
show the room; no page raises a script error.

Screenshots go to ``artifacts/rooms/`` (ignored by git)."""

from __future__ import annotations

import pathlib
import re
import threading
import time

import pytest

from tests.web.conftest import DIRECTOR_PIN
from tests.web.test_rooms_pages import Box

pytestmark = pytest.mark.browser
playwright = pytest.importorskip("playwright.sync_api")
ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "artifacts" / "rooms"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


class Served:
    def __init__(self, box: Box) -> None:
        from werkzeug.serving import make_server

        self.box = box
        self.http = make_server("127.0.0.1", 0, box.app, threaded=True)
        self.address = f"127.0.0.1:{self.http.server_port}"
        self.url = f"http://{self.address}"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.http.shutdown()
        self.thread.join(timeout=5)


@pytest.fixture
def venue(tmp_path, recording_capture):
    (tmp_path / "hub").mkdir()
    (tmp_path / "room").mkdir()
    hub = Served(Box(tmp_path / "hub", recording_capture, role="hub"))
    room = Served(Box(tmp_path / "room", recording_capture))
    yield hub, room
    for served in (room, hub):
        served.close()
        served.box.close()


def _login(page, url: str) -> None:
    page.goto(url)
    if page.locator("input[name=pin]").count():
        page.fill("input[name=pin]", DIRECTOR_PIN)
        page.keyboard.press("Enter")
        page.wait_for_load_state()


def test_a_station_pairs_from_the_link_of_the_desks_qr_code(venue):
    hub, room = venue
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        director = browser.new_page(viewport={"width": 1280, "height": 900})
        director.on("pageerror", lambda error: errors.append(str(error)))
        _login(director, f"{hub.url}/director/rooms")
        director.click("text=Подключить станцию")
        director.wait_for_selector("#pair-qr")
        code = director.inner_text("#pair-code")
        assert re.fullmatch(r"\d{6}", code)
        # the SVG loads and draws (same origin, no script)
        drawn = "(() => { const img = document.getElementById('pair-qr'); return !!img && img.complete" \
                " && img.naturalWidth > 0; })()"
        for _ in range(40):  # the page refreshes itself every 3 s: ask again rather than wait across a reload
            try:
                if director.evaluate(drawn):
                    break
            except playwright.Error:
                pass
            time.sleep(0.5)
        else:
            raise AssertionError("the pairing QR code never drew")
        director.screenshot(path=str(ARTIFACTS / "desk-pairing.png"), full_page=True)

        # The room's tablet: the link the QR code holds, with the station's address where this test serves it.
        from web.rooms import pairing_link

        tablet = browser.new_page(viewport={"width": 800, "height": 1280})
        tablet.on("pageerror", lambda error: errors.append(str(error)))
        _login(tablet, pairing_link(room.address, hub.address, code))
        assert tablet.input_value("input[name=hub]") == hub.address
        assert tablet.input_value("input[name=code]") == code
        tablet.screenshot(path=str(ARTIFACTS / "station-join.png"), full_page=True)
        tablet.click("#pair-form button")
        tablet.wait_for_load_state()
        assert room.box.rooms.role == "station" and room.box.rooms.station is not None
        tablet.screenshot(path=str(ARTIFACTS / "station-paired.png"), full_page=True)

        # The desk's rooms view names the room; it comes online once its heartbeats cross the leaf.
        name = room.box.rooms.roles.name
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            director.goto(f"{hub.url}/director/rooms")
            row = director.locator("table.rooms tr", has_text=name)
            if row.count() and "online" in (row.first.get_attribute("class") or ""):
                break
            time.sleep(1)
        else:
            raise AssertionError("the paired station never came online on the desk")
        director.screenshot(path=str(ARTIFACTS / "desk-rooms.png"), full_page=True)

        hall = browser.new_page(viewport={"width": 1920, "height": 1080})
        hall.on("pageerror", lambda error: errors.append(str(error)))
        hall.goto(f"{hub.url}/lobby")
        assert hall.locator("article.room", has_text=name).count() == 1
        hall.screenshot(path=str(ARTIFACTS / "lobby.png"), full_page=True)
        browser.close()
    assert errors == []
