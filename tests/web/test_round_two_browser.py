"""The host's and the hall's round two (issue 21) in headless Chromium against ``svoyak run --simulator``: the
host's tablet (1280x800), the hall's board (1920x1080) and a phone watching (390x844).

Screenshots go to ``artifacts/web/round2-*.png`` (ignored by git)."""

from __future__ import annotations

import re

import pytest

from .conftest import simulator_box
from .screens import console_errors, disjoint, small_controls, text_problems
from .test_browser import STEP_MS, Stage, box, shot  # noqa: F401  (fixtures: a box of our own)
from .test_host_browser import login, new_battle, set_up

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


class Hall(Stage):
    """The stage and a phone watching the board (/watch)."""

    def __init__(self, browser, box) -> None:
        super().__init__(browser, box)
        self.phone = browser.new_context(viewport=PHONE, has_touch=True).new_page()
        self.console = []
        for page in (self.board, self.host, self.phone):
            console_errors(page, self.console)
        self.phone.goto(box["url"] + "/watch")

    def fresh(self, players, profile="eurocup", themes=1) -> None:
        login(self, self._box)
        if self.host.locator("#run").is_visible() and not self.host.locator("#host-end").is_visible():
            new_battle(self)
            self.host.click("#set-aside")
        elif self.host.locator("#host-end").is_visible():
            self.host.click("#new-battle-end")
        set_up(self, players, themes=themes, profile=profile)


@pytest.fixture
def hall(browser, box):
    Stage._box = box
    return Hall(browser, box)


def gaps(page, selector):
    return [text.strip() for text in page.locator(selector + " li .gap").all_inner_texts()]


def test_press_gaps_are_counted_per_round_and_banners_never_cover_the_theme_and_price(hall):
    expect, host, board, phone = hall.expect, hall.host, hall.board, hall.phone
    hall.fresh(["Аня", "Борис", "Вера"], profile="irkutsk")
    hall.command("next")
    hall.command("next")
    # No countdown runs: no empty frame on the board
    expect(board.locator("#board-countdown")).to_be_hidden()
    hall.command("reading_done")
    hall.press("1")
    hall.answering("Аня")
    hall.command("point")
    hall.command("wrong")
    # After the «Минус» the board's list starts again: empty, then the new presses with gaps from their own first
    expect(board.locator("#board-presses li")).to_have_count(0, timeout=STEP_MS)
    board.wait_for_timeout(1200)                           # a second and more after Аня's press
    hall.press("2")
    hall.answering("Борис")
    hall.press("3")
    for page, selector in ((board, "#board-presses"), (host, "#host-presses"), (phone, "#board-presses")):
        expect(page.locator(selector + " li")).to_have_count(2, timeout=STEP_MS)
        shown = gaps(page, selector)
        assert shown[0] == "" and re.fullmatch(r"\+\d{1,3}\u00a0мс", shown[1]), (selector, shown)
    hall.command("point")
    hall.command("right")
    # «+20 Борис» on a line of its own: the theme and the price stay in sight, nothing overlaps
    for page, size in ((board, "board"), (phone, "phone")):
        result = page.locator("#board-result")
        expect(result).to_contain_text("Борис", timeout=STEP_MS)
        assert disjoint(page, "#board-result", "#board-theme"), size
        assert text_problems(page) == [], size
        shot(page, f"round2-result-{size}")


def test_every_change_of_a_score_is_announced_the_same_on_the_board_and_the_host_page(hall):
    expect, host, board, phone = hall.expect, hall.host, hall.board, hall.phone
    hall.fresh(["Аня", "Борис", "Вера"])
    hall.command("next")
    hall.command("next")
    hall.press("2")
    hall.answering("Борис")
    hall.command("point")
    hall.command("right")
    hall.scores(0, 10, 0)
    hall.command("undo")                                   # the hall saw +10: it is told it is taken back
    for page in (board, phone):
        told = page.locator("#board-announce")
        expect(told).to_be_visible(timeout=STEP_MS)
        expect(told.locator(".announce-title")).to_have_text("Отменено действие ведущего")
        expect(told.locator(".announce-what")).to_have_text("«Верно» — Борис, 10")
        expect(told.locator(".announce-score")).to_have_text(["Борис 10 → 0"])
        assert disjoint(page, "#board-announce", "#board-theme")
        assert text_problems(page) == []
    expect(host.locator("#host-announce .announce-title")).to_have_text("Отменено действие ведущего")
    expect(host.locator("#host-announce .announce-score")).to_have_text(["Борис 10 → 0"])
    shot(board, "round2-undo-board")
    shot(phone, "round2-undo-phone")
    shot(host, "round2-undo-host")
    assert small_controls(host) == []

    # A withdrawal that takes points back: announced; the host's undo bar offers it back
    host.click("#undo-redo")                               # «Вернуть»: Борис is right again
    hall.scores(0, 10, 0)
    hall.command("withdraw", confirm=True)
    expect(board.locator("#board-announce .announce-title")).to_have_text("Вопрос снят: очки за него не в счёт",
                                                                         timeout=STEP_MS)
    expect(board.locator("#board-announce .announce-score")).to_have_text(["Борис 10 → 0"])
    expect(host.locator("#undo-text")).to_have_text("Вопрос за 10 снят")
    expect(host.locator("#undo-redo")).to_be_visible()

    # Set aside by another tablet: the hall is told, and this host page says the box switched battles
    from .conftest import Client

    other = Client(hall._box["url"], "/host", {"pin": hall._box["host_pin"]})
    try:
        live = other.next("snapshot")["view"]["battle"]["id"]
        assert other.command("setup", "round2-other", profile="eurocup", players=["Дима", "Женя"],
                             themes=[{"name": "Кино", "red": False}], set_aside=live)["ok"]
    finally:
        other.close()
    expect(board.locator("#board-announce .announce-title")).to_have_text("Бой отложен, счёт сохранён", timeout=STEP_MS)
    expect(board.locator("#board-announce .announce-score")).to_have_text(["Аня 0", "Борис 0", "Вера 0"])
    expect(host.locator("#reason")).to_contain_text("На боксе теперь другой бой", timeout=STEP_MS)
    expect(host.locator(".host-player .name")).to_have_text(["Дима", "Женя"])
    shot(host, "round2-switched-host")
    assert hall.console == []


def test_claps_are_said_on_the_board_and_hinted_on_the_host_page(hall):
    expect, host, board, phone = hall.expect, hall.host, hall.board, hall.phone
    hall.fresh(["Аня", "Борис", "Вера"], profile="mubc")
    expect(host.locator("#claps-hint")).to_be_hidden()
    host.locator(".extras").evaluate("details => { details.open = true; }")
    host.click("#claps")
    expect(host.locator("#claps-hint")).to_be_visible(timeout=STEP_MS)
    expect(host.locator("#claps-hint")).to_contain_text("коснитесь карточки")
    for page in (board, phone):
        expect(page.locator("#board-claps")).to_be_visible(timeout=STEP_MS)
        expect(page.locator("#board-announce .announce-title")).to_have_text("Вопрос разыгрывается на хлопках (п.\u00a04.4)")
        expect(page.locator("#board-announce")).not_to_contain_text("null")
        assert text_problems(page) == []
    hall.command("next")
    hall.command("next")
    hall.command("reading_done")
    host.locator(".host-player").nth(1).click()           # the card of whoever clapped first
    hall.answering("Борис")
    for page, size in ((board, "board"), (phone, "phone")):
        assert text_problems(page) == [], size
        shot(page, f"round2-claps-{size}")
    assert small_controls(host) == []
    shot(host, "round2-claps-host")


def test_the_button_test_lights_the_players_dots(hall):
    expect, host, board = hall.expect, hall.host, hall.board
    hall.fresh(["Аня", "Борис", "Вера"])
    host.locator(".extras").evaluate("details => { details.open = true; }")
    host.click("#button-test")
    expect(board.locator("#board-test")).to_be_visible(timeout=STEP_MS)
    hall.press("2")
    expect(board.locator(".board-player.tested .name")).to_have_text(["Борис"], timeout=STEP_MS)
    lit = board.locator(".board-player.tested .led").evaluate("led => getComputedStyle(led).backgroundColor")
    grey = board.locator(".board-player:not(.tested) .led").first.evaluate("led => getComputedStyle(led).backgroundColor")
    assert lit != grey
    shot(board, "round2-button-test-board")
    host.click("#test-off")
    expect(board.locator(".board-player.tested")).to_have_count(0, timeout=STEP_MS)


def test_one_login_opens_the_host_page_and_the_packages_and_logging_out_logs_out_of_both(hall):
    expect, host = hall.expect, hall.host
    hall.fresh(["Аня", "Борис"])
    # the protocol is one tap away while the battle is on
    host.locator(".extras").evaluate("details => { details.open = true; }")
    href = host.locator("#protocol-live-link").get_attribute("href")
    assert href.startswith("/battles/") and href.endswith("/protocol")
    packages = host.context.new_page()
    packages.goto(hall._box["url"] + "/packages")
    expect(packages.locator("input[name=pin]")).to_have_count(0)     # no second PIN
    expect(packages.locator("#logout-all")).to_be_visible()
    assert small_controls(packages) == []
    shot(packages, "round2-packages-no-pin")
    paper = host.context.new_page()
    paper.goto(hall._box["url"] + href)
    expect(paper.locator("body")).to_contain_text("Аня")
    paper.close()
    host.reload()                                          # a reload needs no PIN either
    expect(host.locator("#run")).to_be_visible(timeout=STEP_MS)
    host.click("#logout")
    expect(host.locator("#login")).to_be_visible(timeout=STEP_MS)
    packages.reload()
    expect(packages.locator("input[name=pin]")).to_be_visible()       # logged out of both
    packages.close()


def test_a_board_that_lost_the_box_says_so(browser, tmp_path):
    from playwright.sync_api import expect

    with simulator_box(tmp_path) as running:
        board = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
        board.goto(running["url"] + "/board")
        expect(board.locator("#capture-indicator")).to_have_text("кнопки на связи", timeout=STEP_MS)
    # the box is gone: the board says so, and no longer that the buttons are connected
    expect(board.locator("#conn")).to_have_text("нет связи", timeout=STEP_MS + 5000)
    expect(board.locator("#offline-banner")).to_be_visible()
    expect(board.locator("#capture-indicator")).to_be_hidden()
    assert "кнопки на связи" not in board.locator("body").inner_text()
    shot(board, "round2-board-lost")
    board.context.close()


def test_the_busy_choice_highlights_keeping_the_battle_and_counts_only_finished_questions(browser, session_server):
    """«Играть на этом боксе» while question 1 is being answered: «сыграно вопросов: 0», and the highlighted
    choice is keeping the live battle, not the destructive «Отложить…»."""
    from playwright.sync_api import expect

    from .conftest import DIRECTOR_PIN, drawn_owl

    session = session_server.session
    tid = drawn_owl(session_server.app)
    session.command("setup", {"profile": "eurocup", "players": ["Аня", "Борис", "Вера"], "themes": 4}, "h1")
    session.command("next", {}, "n1")
    session.command("next", {}, "n2")                      # question 1: announced, being played
    page = browser.new_context(viewport={"width": 1280, "height": 800}, has_touch=True).new_page()
    page.goto(f"{session_server.url}/director/{tid}/bracket")
    page.fill("input[name=pin]", DIRECTOR_PIN)
    page.keyboard.press("Enter")
    page.locator("#b-groups\\/01 form.play button").click()
    busy = page.locator("#box-busy")
    expect(busy).to_be_visible(timeout=STEP_MS)
    expect(busy.locator(".busy-scores")).to_contain_text("сыграно вопросов: 0")
    keep, aside = page.locator("#busy-keep"), page.locator("#busy-set-aside")
    assert "primary" in keep.get_attribute("class") and "primary" not in (aside.get_attribute("class") or "")
    colour = lambda node: node.evaluate("n => getComputedStyle(n).backgroundColor")  # noqa: E731
    assert colour(keep) != colour(aside)
    assert small_controls(page) == []
    shot(page, "round2-busy-tablet")
    page.context.close()
