"""The tournament director's pages and the public tournament table.

Registration (with the waiting list), seeding, the draw, brackets and tables that print, rooms and boxes, results
(from battles on this box, or typed in for a battle played elsewhere), written-round sheets typed fast with the
keyboard only, tie-breaks, exports (CSV, JSON, printable HTML). No rules here: every command goes to
:class:`appliance.service.tournaments.TournamentDesk`, which validates it against the tournament engine.

Director pages need the box's host PIN (a signed cookie after the login form); ``/table/<id>`` is public.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading

from flask import (Blueprint, Response, abort, current_app, g, jsonify, redirect, render_template, request,
                   url_for)

from appliance.errors import SvoyakError
from appliance.rules.tournament import ResultError, list_formats, load_format
from appliance.service.tournaments import TournamentDesk, UnknownTournamentError

blueprint = Blueprint("director", __name__, template_folder="templates")
COOKIE = "svoyak_director"
_open_lock = threading.Lock()

STRINGS = {
    "director.title": ("Турнирный стол", "Tournament desk"),
    "director.tournaments": ("Турниры", "Tournaments"),
    "director.new": ("Новый турнир", "New tournament"),
    "director.preset": ("Регламент", "Regulation"),
    "director.name": ("Название", "Title"),
    "director.seed": ("Зерно жеребьёвки (необязательно)", "Draw seed (optional)"),
    "director.create": ("Создать", "Create"),
    "director.play": ("Играть на этом боксе", "Play on this box"),
    "director.import": ("Загрузить турнир из JSON-экспорта", "Load a tournament from a JSON export"),
    "director.changes": ("Изменения формата (этап.поле=значение; …), напр. swiss.rounds=7",
                         "Format changes (stage.field=value; ...), e.g. swiss.rounds=7"),
    "director.login": ("Вход директора", "Director login"),
    "director.enter": ("Войти", "Enter"),
    "director.registration": ("Регистрация", "Registration"),
    "director.player": ("Игрок", "Player"),
    "director.team": ("Команда", "Team"),
    "director.category": ("Категория", "Category"),
    "director.team_rank": ("Место команды", "Team rank"),
    "director.late": ("Поздняя заявка", "Late entry"),
    "director.add": ("Добавить", "Add"),
    "director.bulk": ("Списком: «Имя; Команда» по строке", "As a list: «Name; Team» per line"),
    "director.accepted": ("Участники", "Entrants"),
    "director.waiting": ("Лист ожидания", "Waiting list"),
    "director.refused": ("Не вошли", "Not admitted"),
    "director.joining": ("Вступают позже", "Join later"),
    "director.withdraw": ("Снять", "Withdraw"),
    "director.close_registration": ("Закрыть регистрацию", "Close registration"),
    "director.closed": ("Регистрация закрыта", "Registration closed"),
    "director.deadline": ("Срок подачи заявок (напр. 2008-10-01T23:59-04:00)",
                          "Registration deadline (e.g. 2008-10-01T23:59-04:00)"),
    "director.rooms": ("Залы для боёв без зала (через пробел)", "Rooms for battles without one (space separated)"),
    "director.seeding": ("Посев", "Seeding"),
    "director.seeds_hint": ("Номера сеяных игроков по порядку, через пробел", "Seeded players' ids in order, space separated"),
    "director.save": ("Сохранить", "Save"),
    "director.draw": ("Жеребьёвка", "Draw"),
    "director.draw_next": ("Провести жеребьёвку", "Make the draw"),
    "director.redraw": ("Пережеребьёвка (пока нет результатов)", "Re-draw (while no results)"),
    "director.bracket": ("Сетка и таблицы", "Bracket and tables"),
    "director.next": ("Дальше", "Next"),
    "director.room": ("Зал", "Room"),
    "director.box": ("Бокс", "Box"),
    "director.assign": ("Назначить", "Assign"),
    "director.result": ("Результат", "Result"),
    "director.enter_result": ("Ввести результат", "Enter result"),
    "director.score": ("Очки", "Score"),
    "director.place": ("Место", "Place"),
    "director.right_points": ("Очки без минусов", "Points without minuses"),
    "director.right_answers": ("Верных ответов", "Right answers"),
    "director.absent": ("Отсутствовал", "Absent"),
    "director.sheets": ("Бланки письменного отбора", "Written-round sheets"),
    "director.marks_hint": ("+ верно, − (или =) неверно, 2 два ответа, x зачёркнуто, 0 (или .) пусто; Enter — записать",
                            "+ right, - (or =) wrong, 2 two answers, x crossed out, 0 (or .) blank; Enter saves"),
    "director.close_stage": ("Закрыть приём бланков", "Close sheet entry"),
    "director.tie": ("Перестрелка", "Shoot-out"),
    "director.tie_hint": ("Порядок после перестрелки: номера игроков, лучший первым",
                          "Order after the shoot-out: player ids, best first"),
    "director.standings": ("Итоговая таблица", "Standings"),
    "director.export": ("Экспорт", "Export"),
    "director.print": ("Печать", "Print"),
    "director.public": ("Публичная таблица", "Public table"),
    "director.advanced": ("Прошли дальше", "Went on"),
    "director.rule": ("Правило", "Rule"),
    "director.stage": ("Этап", "Stage"),
    "director.battle": ("Бой", "Battle"),
    "director.themes": ("Темы", "Themes"),
    "director.shootouts": ("Перестрелки", "Shoot-outs"),
    "director.skipped": ("Не проводится", "Not played"),
    "director.rejected": ("Результат с бокса не принят", "A box result was not accepted"),
}

NEXT_WORDS = {
    "draw": ("Жеребьёвка этапа", "Draw the stage"), "play": ("Играются бои", "Battles to play"),
    "sheets": ("Ввод бланков", "Enter the sheets"), "tie": ("Нужна перестрелка", "A shoot-out is needed"),
    "wait": ("Ждём результатов", "Waiting for results"), "done": ("Турнир завершён", "Tournament over"),
}


def desk() -> TournamentDesk:
    """The app's tournament desk, opened on first use from ``data_dir`` (the app factory is the root)."""
    app = current_app
    with _open_lock:
        if "svoyak.tournaments" not in app.extensions:
            opened = TournamentDesk.open(app.config["SVOYAK_SETTINGS"].data_dir)
            # Results of battles played on this box flow in; battles that ended while no desk was open too.
            hub = app.extensions.get("svoyak.hub")
            battles = getattr(getattr(hub, "session", None), "battles", None)
            if battles is not None and hasattr(battles, "add_listener"):
                battles.add_listener(opened.on_battle_event)
                opened.reconcile(battles)
            app.extensions["svoyak.tournaments"] = opened
    return app.extensions["svoyak.tournaments"]


def _pin() -> str:
    hub = current_app.extensions.get("svoyak.hub")
    identity = getattr(getattr(hub, "services", None), "identity", None)
    return getattr(identity, "host_pin", "") or current_app.config["SVOYAK_SETTINGS"].host_pin


def _token(pin: str) -> str:
    return hmac.new(pin.encode(), b"svoyak director", hashlib.sha256).hexdigest()


@blueprint.before_request
def require_pin():
    if request.endpoint in ("director.login", "director.table", "director.table_json"):
        return None
    pin = _pin()
    if pin and not hmac.compare_digest(request.cookies.get(COOKIE, ""), _token(pin)):
        return redirect(url_for("director.login", next=request.path))
    return None


def _language() -> str:
    return getattr(g, "language", "ru")


def _word(pair: tuple[str, str]) -> str:
    return pair[0] if _language() == "ru" else pair[1]


def _fail(error: SvoyakError, status: int = 400):
    if request.accept_mimetypes.best == "application/json" or request.is_json:
        return jsonify({"ok": False, "error": str(error)}), status
    return render_template("director/error.html", error=str(error)), status


@blueprint.errorhandler(UnknownTournamentError)
def unknown(error):
    return _fail(error, 404)


@blueprint.errorhandler(SvoyakError)
def refused(error):
    return _fail(error)


@blueprint.route("/director/login", methods=["GET", "POST"])
def login():
    error = ""
    if request.method == "POST":
        pin = _pin()
        if hmac.compare_digest(request.form.get("pin", ""), pin):
            target = request.args.get("next", "")
            response = redirect(target if target.startswith("/director") else url_for("director.home"))
            response.set_cookie(COOKIE, _token(pin), httponly=True, samesite="Strict")
            return response
        error = "PIN"
    return render_template("director/login.html", error=error)


@blueprint.route("/director/")
def home():
    presets = [(name, load_format(name)) for name in list_formats()]
    return render_template("director/home.html", tournaments=desk().list(), presets=presets)


@blueprint.post("/director/new")
def create():
    seed = request.form.get("seed", "").strip()
    changes = {}
    for part in request.form.get("changes", "").replace("\n", ";").split(";"):
        if part.strip():
            key, _, value = part.partition("=")
            value = value.strip()
            changes[key.strip()] = int(value) if value.lstrip("-").isdigit() else value
    tid = desk().create(request.form["preset"], request.form.get("title", ""), int(seed) if seed else None,
                        changes=changes)
    return redirect(url_for("director.registration", tid=tid))


@blueprint.post("/director/import")
def import_tournament():
    """Restore a tournament from a JSON export (its ``events``), e.g. moved from another box."""
    import json

    upload = request.files.get("file")
    try:
        data = json.loads(upload.read().decode("utf-8") if upload else request.get_data(as_text=True))
    except (ValueError, UnicodeDecodeError) as error:
        return _fail(ResultError(f"not a JSON export: {error}"))
    tid = desk().import_events(data.get("events", []) if isinstance(data, dict) else data)
    return redirect(url_for("director.overview", tid=tid))


def _page(template: str, tid: str, **extra):
    view = desk().view(tid)
    state = desk().state(tid)
    rejected = [r for r in desk().rejected if r[0] == tid]
    return render_template(template, tid=tid, view=view, fmt=state.fmt, state=state, rejected=rejected,
                           next_words=_word(NEXT_WORDS.get(view["next"]["kind"], ("", ""))), **extra)


@blueprint.route("/director/<tid>/")
def overview(tid):
    return _page("director/overview.html", tid)


@blueprint.route("/director/<tid>/registration", methods=["GET", "POST"])
def registration(tid):
    if request.method == "POST":
        form = request.form
        if form.get("bulk", "").strip():
            for line in form["bulk"].splitlines():
                if line.strip():
                    name, _, team = line.partition(";")
                    desk().register(tid, name.strip(), team.strip(), form.get("category", ""),
                                    late=bool(form.get("late")))
        else:
            desk().register(tid, form["name"], form.get("team", ""), form.get("category", ""),
                            int(form.get("team_rank") or 0), late=bool(form.get("late")),
                            command_id=form.get("command_id") or None)
        return redirect(url_for("director.registration", tid=tid))
    return _page("director/registration.html", tid)


@blueprint.post("/director/<tid>/withdraw/<player>")
def withdraw(tid, player):
    desk().withdraw(tid, player, request.form.get("reason", ""))
    return redirect(request.referrer or url_for("director.registration", tid=tid))


@blueprint.post("/director/<tid>/deadline")
def deadline(tid):
    desk().set_deadline(tid, request.form.get("deadline", ""))
    return redirect(url_for("director.registration", tid=tid))


@blueprint.post("/director/<tid>/rooms")
def rooms(tid):
    desk().assign_rooms(tid, request.form.get("rooms", "").replace(",", " ").split())
    return redirect(url_for("director.bracket", tid=tid))


@blueprint.post("/director/<tid>/close-registration")
def close_registration(tid):
    desk().close_registration(tid)
    return redirect(url_for("director.overview", tid=tid))


@blueprint.route("/director/<tid>/seeding", methods=["GET", "POST"])
def seeding(tid):
    if request.method == "POST":
        desk().set_seeds(tid, request.form.get("seeds", "").split())
        return redirect(url_for("director.overview", tid=tid))
    return _page("director/seeding.html", tid)


@blueprint.post("/director/<tid>/draw")
def draw(tid):
    seed = request.form.get("seed", "").strip()
    desk().draw(tid, request.form.get("stage") or None, int(seed) if seed else None)
    return redirect(url_for("director.bracket", tid=tid))


@blueprint.route("/director/<tid>/bracket")
def bracket(tid):
    return _page("director/bracket.html", tid)


@blueprint.post("/director/<tid>/assign/<path:battle>")
def assign(tid, battle):
    desk().assign(tid, battle, request.form["room"], request.form.get("box", ""))
    return redirect(url_for("director.bracket", tid=tid) + f"#b-{battle}")


@blueprint.route("/director/<tid>/battle/<path:battle>", methods=["GET", "POST"])
def battle_result(tid, battle):
    from appliance.rules.tournament import battle_players

    players = battle_players(desk().state(tid), battle) or ()
    if request.method == "POST":
        lines = [{"player": p, "score": request.form.get(f"score-{p}", ""), "place": request.form.get(f"place-{p}"),
                  "right_points": request.form.get(f"right-{p}"), "right_answers": request.form.get(f"count-{p}"),
                  "absent": request.form.get(f"absent-{p}")} for p in players]
        desk().record_result(tid, battle, lines, command_id=request.form.get("command_id") or None)
        return redirect(url_for("director.bracket", tid=tid) + f"#b-{battle}")
    return _page("director/result.html", tid, battle=desk().state(tid).battles[battle], players=players,
                 command_id=secrets.token_hex(8))


@blueprint.post("/director/<tid>/play/<path:battle>")
def play(tid, battle):
    """Put the drawn battle on this box's host page; its result comes back when it is over."""
    hub = current_app.extensions.get("svoyak.hub")
    session = getattr(hub, "session", None)
    if session is None or not hasattr(session, "command"):
        return _fail(ResultError("this box has no battle session running"))
    desk().play_on_box(tid, battle, session, request.form.get("command_id") or secrets.token_hex(8))
    return redirect("/host")


@blueprint.route("/director/<tid>/setup/<path:battle>.json")
def battle_setup(tid, battle):
    """What the host page needs to play this battle on this box: profile, players (ids and names), themes, red
    themes, the cuts the stage needs, run, and the ``slot`` that links the finished battle back to the desk."""
    setup = desk().battle_setup(tid, battle)
    names = {p: e.name for p, e in desk().state(tid).entrants.items()}
    return jsonify({"profile": setup.profile.name, "players": list(setup.players),
                    "names": [names[p] for p in setup.players], "themes": setup.themes,
                    "red_themes": list(setup.red_themes), "cuts": None if setup.cuts is None else list(setup.cuts),
                    "slot": setup.slot, "run": setup.run, "runs": setup.runs})


@blueprint.route("/director/<tid>/sheets/<stage>", methods=["GET", "POST"])
def sheets(tid, stage):
    if request.method == "POST":
        data = request.get_json(silent=True) or request.form
        player = str(data.get("player", "")).strip()
        if player.isdigit():
            player = f"p{int(player):03d}"  # the sheet carries the player's number
        line = desk().enter_sheet(tid, stage, player, str(data.get("marks", "")),
                                  command_id=data.get("command_id") or None)
        if request.is_json:
            return jsonify({"ok": True, "player": player, "name": desk().state(tid).entrants[player].name,
                            "score": line.score, "right_points": line.right_points})
        return redirect(url_for("director.sheets", tid=tid, stage=stage))
    fmt_stage = desk().state(tid).fmt.stage(stage)
    return _page("director/sheets.html", tid, stage=fmt_stage, marks_length=fmt_stage.themes * len(fmt_stage.theme_values))


@blueprint.post("/director/<tid>/close/<stage>")
def close_stage(tid, stage):
    desk().close_stage(tid, stage)
    return redirect(url_for("director.overview", tid=tid))


@blueprint.post("/director/<tid>/tie")
def tie(tid):
    desk().break_tie(tid, request.form["tie"], request.form.get("order", "").split(),
                     request.form.get("how", "theme"), request.form.get("detail", ""))
    return redirect(url_for("director.overview", tid=tid))


@blueprint.route("/director/<tid>/export.csv")
def export_csv(tid):
    return Response(desk().export_csv(tid), mimetype="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f"attachment; filename={tid}.csv"})


@blueprint.route("/director/<tid>/export.json")
def export_json(tid):
    return Response(desk().export_json(tid), mimetype="application/json; charset=utf-8",
                    headers={"Content-Disposition": f"attachment; filename={tid}.json"})


@blueprint.route("/director/<tid>/print")
def printable(tid):
    return _page("director/print.html", tid)


@blueprint.route("/table/<tid>")
def table(tid):
    """The public table for the scoreboard and watchers' phones: read-only, refreshes itself."""
    return _page("director/table.html", tid)


@blueprint.route("/table/<tid>.json")
def table_json(tid):
    view = desk().view(tid)
    return jsonify({key: view[key] for key in ("tournament", "title", "format", "stages", "standings", "next")})
