"""In headless Chromium: the host's taps after the box's web server restarts, cleanly or killed, are sent and
applied once each. The box is ``svoyak run --simulator`` on the same data and port (tests/web/test_held_taps_browser.py).

Before: the page keyed a tap by its command, arguments and the update number it was made on, and the number starts
again at 0 after a restart, so the first «Следующий вопрос» after a restart matched the one tapped before it: the
page showed «на связи» and the highlighted button, and a tap sent nothing at all (issue 19). Now the snapshot names
the server's run (``epoch``) and a tap is keyed by (epoch, seq).
"""

from __future__ import annotations

import re

import pytest

from appliance.store import BATTLE, EventStore
from tests.web.conftest import watch_csp
from tests.web.test_browser import STEP_MS
from tests.web.test_held_taps_browser import Box

pytestmark = pytest.mark.browser


@pytest.fixture
def box(tmp_path):
    made = Box(tmp_path)
    yield made
    made.stop()


def stored(box) -> list[tuple[str, str | None]]:
    """Every stored battle event as (type, command id)."""
    with EventStore(box.data_dir / "events.sqlite", read_only=True) as store:
        return [(type(row.event).__name__, row.command_id) for battle in store.stream_ids(BATTLE)
                for row in store.read(BATTLE, battle)]


def restart(box, host, kill: bool):
    """The server goes (SIGTERM, or SIGKILL of the whole group) and comes back; the page reconnects by itself."""
    from playwright.sync_api import expect

    box.kill() if kill else box.stop()
    expect(host.locator("#offline-banner")).to_be_visible(timeout=STEP_MS)
    box.start()
    expect(host.locator("#offline-banner")).to_be_hidden(timeout=30_000)
    expect(host.locator("body")).to_have_attribute("data-conn", "online", timeout=STEP_MS)


def test_every_tap_after_a_restart_is_sent_and_applied_once(browser, box):
    from playwright.sync_api import expect

    host = browser.new_context(viewport={"width": 1280, "height": 800}, has_touch=True).new_page()
    sim = browser.new_context(viewport={"width": 900, "height": 500}).new_page()
    errors: list = []
    for page in (host, sim):
        watch_csp(page, errors)
    frames: list[str] = []  # what the host page sent over its WebSocket
    host.on("websocket", lambda ws: ws.on("framesent", lambda payload: frames.append(str(payload))))
    host.goto(box.url + "/host")
    host.fill("#pin", box.pin)
    host.click("#login-form button")
    expect(host.locator("#setup")).to_be_visible(timeout=STEP_MS)
    host.select_option("#profile", "eurocup")
    for index, name in enumerate(["Аня", "Борис", "Вера"]):
        host.locator("#players input").nth(index).fill(name)
    host.click("#start-battle")
    expect(host.locator("#run")).to_be_visible(timeout=STEP_MS)

    def tap(name, then):
        """Tap ``name`` (enabled and highlighted as the host sees it); the page must send it and the box apply
        it: ``then`` is the event type the log gains, under the command id the page sent."""
        button = host.locator(f".controls [data-cmd={name}]").first
        expect(button).to_have_attribute("aria-disabled", "false", timeout=STEP_MS)
        sent = sum('"command"' in frame for frame in frames)
        before = stored(box)
        button.click()
        for _ in range(100):
            if len(stored(box)) > len(before):
                break
            host.wait_for_timeout(100)
        gained = stored(box)[len(before):]
        assert sum('"command"' in frame for frame in frames) == sent + 1, f"«{name}» was not sent"
        assert gained and gained[-1][0] == then, f"«{name}» was not applied: {gained}"
        assert len({command for _type, command in gained}) == 1  # one tap, one command id
        return gained[-1][1]

    first_next = tap("next", "ThemeStarted")                # update 2 of this run: the theme
    restart(box, host, kill=False)                          # a clean restart: its updates count from 0 again
    # «на связи» and the highlighted «Следующий вопрос», as the host saw it when his tap did nothing
    expect(host.locator(".controls [data-cmd=next]")).to_have_class(re.compile(r"\bexpected\b"), timeout=STEP_MS)
    second_next = tap("next", "ReadingStarted")             # the 10 and its reading: was swallowed here
    assert second_next != first_next
    restart(box, host, kill=True)                           # the worker killed: systemd starts it again
    tap("reading_done", "ReadingFinished")
    sim.goto(box.url + "/sim")
    expect(sim.locator(".sim-button")).to_have_count(3, timeout=STEP_MS)
    sim.keyboard.down("2")
    sim.keyboard.up("2")
    expect(host.locator(".host-player.answering .name")).to_have_text("Борис", timeout=STEP_MS)
    restart(box, host, kill=False)
    tap("point", "AnswererPointed")
    restart(box, host, kill=True)
    tap("right", "AnswerJudged")
    expect(host.locator(".host-player .score")).to_have_text(["0", "10", "0"], timeout=STEP_MS)
    restart(box, host, kill=False)
    tap("next", "ReadingStarted")                           # the 20
    types = [kind for kind, _command in stored(box)]
    assert types.count("ThemeStarted") == 1 and types.count("ReadingStarted") == 2
    assert types.count("AnswerJudged") == 1
    assert errors == []
