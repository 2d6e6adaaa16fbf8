"""The question packages screen (/packages) over HTTP, and the texts kept from the audience over Socket.IO."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from appliance.service.battle_adapter import BattleAdapter
from appliance.service.packages import QuestionPackages
from appliance.service.session import Session
from tests.appliance.packages.conftest import V4_CONTENT, make_zip, sport_siq
from web import create_app
import appliance.words as words

REFUSALS = {f"package.{code}": pair for code, pair in words.pairs("refusal.package.").items()}
from web.sync import Services

from .conftest import DIRECTOR_PIN, IDENTITY, PIN, Client, Server

BOX = {}  # the test client's own host, localhost: a host the box serves
MB = 1024 * 1024
DOCS = Path(__file__).resolve().parents[2] / "docs" / "packages.md"


@pytest.fixture
def box(settings, memory_battles):
    packages = QuestionPackages.in_folder(settings.data_dir / "packages", memory_battles)
    session = Session(memory_battles, BattleAdapter(packages=packages), simulator=True).start(timer_thread=False)
    app = create_app(settings, Services(session=session, identity=IDENTITY, packages=packages))
    app.config["TESTING"] = True
    yield app, packages, session
    session.close()


@pytest.fixture
def client(box):
    with box[0].test_client() as client:
        yield client


def log_in(client, pin=PIN):
    return client.post("/packages/login?next=/packages", data={"pin": pin}, headers=BOX)


def upload(client, name: str, data: bytes):
    return client.post("/packages/upload", data={"file": (io.BytesIO(data), name)}, headers=BOX,
                       content_type="multipart/form-data")


def test_only_the_host_pin_or_a_director_opens_the_packages(client):
    assert client.get("/packages", headers=BOX).status_code == 302
    assert log_in(client, "0000").status_code == 403
    assert log_in(client).status_code == 302
    assert "Пакетов пока нет" in client.get("/packages", headers=BOX).get_data(as_text=True)
    client.delete_cookie("session")
    assert client.get("/packages", headers=BOX).status_code == 302
    # A director logged in at the desk needs no second login.
    assert client.post("/director/login", data={"pin": DIRECTOR_PIN}, headers=BOX).status_code == 302
    assert client.get("/packages", headers=BOX).status_code == 200


def test_wrong_pins_here_count_with_the_host_pages(client):
    """The host PIN has one box-wide budget of guesses (web/guard.py): wrong PINs here spend the host page's."""
    guard = client.application.extensions["svoyak.hub"].services.pin_guard
    for _ in range(guard.burst):
        log_in(client, "0000")
    assert guard.wrong == guard.burst
    refused = log_in(client)  # the right PIN too: the box waits
    assert refused.status_code == 429
    assert "Слишком много неверных PIN на боксе" in refused.get_data(as_text=True)


def test_an_upload_is_listed_with_its_counts_and_previewed_with_answers(client, box):
    log_in(client)
    added = upload(client, "кубок.siq", sport_siq(6))
    page = added.get_data(as_text=True)
    assert added.status_code == 201
    assert "Пакет «Кубок двора» загружен: 6 тем, 30 вопросов" in page
    row = re.search(r'<tr data-package="(\w+)"[^>]*>(.*?)</tr>', page, re.S)
    cells = re.findall(r"<td>(.*?)</td>", row.group(2), re.S)
    assert cells[1:6] == ["SIGame", "6", "30", "0", "0"]
    again = upload(client, "копия.siq", sport_siq(6))
    assert again.status_code == 200 and "Этот файл уже загружен" in again.get_data(as_text=True)
    preview = client.get(f"/packages/{row.group(1)}", headers=BOX).get_data(as_text=True)
    assert "Вопрос 3.4 о теме 3." in preview and "Ответ 3.4" in preview and "Источник 3.4" in preview
    assert "не сыграна" in preview
    english = client.get("/packages?lang=en", headers=BOX).get_data(as_text=True)
    assert "Question packages" in english and "Themes played" in english


def test_media_are_counted_and_served_to_the_host_only(client):
    log_in(client)
    page = upload(client, "k.siq", make_zip({"content.xml": V4_CONTENT, "Images/Карта реки.png": b"PNG"}))
    text = page.get_data(as_text=True)
    assert "1 вопрос с картинками, звуком или видео" in text
    package_id = re.search(r'data-package="(\w+)"', text).group(1)
    served = client.get(f"/packages/{package_id}/media/Images/Карта реки.png", headers=BOX)
    assert served.data == b"PNG"
    served.close()
    client.delete_cookie("session")
    assert client.get(f"/packages/{package_id}/media/Images/Карта реки.png", headers=BOX).status_code == 302


@pytest.mark.parametrize("name, data, code, named", [
    ("bad.siq", make_zip({"content.xml": V4_CONTENT, "../evil.png": b"x"}, quote=False), "package.unsafe_entry",
     "../evil.png"),
    ("bomb.siq", make_zip({"content.xml": V4_CONTENT, "Images/Карта реки.png": bytes(30 * MB)}), "package.bomb",
     "Images/Карта реки.png"),
    ("lol.xml", b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "a"><!ENTITY b "&a;&a;">]><tournament>&b;'
                b"</tournament>", "package.unsafe_xml", "DTD"),
    ("broken.siq", make_zip({"content.xml": "<package>\n<rounds>\n<round>\n</package>"}), "package.bad_xml",
     "строка 4"),
    ("t.csv", "тема,цена,вопрос\nРеки,10,Вопрос\n".encode(), "package.missing_columns", "ответ"),
])
def test_a_hostile_or_malformed_file_is_refused_worded_and_nothing_is_kept(client, box, name, data, code, named):
    log_in(client)
    refused = upload(client, name, data)
    page = refused.get_data(as_text=True)
    assert refused.status_code == 400
    assert f'data-code="{code}"' in page and named in page, page[:3000]
    assert "Traceback" not in page
    assert box[1].entries() == []
    packages_dir = box[0].config["SVOYAK_SETTINGS"].data_dir / "packages"
    assert list(packages_dir.iterdir()) == []  # no half-imported folder either


class LazyBody(io.RawIOBase):
    """A request body of ``size`` bytes that counts what the server reads of it (made only when read)."""

    def __init__(self, size: int):
        self.size, self.position, self.read_bytes = size, 0, 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def seek(self, offset, whence=0):
        self.position = {0: offset, 1: self.position + offset, 2: self.size + offset}[whence]
        return self.position

    def tell(self):
        return self.position

    def readinto(self, buffer):
        count = max(0, min(len(buffer), self.size - self.position))
        buffer[:count] = bytes(count)
        self.position += count
        self.read_bytes += count
        return count


def test_a_200_mb_upload_is_a_worded_413_before_it_is_read(client, box):
    log_in(client)
    body = LazyBody(200 * MB)
    refused = client.post("/packages/upload", input_stream=body, headers={**BOX, "Content-Length": str(200 * MB)},
                          content_type="multipart/form-data; boundary=x")
    page = refused.get_data(as_text=True)
    assert refused.status_code == 413
    assert 'data-code="package.too_large"' in page and "Файл 200 МБ, а можно не больше 100 МБ" in page
    assert body.read_bytes < MB  # refused on its length, not after taking 200 MB in
    assert box[1].entries() == []


def test_delete_asks_first(client, box):
    log_in(client)
    package_id = re.search(r'data-package="(\w+)"', upload(client, "к.siq", sport_siq(2)).get_data(
        as_text=True)).group(1)
    asked = client.get(f"/packages/{package_id}/delete", headers=BOX).get_data(as_text=True)
    assert "Удалить пакет «Кубок двора»?" in asked and 'name="confirm" value="yes"' in asked
    client.post(f"/packages/{package_id}/delete", data={}, headers=BOX)
    assert len(box[1].entries()) == 1  # no confirmation, no deletion
    done = client.post(f"/packages/{package_id}/delete", data={"confirm": "yes"}, headers=BOX)
    assert "Пакет «Кубок двора» удалён" in done.get_data(as_text=True)
    assert box[1].entries() == []
    assert client.get(f"/packages/{package_id}", headers=BOX).status_code == 404


def test_every_documented_refusal_is_worded_in_both_languages_and_no_other():
    documented = set(re.findall(r"^\| `(package\.[a-z_]+)` \|", DOCS.read_text(encoding="utf-8"), re.M))
    assert documented == set(REFUSALS)
    for code, (ru, en) in REFUSALS.items():
        assert ru and en and ru != en, code
        assert not re.search(r"[a-zA-Z]{3,}", re.sub(r"\{\w+\}|content\.xml|ZIP|XML|DTD|CSV|TOML|UTF-8|"
                                                       r"Windows-1251|SIGame|siq|db\.chgk\.info", "", ru)), ru
    for key, (ru, en) in words.pairs("packages.").items():
        assert ru and en, key


def test_the_new_refusals_name_the_field_version_and_theme_in_words():
    from appliance.packages.errors import PackageFileError
    from appliance.packages.formats import read_package
    from tests.appliance.packages.hostile import HOSTILE
    from web.package_refusals import word_package_error

    def words(label: str) -> dict:
        (hostile,) = [h for h in HOSTILE if h.label == label]
        with pytest.raises(PackageFileError) as caught:
            read_package(hostile.filename, hostile.data())
        return word_package_error(caught.value)

    name = words("a theme name of 200,000 characters")
    assert name["ru"].startswith("Название темы длиннее 500 знаков (200000) — тема 1 «РРР")
    assert name["en"].startswith("The theme's name is longer than 500 characters (200000) — theme 1 «РРР")
    assert len(name["ru"]) < 200  # the refusal never repeats the field itself
    assert words("format version 6")["ru"] == "Пакет SIGame версии 6, а бокс читает версии до 5 — content.xml"
    assert words("an HTML page saved as .siq")["ru"] == "Файл .siq повреждён: это не ZIP-архив"
    cell = words("a CSV with a 3,000,000-character cell")
    assert cell["ru"].startswith("Ячейка таблицы длиннее 10000 знаков") and cell["ru"].endswith("строка 2")
    final = PackageFileError("package.final_theme", "x", where="Игра", theme=3)
    assert word_package_error(final)["ru"].startswith("Тема 4 — из финального раунда")


def test_the_host_page_and_the_director_link_to_the_packages(client):
    assert 'href="/packages"' in client.get("/host", headers=BOX).get_data(as_text=True)
    client.post("/director/login", data={"pin": DIRECTOR_PIN}, headers=BOX)
    assert 'href="/packages"' in client.get("/director/", headers=BOX).get_data(as_text=True)


# ------------------------------------------------------------------ the texts never reach the audience
@pytest.fixture
def served(settings, memory_battles, recording_capture):
    packages = QuestionPackages.in_folder(settings.data_dir / "packages", memory_battles)
    package_id = packages.add("кубок.siq", sport_siq(6))["id"]
    session = Session(memory_battles, BattleAdapter(packages=packages), capture=recording_capture,
                      simulator=True).start()
    running = Server(create_app(settings, Services(session=session, identity=IDENTITY, packages=packages)))
    yield running, package_id
    running.close()
    session.close()


def test_the_host_alone_gets_the_question_text_and_the_board_gets_the_answer_once_announced(served):
    import json
    import threading
    import time

    server, package_id = served
    session = server.session
    host = Client(server.url, "/host", {"pin": PIN})
    # /watch is the board's namespace on a phone; /player the phones' buzzers
    audience = [Client(server.url, "/board"), Client(server.url, "/board"), Client(server.url, "/player")]
    anonymous = server.app.test_client()
    ids = iter(range(1000))

    def command(name, **args):
        done = host.command(name, f"c{next(ids)}", **args)
        assert done["ok"], done
        return done

    def heard(client) -> str:
        """Everything the client was sent so far (snapshots and updates), as text."""
        seq = session.snapshot()["seq"]
        client.until_seq(seq)
        sent = [client.received.get_nowait() for _ in range(client.received.qsize())]
        return json.dumps([client.view, sent], ensure_ascii=False)

    try:
        listed = host.sio.call("packages", {}, namespace="/host", timeout=5)
        assert listed["ok"] and listed["packages"][0]["themes"][0] == {"number": 0, "name": "Тема номер 1",
                                                                       "played": False, "final": False}
        # Every message gets an ack: one that is not an object is refused in words; so is a setup whose package
        # choice has the wrong shape (nothing set up). Audience namespaces have no packages event.
        for junk in ([1], "x", 5, float("inf")):
            answer = host.sio.call("packages", junk, namespace="/host", timeout=5)
            assert answer["ok"] is False and answer["error"]["code"] == "error.bad_command" and answer["error"]["ru"]
        for choice in ("abc", {"themes": [1]}, {"id": package_id, "themes": "1"}, {"id": package_id, "x": 1},
                       {"id": package_id, "spare": [10**30]}):
            answer = host.command("setup", "bad-0", profile="eurocup", players=["Аня", "Борис", "Вера"],
                                  themes=4, package=choice)
            assert answer["ok"] is False and answer["error"]["ru"], choice
        assert session.battle_id is None
        unknown = audience[0].sio.call("packages", {}, namespace="/board", timeout=5)
        assert unknown["ok"] is False and unknown["error"]["code"] == "error.unknown_event"
        refused = host.command("setup", "bad-1", profile="eurocup", players=["Аня", "Борис", "Вера"],
                               themes=[{"name": "", "red": False}] * 4, package={"id": package_id, "themes": [1, 9]})
        assert refused["ok"] is False and refused["error"]["code"] == "package.no_such_theme"
        assert refused["error"]["ru"] == "В пакете нет темы 10: в нём 6 тем — Кубок двора"
        command("setup", profile="eurocup", players=["Аня", "Борис", "Вера"],
                themes=[{"name": "", "red": False}] * 4, package={"id": package_id, "spare": [5]})
        command("next")  # the theme
        command("next")  # its first price; reading starts
        reading = host.until_seq(session.snapshot()["seq"])["reading"]
        assert reading["package"] == "Кубок двора"
        assert (reading["current"]["text"], reading["current"]["answer"], reading["current"]["comment"],
                reading["current"]["source"]) == ("Вопрос 1.1 о теме 1.", "Ответ 1.1", "Комментарий 1.1",
                                                  "Источник 1.1")
        assert (reading["next"]["text"], reading["next"]["price"]) == ("Вопрос 1.2 о теме 1.", 20)
        for client in audience:
            text = heard(client)
            assert "Вопрос 1.1" not in text and "Ответ 1.1" not in text, client.namespace
        assert "Тема номер 1" in heard(audience[0])  # the board names the theme
        for path in ("/board", "/watch", "/play", "/", "/packages", f"/packages/{package_id}"):
            page = anonymous.get(path, headers=BOX).get_data(as_text=True)
            assert "Вопрос 1.1" not in page and "Ответ 1.1" not in page, path
        # Read, pressed, answered right: the question is over, and the answer still not on the board until the
        # host announces it (board_answer = "announced").
        command("reading_done")
        server_capture = session.capture
        server_capture.session = session
        server_capture.press(1, time.monotonic_ns())
        command("point")
        command("right")
        assert all("Ответ 1.1" not in heard(client) for client in audience)
        command("announce")
        board = heard(audience[0])
        assert "Ответ 1.1" in board and "Вопрос 1.1" not in board
        assert audience[0].view["question"]["answer"] == "Ответ 1.1"
        # The host's view has the next question ready; the log says where the battle's themes came from.
        view = host.until_seq(session.snapshot()["seq"])
        assert view["reading"]["next"]["text"] == "Вопрос 1.2 о теме 1."
        assert session.state.setup.sources == tuple((package_id, n) for n in (0, 1, 2, 3, 5))
        assert session.state.setup.theme_names[4] == "Тема номер 6"
    finally:
        closers = [threading.Thread(target=client.close) for client in [host, *audience]]
        for closer in closers:
            closer.start()
        for closer in closers:
            closer.join()


def test_the_written_round_prints_sheets_without_texts_and_the_hosts_key_with_answers(client):
    """youth-cup 2.2: a written round of 12 themes; the sheets name themes and prices, the key has the answers."""
    log_in(client)
    package_id = re.search(r'data-package="(\w+)"', upload(client, "к.siq", sport_siq(14)).get_data(
        as_text=True)).group(1)
    preview = client.get(f"/packages/{package_id}", headers=BOX).get_data(as_text=True)
    assert "Письменный отбор (2.2): 12 тем" in preview
    sheets = client.get(f"/packages/{package_id}/written/sheets?copies=3", headers=BOX).get_data(as_text=True)
    assert sheets.count('<section class="sheet">') == 3
    assert "12. Тема номер 12" in sheets and "Тема номер 13" not in sheets
    assert "Вопрос" not in sheets and "Ответ 1.1" not in sheets  # the players' sheet has no texts
    key = client.get(f"/packages/{package_id}/written/key?themes=13, 2", headers=BOX).get_data(as_text=True)
    assert key.index("Тема номер 13") < key.index("Тема номер 2")
    assert "Вопрос 13.5 о теме 13." in key and "Ответ 2.3" in key
    refused = client.get(f"/packages/{package_id}/written/key?themes=15", headers=BOX)
    assert refused.status_code == 400 and "В пакете нет темы 15: в нём 14 тем" in refused.get_data(as_text=True)
    small = re.search(r'data-package="(\w+)" class="added"', upload(client, "м.siq", sport_siq(3, "Малый")).get_data(
        as_text=True)).group(1)
    too_few = client.get(f"/packages/{small}/written/sheets", headers=BOX)
    assert too_few.status_code == 400
    assert "В пакете осталось несыгранных тем: 3, а нужно 12" in too_few.get_data(as_text=True)
    client.delete_cookie("session")
    assert client.get(f"/packages/{package_id}/written/key", headers=BOX).status_code == 302
