"""The start page: what the captive portal opens. Links to every screen this box serves."""

from __future__ import annotations

from flask import Blueprint, current_app, render_template, send_from_directory, url_for

blueprint = Blueprint("index", __name__)


# Screens registered by other modules that the start page links to: (blueprint, endpoint, string key).
LINKED_SCREENS = (("director", "director.home", "nav.director"), ("rooms", "rooms.station", "rooms.nav_room"),
                  ("rooms", "rooms.lobby", "rooms.lobby"))


@blueprint.route("/")
def start():
    links = [{"href": url_for(endpoint), "label": label} for name, endpoint, label in LINKED_SCREENS
             if name in current_app.blueprints]
    return render_template("index.html", extra_links=links)


@blueprint.route("/favicon.ico")
def favicon():
    """The box's icon (browsers ask for it on every page; a 404 each time filled the log)."""
    return send_from_directory(current_app.static_folder, "favicon.ico", mimetype="image/vnd.microsoft.icon",
                               max_age=86400)
