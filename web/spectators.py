"""Spectators apart from the game: the board's updates fanned out by nats-server, admission for the rest.

Three ways a spectator's page (``/watch``, or ``/board`` on a phone) follows the battle, fastest first
(docs/spectators.md; ``web/static/js/spectate.js`` picks):

1. **nats-server's WebSocket port** (``svoyak spectators``): :class:`Fanout` forwards every update the ``/board``
   namespace gets, the same dict, encoded once, to one subject; Go serves the connections, so a thousand phones
   hold none of the web worker's threads. A page joining late fetches :func:`snapshot` here first.
2. **Socket.IO ``/board``**, while fewer than ``spectators_socket_cap`` spectator connections are open: pages say
   they are spectators (``?audience=1``); :class:`Admission` answers the next one 503 at once, before
   engine.io takes a thread, so the host, the director and the buttons always find one free.
3. **The snapshot, polled** (``/board/snapshot.json``, a few seconds apart): slower, but it works on any phone.

The box's own HDMI board (opened on 127.0.0.1) always keeps Socket.IO: it alone hears the PIN when the host
button is held (web/board.py).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from urllib.parse import parse_qs

from flask import Blueprint, Response, current_app, request

from appliance.service.spectators import conf
from appliance.service.spectators import server as spectators_server
from appliance.service.spectators.publisher import Publisher
from web import events
from web.edge import CONTENT_SECURITY_POLICY
from web.sync import is_local

blueprint = Blueprint("spectators", __name__)
log = logging.getLogger(__name__)

BOARD_NAMESPACE = "/board"
AUDIENCE_QUERY = "audience"   # engine.io query parameter a spectator's page adds (spectate.js)
LOOK_EVERY_S = 2.0            # how often the web process looks for the spectators' server (its ports file)
POLL_MS = 4000                # a polling spectator's interval (jittered by the page)
SNAPSHOT_PATH = "/board/snapshot.json"


def _encode(payload) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


class Fanout:
    """The board's updates to the spectators' nats-server: one publish per update, none of the game's threads.

    Started lazily: the server is looked for (its ports file under ``data_dir/spectators``) at most every
    :data:`LOOK_EVERY_S`, so a box or a test with no spectators' server runs no publisher at all.
    """

    def __init__(self, hub, settings) -> None:
        self.hub = hub
        self.settings = settings
        box = hub.services.identity.box_name
        self.update_subject = conf.subject(box, conf.UPDATE)
        self.snapshot_subject = conf.subject(box, conf.SNAPSHOT)
        self.publisher: Publisher | None = None
        self._ports: dict | None = None
        self._looked = -LOOK_EVERY_S
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._snapshots: threading.Thread | None = None

    def ports(self) -> dict | None:
        """The running server's ports, looked up at most every :data:`LOOK_EVERY_S`."""
        now = time.monotonic()
        if now - self._looked >= LOOK_EVERY_S:
            self._looked = now
            self._ports = spectators_server.ports(self.settings)
            if self._ports is not None and self.publisher is None:
                self._start()
        return self._ports

    def _start(self) -> None:
        with self._lock:
            if self.publisher is not None or self._closed.is_set():
                return
            self.publisher = Publisher(lambda: (self._ports or {}).get("client"),
                                       spectators_server.secret_path(self.settings))
            self._snapshots = threading.Thread(target=self._publish_snapshots, name="svoyak-spectators-snapshot",
                                               daemon=True)
            self._snapshots.start()

    def forward(self, payload: dict) -> None:
        """The ``/board`` namespace's update, as it got it (``web.sync.Hub.broadcast`` calls this): queued,
        encoded in the publisher's thread. Never waits."""
        self.ports()
        publisher = self.publisher
        if publisher is not None:
            publisher.publish(self.update_subject, lambda: _encode(payload))

    def _publish_snapshots(self) -> None:
        """The board's snapshot every ``spectators_snapshot_ms``: a viewer beyond the hall (who cannot fetch
        :func:`snapshot` from the box) is whole within that time of joining, or of a gap."""
        period_s = max(0.5, self.settings.spectators_snapshot_ms / 1000)
        while not self._closed.wait(period_s):
            publisher = self.publisher
            board = self.hub.namespaces.get(BOARD_NAMESPACE)
            if publisher is not None and publisher.connected and board is not None:
                publisher.publish(self.snapshot_subject, lambda: _encode(board.snapshot()))

    def close(self) -> None:
        self._closed.set()
        if self.publisher is not None:
            self.publisher.close()


class Admission:
    """WSGI: at most ``cap`` spectators' Socket.IO requests at once (a WebSocket holds one for its life); the
    next is answered 503 with a worded reason, at once, holding no thread. Requests that do not say they are a
    spectator's (the host, the director, the buttons, the box's own board) are never counted nor refused."""

    def __init__(self, app, cap: int, catalogue, snapshots: "Snapshots") -> None:
        self.app = app
        self.cap = cap
        self.catalogue = catalogue
        self.snapshots = snapshots
        self.open = 0
        self.refused = 0
        self._lock = threading.Lock()

    def _refuse(self, start_response, retry_after_s: str):
        body = _encode({"code": "spectators.full", **self.catalogue.both("spectators.full")})
        start_response("503 Service Unavailable", [("Content-Type", "application/json; charset=utf-8"),
                                                   ("Content-Length", str(len(body))), ("Retry-After", retry_after_s),
                                                   ("Cache-Control", "no-store")])
        return [body]

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") == SNAPSHOT_PATH and not self.snapshots.take():
            return self._refuse(start_response, "5")  # before Flask: a refusal costs as little as it can
        if not (environ.get("PATH_INFO", "").startswith("/socket.io")
                and AUDIENCE_QUERY in parse_qs(environ.get("QUERY_STRING", ""))):
            return self.app(environ, start_response)
        with self._lock:
            admitted = self.open < self.cap
            if admitted:
                self.open += 1
            else:
                self.refused += 1
        if not admitted:
            return self._refuse(start_response, "30")
        try:
            return self.app(environ, start_response)
        finally:
            with self._lock:
                self.open -= 1


@blueprint.record_once
def _install(state) -> None:
    app = state.app
    settings = app.config["SVOYAK_SETTINGS"]
    snapshots = app.extensions["svoyak.snapshots"] = Snapshots()
    admission = Admission(app.wsgi_app, settings.spectators_socket_cap, app.extensions["svoyak.catalogue"], snapshots)
    app.wsgi_app = admission
    app.extensions["svoyak.admission"] = admission


def page_config(mode: str) -> dict:
    """What ``spectate.js`` needs: the fast path's WebSocket port and subjects (None: no fan-out running), the
    snapshot's address, whether this page is the box's own board (``/board`` opened on the box: it keeps
    Socket.IO; ``/watch`` is a spectator's wherever it is opened)."""
    hub = current_app.extensions["svoyak.hub"]
    fanout = getattr(hub, "spectators", None)
    ports = fanout.ports() if fanout is not None else None
    return {
        "ws_port": ports["websocket"] if ports else None,
        "update_subject": fanout.update_subject if fanout is not None else None,
        "snapshot_url": SNAPSHOT_PATH,
        "local": mode == "board" and is_local(request.remote_addr),
        "poll_ms": POLL_MS,
        "audience_query": AUDIENCE_QUERY,
    }


@blueprint.app_context_processor
def spectators_config():
    return {"spectators_config": page_config}


_HOST_NAME = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]{1,253})$")


@blueprint.after_app_request
def allow_fast_path(response):
    """The board's pages may open a WebSocket to the spectators' port of the address they were opened with
    (every other page keeps ``connect-src 'self'``, web/edge.py)."""
    if request.endpoint in ("board.page", "board.watch"):
        hub = current_app.extensions["svoyak.hub"]
        fanout = getattr(hub, "spectators", None)
        ports = fanout.ports() if fanout is not None else None
        host = request.host.rsplit(":", 1)[0] if request.host.count(":") == 1 or request.host.startswith("[") and \
            "]:" in request.host else request.host
        if ports and _HOST_NAME.match(host):
            response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY.replace(
                "connect-src 'self'", f"connect-src 'self' ws://{host}:{ports['websocket']}")
    return response


class Snapshots:
    """The board's snapshot for HTTP: its view encoded once per ``seq`` (a thousand phones polling, or joining at
    once, cost one copy and one encoding per update, not one each), and a token bucket: at most
    :data:`SNAPSHOT_BURST` at once and :data:`SNAPSHOTS_PER_S` a second in all are answered; the rest get a
    503 at once and come back later (spectate.js doubles its wait, up to a minute), so pages polling or joining
    can never take the threads the game needs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cached: tuple[int, bytes] = (-1, b"")
        self._tokens = float(SNAPSHOT_BURST)
        self._filled = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        with self._lock:
            self._tokens = min(SNAPSHOT_BURST, self._tokens + max(0.0, now - self._filled) * SNAPSHOTS_PER_S)
            self._filled = now
            if self._tokens < 1:
                return False
            self._tokens -= 1
            return True

    def view_json(self, hub, board) -> tuple[int, bytes]:
        seq, encoded = self._cached
        if seq != hub.session.seq:
            snapshot = board.snapshot()
            seq, encoded = snapshot["seq"], _encode(snapshot["view"])
            self._cached = (seq, encoded)
        return seq, encoded


SNAPSHOTS_PER_S = 25          # a snapshot answer costs about a millisecond of one core (bench_spectators)
SNAPSHOT_BURST = 50


@blueprint.route(SNAPSHOT_PATH)
def snapshot():
    """The board's ``hello`` and ``snapshot``, as a spectator's Socket.IO connection would get them: the page's
    start on the fast path, and the whole of the polling path. Beyond the bucket: 503, worded."""
    from web.board import _waiting_info

    hub = current_app.extensions["svoyak.hub"]
    cache = current_app.extensions["svoyak.snapshots"]  # its bucket was taken from in Admission, before Flask
    board = hub.namespaces[BOARD_NAMESPACE]
    now_ns = hub.session.clock()
    hello = {"protocol": events.PROTOCOL_VERSION, "role": board.role, "box": hub.services.identity.box_name,
             "server_now_ns": now_ns, **_waiting_info()}
    seq, view = cache.view_json(hub, board)
    body = b"".join((b'{"hello":', _encode(hello), b',"snapshot":{"seq":%d,"server_now_ns":%d,"view":' % (seq, now_ns),
                     view, b"}}"))
    return Response(body, mimetype="application/json", headers={"Cache-Control": "no-store"})


def register(socketio, hub) -> None:
    if hub.settings.spectators:
        hub.spectators = Fanout(hub, hub.settings)
