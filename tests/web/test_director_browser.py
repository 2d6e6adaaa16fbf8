"""Keyboard-only written-round entry in a real browser (Chromium via Playwright): number, Enter, marks, Enter."""

from __future__ import annotations

import threading
import types

import pytest

from web import create_app
from web.sync import Services

pytestmark = pytest.mark.browser
playwright = pytest.importorskip("playwright.sync_api")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


class FakeSession:
    battles = None

    def subscribe(self, callback):
        self.callback = callback


@pytest.fixture
def server(settings):
    from werkzeug.serving import make_server

    identity = types.SimpleNamespace(host_pin="2468", hotspot_ssid="S", hotspot_password="p" * 10, box_name="b")
    app = create_app(settings, Services(session=FakeSession(), identity=identity))
    http = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    yield app, f"http://127.0.0.1:{http.server_port}"
    http.shutdown()
    thread.join()


def test_sheets_typed_with_the_keyboard_only(server):
    from web.director import desk

    app, base = server
    with app.app_context():
        tournaments = desk()
        tid = tournaments.create("youth-cup", "Кубок", seed=1)
        for i in range(60):
            tournaments.register(tid, f"Игрок {i}")
        tournaments.draw(tid, seed=1)
    sheets = {3: "+" * 10 + "-" * 5 + "0" * 45, 7: "2x.=+" * 12, 12: "+" * 60}
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(f"{base}/director/{tid}/sheets/written")
        page.fill("input[name=pin]", "2468")
        page.keyboard.press("Enter")
        page.wait_for_selector("#player")
        page.focus("#player")
        for number, marks in sheets.items():
            page.keyboard.type(str(number))
            page.keyboard.press("Enter")
            page.keyboard.type(marks)
            page.keyboard.press("Enter")
            page.wait_for_function("document.getElementById('player').value === '' && "
                                   f"document.getElementById('echo').textContent.includes('Игрок {number - 1}')")
        page.keyboard.type("5")
        page.keyboard.press("Enter")
        page.keyboard.type("+++")
        page.keyboard.press("Enter")
        assert "3 ≠ 60" in page.inner_text("#echo")  # a short sheet is refused before it is sent
        rows = page.locator("#entered tr").count()
        browser.close()
    assert rows == 1 + len(sheets)
    with app.app_context():
        stored = desk().state(tid).sheets["written"]
    assert {k: v for k, v in stored.items()} == {f"p{n:03d}": m for n, m in sheets.items()}
