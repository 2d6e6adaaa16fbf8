"""The day's papers from the screens: a battle's protocol, printable (A4 landscape) or as CSV.

``/battles/<id>/protocol`` and ``/battles/<id>/protocol.csv`` serve any battle of this box's store; the host's
end-of-battle screen and the director's battle card link here (``svoyak protocol`` on the box's shell makes the
same papers: one renderer, :mod:`appliance.service.papers`). Read-only and public like the scoreboard: a
protocol holds what the hall saw, and battle ids are random.
"""

from __future__ import annotations

from flask import Blueprint, Response, current_app, g, render_template
from werkzeug.exceptions import NotFound

from appliance.service import audience, papers

blueprint = Blueprint("papers", __name__)


class _NoBattle(NotFound):
    """A protocol of a battle this box does not have: a worded page, not Werkzeug's English one."""


def _state(battle_id: str):
    """The battle as the public papers may print it: the answers the board has shown, no more
    (``appliance.service.audience.public_battle``: the battle's id is on the board, these pages need no login)."""
    hub = current_app.extensions.get("svoyak.hub")
    session = getattr(hub, "session", None)
    battles = getattr(session, "battles", None)
    if battles is None:
        raise _NoBattle()
    try:
        state = battles.state(battle_id)
    except LookupError:  # UnknownBattleError is one
        raise _NoBattle() from None
    board_answer = getattr(getattr(session, "adapter", None), "board_answer", None) or \
        current_app.config["SVOYAK_SETTINGS"].board_answer
    return audience.public_battle(state, board_answer)


def _language() -> str:
    """The page's language (``?lang=``, else the cookie, else the box's): a paper speaks the screen's language."""
    return getattr(g, "language", "ru")


def _titles(state) -> dict:
    """The titles of the packages the battle's themes came from (a paper names a package, never its hash)."""
    hub = current_app.extensions.get("svoyak.hub")
    library = getattr(getattr(hub, "services", None), "packages", None)
    ids = {source[0] for source in getattr(state.setup, "sources", ()) if source}
    titles = {package_id: library.title(package_id) for package_id in ids} if library is not None else {}
    return {package_id: title for package_id, title in titles.items() if title}


@blueprint.errorhandler(_NoBattle)
def no_battle(_error):
    words = current_app.extensions["svoyak.catalogue"].text("papers.no_battle", getattr(g, "language", "ru"))
    return render_template("papers_missing.html", words=words), 404


@blueprint.route("/battles/<battle_id>/protocol")
def protocol(battle_id):
    state = _state(battle_id)
    return Response(papers.protocol_html(state, battle_id, language=_language(), titles=_titles(state)),
                    mimetype="text/html; charset=utf-8")


@blueprint.route("/battles/<battle_id>/protocol.csv")
def protocol_csv(battle_id):
    state = _state(battle_id)
    name = papers.file_name(state, battle_id, "csv")
    # UTF-8 with a BOM, so a spreadsheet opens the Cyrillic right (as the desk's CSV does).
    return Response("\ufeff" + papers.protocol_csv(state, _language(), _titles(state)), mimetype="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f"attachment; filename={name}"})
