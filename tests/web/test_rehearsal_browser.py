"""A rehearsal of a small tournament day that a reviewer can look at (issue 21), in headless Chromium against
``svoyak run --simulator``, played through the real pages:

- the director logs in, makes a northern-owl tournament (36 and a waiting list), seeds, draws, names the themes
  and puts battle 1 on this box («Играть на этом боксе»); the host plays it to the end;
- the host then plays one battle of each other regulation's profile (eurocup, irkutsk, youth-cup, mubc) from
  «Новый бой», one theme each; a player presses from a phone (/play) in one of them, and the mubc one goes
  on claps;
- the hall's board (/board) and a watcher's phone (/watch) follow every step.

At each step every screen (desk, host, board, watcher, player's phone) is photographed at each size: tablet
1280x800, board 1920x1080 and phone 390x844, into ``artifacts/rehearsal/`` (ignored by git). The test fails on
text over text (a banner over the theme or the price: bounding boxes of visible text), on text cut off
(``scrollWidth > clientWidth`` in a box that clips), on a control under 48 px and on a console error.

The rooms part (:func:`test_a_round_in_two_rooms_with_every_screen_at_every_size`): a hub and two stations, each
a ``svoyak run --simulator`` on loopback with its own nats-server (tests/rooms/boxes.py), paired and played through
their pages, its screenshots ``artifacts/rehearsal/rooms-*.png``, checked the same way."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .conftest import simulator_box
from .screens import console_errors, small_controls, text_problems
from .test_browser import STEP_MS

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "rehearsal"
SIZES = {"tablet": {"width": 1280, "height": 800}, "board": {"width": 1920, "height": 1080},
         "phone": {"width": 390, "height": 844}}
# The five regulations (shared/regulations): northern-owl through the director, the others from the host's setup
PROFILES = ("eurocup", "irkutsk", "youth-cup", "mubc")


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    with simulator_box(tmp_path_factory.mktemp("rehearsal")) as running:
        yield running


class Screens:
    """Screens, each in its own browser context at its own size (``own``: name -> size); ``look`` photographs
    and checks them all. A page that reloads itself (the desk's rooms, a station's, the lobby: a meta refresh) is
    looked at again when a reload comes in the middle."""

    def __init__(self, browser, own: dict[str, str], prefix: str = "") -> None:
        from playwright.sync_api import expect

        self.expect, self.prefix, self.own = expect, prefix, own
        self.console: list[str] = []
        self.problems: dict[str, list[str]] = {}
        self.step = 0
        self.pages = {}
        for name, size in own.items():
            context = browser.new_context(viewport=SIZES[size], has_touch=size != "board")
            page = context.new_page()
            console_errors(page, self.console)
            self.pages[name] = page

    def look(self, what: str, screens=None) -> None:
        """Every screen (or ``screens``) at every size: a screenshot, and its text and controls checked."""
        self.step += 1
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for name in screens or self.pages:
            page = self.pages[name]
            if page.url == "about:blank":
                continue
            for size, viewport in SIZES.items():
                label = f"{self.prefix}{self.step:02d}-{what}-{name}-{size}"
                page.set_viewport_size(viewport)
                found = self._checked(page, ARTIFACTS / f"{label}.png")
                if found:
                    self.problems[label] = found
            page.set_viewport_size(SIZES[self.own[name]])

    @staticmethod
    def _checked(page, path: Path) -> list[str]:
        from playwright.sync_api import Error

        for _attempt in range(5):
            try:
                page.wait_for_load_state()
                # from the top, as a person opens it (text scrolled under the sticky top bar is hidden, not overlapping)
                page.evaluate("() => { window.scrollTo(0, 0); for (const el of document.querySelectorAll('main, .run, .desk')) el.scrollTop = 0; }")
                page.wait_for_timeout(60)                   # a frame or two to lay out again
                page.screenshot(path=str(path))
                return text_problems(page) + [f"small control: {c}" for c in small_controls(page)]
            except Error as error:                          # the page reloaded itself meanwhile: look again
                if "context was destroyed" not in str(error) and "navigat" not in str(error):
                    raise
        raise AssertionError(f"{page.url} kept reloading while it was looked at")

    def close(self) -> None:
        for page in self.pages.values():
            page.context.close()


class Rehearsal(Screens):
    """The day's screens at this box: the desk, the host, the board, a watcher's phone and a player's."""

    def __init__(self, browser, box) -> None:
        super().__init__(browser, {"desk": "tablet", "host": "tablet", "board": "board", "watch": "phone",
                                   "player": "phone"})
        self.url, self.box = box["url"], box
        self.sim = browser.new_context(viewport={"width": 900, "height": 500}).new_page()
        console_errors(self.sim, self.console)
        self.desk, self.host, self.board = self.pages["desk"], self.pages["host"], self.pages["board"]
        self.watch, self.player = self.pages["watch"], self.pages["player"]

    # -------------------------------------------------------------- the host's hands
    def command(self, name: str) -> None:
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
        self.expect(self.board.locator(".board-player.answering .name")).to_have_text(name, timeout=STEP_MS)

    def question(self, key: str | None, name: str, verdict: str = "right") -> None:
        """The next question: read to the end, then ``key`` presses (None: the host picks on claps)."""
        self.command("next")
        self.command("reading_done")
        if key is None:                                    # on claps the host's tap on the card points (mubc 4.4)
            self.host.locator(".host-player", has_text=name).click()
            self.answering(name)
        else:
            self.press(key)
            self.answering(name)
            self.command("point")
        self.command(verdict)

    def tools(self, open_: bool = True) -> None:
        self.host.locator(".extras").evaluate(f"details => {{ details.open = {str(open_).lower()}; }}")

    def new_battle(self, profile: str, players: list[str]) -> None:
        """«Новый бой» after the last one ended: the profile, the players, one theme named after it."""
        if self.host.locator("#host-end").is_visible():
            self.host.click("#new-battle-end")
        self.expect(self.host.locator("#setup")).to_be_visible(timeout=STEP_MS)
        self.host.select_option("#profile", profile)
        seats = self.host.locator("#players input")
        for index in range(seats.count()):
            seats.nth(index).fill(players[index] if index < len(players) else "")
        self.host.fill("#theme-count", "1")
        self.host.locator("#theme-list input[name=theme]").first.fill(f"Тема дня · {profile}")
        self.host.click("#start-battle")
        self.expect(self.host.locator("#run")).to_be_visible(timeout=STEP_MS)
        self.expect(self.board.locator(".board-player .name")).to_have_text(players, timeout=STEP_MS)


def test_a_small_tournament_day_of_every_regulation_with_every_screen_at_every_size(browser, box):
    day = Rehearsal(browser, box)
    expect, desk, host, board = day.expect, day.desk, day.host, day.board

    # --- The hall opens: the board waits with the Wi-Fi, a watcher's phone, a player's phone
    board.goto(day.url + "/board")
    day.watch.goto(day.url + "/watch")
    day.player.goto(day.url + "/play")
    day.sim.goto(day.url + "/sim")
    expect(board.locator("#waiting")).to_be_visible(timeout=STEP_MS)
    day.look("waiting", ["board", "watch", "player"])

    # --- The director: the desk's PIN, a northern-owl tournament, 38 entries, seeds, the draw, the themes
    desk.goto(day.url + "/director/")
    desk.fill("input[name=pin]", box["director_pin"])
    desk.keyboard.press("Enter")
    expect(desk.locator("#new-tournament")).to_be_visible(timeout=STEP_MS)
    day.look("director-home", ["desk"])
    desk.select_option("#new-tournament select[name=preset]", "northern-owl")
    desk.fill("#new-tournament input[name=title]", "Репетиция 2026")
    desk.fill("#new-tournament textarea[name=changes]", "groups.themes = 1")
    desk.click("#new-tournament button")
    expect(desk.locator("#add-list")).to_be_visible(timeout=STEP_MS)
    desk.fill("#add-list textarea", "\n".join(f"Участник {n:02d}; Клуб {n % 7 + 1}" for n in range(1, 39)))
    desk.click("#add-list button")
    expect(desk.locator("h3", has_text="Участники (36/36)")).to_be_visible(timeout=STEP_MS)
    tid = re.search(r"/director/([^/]+)/", desk.url).group(1)
    day.look("registration", ["desk"])
    desk.goto(f"{day.url}/director/{tid}/")
    desk.click("#close-registration button")
    desk.goto(f"{day.url}/director/{tid}/seeding")
    desk.fill("#seeds input[name=seeds]", " ".join(f"p{n:03d}" for n in range(1, 10)))   # northern-owl 2.2
    desk.click("#seeds button")
    desk.fill("#draw input[name=seed]", "5")
    desk.click("#draw button")
    expect(desk.locator("#b-groups\\/01")).to_be_visible(timeout=STEP_MS)
    desk.click("#stage-groups a", timeout=STEP_MS)
    desk.fill("textarea[name='names-groups:1']", "Реки России")
    desk.click("#themes button")
    card = desk.locator("#b-groups\\/01")
    expect(card).to_contain_text("1 тема: Реки России", timeout=STEP_MS)
    day.look("bracket-drawn", ["desk"])
    names = [re.sub(r"\s*★.*$", "", text.strip(), flags=re.S) for text in card.locator("ol.seat-list li").all_inner_texts()]
    card.locator("form.play input[name=host]").fill("Ирина Соколова")
    card.locator("form.play button").click()
    desk.wait_for_url(re.compile(r"/host$"), timeout=STEP_MS)

    # --- northern-owl, battle 1 of the groups, on this box: the host's PIN once
    host.goto(day.url + "/host")
    host.fill("#pin", box["host_pin"])
    host.click("#login-form button")
    expect(host.locator("#run")).to_be_visible(timeout=STEP_MS)
    expect(host.locator(".host-player .name")).to_have_text(names, timeout=STEP_MS)
    day.command("next")                                    # the theme
    expect(board.locator("#board-theme")).to_have_text("Реки России", timeout=STEP_MS)
    day.look("owl-theme", ["host", "board", "watch"])
    day.question("1", names[0])
    day.command("next")                                    # 20: a wrong answer, then the next round of presses
    day.command("reading_done")
    day.press("2")
    day.answering(names[1])
    day.command("point")
    day.command("wrong")
    day.press("3")
    day.answering(names[2])
    day.look("owl-after-minus", ["host", "board", "watch"])
    day.command("point")
    day.command("right")
    expect(board.locator("#board-result")).to_be_visible(timeout=STEP_MS)
    day.look("owl-result", ["board", "watch"])
    day.question("4", names[3])
    day.command("undo")                                    # the hall is told what was taken back
    expect(board.locator("#board-announce")).to_be_visible(timeout=STEP_MS)
    day.look("owl-undo", ["host", "board", "watch"])
    day.answering(names[3])
    day.command("right")
    day.question("1", names[0])
    day.question("2", names[1])
    expect(host.locator("#host-end")).to_be_visible(timeout=STEP_MS)
    expect(board.locator("#standings")).to_be_visible(timeout=STEP_MS)
    day.look("owl-end", ["host", "board", "watch"])
    # the result is on the bracket, the next battle named where the winner goes
    desk.goto(f"{day.url}/director/{tid}/bracket")
    expect(desk.locator("#b-groups\\/01 tr.went-on")).to_contain_text("Третьфинал", timeout=STEP_MS)
    day.look("bracket-result", ["desk"])

    # --- one battle of each other regulation, from «Новый бой»
    players = ["Аня", "Борис", "Вера"]
    for profile in PROFILES:
        day.new_battle(profile, players)
        day.command("next")                                # the theme
        if profile == "eurocup":
            # a player's phone presses for Вера's seat with the code the host page shows
            day.tools()
            host.click("#phones")
            code = host.locator("#seat-code-list li").nth(2).locator(".code")
            expect(code).to_have_text(re.compile(r"^\d+$"), timeout=STEP_MS)
            day.player.locator("#seats button").nth(2).click()
            day.player.fill("#code", code.inner_text())
            day.player.click("#code-submit")
            expect(day.player.locator("#buzz")).to_be_enabled(timeout=STEP_MS)
            day.tools(False)
            day.command("next")
            day.command("reading_done")
            day.player.locator("#buzz").click()
            day.answering("Вера")
            day.look("eurocup-phone-press", ["host", "board", "player"])
            day.command("point")
            day.command("right")
            rest = [("1", "Аня"), ("2", "Борис"), ("1", "Аня"), ("2", "Борис")]
        elif profile == "mubc":
            day.tools()
            host.click("#claps")                           # mubc 4.4: the buttons fail, the game goes on claps
            expect(host.locator("#claps-hint")).to_be_visible(timeout=STEP_MS)
            expect(board.locator("#board-claps")).to_be_visible(timeout=STEP_MS)
            day.tools(False)
            day.look("mubc-claps", ["host", "board", "watch"])
            rest = [(None, "Аня"), (None, "Борис"), (None, "Вера"), (None, "Аня"), (None, "Борис")]
        else:
            rest = [("1", "Аня"), ("2", "Борис"), ("3", "Вера"), ("1", "Аня"), ("2", "Борис")]
        for key, name in rest:
            day.question(key, name)
        expect(host.locator("#host-end")).to_be_visible(timeout=STEP_MS)
        expect(board.locator("#standings")).to_be_visible(timeout=STEP_MS)
        day.look(f"{profile}-end", ["host", "board", "watch"])

    # --- the day's table and the director's desk at the end
    desk.goto(f"{day.url}/director/{tid}/")
    day.look("desk-end", ["desk"])

    for page in list(day.pages.values()) + [day.sim]:
        page.context.close()
    (ARTIFACTS / "problems.json").write_text(json.dumps(day.problems, ensure_ascii=False, indent=1))
    assert len(list(ARTIFACTS.glob("*.png"))) >= 60
    assert day.console == [], "\n".join(day.console)
    assert day.problems == {}, json.dumps(day.problems, ensure_ascii=False, indent=1)


# ---------------------------------------------------------------------------------------------------- two rooms
class Room:
    """One station's screens: its host tablet, its board, its buttons (the simulator page); the hands are the
    rehearsal's own."""

    command, press, answering, question = Rehearsal.command, Rehearsal.press, Rehearsal.answering, Rehearsal.question

    def __init__(self, screens: Screens, name: str, box, sim) -> None:
        self.expect, self.name, self.box, self.sim = screens.expect, name, box, sim
        self.host, self.board = screens.pages[f"{name}-host"], screens.pages[f"{name}-board"]


@pytest.fixture(scope="module")
def venue(tmp_path_factory):
    """Two ``svoyak run --simulator`` stations and a hub on loopback, as tests/rooms/boxes.py starts them: each
    its own data directory, capture and nats-server (the hub's the leaf hub; leaf port 0: a free one)."""
    from tests.rooms.boxes import Box

    from .conftest import free_port

    folder = tmp_path_factory.mktemp("rooms")
    boxes = {name: Box(name, folder / name, free_port()) for name in ("hub", "room1", "room2")}
    try:
        for box in boxes.values():
            box.start()
        yield boxes
    finally:
        for box in boxes.values():
            box.stop()


def test_a_round_in_two_rooms_with_every_screen_at_every_size(browser, venue):
    """The rooms part of the day (docs/rooms.md): the director makes this box the hub and pairs two stations
    from the desk's code (each station's tablet opens the link the QR code holds); a mubc tournament of six is
    drawn and its two battles of round 1 given to the two rooms; each room's host starts the battle from the
    station's page and plays it on the host page, its board following; the results reach the desk, and the
    hall's lobby names both rooms. Every screen at every size, checked like the rest of the rehearsal."""
    from tests.rooms.boxes import PIN, DIRECTOR_PIN, wait_for

    hub, boxes = venue["hub"], {"room1": venue["room1"], "room2": venue["room2"]}
    own = {"desk": "tablet", "lobby": "board"}
    for name in boxes:
        own.update({f"{name}-host": "tablet", f"{name}-board": "board"})
    own["room1-watch"] = "phone"
    day = Screens(browser, own, prefix="rooms-")
    expect, desk, lobby = day.expect, day.pages["desk"], day.pages["lobby"]
    sims = {}
    for name, box in boxes.items():
        sims[name] = browser.new_context(viewport={"width": 900, "height": 500}).new_page()
        console_errors(sims[name], day.console)
        sims[name].goto(box.url + "/sim")
    rooms = {name: Room(day, name, box, sims[name]) for name, box in boxes.items()}
    try:
        # --- the director makes this box the hub
        desk.goto(hub.url + "/director/rooms")
        desk.fill("input[name=pin]", DIRECTOR_PIN)
        desk.keyboard.press("Enter")
        role = desk.locator("form[action$='/director/rooms/role']")
        expect(role).to_be_visible(timeout=STEP_MS)
        role.locator("select[name=role]").select_option("hub")
        role.locator("input[name=name]").fill("Стол")
        role.locator("button").click()
        expect(desk.locator("text=Подключить станцию")).to_be_visible(timeout=STEP_MS)
        day.look("hub", ["desk"])

        # --- each station pairs from the link of the desk's QR code, on its own tablet
        from web.rooms import pairing_link

        for number, (name, room) in enumerate(rooms.items(), start=1):
            desk.click("text=Подключить станцию")
            code = desk.locator("#pair-code")
            expect(code).to_have_text(re.compile(r"^\d{6}$"), timeout=STEP_MS)
            tablet = room.host
            tablet.goto(pairing_link(f"127.0.0.1:{room.box.port}", f"127.0.0.1:{hub.port}", code.inner_text()))
            if tablet.locator("input[name=pin]").count():
                tablet.fill("input[name=pin]", DIRECTOR_PIN)
                tablet.keyboard.press("Enter")
            form = tablet.locator("#pair-form")
            expect(form).to_be_visible(timeout=STEP_MS)
            form.locator("input[name=name]").fill(f"Зал {number}")
            if number == 1:
                day.look("pairing", ["desk", f"{name}-host"])
            form.locator("button").click()
            expect(tablet.locator("#pair-form")).to_have_count(0, timeout=STEP_MS)
            room.board.goto(room.box.url + "/board")
        day.pages["room1-watch"].goto(rooms["room1"].box.url + "/watch")
        wait_for(lambda: len(hub.json("/director/rooms.json")["rooms"]) == 2
                 and all(r["online"] for r in hub.json("/director/rooms.json")["rooms"]), 60, "both rooms online")
        desk.goto(hub.url + "/director/rooms")
        expect(desk.locator("table.rooms tr.online")).to_have_count(2, timeout=STEP_MS)
        lobby.goto(hub.url + "/lobby")
        expect(lobby.locator("article.room")).to_have_count(2, timeout=STEP_MS)
        day.look("paired", ["desk", "lobby", "room1-host", "room1-board", "room1-watch"])

        # --- a mubc tournament of six, one theme a battle: round 1 is two battles of three
        desk.goto(hub.url + "/director/")
        desk.select_option("#new-tournament select[name=preset]", "mubc")
        desk.fill("#new-tournament input[name=title]", "Репетиция залов")
        desk.fill("#new-tournament textarea[name=changes]", "swiss.themes = 1")
        desk.click("#new-tournament button")
        expect(desk.locator("#add-list")).to_be_visible(timeout=STEP_MS)
        desk.fill("#add-list textarea", "\n".join(f"Игрок {n}; Клуб {n % 3 + 1}" for n in range(1, 7)))
        desk.click("#add-list button")
        tid = re.search(r"/director/([^/]+)/", desk.url).group(1)
        desk.goto(f"{hub.url}/director/{tid}/")
        desk.click("#close-registration button")
        desk.fill("#draw input[name=seed]", "3")
        desk.click("#draw button")
        desk.goto(f"{hub.url}/director/rooms")
        keys = desk.locator("#battle-key option").evaluate_all("options => options.map((o) => o.value)")
        assert len(keys) == 2, keys
        for key, name in zip(keys, rooms):
            desk.locator("#battle-key").select_option(key)
            desk.locator("form[action$='/director/rooms/assign'] select[name=box]").select_option(label=f"Зал {list(rooms).index(name) + 1}")
            desk.locator("form[action$='/director/rooms/assign'] button").click()
            desk.wait_for_load_state()
        day.look("assigned", ["desk"])

        # --- each room: the station's page offers the battle, its host starts it and plays it through
        for name, room in rooms.items():
            room.host.goto(room.box.url + "/room")
            start = room.host.locator("form.assignment button")
            expect(start).to_be_visible(timeout=STEP_MS + 20_000)      # the assignment crosses the leaf
            players = [p.strip() for p in room.host.locator("form.assignment p", has_text="Игроки").inner_text()
                       .split(":", 1)[1].split(",")]
            day.look(f"{name}-offered", [f"{name}-host"])
            start.click()
            expect(room.host.locator("#login-form")).to_be_visible(timeout=STEP_MS)
            room.host.fill("#pin", PIN)
            room.host.click("#login-form button")
            expect(room.host.locator("#run")).to_be_visible(timeout=STEP_MS)
            expect(room.host.locator(".host-player .name")).to_have_text(players, timeout=STEP_MS)
            expect(room.board.locator(".board-player .name")).to_have_text(players, timeout=STEP_MS)
            room.command("next")                               # the theme
            room.question("1", players[0])
            screens = [f"{name}-host", f"{name}-board"] + (["room1-watch"] if name == "room1" else [])
            day.look(f"{name}-playing", screens)
            for key, player in (("2", players[1]), ("3", players[2]), ("1", players[0]), ("2", players[1])):
                room.question(key, player)
            expect(room.host.locator("#host-end")).to_be_visible(timeout=STEP_MS)
            expect(room.board.locator("#standings")).to_be_visible(timeout=STEP_MS)
            expect(room.host.locator("#room-link")).to_be_visible()     # a room's host: back to its battles
            day.look(f"{name}-end", screens)
            room.host.click("#room-link")
            expect(room.host.locator("form.assignment")).to_have_count(0, timeout=STEP_MS)   # played: none left
            expect(room.host.locator("main")).to_contain_text("Стол пока не дал этой комнате боя")

        # --- the results cross to the desk; the hall's lobby names both rooms
        def results():
            table = hub.get(f"/table/{tid}.json").json()
            return sum(1 for stage in table["stages"] for battle in stage.get("battles", []) if battle.get("lines"))

        wait_for(lambda: results() == 2, 60, "both results at the desk", step_s=0.5)
        desk.goto(f"{hub.url}/director/{tid}/")
        day.look("results", ["desk"])
        desk.goto(f"{hub.url}/director/rooms")
        lobby.goto(hub.url + "/lobby")
        day.look("lobby-end", ["desk", "lobby"])
    finally:
        day.close()
        for sim in sims.values():
            sim.context.close()
    (ARTIFACTS / "problems-rooms.json").write_text(json.dumps(day.problems, ensure_ascii=False, indent=1))
    assert len(list(ARTIFACTS.glob("rooms-*.png"))) >= 40
    assert day.console == [], "\n".join(day.console)
    assert day.problems == {}, json.dumps(day.problems, ensure_ascii=False, indent=1)
