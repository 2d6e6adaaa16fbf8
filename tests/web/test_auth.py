"""One login per person (issue 21, web/auth.py): the host's PIN proved once on a device opens the host page, its
socket and the question packages; the director's opens the desk, the rooms and the packages; logging out of one
logs out of all."""

from __future__ import annotations

import pytest

from appliance.service.battle_adapter import BattleAdapter
from appliance.service.packages import QuestionPackages
from appliance.service.session import Session
from web import create_app
from web.sync import Services

from .conftest import DIRECTOR_PIN, IDENTITY, PIN


@pytest.fixture
def app(settings, memory_battles):
    packages = QuestionPackages.in_folder(settings.data_dir / "packages", memory_battles)
    session = Session(memory_battles, BattleAdapter(packages=packages), simulator=True).start(timer_thread=False)
    app = create_app(settings, Services(session=session, identity=IDENTITY, packages=packages))
    app.config["TESTING"] = True
    yield app
    session.close()


@pytest.fixture
def client(app):
    with app.test_client() as client:
        yield client


def opened(client, path: str) -> bool:
    response = client.get(path)
    assert response.status_code in (200, 302), (path, response.status_code)
    return response.status_code == 200


def test_the_host_pin_entered_once_opens_the_packages_and_the_page_knows_it(client):
    assert not opened(client, "/packages")
    assert 'data-known=""' in client.get("/host").get_data(as_text=True)
    refused = client.post("/login/host", data={"pin": "0000"})
    assert refused.status_code == 403 and refused.get_json()["error"]["code"] == "error.pin"
    assert client.post("/login/host", data={"pin": PIN}).get_json() == {"ok": True}
    assert opened(client, "/packages")                        # no second PIN
    assert 'data-known="1"' in client.get("/host").get_data(as_text=True)   # a reload needs no PIN either
    assert not opened(client, "/director/")                   # the host's PIN is not the director's
    assert not opened(client, "/director/rooms")


def test_the_director_pin_opens_the_desk_the_rooms_and_the_packages_not_the_host_page(client):
    assert client.post("/director/login", data={"pin": DIRECTOR_PIN}).status_code == 302
    assert opened(client, "/director/") and opened(client, "/director/rooms") and opened(client, "/packages")
    assert 'data-known=""' in client.get("/host").get_data(as_text=True)


def test_logging_out_of_one_page_logs_out_of_all(client):
    client.post("/login/host", data={"pin": PIN})
    client.post("/director/login", data={"pin": DIRECTOR_PIN})
    assert opened(client, "/packages") and opened(client, "/director/")
    assert "logout-all" in client.get("/director/").get_data(as_text=True)
    assert client.post("/logout", headers={"Accept": "application/json"}).get_json() == {"ok": True}
    for path in ("/packages", "/director/", "/director/rooms"):
        assert not opened(client, path), path
    assert 'data-known=""' in client.get("/host").get_data(as_text=True)


def test_wrong_pins_at_the_host_login_count_with_the_host_pages_guard(client, app):
    guard = app.extensions["svoyak.hub"].services.pin_guard
    before = guard.wrong
    client.post("/login/host", data={"pin": "0000"})
    client.post("/packages/login", data={"pin": "0001"})
    assert guard.wrong == before + 2


def test_the_host_socket_opens_with_the_login_of_the_device(settings, memory_battles):
    """The cookie of the PIN posted once is all the host page's socket needs (no PIN in the page's storage)."""
    import socketio

    from .conftest import Server

    session = Session(memory_battles, BattleAdapter(), simulator=True).start(timer_thread=False)
    server = Server(create_app(settings, Services(session=session, identity=IDENTITY)))
    try:
        with server.app.test_client() as http:
            http.post("/login/host", data={"pin": PIN})
            cookie = http.get_cookie("session").value
        refused, admitted = socketio.Client(reconnection=False), socketio.Client(reconnection=False)
        with pytest.raises(socketio.exceptions.ConnectionError):
            refused.connect(server.url, namespaces=["/host"], auth={}, transports=["websocket"], wait_timeout=5)
        hellos = []
        admitted.on("hello", hellos.append, namespace="/host")
        admitted.connect(server.url, namespaces=["/host"], auth={}, transports=["websocket"], wait_timeout=5,
                         headers={"Cookie": f"session={cookie}"})
        admitted.sleep(0.5)
        assert hellos and hellos[0]["profiles"]
        admitted.disconnect()
        refused.disconnect()
    finally:
        server.close()
        session.close()
