"""The tournament director's pages and the public tournament table.

Registration (with the waiting list), seeding, the draw, brackets and tables that print, rooms and boxes, results
(from battles on this box, or typed in for a battle played elsewhere), written-round sheets typed fast with the
keyboard only, tie-breaks, exports (CSV, JSON, printable HTML). No rules here: every command goes to
:class:`appliance.service.tournaments.TournamentDesk`, which validates it against the tournament engine.

Director pages need the box's director PIN (not the host's: a room's host cannot reach the desk; the box's owner
finds it in the console, appliance/service/identity.py): one login per person (``web/auth.py``) opens the desk,
the rooms and the question packages on this device at once, its wrong guesses counted by a guard of its own (the
host page's mechanism, a separate count). ``/table/<id>`` is public.

A refused command is shown on the page of its form in the page's language, worded from its stable ``code``
and ``params`` by the desk's one catalogue (``appliance/service/tournament_refusals.py``), with
what was typed kept in the fields. Reasons the engine gives as codes and figures (who went on, who was not
admitted, why a shoot-out is needed) are worded by the ``reason.*`` and ``tie.*`` lines below.
"""

from __future__ import annotations

import secrets

from flask import Blueprint, Response, current_app, g, jsonify, redirect, render_template, request, url_for

import appliance.words as words
from appliance.errors import PackageError, SvoyakError
from appliance.service import audience, papers
from appliance.service.session import CommandRejected
from appliance.service.tournament_refusals import word
from appliance.service.tournaments import BoxBusyError, DeskInputError, TournamentDesk, UnknownTournamentError
from web import auth
from web.guard import PinGuard
from web.package_refusals import word_package_error

blueprint = Blueprint("director", __name__, template_folder="templates")


def desk() -> TournamentDesk:
    """The app's tournament desk: built once by the composition root (``web.sync.build_services``), linked there
    to this box's battles, and handed over in :class:`web.sync.Services`."""
    return current_app.extensions["svoyak.hub"].services.desk


def _guard() -> PinGuard:
    """The director login's own guard (the host page's mechanism, a separate count): wrong director PINs lock
    an address out of the desk, and guesses at the desk's PIN never count against, or for, the host's."""
    return auth.guard(auth.DIRECTOR)


def is_logged_in() -> bool:
    """A director is logged in on this device (one login per person: web/auth.py)."""
    return auth.logged_in(auth.DIRECTOR)


_gate = auth.login_required("director", "director.login", ("director.table", "director.table_json"))


@blueprint.before_request
def require_pin():
    """The desk's gate, and the rooms' (web/rooms.py): the director's login, once per device."""
    return _gate()


def _language() -> str:
    return getattr(g, "language", "ru")


@blueprint.app_template_filter("rule")
def rule_words(text: str) -> str:
    """A format's rule as a page shows it: the TOML line is its citation, then an English gloss
    («eurocup 3.1: the battle winner goes on»); a Russian page shows the citation alone (the reason beside it
    is worded from the catalogue)."""
    text = str(text or "")
    return text.split(":", 1)[0].strip() if _language() == "ru" else text


def _word(pair: tuple[str, str]) -> str:
    """A title the tournament's format gives in both languages (``title_ru``, ``title_en``: data, not words)."""
    return pair[0] if _language() == "ru" else pair[1]


def _next_words(kind: str, unknown: str = "") -> str:
    """What the tournament waits for (``next.draw``, ``next.play``...), from the catalogue."""
    return words.gettext(f"next.{kind}", _language()) if words.has(f"next.{kind}") else unknown


def _battle_names(tid: str | None) -> dict[str, tuple[str, str]]:
    """Each drawn battle of a tournament as a refusal names it: «3 (1/27 финала)», «3 (1/27 final)»."""
    try:
        view = desk().view(tid) if tid else None
    except SvoyakError:
        return {}
    names = {}
    for stage in (view or {}).get("stages", []):
        for battle in stage.get("battles", []):
            names[battle["id"]] = (f"{battle.get('number', 0)} ({stage.get('title_ru', stage['id'])})",
                                   f"{battle.get('number', 0)} ({stage.get('title', stage['id'])})")
    return names


def _fail(error: SvoyakError, status: int = 400, form=None, note: str = ""):
    """A refusal: JSON for scripts; for a form, its own page again with the words and what was typed."""
    # a package's refusal (a battle or a stage's themes from a package) is worded by the packages' catalogue
    words = {"code": error.code, **word_package_error(error)} if isinstance(error, PackageError) else \
        word(error, _battle_names((request.view_args or {}).get("tid")))
    if request.accept_mimetypes.best == "application/json" or request.is_json:
        return jsonify({"ok": False, "error": str(error), **words}), status
    if status != 404:
        try:
            return _form_page(words, request.form if form is None else form, note), status
        except SvoyakError:
            pass  # the form's page cannot show now (a battle that does not exist...): the plain page below
    return render_template("director/error.html", error=words, tid=None), status


# The page each form lives on, to show a refusal there (endpoint of the POST -> page).
_FORM_PAGES = {
    "director.create": "home", "director.import_tournament": "home",
    "director.registration": "registration", "director.withdraw": "registration", "director.deadline": "registration",
    "director.seeding": "seeding",
    "director.close_registration": "overview", "director.draw": "overview", "director.tie": "overview",
    "director.rooms": "bracket", "director.assign": "bracket", "director.play": "bracket",
    "director.battle_result": "result", "director.sheets": "sheets", "director.close_stage": "sheets",
    "director.themes": "themes", "director.themes_from_package": "themes",
}


def _form_page(words: dict, form, note: str = ""):
    page = _FORM_PAGES.get(request.endpoint or "")
    args = request.view_args or {}
    extra = {"error": words, "form": form, "note": note}
    if page == "home":
        return _home(**extra)
    if page is None or "tid" not in args:
        raise SvoyakError("no form page")
    tid = args["tid"]
    if page == "result":
        return _result_page(tid, args["battle"], **extra)
    if page == "sheets":
        return _sheets_page(tid, args["stage"], **extra)
    if page == "themes":
        return _themes_page(tid, args["stage"], **extra)
    return _page(f"director/{page}.html", tid, **extra)


@blueprint.errorhandler(UnknownTournamentError)
def unknown(error):
    return _fail(error, 404)


@blueprint.errorhandler(SvoyakError)
def refused(error):
    return _fail(error)


@blueprint.route("/director/login", methods=["GET", "POST"])
def login():
    refusal = ""
    if request.method == "POST":
        refusal = auth.log_in(auth.DIRECTOR, request.form.get("pin", ""), request.remote_addr or "?")
        if refusal is None:
            return redirect(auth.safe_next(("/director", "/rooms", "/packages"), url_for("director.home")))
    status = {"": 200, "error.pin": 403, "error.pin_locked": 429, "error.director_pin_unset": 403}[refusal]
    words = current_app.extensions["svoyak.catalogue"].both(refusal) if refusal else None
    return render_template("director/login.html", refusal=words, refusal_key=refusal, tid=None), status


@blueprint.route("/director/")
def home():
    return _home()


def _home(**extra):
    presets = desk().presets()
    titles = {fmt["name"]: _word((fmt["title_ru"], fmt["title_en"])) for fmt in presets}
    tournaments = [{**item, "format_title": titles.get(item["format"], item["format"]),
                    "next_words": _next_words(item["next"], item["next"])}
                   for item in desk().list()]
    extra.setdefault("form", {})
    return render_template("director/home.html", tournaments=tournaments, presets=presets, tid=None, **extra)


def _seed(text: str) -> int | None:
    text = (text or "").strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise DeskInputError(f"seed {text[:40]!r} is not a whole number", code="input.seed",
                             params={"seed": text}) from None


@blueprint.post("/director/new")
def create():
    changes = {}
    for part in request.form.get("changes", "").replace("\n", ";").split(";"):
        if part.strip():
            key, _, value = part.partition("=")
            value = value.strip()
            # A number as such; anything else (a 5,000-digit "number" too) goes as typed and the format refuses it.
            changes[key.strip()] = int(value) if value.lstrip("-").isdigit() and len(value) <= 18 else value
    tid = desk().create(request.form.get("preset", ""), request.form.get("title", ""),
                        _seed(request.form.get("seed")), changes=changes)
    return redirect(url_for("director.registration", tid=tid))


@blueprint.post("/director/import")
def import_tournament():
    """Restore a tournament from a JSON export (its ``events``), e.g. moved from another box."""
    upload = request.files.get("file")
    tid = desk().import_json(upload.read() if upload else request.get_data())
    return redirect(url_for("director.overview", tid=tid))


def _box_status(view: dict) -> dict:
    """Each battle card's box battle as this box sees it: ``{"live": bool, "finished": bool, "players": ...}``
    (a battle set aside is neither live nor finished: the card offers to go back to it)."""
    session = getattr(current_app.extensions.get("svoyak.hub"), "session", None)
    battles = getattr(session, "battles", None)
    status = {}
    if battles is None:
        return status
    for stage in view.get("stages", []):
        for battle in stage.get("battles", []):
            box_battle = battle.get("box_battle")
            if not box_battle:
                continue
            try:
                line = papers.summary(battles.state(box_battle), box_battle, _language())
            except LookupError:
                continue  # played on another box
            status[box_battle] = {**line, "live": getattr(session, "battle_id", None) == box_battle}
    return status


def _page(template: str, tid: str, public: bool = False, **extra):
    view = desk().page(tid)
    if public:  # the hall's table: theme names wait until their battles are played (audience.withhold_theme_names)
        audience.withhold_theme_names(view)
    fmt = view["rules"]
    if template in ("director/bracket.html", "director/overview.html"):
        extra.setdefault("box_status", _box_status(view))
    cards = {b["id"]: (stage, b) for stage in view.get("stages", []) for b in stage.get("battles", [])}
    names = {b: (f"{card[1].get('number', 0)} ({card[0].get('title_ru')})",
                 f"{card[1].get('number', 0)} ({card[0].get('title')})") for b, card in cards.items()}
    rejected = [{"battle": battle, "box_battle": box_battle, "where": _battle_words(cards.get(battle), battle),
                 **word(error, names)}
                for rejected_tid, battle, box_battle, error in desk().rejected if rejected_tid == tid]
    extra.setdefault("form", {})
    if template == "director/registration.html":
        extra.setdefault("check", _field_check(tid))
    categories = {c["id"]: _word((c["title_ru"], c["title_en"])) for c in fmt["registration"]["categories"]}
    return render_template(template, tid=tid, view=view, fmt=fmt, rejected=rejected, categories=categories,
                           next_words=_next_words(view["next"]["kind"]), **extra)


def _battle_words(card, battle_id: str) -> str:
    """A drawn battle as people name it: «Первый отборочный этап · Бой 3» (its id only if the view lacks it)."""
    if card is None:
        return battle_id
    stage, battle = card
    title = stage.get("title_ru") if _language() == "ru" else stage.get("title")
    return f"{title} · {t_format('director.battle_n', number=battle.get('number', 0))}"


@blueprint.route("/director/<tid>/")
def overview(tid):
    return _page("director/overview.html", tid)


@blueprint.route("/director/<tid>/registration", methods=["GET", "POST"])
def registration(tid):
    if request.method == "POST":
        form = request.form
        if form.get("bulk", "").strip():
            lines = [line for line in form["bulk"].splitlines() if line.strip()]
            for number, line in enumerate(lines):
                name, _, team = line.partition(";")
                try:
                    desk().register(tid, name.strip(), team.strip(), form.get("category", ""),
                                    late=bool(form.get("late")))
                except SvoyakError as error:
                    # The lines before are in: keep only the failing line and the rest, so a resend adds no twins.
                    note = t_format("director.bulk_partial", done=number, total=len(lines))
                    return _fail(error, form={**form.to_dict(), "bulk": "\n".join(lines[number:])}, note=note)
        else:
            rank = form.get("team_rank", "").strip()
            if rank and (not rank.isdigit() or len(rank) > 9):
                raise DeskInputError(f"team rank {rank[:40]!r} is not a whole number", code="input.team_rank",
                                     params={"rank": rank})
            desk().register(tid, form.get("name", ""), form.get("team", ""), form.get("category", ""),
                            int(rank or 0), late=bool(form.get("late")), command_id=_command_id(form))
        return redirect(url_for("director.registration", tid=tid))
    return _page("director/registration.html", tid)


def t_format(key: str, **values) -> str:
    """A catalogue string of this page's language, filled in."""
    return current_app.extensions["svoyak.catalogue"].text(key, _language()).format(**values)


def _field_check(tid: str) -> dict | None:
    """The first stage's needs against the field, worded (irkutsk 2.1: nine quartets need 27 players)."""
    check = desk().field_check(tid)
    if check is None:
        return None
    stage = check["stage"]
    return {**check, "title": _word((stage["title_ru"], stage["title_en"])),
            "problem": word(check["problem"]) if check["problem"] is not None else None}


@blueprint.post("/director/<tid>/withdraw/<player>")
def withdraw(tid, player):
    desk().withdraw(tid, player, request.form.get("reason", ""))
    return redirect(request.referrer or url_for("director.registration", tid=tid))


@blueprint.post("/director/<tid>/deadline")
def deadline(tid):
    desk().set_deadline(tid, _deadline(request.form.get("deadline", ""), request.form.get("offset", "")))
    return redirect(url_for("director.registration", tid=tid))


def _deadline(text: str, offset: str) -> str:
    """A date-time input gives local time without an offset: add the browser's (a hidden field its script fills)
    or, without script, this box's own; a value with an offset already is passed on as typed."""
    import datetime
    import re

    text = text.strip()
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?", text):
        return text  # empty, or with its offset: the engine judges it
    if not re.fullmatch(r"[+-]\d\d:\d\d", offset.strip()):
        offset = datetime.datetime.now().astimezone().strftime("%z")
        offset = f"{offset[:3]}:{offset[3:]}"
    return text + offset.strip()


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
    desk().draw(tid, request.form.get("stage") or None, _seed(request.form.get("seed")))
    return redirect(url_for("director.bracket", tid=tid))


@blueprint.route("/director/<tid>/bracket")
def bracket(tid):
    return _page("director/bracket.html", tid)


@blueprint.post("/director/<tid>/assign/<path:battle>")
def assign(tid, battle):
    desk().assign(tid, battle, request.form.get("room", ""), request.form.get("box", ""))
    return redirect(url_for("director.bracket", tid=tid) + f"#b-{battle}")


@blueprint.route("/director/<tid>/battle/<path:battle>", methods=["GET", "POST"])
def battle_result(tid, battle):
    players = desk().battle(tid, battle)["players"]
    if request.method == "POST":
        lines = [{"player": p, "score": request.form.get(f"score-{p}", ""), "place": request.form.get(f"place-{p}"),
                  "right_points": request.form.get(f"right-{p}"), "right_answers": request.form.get(f"count-{p}"),
                  "absent": request.form.get(f"absent-{p}")} for p in players]
        desk().record_result(tid, battle, lines, command_id=_command_id(request.form))
        return redirect(url_for("director.bracket", tid=tid) + f"#b-{battle}")
    return _result_page(tid, battle)


def _result_page(tid: str, battle: str, **extra):
    spec = desk().battle(tid, battle)
    return _page("director/result.html", tid, battle=spec, players=spec["players"], command_id=secrets.token_hex(8),
                 **extra)


@blueprint.post("/director/<tid>/play/<path:battle>")
def play(tid, battle):
    """Put the drawn battle on this box's host page; its result comes back when it is over."""
    session = current_app.extensions["svoyak.hub"].services.session
    package = request.form.get("package", "").strip()
    spares = request.form.get("spares", "").strip()
    if spares and not (spares.isdigit() and int(spares) <= 20):
        raise DeskInputError("spare themes: a whole number from 0 to 20", code="input.spares",
                             params={"limit": 20})
    choice = {"id": package, **({"spares": int(spares)} if spares and int(spares) else {})} if package else None
    try:
        desk().play_on_box(tid, battle, session, _command_id(request.form) or secrets.token_hex(8),
                           host=request.form.get("host", ""), set_aside=request.form.get("set_aside") or None,
                           package=choice, packages=current_app.extensions["svoyak.hub"].services.packages)
    except (BoxBusyError, CommandRejected) as busy:
        # Never replace a battle silently: show it, with its scores, and let the director choose. The session's
        # own refusal (error.battle_unfinished: the host started or resumed a battle between the desk's check
        # and its command) gets the same choice, for the battle live now.
        live_id = getattr(busy, "live_battle_id", None) or session.battle_id
        if isinstance(busy, CommandRejected) and (busy.code != "error.battle_unfinished" or not live_id):
            raise
        live = papers.summary(session.battles.state(live_id), live_id, _language())
        return _page("director/bracket.html", tid, busy={"live": live, "battle": battle,
                                                         "host": request.form.get("host", ""),
                                                         "package": package, "spares": spares}), 409
    return redirect("/host")


@blueprint.route("/director/<tid>/setup/<path:battle>.json")
def battle_setup(tid, battle):
    """What the host page needs to play this battle on this box: profile, players (ids and names), themes, red
    themes, the cuts the stage needs, run, and the ``slot`` that links the finished battle back to the desk."""
    return jsonify(desk().setup_view(tid, battle))


@blueprint.route("/director/<tid>/themes/<stage>", methods=["GET", "POST"])
def themes(tid, stage):
    """The stage's theme names, typed by the director (one line per theme, a box per theme pack); battles played
    on this box arrive with them."""
    if request.method == "POST":
        for pack in desk().theme_packs(tid, stage):
            field = f"names-{pack['pack']}"
            if field in request.form:
                desk().name_themes(tid, pack["pack"], request.form[field].splitlines())
        return redirect(url_for("director.bracket", tid=tid) + f"#stage-{stage}")
    return _themes_page(tid, stage)


@blueprint.post("/director/<tid>/themes/<stage>/package")
def themes_from_package(tid, stage):
    """The stage's theme packs take their themes from a question package (the next unplayed, all or none)."""
    packages = current_app.extensions["svoyak.hub"].services.packages
    package_id = request.form.get("package", "").strip()
    if packages is None or not package_id:
        return _themes_page(tid, stage, error={"code": "error.no_packages",
                                               **current_app.extensions["svoyak.catalogue"].both(
                                                   "error.no_packages")}), 400
    desk().name_themes_from_package(tid, stage, packages, package_id)
    return redirect(url_for("director.themes", tid=tid, stage=stage))


def _themes_page(tid: str, stage: str, **extra):
    return _page("director/themes.html", tid, stage_id=stage, packs=desk().theme_packs(tid, stage), **extra)


@blueprint.route("/director/<tid>/sheets/<stage>", methods=["GET", "POST"])
def sheets(tid, stage):
    if request.method == "POST":
        data = request.get_json(silent=True) if request.is_json else request.form
        data = data if hasattr(data, "get") else {}  # a JSON body that is not an object: nothing typed
        player = str(data.get("player", "")).strip()
        if player.isdigit():
            player = f"p{int(player):03d}"  # the sheet carries the player's number
        line = desk().enter_sheet(tid, stage, player, str(data.get("marks", "")), command_id=_command_id(data))
        if request.is_json:
            return jsonify({"ok": True, "player": player, "name": desk().names(tid)[player],
                            "score": line.score, "right_points": line.right_points})
        return redirect(url_for("director.sheets", tid=tid, stage=stage))
    return _sheets_page(tid, stage)


def _sheets_page(tid: str, stage: str, **extra):
    fmt_stage = desk().stage(tid, stage)
    return _page("director/sheets.html", tid, stage=fmt_stage, marks_length=fmt_stage["marks"], **extra)


def _command_id(data) -> str | None:
    """A form's or JSON body's command id: text of at most 100 characters, else none (the command still runs once)."""
    value = data.get("command_id")
    return value if isinstance(value, str) and 0 < len(value) <= 100 else None


@blueprint.post("/director/<tid>/close/<stage>")
def close_stage(tid, stage):
    desk().close_stage(tid, stage)
    return redirect(url_for("director.overview", tid=tid))


@blueprint.post("/director/<tid>/tie")
def tie(tid):
    desk().break_tie(tid, request.form.get("tie", ""), request.form.get("order", "").split(),
                     request.form.get("how", "theme"), request.form.get("detail", ""))
    return redirect(url_for("director.overview", tid=tid))


@blueprint.route("/director/<tid>/export.csv")
def export_csv(tid):
    return Response(desk().export_csv(tid, _language()), mimetype="text/csv; charset=utf-8",
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
    return _page("director/table.html", tid, public=True)


@blueprint.route("/table/<tid>.json")
def table_json(tid):
    """The public table as a typed record (``appliance.service.audience.TableView``, docs/socketio-events.md)."""
    return jsonify(audience.table(desk().view(tid)))
