"""The host's tablet (1280x800, touch) and the hall's HDMI board (1920x1080) in headless Chromium, against the
whole box as ``svoyak run --simulator`` starts it: a battle is never lost, the hall sees what happened, and
every tap target is big enough for a host with a tablet in one hand (issue 12).

Screenshots go to ``artifacts/web/host-*.png`` (ignored by git)."""

from __future__ import annotations

import re

import pytest
from .test_browser import STEP_MS, Stage, box, shot  # noqa: F401  (fixtures: a box of our own)

pytestmark = pytest.mark.browser

MIN_TAP_PX = 48  # the smallest tap target (WCAG 2.5.5 asks 44 CSS px; a host in a noisy hall gets more)


def tap_targets_too_small(page) -> list[str]:
    """Every visible button, link, select, input and summary smaller than MIN_TAP_PX in either direction."""
    return page.evaluate("""(min) => [...document.querySelectorAll('button, a, select, input, summary, [role=button]')]
      .filter((node) => { const box = node.getBoundingClientRect(), style = getComputedStyle(node);
        return box.width > 0 && box.height > 0 && style.visibility !== 'hidden' && node.type !== 'checkbox'
          && (box.width < min || box.height < min); })
      .map((node) => (node.id || node.className || node.tagName) + ' ' + Math.round(node.getBoundingClientRect().width)
        + 'x' + Math.round(node.getBoundingClientRect().height) + ' «' + (node.textContent || '').trim().slice(0, 30) + '»')""",
                         MIN_TAP_PX)


def overflowing(page) -> list[str]:
    """Elements whose text runs out of their box (sideways) or the page wider than the window."""
    return page.evaluate("""() => {
      const out = [];
      if (document.documentElement.scrollWidth > window.innerWidth + 1) out.push('page ' + document.documentElement.scrollWidth);
      for (const node of document.querySelectorAll('body *')) {
        const box = node.getBoundingClientRect();
        if (!box.width || getComputedStyle(node).overflowX !== 'visible') continue;
        if (box.right > window.innerWidth + 1) out.push((node.id || node.className || node.tagName) + ' right ' + Math.round(box.right));
      }
      return out; }""")


def login(stage, box) -> None:
    stage.host.fill("#pin", box["host_pin"])
    stage.host.click("#login-form button")
    stage.expect(stage.host.locator("#setup, #run, #unfinished").locator("visible=true")).to_have_count(1, timeout=STEP_MS)


def set_up(stage, players, themes=2, profile="eurocup") -> None:
    host = stage.host
    host.select_option("#profile", profile)
    seats = host.locator("#players input")
    for index in range(seats.count()):
        seats.nth(index).fill(players[index] if index < len(players) else "")
    host.fill("#theme-count", str(themes))
    host.click("#start-battle")
    stage.expect(host.locator("#run")).to_be_visible(timeout=STEP_MS)


def new_battle(stage) -> None:
    stage.host.locator(".extras").evaluate("details => { details.open = true; }")
    stage.host.click("#new-battle")


def test_a_battle_in_progress_is_never_lost(browser, box):
    stage = Stage(browser, box)
    expect, host, board = stage.expect, stage.host, stage.board
    login(stage, box)
    set_up(stage, ["Аня", "Борис", "Вера"])
    stage.command("next")                                   # the theme
    stage.command("next")                                   # 10
    stage.press("2")
    stage.answering("Борис")
    stage.command("point")
    stage.command("right")
    stage.scores(0, 10, 0)

    # «Новый бой» mid-theme: the host sees the battle with its scores and chooses; going on changes nothing.
    new_battle(stage)
    expect(host.locator("#unfinished")).to_be_visible(timeout=STEP_MS)
    card = host.locator("#unfinished-battle")
    expect(card.locator(".battle-score")).to_have_text(["Аня 0", "Борис 10", "Вера 0"])
    expect(card).to_contain_text("тема 1 из 2")
    assert tap_targets_too_small(host) == []
    shot(host, "host-unfinished")
    host.click("#go-on")
    expect(host.locator("#run")).to_be_visible()
    stage.scores(0, 10, 0)

    # Set aside: a new battle is live, the board follows; the first is listed, unfinished, with its scores.
    new_battle(stage)
    host.click("#set-aside")
    expect(host.locator("#setup")).to_be_visible()
    expect(host.locator("#set-aside-note")).to_contain_text("Борис 10")
    set_up(stage, ["Дима", "Женя"])
    expect(board.locator(".board-player .name")).to_have_text(["Дима", "Женя"], timeout=STEP_MS)

    # Back to the first one from the list: the second is set aside in its turn (by the host's choice again).
    new_battle(stage)
    host.click("#set-aside")
    items = host.locator("#open-battle-list li")
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_have_class(re.compile(r"\bcurrent\b"))   # the live one (unfinished, newest) first
    expect(items.nth(1).locator(".battle-score")).to_have_text(["Аня 0", "Борис 10", "Вера 0"])
    assert tap_targets_too_small(host) == []
    assert overflowing(host) == []
    shot(host, "host-battle-list")
    items.nth(1).locator("button.resume").click()
    expect(host.locator("#run")).to_be_visible(timeout=STEP_MS)
    stage.scores(0, 10, 0)
    expect(board.locator(".board-player .name")).to_have_text(["Аня", "Борис", "Вера"], timeout=STEP_MS)
    stage.command("next")                                   # the battle goes on where it stopped: 20
    stage.price(20)
    assert stage.errors == []


def test_the_hall_sees_the_button_test_and_every_correction(browser, box):
    stage = Stage(browser, box)
    expect, host, board = stage.expect, stage.host, stage.board
    login(stage, box)
    if host.locator("#run").is_visible():                  # the battle the first test left live: set it aside
        new_battle(stage)
        host.click("#set-aside")
    set_up(stage, ["Аня", "Борис", "Вера"], themes=1)

    # The button test is said on both screens while it is on, with whose buttons work.
    host.locator(".extras").evaluate("details => { details.open = true; }")
    host.click("#button-test")
    expect(host.locator("#test-banner")).to_be_visible(timeout=STEP_MS)
    expect(board.locator("#board-test")).to_be_visible(timeout=STEP_MS)
    stage.press("1")
    expect(board.locator("#board-test-pressed")).to_have_text("Работают: Аня", timeout=STEP_MS)
    expect(host.locator("#test-pressed")).to_have_text("Работают: Аня")
    shot(board, "host-board-button-test")
    shot(host, "host-button-test")
    assert tap_targets_too_small(host) == []
    # Left on, it ends by itself when the question starts: its presses count again.
    stage.command("next")                                   # the theme
    expect(host.locator("#test-banner")).to_be_visible()
    stage.command("next")                                   # 10
    expect(host.locator("#test-banner")).to_be_hidden(timeout=STEP_MS)
    expect(board.locator("#board-test")).to_be_hidden(timeout=STEP_MS)
    expect(host.locator("#reason")).to_have_text("Проверка кнопок закончена: начался вопрос")
    stage.press("1")
    stage.answering("Аня")
    stage.command("point")
    stage.command("wrong")
    stage.press("2")
    stage.answering("Борис")
    stage.command("point")
    stage.command("right")
    stage.scores(-10, 10, 0)

    # A correction: Аня was right after all. The board and the host page say who, which question, every score
    # from and to, and why Борис's answer no longer counts (eurocup 2.11).
    host.locator(".extras").evaluate("details => { details.open = true; }")
    host.select_option("#corr-player", label="Аня · Минус")
    host.select_option("#corr-verdict", "1")
    host.click("#correction-form button[type=submit]")
    told = board.locator("#board-announce")
    expect(told).to_be_visible(timeout=STEP_MS)
    expect(told.locator(".announce-title")).to_have_text("Исправление решения")
    expect(told.locator(".announce-what")).to_have_text("Аня · «Тема 1», 10 — ответ засчитан как верный")
    expect(told.locator(".announce-score")).to_have_text(["Аня -10 → 10", "Борис 10 → 0"])
    expect(told.locator(".announce-note")).to_have_text(
        "Борис: ответ не в счёт — вопрос закончился раньше, на верном ответе (п.\u00a02.11)")
    expect(host.locator("#host-announce .announce-score")).to_have_text(["Аня -10 → 10", "Борис 10 → 0"])
    stage.scores(10, 0, 0)
    assert overflowing(board) == []
    shot(board, "host-board-correction")
    shot(host, "host-correction")
    assert stage.errors == []


def test_the_hosts_hands_big_targets_a_steady_layout_and_undo_said_before_and_after(browser, box):
    stage = Stage(browser, box)
    expect, host = stage.expect, stage.host
    login(stage, box)
    if host.locator("#run").is_visible():
        new_battle(stage)
        if host.locator("#unfinished").is_visible():
            host.click("#set-aside")
    expect(host.locator("#setup")).to_be_visible()
    assert tap_targets_too_small(host) == []
    assert overflowing(host) == []
    set_up(stage, ["Аня", "Борис", "Вера"], themes=2)
    expect(host.locator("kbd").first).to_be_hidden()        # a touch screen: no keyboard hints
    expect(host.locator(".shortcuts")).to_be_hidden()
    stage.command("next")
    stage.command("next")                                   # 10
    stage.press("3")
    stage.answering("Вера")
    # After a press the next expected action, «Отвечает: Вера» (it starts the 3 s), is the biggest button.
    point = host.locator("#point")
    expect(point).to_have_text("Отвечает: Вера")
    expect(point).to_have_class(re.compile(r"\bexpected\b"))
    areas = host.evaluate("""() => [...document.querySelectorAll('.controls button')].map((b) => {
        const r = b.getBoundingClientRect(); return [b.dataset.cmd, r.width * r.height]; })""")
    assert max(areas, key=lambda item: item[1])[0] == "point"
    assert tap_targets_too_small(host) == []
    assert overflowing(host) == []
    shot(host, "host-expected-point")

    # Opening the tools panel shrinks no main button and leaves the reason line in sight.
    boxes = lambda: host.evaluate("""() => [...document.querySelectorAll('.controls button')].map((b) => {
        const r = b.getBoundingClientRect(); return [Math.round(r.width), Math.round(r.height)]; })""")
    before = boxes()
    host.locator(".extras summary").click()
    expect(host.locator("#policy")).to_have_text("Исправить решение можно в любой момент боя")  # eurocup: any time
    assert boxes() == before
    host.locator(".controls [data-cmd=next]").click(force=True)   # refused now: the reason line says why
    reason = host.locator("#reason")
    expect(reason).not_to_have_text("")
    assert host.evaluate("() => { const r = document.getElementById('reason').getBoundingClientRect();"
                         " return r.top >= 0 && r.bottom <= window.innerHeight; }")
    assert tap_targets_too_small(host) == []
    assert overflowing(host) == []
    shot(host, "host-tools-open")
    host.locator(".extras summary").click()

    # Undo says what it takes back before, and right after offers one tap to do it again.
    stage.command("point")
    stage.command("wrong")
    stage.scores(0, 0, -10)
    # A wrong answer stopped the reading (eurocup 2.10): reading on is the next expected action.
    expect(host.locator(".controls [data-cmd=resume_reading]")).to_have_class(re.compile(r"\bexpected\b"))
    expect(host.locator("#undo-what")).to_have_text("«Минус» — Вера, 10")
    stage.command("undo")
    stage.scores(0, 0, 0)
    expect(host.locator("#undo-text")).to_have_text("Отменено: «Минус» — Вера, 10")
    expect(host.locator("#undo-redo")).to_have_text("Вернуть")
    shot(host, "host-undone")
    host.click("#undo-redo")
    stage.scores(0, 0, -10)
    expect(host.locator("#undo-bar")).to_be_hidden(timeout=STEP_MS)

    # Withdraw names its question, and after it one tap takes it back.
    stage.press("1")
    stage.answering("Аня")
    expect(host.locator("#withdraw-label")).to_have_text("Снять вопрос 10")
    stage.command("withdraw", confirm=True)
    expect(host.locator("#undo-text")).to_have_text("Вопрос за 10 снят")
    host.click("#undo-redo")
    expect(host.locator("#undo-text")).to_have_text("Отменено: снятие вопроса за 10", timeout=STEP_MS)
    expect(host.locator("#withdraw-label")).to_have_text("Снять вопрос 10")   # the question is back in play
    stage.answering("Аня")
    assert stage.errors == []


def test_the_pages_count_with_the_same_plural_rule_as_the_box(browser, box):
    """The scripts evaluate the catalogue's own Plural-Forms header (appliance/words.py, svoyak.js): the same
    form as the box for every count, in each language, and the same worded line."""
    from appliance import words

    page = browser.new_page()
    for language in ("ru", "en"):
        page.goto(box["url"] + f"/board?lang={language}")
        got = page.evaluate("() => [...Array(1001).keys()].map((n) => SVOYAK.pluralIndex(n))")
        assert got == [words.plural_index(n, language) for n in range(1001)]
        got = page.evaluate("() => [0, 1, 2, 5, 21, 22, 111].map((n) => SVOYAK.word('count.themes', {count: n}))")
        assert got == [words.word("count.themes", language, count=n) for n in (0, 1, 2, 5, 21, 22, 111)]
    page.close()


def test_an_english_page_speaks_english_only(browser, box):
    page = browser.new_context(viewport={"width": 1280, "height": 800}, has_touch=True).new_page()
    page.goto(box["url"] + "/host?lang=en")
    page.fill("#pin", "0000" if box["host_pin"] != "0000" else "1111")
    page.click("#login-form button")
    page.locator("#login-error").filter(has_text="Wrong PIN").wait_for(timeout=STEP_MS)
    text = page.locator("body").inner_text()
    assert not re.search(r"[А-яЁё]", text.replace("Русский", "")), text   # the language switch names itself
    page.close()


def test_an_accepted_appeal_is_announced_and_its_buttons_are_big(browser, box):
    stage = Stage(browser, box)
    expect, host, board = stage.expect, stage.host, stage.board
    login(stage, box)
    if host.locator("#run").is_visible():
        new_battle(stage)
        if host.locator("#unfinished").is_visible():
            host.click("#set-aside")
    set_up(stage, ["Аня", "Борис", "Вера", "Гена"], themes=1, profile="mubc")
    stage.command("next")
    stage.command("next")                                   # 10
    stage.command("reading_done")
    stage.press("1")
    stage.answering("Аня")
    stage.command("point")
    stage.command("wrong")
    stage.scores(-10, 0, 0, 0)
    # nobody else presses: the window closes and the question ends (mubc 4.1); the board says so, not «nobody
    # answered» (Аня did)
    expect(board.locator("#board-result")).to_have_text("Больше никто не нажал — время вышло", timeout=20_000)
    expect(host.locator(".controls [data-cmd=next]")).to_have_attribute("aria-disabled", "false", timeout=20_000)
    host.locator(".extras").evaluate("details => { details.open = true; }")
    expect(host.locator("#policy")).to_contain_text("до следующего вопроса")   # mubc 4.2, from the profile
    host.select_option("#corr-player", label="Аня · Минус")
    host.fill("#corr-reason", "ответ верный")
    host.click("#appeal")
    expect(host.locator("#appeals li")).to_have_count(1, timeout=STEP_MS)
    expect(host.locator("#appeals li button")).to_have_text(["Зачесть", "Отклонить"])
    assert tap_targets_too_small(host) == []
    host.locator("#appeals li button", has_text="Зачесть").click()
    told = board.locator("#board-announce")
    expect(told).to_be_visible(timeout=STEP_MS)
    expect(told.locator(".announce-title")).to_have_text("Апелляция принята (п.\u00a04.2)")
    expect(told.locator(".announce-score")).to_have_text(["Аня -10 → 10"])
    stage.scores(10, 0, 0, 0)
    shot(board, "host-board-appeal")
    assert stage.errors == []


def test_a_host_who_lost_the_pin_holds_the_host_button_and_the_boxs_board_shows_it(browser, box):
    stage = Stage(browser, box)
    expect, host, board, sim = stage.expect, stage.host, stage.board, stage.sim
    expect(host.locator("#login .hint")).to_have_text(
        "Забыли PIN? Удерживайте кнопку ведущего на боксе 3 секунды: PIN появится на табло бокса на 30 секунд. "
        "Или наберите svoyak pin в консоли бокса")
    expect(board.locator("#conn")).to_have_class("indicator conn-online", timeout=STEP_MS)
    assert box["host_pin"] not in board.locator("body").inner_text()
    sim.keyboard.down("h")                                  # the host button, held (the simulator's own)
    expect(board.locator("#board-pin")).to_be_visible(timeout=STEP_MS)
    sim.keyboard.up("h")
    expect(board.locator("#pin")).to_have_text(box["host_pin"])
    expect(board.locator("#pin-asked")).to_have_text("Кнопку ведущего удержали на боксе: PIN виден 30 секунд")
    shot(board, "host-board-pin-asked")
    assert stage.errors == []


@pytest.mark.parametrize("path", ["/", "/play", "/sim", "/host", "/watch"])
def test_every_page_has_big_enough_targets_and_fits_a_phone_and_a_tablet(browser, box, path):
    for viewport in ({"width": 390, "height": 844}, {"width": 1280, "height": 800}):
        page = browser.new_context(viewport=viewport, has_touch=True).new_page()
        page.goto(box["url"] + path)
        page.wait_for_load_state("networkidle")
        assert tap_targets_too_small(page) == [], (path, viewport)
        assert overflowing(page) == [], (path, viewport)
        page.close()


def test_the_board_fits_1080p_waiting_and_playing(browser, box):
    page = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
    page.goto(box["url"] + "/board")
    page.locator("#waiting, #scoreboard, #standings").locator("visible=true").first.wait_for(timeout=STEP_MS)
    assert overflowing(page) == []
    assert page.evaluate("() => document.documentElement.scrollHeight <= window.innerHeight + 1")
    page.close()
