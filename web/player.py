"""A player's phone as a fallback buzzer, only while the host enables phones (marked lower precision).

A phone press is stamped at receipt by the server (``source: "phone"``): Wi-Fi latency makes it less fair
than a button, so the protocol and the scoreboard say so, and the host decides when to allow it.

Anyone on the hotspot may open ``/play``, so a phone presses only for the seat whose code it knows: the host
page shows each seat's code (made by the session each time phones are enabled), the host tells each player
his. Every ``claim`` and ``press`` carries the code and the session checks it; wrong codes from one address
lock that address out for a while, like wrong PINs (4 digits must not be guessable over Wi-Fi).
"""

from __future__ import annotations

from flask import Blueprint, render_template, request

from appliance.service.session import CommandRejected
from web import events
from web.guard import PinGuard
from web.sync import SyncNamespace

blueprint = Blueprint("player", __name__)

STRINGS = {
    "player.title": ("Кнопка игрока", "Player buzzer"),
    "player.pick": ("Кто вы?", "Who are you?"),
    "player.press": ("ЖМИ", "PRESS"),
    "player.off": ("Телефоны-кнопки выключены: играем на кнопках", "Phone buzzers are off: play on the buttons"),
    "player.counted": ("Нажатие принято", "Press counted"),
    "player.not_counted": ("Нажатие не засчитано", "Press not counted"),
    "player.code": ("Код места (скажет ведущий)", "Seat code (the host tells you)"),
    "player.code_ok": ("Готово", "OK"),
}


class PlayerNamespace(SyncNamespace):
    """``/player``: ``claim`` ``{player, code}`` and ``press`` ``{player, code, id}`` while phones are enabled."""

    role = events.ROLE_PLAYER

    def __init__(self, namespace: str) -> None:
        super().__init__(namespace)
        self.guard = PinGuard(locked_code="error.seat_code_locked")

    def on_claim(self, data=None):
        """Check a seat's code before the first press (the page asks again at once if it is wrong)."""
        if not isinstance(data, dict):
            data = {}
        return self.guarded(lambda: self.hub.session.check_seat_code(int(data.get("player", -1)),
                                                                    str(data.get("code", ""))))

    def on_press(self, data=None):
        if not isinstance(data, dict):
            data = {}
        return self.guarded(lambda: self.hub.session.phone_press(int(data.get("player", -1)), str(data.get("id", "")),
                                                                 str(data.get("code", ""))))

    def guarded(self, action) -> dict:
        """Run ``action`` unless this address is locked out; count its code's verdict (``error.seat_code``)."""
        address = request.remote_addr or "?"
        locked = self.guard.locked(address)
        if locked:
            return self.hub.word(CommandRejected(locked))
        ack = self.call(action)
        if ack["ok"] or ack["error"]["code"] == "error.seat_code":
            self.guard.record(address, ack["ok"])
        return ack


@blueprint.route("/play")
def page():
    return render_template("player.html")


def register(socketio, hub) -> None:
    hub.add_namespace(PlayerNamespace("/player"))
