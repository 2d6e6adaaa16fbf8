"""The watch page in Chromium takes the fastest path that works (web/static/js/spectate.js): the spectators'
nats-server when it runs, Socket.IO when it does not, polling the snapshot when Socket.IO refuses spectators;
each path shows the host's next command. The Content-Security-Policy lets the page reach the spectators' port
and nothing else (every browser test fails on a violation, tests/web/conftest.py)."""

from __future__ import annotations

import pytest

from tests.web.conftest import IDENTITY, PIN, Client, Server
from tests.web.test_spectators import SETUP, fanout_of, spectators_server_process  # noqa: F401 (a fixture)

pytestmark = pytest.mark.browser


@pytest.fixture
def box(settings, memory_battles, recording_capture, request):
    """The app over a session, with the Socket.IO cap the test names (``@pytest.mark.parametrize`` of ``cap``)."""
    from appliance.service.battle_adapter import BattleAdapter
    from appliance.service.session import Session
    from web import create_app
    from web.sync import Services

    session = Session(memory_battles, BattleAdapter(), capture=recording_capture, simulator=True)
    session.start()
    cap = getattr(request, "param", 40)
    running = Server(create_app(settings.replace(spectators_socket_cap=cap),
                                Services(session=session, identity=IDENTITY)))
    host = Client(running.url, "/host", {"pin": PIN})
    host.next("snapshot")
    yield running, host
    host.close()
    running.close()
    session.close()


def watch(browser, url: str, path: str):
    page = browser.new_page()
    page.goto(url + "/watch")
    page.wait_for_selector(f"body[data-spectate='{path}']", timeout=15000)
    return page


def shows_next_theme(page, host, seq_before: int) -> None:
    assert host.command("setup", "s1", **SETUP)["ok"]
    page.wait_for_selector("#scoreboard:not([hidden])", timeout=15000)
    assert host.command("next", "n1")["ok"]
    page.wait_for_function("(before) => Number(document.body.dataset.seq) > before + 1", arg=seq_before,
                           timeout=15000)
    assert "Реки" in page.inner_text("#board-theme")


def test_the_fast_path(browser, box, spectators_server_process):
    running, host = box
    fanout_of(running)
    page = watch(browser, running.url, "nats")
    shows_next_theme(page, host, int(page.evaluate("document.body.dataset.seq")))
    assert page.evaluate("SVOYAK.links[0].path") == "nats"
    page.close()


def test_no_fan_out_falls_back_to_socketio(browser, box):
    running, host = box
    page = watch(browser, running.url, "socket")
    page.wait_for_function("() => Number(document.body.dataset.seq) >= 0", timeout=15000)
    shows_next_theme(page, host, int(page.evaluate("document.body.dataset.seq")))
    page.close()


@pytest.mark.parametrize("box", [0], indirect=True)
def test_spectators_refused_by_socketio_poll_the_snapshot(browser, box):
    running, host = box
    page = watch(browser, running.url, "poll")
    page.wait_for_function("() => Number(document.body.dataset.seq) >= 0", timeout=15000)
    shows_next_theme(page, host, int(page.evaluate("document.body.dataset.seq")))
    page.close()


def test_the_online_viewer_page(browser, settings, spectators_server_process):
    """The organiser's static viewer page (web/static/online/) on any web server, reading the cluster: here the
    spectators' nats-server itself, fed by the box's Publisher: whole from a snapshot, then an update."""
    import functools
    import http.server
    import json
    import threading
    import time

    from appliance.service.spectators import conf
    from appliance.service.spectators import server as spectators_server
    from appliance.service.spectators.publisher import Publisher
    from tests.web.conftest import ROOT

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(ROOT / "web" / "static"))
    http_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=http_server.serve_forever, daemon=True).start()
    publisher = Publisher(lambda: spectators_server_process["client"], spectators_server.secret_path(settings))
    page = browser.new_page()
    try:
        while not publisher.connected:
            time.sleep(0.05)
        page.goto(f"http://127.0.0.1:{http_server.server_port}/online/index.html?box={IDENTITY.box_name}"
                  f"&servers=ws://127.0.0.1:{spectators_server_process['websocket']}")
        time.sleep(1.0)  # subscribed
        view = {"battle": {"finished": False}, "theme": {"name": "Реки", "index": 0},
                "question": {"price": 30, "over": False}, "presses": [],
                "players": [{"index": 0, "name": "Аня", "score": 30, "led": "#e53935"},
                            {"index": 1, "name": "Борис", "score": 0, "led": "#1e88e5"}]}
        body = lambda value: json.dumps(value, ensure_ascii=False).encode()  # noqa: E731
        publisher.publish(conf.subject(IDENTITY.box_name, conf.UPDATE), body({"seq": 7, "changes": {}, "removed": []}))
        publisher.publish(conf.subject(IDENTITY.box_name, conf.SNAPSHOT), body({"seq": 7, "server_now_ns": 1,
                                                                                "view": view}))
        page.wait_for_selector("#players li", timeout=10000)
        assert "Реки" in page.inner_text("#theme") and "30" in page.inner_text("#players")
        changed = [{**view["players"][0], "score": 60}, view["players"][1]]
        publisher.publish(conf.subject(IDENTITY.box_name, conf.UPDATE),
                          body({"seq": 8, "server_now_ns": 2, "changes": {"players": changed}, "removed": []}))
        page.wait_for_function("() => document.getElementById('players').textContent.includes('60')",
                               timeout=10000)
    finally:
        page.close()
        publisher.close()
        http_server.shutdown()
        http_server.server_close()


# An old phone: its browser cannot run the vendored NATS client (here: the script never arrives). A captive
# portal's sheet: the WebSocket to the spectators' port is refused (here: the constructor throws for that port).
PORTAL = """(() => {
  const Real = window.WebSocket;
  function Portal(url, protocols) {
    if (String(url).includes(":%d")) throw new DOMException("refused by the portal", "SecurityError");
    return protocols === undefined ? new Real(url) : new Real(url, protocols);
  }
  Portal.prototype = Real.prototype;
  Object.assign(Portal, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });
  window.WebSocket = Portal;
})();"""


@pytest.mark.parametrize("box", [1], indirect=True)
def test_a_page_that_cannot_take_the_fast_path_falls_back_and_the_game_is_never_refused(
        browser, box, spectators_server_process):
    """The fan-out runs, but two phones cannot use it: the old phone's board follows the battle on Socket.IO (the
    cap's one place), the captive portal's by polling (Socket.IO refuses it: the cap is taken); with the cap
    full, a player's phone (/play) connects and the host plays: admission never counts those who run the game."""
    running, host = box
    fanout_of(running)
    old = browser.new_page()
    old.route("**/static/vendor/nats/nats.js", lambda route: route.abort())
    old.goto(running.url + "/watch")
    old.wait_for_selector("body[data-spectate='socket'][data-conn='online']", timeout=20000)
    portal = browser.new_page()
    portal.add_init_script(PORTAL % spectators_server_process["websocket"])
    portal.goto(running.url + "/watch")
    portal.wait_for_selector("body[data-spectate='poll']", timeout=20000)
    portal.wait_for_function("() => Number(document.body.dataset.seq) >= 0", timeout=15000)
    assert running.app.extensions["svoyak.admission"].refused >= 1  # the portal's phone was turned away
    phone = browser.new_page()
    phone.goto(running.url + "/play")
    phone.wait_for_selector("body[data-conn='online']", timeout=15000)  # a player's button: not a spectator
    seq = int(old.evaluate("document.body.dataset.seq"))
    shows_next_theme(old, host, seq)  # the host's commands go through, and the old phone sees them
    portal.wait_for_function("(before) => Number(document.body.dataset.seq) > before + 1", arg=seq, timeout=20000)
    assert "Реки" in portal.inner_text("#board-theme")
    assert old.evaluate("SVOYAK.links[0].path") == "socket" and portal.evaluate("SVOYAK.links[0].path") == "poll"
    for page in (old, portal, phone):
        page.close()
