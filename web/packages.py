"""The question packages screen (``/packages``): upload, list, preview and delete the box's packages.

For the host and the director only: the host's login or the director's, once per device (``web/auth.py``: the
host who entered the PIN on the host page is not asked again; wrong PINs here and on ``/host`` count together). The preview shows every question with its answer, so it is
never reachable by the audience or the players: they see a question only as the host reads it.

An upload is read whole and validated before anything is kept (appliance/packages/library.py); a refused file
is worded by its code (docs/packages.md: every code has Russian and English words here, a test keeps them in
step) with the place in the file that is wrong. The app's request size cap is lifted for this one route to the
``package_upload_mb`` setting (appliance/config.py); a larger upload is a worded 413.
"""

from __future__ import annotations

import logging

from flask import Blueprint, abort, current_app, g, redirect, render_template, request, send_file, url_for
from werkzeug.exceptions import RequestEntityTooLarge

import appliance.words as words
from appliance.errors import PackageError
from appliance.service.packages import PackageFileError
from web import auth
from web.package_refusals import counted, word_package_error

log = logging.getLogger(__name__)

blueprint = Blueprint("packages", __name__)

MB = 1024 * 1024


def _language() -> str:
    return getattr(g, "language", "ru")


def _text(key: str, **fields) -> str:
    catalogue = current_app.extensions["svoyak.catalogue"]
    return catalogue.word(key, _language(), **fields) if fields else catalogue.text(key, _language())


def _packages():
    hub = current_app.extensions.get("svoyak.hub")
    return getattr(getattr(hub, "services", None), "packages", None)


def _guard():
    """The host page's PIN guard (wrong PINs here, on /host and at the host's login count together)."""
    return auth.guard(auth.HOST)


def logged_in() -> bool:
    """The host or a director logged in on this device (one login per person: web/auth.py)."""
    return auth.logged_in(*auth.opens("packages"))


@blueprint.app_context_processor
def package_choices_global():
    """``package_choices()`` for the director's «play on this box» form: the box's packages (titles only)."""
    def package_choices() -> list[dict]:
        # asked once per battle card: read the library's list once per request (titles only, nothing replayed)
        if "svoyak_package_choices" not in g:
            packages = _packages()
            g.svoyak_package_choices = [] if packages is None else [
                {"id": entry.id, "title": entry.title} for entry in packages.library.entries()]
        return g.svoyak_package_choices
    return {"package_choices": package_choices}


@blueprint.before_request
def require_login():
    if request.endpoint == "packages.login":
        return None
    if not logged_in():
        return redirect(url_for("packages.login", next=request.path))
    if _packages() is None:
        return _page(error=words.both("packages.unavailable"),
                     status=503)
    return None


@blueprint.route("/packages/login", methods=["GET", "POST"])
def login():
    refusal = ""
    if request.method == "POST":
        refusal = auth.log_in(auth.HOST, request.form.get("pin", ""), request.remote_addr or "?")
        if refusal is None:
            return redirect(auth.safe_next(("/packages",), url_for("packages.home")))
    status = {"": 200, "error.pin": 403, "error.pin_locked": 429}.get(refusal, 403)
    words = current_app.extensions["svoyak.catalogue"].both(refusal) if refusal else None
    return render_template("packages/login.html", refusal=words, refusal_key=refusal), status


def _page(status: int = 200, **extra):
    packages = _packages()
    language = _language()
    rows = []
    for entry in packages.entries() if packages is not None else []:
        rows.append({**entry, "origin_label": _text(f"packages.origin_{entry['origin']}")
                     if f"packages.origin_{entry['origin']}" in current_app.extensions["svoyak.catalogue"]
                     else entry["origin"],
                     "imported": entry["imported_at"].replace("T", " ")[:16]})
    settings = current_app.config["SVOYAK_SETTINGS"]
    return render_template("packages/list.html", rows=rows, language=language,
                           upload_hint=_text("packages.upload_hint", mb=settings.package_upload_mb),
                           director="director" in current_app.blueprints, **extra), status


@blueprint.route("/packages/")
@blueprint.route("/packages")
def home():
    return _page()


@blueprint.errorhandler(RequestEntityTooLarge)
def too_large(error):
    limit_mb = current_app.config["SVOYAK_SETTINGS"].package_upload_mb
    size_mb = (request.content_length or 0) // MB
    refusal = PackageFileError("package.too_large", "the upload is over the limit", size_mb=size_mb,
                               limit_mb=limit_mb)
    return _page(status=413, error={"code": "package.too_large", **word_package_error(refusal)})


@blueprint.route("/packages/upload", methods=["POST"])
def upload():
    # The app's request cap (small: forms and JSON) is lifted for this route only, to the upload setting, by the
    # web edge (web/edge.py LARGE_BODIES) before any field is read.
    sent = request.files.get("file")
    if sent is None or not sent.filename:
        return _page(status=400, error={"code": "packages.nothing_sent", **current_app.extensions[
            "svoyak.catalogue"].both("packages.nothing_sent")})
    data = sent.read()
    try:
        added = _packages().add(sent.filename, data)
    except PackageError as error:
        log.info("package %r refused: %s", sent.filename, error)
        return _page(status=400, error={"code": error.code, **word_package_error(error)}, filename=sent.filename)
    language = _language()
    key = "packages.again" if added["duplicate"] else "packages.added"
    note = _text(key, title=added["title"], themes=counted("themes", added["themes"], language),
                 questions=counted("questions", added["questions"], language))
    if added["media_questions"]:
        note += ". " + _text("packages.media_note", media=counted("media", added["media_questions"], language))
    return _page(status=200 if added["duplicate"] else 201, note=note, added=added["id"])


@blueprint.route("/packages/<package_id>")
def preview(package_id):
    try:
        shown = _packages().preview(package_id)
    except PackageError as error:
        return _page(status=404, error={"code": error.code, **word_package_error(error, where_label=False)})
    return render_template("packages/preview.html", package=shown, director="director" in current_app.blueprints,
                           written_hint=_text("written.hint", themes=counted("themes", 12, _language())))


def _written(package_id: str):
    """The written round's themes from the query: ``themes=1,2,3`` (from 1) or the next ``count`` unplayed."""
    raw = request.args.get("themes", "").replace(" ", "")
    count = request.args.get("count", "12")
    themes = None
    if raw:
        if not all(part.isdigit() and 0 < int(part) <= 999 for part in raw.split(",")):
            raise PackageFileError("package.no_such_theme", "theme numbers are whole numbers from 1",
                                   theme=raw[:20], themes=0)
        themes = [int(part) - 1 for part in raw.split(",")]
    return _packages().written_round(package_id, themes=themes, count=int(count) if count.isdigit() else 12)


@blueprint.route("/packages/<package_id>/written/<kind>")
def written(package_id, kind):
    """Youth-cup 2.2's written round from a package: the players' answer sheets (theme names and prices, no
    texts) or the host's key (every question with its answer), printable on A4."""
    if kind not in ("sheets", "key"):
        abort(404)
    try:
        shown = _written(package_id)
    except PackageError as error:
        return _page(status=400, error={"code": error.code, **word_package_error(error, where_label=False)})
    copies = request.args.get("copies", "1")
    copies = min(int(copies), 200) if copies.isdigit() and int(copies) > 0 else 1
    return render_template(f"packages/written_{kind}.html", round=shown, copies=range(copies))


@blueprint.route("/packages/<package_id>/media/<path:path>")
def media(package_id, path):
    try:
        file = _packages().library.media_path(package_id, path)
    except PackageError:
        abort(404)
    return send_file(file, as_attachment=False, max_age=0)


@blueprint.route("/packages/<package_id>/delete", methods=["GET", "POST"])
def delete(package_id):
    packages = _packages()
    try:
        entry = packages.library.entry(package_id)
    except PackageError as error:
        return _page(status=404, error={"code": error.code, **word_package_error(error, where_label=False)})
    if request.method == "POST" and request.form.get("confirm") == "yes":
        packages.delete(package_id)
        return _page(note=_text("packages.deleted", title=entry.title))
    return render_template("packages/delete.html", entry=entry,
                           question=_text("packages.delete_confirm", title=entry.title))
