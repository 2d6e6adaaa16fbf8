"""In headless Chromium: «Отменить» after «Следующий вопрос» takes the whole tap back, and the host's controls say so,
also after the page reconnects.

Before: the undo took back the reading's start and left the price: every button was disabled, «Вернуть» hidden,
and a second undo was needed (issue 19). Now the undo takes back every event the command stored.
"""

from __future__ import annotations

import re

import pytest

from appliance.store import BATTLE
from tests.web.conftest import PIN, watch_csp
from tests.web.test_browser import STEP_MS

pytestmark = pytest.mark.browser


def test_undo_of_next_takes_back_the_price_and_its_reading_and_offers_it_back(browser, session_server):
    from playwright.sync_api import expect

    host = browser.new_context(viewport={"width": 1280, "height": 800}, has_touch=True).new_page()
    errors: list = []
    watch_csp(host, errors)
    host.goto(session_server.url + "/host")
    host.fill("#pin", PIN)
    host.click("#login-form button")
    expect(host.locator("#setup")).to_be_visible(timeout=STEP_MS)
    host.select_option("#profile", "eurocup")
    for index, name in enumerate(["Аня", "Борис", "Вера"]):
        host.locator("#players input").nth(index).fill(name)
    host.click("#start-battle")
    expect(host.locator("#run")).to_be_visible(timeout=STEP_MS)
    control = lambda name: host.locator(f".controls [data-cmd={name}]").first  # noqa: E731

    def tap(name):
        expect(control(name)).to_have_attribute("aria-disabled", "false", timeout=STEP_MS)
        seq = host.locator("body").get_attribute("data-seq")
        control(name).click()
        expect(host.locator("body")).not_to_have_attribute("data-seq", seq or "", timeout=STEP_MS)

    tap("next")                                              # the theme
    tap("next")                                              # the 10, and its reading
    expect(host.locator("#question-title .price")).to_have_text("10")
    expect(host.locator("#undo-what")).to_have_text("объявление цены 10")  # said before: the whole tap
    tap("undo")

    def as_before_the_tap():
        """Between questions again: «Следующий вопрос» enabled and highlighted, «Вернуть» offered."""
        expect(host.locator("#question-title .price")).to_have_count(0, timeout=STEP_MS)
        expect(control("next")).to_have_attribute("aria-disabled", "false", timeout=STEP_MS)
        expect(control("next")).to_have_class(re.compile(r"\bexpected\b"))
        expect(control("reading_done")).to_have_attribute("aria-disabled", "true")
        expect(host.locator("#undo-bar")).to_be_visible()
        expect(host.locator("#undo-text")).to_have_text("Отменено: объявление цены 10")
        expect(host.locator("#undo-redo")).to_be_visible()
        expect(host.locator("#undo-redo")).to_have_text("Вернуть")

    as_before_the_tap()
    session = session_server.session
    types = [type(event).__name__ for event in session.battles.store.events(BATTLE, session.battle_id)]
    assert types[-2:] == ["ActionUndone", "ActionUndone"] and types.count("PriceAnnounced") == 1

    host.context.set_offline(True)                           # the page reconnects: the same controls
    expect(host.locator("#offline-banner")).to_be_visible(timeout=STEP_MS)
    host.context.set_offline(False)
    expect(host.locator("body")).to_have_attribute("data-conn", "online", timeout=30_000)
    as_before_the_tap()

    host.click("#undo-redo")                                 # «Вернуть»: the 10 and its reading again
    expect(host.locator("#question-title .price")).to_have_text("10", timeout=STEP_MS)
    expect(control("reading_done")).to_have_attribute("aria-disabled", "false", timeout=STEP_MS)
    expect(host.locator("#undo-bar")).to_be_hidden()
    assert errors == []
