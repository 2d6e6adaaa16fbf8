"""On-screen buzzers for a laptop: presses go through the capture simulator (``CaptureLink.simulate_press``),
so the whole path (capture process, socket, arbiter, session, engine, scoreboard) is the real one.
Only when the box runs with ``simulator = true``.
"""

from __future__ import annotations

from flask import Blueprint, abort, current_app, render_template

from web import events, payloads
from web.sync import SyncNamespace, refuse

blueprint = Blueprint("simulator", __name__)

STRINGS = {
    "sim.title": ("Симулятор кнопок", "Button simulator"),
    "sim.keys": ("Клавиши 1–4 нажимают кнопки игроков", "Keys 1-4 press the players' buttons"),
    "sim.player": ("Игрок", "Player"),
}


class SimulatorNamespace(SyncNamespace):
    """``/sim``: ``simulate`` ``{player, action}``."""

    role = events.ROLE_SIMULATOR

    def admit(self, auth: dict) -> dict:
        if not self.hub.settings.simulator:
            raise refuse("error.simulator_off", self.hub.catalogue)
        return {}

    def on_simulate(self, data=None):
        try:
            message = payloads.fields(data, player=payloads.SEAT, action=payloads.NAME)
        except payloads.BadMessage as error:
            return self.hub.word(error)
        return self.call(lambda: self.hub.session.simulate(message["player"], message["action"]))


@blueprint.route("/sim")
def page():
    if not current_app.config["SVOYAK_SETTINGS"].simulator:
        abort(404)
    return render_template("simulator.html")


def register(socketio, hub) -> None:
    hub.add_namespace(SimulatorNamespace("/sim"))
