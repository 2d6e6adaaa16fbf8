"""End to end in headless Chromium: the whole box as ``svoyak run`` starts it (gunicorn gthread web server and
the capture service on mock pins), a host playing a whole theme on the tablet page with the buttons pressed
through the capture simulator page, and a scoreboard in another browser following every step.

Screenshots of the key moments go to ``artifacts/`` (ignored by git)."""

from __future__ import annotations

import re

import pytest

from .conftest import ROOT, simulator_box, watch_csp

pytestmark = pytest.mark.browser

ARTIFACTS = ROOT / "artifacts" / "web"
STEP_MS = 10_000  # how long a page may take to show a step (waiting, not a timed assert)


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    # These walks read the board's Socket.IO link (a missed update resyncs it, Wi-Fi lost on the watcher's phone):
    # the spectators' fast path is off here; tests/web/test_spectators_browser.py walks every path of /watch.
    with simulator_box(tmp_path_factory.mktemp("box"), env={"SVOYAK_SPECTATORS": "false"}) as running:
        yield running


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


class Stage:
    """The three screens of the test: the host's tablet, the hall's scoreboard, the simulator's buttons."""

    def __init__(self, browser, box) -> None:
        from playwright.sync_api import expect

        self.expect = expect
        self.board = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
        self.host = browser.new_context(viewport={"width": 1280, "height": 800}, has_touch=True).new_page()
        self.sim = browser.new_context(viewport={"width": 900, "height": 500}).new_page()
        self.errors = []  # script errors and Content-Security-Policy violations (watch_csp)
        for page in (self.board, self.host, self.sim):
            self.errors = watch_csp(page, self.errors)
        self.board.goto(box["url"] + "/board")
        self.sim.goto(box["url"] + "/sim")
        self.host.goto(box["url"] + "/host")

    def command(self, name: str, confirm: bool = False) -> None:
        """Tap a host button once the engine allows it (the page enables it from ``view.allowed``); ``confirm``:
        then «Да, снять» on the confirmation it opens («Снять вопрос»)."""
        button = self.host.locator(f".controls [data-cmd={name}], .extras [data-cmd={name}]").first
        self.expect(button).to_have_attribute("aria-disabled", "false", timeout=STEP_MS)
        seq = self.host.locator("body").get_attribute("data-seq")
        button.click()
        if confirm:
            self.expect(self.host.locator("#withdraw-confirm")).to_be_visible(timeout=STEP_MS)
            self.host.click("#withdraw-yes")
        # The page's view moved on: a second tap on the same view would be the same intent (one command id)
        self.expect(self.host.locator("body")).not_to_have_attribute("data-seq", seq or "", timeout=STEP_MS)

    def press(self, *keys: str) -> None:
        """Press the players' buttons on the simulator page, in this order, then release them."""
        for key in keys:
            self.sim.keyboard.down(key)
        for key in keys:
            self.sim.keyboard.up(key)

    def answering(self, name: str) -> None:
        self.expect(self.board.locator(".board-player.answering .name")).to_have_text(name, timeout=STEP_MS)
        self.expect(self.host.locator(".host-player.answering .name")).to_have_text(name, timeout=STEP_MS)

    def scores(self, *scores: int) -> None:
        texts = [str(score) for score in scores]
        self.expect(self.board.locator(".board-player .score")).to_have_text(texts, timeout=STEP_MS)
        self.expect(self.host.locator(".host-player .score")).to_have_text(texts, timeout=STEP_MS)

    def price(self, price: int) -> None:
        self.expect(self.board.locator("#board-price")).to_have_text(str(price), timeout=STEP_MS)


def test_a_host_plays_a_whole_theme_and_the_scoreboard_follows(browser, box):
    stage = Stage(browser, box)
    expect, host, board = stage.expect, stage.host, stage.board

    # The scoreboard waits with the hotspot's QR code, never the PIN (the audience reads it).
    expect(board.locator("#waiting")).to_be_visible(timeout=STEP_MS)
    expect(board.locator("#board-pin")).to_be_hidden()
    assert box["host_pin"] not in board.locator("body").inner_text()
    expect(board.locator("#conn")).to_have_class("indicator conn-online")
    expect(board.locator("#capture-indicator")).to_have_class("indicator conn-online", timeout=STEP_MS)
    shot(board, "01-board-waiting")

    # The host logs in with the PIN; a wrong one is refused and says so in both languages.
    expect(host.locator("#logout")).to_be_hidden()          # nobody to log out yet
    expect(host.locator("#conn")).to_be_hidden()            # no socket before the PIN: no "connecting…" pill
    host.fill("#pin", "0000" if box["host_pin"] != "0000" else "1111")
    host.click("#login-form button")
    expect(host.locator("#login-error")).to_have_text("Неверный PIN", timeout=STEP_MS)   # one language
    expect(host.locator("#offline-banner")).to_be_hidden()   # a refusal is not a lost link
    host.fill("#pin", box["host_pin"])
    host.click("#login-form button")
    expect(host.locator("#setup")).to_be_visible(timeout=STEP_MS)

    # Setup: eurocup, three players, one theme (so the theme is the whole battle and ends with standings).
    host.select_option("#profile", "eurocup")
    for index, name in enumerate(["Аня", "Борис", "Вера"]):
        host.locator("#players input").nth(index).fill(name)
    while host.locator("#theme-list .theme-row").count() > 1:
        host.click("#remove-theme")
    host.locator("#theme-list input[name=theme]").first.fill("Реки России")
    shot(host, "02-host-setup")
    host.click("#start-battle")
    expect(host.locator("#run")).to_be_visible(timeout=STEP_MS)
    expect(board.locator("#scoreboard")).to_be_visible(timeout=STEP_MS)

    # The host may not judge before anyone answers: the button is greyed and tapping it says why (eurocup 2.6).
    host.locator(".controls [data-cmd=right]").click(force=True)  # a tap on a greyed button
    expect(host.locator("#reason")).not_to_contain_text("Nobody")   # one language at a time
    expect(host.locator("#reason")).to_contain_text("Никто не отвечает — сначала укажите отвечающего (2.6)")
    expect(host.locator("#toast")).to_be_hidden()  # said once: the line under the controls is in sight

    # The button says it starts the theme; a double tap starts the theme only (one command id per tap intent).
    expect(host.locator("#next-label")).to_have_text("Следующая тема")
    host.locator(".controls [data-cmd=next]").dblclick()
    expect(board.locator("#board-theme")).to_have_text("Реки России", timeout=STEP_MS)
    expect(host.locator("#next-label")).to_have_text("Следующий вопрос", timeout=STEP_MS)
    expect(board.locator("#board-price")).to_have_text("")

    # 10: Борис presses first, is pointed to, answers right.
    stage.command("next")
    stage.price(10)
    stage.press("2")
    stage.answering("Борис")
    shot(host, "03-host-press")
    shot(board, "03-board-press")
    stage.command("point")
    expect(board.locator("#board-countdown")).to_have_class(re.compile(r"\bactive\b"), timeout=STEP_MS)
    shot(board, "04-board-answer-countdown")
    stage.command("right")
    stage.scores(0, 10, 0)

    # 20: Аня and Вера press nearly together; the order and the gap in ms show; Аня is wrong, then Вера right.
    stage.command("next")
    stage.price(20)
    stage.press("1", "3")
    stage.answering("Аня")
    expect(board.locator("#board-presses li")).to_have_count(2, timeout=STEP_MS)
    expect(board.locator("#board-presses li").nth(1).locator(".gap")).to_have_text(re.compile(r"^\+\d+\u00a0мс$"))
    # eurocup 2.9: Вера's press came while Аня answers, before the host's reset: listed, struck through, said why
    expect(board.locator("#board-presses li").nth(1)).to_have_class(re.compile(r"\bvoid\b"))
    expect(board.locator("#board-presses li").nth(1).locator(".why")).to_have_text("не в счёт")
    expect(board.locator("#board-presses li").nth(0)).to_have_class(re.compile(r"\bnext\b"))
    shot(board, "05-board-press-order")
    shot(host, "05-host-press-order")
    stage.command("point")
    stage.command("wrong")
    stage.scores(-20, 10, 0)
    stage.press("3")                                        # eurocup 2.9: the window reopens for the others
    stage.answering("Вера")
    stage.command("point")
    stage.command("right")
    stage.scores(-20, 10, 20)

    # 30: read to the end, nobody presses: the press window's deadline ends the question (eurocup 2.5, 2.11.3).
    stage.command("next")
    stage.price(30)
    stage.command("reading_done")
    expect(board.locator("#board-countdown")).to_have_class(re.compile(r"\bactive\b"), timeout=STEP_MS)
    shot(board, "06-board-press-window")
    expect(host.locator(".controls [data-cmd=next]")).to_have_attribute("aria-disabled", "false", timeout=15_000)
    stage.scores(-20, 10, 20)

    # 40, from a laptop's keyboard: Аня presses and runs out of time: "Время" (T) is allowed only after 3 s
    # (eurocup 2.8); then Борис is right.
    expect(host.locator(".controls [data-cmd=next]")).to_have_attribute("aria-disabled", "false")
    host.keyboard.press("n")
    stage.price(40)
    stage.press("1")
    stage.answering("Аня")
    host.keyboard.press(" ")                                # point
    expect(host.locator("#countdown")).to_have_class(re.compile(r"\bactive\b"), timeout=STEP_MS)
    expect(host.locator(".controls [data-cmd=time]")).to_have_attribute("aria-disabled", "true", timeout=STEP_MS)
    host.keyboard.press("t")                                # too early: refused on the page, with the rule
    expect(host.locator("#reason")).to_contain_text("(2.8)")
    expect(host.locator(".controls [data-cmd=time]")).to_have_attribute("aria-disabled", "false", timeout=STEP_MS)
    host.keyboard.press("t")
    stage.scores(-60, 10, 20)
    stage.press("2")
    stage.answering("Борис")
    host.keyboard.press(" ")
    expect(host.locator(".controls [data-cmd=right]")).to_have_attribute("aria-disabled", "false", timeout=STEP_MS)
    host.keyboard.press("+")
    stage.scores(-60, 50, 20)

    # 50: Вера is judged wrong by a slip of the finger; the host undoes it, then judges it again; Борис takes it.
    stage.command("next")
    stage.price(50)
    stage.press("3")
    stage.answering("Вера")
    stage.command("point")
    stage.command("wrong")
    stage.scores(-60, 50, -30)
    stage.command("undo")
    stage.scores(-60, 50, 20)
    stage.answering("Вера")
    stage.command("wrong")
    stage.scores(-60, 50, -30)
    stage.press("2")
    stage.answering("Борис")
    stage.command("point")
    stage.command("right")
    stage.scores(-60, 100, -30)

    # The theme (and the battle) is over: final standings on the scoreboard.
    expect(board.locator("#standings")).to_be_visible(timeout=STEP_MS)
    expect(board.locator("#standings-body tr td.name")).to_have_text(["Борис", "Вера", "Аня"])
    shot(board, "07-board-standings")
    shot(host, "07-host-theme-over")
    # The host page shows the standings too, and a visible "Новый бой" where the controls were.
    expect(host.locator("#host-standings tr td.name")).to_have_text(["Борис", "Вера", "Аня"])
    expect(host.locator("#new-battle-end")).to_be_visible()

    # A correction at the end of the theme: Вера's answer to 50 was right after all, so the question ended
    # with it and Борис's later answer counts for nobody (eurocup 2.11.1). The form offers only those who
    # answered the question, with the ruling each got.
    host.click(".extras summary")
    expect(host.locator("#corr-player option")).to_have_text(["Вера · Минус", "Борис · Верно"])
    host.select_option("#corr-player", label="Вера · Минус")
    host.select_option("#corr-verdict", "1")
    host.fill("#corr-reason", "зачтено после проверки")
    host.click("#correction-form button[type=submit]")
    expect(board.locator("#standings-body tr td.score")).to_have_text(["70", "50", "-60"], timeout=STEP_MS)
    shot(board, "08-board-standings-corrected")
    shot(host, "08-host-corrections")
    assert stage.errors == []


def test_phones_host_on_a_phone_and_players_buzz_from_theirs(browser, box):
    """A host on a phone (English), phone buzzers enabled by the host, a watcher's phone; marked lower precision."""
    from playwright.sync_api import expect

    phone = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
    host = browser.new_context(**phone).new_page()
    player = browser.new_context(**phone).new_page()
    watcher = browser.new_context(**phone).new_page()
    sim = browser.new_context(viewport={"width": 900, "height": 500}).new_page()
    violations: list = []
    for page in (host, player, watcher, sim):
        watch_csp(page, violations)

    host.goto(box["url"] + "/host?lang=en")
    host.fill("#pin", box["host_pin"])
    host.click("#login-form button")
    expect(host.locator("#run, #setup").locator("visible=true")).to_have_count(1, timeout=STEP_MS)
    if host.locator("#run").is_visible():                  # the first test's battle is over: start another
        host.locator(".extras").evaluate("details => { details.open = true; }")
        host.click("#new-battle")
    expect(host.locator("#setup")).to_be_visible(timeout=STEP_MS)
    host.select_option("#profile", "irkutsk")
    for index, name in enumerate(["Ann", "Boris", "Vera", "Gleb"]):
        host.locator("#players input").nth(index).fill(name)
    host.click("#start-battle")
    expect(host.locator("#run")).to_be_visible(timeout=STEP_MS)
    expect(host.locator("#next-label")).to_have_text("Next theme")
    host.click(".controls [data-cmd=next]")
    expect(host.locator("#next-label")).to_have_text("Next question", timeout=STEP_MS)  # the theme is on
    host.click(".controls [data-cmd=next]")
    expect(host.locator(".question-title .price")).to_have_text("10", timeout=STEP_MS)
    # A greyed button says why in one short line; on the English page in English only.
    host.locator(".controls [data-cmd=right]").click(force=True)
    expect(host.locator("#reason")).to_contain_text("Nobody is answering: point to the answerer first")
    expect(host.locator("#reason")).to_have_text(re.compile(r"^[^А-яЁё]*$"))

    player.goto(box["url"] + "/play")
    expect(player.locator("#phones-off")).to_be_visible(timeout=STEP_MS)
    expect(player.locator("#buzz")).to_be_disabled()
    shot(player, "10-player-phones-off")
    host.locator(".extras").evaluate("details => { details.open = true; }")
    host.click("#phones")
    expect(player.locator("#phones-off")).to_be_hidden(timeout=STEP_MS)
    # the host page shows each seat's code next to the toggle; the host tells Gleb his
    expect(host.locator("#seat-code-list li")).to_have_count(4, timeout=STEP_MS)
    code = host.locator("#seat-code-list li", has_text="Gleb").locator(".code").inner_text()
    assert re.fullmatch(r"\d{6}", code)
    shot(host, "10-host-seat-codes")
    player.locator(".seat", has_text="Gleb").click()
    expect(player.locator("#code-form")).to_be_visible()
    expect(player.locator("#buzz")).to_be_disabled()           # no code, no press
    player.fill("#code", str((int(code) + 1) % 10**6).zfill(6))
    player.click("#code-submit")
    expect(player.locator("#code-error")).to_have_text(
        "Неверный код места: спросите код у ведущего", timeout=STEP_MS)     # one language at a time
    expect(player.locator("#buzz")).to_be_disabled()
    player.fill("#code", code)
    player.click("#code-submit")
    expect(player.locator("#code-form")).to_be_hidden(timeout=STEP_MS)
    expect(player.locator("#code-error")).to_have_text("")
    expect(player.locator("#buzz")).to_be_enabled()
    player.locator("#buzz").dispatch_event("pointerdown")
    expect(player.locator("#buzz-result")).to_have_text("Нажатие принято", timeout=STEP_MS)
    expect(host.locator(".host-player.answering .name")).to_have_text("Gleb", timeout=STEP_MS)
    expect(host.locator("#host-presses li .tag")).to_have_text("phone")     # marked lower precision
    shot(player, "11-player-pressed")
    host.locator("#host-presses").scroll_into_view_if_needed()
    shot(host, "11-host-phone-en")

    watcher.goto(box["url"] + "/watch")
    expect(watcher.locator(".board-player.answering .name")).to_have_text("Gleb", timeout=STEP_MS)
    expect(watcher.locator("#board-pin")).to_be_hidden()      # the PIN is never on a board by itself
    expect(watcher.locator("#host-url")).to_have_text(box["url"] + "/host")  # the address it was opened with
    shot(watcher, "12-watch-phone")

    # The watcher misses an update (as if a frame were lost): the next number does not follow, it resyncs.
    # /watch is a spectator's page (web/static/js/spectate.js): with no fast path it holds a Socket.IO link of
    # its own, the last one made
    expect(watcher.locator("body")).to_have_attribute("data-spectate", "socket")
    socket_link = "SVOYAK.links[SVOYAK.links.length - 1]"
    watcher.evaluate(f"window.__snapshots = 0; {socket_link}.socket.on('snapshot', () => window.__snapshots++)")
    seq_before = int(watcher.evaluate(f"{socket_link}.seq"))
    watcher.evaluate(f"{socket_link}.seq -= 1")
    host.click("#phones")                                   # phones off: one more update
    expect(player.locator("#phones-off")).to_be_visible(timeout=STEP_MS)
    expect(watcher.locator("body")).to_have_attribute("data-seq", str(seq_before + 1), timeout=STEP_MS)
    assert watcher.evaluate("window.__snapshots") == 1      # it asked again and got the whole view
    expect(watcher.locator("#conn")).to_have_class("indicator conn-online")
    expect(watcher.locator(".board-player.answering .name")).to_have_text("Gleb")

    # Wi-Fi drops on the watcher's phone: the page says so; the host plays on; back online it catches up.
    watcher.context.set_offline(True)
    expect(watcher.locator("#conn")).to_have_class("indicator conn-offline", timeout=STEP_MS)
    expect(watcher.locator("#conn")).to_have_text("нет связи")
    expect(watcher.locator("#capture-indicator")).to_be_hidden()   # unknown while offline, not a stale "ok"
    host.locator(".controls [data-cmd=point]").click()
    host.locator(".controls [data-cmd=right]").click()
    expect(host.locator(".host-player .score")).to_have_text(["0", "0", "0", "10"], timeout=STEP_MS)
    shot(watcher, "14-watch-offline")
    watcher.context.set_offline(False)
    expect(watcher.locator("#conn")).to_have_class("indicator conn-online", timeout=20_000)
    expect(watcher.locator(".board-player .score")).to_have_text(["0", "0", "0", "10"], timeout=STEP_MS)

    # The host's Wi-Fi drops: a banner says so and the controls dim; a tap is held, not sent behind the
    # host's back: once the link is back the panel shows it and the host applies it (its one command id).
    expect(watcher.locator("#offline-banner")).to_be_hidden()
    host.context.set_offline(True)
    expect(host.locator("#offline-banner")).to_be_visible(timeout=STEP_MS)
    next_button = host.locator(".controls [data-cmd=next]")
    next_button.click()
    held = host.locator("#held")
    expect(held.locator("li[data-cmd=next]")).to_be_visible(timeout=STEP_MS)
    expect(held.locator("button.apply")).to_be_disabled()              # nothing to apply it to yet
    shot(host, "15-host-offline-pending")
    host.context.set_offline(False)
    expect(host.locator("#offline-banner")).to_be_hidden(timeout=30_000)
    expect(held.locator("button.apply")).to_be_enabled(timeout=STEP_MS)
    held.locator("button.apply").click()
    expect(held).to_be_hidden(timeout=STEP_MS)
    expect(watcher.locator("#board-price")).to_have_text("20", timeout=STEP_MS)
    expect(host.locator("#reason")).to_have_text("")

    sim.goto(box["url"] + "/sim")
    expect(sim.locator(".sim-button")).to_have_count(4, timeout=STEP_MS)
    shot(sim, "13-simulator")

    # Phones on again: every seat has a new code; Gleb's phone forgets the old one and asks for the new one.
    host.click("#phones")
    expect(host.locator("#seat-code-list li")).to_have_count(4, timeout=STEP_MS)
    expect(host.locator("#seat-code-list li", has_text="Gleb").locator(".code")).not_to_have_text(code)
    expect(player.locator("#code-form")).to_be_visible(timeout=STEP_MS)
    expect(player.locator("#buzz")).to_be_disabled()
    fresh = host.locator("#seat-code-list li", has_text="Gleb").locator(".code").inner_text()
    player.fill("#code", fresh)
    player.click("#code-submit")
    expect(player.locator("#buzz")).to_be_enabled(timeout=STEP_MS)
    # A code the box no longer takes (as if renewed while the phone slept): the press is refused, the page asks again.
    player.evaluate("sessionStorage.setItem('svoyak.player.code', '" + code + "')")
    player.locator("#buzz").dispatch_event("pointerdown")
    expect(player.locator("#code-error")).to_contain_text("Неверный код места", timeout=STEP_MS)
    expect(player.locator("#code-form")).to_be_visible()
    expect(player.locator("#buzz")).to_be_disabled()
    assert violations == []  # no Content-Security-Policy violation, no script error on any of the four pages
