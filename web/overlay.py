"""The stream overlay: a page for OBS's browser source (1920x1080, transparent), one more audience.

``/overlay?layout=lower-third|full|scores`` (lower-third by default) connects to ``/overlay``, whose snapshots
and updates are the record ``appliance.service.audience.OverlayView`` (built by allow-list like the board's:
scores and names, theme and price, who answers with his button's colour, the countdown, the press order with the gaps, the
corrections; never a question's text, a PIN or the hotspot's password). The page's background is
transparent: OBS lays it over the camera.

A stream operator switches the layout live (Bitfocus Companion's HTTP action, a Stream Deck, ``curl``):
``POST /overlay/layout`` with ``pin`` (the host's, form field or header ``X-Svoyak-Pin``) and ``layout``
answers ``{ok, layout}`` and every overlay follows at once (``overlay_layout``); a wrong PIN spends the box's
one budget of host PIN guesses (web/guard.py). ``layout=""`` gives each page its URL's layout back.
"""

from __future__ import annotations

import threading

from flask import Blueprint, current_app, jsonify, render_template, request

from appliance.service import audience as audience_records
from web import events
from web.sync import SyncNamespace

blueprint = Blueprint("overlay", __name__)

LAYOUTS = ("lower-third", "full", "scores")
DEFAULT_LAYOUT = LAYOUTS[0]
NAMESPACE = "/overlay"


class OverlayNamespace(SyncNamespace):
    """``/overlay``: read-only, like ``/board``; its ``hello`` names the layout the operator chose."""

    role = events.ROLE_OVERLAY
    audience = audience_records.OVERLAY
    hello_record = audience_records.OverlayHello

    def __init__(self, namespace: str) -> None:
        super().__init__(namespace)
        self.layout = ""  # the operator's last choice; "" none: each page shows its URL's layout
        self.layout_lock = threading.Lock()

    def admit(self, auth: dict) -> dict:
        with self.layout_lock:
            return {"layout": self.layout}

    def choose(self, layout: str) -> None:
        with self.layout_lock:
            self.layout = layout
            self.hub.socketio.emit(events.OVERLAY_LAYOUT, {"layout": layout}, namespace=self.namespace)


@blueprint.route("/overlay")
def page():
    layout = request.args.get("layout", DEFAULT_LAYOUT)
    return render_template("overlay.html", layout=layout if layout in LAYOUTS else DEFAULT_LAYOUT, layouts=LAYOUTS)


@blueprint.route("/overlay/layout", methods=["POST"])
def set_layout():
    """The stream operator's show control: the host's PIN and the layout every overlay shows from now on."""
    hub = current_app.extensions["svoyak.hub"]
    catalogue = hub.catalogue
    offered = request.headers.get("X-Svoyak-Pin") or request.form.get("pin", "") or (
        (request.get_json(silent=True) or {}).get("pin", "") if request.is_json else "")
    refusal = hub.services.pin_guard.check(request.remote_addr or "?", offered, hub.services.identity.host_pin)
    if refusal:
        status = 429 if refusal == "error.pin_locked" else 403
        return jsonify({"ok": False, "error": {"code": refusal, **catalogue.both(refusal)}}), status
    layout = request.form.get("layout") if request.form.get("layout") is not None else (
        (request.get_json(silent=True) or {}).get("layout", "") if request.is_json else "")
    if not isinstance(layout, str) or (layout and layout not in LAYOUTS):
        shown = str(layout)[:40]
        said = catalogue.both("overlay.layout_bad", layout=shown, layouts=", ".join(LAYOUTS))
        return jsonify({"ok": False, "error": {"code": "overlay.layout", **said}}), 400
    hub.namespaces[NAMESPACE].choose(layout)
    return jsonify({"ok": True, "layout": layout})


def register(socketio, hub) -> None:
    hub.add_namespace(OverlayNamespace(NAMESPACE))
