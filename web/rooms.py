"""The rooms' pages: the hub's rooms view and pairing, the station's assigned battle, the hall's lobby board.

The rooms service (``appliance.service.rooms.runner.Rooms``) is built and started by the composition root
(``web.sync.build_services``) with the app's tournament desk and live session; a standalone box starts nothing. Pages refresh themselves every few
seconds (no script needed); the director's pages take the director's login (the box's PIN).
"""

from __future__ import annotations

import re
import secrets

from flask import Blueprint, Response, abort, current_app, g, jsonify, redirect, render_template, request, url_for

from appliance.errors import SvoyakError
from appliance.service import audience
from appliance.service.rooms.wire import (ClaimRefusedError, NotAssignedError, PackageNotArrivedError,
                                              PairingError, RoomsError, SlotTakenError)

blueprint = Blueprint("rooms", __name__, template_folder="templates")
LOBBY_STANDINGS = 16  # lines of each tournament's table on the hall's board
HUB_ADDRESS = re.compile(r"^[A-Za-z0-9.\-]{1,253}(:[0-9]{1,5})?$")  # host[:port] as the pairing link carries it
CODE = re.compile(r"^[0-9]{6}$")

STRINGS = {
    "rooms.title": ("Комнаты", "Rooms"),
    "rooms.nav_room": ("Бой этой комнаты", "This room's battle"),
    "rooms.role": ("Роль бокса", "The box's role"),
    "rooms.role.standalone": ("Один бокс", "Standalone"),
    "rooms.role.hub": ("Стол (хаб)", "Desk (hub)"),
    "rooms.role.station": ("Комната (станция)", "Room (station)"),
    "rooms.role.standby": ("Запасной стол", "Standby desk"),
    "rooms.pair_as_standby": ("подключиться как запасной стол (копия стола, без своей комнаты)",
                              "pair as the standby desk (a copy of the desk, no room of its own)"),
    "rooms.standby_mirror": ("Копия стола: событий комнат — {desk}, записей стола — {log}, не дошло — {lag}.",
                             "The desk's copy: rooms' events {desk}, desk records {log}, not yet here {lag}."),
    "rooms.standby_unknown": ("Копию стола сейчас не прочитать.", "The desk's copy cannot be read now."),
    "rooms.take_over": ("Стать столом", "Become the desk"),
    "rooms.take_over_sure": ("основной стол потерян: этот бокс станет столом, станции перейдут к нему",
                             "the desk is lost: this box becomes the desk and the stations move to it"),
    "rooms.took_over": ("Этот бокс теперь стол. Перенесено турниров: {tournaments}, записей: {rows}, пакетов: "
                        "{packages}.", "This box is the desk now. Moved: {tournaments} tournaments, {rows} records, "
                        "{packages} packages."),
    "rooms.standby_of_desk": ("Запасной стол", "Standby desk"),
    "rooms.name": ("Название бокса", "The box's name"),
    "rooms.save_role": ("Сменить роль", "Change role"),
    "rooms.pair": ("Подключить станцию", "Pair a station"),
    "rooms.code": ("Код для станции", "Code for the station"),
    "rooms.code_hint": ("Введите на станции этот код и адрес стола; код действует 10 минут.",
                        "Type this code and the desk's address on the station; the code lasts 10 minutes."),
    "rooms.address": ("Адрес стола", "Desk address"),
    "rooms.stations": ("Станции", "Stations"),
    "rooms.none": ("Станций пока нет.", "No stations yet."),
    "rooms.online": ("на связи", "online"),
    "rooms.offline": ("нет связи", "offline"),
    "rooms.never": ("ещё не выходила на связь", "not heard from yet"),
    "rooms.since": ("уже", "for"),
    "rooms.playing": ("Идёт бой", "Playing"),
    "rooms.last": ("Последний результат", "Last result"),
    "rooms.idle": ("Боя нет", "No battle"),
    "rooms.events": ("{count} {count:событие|события|событий}", "{count} {count:event|events}"),
    "rooms.assign": ("Отдать бой станции", "Give a battle to a station"),
    "rooms.battle": ("Бой", "Battle"),
    "rooms.give": ("Отдать", "Give"),
    "rooms.package": ("Вопросы из пакета", "Questions from the package"),
    "rooms.package_none": ("— темы уже названы или без пакета —", "— themes named already, or no package —"),
    "rooms.carried": ("Вопросы пришли со стола: пакет «{title}», {themes}", "The questions came from the desk: "
                      "package «{title}», {themes}"),
    "rooms.carried_waiting": ("Вопросы ещё идут со стола: пакет «{title}»",
                              "The questions are still coming from the desk: package «{title}»"),
    "rooms.spares": ("запасных тем: {count}", "spare themes: {count}"),
    "rooms.conflicts": ("Два результата одного боя", "Two results for one battle"),
    "rooms.conflict_hint": ("Станция сыграла бой, у которого на столе уже есть результат. Выберите, какой оставить.",
                            "A station played a battle that already has a result on the desk. Choose which stays."),
    "rooms.take_station": ("Оставить результат станции", "Keep the station's result"),
    "rooms.keep_desk": ("Оставить результат стола", "Keep the desk's result"),
    "rooms.station_result": ("Станция", "Station"),
    "rooms.desk_result": ("Стол", "Desk"),
    "rooms.error": ("Ошибка связи комнат", "Rooms link error"),
    "rooms.rebuilding": ("Стол собирается заново из журнала комнат", "The desk is rebuilding from the rooms' log"),
    "rooms.lobby": ("Все комнаты", "Every room"),
    "rooms.table": ("Таблица турнира", "Tournament table"),
    "rooms.place": ("Место", "Place"),
    "rooms.player": ("Игрок", "Player"),
    "rooms.score": ("Очки", "Score"),
    "rooms.assigned": ("Бой для этой комнаты", "The battle for this room"),
    "rooms.no_assignment": ("Стол пока не дал этой комнате боя.", "The desk has given this room no battle yet."),
    "rooms.start": ("Начать", "Start"),
    "rooms.players": ("Игроки", "Players"),
    "rooms.stage": ("Этап", "Stage"),
    "rooms.themes": ("Темы", "Themes"),
    "rooms.red": ("красная", "red"),
    "rooms.pair_station": ("Подключиться к столу", "Connect to the desk"),
    "rooms.hub_link": ("Стол", "Desk"),
    "rooms.hub_seen": ("стол отвечал", "desk answered"),
    "rooms.hub_unseen": ("стол пока не отвечал", "the desk has not answered yet"),
    "rooms.backlog": ("{count} {count:событие ждёт|события ждут|событий ждут} отправки",
                      "{count} {count:event waits|events wait} to be sent"),
    "rooms.taken": ("Этот бой уже у другого бокса: {holder}", "This battle is held by another box: {holder}"),
    "rooms.qr_hint": ("Или наведите камеру планшета комнаты (подключённого к своей станции) на этот код: откроется "
                      "форма станции с адресом стола и кодом.",
                      "Or point the room's tablet (on its own station) at this code: the station's form opens with the "
                      "desk's address and the code filled in."),
    "rooms.qr_alt": ("QR-код для подключения станции", "QR code to pair a station"),
    "rooms.is_hub": ("Этот бокс — стол. Ссылку для подключения откройте на планшете комнаты, подключённом к её станции.",
                     "This box is the desk. Open the pairing link on the room's tablet, on its own station."),
    "rooms.bad_link": ("Ссылка для подключения испорчена: введите адрес стола и код вручную.",
                       "The pairing link is damaged: type the desk's address and the code."),
    "rooms.refused": ("Не получилось: {why}", "Could not: {why}"),
    "rooms.repair": ("Подключить заново", "Pair again"),
    "rooms.repairing": ("ждёт подключения заново", "waiting to be paired again"),
    "rooms.repair_sure": ("отключить её прежний пароль (бой на ней прервётся до нового подключения)",
                          "cut off its old password (its battle stops reaching the desk until it pairs again)"),
    "rooms.repair_unsure": ("Станция не отключена: отметьте «отключить её прежний пароль» и нажмите ещё раз.",
                            "The station is not cut off: tick «cut off its old password» and press again."),
    "rooms.repaired": ("Станция «{name}» отключена: её прежний пароль больше не действует. Подключите её "
                       "новым кодом подключения, как новую.",
                       "Station {name} is cut off: its old password no longer works. Pair it with the desk's code, "
                       "as a new one."),
    "rooms.not_assigned": ("Этот бой не дан этой комнате: начните один из боёв, которые ей дал стол.",
                           "This battle is not assigned to this room: start one of the battles the desk gave it."),
    "rooms.not_arrived": ("Вопросы этого боя ещё не пришли со стола: подождите несколько секунд и нажмите ещё раз.",
                          "This battle's questions have not arrived from the desk yet: wait a few seconds and try "
                          "again."),
    "rooms.claim_refused": ("Стол не отдал этот бой: {why}", "The desk did not give this battle: {why}"),
    "rooms.claim.unknown_tournament": ("на столе нет такого турнира", "the desk has no such tournament"),
    "rooms.claim.unknown_battle": ("в турнире нет такого боя", "the tournament has no such battle"),
    "rooms.claim.has_result": ("у боя уже есть результат", "the battle already has a result"),
    "rooms.claim.not_assigned": ("стол не давал этот бой этой комнате",
                                 "the desk did not give this battle to this room"),
}


def rooms():
    return current_app.extensions.get("svoyak.rooms")


@blueprint.before_request
def _require_login():
    if request.endpoint in ("rooms.pair_api", "rooms.lobby", "rooms.lobby_json"):
        return None
    from web import director

    return director.require_pin()


def _word(key: str, **values) -> str:
    catalogue = current_app.extensions["svoyak.catalogue"]
    text = catalogue.text(key, getattr(g, "language", "ru"))
    return text.format(**values) if values else text


def _refusal(error: SvoyakError) -> str:
    if isinstance(error, SlotTakenError) and error.holder:
        return _word("rooms.taken", holder=error.holder)
    if isinstance(error, NotAssignedError):
        return _word("rooms.not_assigned")
    if isinstance(error, PackageNotArrivedError):
        return _word("rooms.not_arrived")
    if isinstance(error, ClaimRefusedError):
        return _word("rooms.claim_refused",
                     why=_word(f"rooms.claim.{error.reason}") if error.reason else str(error))
    return _word("rooms.refused", why=str(error))


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
    except (PairingError, RoomsError, AttributeError) as error:
        return jsonify({"ok": False, "error": str(error)}), 403
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
