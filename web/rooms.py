"""The rooms' pages: the hub's rooms view and pairing, the station's assigned battle, the hall's lobby board.

The rooms service (``appliance.service.rooms.service.Rooms``) is started when the app is built, with the app's
tournament desk and live session; a standalone box starts nothing. Pages refresh themselves every few
seconds (no script needed); the director's pages take the director's login (the box's PIN).
"""

from __future__ import annotations

import logging
import re
import secrets

from flask import Blueprint, Response, abort, current_app, g, jsonify, redirect, render_template, request, url_for

import appliance.words as words
from appliance.errors import SvoyakError
from appliance.service import audience
from appliance.service.rooms.protocol import ClaimRefusedError, PairingError, RoomsError, SlotTakenError

blueprint = Blueprint("rooms", __name__, template_folder="templates")
log = logging.getLogger(__name__)
LOBBY_STANDINGS = 16  # lines of each tournament's table on the hall's board
HUB_ADDRESS = re.compile(r"^[A-Za-z0-9.\-]{1,253}(:[0-9]{1,5})?$")  # host[:port] as the pairing link carries it
CODE = re.compile(r"^[0-9]{6}$")


def rooms():
    return current_app.extensions.get("svoyak.rooms")


@blueprint.record_once
def _start(state) -> None:
    """Build and start the rooms service with the app's session and desk (a standalone box starts nothing).

    Started with the app, not on a first request: a station that reboots republishes before anyone looks.
    """
    app = state.app
    hub = app.extensions.get("svoyak.hub")
    session = getattr(hub, "session", None)
    if session is None or not hasattr(session, "battles"):
        return
    from appliance.service.rooms.service import Rooms

    def desk():
        from web import director

        with app.app_context():
            return director.desk()

    service = Rooms(app.config["SVOYAK_SETTINGS"], session, desk)
    app.extensions["svoyak.rooms"] = service
    service.start()


@blueprint.before_request
def _require_login():
    if request.endpoint in ("rooms.pair_api", "rooms.lobby", "rooms.lobby_json"):
        return None
    from web import director

    return director.require_pin()


def _word(key: str, **values) -> str:
    catalogue = current_app.extensions["svoyak.catalogue"]
    language = getattr(g, "language", "ru")
    return catalogue.word(key, language, **values) if values else catalogue.text(key, language)


def _refusal(error: SvoyakError) -> str:
    """A rooms refusal in the page's language, by its code (``refusal.rooms.<code>``, docs/words.md); the
    English message goes to the log, never into a Russian sentence."""
    code, params = getattr(error, "code", "") or "", dict(getattr(error, "params", {}) or {})
    if isinstance(error, ClaimRefusedError):
        reason = f"rooms.claim.{error.reason}"
        return _word("rooms.claim_refused", why=_word(reason) if error.reason else _word("rooms.claim.other"))
    if isinstance(error, SlotTakenError) and not error.holder:
        code = "taken_unknown"
    if code and words.has(f"refusal.rooms.{code}"):
        try:
            return _word(f"refusal.rooms.{code}", **params)
        except KeyError:  # a code whose params did not come along
            log.warning("rooms refusal %s without its params: %s", code, error)
    log.warning("rooms refusal without words: %s", error)
    return _word("refusal.rooms.other")


# --- the hub -----------------------------------------------------------------------------------------------------------
@blueprint.route("/director/rooms")
def desk_rooms():
    from web import director

    service = rooms()
    waiting = []
    if service is not None and service.role == "hub":
        for item in director.desk().list():
            view = director.desk().view(item["id"])
            for stage in view["stages"]:
                for battle in stage.get("battles", []):
                    if not battle.get("lines"):
                        waiting.append({"tournament": item["id"], "title": item["title"], "battle": battle["id"],
                                        "room": battle.get("room", "")})
    packages = getattr(getattr(service, "session", None), "adapter", None)
    packages = getattr(packages, "packages", None) if service is not None and service.role == "hub" else None
    return render_template("rooms/desk.html", service=service, waiting=waiting,
                           packages=packages.library.entries() if packages is not None else [],
                           code=service.roles.current_code() if service else None,
                           address=request.host, note=request.args.get("note", ""))


@blueprint.route("/director/rooms.json")
def desk_rooms_json():
    service = rooms()
    if service is None:
        return jsonify({"role": "standalone"})
    return jsonify({"role": service.role, "box": service.roles.box_id, "error": service.error,
                    "rooms": service.rooms_view(), "conflicts": len(service.conflicts()),
                    "entered": getattr(service.results, "entered", 0),
                    **(service.hub.counts() if service.hub is not None else {}),
                    "backlog": service.station.backlog() if service.station else 0})


@blueprint.route("/director/rooms/lags.json", methods=["POST"])
def take_lags():
    """Bench only: how long each station event took from its stamp to the hub's copy (ns) and in which stages,
    since the last call (a station: its publishes' acknowledgements). Figures are kept from the first call on,
    until a call with ``stop=1``.
    Meaningful only when the boxes share one clock (one machine, network namespaces)."""
    hub, station = getattr(rooms(), "hub", None), getattr(rooms(), "station", None)
    lags, stages, acks = [], [], []
    measuring = request.form.get("stop") != "1"  # stop=1: drained, and no more kept (the bench's memory figures)
    if hub is not None:
        hub.measuring = measuring  # from the first call on: a hub never measured keeps no figures
        while hub.lags_ns:
            lags.append(hub.lags_ns.popleft())
        while hub.stages_ns:
            stages.append(hub.stages_ns.popleft())
    if station is not None:  # a station: publish -> its own stream's acknowledgement (its JetStream store)
        station.measuring = measuring
        while station.acks_ns:
            acks.append(station.acks_ns.popleft())
    return jsonify({"lags_ns": lags, "stages_ns": stages, "acks_ns": acks})


@blueprint.post("/director/rooms/role")
def set_role():
    service = rooms()
    try:
        service.set_role(request.form.get("role", ""), request.form.get("name", ""))
    except SvoyakError as error:
        return redirect(url_for("rooms.desk_rooms", note=_refusal(error)))
    return redirect(url_for("rooms.desk_rooms"))


def pairing_link(station_address: str, hub_address: str, code: str) -> str:
    """What the pairing QR code holds: the *station's* own join page (its host tablet is on the station's
    hotspot, where the station is ``station_address``), with the desk's address and the code in the path (a
    query would be lost through the director's login, which keeps only the path).

    >>> pairing_link("10.42.0.1", "192.168.1.20:8080", "012345")
    'http://10.42.0.1/director/rooms/join/192.168.1.20:8080/012345'
    """
    return f"http://{station_address}/director/rooms/join/{hub_address}/{code}"


@blueprint.route("/director/rooms/pair.svg")
def pair_qr():
    """The current pairing code as a QR code (SVG drawn on the box by segno: offline, no script)."""
    from web.board import svg_qr

    service = rooms()
    current = service.roles.current_code() if service is not None and service.role == "hub" else None
    if current is None or not HUB_ADDRESS.match(request.host):
        abort(404)
    settings = current_app.config["SVOYAK_SETTINGS"]
    svg = svg_qr(pairing_link(settings.hotspot_address, request.host, current[0]))
    return Response(svg, mimetype="image/svg+xml", headers={"Cache-Control": "no-store"})


@blueprint.route("/director/rooms/join/<hub>/<code>")
def join(hub: str, code: str):
    """A station's pairing form, filled in from the QR code the desk shows (one tap to connect)."""
    service = rooms()
    if service is not None and service.role == "hub":
        return render_template("rooms/station.html", service=service, note=_word("rooms.is_hub"), assignments=[],
                               prefill=None), 409
    if not HUB_ADDRESS.match(hub) or not CODE.match(code):
        return render_template("rooms/station.html", service=service, note=_word("rooms.bad_link"),
                               assignments=[], prefill=None), 400
    return render_template("rooms/station.html", service=service, note="", assignments=[],
                           prefill={"hub": hub, "code": code}, repairing=True)


@blueprint.post("/director/rooms/repair")
def repair():
    """The director re-pairs a station: its credential rotated, the old one cut; it pairs again with a code."""
    service = _hub()
    box = request.form.get("box", "")
    if request.form.get("sure") != "1":  # one tap on a tablet must not cut a room off mid-battle
        return redirect(url_for("rooms.desk_rooms", note=_word("rooms.repair_unsure")))
    try:
        if service is None:
            raise RoomsError("this box is not the hub")
        name = service.station_names().get(box, box)
        service.repair_station(box)
    except SvoyakError as error:
        return redirect(url_for("rooms.desk_rooms", note=_refusal(error)))
    return redirect(url_for("rooms.desk_rooms", note=_word("rooms.repaired", name=name)))


@blueprint.post("/director/rooms/code")
def new_code():
    rooms().roles.new_code()
    return redirect(url_for("rooms.desk_rooms"))


@blueprint.route("/director/rooms/code.json", methods=["POST"])
def new_code_json():
    return jsonify({"code": rooms().roles.new_code()})


def _hub():
    """The rooms service of a hub box, or ``None`` (a station or a standalone box has no rooms to assign)."""
    service = rooms()
    return service if service is not None and getattr(service, "results", None) is not None else None


@blueprint.post("/director/rooms/assign")
def assign():
    service = _hub()
    if service is None:  # a post to a box that is not the hub: a worded refusal, not a 500
        return redirect(url_for("rooms.desk_rooms", note=_refusal(RoomsError("this box is not the hub"))))
    box = request.form.get("box", "")
    tournament, _, battle = request.form.get("battle_key", "").partition("|")
    tournament, battle = request.form.get("tournament", tournament), request.form.get("battle", battle)
    package = request.form.get("package", "")
    carrier = service.hub.carrier if package and service.hub is not None else None
    try:
        # the themes are named first (they travel with the assignment: carried.py), once the slot is free
        service.results.check_free(box, tournament, battle, before=None if carrier is None else
                                   lambda: carrier.give_package(tournament, battle, package))
        service.hub.publish_assignments()
    except SvoyakError as error:
        return redirect(url_for("rooms.desk_rooms", note=_refusal(error)))
    return redirect(url_for("rooms.desk_rooms"))


@blueprint.post("/director/rooms/settle")
def settle():
    service = _hub()
    try:
        if service is None or service.results is None:
            raise RoomsError("this box is not the hub")
        service.results.settle(request.form.get("tournament", ""), request.form.get("battle", ""),
                               request.form.get("take") == "station")
    except SvoyakError as error:  # answered already (another tab), or the desk refuses the station's result
        return redirect(url_for("rooms.desk_rooms", note=_refusal(error)))
    return redirect(url_for("rooms.desk_rooms"))


@blueprint.post("/rooms/pair")
def pair_api():
    """A station pairs: ``{code, box_id, name}`` in, its leaf URL and credentials out (the code is the key)."""
    data = request.get_json(silent=True) or {}
    standby = data.get("standby")
    if isinstance(standby, dict):  # a standby desk: its leaf port, at the address it asked from
        port = standby.get("leaf_port")
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            return jsonify({"ok": False, "error": "a standby names its leaf port (1-65535)"}), 403
        standby = {"address": request.remote_addr, "leaf_port": port}
    else:
        standby = None
    try:
        answer = rooms().pair_station(str(data.get("code", "")), str(data.get("box_id", "")),
                                      str(data.get("name", "")), request.host.split(":")[0], standby=standby)
    except (PairingError, RoomsError, AttributeError) as error:  # the station words the code in its own language
        code, params = getattr(error, "code", "") or "not_hub", getattr(error, "params", {})
        return jsonify({"ok": False, "error": str(error), "code": code, "params": params}), 403
    return jsonify({"ok": True, **answer})


# --- the station -------------------------------------------------------------------------------------------------------
@blueprint.route("/room")
def station():
    service = rooms()
    return render_template("rooms/station.html", service=service, note=request.args.get("note", ""),
                           assignments=service.assignments() if service else [],
                           mirror=service.standby_status() if service and service.role == "standby" else None)


@blueprint.route("/room.json")
def station_json():
    service = rooms()
    return jsonify({"role": service.role, "assignments": service.assignments(), "error": service.error,
                    "backlog": service.station.backlog() if service.station else 0,
                    "ready": bool(service.station and service.station.ready),
                    **({"mirror": service.standby_status()} if service.role == "standby" else {})})


@blueprint.route("/room/media/<package_id>/<path:path>")
def station_media(package_id, path):
    """A picture of a question the desk's assignment carried to this station (the host's, behind the PIN)."""
    from flask import send_file

    from appliance.errors import PackageError

    service = rooms()
    packages = getattr(getattr(getattr(service, "session", None), "adapter", None), "packages", None)
    if packages is None:
        abort(404)
    try:
        file = packages.library.media_path(package_id, path)
    except PackageError:
        abort(404)
    return send_file(file, as_attachment=False, max_age=0, download_name=path.rsplit("/", 1)[-1])


@blueprint.post("/room/take-over")
def take_over():
    """The director's one tap on the standby desk (the tick box says the desk is lost)."""
    service = rooms()
    if request.form.get("sure") != "1":
        return redirect(url_for("rooms.station", note=_word("rooms.take_over_sure")))
    try:
        counts = service.take_over()
    except SvoyakError as error:
        return redirect(url_for("rooms.station", note=_refusal(error)))
    return redirect(url_for("rooms.desk_rooms", note=_word("rooms.took_over", **counts)))


@blueprint.post("/room/pair")
def station_pair():
    try:
        rooms().pair_with_hub(request.form.get("hub", ""), request.form.get("code", ""),
                              request.form.get("name", ""), standby=request.form.get("standby") == "1")
    except SvoyakError as error:
        return redirect(url_for("rooms.station", note=_refusal(error)))
    return redirect(url_for("rooms.station"))


@blueprint.post("/room/start")
def station_start():
    try:
        rooms().start_assigned(request.form.get("tournament", ""), request.form.get("battle", ""),
                               request.form.get("command_id") or secrets.token_hex(8))
    except SvoyakError as error:
        if request.is_json or request.accept_mimetypes.best == "application/json":
            return jsonify({"ok": False, "error": _refusal(error)}), 409
        return redirect(url_for("rooms.station", note=_refusal(error)))
    if request.accept_mimetypes.best == "application/json":
        return jsonify({"ok": True, "battle": rooms().session.battle_id})
    return redirect("/host")


# --- the hall ------------------------------------------------------------------------------------------------------------
@blueprint.route("/lobby")
def lobby():
    from web import director

    service = rooms()
    tournaments = []
    if service is not None and service.role == "hub":
        for item in director.desk().list():
            view = director.desk().view(item["id"])
            tournaments.append({"id": item["id"], "title": item["title"],
                                "standings": view.get("standings", [])[:LOBBY_STANDINGS]})
    return render_template("rooms/lobby.html", rooms_view=audience.lobby(service.rooms_view()) if service else [],
                           tournaments=tournaments)


@blueprint.route("/lobby.json")
def lobby_json():
    service = rooms()
    return jsonify({"rooms": audience.lobby(service.rooms_view()) if service else []})
