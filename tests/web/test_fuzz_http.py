"""HTTP fuzzing of every route, the director's first of all (issue 10: junk director input gets a worded 400, never a 500): unknown
ids, 5,000-digit numbers, wrong types, 200,000-character fields, through the app factory. Every refusal is worded
(Russian, then English) and leaves every tournament exactly as it was. Plus the caps themselves (413), forged
posts from another origin (403) and the security headers on every response. The run prints its figures."""

from __future__ import annotations

import json
import random
import re
import types

import pytest

from web import create_app
from web.sync import Services

PIN = "4321"
REQUESTS_PER_ROUTE = 60

FIELDS = ("preset", "title", "seed", "changes", "name", "team", "category", "team_rank", "late", "command_id",
          "bulk", "reason", "deadline", "offset", "rooms", "seeds", "stage", "room", "box", "player", "marks", "tie",
          "order", "how", "detail", "pin", "score-p001", "place-p001", "right-p001", "count-p001", "absent-p001",
          "package", "spares", "host", "set_aside", "themes", "copies", "count", "confirm", "file")


class FakeSession:
    battles = None
    seq = 0

    def subscribe(self, callback):
        self.callback = callback

    def clock(self):  # the board's snapshot route (web/spectators.py) reads these
        return 0

    def snapshot(self):
        return {"seq": 0, "server_now_ns": 0, "view": {"battle": None}}


TABLE = "тема,цена,вопрос,ответ\n" + "\n".join(f"Тема {t},{10 * q},Вопрос {t}.{q},Ответ {t}.{q}"
                                              for t in range(1, 15) for q in range(1, 6))


@pytest.fixture
def app(settings, tmp_path):
    from appliance.service.packages import QuestionPackages

    identity = types.SimpleNamespace(host_pin=PIN, director_pin=PIN, hotspot_ssid="Svoyak-TEST", hotspot_password="x" * 10,
                                     box_name="svoyak-TEST")
    packages = QuestionPackages.in_folder(tmp_path / "packages")  # the question packages' routes, with one package
    packages.add("тур.csv", TABLE.encode())
    app = create_app(settings, Services(session=FakeSession(), identity=identity, packages=packages))
    app.config["PROPAGATE_EXCEPTIONS"] = False  # a crash is a 500 here, as on the box, and the test counts it
    return app


@pytest.fixture
def client(app):
    with app.test_client() as client:
        assert client.post("/director/login", data={"pin": PIN}).status_code == 302
        yield client


def junk(rng: random.Random) -> str:
    pool = ("", " ", "9" * 5000, "-" + "9" * 5000, "x" * 200_000, "а" * 3000, "-1", "0", "1", "7", "p001", "p999",
            "1e309", "NaN", "Infinity", "null", "[]", "{}", "true", "\x00", "\r\n=HYPERLINK()", "../../etc/passwd",
            "swiss.rounds=abc", "swiss.rounds = 99999999999", "round.nope = 1", "2026-13-40T99:99", "+99:99",
            "theme", "shootout", "p001 p001 p002", "Имя; Команда\n" * 3, "++--2x0.", "⁹⁹", "١٢٣", "ǅ" * 10)
    return rng.choice(pool)


def fill(rule, values: dict) -> str:
    path = rule.rule
    for name in rule.arguments:
        path = re.sub(rf"<(?:[^:>]+:)?{name}>", values[name], path)
    return path


def state_of(client, tids) -> tuple:
    """Everything the desk holds: the list, and each tournament's JSON export; and the box's question packages."""
    listing = client.get("/director/", headers={"Accept": "text/html"}).status_code
    exports = tuple(client.get(f"/director/{tid}/export.json").data for tid in tids)
    packages = tuple(entry.id for entry in client.application.extensions["svoyak.hub"].services.packages
                     .library.entries())
    return listing, exports, packages


def test_every_route_answers_junk_with_words_and_changes_nothing(app, client, capsys):
    # A tournament with a drawn first stage: the routes have real ids to be fuzzed around.
    response = client.post("/director/new", data={"preset": "mubc", "title": "Фазз", "seed": "7"})
    tid = response.headers["Location"].split("/")[2]
    bulk = "\n".join(f"Игрок {i}; Команда {i % 3}" for i in range(8))
    assert client.post(f"/director/{tid}/registration", data={"bulk": bulk}).status_code == 302
    client.post(f"/director/{tid}/close-registration")
    client.post(f"/director/{tid}/draw", data={})
    desk = app.extensions["svoyak.tournaments"]
    state = desk.state(tid)
    battle = next(iter(state.battles), "nope")
    stage = state.fmt.stages[0].id
    package_id = app.extensions["svoyak.hub"].services.packages.library.entries()[0].id
    real = {"tid": tid, "battle": battle, "stage": stage, "player": "p001", "path": "x", "battle_id": "b-nope",
            "package_id": package_id, "kind": "sheets",
            "hub": "10.42.0.1", "code": "012345"}  # hub, code: the rooms' pairing link (/director/rooms/join/...)
    fake = {"tid": "t-nope", "battle": "s1/b99", "stage": "nope", "player": "p999", "path": "../../etc/passwd",
            "battle_id": "../x", "package_id": "../x", "kind": "nope", "hub": "a b;c", "code": "12ab"}

    # Every route of the app, the director's first of all (static files: their name is the only input).
    rules = [rule for rule in app.url_map.iter_rules() if rule.endpoint != "static"]
    assert len([rule for rule in rules if rule.endpoint.startswith("director.")]) >= 20
    rng = random.Random(10)
    counts = {"requests": 0, "refused": 0, "accepted": 0, "routes": len(rules)}
    before = state_of(client, [tid])
    crashes = []
    for rule in rules:
        for method in sorted((rule.methods or set()) & {"GET", "POST"}):
            for _ in range(REQUESTS_PER_ROUTE if method == "POST" else 6):
                values = {name: (real if rng.random() < 0.7 else fake)[name] for name in rule.arguments}
                path = fill(rule, values)
                data = {name: junk(rng) for name in rng.sample(FIELDS, rng.randrange(1, 6))}
                if method == "GET":
                    response = client.get(path, query_string=data)
                elif rng.random() < 0.15:
                    body = rng.choice(('{"events": [{"type": "Nope"}]}', "[" * 50_000, '{"player": 1e999}',
                                       json.dumps({"player": "9" * 5000, "marks": [1, 2]}), "\xff\xfe"))
                    response = client.post(path, data=body, content_type="application/json")
                else:
                    response = client.post(path, data=data)
                response.close()  # a file served (the favicon) is closed with its response
                counts["requests"] += 1
                where = (method, path[:80], {k: v[:40] for k, v in data.items()}, response.status_code)
                if response.status_code >= 500:
                    crashes.append(where)
                    continue
                if response.status_code >= 400:
                    counts["refused"] += 1
                    if response.is_json:  # pages' scripts get {ru, en}; the boxes' own API (rooms) {error}
                        body = response.json
                        assert re.search("[а-яА-ЯёЁ]", body.get("ru", "")) or body.get("error"), where
                    else:
                        assert re.search("[а-яА-ЯёЁ]", response.get_data(as_text=True)), where  # Russian first
                    after = state_of(client, [tid])
                    assert after == before, where  # a refusal changed nothing
                else:
                    counts["accepted"] += 1
                    before = state_of(client, [tid])
    assert crashes == []
    with capsys.disabled():
        print(f"\nHTTP fuzz: {counts['requests']} requests over {counts['routes']} routes (the director's and the rest), "
              f"{counts['refused']} refused in words (no 500), {counts['accepted']} accepted; "
              f"every refusal left the tournaments unchanged")


def test_request_and_field_caps_are_worded(client):
    huge = client.post("/director/new", data=b"x" * (9 * 1024 * 1024), content_type="application/octet-stream")
    assert huge.status_code == 413
    assert "Слишком большой запрос" in huge.get_data(as_text=True)
    field = client.post("/director/new", data={"preset": "mubc", "title": "x" * 200_000})
    assert field.status_code == 400
    page = field.get_data(as_text=True)
    assert page.index("Поле «title» длиннее 2000 символов") < page.index("Field «title» is longer than 2000")
    number = client.post("/director/new", data={"preset": "mubc", "seed": "9" * 5000},
                         headers={"Accept": "application/json"})
    assert number.status_code == 400 and number.json["code"] == "http.number_too_long"
    assert client.get("/director/", query_string={"q": "x" * 3000}).status_code == 400
    assert app_tournaments(client) == []


def app_tournaments(client):
    desk = client.application.extensions.get("svoyak.tournaments")
    return desk.list() if desk else []


def test_a_post_from_another_site_is_refused(client):
    forged = client.post("/director/new", data={"preset": "mubc", "title": "CSRF"},
                         headers={"Origin": "http://evil.example"})
    assert forged.status_code == 403
    assert "с чужой страницы (http://evil.example)" in forged.get_data(as_text=True)
    assert client.post("/director/new", data={"preset": "mubc"}, headers={"Origin": "null"}).status_code == 403
    assert client.post("/director/new", data={"preset": "mubc"},
                       headers={"Referer": "http://evil.example/page"}).status_code == 403
    assert app_tournaments(client) == []
    same = client.post("/director/new", data={"preset": "mubc", "title": "Своя"}, headers={"Origin": "http://localhost"})
    assert same.status_code == 302 and len(app_tournaments(client)) == 1


@pytest.mark.parametrize("path", ["/", "/host", "/board", "/watch", "/play", "/sim", "/director/login",
                                  "/director/", "/static/js/svoyak.js", "/nope"])
def test_every_response_carries_the_security_headers(client, path):
    response = client.get(path)
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0]
    assert "frame-ancestors 'none'" in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"] == "same-origin"
    response.close()


def test_no_template_has_inline_script():
    import pathlib

    for template in (pathlib.Path(__file__).parents[2] / "web" / "templates").rglob("*.html"):
        text = template.read_text(encoding="utf-8")
        for tag in re.findall(r"<script\b[^>]*>", text):
            assert "src=" in tag or 'type="application/json"' in tag, (template.name, tag)
        assert not re.search(r"\son[a-z]+\s*=", text), template.name


def test_the_tournament_import_has_its_own_limit_and_every_other_route_keeps_the_tight_cap(client, settings):
    # A whole tournament's export can be megabytes (a 200-player mubc export is about 1.5 MB): /director/import
    # takes up to the import_mb setting (appliance/config.py), every other route stays at MAX_REQUEST_BYTES.
    import io

    from appliance.config import MAX_REQUEST_BYTES
    from appliance.rules import tournament as t
    from appliance.rules.tournament.simulate import play_battle_outline
    from appliance.service.presets import simulate

    def export(players, seed):  # a real log, its real clock readings and seeds (past 2**53), padded as JSON allows
        log, state = simulate("mubc", players, seed, battle_player=play_battle_outline)
        body = json.dumps({"events": [t.to_dict(e) for e in log]}).encode()
        return body + b" " * (MAX_REQUEST_BYTES + 1024 - len(body)), state.tournament_id

    body, tid = export(9, 5)
    assert len(body) > MAX_REQUEST_BYTES
    elsewhere = client.post("/director/new", data=body, content_type="application/json",
                            headers={"Accept": "application/json"})
    assert elsewhere.status_code == 413 and elsewhere.json["code"] == "http.413"
    forged = client.post("/director/import", data=body, content_type="application/json",
                         headers={"Origin": "http://evil.example"})
    assert forged.status_code == 403 and app_tournaments(client) == []
    assert client.post("/director/import", data=body, content_type="application/json").status_code == 302
    assert [item["id"] for item in app_tournaments(client)] == [tid]
    body, tid2 = export(12, 6)
    # (follow_redirects and close: only then does Werkzeug's test client close the temporary file it encoded the
    # upload in)
    with client.post("/director/import", data={"file": (io.BytesIO(body), "export.json")},
                     content_type="multipart/form-data", follow_redirects=True) as sent:
        assert [r.status_code for r in sent.history] == [302] and sent.request.path == f"/director/{tid2}/"
    assert {item["id"] for item in app_tournaments(client)} == {tid, tid2}
    # Over the import's own limit: refused in words naming it, nothing stored.
    huge = b"[" + b" " * (settings.import_mb * 1024 * 1024) + b"]"
    refused = client.post("/director/import", data=huge, content_type="application/json",
                          headers={"Accept": "application/json"})
    assert refused.status_code == 413 and refused.json["code"] == "http.file_too_large"
    assert f"больше {settings.import_mb} МБ" in refused.json["ru"]
    with client.post("/director/import", data={"file": (io.BytesIO(huge), "export.json")},
                     content_type="multipart/form-data", follow_redirects=True) as page:
        assert page.status_code == 413 and f"больше {settings.import_mb} МБ" in page.get_data(as_text=True)
    assert len(app_tournaments(client)) == 2
