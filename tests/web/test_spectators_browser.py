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
