"""The director's papers in a real browser (Chromium via Playwright): the print page of a 36-player tournament
prints every page (the screen layout once printed one page: standings cut off, no battles), counted with
``pdfinfo`` and read back with ``pdftotext`` (poppler-utils, installed by ./dev).

PDFs go to ``artifacts/director/`` (ignored by git)."""

from __future__ import annotations

import pathlib
import re
import subprocess
import threading
import types

import pytest

from web import create_app
from web.sync import Services

pytestmark = pytest.mark.browser
playwright = pytest.importorskip("playwright.sync_api")
ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "artifacts" / "director"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PIN = "2468"


class FakeSession:
    battles = None

    def subscribe(self, callback):
        self.callback = callback


@pytest.fixture
def server(settings):
    from werkzeug.serving import make_server

    identity = types.SimpleNamespace(host_pin="8642", director_pin=PIN, hotspot_ssid="S", hotspot_password="p" * 10, box_name="b")
    app = create_app(settings, Services(session=FakeSession(), identity=identity))
    http = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    yield app, f"http://127.0.0.1:{http.server_port}"
    http.shutdown()
    thread.join()


def pdf_pages(path: pathlib.Path) -> int:
    info = subprocess.run(["pdfinfo", str(path)], check=True, capture_output=True, text=True, timeout=60).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))


def pdf_text(path: pathlib.Path) -> str:
    return subprocess.run(["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True, text=True,
                          timeout=60).stdout


def owl_day(app) -> str:
    """northern-owl 1.1: 38 entries (36 and a waiting list of 2), 9 seeds, the groups drawn and played, one
    player withdrawn after playing."""
    from web.director import desk

    with app.app_context():
        tournaments = desk()
        tid = tournaments.create("northern-owl", "Северная Сова 2026", seed=5)
        for i in range(38):
            tournaments.register(tid, f"Участник {i + 1:02d}", f"Клуб {i % 7 + 1}")
        tournaments.close_registration(tid)
        tournaments.set_seeds(tid, [f"p{i:03d}" for i in range(1, 10)])
        tournaments.draw(tid, seed=5)
        view = tournaments.view(tid)
        for battle in view["stages"][0]["battles"]:
            players = battle["players"]
            tournaments.record_result(tid, battle["id"], [{"player": p, "score": 200 - 50 * n}
                                                          for n, p in enumerate(players)])
        tournaments.withdraw(tid, view["stages"][0]["battles"][0]["players"][-1], "заболел")
    return tid


def test_the_print_page_prints_every_standing_and_every_battle_on_as_many_pages_as_it_takes(server):
    app, base = server
    tid = owl_day(app)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pdf = ARTIFACTS / "print.pdf"
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{base}/director/{tid}/print")
        page.fill("input[name=pin]", PIN)
        page.keyboard.press("Enter")
        page.wait_for_selector("section.stage")
        page.emulate_media(media="print")
        page.pdf(path=str(pdf), format="A4", print_background=False)
        browser.close()
    pages = pdf_pages(pdf)
    text = pdf_text(pdf)
    assert pages >= 2, "the whole tournament on one page: something still clips it"
    for number in range(1, 37):  # the 36 who played, every one in the standings
        assert f"Участник {number:02d}" in text, number
    for battle in range(1, 10):  # and every battle of the first stage, named as people name it
        assert f"Бой {battle}" in text, battle
    assert "вне турнира" in text  # the withdrawn player is marked on paper too


# Screens checked like a person would: nothing wider than the window, no element's box sticking out of its
# panel, and no text smaller than it should be (12 px on a phone or tablet, 16 px on a 1080p board read from afar).
LAYOUT_PROBLEMS = """(minPx) => {
  const problems = [];
  if (document.documentElement.scrollWidth > window.innerWidth + 1)
    problems.push("page " + document.documentElement.scrollWidth + " px wide in a " + window.innerWidth + " px window");
  for (const el of document.querySelectorAll("body *")) {
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden" || !el.getClientRects().length) continue;
    const text = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (text && parseFloat(style.fontSize) < minPx)
      problems.push("text " + style.fontSize + ": " + el.textContent.trim().slice(0, 40));
    const box = el.getBoundingClientRect(), holder = el.closest(".battle, .panel");
    if (holder && holder !== el) {
      const outer = holder.getBoundingClientRect();
      if (box.right > outer.right + 1 || box.left < outer.left - 1)
        problems.push((el.id || el.tagName) + " sticks out of its " + holder.className + ": " +
                      el.textContent.trim().slice(0, 30));
    }
  }
  return problems.slice(0, 20);
}"""


def layout_problems(page, min_px: int) -> list[str]:
    return page.evaluate(LAYOUT_PROBLEMS, min_px)


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 800), (390, 844)], ids=["board", "tablet", "phone"])
def test_the_public_table_uses_a_1080p_width_and_fits_a_phone(server, size):
    app, base = server
    tid = owl_day(app)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    width, height = size
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{base}/table/{tid}")
        page.wait_for_selector(".standings-table")
        page.screenshot(path=str(ARTIFACTS / f"table-{width}x{height}.png"), full_page=False)
        problems = layout_problems(page, 16 if width >= 1920 else 12)
        used = page.evaluate("document.querySelector('.desk').getBoundingClientRect().width")
        browser.close()
    assert problems == []
    if width >= 1920:  # the board's width, not a 1200 px column in the middle of a TV
        assert used > 1800


def test_battle_cards_and_the_result_form_fit_a_1280_tablet(server):
    # issue 12: «Назначить» stuck out of the battle cards and the result form out of its panel at 1280 px.
    from web.director import desk

    app, base = server
    with app.app_context():
        tournaments = desk()
        tid = tournaments.create("eurocup", "Кубок Европы", seed=1)
        for i in range(81):
            tournaments.register(tid, f"Константин Константинопольский-{i + 1}", f"Команда {i % 9}")
        tournaments.close_registration(tid)
        tournaments.draw(tid, seed=1)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{base}/director/{tid}/bracket")
        page.fill("input[name=pin]", PIN)
        page.keyboard.press("Enter")
        page.wait_for_selector(".battle")
        page.screenshot(path=str(ARTIFACTS / "bracket-1280.png"))
        bracket = layout_problems(page, 12)
        page.goto(f"{base}/director/{tid}/battle/1-27/01")
        page.wait_for_selector("#result")
        page.screenshot(path=str(ARTIFACTS / "result-1280.png"))
        result = layout_problems(page, 12)
        browser.close()
    assert bracket == [] and result == []


def test_the_print_pages_first_page_holds_the_first_stage_not_the_standings_alone(server):
    """Issue 21: the first page was 60 % empty (the standings alone, the first stage on page 2)."""
    app, base = server
    from web.director import desk

    with app.app_context():
        tid = desk().create("northern-owl", "Малая Сова", seed=2)
        for i in range(36):
            desk().register(tid, f"Участник {i + 1:02d}")
        desk().close_registration(tid)
        desk().set_seeds(tid, [f"p{i:03d}" for i in range(1, 10)])
        desk().draw(tid, seed=2)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pdf = ARTIFACTS / "print-first-page.pdf"
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{base}/director/{tid}/print")
        page.fill("input[name=pin]", PIN)
        page.keyboard.press("Enter")
        page.wait_for_selector("section.stage")
        page.emulate_media(media="print")
        page.pdf(path=str(pdf), format="A4", print_background=False)
        browser.close()
    first = subprocess.run(["pdftotext", "-f", "1", "-l", "1", "-layout", str(pdf), "-"], check=True,
                           capture_output=True, text=True, timeout=60).stdout
    assert "Бой 1" in first, "the first page holds the standings alone"
    assert len([line for line in first.splitlines() if line.strip()]) >= 25, first


def test_a_bracket_line_names_the_battle_the_player_went_on_to(server):
    """Issue 21: «→ 1/9 финала» said which stage, not which battle of it."""
    app, base = server
    tid = owl_day(app)
    from web.director import desk

    with app.app_context():
        desk().draw(tid, seed=5)                               # the third-final: the winners seated in its battles
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{base}/director/{tid}/bracket")
        page.fill("input[name=pin]", PIN)
        page.keyboard.press("Enter")
        page.wait_for_selector(".went-to")
        went = page.locator(".went-to").all_inner_texts()
        browser.close()
    assert went and all(re.fullmatch(r"→ .+, бой \d+", text.strip()) for text in went), went[:5]
