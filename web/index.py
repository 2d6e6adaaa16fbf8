"""The start page: what the captive portal opens. Links to every screen this box serves."""

from __future__ import annotations

from flask import Blueprint, render_template

blueprint = Blueprint("index", __name__)

STRINGS = {}


@blueprint.route("/")
def start():
    return render_template("index.html")
