"""The host page (tablet 1280x800 or phone, touch first): set up a battle, then run it.

The page shows what the session derives from the engine: every command button is enabled only when the
engine would accept that command now (``view.allowed``), and a refused command comes back worded with its
rule, Russian then English. Host connections need the box's PIN, proved once per device (``web/auth.py``: the
page's form posts it to ``/login/host``, and the socket, the packages and the page after a reload need it no
more); wrong PINs are limited for the whole box (``web/guard.py``), and a host already in reconnects with the
pass of his ``hello``, whatever the limit says.
"""

from __future__ import annotations

from flask import Blueprint, current_app, render_template

from appliance.service.session import CommandRejected
from web import auth as login
from web import events, payloads
from web.guard import Passes, PinGuard
from web.sync import SyncNamespace, refuse

__all__ = ["PinGuard", "HostNamespace", "blueprint", "register"]  # PinGuard: the director's login shares it

blueprint = Blueprint("host", __name__)


class HostNamespace(SyncNamespace):
    """``/host``: the host's commands. Connect with ``auth={"pin": "1234"}``."""

    role = events.ROLE_HOST
    audience = None      # the host's whole view, behind the PIN
    hello_record = None

    def __init__(self, namespace: str) -> None:
        super().__init__(namespace)
        self.passes = Passes()

    @property
    def guard(self) -> PinGuard:
        """The box's one guard of the host PIN, a box-wide budget (``Services.pin_guard``, the composition root)."""
        return self.hub.services.pin_guard

    def admit(self, auth: dict) -> dict:
        token = self.connection_pass()
        # the PIN proved on this device before (web/auth.py: the host page's form, the packages' login) opens
        # the socket too; else this connection's pass, else the PIN it sends
        if not self.passes.has(token, "host") and login.logged_in(*login.opens("host")):
            self.passes.prove(token, "host")
        if not self.passes.has(token, "host"):
            refusal = self.guard.check("", auth.get("pin", ""), self.hub.services.identity.host_pin)
            if refusal:
                raise refuse(refusal, self.hub.catalogue)
            self.passes.prove(token, "host")
        return {"profiles": self.hub.session.adapter.profiles()}

    def on_packages(self, data=None):
        """The box's question packages for the setup form: titles and theme names with what was played (no
        question texts: the reading view gives those one at a time). The message is ``{}`` (an object)."""
        try:
            payloads.fields({} if data is None else data)
        except payloads.BadMessage as error:
            return self.hub.word(error)
        packages = self.hub.services.packages
        if packages is None:
            return self.hub.word(CommandRejected("error.no_packages", command="setup"))
        return self.call(lambda: {"packages": packages.choices()})

    def on_command(self, data=None):
        try:
            message = payloads.fields(data, id=payloads.ID, name=payloads.NAME, args=payloads.optional(payloads.PLAIN, {}))
        except payloads.BadMessage as error:
            if error.params.get("argument") in ("id", "name"):
                error.params = {}  # ``argument`` names a command's argument (docs/socketio-events.md), not these
            return self.hub.word(error)
        return self.call(self.hub.session.command, message["name"], message["args"], message["id"])


@blueprint.route("/host")
def page():
    settings = current_app.config["SVOYAK_SETTINGS"]
    rooms = current_app.extensions.get("svoyak.rooms")
    return render_template("host.html", hold_s=round(settings.reset_hold_ms / 1000),
                           shown_s=round(settings.pin_shown_ms / 1000),
                           known=login.logged_in(*login.opens("host")),
                           # a room's box: the battle's end leads back to the battles the desk gave the room
                           station=getattr(rooms, "role", "") == "station")


def register(socketio, hub) -> None:
    hub.add_namespace(HostNamespace("/host"))
