"""The live session: host commands, capture presses and deadlines in; durable events; numbered views out.

One :class:`Session` per serving process wires the battle service (``Battles``: validate, append durably,
cache), the capture link (``CaptureLink``: presses in, arm/disarm out) and the web (subscribers that receive
numbered updates). Everything that changes the battle passes through :meth:`Session._submit` under one lock:

1. the event is stamped (host commands with ``time.monotonic_ns()`` at receipt, presses keep their kernel
   edge timestamp, expiries carry the deadline the engine set; design.md principle 3);
2. ``Battles.submit`` validates and appends it durably, or raises and nothing changes;
3. the capture is told who is eligible and armed, derived from the new state;
4. the deadlines of the new state (press window, answer countdown) are scheduled;
5. the new view is diffed against the last one and handed to the subscribers as update ``seq + 1``, at
   once and in order, still under the lock. A subscriber must not wait: the web's emits write to an idle
   connection without blocking or queue for its writer thread (``web/wire.py``). A publisher thread used to
   hand updates over; waking it cost a press 0.3-0.5 ms on the way to the scoreboards (bench/bench_web.py).

Command ids make a resend or a double tap harmless: a known id returns its first result and applies nothing.
Engine-specific shapes live in the adapter (``appliance/service/battle_adapter.py``); this module is generic.
"""

from __future__ import annotations

import collections
import copy
import hmac
import logging
import secrets
import threading
import time
from typing import Any, Callable

from appliance.errors import CaptureError, RulesError, StoreError, WebError
from appliance.service.timers import Deadlines

log = logging.getLogger(__name__)

REMEMBERED_COMMANDS = 2048  # command ids kept for duplicate detection (a battle has a few hundred commands)
SEAT_CODE_DIGITS = 6        # a seat's code, told by the host to its player (web/guard.py limits guesses)


class CommandRejected(WebError, ValueError):
    """A command the session refuses before it reaches the engine: ``code`` names the string that words it.

    Rule rejections from the engine keep their own class (``BattleRuleError``); this one covers the session's
    own reasons: no battle, phones off, unknown command, missing argument.
    """

    def __init__(self, code: str, detail: str = "", command: str | None = None) -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail
        self.command = command


def diff(old: dict, new: dict) -> tuple[dict, list]:
    """``(changes, removed)``: the top-level keys of ``new`` whose values differ from ``old``, and the keys
    of ``old`` that ``new`` lacks.

    >>> diff({"a": 1, "b": [1]}, {"a": 1, "b": [1, 2], "c": None})
    ({'b': [1, 2], 'c': None}, [])
    >>> diff({"a": 1}, {})
    ({}, ['a'])
    """
    missing = object()
    changes = {key: value for key, value in new.items() if old.get(key, missing) != value}
    return changes, sorted(key for key in old if key not in new)


def make_seat_codes(seats: int, avoid=(), draw: Callable[[int], int] = secrets.randbelow) -> tuple[str, ...]:
    """``seats`` distinct random codes of :data:`SEAT_CODE_DIGITS` digits, none of them in ``avoid`` (the
    codes they replace: a phone holding an old code never finds it valid again).

    >>> draws = iter([1, 7, 7, 42])
    >>> make_seat_codes(2, avoid={"000001"}, draw=lambda below: next(draws))
    ('000007', '000042')
    >>> len(set(make_seat_codes(4))), all(len(code) == 6 and code.isdigit() for code in make_seat_codes(4))
    (4, True)
    """
    codes: list[str] = []
    while len(codes) < seats:
        code = f"{draw(10 ** SEAT_CODE_DIGITS):0{SEAT_CODE_DIGITS}d}"
        if code not in codes and code not in avoid:
            codes.append(code)
    return tuple(codes)


class Session:
    """The one live battle of this box and everything that follows from it.

    ``battles``: the battle service. ``adapter``: engine-specific translation (events, view, capture plan,
    deadlines). ``capture``: a started ``CaptureLink`` or ``None`` (no buttons: host-only or "on claps").
    ``clock``: monotonic nanoseconds. ``deadlines``: a :class:`Deadlines` (started by :meth:`start`).
    """

    def __init__(self, battles, adapter, capture=None, clock: Callable[[], int] = time.monotonic_ns,
                 deadlines: Deadlines | None = None, simulator: bool = False) -> None:
        self.battles = battles
        self.adapter = adapter
        self.capture = capture
        self.clock = clock
        self.deadlines = deadlines or Deadlines(clock)
        self.simulator = simulator
        self._lock = threading.RLock()
        self._seq = 0
        self._view: dict[str, Any] = {}
        self._battle_id: str | None = None
        self._state = None
        self._phones_enabled = False
        self._seat_codes: tuple[str, ...] = ()  # one per seat while phones are enabled (access, not battle events)
        self._button_test_on = False
        self._fired: set[tuple[str, int]] = set()  # deadlines already handled: never scheduled again
        self._capture_connected = False
        self._capture_status: dict = {}
        self._capture_plan = None
        self._results: collections.OrderedDict[str, dict] = collections.OrderedDict()
        self._subscribers: list[Callable[[dict], None]] = []
        self._view = self._build_view()

    # ------------------------------------------------------------------ lifecycle
    def start(self, timer_thread: bool = True) -> "Session":
        """Resume the newest unfinished battle and start the deadlines' timer (tests with a hand clock pass
        ``timer_thread=False`` and run the deadlines themselves: ``deadlines.run_due()``)."""
        with self._lock:
            self._capture_connected = bool(self.capture is not None and self.capture.connected)
            resumable = self.adapter.resumable(self.battles)
            if resumable is not None:
                self._battle_id = resumable
                self._state = self.battles.state(resumable)
                self._after_change(event=None)
        if timer_thread:
            self.deadlines.start()
        return self

    def close(self) -> None:
        self.deadlines.close()

    def is_healthy(self) -> bool:
        """For the systemd watchdog: the lock can be taken (nothing is stuck holding it)."""
        acquired = self._lock.acquire(timeout=5)
        if acquired:
            self._lock.release()
        return acquired

    def subscribe(self, callback: Callable[[dict], None]) -> None:
        """``callback(update)`` for every numbered update, in order, under the session's lock: it must not wait.

        The update is read-only: its ``changes`` are the session's own view values (views are built fresh
        for every change and never mutated after, so no copy is made on the press path), shared with the
        other subscribers. A subscriber that needs to edit one copies it first (``web.sync.Hub.broadcast``
        builds a new, filtered ``changes`` dict).
        """
        self._subscribers.append(callback)

    # ------------------------------------------------------------------ reads
    def snapshot(self) -> dict:
        """``{seq, server_now_ns, view}``: the full view and the number of the last update it includes.

        The view is the caller's own copy. It is copied outside the lock: ``self._view`` is replaced, never
        mutated, so the reference taken under the lock stays the view of ``seq``.
        """
        with self._lock:
            seq, now_ns, view = self._seq, self.clock(), self._view
        return {"seq": seq, "server_now_ns": now_ns, "view": copy.deepcopy(view)}

    @property
    def seq(self) -> int:
        return self._seq

    @property
    def battle_id(self) -> str | None:
        return self._battle_id

    @property
    def state(self):
        return self._state

    # ------------------------------------------------------------------ writes
    def command(self, name: str, args: dict | None, command_id: str) -> dict:
        """Apply one host command once. Returns ``{seq, duplicate}``.

        Raises :class:`CommandRejected` (session reasons) or the engine's ``RulesError`` (rule reasons);
        either way nothing changed. A ``command_id`` seen before returns its first result, ``duplicate=True``.
        """
        if not isinstance(command_id, str) or not 1 <= len(command_id) <= 100:
            raise CommandRejected("error.bad_command", "command id must be a string of 1-100 characters", name)
        if not isinstance(name, str):
            raise CommandRejected("error.bad_command", "a command has a name", None)
        args = dict(args) if isinstance(args, dict) else {}
        with self._lock:
            # Stamped at receipt, inside the lock: host commands reach the engine in the order of their stamps.
            at_ns = self.clock()
            known = self._results.get(command_id)
            if known is not None:
                return {**known, "duplicate": True}
            try:
                if name == "setup":
                    self._setup(args, at_ns)
                elif name == "phones":
                    self._phones(bool(args.get("enabled")))
                elif name == "button_test":
                    self._button_test(args)
                else:
                    if self._battle_id is None:
                        raise CommandRejected("error.no_battle", command=name)
                    events = self.adapter.command_events(name, self._state, args, at_ns)
                    self.adapter.check(self._state, events)  # validate every event first: all or nothing
                    for number, event in enumerate(events):
                        self._submit(event, f"{command_id}#{number}" if len(events) > 1 else command_id)
            except (ValueError, TypeError, KeyError) as error:
                if isinstance(error, (RulesError, CommandRejected)):
                    raise
                raise CommandRejected("error.bad_command", str(error), name) from None
            result = {"seq": self._seq, "duplicate": False}
            self._results[command_id] = result
            while len(self._results) > REMEMBERED_COMMANDS:
                self._results.popitem(last=False)
            return result

    def check_seat_code(self, player: int, code: str, command: str = "claim") -> None:
        """Raise :class:`CommandRejected` unless phones are on, a battle is set up and ``code`` is the current
        code of seat ``player`` (``error.seat_code``: wrong, stale or no such seat). Changes nothing."""
        with self._lock:
            if not self._phones_enabled:
                raise CommandRejected("error.phones_off", command=command)
            if self._battle_id is None:
                raise CommandRejected("error.no_battle", command=command)
            expected = self._seat_codes[player] if 0 <= player < len(self._seat_codes) else ""
            # compare_digest: the time taken does not tell how many digits were right
            if not expected or not hmac.compare_digest(str(code).encode(), expected.encode()):
                raise CommandRejected("error.seat_code", command=command)

    def phone_press(self, player: int, press_id: str, code: str) -> dict:
        """A press from a player's phone (lower precision: stamped at receipt, source "phone"), with the code
        the host gave that seat; a wrong or stale code is refused (``error.seat_code``) and changes nothing."""
        if not isinstance(press_id, str) or not 1 <= len(press_id) <= 100:
            raise CommandRejected("error.bad_command", "a press has an id of 1-100 characters", "press")
        with self._lock:
            at_ns = self.clock()
            self.check_seat_code(player, code, "press")
            key = f"phone:{press_id}"
            if key in self._results:
                return {**self._results[key], "duplicate": True}
            press = {"player": player, "t_ns": at_ns, "source": "phone", "precision": "phone"}
            self._submit(self.adapter.press_event(self._state, press), key)
            counted = self._last_press_outcome(player, at_ns) in ("answerer", "queued")
            result = {"seq": self._seq, "duplicate": False, "counted": counted}
            self._results[key] = result
            return result

    def simulate(self, player: int, action: str) -> None:
        """Press or release a simulated button through the capture service (the real path)."""
        if not self.simulator:
            raise CommandRejected("error.simulator_off", command="simulate")
        if not 0 <= player < 4:  # a box has 2 to 4 buttons (config); the capture refuses any it lacks
            raise CommandRejected("error.bad_command", f"there is no button {player!r}", "simulate")
        if self.capture is None or not self.capture.connected:
            raise CommandRejected("error.capture_down", command="simulate")
        if action not in ("press", "release"):
            raise CommandRejected("error.bad_command", f"unknown simulator action {action!r}", "simulate")
        # The capture numbers players from 1; its reply says whether the mock pin moved.
        send = self.capture.simulate_press if action == "press" else self.capture.simulate_release
        try:
            send(player + 1).result(timeout=2)
        except (CaptureError, TimeoutError) as error:
            raise CommandRejected("error.capture_down", str(error), "simulate") from None

    # ------------------------------------------------------------------ capture link callbacks
    # Capture press statuses that are presses of a player in play; "repeat" (second press of a round), "stuck"
    # (held when armed) and "test" (button test) are not signals (docs/capture-protocol.md).
    FORWARDED_PRESSES = frozenset({"won", "counted", "ineligible", "disarmed"})

    def on_capture_event(self, message: dict) -> None:
        """``CaptureLink``'s ``on_event``: presses go to the engine; status changes go to the view.

        The capture numbers players from 1, the engine from 0: converted here, the one place they meet.
        """
        kind = message.get("event")
        try:
            with self._lock:
                if kind == "press":
                    if self._battle_id is None or message.get("status") not in self.FORWARDED_PRESSES:
                        return
                    press = {"player": int(message["player"]) - 1, "t_ns": int(message["t_ns"]), "source": "button"}
                    self._submit(self.adapter.press_event(self._state, press), command_id=None)
                elif kind in ("status", "fault", "reset_button"):
                    if kind == "status":
                        self._capture_status = {key: message.get(key) for key in (
                            "mode", "factory", "precision", "degraded", "simulator", "stuck")}
                    if kind == "reset_button":
                        self._capture_plan = None  # the box went local: re-arm with our own eligible set
                    self._after_change(event={"type": f"Capture_{kind}",
                                              **{k: v for k, v in message.items() if k not in ("type", "event")}})
        except (RulesError, StoreError, CommandRejected, KeyError, ValueError) as error:
            # A press the rules refuse changes nothing; it is logged and the box keeps serving.
            log.info("capture event %s refused: %s", message, error)

    def on_capture_connection(self, connected: bool) -> None:
        """``CaptureLink``'s ``on_connection``: show the link on every page; re-send the plan on reconnect."""
        with self._lock:
            self._capture_connected = connected
            self._capture_plan = None  # a fresh capture process knows nothing: re-send arm/disarm
            self._after_change(event={"type": "CaptureConnected" if connected else "CaptureDisconnected"})

    # ------------------------------------------------------------------ internals
    def _last_press_outcome(self, player: int, at_ns: int) -> str | None:
        for press in reversed(self._view.get("presses") or []):
            if press["player"] == player and press["t_ns"] == at_ns:
                return press["outcome"]
        return None

    def _setup(self, args: dict, at_ns: int) -> None:
        event = self.adapter.setup_event(args, at_ns)
        battle_id = self.battles.create(event)
        self._battle_id = battle_id
        self._state = self.battles.state(battle_id)
        if self._phones_enabled:
            self._new_seat_codes()  # new seats, maybe new people in them: last battle's phones do not carry over
        self._after_change(event=self.adapter.event_dict(event))

    def _phones(self, enabled: bool) -> None:
        """Phones as fallback buzzers. Each time they are switched on every seat gets a fresh code (a phone
        from before must be told the new one); off, the codes are gone. Not battle events: nothing is logged."""
        if enabled and not self._phones_enabled:
            self._phones_enabled = True
            self._new_seat_codes()
        elif not enabled:
            self._phones_enabled = False
            self._seat_codes = ()
        self._after_change(event={"type": "PhonesEnabled" if self._phones_enabled else "PhonesDisabled"})

    def _new_seat_codes(self) -> None:
        seats = len(getattr(self._state, "players", ())) if self._state is not None else 0
        self._seat_codes = make_seat_codes(seats, avoid=set(self._seat_codes))

    def _button_test(self, args: dict) -> None:
        """The capture's button test: each press lights its own LED while held. Off: the plan is re-sent."""
        if self.capture is None or not self.capture.connected:
            raise CommandRejected("error.capture_down", command="button_test")
        on = bool(args.get("on", not self._button_test_on))
        try:
            self.capture.button_test(on).result(timeout=2)
        except (CaptureError, TimeoutError) as error:
            raise CommandRejected("error.capture_down", str(error), "button_test") from None
        self._button_test_on = on
        self._capture_plan = None  # the test left the capture disarmed: arm again from the battle's state
        self._after_change(event={"type": "ButtonTest", "on": on})

    def _submit(self, event, command_id: str | None) -> None:
        self._state = self.battles.submit(self._battle_id, event, command_id=command_id)
        self._after_change(event=self.adapter.event_dict(event))

    def _on_deadline(self, key: str, at_ns: int) -> None:
        with self._lock:
            if self._battle_id is None:
                return
            current = self.adapter.deadlines(self._state)
            if current.get(key) != at_ns:
                return  # the state moved on (answer judged, window reopened): this deadline is stale
            self._fired.add((key, at_ns))
            event = self.adapter.expiry_event(self._state, key, at_ns)
            try:
                if event is None:
                    self._after_change(event={"type": "DeadlinePassed", "deadline": key, "at_ns": at_ns})
                else:
                    self._submit(event, command_id=f"deadline:{self._battle_id}:{key}:{at_ns}")
            except RulesError as error:
                log.warning("deadline %s at %d refused by the rules: %s", key, at_ns, error)

    def _after_change(self, event: dict | None) -> None:
        if self._battle_id is not None:
            self._sync_capture()
            due = {key: at_ns for key, at_ns in self.adapter.deadlines(self._state).items()
                   if (key, at_ns) not in self._fired}
            self._fired &= set(self.adapter.deadlines(self._state).items())
            self.deadlines.keep_only(due)
            pending = self.deadlines.pending()
            for key, at_ns in due.items():
                if pending.get(key) != at_ns:
                    self.deadlines.set(key, at_ns, self._on_deadline)
        # A fresh view every time, never mutated after: the update carries its values without a copy, and
        # a later update cannot change an earlier one (tests/appliance/service/test_session.py).
        new_view = self._build_view()
        changes, removed = diff(self._view, new_view)
        self._view = new_view
        self._seq += 1
        self._deliver({"seq": self._seq, "server_now_ns": self.clock(), "event": event,
                       "changes": changes, "removed": removed})

    def _sync_capture(self) -> None:
        if self.capture is None or self._button_test_on:
            return
        plan = self.adapter.capture_plan(self._state, self._battle_id)
        if plan == self._capture_plan:
            return
        # Commands are queued by the link (resent after a reconnect) and never block this lock; a refusal is
        # logged: the box keeps running without buttons (the host can play "on claps") and the view shows it.
        if plan[0] == "arm":
            future = self.capture.arm([player + 1 for player in plan[1]], plan[2])  # the capture counts from 1
        else:
            future = self.capture.disarm()
        self._capture_plan = plan
        future.add_done_callback(lambda done: done.exception() and log.warning(
            "capture link refused %s: %s", plan, done.exception()))

    def _build_view(self) -> dict:
        view = self.adapter.view(self._state, self._battle_id, self.clock()) if self._state is not None else {
            "battle": None}
        view["phones_enabled"] = self._phones_enabled
        view["seat_codes"] = list(self._seat_codes) if self._phones_enabled else None  # host only (web/sync.py)
        view["button_test"] = self._button_test_on
        view["expired"] = sorted(key for key, _ in self._fired)  # deadlines passed and still in the state
        view["capture"] = {"present": self.capture is not None, "connected": self._capture_connected,
                           **self._capture_status}
        view["simulator"] = self.simulator
        return view

    def _deliver(self, update: dict) -> None:
        for callback in list(self._subscribers):
            try:
                callback(update)
            except Exception:  # a process edge: one broken subscriber must not silence the others
                log.exception("subscriber failed on update %s", update.get("seq"))
