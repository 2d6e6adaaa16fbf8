"""The scoreboard (HDMI 1920x1080, read from the back of a hall) and the same view for watchers' phones.

Read-only: its namespaces have no command handlers at all. The waiting screen shows the hotspot name, a QR
code to join it (``WIFI:T:WPA;S:...;P:...;;``, drawn server-side by segno as SVG) and the host page address.
The host PIN is never on the board by itself (the audience reads it): a host who lost it holds the box's host
button for ``reset_hold_ms`` and the board opened on the box itself (its HDMI kiosk, 127.0.0.1), and no other,
shows it for ``pin_shown_ms`` (``pin_shown``); the console has ``svoyak pin`` and the journal. The host page address is one the board's own viewers can reach: on the box
(the kiosk opens it on 127.0.0.1) the hotspot address; otherwise, and in the simulator, the address the board
was opened with.
"""

from __future__ import annotations

import io
import logging
import threading

from flask import Blueprint, Response, current_app, render_template, request

from appliance.service import audience as audience_records
from web import events
from web.sync import SyncNamespace, is_local

blueprint = Blueprint("board", __name__)
log = logging.getLogger(__name__)
HOST_BUTTON_HELD = "Capture_reset_button_held"  # the session's event for the capture's reset_button_held


def wifi_payload(ssid: str, password: str) -> str:
    r"""The Wi-Fi QR text, with ``\ ; , : "`` escaped as the format asks.

    >>> wifi_payload("Svoyak-AB12", 'pa;ss"')
    'WIFI:T:WPA;S:Svoyak-AB12;P:pa\\;ss\\";;'
    """
    def escape(text: str) -> str:
        return "".join("\\" + char if char in '\\;,:"' else char for char in text)
    return f"WIFI:T:WPA;S:{escape(ssid)};P:{escape(password)};;"


def svg_qr(text: str) -> str:
    import segno

    buffer = io.BytesIO()
    segno.make(text, error="m").save(buffer, kind="svg", scale=10, border=2, xmldecl=False, svgns=True,
                                     dark="#000", light="#fff")
    return buffer.getvalue().decode()


class BoardNamespace(SyncNamespace):
    """``/board``: the scoreboard and watchers. The PIN goes only to boards opened on the box itself, and only
    when the host button is held at the box (:meth:`show_pin`)."""

    role = events.ROLE_BOARD
    audience = audience_records.BOARD
    hello_record = audience_records.BoardHello

    def __init__(self, namespace: str) -> None:
        super().__init__(namespace)
        self._local: set[str] = set()  # sids of boards opened on the box itself (its HDMI kiosk)
        self._local_lock = threading.Lock()

    def admit(self, auth: dict) -> dict:
        if is_local(request.remote_addr):
            with self._local_lock:
                self._local.add(request.sid)
        return _waiting_info()

    def on_disconnect(self, *args):
        with self._local_lock:
            self._local.discard(request.sid)

    def on_update(self, update: dict) -> None:
        """A session subscriber: the host button held at the box shows the PIN on the box's own boards."""
        event = update.get("event") or {}
        if event.get("type") == HOST_BUTTON_HELD:
            self.show_pin()

    def show_pin(self) -> None:
        hub = self.hub
        pin, shown_ms = hub.services.identity.host_pin, hub.settings.pin_shown_ms
        with self._local_lock:
            local = list(self._local)
        # The console and the journal have it too (a box with no HDMI screen attached)
        log.warning("host button held at the box: host PIN %s shown on %d local board(s)", pin, len(local))
        for sid in local:
            hub.socketio.emit(events.PIN_SHOWN, {"pin": pin, "shown_ms": shown_ms}, to=sid, namespace=self.namespace)


def host_url(opened_with: str, hotspot_address: str, port: int, simulator: bool) -> str:
    """The host page address to show, given the ``Host`` the board was opened with.

    >>> host_url("127.0.0.1:8080", "10.42.0.1", 80, simulator=False)   # the box's own HDMI kiosk
    'http://10.42.0.1/host'
    >>> host_url("localhost:5000", "10.42.0.1", 5000, simulator=True)  # the laptop simulator
    'http://localhost:5000/host'
    >>> host_url("10.42.0.1", "10.42.0.1", 80, simulator=False)        # a phone on the hotspot
    'http://10.42.0.1/host'
    """
    name = opened_with.rsplit(":", 1)[0] if opened_with.count(":") == 1 else opened_with
    loopback = name in ("localhost", "[::1]", "::1") or name.startswith("127.")
    if opened_with and (simulator or not loopback):
        return f"http://{opened_with}/host"
    return f"http://{hotspot_address}{'' if port == 80 else f':{port}'}/host"


def _waiting_info() -> dict:
    hub = current_app.extensions["svoyak.hub"]
    settings = hub.settings
    identity = hub.services.identity
    info = {"ssid": identity.hotspot_ssid, "password": identity.hotspot_password,
            "host_url": host_url(request.host or "", settings.hotspot_address, settings.web_port,
                                 settings.simulator)}
    return info


@blueprint.route("/board")
def page():
    return render_template("board.html", mode="board")


@blueprint.route("/watch")
def watch():
    return render_template("board.html", mode="watch")


@blueprint.route("/board/wifi.svg")
def wifi_qr():
    identity = current_app.extensions["svoyak.hub"].services.identity
    svg = svg_qr(wifi_payload(identity.hotspot_ssid, identity.hotspot_password))
    return Response(svg, mimetype="image/svg+xml", headers={"Cache-Control": "no-cache"})


def register(socketio, hub) -> None:
    board = BoardNamespace("/board")
    hub.add_namespace(board)
    hub.session.subscribe(board.on_update)
