"""In headless Chromium: a host tap made while the box is down is held, shown after the reconnect, and applied
only if the host says so. The box is ``svoyak run --simulator`` (web server and capture service), SIGKILLed
mid-question and started again on the same data and port, as systemd would after a crash.

Before: a «Верно» tapped while the box was down was resent by the page and applied after the restart, seconds
later, with nobody deciding it (issue 10)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from appliance.store import BATTLE, EventStore
from tests.web.conftest import watch_csp
from tests.support.serving import ROOT, free_port, wait_http
from tests.web.test_browser import STEP_MS, shot

pytestmark = pytest.mark.browser


class Box:
    """``svoyak run --simulator`` that can be killed and started again on the same port and data."""

    def __init__(self, data_dir):
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        (data_dir / "none.toml").write_text("")
        self.process = None
        self.start()
        self.pin = json.loads((data_dir / "identity.json").read_text())["host_pin"]

    def start(self):
        env = {**os.environ, "SVOYAK_DATA_DIR": str(self.data_dir), "SVOYAK_CONFIG": str(self.data_dir / "none.toml")}
        log = open(self.data_dir / "run.log", "a")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "svoyak.cli", "run", "--simulator", "--port", str(self.port)],
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT)
        log.close()
        wait_http(self.url + "/board", self.process)

    def kill(self):
        os.killpg(self.process.pid, signal.SIGKILL)  # the web server and the capture process, no goodbye
        self.process.wait(timeout=15)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()

    def stored_types(self) -> list[str]:
        with EventStore(self.data_dir / "events.sqlite", read_only=True) as store:
            return [type(event).__name__ for battle in store.stream_ids(BATTLE)
                    for event in store.events(BATTLE, battle)]


@pytest.fixture
def box(tmp_path):
    made = Box(tmp_path)
    yield made
    made.stop()


def test_a_tap_made_while_the_box_was_down_waits_for_the_host_after_the_restart(browser, box):
    from playwright.sync_api import expect

    host = browser.new_context(viewport={"width": 1280, "height": 800}, has_touch=True).new_page()
    sim = browser.new_context(viewport={"width": 900, "height": 500}).new_page()
    errors = []  # script errors and Content-Security-Policy violations
    for page in (host, sim):
        watch_csp(page, errors)
    host.goto(box.url + "/host")
    host.fill("#pin", box.pin)
    host.click("#login-form button")
    expect(host.locator("#setup")).to_be_visible(timeout=STEP_MS)
    host.select_option("#profile", "eurocup")
    for index, name in enumerate(["Аня", "Борис", "Вера"]):
        host.locator("#players input").nth(index).fill(name)
    host.click("#start-battle")
    expect(host.locator("#run")).to_be_visible(timeout=STEP_MS)

    def tap(name):
        button = host.locator(f".controls [data-cmd={name}]").first
        expect(button).to_have_attribute("aria-disabled", "false", timeout=STEP_MS)
        seq = host.locator("body").get_attribute("data-seq")
        button.click()
        expect(host.locator("body")).not_to_have_attribute("data-seq", seq or "", timeout=STEP_MS)

    tap("next")                                             # the theme
    tap("next")                                             # 10, reading
    sim.goto(box.url + "/sim")
    expect(sim.locator(".sim-button")).to_have_count(3, timeout=STEP_MS)
    sim.keyboard.down("2")
    sim.keyboard.up("2")
    expect(host.locator(".host-player.answering .name")).to_have_text("Борис", timeout=STEP_MS)
    tap("point")
    expect(host.locator(".controls [data-cmd=right]")).to_have_attribute("aria-disabled", "false")

    box.kill()                                              # the box dies while Борис answers
    expect(host.locator("#offline-banner")).to_be_visible(timeout=STEP_MS)
    host.locator(".controls [data-cmd=right]").click()      # «Верно», tapped while the box is down
    held = host.locator("#held")
    expect(held.locator("li[data-cmd=right] .what")).to_have_text("Верно", timeout=STEP_MS)
    expect(held.locator("button.apply")).to_be_disabled()
    shot(host, "held-1-box-down")

    box.start()                                             # systemd starts it again
    expect(host.locator("#offline-banner")).to_be_hidden(timeout=30_000)
    expect(held.locator("button.apply")).to_be_enabled(timeout=STEP_MS)
    expect(held).to_contain_text("Нажато, пока не было связи с боксом")
    shot(host, "held-2-after-restart")
    # the battle came back as it was, and the tap was NOT applied on its own
    expect(host.locator(".host-player.answering .name")).to_have_text("Борис", timeout=STEP_MS)
    expect(host.locator(".host-player .score")).to_have_text(["0", "0", "0"])
    assert "AnswerJudged" not in box.stored_types()

    held.locator("button.drop").click()                     # the host decides: not this one
    expect(held).to_be_hidden()
    assert "AnswerJudged" not in box.stored_types()
    expect(host.locator(".host-player .score")).to_have_text(["0", "0", "0"])

    # Offline again, «Минус» held; back online the host applies it: applied once.
    host.context.set_offline(True)
    expect(host.locator("#offline-banner")).to_be_visible(timeout=STEP_MS)
    host.locator(".controls [data-cmd=wrong]").click()
    expect(held.locator("li[data-cmd=wrong]")).to_be_visible(timeout=STEP_MS)
    host.context.set_offline(False)
    expect(held.locator("button.apply")).to_be_enabled(timeout=30_000)
    held.locator("button.apply").click()
    expect(host.locator(".host-player .score")).to_have_text(["0", "-10", "0"], timeout=STEP_MS)
    assert box.stored_types().count("AnswerJudged") == 1
    assert errors == []
