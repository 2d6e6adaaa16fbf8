"""A whole small tournament day in headless Chromium, on the real server (``svoyak run --simulator``: gunicorn
gthread and the capture service on mock pins), as issue 12 asks:

the director registers a northern-owl field (38 entries: 36 and a waiting list), seeds, draws, names the themes
and puts a battle on this box; the host plays it through the host page with the simulator's buttons, with a wrong
answer, a correction and an undo; the result reaches the bracket and the public table; the protocol and the print
page come out as PDFs with every page. Screens are checked at 1280x800 (tablet), 1920x1080 (board) and 390x844
(phone) for overflow and for text smaller than it should be; no page asks for anything that is not there (404).

Screenshots and PDFs go to ``artifacts/day/`` (ignored by git)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.serving import simulator_box
from .test_browser import STEP_MS
from .test_desk_papers_browser import layout_problems, pdf_pages, pdf_text

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "day"
TABLET = {"viewport": {"width": 1280, "height": 800}, "has_touch": True}
BOARD = {"viewport": {"width": 1920, "height": 1080}}
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
MIN_TEXT_PX = {1280: 12, 1920: 16, 390: 12}  # a tablet and a phone at arm's length; the board from the back


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    with simulator_box(tmp_path_factory.mktemp("day")) as running:
        yield running


class Day:
    """The screens of the day: the director's desk, the host's tablet, the hall's board, the simulator's buttons,
    a watcher's phone. Records every page error and every 404 any of them met."""

    def __init__(self, browser, box) -> None:
        from playwright.sync_api import expect

        self.expect, self.url = expect, box["url"]
        self.errors: list[str] = []
        self.missing: list[str] = []
        self.problems: dict[str, list[str]] = {}
        self.contexts = {name: browser.new_context(**options) for name, options in
                         (("desk", TABLET), ("host", TABLET), ("board", BOARD), ("sim", {}), ("phone", PHONE))}
        self.pages = {}
        for name, context in self.contexts.items():
            page = context.new_page()
            page.on("pageerror", lambda error, name=name: self.errors.append(f"{name}: {error}"))
            page.on("response", lambda response: response.status == 404 and self.missing.append(response.url))
            self.pages[name] = page
        self.desk, self.host, self.board = self.pages["desk"], self.pages["host"], self.pages["board"]
        self.sim, self.phone = self.pages["sim"], self.pages["phone"]

    def shot(self, page, name: str) -> None:
        """A screenshot, and the page's layout checked at its width (overflow, text too small)."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
        width = page.viewport_size["width"]
        found = layout_problems(page, MIN_TEXT_PX.get(width, 12))
        if found:
            self.problems[name] = found

    def command(self, name: str) -> None:
        """Tap a host button once the engine allows it, and wait for the page's view to move on."""
        button = self.host.locator(f".controls [data-cmd={name}], .extras [data-cmd={name}]").first
        self.expect(button).to_have_attribute("aria-disabled", "false", timeout=STEP_MS)
        seq = self.host.locator("body").get_attribute("data-seq")
        button.click()
        self.expect(self.host.locator("body")).not_to_have_attribute("data-seq", seq or "", timeout=STEP_MS)

    def press(self, key: str) -> None:
        self.sim.keyboard.down(key)
        self.sim.keyboard.up(key)

    def answering(self, name: str) -> None:
        self.expect(self.host.locator(".host-player.answering .name")).to_have_text(name, timeout=STEP_MS)

    def scores(self, *scores: int) -> None:
        texts = [str(score) for score in scores]
        self.expect(self.board.locator(".board-player .score")).to_have_text(texts, timeout=STEP_MS)
        self.expect(self.host.locator(".host-player .score")).to_have_text(texts, timeout=STEP_MS)

    def answer(self, key: str, name: str, verdict: str) -> None:
        self.press(key)
        self.answering(name)
        self.command("point")
        self.command(verdict)


def choose(page, selector: str, pattern: str) -> None:
    """Pick the option of a select whose text matches ``pattern``."""
    options = page.locator(f"{selector} option").all_inner_texts()
    page.select_option(selector, index=next(i for i, text in enumerate(options) if re.search(pattern, text)))


def test_a_tournament_day(browser, box):
    day = Day(browser, box)
    expect, desk, host, board = day.expect, day.desk, day.host, day.board

    # --- The director: log in with the desk's own PIN (the host's does not open it), a new northern-owl
    # tournament with one theme per first-stage battle (the organisers decide: northern-owl 3.2).
    desk.goto(day.url + "/director/")
    desk.fill("input[name=pin]", box["host_pin"])
    desk.keyboard.press("Enter")
    expect(desk.locator(".error[role=alert]")).to_contain_text("Неверный PIN", timeout=STEP_MS)
    desk.fill("input[name=pin]", box["director_pin"])
    desk.keyboard.press("Enter")
    expect(desk.locator("#new-tournament")).to_be_visible(timeout=STEP_MS)
    desk.select_option("#new-tournament select[name=preset]", "northern-owl")
    desk.fill("#new-tournament input[name=title]", "Северная Сова 2026")
    desk.fill("#new-tournament textarea[name=changes]", "groups.themes = 1")
    desk.click("#new-tournament button")
    expect(desk.locator("#add-list")).to_be_visible(timeout=STEP_MS)

    # 38 entries (northern-owl 1.1: 36 play, the rest wait), added as a list.
    entries = [f"Участник {n:02d}; Клуб {n % 7 + 1}" for n in range(1, 39)]
    desk.fill("#add-list textarea", "\n".join(entries))
    desk.click("#add-list button")
    expect(desk.locator("h3", has_text="Участники (36/36)")).to_be_visible(timeout=STEP_MS)
    expect(desk.locator("h3", has_text="Лист ожидания")).to_be_visible()
    day.shot(desk, "01-desk-registration")

    tid = re.search(r"/director/([^/]+)/", desk.url).group(1)
    desk.goto(f"{day.url}/director/{tid}/")
    desk.click("#close-registration button")
    desk.goto(f"{day.url}/director/{tid}/seeding")
    desk.fill("#seeds input[name=seeds]", " ".join(f"p{n:03d}" for n in range(1, 10)))  # northern-owl 2.2
    desk.click("#seeds button")
    desk.fill("#draw input[name=seed]", "5")
    desk.click("#draw button")
    expect(desk.locator("#b-groups\\/01")).to_be_visible(timeout=STEP_MS)
    day.shot(desk, "02-desk-bracket-drawn")

    # The stage's themes, typed once; the battle on this box, with its host named for the papers.
    desk.click("#stage-groups a", timeout=STEP_MS)
    desk.fill("textarea[name='names-groups:1']", "Реки России")
    day.shot(desk, "03-desk-themes")
    desk.click("#themes button")
    card = desk.locator("#b-groups\\/01")
    expect(card).to_contain_text("1 тема: Реки России", timeout=STEP_MS)
    names = [text.strip() for text in card.locator("ol.seat-list li").all_inner_texts()]
    names = [re.sub(r"\s*★.*$", "", name, flags=re.S) for name in names]
    assert len(names) == 4
    card.locator("form.play input[name=host]").fill("Ирина Соколова")
    card.locator("form.play button").click()
    desk.wait_for_url(re.compile(r"/host$"), timeout=STEP_MS)

    # --- The hall: the board, the simulator's buttons, and the host's tablet with the host PIN.
    board.goto(day.url + "/board")
    day.sim.goto(day.url + "/sim")
    host.goto(day.url + "/host")
    host.fill("#pin", box["host_pin"])
    host.click("#login-form button")
    expect(host.locator("#run")).to_be_visible(timeout=STEP_MS)
    expect(host.locator(".host-player .name")).to_have_text(names, timeout=STEP_MS)

    # The theme starts with the name the director typed (never "1").
    day.command("next")
    expect(board.locator("#board-theme")).to_have_text("Реки России", timeout=STEP_MS)
    day.shot(board, "04-board-theme")

    # 10: the first player is right.
    day.command("next")
    day.answer("1", names[0], "right")
    day.scores(10, 0, 0, 0)
    # 20: the second is wrong, the third right.
    day.command("next")
    day.answer("2", names[1], "wrong")
    day.answer("3", names[2], "right")
    day.scores(10, -20, 20, 0)
    day.shot(host, "05-host-tablet")
    # 30: the fourth is judged right by a slip of the finger; the host undoes it and judges it wrong; the first
    # takes the question.
    day.command("next")
    day.answer("4", names[3], "right")
    day.scores(10, -20, 20, 30)
    day.command("undo")
    day.scores(10, -20, 20, 0)
    day.answering(names[3])
    day.command("wrong")
    day.scores(10, -20, 20, -30)
    day.answer("1", names[0], "right")
    day.scores(40, -20, 20, -30)
    # A correction (northern-owl 4.2: the host decides every disputed answer): the second player's answer to 20
    # was right after all.
    host.click(".extras summary")
    choose(host, "#corr-question", r"· 20$")
    choose(host, "#corr-player", "^" + re.escape(names[1]))
    host.select_option("#corr-verdict", "1")
    host.fill("#corr-reason", "ответ засчитан")
    day.command("correct")
    expect(board.locator(".board-player .score").nth(1)).to_have_text("20", timeout=STEP_MS)
    host.click(".extras summary")
    # 40: the third is wrong and nobody else presses: the window closes after 5 s (northern-owl 3.10).
    day.command("next")
    day.answer("3", names[2], "wrong")
    # The press stopped the reading (northern-owl 3.6): the host reads on to the end, then the window runs.
    day.command("resume_reading")
    day.command("reading_done")
    expect(host.locator(".controls [data-cmd=next]")).to_have_attribute("aria-disabled", "false", timeout=15_000)
    # 50: the first player takes it; the one-theme battle is over.
    day.command("next")
    day.answer("1", names[0], "right")
    expect(host.locator("#host-end")).to_be_visible(timeout=STEP_MS)
    expect(host.locator("#host-standings tr td.name").first).to_have_text(names[0])
    expect(host.locator("#question-title")).to_have_text("Бой окончен")  # not «Реки России Бой окончен»
    expect(board.locator("#standings")).to_be_visible(timeout=STEP_MS)
    day.shot(host, "06-host-end")
    day.shot(board, "06-board-standings")

    # --- The papers from the host's end screen: the protocol, named for the day, printed to PDF.
    protocol_url = host.locator("#protocol-link").get_attribute("href")
    papers = day.contexts["desk"].new_page()
    papers.goto(day.url + protocol_url)
    expect(papers.locator("h1")).to_contain_text("Северная Сова 2026 · Первый отборочный этап · группа A, бой 1")
    expect(papers.locator("h1")).to_contain_text("ведущий: Ирина Соколова")
    protocol_pdf = ARTIFACTS / "protocol.pdf"
    papers.pdf(path=str(protocol_pdf), format="A4", landscape=True)
    text = pdf_text(protocol_pdf)
    assert pdf_pages(protocol_pdf) >= 1 and "неверно" in text and "ответ засчитан" in text
    assert "Отменено ведущим" in text  # the undo is on the paper too

    # --- The result reaches the bracket and the public table.
    desk.goto(f"{day.url}/director/{tid}/bracket")
    card = desk.locator("#b-groups\\/01")
    expect(card.locator("tr.went-on")).to_contain_text(f"{names[0]}\u00a0★ → Третьфинал")
    expect(card).to_contain_text("Протокол боя")
    day.shot(desk, "07-desk-bracket-result")
    table = day.contexts["board"].new_page()
    table.goto(f"{day.url}/table/{tid}")
    expect(table.locator("#next-step")).to_contain_text("Первый отборочный этап — осталось 8 боёв из 9")
    day.shot(table, "08-table-board")
    day.phone.goto(f"{day.url}/table/{tid}")
    expect(day.phone.locator(".standings-table")).to_contain_text(names[0])
    day.shot(day.phone, "08-table-phone")
    day.phone.goto(day.url + "/watch")
    expect(day.phone.locator("#standings")).to_be_visible(timeout=STEP_MS)
    day.shot(day.phone, "09-watch-phone")

    # --- The print page: every standing and every battle, on as many pages as it takes.
    desk.goto(f"{day.url}/director/{tid}/print")
    desk.emulate_media(media="print")
    print_pdf = ARTIFACTS / "print.pdf"
    desk.pdf(path=str(print_pdf), format="A4")
    text = pdf_text(print_pdf)
    assert pdf_pages(print_pdf) >= 2
    for number in range(1, 37):
        assert f"Участник {number:02d}" in text, number
    assert all(f"Бой {n}" in text for n in range(1, 10))

    for context in day.contexts.values():
        context.close()
    assert day.errors == []
    assert day.missing == []
    assert day.problems == {}, json.dumps(day.problems, ensure_ascii=False, indent=1)


def test_a_tournament_battle_with_unnamed_themes_reads_tema_n_and_the_director_can_name_them(browser, box):
    """Themes the director has not named read «Тема 1», «Тема 2» on the host page and the board (never "1"), and
    the battle card leads to the page that names them."""
    day = Day(browser, box)
    expect, desk, host, board = day.expect, day.desk, day.host, day.board
    desk.goto(day.url + "/director/")
    desk.fill("input[name=pin]", box["director_pin"])
    desk.keyboard.press("Enter")
    desk.select_option("#new-tournament select[name=preset]", "northern-owl")
    desk.fill("#new-tournament input[name=title]", "Сова без тем")
    desk.fill("#new-tournament textarea[name=changes]", "groups.themes = 2")
    desk.click("#new-tournament button")
    desk.fill("#add-list textarea", "\n".join(f"Игрок {n:02d}" for n in range(1, 37)))
    desk.click("#add-list button")
    expect(desk.locator("h3", has_text="Участники (36/36)")).to_be_visible(timeout=STEP_MS)
    tid = re.search(r"/director/([^/]+)/", desk.url).group(1)
    desk.goto(f"{day.url}/director/{tid}/")
    desk.click("#close-registration button")
    desk.goto(f"{day.url}/director/{tid}/seeding")
    desk.fill("#seeds input[name=seeds]", " ".join(f"p{n:03d}" for n in range(1, 10)))
    desk.click("#seeds button")
    desk.fill("#draw input[name=seed]", "5")
    desk.click("#draw button")
    card = desk.locator("#b-groups\\/02")
    expect(card.locator("a", has_text="темы без названий: назвать")).to_have_attribute(
        "href", f"/director/{tid}/themes/groups", timeout=STEP_MS)
    card.locator("form.play button").click()
    desk.wait_for_url(re.compile(r"/host$"), timeout=STEP_MS)

    board.goto(day.url + "/board")
    host.goto(day.url + "/host")
    host.fill("#pin", box["host_pin"])
    host.click("#login-form button")
    expect(host.locator("#run")).to_be_visible(timeout=STEP_MS)
    expect(board.locator(".theme-chip-name")).to_have_text(["Тема 1", "Тема 2"], timeout=STEP_MS)
    day.command("next")
    expect(board.locator("#board-theme")).to_have_text("Тема 1", timeout=STEP_MS)
    expect(host.locator(".theme-name")).to_have_text("Тема 1", timeout=STEP_MS)
    assert day.errors == []
