"""Every page of the box in Chromium under its Content-Security-Policy (issue 10: CSP without inline script): each
screen's scripts are files, its settings a JSON block, so no page reports a blocked inline script or handler, a
script error, or an asset it could not load. The pages are opened as their users reach them: the host and the
director after their PIN pages, a battle on the box (its protocol), a drawn tournament (every desk page)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import DIRECTOR_PIN, PIN

pytestmark = pytest.mark.browser
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
STEP_MS = 10_000


def test_every_page_loads_under_the_csp_with_no_script_error(server):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (./dev test installs it)")
    battle_id = server.session.command("setup", {"profile": "eurocup", "players": ["Аня", "Борис", "Вера"],
                                                 "themes": 4}, "pages-setup")["battle_id"]
    desk = server.app.extensions["svoyak.tournaments"]
    tid = desk.create("youth-cup", "Кубок", seed=1)
    for i in range(60):
        desk.register(tid, f"Игрок {i}")
    desk.draw(tid, seed=1)
    first = next(iter(desk.state(tid).battles))
    pages = ["/", "/board", "/watch", "/play", "/sim", "/overlay", "/overlay?layout=scores", "/lobby", "/room", "/nope",
             f"/battles/{battle_id}/protocol", f"/table/{tid}",
             "/director/", f"/director/{tid}/", f"/director/{tid}/registration", f"/director/{tid}/seeding",
             f"/director/{tid}/bracket", f"/director/{tid}/print", f"/director/{tid}/sheets/written",
             f"/director/{tid}/themes/{first.split('/')[0]}", f"/director/{tid}/battle/{first}",
             "/director/rooms", "/director/rooms/join/10.42.0.1/012345", "/director/no-such-tournament/"]
    problems: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        page.on("pageerror", lambda error: problems.append(f"{page.url}: script error {error}"))
        page.on("response", lambda response: response.status >= 400 and "/nope" not in response.url
                and "no-such-tournament" not in response.url and problems.append(f"{response.status} {response.url}"))
        page.on("console", lambda message: ("Content Security Policy" in message.text or "Refused to" in message.text)
                and problems.append(f"{page.url}: {message.text}"))
        # The PIN pages first, as their users meet them (the host's and the director's own).
        page.goto(server.url + "/host")
        page.fill("#pin", PIN)
        page.click("#login-form button")
        sync_api.expect(page.locator("#run")).to_be_visible(timeout=STEP_MS)
        page.goto(server.url + "/director/login")
        page.fill("input[name=pin]", DIRECTOR_PIN)
        page.keyboard.press("Enter")
        sync_api.expect(page.locator("#new-tournament")).to_be_visible(timeout=STEP_MS)
        seen = {}
        for path in pages:
            response = page.goto(server.url + path)
            page.wait_for_load_state("load")
            seen[path] = response.status
        page.wait_for_timeout(300)  # a page's late script (a socket's first snapshot) reports too
        browser.close()
    assert problems == []
    assert {path: status for path, status in seen.items() if status != 200} == {
        "/nope": 404, "/director/no-such-tournament/": 404}
