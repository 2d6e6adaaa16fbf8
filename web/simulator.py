"""On-screen buzzers for a laptop: presses go through the capture simulator (``CaptureLink.simulate_press``),
so the whole path (capture process, socket, arbiter, session, engine, scoreboard) is the real one.
Only when the box runs with ``simulator = true``.
"""

from __future__ import annotations

from flask import Blueprint, abort, current_app, render_template

from appliance.service import audience as audience_records
from web import events, payloads
from web.sync import SyncNamespace, refuse

blueprint = Blueprint("simulator", __name__)


class SimulatorNamespace(SyncNamespace):
    """``/sim``: ``simulate`` ``{player, action}``."""

    role = events.ROLE_SIMULATOR
    audience = audience_records.SIMULATOR

    def admit(self, auth: dict) -> dict:
        if not self.hub.settings.simulator:
            raise refuse("error.simulator_off", self.hub.catalogue)
        return {}

    def on_simulate(self, data=None):
        try:
            # "host": the host's reset button on the box; else a player's seat
            message = payloads.fields(data, player=payloads.BUTTON, action=payloads.NAME)
        except payloads.BadMessage as error:
            return self.hub.word(error)
        return self.call(lambda: self.hub.session.simulate(message["player"], message["action"]))


@blueprint.route("/sim")
def page():
    if not current_app.config["SVOYAK_SETTINGS"].simulator:
        abort(404)
    settings = current_app.config["SVOYAK_SETTINGS"]
    return render_template("simulator.html", hold_s=round(settings.reset_hold_ms / 1000))


def register(socketio, hub) -> None:
    hub.add_namespace(SimulatorNamespace("/sim"))
