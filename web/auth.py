"""One login per person (issue 21): a PIN proved once on a device opens every page of that person.

Two people log in to the box: the **host** (the host PIN) and the **director** (the director's own PIN, which a
room's host does not know). What each login opens:

| login    | opens                                              |
|----------|----------------------------------------------------|
| host     | the host page (``/host`` and its socket), the question packages (``/packages``) |
| director | the desk (``/director/``), the rooms (``/rooms``), the question packages        |

The protocol pages (``/battles/<id>/protocol``) are public like the board (``web/papers.py``).

The proof is kept in Flask's signed session cookie (one per device and browser, not per tab), as a digest keyed by
the app's secret (the cookie is readable, not encrypted: a bare hash of a short PIN would give it away), so a
PIN changed at the box logs everyone out. Every page asks :func:`logged_in` (or :func:`login_required`, the one
gate every blueprint uses); :func:`log_out` drops every login of the device at once, whichever page it is
tapped on. Wrong PINs are counted by each PIN's own box-wide guard (``web/guard.py``): the host PIN's is the
host page's (``Services.pin_guard``), so guesses here and on ``/host`` count together.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Callable

from flask import Blueprint, current_app, jsonify, redirect, request, session, url_for

from web.guard import PinGuard, pin_space

blueprint = Blueprint("auth", __name__)

HOST, DIRECTOR = "host", "director"
ROLES = (HOST, DIRECTOR)
SESSION_KEY = "svoyak.login"  # {role: digest} in the signed session
OPENS = {HOST: frozenset({"host", "packages"}), DIRECTOR: frozenset({"director", "rooms", "packages"})}


@blueprint.record_once
def _session_secret(state) -> None:
    """The signed session needs the app's secret key: a random one per process unless the app was given one
    (the box's is made at first boot and kept: logins survive a restart)."""
    app = state.app
    if not app.secret_key:
        app.secret_key = secrets.token_bytes(32)
    if app.config.get("SESSION_COOKIE_SAMESITE") is None:
        app.config["SESSION_COOKIE_SAMESITE"] = "Strict"


def pin_of(role: str) -> str:
    """The PIN of ``role`` as the box has it now; ``""`` when the box has none (then nothing opens: fail closed)."""
    hub = current_app.extensions.get("svoyak.hub")
    identity = getattr(getattr(hub, "services", None), "identity", None)
    settings = current_app.config["SVOYAK_SETTINGS"]
    if role == HOST:
        return getattr(identity, "host_pin", "") or settings.host_pin
    return getattr(identity, "director_pin", "") or settings.director_pin


def _digest(role: str, pin: str) -> str:
    key = current_app.secret_key
    key = key if isinstance(key, bytes) else str(key or "").encode()
    return hmac.new(key, b"svoyak login\0" + role.encode() + b"\0" + pin.encode(), hashlib.sha256).hexdigest()


def guard(role: str) -> PinGuard:
    """The box-wide guard of ``role``'s PIN: the host page's for the host PIN, the desk's own for the director's."""
    if role == HOST:
        return current_app.extensions["svoyak.hub"].services.pin_guard
    # dict.setdefault is atomic: two first logins at once still share one guard.
    return current_app.extensions.setdefault("svoyak.director_pin_guard", PinGuard(space=pin_space(pin_of(role))))


def logged_in(*roles: str) -> bool:
    """Whether this request's device proved the PIN of one of ``roles`` (and that PIN is still the box's)."""
    proofs = session.get(SESSION_KEY)
    if not isinstance(proofs, dict):
        return False
    for role in roles:
        pin = pin_of(role)
        if pin and hmac.compare_digest(str(proofs.get(role, "")), _digest(role, pin)):
            return True
    return False


@blueprint.app_context_processor
def _login_globals():
    """``logged_in_any()`` for the templates: whether this device is logged in as anyone (the «Выйти» button)."""
    return {"logged_in_any": lambda: logged_in(*ROLES)}


def opens(page: str) -> tuple[str, ...]:
    """The roles whose login opens ``page`` (``"host"``, ``"packages"``, ``"director"``, ``"rooms"``)."""
    return tuple(role for role in ROLES if page in OPENS[role])


def log_in(role: str, offered, address: str = "?") -> str | None:
    """Check ``offered`` against ``role``'s PIN through its guard; if right, this device is logged in as ``role``
    (other logins it has stay). Returns None, or the refusal key (``error.pin``, ``error.pin_locked``,
    ``error.director_pin_unset``)."""
    pin = pin_of(role)
    if not pin:
        return "error.director_pin_unset" if role == DIRECTOR else "error.pin"
    refusal = guard(role).check(address, offered, pin)
    if refusal is None:
        proofs = dict(session.get(SESSION_KEY) or {})
        proofs[role] = _digest(role, pin)
        session[SESSION_KEY] = proofs
    return refusal


def log_out() -> None:
    """Every login of this device ends: host, packages, desk and rooms together."""
    session.clear()


def login_required(page: str, login_endpoint: str, open_endpoints: tuple[str, ...] = ()) -> Callable:
    """A ``before_request`` gate for a blueprint: a request to any endpoint but ``open_endpoints`` needs a login
    that opens ``page``, else it is sent to ``login_endpoint`` (which comes back to the page asked for)."""
    roles = opens(page)

    def gate():
        if request.endpoint in open_endpoints or request.endpoint == login_endpoint:
            return None
        if logged_in(*roles):
            return None
        return redirect(url_for(login_endpoint, next=request.path))

    return gate


def safe_next(prefixes: tuple[str, ...], default: str) -> str:
    """The ``next`` page a login form came from, if it is one of ours (a path under ``prefixes``), else ``default``."""
    target = request.args.get("next", "")
    return target if target.startswith(prefixes) and not target.startswith("//") else default


@blueprint.post("/login/host")
def host_login():
    """The host page's PIN form: right, and this device is logged in as the host (the page's socket, the
    packages); the answer is ``{"ok": true}`` or ``{"ok": false, "error": {code, ru, en}}`` (403, 429)."""
    refusal = log_in(HOST, request.form.get("pin", ""), request.remote_addr or "?")
    if refusal is None:
        return jsonify({"ok": True})
    words = current_app.extensions["svoyak.catalogue"].both(refusal)
    return jsonify({"ok": False, "error": {"code": refusal, **words}}), 429 if refusal == "error.pin_locked" else 403


@blueprint.post("/logout")
def logout():
    """Log this device out of every page (a form's POST: a link cannot log anyone out behind their back)."""
    log_out()
    if request.accept_mimetypes.best == "application/json":
        return jsonify({"ok": True})
    return redirect(safe_next(("/",), "/"))
