"""The director's desk in a real browser (Chromium via Playwright): keyboard-only written-round entry (number,
Enter, marks, Enter); a refusal shown on its own form; the registration page's field warning.

Screenshots go to ``artifacts/director/`` (ignored by git)."""

from __future__ import annotations

import pathlib
import threading
import types

import pytest

from web import create_app
from web.sync import Services

from .conftest import watch_csp

pytestmark = pytest.mark.browser
playwright = pytest.importorskip("playwright.sync_api")
ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "artifacts" / "director"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


class FakeSession:
    battles = None

    def subscribe(self, callback):
        self.callback = callback


@pytest.fixture
def server(settings):
    from werkzeug.serving import make_server

    identity = types.SimpleNamespace(host_pin="8642", director_pin="2468", hotspot_ssid="S", hotspot_password="p" * 10, box_name="b")
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
        violations = watch_csp(page)
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
            # locator waits, not wait_for_function: that one evaluates a string, which the page's CSP forbids
            playwright.expect(page.locator("#echo")).to_contain_text(f"Игрок {number - 1}")
            playwright.expect(page.locator("#player")).to_have_value("")
        page.keyboard.type("5")
        page.keyboard.press("Enter")
        page.keyboard.type("+++")
        page.keyboard.press("Enter")
        assert "3 ≠ 60" in page.inner_text("#echo")  # a short sheet is refused before it is sent
        page.fill("#marks", "+" * 59 + "?")
        page.keyboard.press("Enter")
        playwright.expect(page.locator("#echo")).to_contain_text("непонятные отметки")
        assert "unknown marks" not in page.inner_text("#echo")  # the server's refusal, in the page's language only
        rows = page.locator("#entered tr").count()
        browser.close()
    assert violations == []  # the pages' Content-Security-Policy: no inline script ran or was blocked
    assert rows == 1 + len(sheets)
    with app.app_context():
        stored = desk().state(tid).sheets["written"]
    assert {k: v for k, v in stored.items()} == {f"p{n:03d}": m for n, m in sheets.items()}


def test_refusals_on_their_form_and_the_field_warning_in_the_browser(server):
    app, base = server
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        violations = watch_csp(page)
        page.goto(f"{base}/director/")
        page.fill("input[name=pin]", "2468")
        page.keyboard.press("Enter")
        page.wait_for_selector("#new-tournament")
        assert page.locator("#conn").count() == 0  # no socket here, so no connection pill
        page.screenshot(path=str(ARTIFACTS / "home.png"), full_page=True)
        page.select_option("#new-tournament select[name=preset]", "irkutsk")
        page.fill("#new-tournament input[name=title]", "Кубок БГУЭП")
        page.click("#new-tournament button")
        page.wait_for_selector("#add-player")
        page.fill("#add-list textarea", "\n".join(f"Игрок {i}; Команда {i}" for i in range(18)))
        page.click("#add-list button")
        page.wait_for_selector("#field-check")
        assert "нужно не меньше 27" in page.inner_text("#field-check")
        page.screenshot(path=str(ARTIFACTS / "registration_warning.png"), full_page=True)
        page.fill("#add-player input[name=team]", "Сибиряки")
        page.click("#add-player button")  # no name
        page.wait_for_selector("#desk-error")
        assert page.inner_text("#desk-error .ru") == "У игрока должно быть имя"
        assert page.input_value("#add-player input[name=team]") == "Сибиряки"
        page.screenshot(path=str(ARTIFACTS / "registration_error.png"), full_page=True)
        page.click("nav.tabs a >> nth=0")
        page.click("#close-registration button")
        page.fill("#draw input[name=seed]", "7")
        page.click("#draw button")
        page.wait_for_selector("#desk-error")
        assert "Игроков 18, а нужно не меньше 27" in page.inner_text("#desk-error")
        assert page.input_value("#draw input[name=seed]") == "7"
        page.screenshot(path=str(ARTIFACTS / "draw_error.png"), full_page=True)
        browser.close()
    assert violations == []
