"""A player's phone as a fallback buzzer, only while the host enables phones (marked lower precision).

A phone press is stamped at receipt by the server (``source: "phone"``): Wi-Fi latency makes it less fair
than a button, so the protocol and the scoreboard say so, and the host decides when to allow it.

Anyone on the hotspot may open ``/play``, so a phone presses only for the seat whose code it knows: the host
page shows each seat's code (made by the session each time phones are enabled), the host tells each player
his. Every ``claim`` and ``press`` carries the code and the session checks it; wrong codes are limited for the
whole box like wrong PINs (``web/guard.py``), and a phone that proved its code keeps pressing meanwhile.
"""

from __future__ import annotations

from flask import Blueprint, render_template

from appliance.service import audience as audience_records
from appliance.service.session import SEAT_CODE_DIGITS, CommandRejected
from web import events, payloads
from web.guard import Passes, PinGuard
from web.sync import SyncNamespace

blueprint = Blueprint("player", __name__)


class PlayerNamespace(SyncNamespace):
    """``/player``: ``claim`` ``{player, code}`` and ``press`` ``{player, code, id}`` while phones are enabled."""

    role = events.ROLE_PLAYER
    audience = audience_records.PLAYER

    def __init__(self, namespace: str) -> None:
        super().__init__(namespace)
        # A guess hits if it is any seat's code: the space is the codes' divided by the seats (up to 4).
        self.guard = PinGuard(space=10**SEAT_CODE_DIGITS // 4, locked_code="error.seat_code_locked")
        self.passes = Passes()

    def on_claim(self, data=None):
        """Check a seat's code before the first press (the page asks again at once if it is wrong)."""
        try:
            message = payloads.fields(data, player=payloads.SEAT, code=payloads.SEAT_CODE)
        except payloads.BadMessage as error:
            return self.hub.word(error)
        return self.guarded(message, lambda: self.hub.session.check_seat_code(message["player"], message["code"]))

    def on_press(self, data=None):
        try:
            message = payloads.fields(data, player=payloads.SEAT, code=payloads.SEAT_CODE, id=payloads.ID)
        except payloads.BadMessage as error:
            return self.hub.word(error)
        return self.guarded(message, lambda: self.hub.session.phone_press(message["player"], message["id"],
                                                                          message["code"]))

    def guarded(self, message: dict, action) -> dict:
        """Run ``action`` unless the box's budget of code guesses is spent; count its code's verdict
        (``error.seat_code``). A phone whose pass proved this seat's code before (a right claim or press, on this
        connection or before a reconnect) is not guessing: it presses even while guessers are locked out; the
        session still checks the code (phones switched on again make new codes)."""
        proof = ("seat", message["player"], message["code"])
        token = self.connection_pass()
        proven = self.passes.has(token, proof)
        if not proven and not self.guard.take():  # a guess is paid for before it is judged: no race past the budget
            return self.hub.word(CommandRejected(self.guard.locked_code))
        ack = self.call(action)
        if ack["ok"]:
            self.passes.prove(token, proof)
        if not proven and (ack["ok"] or ack["error"]["code"] != "error.seat_code"):
            self.guard.refund()  # not a wrong code (right, or phones off, no battle...): the guess costs nothing
        return ack


@blueprint.route("/play")
def page():
    return render_template("player.html", code_digits=SEAT_CODE_DIGITS)


def register(socketio, hub) -> None:
    hub.add_namespace(PlayerNamespace("/player"))
