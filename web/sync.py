"""State sync over Socket.IO: a full snapshot on (re)connect, then numbered updates; a gap asks for a resync.

:class:`Hub` receives the session's numbered updates (in the thread that made them: threading mode lets a
native thread emit) and broadcasts them to every role namespace. :class:`SyncNamespace` is the base of each
role's namespace: it checks the role on connect, sends ``hello`` and ``snapshot``, and answers ``resync``.
Rejections are worded here, Russian then English (style.md: the web layer words errors).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from flask import request
from flask_socketio import ConnectionRefusedError, Namespace, emit

from appliance.config import Settings
from appliance.errors import CommandRejected, PackageError, RulesError, StoreError, SvoyakError
from appliance.service import audience as audience_records
from appliance.service.audience import Audience
from web import events, payloads, wire
from web.guard import Passes, PinGuard, pin_space

log = logging.getLogger(__name__)


@dataclasses.dataclass
class Services:
    """What the web layer is given: the live session, the box's identity (PIN, hotspot), the tournament desk and
    the one guard of the host PIN (shared by ``/host`` and the director's login), and the question packages
    (:class:`appliance.service.packages.QuestionPackages`; None: the package pages say so).

    ``desk``, ``pin_guard`` and ``rooms`` left ``None`` (tests that bring only a session) are built by
    :func:`build_services`, so every app has exactly one of each.
    """

    session: Any
    identity: Any
    desk: Any = None
    pin_guard: PinGuard | None = None
    packages: Any = None
    rooms: Any = None  # appliance.service.rooms.runner.Rooms, started; None on an app without battles


def build_services(settings: Settings, given: Services | None = None) -> Services:
    """The serving process's whole object graph, built here and nowhere else (the composition root), each link
    passed to the constructor that needs it: the box's one store (battles and tournaments), the tournament desk
    listening to the battles, the question packages (their themes played per tournament through the desk's
    links), the adapter, the capture link and the live session (started), the identity and the host PIN's
    guard, and the rooms service (started when the session plays battles: a station republishes at once).

    ``given``: what a test brings (a session, an identity...); what it lacks is built around it the same way.
    Called once, by :func:`web.create_app`, in the process that serves (the gunicorn worker: threads are never
    started before a fork).
    """
    from appliance.service.wiring import build_battles, build_desk, build_packages, build_rooms

    if given is None:
        from appliance.service.battle_adapter import BattleAdapter
        from appliance.service.capture_link import CaptureLink
        from appliance.service.identity import load_or_create
        from appliance.service.session import Session
        from appliance.service.timeline import current_boot_id

        identity = load_or_create(settings)
        battles = build_battles(settings)
        desk = build_desk(settings, battles)
        packages = build_packages(settings, battles, tournament_of=desk.box_battles)
        adapter = BattleAdapter(packages=packages, board_answer=settings.board_answer)
        # The link calls the session back once started (below, after the session is built); until it connects,
        # the pages show "buttons not connected" and the host may play "on claps" or with phones.
        link = CaptureLink(settings.capture_socket, on_event=lambda event: session.on_capture_event(event),
                           heartbeat_ms=settings.capture_heartbeat_ms, timeout_ms=settings.capture_link_timeout_ms,
                           on_connection=lambda up: session.on_capture_connection(up), client_name="appliance")
        # the boot tells a restart of this process (the same offset) from a power cut (the timeline goes on)
        session = Session(battles, adapter, capture=link, simulator=settings.simulator, boot_id=current_boot_id(),
                          theme_names_for=desk.box_battle_theme_names)
        session.start()
        link.start()
        services = Services(session=session, identity=identity, desk=desk,
                            pin_guard=PinGuard(space=pin_space(identity.host_pin)), packages=packages)
    else:
        services = given
        if services.desk is None:
            services.desk = build_desk(settings, getattr(services.session, "battles", None))
            if hasattr(services.session, "command"):  # a real session: its battles' themes named at the desk
                services.session.theme_names_for = services.desk.box_battle_theme_names
        if services.pin_guard is None:
            services.pin_guard = PinGuard(space=pin_space(getattr(services.identity, "host_pin", "")
                                                          or settings.host_pin))
        if services.packages is not None and getattr(services.desk, "box_battles", None) is not None:
            services.packages.tournament_of = services.desk.box_battles  # played per tournament (desk's links)
    if services.rooms is None and hasattr(services.session, "battles"):
        services.rooms = build_rooms(settings, services.session, lambda: services.desk)
    return services


def is_local(address: str | None) -> bool:
    """A request from the box itself (its HDMI kiosk): ``127.0.0.0/8`` or ``::1``.

    >>> is_local("127.0.0.1"), is_local("::1"), is_local("10.42.0.17"), is_local(None)
    (True, True, False, False)
    """
    return bool(address) and (address.startswith("127.") or address == "::1")


class Hub:
    """Joins the session to the Socket.IO server: broadcasting, snapshots, wording of rejections."""

    def __init__(self, socketio, services: Services, settings: Settings, catalogue) -> None:
        self.socketio = socketio
        self.services = services
        self.settings = settings
        self.catalogue = catalogue
        self.namespaces: dict[str, "SyncNamespace"] = {}
        self.spectators = None  # web.spectators.Fanout: the board's updates to the spectators' nats-server

    @property
    def session(self):
        return self.services.session

    def add_namespace(self, namespace: "SyncNamespace") -> None:
        namespace.hub = self
        self.namespaces[namespace.namespace] = namespace
        # Kept in broadcast order: the audiences first (see broadcast).
        self.namespaces = dict(sorted(self.namespaces.items(), key=lambda item: item[1].audience is None))
        self.socketio.on_namespace(namespace)

    def start(self) -> None:
        self.session.subscribe(self.broadcast)

    def broadcast(self, update: dict) -> None:
        """One update to every role: the host's whole, each audience's own record of it
        (``appliance.service.audience``: built by allow-list, never the host's update filtered).

        The audiences go first: the scoreboards' update is the small one, and the hall watches them (the
        host's, three times larger with the verdicts, follows a millisecond or two later). Each audience's
        payload is made once per update, by :meth:`payload`, and shared by all its connections."""
        made: dict = {}
        for name, namespace in self.namespaces.items():
            audience = namespace.audience
            if audience is None:
                payload = update
            else:
                payload = made.get(audience.name)
                if payload is None:
                    try:
                        payload = made[audience.name] = self.payload(audience, update)
                    except audience_records.NotOnTheAllowList:  # a record and the view disagree: nothing is sent
                        log.exception("update %s not sent to %s", update.get("seq"), name)  # (they resync)
                        continue
            self.socketio.emit(events.UPDATE, payload, namespace=name)
            if name == "/board" and self.spectators is not None:
                self.spectators.forward(payload)  # exactly the board's payload, to /watch phones and online viewers

    @staticmethod
    def payload(audience, update: dict) -> dict:
        """The update as ``audience`` may hear it: the one function that makes the board's (``audience.BOARD``)."""
        return audience.update(update)

    def word(self, error: Exception) -> dict:
        """``{ok: False, error: {code, rule, ru, en}}`` for an error a client caused."""
        if isinstance(error, CommandRejected):
            body = {"code": error.code, "rule": None, **self.catalogue.both(error.code)}
            if error.detail:
                body["detail"] = error.detail
            if getattr(error, "params", None):
                body["params"] = error.params  # which argument, and what it must be
        elif isinstance(error, PackageError):  # a setup's choice a package cannot give, or no such package
            from web.package_refusals import word_package_error

            body = {"code": error.code, "rule": None, **word_package_error(error)}
        elif isinstance(error, RulesError):
            state = self.session.state
            body = {"code": "rule", **self.session.adapter.word_rule_error(error, getattr(state, "players", ()))}
        elif isinstance(error, StoreError):
            body = {"code": "error.internal", "rule": None, **self.catalogue.both("error.internal"),
                    "detail": str(error)}
        else:
            body = {"code": "error.internal", "rule": None, **self.catalogue.both("error.internal")}
        return {"ok": False, "error": body}


class SyncNamespace(Namespace):
    """Base of every role's namespace. Subclasses set ``role`` and may override :meth:`admit`."""

    role = events.ROLE_WATCH
    # What this role may know (appliance.service.audience): its record of every snapshot and update, and of
    # its hello. None: the host's whole view (only /host, behind the PIN).
    audience: Audience | None = audience_records.BOARD
    hello_record: Any = audience_records.Hello
    hub: Hub

    def __init__(self, namespace: str) -> None:
        super().__init__(namespace)
        self._passes: dict[str, str] = {}  # sid -> the connection's pass (web/guard.py)

    def snapshot(self) -> dict:
        snapshot = self.hub.session.snapshot()
        return snapshot if self.audience is None else self.audience.snapshot(snapshot)

    def admit(self, auth: dict) -> dict:
        """Check ``auth`` for this role; return extra ``hello`` fields or raise ConnectionRefusedError."""
        return {}

    def connection_pass(self) -> str:
        """This connection's pass (``hello.pass``): the page's own from before if it sent one, else a new one."""
        return self._passes[request.sid]

    def on_connect(self, auth=None):
        auth = auth if isinstance(auth, dict) else {}
        offered = auth.get("pass")
        token = offered if isinstance(offered, str) and 16 <= len(offered) <= 64 else Passes.new()
        self._passes[request.sid] = token
        try:
            extra = self.admit(auth)
        except ConnectionRefusedError:
            raise
        except Exception:  # a process edge: whatever the auth was, the client hears why, the worker lives
            log.exception("connection to %s refused after an error", self.namespace)
            raise refuse("error.internal", self.hub.catalogue) from None
        identity = self.hub.services.identity
        hello = {
            "protocol": events.PROTOCOL_VERSION,
            "role": self.role,
            "pass": token,
            "box": identity.box_name,
            "server_now_ns": self.hub.session.clock(),
            **extra,
        }
        emit(events.HELLO, hello if self.hello_record is None else audience_records.project(self.hello_record, hello))
        emit(events.SNAPSHOT, self.snapshot())

    def on_disconnect(self, reason=None):
        self._passes.pop(request.sid, None)

    def trigger_event(self, event, *args):
        """Every event a client sends gets an ack: its handler's, or a worded refusal when there is no such event,
        the message has extra arguments, or the handler failed (logged; nothing half-done is acknowledged)."""
        sid = args[0] if args else None
        if event == "connect" and sid in self._passes or (
                event == "disconnect" and self.socketio.server.manager.is_connected(sid, self.namespace)):
            # sent by the client as an event, not the server's own (re)connect or disconnect: no second admit
            return self.refusal("error.unknown_event", f"{event} is not an event a client sends")
        if event in ("connect", "disconnect"):
            return super().trigger_event(event, *args)
        handler = getattr(self, f"on_{event}", None) if isinstance(event, str) and event.isidentifier() else None
        return self.socketio._handle_event(self._answering(event, handler), event, self.namespace, *args)

    def _answering(self, event, handler):
        def answer(*data):
            if event == wire.MALFORMED:
                return self.refusal(payloads.REFUSAL, "the message is not a JSON array [event, data] within limits")
            if handler is None:
                return self.refusal("error.unknown_event", f"{self.namespace} has no event {str(event)[:64]!r}")
            if len(data) > 1:
                return self.refusal(payloads.REFUSAL, f"{event} takes one argument, not {len(data)}")
            try:
                return handler(data[0] if data else None)
            except Exception:  # a process edge: log it, answer, keep serving
                log.exception("handler %s%s failed", self.namespace, event)
                return self.hub.word(RuntimeError(event))
        return answer

    def refusal(self, code: str, detail: str = "") -> dict:
        """``{ok: False, error}`` worded from the catalogue's ``code``."""
        return self.hub.word(CommandRejected(code, detail))

    def on_resync(self, data=None):
        emit(events.SNAPSHOT, self.snapshot())
        return {"ok": True}

    def on_clock(self, data=None):
        """The server's monotonic clock: clients time a round trip and set their countdown offset from it."""
        return {"ok": True, "server_now_ns": self.hub.session.clock()}

    def call(self, action, *args) -> dict:
        """Run a session call; turn refusals into a worded ``{ok: False, error}`` ack, never a crash."""
        try:
            result = action(*args)
        except SvoyakError as error:
            return self.hub.word(error)
        except (TypeError, ValueError, KeyError, ArithmeticError) as error:
            log.info("bad request from %s: %s", request.sid, error)
            body = {"code": "error.bad_command", "rule": None, **self.hub.catalogue.both("error.bad_command"),
                    "detail": str(error)}
            return {"ok": False, "error": body}
        return {"ok": True, **(result or {})}


def refuse(code: str, catalogue) -> ConnectionRefusedError:
    """A refused connection whose ``data`` carries the worded reason (the client shows it)."""
    return ConnectionRefusedError(code, {"code": code, **catalogue.both(code)})
