"""The web layer: one Flask-SocketIO application serving the host page, the scoreboard, phones and directors.

:func:`create_app` is the composition root of the serving process. Each screen is a module listed in
:data:`SCREENS` that may define:

- ``blueprint``: a Flask blueprint with its pages (templates extend ``base.html``);
- ``register(socketio, hub)``: its Socket.IO namespace class(es), given the shared :class:`web.sync.Hub`.

Add a screen (the tournament director's ``web/director.py``) by adding its module name to :data:`SCREENS`.
No rules live here: pages show what ``appliance.service`` derives from the engine and send commands back.
"""

from __future__ import annotations

import importlib

from flask import Flask, g, request

from appliance.config import Settings
import appliance.words as words
from web import edge, events, names, wire
from web.strings import default_catalogue
from web.sync import Hub, Services

# One module per screen or role, in the order their blueprints register. The captive portal goes first:
# its before_request redirect must see every request.
SCREENS: tuple[str, ...] = (
    "web.captive",
    "web.index",
    "web.auth",
    "web.host",
    "web.board",
    "web.overlay",
    "web.player",
    "web.simulator",
    "web.director",
    "web.packages",
    "web.papers",
    "web.rooms",
    "web.spectators",
)

LANGUAGE_COOKIE = "svoyak_lang"


def create_app(settings: Settings, services: Services | None = None):
    """Build the Flask app and its SocketIO server (threading mode) for ``settings``.

    ``services`` (session, identity, tournament desk, PIN guard) default to the box's own, built from ``settings``
    (:func:`web.sync.build_services`); tests pass their own. Returns the Flask app; the SocketIO server is
    ``app.extensions["socketio"]`` and the hub ``app.extensions["svoyak.hub"]``.
    """
    from flask_socketio import SocketIO

    if services is None:
        from web.sync import build_services
        services = build_services(settings)
    else:
        from web.sync import complete
        complete(services, settings)

    app = Flask(__name__)
    identity = getattr(services, "identity", None)
    if getattr(identity, "session_secret", ""):
        # Made at first boot and kept (appliance/service/identity.py): logins survive a restart.
        app.secret_key = bytes.fromhex(identity.session_secret)
    app.config.update(
        SVOYAK_SETTINGS=settings,
        JSON_AS_ASCII=False,
        SEND_FILE_MAX_AGE_DEFAULT=3600,
        TEMPLATES_AUTO_RELOAD=False,
    )
    # threading mode (GUIDE: eventlet lost emits from native threads); simple-websocket gives WebSocket
    # under gunicorn's gthread worker and under Werkzeug's threaded server in tests.
    socketio = SocketIO(app, async_mode="threading", ping_interval=5, ping_timeout=5, json=_json_module(),
                        serializer=wire.JsonPacket)
    wire.install(socketio.server.eio)  # frames written by the emitting thread when a connection is idle
    modules = [importlib.import_module(name) for name in SCREENS]
    catalogue = default_catalogue(edge, *modules)
    edge.install(app, catalogue)  # first: the caps and the Origin check run before any screen's hooks
    hub = Hub(socketio, services, settings, catalogue)
    app.extensions["svoyak.hub"] = hub
    app.extensions["svoyak.catalogue"] = catalogue
    app.extensions["svoyak.tournaments"] = services.desk

    @app.before_request
    def pick_language():
        chosen = request.args.get("lang") or request.cookies.get(LANGUAGE_COOKIE) or settings.language
        g.language = chosen if chosen in words.LANGUAGES else settings.language

    @app.after_request
    def remember_language(response):
        if request.args.get("lang") in words.LANGUAGES:
            response.set_cookie(LANGUAGE_COOKIE, request.args["lang"], max_age=365 * 86400, samesite="Lax")
        return response

    @app.context_processor
    def page_globals():
        language = getattr(g, "language", settings.language)
        return {
            "t": lambda key: catalogue.text(key, language),
            # a line with counts: tn("key", count=6), its {count} worded by the plural message key.count
            "tn": lambda key, **values: catalogue.word(key, language, **values),
            "language": language,
            "other_language": "en" if language == "ru" else "ru",
            "client_config": {
                "language": language,
                "strings": catalogue.for_language(language),
                "events": events.CLIENT_NAMES,
                "names": names.CLIENT_NAMES,
                "protocol": events.PROTOCOL_VERSION,
                "simulator": settings.simulator,
            },
            "simulator": settings.simulator,
            **names.TEMPLATE_NAMES,
        }

    for module in modules:
        if hasattr(module, "blueprint"):
            app.register_blueprint(module.blueprint)
        if hasattr(module, "register"):
            module.register(socketio, hub)
    hub.start()
    return app


def _json_module():
    """Socket.IO payloads as UTF-8 JSON (Cyrillic names stay readable on the wire)."""
    import json

    class Utf8Json:
        @staticmethod
        def dumps(*args, **kwargs):
            kwargs.setdefault("ensure_ascii", False)
            kwargs.setdefault("separators", (",", ":"))
            return json.dumps(*args, **kwargs)

        loads = staticmethod(json.loads)

    return Utf8Json
