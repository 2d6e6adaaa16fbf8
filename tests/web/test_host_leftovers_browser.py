"""The host's leftovers of issue 21 in headless Chromium against ``svoyak run --simulator``: «Снять вопрос» asks
before it takes points back (tablet 1280x800 and phone 390x844), the host page shows no empty countdown frame,
undoing «Следующий вопрос» is one line of the protocol, and a board whose box went silent (no FIN: the box's
processes stopped) says it lost the box, not that the buttons are connected (board 1920x1080); a resumed battle is
announced; the director's «Играть на этом боксе» is said on the host's tablet; the director logs in once for the
desk, the rooms and the packages, and out of all from the rooms page.

Screenshots go to ``artifacts/web/leftovers-*.png`` (ignored by git)."""

from __future__ import annotations

import os
import re
import signal

import pytest

from .conftest import simulator_box
from .screens import small_controls, text_problems
from .test_browser import STEP_MS, Stage, box, shot  # noqa: F401  (fixtures: a box of our own)
from .test_host_browser import new_battle, set_up
from .test_round_two_browser import PHONE, hall  # noqa: F401  (the stage and a phone watching)

pytestmark = pytest.mark.browser

TABLET = {"width": 1280, "height": 800}


def test_withdrawing_a_question_asks_first_and_the_hall_hears_of_it_only_when_confirmed(hall):
    """mubc 4.3: withdrawal is the host's decision, and it takes the question's points back: one tap on «Снять
    вопрос» asks (naming the question), «Не снимать» (or Escape) leaves everything as it was, «Да, снять» does it
    and the undo bar offers it back."""
    expect, host, board = hall.expect, hall.host, hall.board
    hall.fresh(["Аня", "Борис", "Вера"], profile="mubc")
    hall.command("next")
    hall.command("next")
    hall.command("reading_done")
    hall.press("2")
    hall.answering("Борис")
    hall.command("point")
    hall.command("right")
    hall.scores(0, 10, 0)
    seq = host.locator("body").get_attribute("data-seq")

    withdraw = host.locator(".controls [data-cmd=withdraw]")
    expect(withdraw).to_have_attribute("aria-disabled", "false", timeout=STEP_MS)
    withdraw.click()
    confirm = host.locator("#withdraw-confirm")
    expect(confirm).to_be_visible()
    expect(host.locator("#withdraw-ask")).to_contain_text("Снять вопрос за 10?")
    expect(host.locator("#withdraw-no")).to_be_focused()    # the safe answer is the default
    for size in (TABLET, PHONE):                           # the question fits, every answer is a big target
        host.set_viewport_size(size)
        confirm.scroll_into_view_if_needed()
        assert small_controls(host) == [], size
        assert [p for p in text_problems(host) if "withdraw" in p] == [], size
        shot(host, f"leftovers-withdraw-ask-{size['width']}")
    host.set_viewport_size(TABLET)
    host.click("#withdraw-no")
    expect(confirm).to_be_hidden()
    host.keyboard.press("w")                               # the key asks too; Escape says no
    expect(confirm).to_be_visible()
    host.keyboard.press("Escape")
    expect(confirm).to_be_hidden()
    board.wait_for_timeout(500)
    assert host.locator("body").get_attribute("data-seq") == seq    # nothing was sent
    hall.scores(0, 10, 0)
    expect(board.locator("#board-announce")).to_be_hidden()

    withdraw.click()
    host.click("#withdraw-yes")
    expect(host.locator("body")).not_to_have_attribute("data-seq", seq or "", timeout=STEP_MS)
    hall.scores(0, 0, 0)
    expect(board.locator("#board-announce .announce-title")).to_have_text("Вопрос снят: очки за него не в счёт",
                                                                         timeout=STEP_MS)
    expect(host.locator("#undo-text")).to_have_text("Вопрос за 10 снят")
    expect(host.locator("#undo-redo")).to_be_visible()
    expect(confirm).to_be_hidden()
    shot(host, "leftovers-withdrawn")
    assert hall.console == []


def test_the_host_page_shows_no_countdown_frame_while_no_countdown_runs(hall):
    expect, host = hall.expect, hall.host
    hall.fresh(["Аня", "Борис"])
    countdown = host.locator("#countdown")
    expect(countdown).to_be_hidden()                       # the battle set up, nothing counting
    hall.command("next")
    hall.command("next")
    expect(countdown).to_be_hidden()                       # the question read: no window yet
    hall.command("reading_done")                           # eurocup 2.5: 7 s to press
    expect(countdown).to_be_visible(timeout=STEP_MS)
    expect(countdown.locator(".label")).to_have_text(re.compile(r"^\d\.\d$"))
    hall.press("1")
    hall.answering("Аня")
    hall.command("point")
    hall.command("right")
    expect(countdown).to_be_hidden(timeout=STEP_MS)        # the question is over
    shot(host, "leftovers-host-no-countdown")


def test_undoing_next_is_one_line_of_the_protocol(hall):
    """«Следующий вопрос» stores the price and the reading's start in one command; «Отменить» takes both back in
    one tap, and the protocol says so once."""
    expect, host = hall.expect, hall.host
    hall.fresh(["Аня", "Борис", "Вера"])
    hall.command("next")                                   # the theme
    hall.command("next")                                   # 10: price and reading
    expect(host.locator("#undo-what")).to_have_text("объявление цены 10")
    hall.command("undo")
    expect(host.locator("#undo-text")).to_have_text("Отменено: объявление цены 10", timeout=STEP_MS)
    hall.command("next")                                   # the 10 again, read this time
    hall.command("reading_done")
    hall.press("1")
    hall.answering("Аня")
    hall.command("point")
    hall.command("wrong")
    hall.command("undo")                                   # a second undo: a second line
    host.locator(".extras").evaluate("details => { details.open = true; }")
    href = host.locator("#protocol-live-link").get_attribute("href")
    paper = host.context.new_page()
    paper.set_viewport_size(TABLET)
    paper.goto(hall._box["url"] + href)
    undone = paper.locator("ul.notes li", has_text="Отменено ведущим")
    expect(undone).to_have_text(["Отменено ведущим: объявление цены", "Отменено ведущим: оценка ответа"])
    shot(paper, "leftovers-protocol-undo")
    paper.close()


def test_a_board_whose_box_went_silent_says_it_lost_the_box_and_comes_back(browser, tmp_path):
    """The box's processes stopped (SIGSTOP: the socket stays open, nothing comes, as when a cable or the Wi-Fi
    goes): within Engine.IO's ping interval and timeout (5 s + 5 s, web/__init__.py) the board says «нет связи»
    and no longer «кнопки на связи»; the box back, the board is back with the buttons."""
    from playwright.sync_api import expect

    with simulator_box(tmp_path) as running:
        board = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
        phone = browser.new_context(viewport=PHONE, has_touch=True).new_page()   # /watch on the spectators' path
        try:
            board.goto(running["url"] + "/board")
            phone.goto(running["url"] + "/watch")
            expect(board.locator("#capture-indicator")).to_have_text("кнопки на связи", timeout=STEP_MS)
            expect(phone.locator("body")).to_have_attribute("data-spectate", "nats", timeout=STEP_MS)
            expect(phone.locator("#conn")).to_have_text("на связи", timeout=STEP_MS)
            os.killpg(running["pid"], signal.SIGSTOP)      # the web, the capture, the spectators' nats-server
            try:
                for page in (board, phone):
                    expect(page.locator("#conn")).to_have_text("нет связи", timeout=STEP_MS + 10_000)
                    expect(page.locator("#offline-banner")).to_be_visible()
                    expect(page.locator("#capture-indicator")).to_be_hidden()
                    assert "кнопки на связи" not in page.locator("body").inner_text()
                    assert text_problems(page) == []
                shot(board, "leftovers-board-silent")
                shot(phone, "leftovers-watch-silent")
            finally:
                os.killpg(running["pid"], signal.SIGCONT)
            expect(board.locator("#capture-indicator")).to_have_text("кнопки на связи", timeout=STEP_MS + 10_000)
            expect(board.locator("#offline-banner")).to_be_hidden()
            expect(phone.locator("#conn")).to_have_text("на связи", timeout=STEP_MS + 10_000)
        finally:
            board.context.close()
            phone.context.close()


def test_a_resumed_battle_is_announced_on_the_board_and_the_host_page(hall):
    """Issue 21: the hall is told of a battle set aside *or resumed*; resumed: «Бой продолжается» with the
    scores it goes on with, the same on the board, the watcher's phone and the host page."""
    expect, host, board, phone = hall.expect, hall.host, hall.board, hall.phone
    hall.fresh(["Ярослава", "Тимофей"])     # names of their own: the box keeps the other tests' battles
    hall.command("next")
    hall.command("next")
    hall.press("1")
    hall.answering("Ярослава")
    hall.command("point")
    hall.command("right")
    hall.scores(10, 0)
    new_battle(hall)
    host.click("#set-aside")
    set_up(hall, ["Дима", "Женя"])
    expect(board.locator(".board-player .name")).to_have_text(["Дима", "Женя"], timeout=STEP_MS)
    new_battle(hall)
    host.click("#set-aside")
    host.locator("#open-battle-list li", has_text="Ярослава").locator("button.resume").click()
    expect(host.locator("#run")).to_be_visible(timeout=STEP_MS)
    for page in (board, phone):
        told = page.locator("#board-announce")
        expect(told.locator(".announce-title")).to_have_text("Бой продолжается", timeout=STEP_MS)
        expect(told.locator(".announce-score")).to_have_text(["Ярослава 10", "Тимофей 0"])
        assert text_problems(page) == []
    expect(host.locator("#host-announce .announce-title")).to_have_text("Бой продолжается")
    expect(host.locator("#host-announce .announce-score")).to_have_text(["Ярослава 10", "Тимофей 0"])
    shot(board, "leftovers-resumed-board")
    shot(phone, "leftovers-resumed-phone")
    assert hall.console == []


def test_the_director_putting_a_battle_on_the_box_is_said_on_the_hosts_tablet(browser, session_server):
    """«Играть на этом боксе» → «Отложить…» while the host plays: the host's tablet says the box switched battles
    and names the new one (it never switches silently)."""
    from playwright.sync_api import expect

    from .conftest import DIRECTOR_PIN, PIN, drawn_owl

    session = session_server.session
    tid = drawn_owl(session_server.app)
    session.command("setup", {"profile": "eurocup", "players": ["Аня", "Борис", "Вера"], "themes": 4}, "h1")
    host = browser.new_context(viewport=TABLET, has_touch=True).new_page()
    desk = browser.new_context(viewport=TABLET, has_touch=True).new_page()
    try:
        host.goto(f"{session_server.url}/host")
        host.fill("#pin", PIN)
        host.click("#login-form button")
        expect(host.locator(".host-player .name")).to_have_text(["Аня", "Борис", "Вера"], timeout=STEP_MS)
        desk.goto(f"{session_server.url}/director/{tid}/bracket")
        desk.fill("input[name=pin]", DIRECTOR_PIN)
        desk.keyboard.press("Enter")
        desk.locator("#b-groups\\/01 form.play button").click()
        expect(desk.locator("#box-busy")).to_be_visible(timeout=STEP_MS)
        desk.click("#busy-set-aside")
        expect(host.locator("#reason")).to_contain_text("На боксе теперь другой бой", timeout=STEP_MS)
        expect(host.locator("#reason")).to_contain_text("Сова")               # the new battle by its papers' name
        expect(host.locator(".host-player")).to_have_count(4, timeout=STEP_MS)
        assert small_controls(host) == []
        shot(host, "leftovers-director-switched-host")
    finally:
        host.context.close()
        desk.context.close()


def test_the_director_logs_in_once_for_the_desk_the_rooms_and_the_packages_and_out_of_all(browser, session_server):
    """One login per person (web/auth.py): the director's PIN, typed once at the desk, opens the rooms and the
    packages; «Выйти» on the rooms page logs the device out of all three."""
    from playwright.sync_api import expect

    from .conftest import DIRECTOR_PIN

    url = session_server.url
    page = browser.new_context(viewport=TABLET, has_touch=True).new_page()
    try:
        page.goto(url + "/director/")
        page.fill("input[name=pin]", DIRECTOR_PIN)
        page.keyboard.press("Enter")
        expect(page.locator("#new-tournament")).to_be_visible(timeout=STEP_MS)
        for path in ("/director/rooms", "/packages"):
            page.goto(url + path)
            expect(page.locator("input[name=pin]")).to_have_count(0)          # no second PIN
            expect(page.locator("#logout-all")).to_be_visible()
        page.goto(url + "/director/rooms")
        for size in (TABLET, PHONE):
            page.set_viewport_size(size)
            assert small_controls(page) == [], size
            assert text_problems(page) == [], size
            shot(page, f"leftovers-rooms-logged-in-{size['width']}")
        page.click("#logout-all")
        for path in ("/director/", "/director/rooms", "/packages"):
            page.goto(url + path)
            expect(page.locator("input[name=pin]")).to_be_visible()          # logged out of every one
    finally:
        page.context.close()
