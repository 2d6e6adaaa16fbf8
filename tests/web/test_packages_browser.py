"""In headless Chromium against ``svoyak run --simulator``: a .siq uploaded on /packages, a battle set up from it
on the host page, the question's text and answer beside the host's controls, the theme's name on the board and
no question text there, then the answer on the board once the host shows it (issue 15)."""

from __future__ import annotations

import pytest

from tests.appliance.packages.conftest import sport_siq
from tests.web.test_browser import STEP_MS, shot
from tests.web.test_held_taps_browser import box  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser


def test_a_siq_uploaded_on_packages_is_read_by_the_host_and_named_on_the_board(browser, box, tmp_path):  # noqa: F811
    from playwright.sync_api import expect

    errors = []
    siq = tmp_path / "кубок.siq"
    siq.write_bytes(sport_siq(6))

    # Upload on /packages (the host's PIN).
    manager = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    manager.on("pageerror", lambda error: errors.append(str(error)))
    watch_csp(manager, errors)
    manager.goto(box.url + "/packages")
    manager.fill("input[name=pin]", box.pin)
    manager.click("form.login button")
    manager.set_input_files("#upload input[type=file]", str(siq))
    manager.click("#upload button")
    expect(manager.locator("#packages-note")).to_contain_text("Пакет «Кубок двора» загружен: 6 тем, 30 вопросов",
                                                              timeout=STEP_MS)
    expect(manager.locator("table.packages-list tbody tr")).to_have_count(1)
    shot(manager, "packages-1-uploaded")

    # The host sets up a battle from it: the next unplayed themes, the sixth kept as the shoot-out's.
    host = browser.new_context(viewport={"width": 1280, "height": 800}, has_touch=True).new_page()
    host.on("pageerror", lambda error: errors.append(str(error)))
    watch_csp(host, errors)
    board = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
    board.on("pageerror", lambda error: errors.append(str(error)))
    watch_csp(board, errors)
    board.goto(box.url + "/board")
    host.goto(box.url + "/host")
    host.fill("#pin", box.pin)
    host.click("#login-form button")
    expect(host.locator("#setup")).to_be_visible(timeout=STEP_MS)
    host.select_option("#profile", "eurocup")
    for index, name in enumerate(["Аня", "Борис", "Вера"]):
        host.locator("#players input").nth(index).fill(name)
    expect(host.locator("#package option")).to_have_count(2, timeout=STEP_MS)
    host.select_option("#package", label="Кубок двора · 6")
    host.locator("#package-themes select").nth(5).select_option("spare")
    # one spare theme is «запасная:», not «запасные:» (issue 20), by the catalogue's plural forms in the script
    expect(host.locator("#package-hint")).to_contain_text("; запасная: Тема номер 6")
    shot(host, "packages-2-setup")
    host.click("#start-battle")
    expect(host.locator("#run")).to_be_visible(timeout=STEP_MS)

    def tap(name):
        button = host.locator(f".controls [data-cmd={name}]").first
        expect(button).to_have_attribute("aria-disabled", "false", timeout=STEP_MS)
        seq = host.locator("body").get_attribute("data-seq")
        button.click()
        expect(host.locator("body")).not_to_have_attribute("data-seq", seq or "", timeout=STEP_MS)

    reading = host.locator("#reading")
    expect(reading).to_contain_text("Вопрос 1.1 о теме 1.", timeout=STEP_MS)  # ready before the theme starts
    tap("next")                                             # the theme
    expect(board.locator("#board-theme")).to_have_text("Тема номер 1", timeout=STEP_MS)
    tap("next")                                             # 10, reading
    expect(reading.locator(".text").first).to_have_text("Вопрос 1.1 о теме 1.", timeout=STEP_MS)
    expect(reading.locator(".answer").first).to_have_text("Ответ: Ответ 1.1")
    expect(reading).to_contain_text("Комментарий 1.1")
    expect(reading).to_contain_text("Источник 1.1")
    expect(reading.locator(".next")).to_contain_text("Вопрос 1.2 о теме 1.")
    font_px = float(reading.locator(".text").first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))
    assert font_px >= 24  # large type: read at arm's length from a tablet
    expect(board.locator("#board-price")).to_have_text("10", timeout=STEP_MS)
    board_text = board.locator("body").inner_text()
    assert "Вопрос 1.1" not in board_text and "Ответ 1.1" not in board_text
    shot(host, "packages-3-reading")
    shot(board, "packages-4-board-theme")

    # Борис answers right; the answer goes on the board when the host shows it, and not before.
    sim = browser.new_context(viewport={"width": 900, "height": 500}).new_page()
    sim.goto(box.url + "/sim")
    expect(sim.locator(".sim-button")).to_have_count(3, timeout=STEP_MS)
    tap("reading_done")
    sim.keyboard.down("2")
    sim.keyboard.up("2")
    expect(host.locator(".host-player.answering .name")).to_have_text("Борис", timeout=STEP_MS)
    tap("point")
    tap("right")
    expect(host.locator("#show-answer")).to_be_visible(timeout=STEP_MS)
    assert "Ответ 1.1" not in board.locator("body").inner_text()
    host.click("#show-answer")
    expect(board.locator("#board-answer-text")).to_have_text("Ответ 1.1", timeout=STEP_MS)
    assert "Вопрос 1.1" not in board.locator("body").inner_text()
    shot(board, "packages-5-board-answer")

    # The list says the themes are played now (the spare one is kept for this battle too).
    manager.goto(box.url + "/packages")
    cells = manager.locator("table.packages-list tbody tr td")
    expect(cells.nth(5)).to_have_text("5")
    # Every packages page under the Content-Security-Policy: no blocked script, no script error, no failed load.
    package_id = manager.locator("table.packages-list tbody tr").first.get_attribute("data-package")
    for path in (f"/packages/{package_id}", f"/packages/{package_id}/written/sheets?copies=2&themes=1,2,3",
                 f"/packages/{package_id}/written/key?themes=1,2,3", f"/packages/{package_id}/delete"):
        response = manager.goto(box.url + path)
        manager.wait_for_load_state("load")
        assert response.status == 200, path
    assert errors == []


def watch_csp(page, errors):
    page.on("console", lambda message: ("Content Security Policy" in message.text or "Refused to" in message.text)
            and errors.append(f"{page.url}: {message.text}"))
    page.on("response", lambda response: response.status >= 400 and errors.append(f"{response.status} {response.url}"))


def test_a_final_round_is_marked_and_never_played_as_an_ordinary_theme_and_theme_authors_are_shown(
        browser, box, tmp_path):  # noqa: F811
    """SIGame's final round is shown as such on the setup form and the preview, the next unplayed skip it, and
    the theme's author is on the host's reading view (issue 19)."""
    from playwright.sync_api import expect

    from tests.appliance.packages.conftest import final_round_siq

    errors = []
    siq = tmp_path / "финал.siq"
    siq.write_bytes(final_round_siq(5))
    host = browser.new_context(viewport={"width": 1280, "height": 800}, has_touch=True).new_page()
    host.on("pageerror", lambda error: errors.append(str(error)))
    watch_csp(host, errors)
    host.goto(box.url + "/packages")
    host.fill("input[name=pin]", box.pin)
    host.click("form.login button")
    host.set_input_files("#upload input[type=file]", str(siq))
    host.click("#upload button")
    expect(host.locator("#packages-note")).to_contain_text("Игра с финалом", timeout=STEP_MS)
    package_id = host.locator("table.packages-list tbody tr").first.get_attribute("data-package")
    host.goto(box.url + f"/packages/{package_id}")
    expect(host.locator("#theme-4 .final-mark")).to_contain_text("финальный раунд")
    expect(host.locator("#theme-1")).to_contain_text("Автор темы: Иван Петров")

    host.goto(box.url + "/host")  # logged in on /packages: one login per device (web/auth.py)
    expect(host.locator("#setup")).to_be_visible(timeout=STEP_MS)
    host.select_option("#profile", "eurocup")
    for index, name in enumerate(["Аня", "Борис", "Вера"]):
        host.locator("#players input").nth(index).fill(name)
    expect(host.locator("#package option")).to_have_count(2, timeout=STEP_MS)
    host.select_option("#package", label="Игра с финалом · 6")
    final = host.locator("#package-themes li").nth(3)
    expect(final).to_contain_text("Космос (финальный раунд)")
    expect(host.locator("#package-hint")).to_contain_text("Реки, Города, Числа")
    assert "Космос" not in host.locator("#package-hint").inner_text()
    host.check("input[name=package-how][value=chosen]")
    assert final.locator("option").all_inner_texts() == ["—", "запасная (перестрелка)"]
    host.check("input[name=package-how][value=next]")
    shot(host, "packages-6-final-round")
    host.click("#start-battle")
    expect(host.locator("#run")).to_be_visible(timeout=STEP_MS)
    for _ in range(2):  # the theme, then its first price and the reading
        button = host.locator(".controls [data-cmd=next]").first
        expect(button).to_have_attribute("aria-disabled", "false", timeout=STEP_MS)
        seq = host.locator("body").get_attribute("data-seq")
        button.click()
        expect(host.locator("body")).not_to_have_attribute("data-seq", seq or "", timeout=STEP_MS)
    expect(host.locator("#reading .text").first).to_have_text("Вопрос 1.1 темы «Реки».", timeout=STEP_MS)
    expect(host.locator("#reading")).to_contain_text("Автор темы: Иван Петров")
    shot(host, "packages-7-theme-author")
    assert errors == []
