"""A real server for web tests: the app from the factory, served by Werkzeug's threaded server on 127.0.0.1 and
a random port (the box itself runs gunicorn gthread: :func:`simulator_box` starts that one), real
python-socketio clients, and Debian's Chromium for the browser tests."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import engineio
import pytest
import socketio
from werkzeug.serving import make_server

from appliance.service.battle_adapter import BattleAdapter
from appliance.service.identity import Identity
from appliance.service.session import Session
from web import create_app
from web.sync import Services

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PIN = "2468"
DIRECTOR_PIN = "135790"  # the desk's own PIN: the host's does not open it
IDENTITY = Identity(box_name="svoyak-T3ST", hotspot_ssid="Svoyak-T3ST", hotspot_password="pass2word7", host_pin=PIN,
                    director_pin=DIRECTOR_PIN)


class Server:
    def __init__(self, app) -> None:
        self.app = app
        self.http = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self.http.server_port}"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    @property
    def session(self):
        return self.app.extensions["svoyak.hub"].session

    def close(self) -> None:
        self.http.shutdown()
        self.thread.join(timeout=5)


class InOrderEngineIO(engineio.Client):
    """python-engineio's client hands every message it reads to a thread of its own (``_receive_packet`` passes
    ``run_async=True``), so two updates sent in order may reach the handlers in either order: a test that checks
    the order the server sent them in then fails now and then for no fault of the server (issue 19:
    ``test_every_client_hears_every_broadcast_in_order`` failed once in five whole-suite runs). This one hands
    each message over on its reading thread, in the order it came; a handler must not wait for the server
    (``sio.call`` from a handler would hold the reading up), and the tests' handlers only record."""

    def _trigger_event(self, event, *args, **kwargs):
        if event == "message":
            kwargs["run_async"] = False
        return super()._trigger_event(event, *args, **kwargs)


class InOrderClient(socketio.Client):
    """A python-socketio client whose handlers hear the messages in the order they came (:class:`InOrderEngineIO`)."""

    def _engineio_client_class(self):
        return InOrderEngineIO


class Client:
    """A python-socketio client on one namespace that queues what it receives, in the order it came."""

    def __init__(self, url: str, namespace: str, auth: dict | None = None) -> None:
        self.namespace = namespace
        self.received: queue.Queue = queue.Queue()
        self.sio = InOrderClient(reconnection=False)
        for name in ("hello", "snapshot", "update", "pin_shown"):
            self.sio.on(name, self._keeper(name), namespace=namespace)
        self.refusal = None
        self.sio.on("connect_error", self._refused, namespace=namespace)
        self.sio.connect(url, namespaces=[namespace], auth=auth, transports=["websocket"], wait_timeout=5)
        self.seq = None
        self.view = None

    def _refused(self, data):
        self.refusal = data

    def _keeper(self, name):
        return lambda data: self.received.put((name, data))

    def next(self, name: str, timeout: float = 5.0):
        """The next message called ``name`` (others before it are applied to the view and skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            kind, data = self.received.get(timeout=max(0.01, deadline - time.monotonic()))
            self._apply(kind, data)
            if kind == name:
                return data

    def until_seq(self, seq: int, timeout: float = 5.0) -> dict:
        """Apply updates until the view is at ``seq``; return the view."""
        deadline = time.monotonic() + timeout
        while self.seq is None or self.seq < seq:
            kind, data = self.received.get(timeout=max(0.01, deadline - time.monotonic()))
            self._apply(kind, data)
        return self.view

    def _apply(self, kind, data) -> None:
        if kind == "snapshot":
            self.seq, self.view = data["seq"], data["view"]
        elif kind == "update" and self.seq is not None and data["seq"] == self.seq + 1:
            self.view.update(data["changes"])
            for key in data["removed"]:
                self.view.pop(key, None)
            self.seq = data["seq"]

    def command(self, name: str, command_id: str, **args) -> dict:
        return self.sio.call("command", {"id": command_id, "name": name, "args": args}, namespace=self.namespace,
                             timeout=5)

    def close(self) -> None:
        self.sio.disconnect()


class PressingCapture:
    """A connected capture double whose simulated presses come back as press events, as the real one's do."""

    def __init__(self, capture) -> None:
        self.inner = capture

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def simulate_press(self, player):
        future = self.inner.simulate_press(player)
        self.inner.press(player, time.monotonic_ns())
        return future


@pytest.fixture
def server(settings, memory_battles, recording_capture):
    capture = PressingCapture(recording_capture)
    session = Session(memory_battles, BattleAdapter(), capture=capture, simulator=True)
    recording_capture.session = session
    session.start()
    app = create_app(settings, Services(session=session, identity=IDENTITY))
    running = Server(app)
    yield running
    running.close()
    session.close()


@pytest.fixture
def session_server(settings, recording_capture, tmp_path):
    """The app over a real session and a real battle store on disk (the store's listeners feed the desk)."""
    from appliance.service.battles import Battles
    from appliance.store import EventStore

    session = Session(Battles(EventStore(tmp_path / "battles.sqlite")), BattleAdapter(),
                      capture=PressingCapture(recording_capture), simulator=True)
    recording_capture.session = session
    session.start()
    running = Server(create_app(settings, Services(session=session, identity=IDENTITY)))
    yield running
    running.close()
    session.close()


def drawn_owl(app) -> str:
    """A northern-owl tournament of 36 registered, 9 seeded (northern-owl 2.2) and its first stage drawn."""
    from web.director import desk

    with app.app_context():
        tid = desk().create("northern-owl", "Сова", seed=3)
        for i in range(36):
            desk().register(tid, f"Игрок {i}")
        desk().set_seeds(tid, [f"p{i:03d}" for i in range(1, 10)])
        desk().draw(tid, seed=3)
    return tid


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_http(url: str, process: subprocess.Popen, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"svoyak run exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"{url} did not answer")


@contextlib.contextmanager
def simulator_box(data_dir: Path, env: dict | None = None):
    """``svoyak run --simulator`` over ``data_dir`` on a free port, in its own process group, stopped with SIGTERM:
    ``{"url", "host_pin", "director_pin", "data_dir", "log", "pid"}`` (``pid``: the process group's leader).
    ``env``: more ``SVOYAK_*`` settings."""
    port = free_port()
    env = {**os.environ, **(env or {}), "SVOYAK_DATA_DIR": str(data_dir), "SVOYAK_CONFIG": str(data_dir / "none.toml")}
    (data_dir / "none.toml").write_text("")
    log = open(data_dir / "run.log", "w")
    process = subprocess.Popen([sys.executable, "-m", "appliance.cli", "run", "--simulator", "--port", str(port)],
                               env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(url + "/board", process)
        identity = json.loads((data_dir / "identity.json").read_text())
        yield {"url": url, "host_pin": identity["host_pin"], "director_pin": identity["director_pin"],
               "data_dir": data_dir, "log": data_dir / "run.log", "pid": process.pid}
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium through Playwright, one per test module (``playwright install`` cannot download here)."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (./dev test installs it)")
    with playwright_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def connect(server):
    clients = []

    def make(namespace: str, **auth) -> Client:
        client = Client(server.url, namespace, auth or None)
        clients.append(client)
        return client

    yield make
    # Closing waits for the transport to wind down (about 3 s under Werkzeug): close them all at once.
    closers = [threading.Thread(target=client.close) for client in clients]
    for closer in closers:
        closer.start()
    for closer in closers:
        closer.join()


def refusal(url: str, namespace: str, auth: dict) -> dict:
    """The worded reason the server gives for refusing this connection."""
    client = socketio.Client(reconnection=False)
    reasons = []
    client.on("connect_error", reasons.append, namespace=namespace)
    with pytest.raises(socketio.exceptions.ConnectionError):
        client.connect(url, namespaces=[namespace], auth=auth, transports=["websocket"], wait_timeout=5)
    client.disconnect()
    return reasons[0]["data"]


def watch_csp(page, seen: list | None = None) -> list:
    """The Content-Security-Policy violations and script errors ``page`` reports from now on, added to ``seen``
    (a new list by default) as they happen: Chromium logs each blocked inline script, eval or connection."""
    seen = [] if seen is None else seen
    page.on("console", lambda message: seen.append(message.text)
            if "Content Security Policy" in message.text or "Refused to" in message.text else None)
    page.on("pageerror", lambda error: seen.append(f"page error: {error}"))
    return seen


@pytest.fixture(autouse=True)
def no_csp_violation(request, monkeypatch):
    """Every page a browser test opens is watched: a Content-Security-Policy violation (an inline script or
    handler a template kept, an eval, a connection elsewhere) fails the test, whatever the test itself checks."""
    if request.node.get_closest_marker("browser") is None:
        yield
        return
    sync_api = pytest.importorskip("playwright.sync_api")
    seen: list[str] = []

    def watched(original):
        def new_page(self, *args, **kwargs):
            page = original(self, *args, **kwargs)
            page.on("console", lambda message: seen.append(f"{page.url}: {message.text}")
                    if "Content Security Policy" in message.text or "Refused to" in message.text else None)
            return page
        return new_page

    for kind in (sync_api.Browser, sync_api.BrowserContext):
        monkeypatch.setattr(kind, "new_page", watched(kind.new_page))
    yield
    assert seen == [], "Content-Security-Policy violations:\n" + "\n".join(dict.fromkeys(seen))
