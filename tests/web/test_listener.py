"""A cheating player listens: real python-socketio clients on every audience namespace and plain GETs of every
audience page, with no login, through whole battles set up from each kind of package (SIGame ``.siq``, a
db.chgk.info text export, a CSV table), with corrections, undo, withdrawals, phones, a restart of the server
and reconnects (the snapshot on reconnect). Every message any of them receives is scanned for any question
text, answer, comment, source, PIN, seat code or password not yet public at that moment; the first one fails
the test (issue 18).

"Public" follows the rules and the setting ``board_answer``: a question's text, comment and source never; its
answer from the first update in which the host's own view has that question over (and announced, under
``announced``); the hotspot's password only on the board's ``hello`` (its waiting screen shows it to the hall).
The host's client, behind the PIN, hears every update; its view at each ``seq`` says what was public then.
"""

from __future__ import annotations

import html
import json
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
import socketio
from werkzeug.serving import make_server

from appliance.packages.model import Package
from appliance.service.battle_adapter import BattleAdapter
from appliance.service.battles import Battles
from appliance.service.identity import Identity
from appliance.service.packages import QuestionPackages
from appliance.service.session import Session
from appliance.store import EventStore
from appliance.service import audience
from tests.appliance.packages.conftest import sport_siq
from tests.appliance.service.test_audience import undeclared, undeclared_update
from web import create_app
from web.sync import Services

from .conftest import drawn_owl

HOST_PIN, DIRECTOR_PIN, WIFI_PASSWORD = "731955", "864209", "Wifi-Secret-77"
IDENTITY = Identity(box_name="svoyak-L1ST", hotspot_ssid="Svoyak-L1ST", hotspot_password=WIFI_PASSWORD,
                    host_pin=HOST_PIN, director_pin=DIRECTOR_PIN)
AUDIENCE_NAMESPACES = ("/board", "/player", "/sim", "/overlay")
PAGES = ("/", "/board", "/watch", "/play", "/sim", "/overlay", "/overlay?layout=full", "/lobby", "/lobby.json",
         "/host", "/packages", "/director/", "/board/wifi.svg", "/room", "/room.json", "/director/rooms.json")
PLAYERS = ["Аня", "Борис", "Вера"]
RECORDS = {  # what each audience namespace may be sent: (its view's record, its hello's)
    "/board": (audience.BoardView, audience.BoardHello), "/overlay": (audience.OverlayView, audience.OverlayHello),
    "/player": (audience.PlayerView, audience.Hello), "/sim": (audience.SimulatorView, audience.Hello),
}


def chgk_text(themes: int = 4) -> str:
    """A db.chgk.info text export of a «Своя игра» tour: each theme a numbered question, its five parts."""
    out = ["Чемпионат:\nКубок слушателя\n\nТур:\nСвоя игра. Первый тур\n"]
    for t in range(1, themes + 1):
        parts = "\n".join(f"   {q}. Текст ЧГК {t}.{q} про тему." for q in range(1, 6))
        answers = "\n".join(f"   {q}. Отгадка ЧГК {t}.{q}." for q in range(1, 6))
        comments = "\n".join(f"   {q}. Пояснение ЧГК {t}.{q}." for q in range(1, 6))
        out.append(f"Вопрос {t}:\nТема ЧГК номер {t}\n{parts}\n\nОтвет:\n{answers}\n\nКомментарий:\n{comments}\n\n"
                   f"Источник:\n   Справочник ЧГК {t}.\n\nАвтор:\nСоставитель {t}\n")
    return "\n".join(out)


def table_csv(themes: int = 4) -> str:
    rows = ["тема,цена,вопрос,ответ,комментарий,источник"]
    for t in range(1, themes + 1):
        for q in range(1, 6):
            rows.append(f"Тема таблицы {t},{10 * q},Строка {t}.{q}: текст вопроса,Решение {t}.{q},"
                        f"Примечание {t}.{q},Первоисточник {t}.{q}")
    return "\n".join(rows) + "\n"


KINDS = {
    "siq": ("кубок.siq", lambda: sport_siq(6)),
    "chgk": ("тур.txt", lambda: chgk_text(4).encode()),
    "table": ("вопросы.csv", lambda: table_csv(4).encode()),
}


def package_secrets(package: Package) -> tuple[dict[str, str], set[str]]:
    """``({answer: answer}, never)``: every answer of the package, and the texts, comments and sources that no
    audience may ever hear (ones shorter than 4 characters would match everywhere and are left out)."""
    answers, never = {}, set()
    for theme in package.themes:
        if len(theme.comment.strip()) >= 4:
            never.add(theme.comment.strip())
        for question in theme.questions:
            for text in (question.text, question.comment, question.source):
                if len(text.strip()) >= 4:
                    never.add(text.strip())
            if len(question.answer.strip()) >= 4:
                answers[question.answer.strip()] = question.answer.strip()
    return answers, never


def strings_of(value, out: list) -> list:
    """Every string and number in a decoded message, keys too."""
    if isinstance(value, dict):
        for key, item in value.items():
            out.append(str(key))
            strings_of(item, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            strings_of(item, out)
    elif value is not None:
        out.append(str(value))
    return out


def found(secret: str, texts: list[str]) -> str | None:
    """The text that holds ``secret``; a code of digits only as a whole number (not inside a timestamp)."""
    if secret.isdigit():
        pattern = re.compile(rf"(?<!\d){secret}(?!\d)")
        return next((text for text in texts if pattern.search(text)), None)
    return next((text for text in texts if secret in text), None)


class Box:
    """The app over a real battle store and package folder on disk, served on one port across restarts."""

    def __init__(self, settings, board_answer: str) -> None:
        self.settings, self.board_answer = settings, board_answer
        self.port = 0
        self.epoch = 0
        self.start()

    def start(self) -> None:
        data = self.settings.data_dir
        self.battles = Battles(EventStore(data / "battles.sqlite"))
        self.packages = QuestionPackages.in_folder(data / "packages", self.battles)
        self.session = Session(self.battles, BattleAdapter(packages=self.packages, board_answer=self.board_answer),
                               simulator=True).start()
        self.app = create_app(self.settings, Services(session=self.session, identity=IDENTITY,
                                                      packages=self.packages))
        self.http = make_server("127.0.0.1", self.port, self.app, threaded=True)
        self.port = self.http.server_port
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()
        self.epoch += 1

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()
        self.thread.join(timeout=5)
        self.session.close()
        self.battles.store.close() if hasattr(self.battles, "store") and hasattr(self.battles.store, "close") else None

    def restart(self) -> None:
        self.stop()
        self.start()


class Ear:
    """One client on one namespace that keeps every message it hears, with the box's epoch (restarts)."""

    def __init__(self, box: Box, namespace: str, auth: dict | None = None) -> None:
        self.box, self.namespace, self.auth = box, namespace, auth
        self.heard: list[tuple[int, str, object]] = []
        self.lock = threading.Lock()
        self.sio = None
        self.connect()

    def connect(self) -> None:
        self.sio = socketio.Client(reconnection=False)
        self.sio.on("*", self._keep, namespace=self.namespace)
        self.sio.on("connect_error", lambda data: self._keep("connect_error", data), namespace=self.namespace)
        self.sio.connect(self.box.url, namespaces=[self.namespace], auth=self.auth, transports=["websocket"],
                         wait_timeout=5)

    def _keep(self, event, data=None) -> None:
        with self.lock:
            self.heard.append((self.box.epoch, event, data))

    def seq(self) -> int | None:
        """The seq of the last snapshot or update heard in this epoch."""
        with self.lock:
            for epoch, event, data in reversed(self.heard):
                if epoch == self.box.epoch and event in ("snapshot", "update"):
                    return data["seq"]
        return None

    def wait(self, seq: int, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while (-1 if self.seq() is None else self.seq()) < seq:
            assert time.monotonic() < deadline, f"{self.namespace} never reached seq {seq}"
            time.sleep(0.005)

    def close(self) -> None:
        if self.sio is not None:
            self.sio.disconnect()


class Host(Ear):
    """The host's client (behind the PIN): its view at every seq says which answers the audience may hear."""

    def __init__(self, box: Box, board_answer: str) -> None:
        self.board_answer = board_answer
        self.view: dict = {}
        self.public: set[str] = set()
        self.public_at: dict[tuple[int, int], frozenset] = {}
        self.codes: set[str] = set()
        super().__init__(box, "/host", {"pin": HOST_PIN})

    def _keep(self, event, data=None) -> None:
        if event == "snapshot":
            self.view = dict(data["view"])
        elif event == "update":
            self.view.update(data["changes"])
            for key in data["removed"]:
                self.view.pop(key, None)
        if event in ("snapshot", "update"):
            current = (self.view.get("reading") or {}).get("current")
            if current and current.get("over") and current.get("answer") and (
                    self.board_answer == "over" or (self.board_answer == "announced" and current.get("announced"))):
                self.public.add(current["answer"].strip())
            self.codes.update(self.view.get("seat_codes") or ())
            self.public_at[(self.box.epoch, data["seq"])] = frozenset(self.public)
        super()._keep(event, data)

    def command(self, name: str, **args) -> dict:
        self.count = getattr(self, "count", 0) + 1
        done = self.sio.call("command", {"id": f"listen-{self.box.epoch}-{self.count}", "name": name, "args": args},
                             namespace="/host", timeout=10)
        assert done["ok"], (name, args, done)
        self.wait(done["seq"])
        return done


class Hall:
    """Every listener, and the check of what they heard against what was public when they heard it."""

    def __init__(self, box: Box, host: Host, answers: dict, never: set) -> None:
        self.box, self.host, self.answers, self.never = box, host, answers, never
        self.ears = [Ear(box, namespace) for namespace in AUDIENCE_NAMESPACES]
        self.ears.append(Ear(box, "/board"))  # a second board: the watchers' phones
        self.pages: list[tuple[str, frozenset, str]] = []
        self.checked = 0
        self.extra: tuple = ()  # the pages of this box's tournament and package
        self.told: set[str] = set()  # the answers the audience heard once public: the scan does see them

    def reconnect(self) -> None:
        for ear in self.ears:
            ear.connect()
        self.host.connect()

    def settle(self) -> None:
        """Wait until every listener heard the box's last update."""
        seq = self.box.session.seq
        self.host.wait(seq)
        for ear in self.ears:
            ear.wait(seq)

    def get_pages(self, changing_only: bool = False) -> None:
        """GET every audience page (``changing_only``: those whose content follows the battle) with no login."""
        self.settle()
        battle = (self.host.view.get("battle") or {}).get("id")
        # the battle's id is on the board: its papers are public, like the board
        papers = (f"/battles/{battle}/protocol", f"/battles/{battle}/protocol.csv") if battle else ()
        changing = (*papers, "/lobby.json", "/room.json")
        public = frozenset(self.host.public)
        for path in changing if changing_only else (*PAGES, *self.extra, *papers):
            request = urllib.request.Request(self.box.url + path, headers={"Host": f"127.0.0.1:{self.box.port}"})
            opener = urllib.request.build_opener(NoRedirect)
            try:
                with opener.open(request, timeout=10) as response:
                    body = response.read().decode("utf-8", "replace")
            except urllib.error.HTTPError as error:  # a redirect to a login, a 404: its body is heard too
                body = error.read().decode("utf-8", "replace")
            self.pages.append((path, public, html.unescape(body)))

    def secrets(self, public: frozenset, *, wifi_public: bool) -> list[str]:
        credentials = {HOST_PIN, DIRECTOR_PIN, *self.host.codes}
        if not wifi_public:
            credentials.add(WIFI_PASSWORD)
        return [*self.never, *(answer for answer in self.answers if answer not in public), *credentials]

    def check(self) -> None:
        """Fail on the first message or page that held what was not public when it was sent."""
        self.settle()
        latest = frozenset(self.host.public)
        for ear in self.ears:
            with ear.lock:
                heard = list(ear.heard)
            for epoch, event, data in heard:
                assert not self.undeclared(ear.namespace, event, data), (ear.namespace, event, data)
                seq = data.get("seq") if isinstance(data, dict) and event in ("snapshot", "update") else None
                public = latest if seq is None else self.host.public_at.get((epoch, seq), frozenset())
                texts = strings_of([event, data], [])
                for secret in self.secrets(public, wifi_public=ear.namespace == "/board" and event == "hello"):
                    text = found(secret, texts)
                    assert text is None, (f"{ear.namespace} heard {secret!r} in {event} (epoch {epoch}, seq {seq}) "
                                          f"before it was public: {json.dumps(data, ensure_ascii=False)[:600]}")
                self.told.update(answer for answer in public if found(answer, texts))
                self.checked += 1
        for path, public, body in self.pages:
            for secret in self.secrets(public, wifi_public=False):
                assert found(secret, [body]) is None, f"GET {path} holds {secret!r}"
            self.checked += 1

    @staticmethod
    def undeclared(namespace: str, event: str, data) -> list[str]:
        """The keys of a message that its audience's records do not declare (the test fails on any)."""
        view, hello = RECORDS[namespace]
        if event == "hello":
            return undeclared(hello, data, "hello")
        if event == "snapshot":
            return [f"snapshot.{key}" for key in set(data) - {"seq", "server_now_ns", "view"}] + undeclared(
                view, data["view"], "view")
        if event == "update":
            return undeclared_update(view, data)
        if event == "overlay_layout" and namespace == "/overlay":
            return [key for key in data if key != "layout"]
        return [f"{event} is not an event of {namespace}"]

    def close(self) -> None:
        closers = [threading.Thread(target=ear.close) for ear in [*self.ears, self.host]]
        for closer in closers:
            closer.start()
        for closer in closers:
            closer.join()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def press(box: Box, host: Host, player: int) -> None:
    """A button press of ``player`` (from 0), as the capture service reports it; the host sees it counted."""
    box.session.on_capture_event({"event": "press", "seq": time.monotonic_ns(), "player": player + 1,
                                  "t_ns": time.monotonic_ns(), "status": "won"})
    host.wait(box.session.seq)


def phone_press(box: Box, host: Host, player: int) -> None:
    """A press from the player's phone with the seat's code the host told him (the host's view has it)."""
    phone = socketio.Client(reconnection=False)
    phone.connect(box.url, namespaces=["/player"], transports=["websocket"], wait_timeout=5)
    try:
        code = host.view["seat_codes"][player]
        assert phone.call("claim", {"player": player, "code": code}, namespace="/player", timeout=5)["ok"]
        ack = phone.call("press", {"player": player, "code": code, "id": f"phone-{time.monotonic_ns()}"},
                         namespace="/player", timeout=5)
        assert ack["ok"], ack
    finally:
        phone.disconnect()
    host.wait(box.session.seq)


def play_question(box: Box, host: Host, hall: Hall, number: int) -> None:
    """One question, played a way of its own by ``number``: right at once, wrong then right, withdrawn, judged
    then undone, wrong then corrected, a phone's press; then the host announces the answer."""
    host.command("reading_done")
    if number % 2:
        hall.get_pages(changing_only=True)  # while the question is being played
    eligible = [player["index"] for player in host.view["players"] if player["eligible"]]
    first, second = eligible[number % len(eligible)], eligible[(number + 1) % len(eligible)]
    kind = number % 6 if len(eligible) > 1 else 0
    if kind == 5 and host.view.get("phones_enabled"):
        phone_press(box, host, first)
    else:
        press(box, host, first)
    host.command("point")
    if kind in (0, 5):
        host.command("right")
    elif kind == 1:
        host.command("wrong")
        press(box, host, second)
        host.command("point")
        host.command("right")
    elif kind == 2:
        host.command("withdraw", reason="Неточная формулировка")
    elif kind == 3:
        host.command("right")
        host.command("undo")
        host.command("right")
    else:
        host.command("wrong")
        press(box, host, second)
        host.command("point")
        host.command("right")
        host.command("correct", player=first, correct=True, reason="Ответ засчитан по апелляции")
    if host.view["allowed"].get("announce") is None:
        hall.get_pages(changing_only=True)  # over, not yet announced
        host.command("announce")


@pytest.mark.parametrize("kind, board_answer", [("siq", "announced"), ("chgk", "over"), ("table", "never")])
def test_a_listener_with_no_login_hears_nothing_before_it_is_public(settings, kind, board_answer):
    box = Box(settings, board_answer)
    name, data = KINDS[kind]
    package_id = box.packages.add(name, data())["id"]
    answers, never = package_secrets(box.packages.package(package_id))
    assert len(answers) >= 20 and len(never) >= 40, (len(answers), len(never))
    tid = drawn_owl(box.app)
    with box.app.app_context():  # the table's battles have planned theme names: nobody plays them here
        from web.director import desk

        first = next(b for stage in desk().view(tid)["stages"] for b in stage.get("battles", []))
        planned = {f"Тема-загадка {n} для стола" for n in range(len(first["themes"]))}
        desk().name_themes(tid, first["theme_pack"], sorted(planned))
    host = Host(box, board_answer)
    hall = Hall(box, host, answers, never | planned)
    hall.extra = (f"/table/{tid}", f"/table/{tid}.json", f"/director/{tid}/", f"/director/{tid}/export.json",
             f"/packages/{package_id}", f"/packages/{package_id}/written/key")
    try:
        hall.get_pages()
        host.command("phones", enabled=True)
        host.command("setup", profile="eurocup", players=PLAYERS, themes=[{"name": "", "red": False}] * 4,
                     package={"id": package_id})
        hall.check()  # the setup carries every text of the battle: nobody but the host hears one
        assert host.view["reading"]["next"]["text"]
        number = 0
        while not host.view["battle"]["finished"]:
            host.command("next")
            if host.view["question"] is None or host.view["question"]["over"]:
                continue  # a theme started: its first price comes with the next "next"
            play_question(box, host, hall, number)
            number += 1
            if number == 7:  # mid-battle: the box restarts; every listener comes back and gets a snapshot
                hall.check()
                hall.close()
                box.restart()
                hall.reconnect()
                hall.get_pages()
            if number == 3:  # the stream operator switches the overlays' layout: they hear it, nothing more
                form = urllib.parse.urlencode({"pin": HOST_PIN, "layout": "full"}).encode()
                with urllib.request.urlopen(box.url + "/overlay/layout", data=form, timeout=5) as switched:
                    assert json.loads(switched.read()) == {"ok": True, "layout": "full"}
            if number % 4 == 0:
                for ear in hall.ears:  # a listener that lost its place asks for a resync
                    ear.sio.call("resync", {}, namespace=ear.namespace, timeout=5)
                hall.get_pages()
            assert number < 60, "the battle never finished"
        hall.get_pages()
        hall.check()
        assert number >= 20 and hall.checked > 500
        assert (len(host.public) >= 15 if board_answer != "never" else not host.public) and hall.told == host.public
    finally:
        hall.close()
        box.stop()
