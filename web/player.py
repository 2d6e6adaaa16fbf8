"""A player's phone as a fallback buzzer, only while the host enables phones (marked lower precision).

A phone press is stamped at receipt by the server (``source: "phone"``): Wi-Fi latency makes it less fair
than a button, so the protocol and the scoreboard say so, and the host decides when to allow it.
"""

from __future__ import annotations

from flask import Blueprint, render_template

from web import events
from web.sync import SyncNamespace

blueprint = Blueprint("player", __name__)

STRINGS = {
    "player.title": ("Кнопка игрока", "Player buzzer"),
    "player.pick": ("Кто вы?", "Who are you?"),
    "player.press": ("ЖМИ", "PRESS"),
    "player.off": ("Телефоны-кнопки выключены: играем на кнопках", "Phone buzzers are off: play on the buttons"),
    "player.counted": ("Нажатие принято", "Press counted"),
    "player.not_counted": ("Нажатие не засчитано", "Press not counted"),
}


class PlayerNamespace(SyncNamespace):
    """``/player``: ``press`` ``{player, id}`` while phones are enabled."""

    role = events.ROLE_PLAYER

    def on_press(self, data=None):
        if not isinstance(data, dict):
            data = {}
        return self.call(lambda: self.hub.session.phone_press(int(data.get("player", -1)), str(data.get("id", ""))))


@blueprint.route("/play")
def page():
    return render_template("player.html")


def register(socketio, hub) -> None:
    hub.add_namespace(PlayerNamespace("/player"))
