"""The live session: host commands, capture presses and deadlines in; durable events; numbered views out.

One :class:`Session` per serving process wires the battle service (``Battles``: validate, append durably,
cache), the capture link (``CaptureLink``: presses in, arm/disarm out) and the web (subscribers that receive
numbered updates). Everything that changes the battle passes through :meth:`Session._submit` under one lock:

1. the event is stamped on the battle timeline (``appliance/service/timeline.py``): host commands with
   ``time.monotonic_ns()`` at receipt, presses with their kernel edge timestamp, each plus the timeline's
   offset (0 unless the box rebooted mid-battle: CLOCK_MONOTONIC restarts at boot); expiries carry the
   deadline the engine set (design.md principle 3);
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
import json
import logging
import secrets
import threading
import time
from typing import Any, Callable

from appliance.errors import ArgumentRejected, CaptureError, CommandError, CommandRejected, RulesError, StoreError
from appliance.service.arguments import check_arguments
from appliance.service.timeline import STORE_KEY, Timeline, choose
from appliance.service.timers import Deadlines
from appliance.store import DuplicateCommandError

log = logging.getLogger(__name__)

REMEMBERED_COMMANDS = 2048  # command ids kept for duplicate detection (a battle has a few hundred commands)
BUTTON_TEST_REPLY_S = 2     # the capture answers a button test within this, or the link is taken as down
SEAT_CODE_DIGITS = 6        # a seat's code, told by the host to its player (web/guard.py limits guesses)
PHONES_KEY = "phones"       # the store's meta: phones on or off and the seats' codes, kept across restarts
ANNOUNCEMENT_KEY = "announcement"  # the store's meta: what the hall is told now (a restart tells it the same)
# Capture event fields that are instants of the capture's clock (the others named *_ns are durations: gap_ns).
CAPTURE_INSTANTS = ("t_ns", "arrival_ns", "armed_at_ns")


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


def _check_whole(value, argument: str, command: str) -> None:
    """A seat or button number from a page: a whole number, not text, a flag or a float (checked at the edge)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise CommandRejected("error.argument_type", f"{argument} must be a whole number, not {value!r}"[:120],
                              command, {"argument": argument})


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
    ``clock``: the boot's monotonic nanoseconds (CLOCK_MONOTONIC, as the capture stamps its presses).
    ``deadlines``: a :class:`Deadlines` on that same clock (started by :meth:`start`). ``boot_id``: this
    boot's id (``timeline.current_boot_id()``); None: a new boot is told by the stored times alone.
    :meth:`clock` is the battle timeline: ``clock`` plus the offset chosen at :meth:`start`.
    """

    def __init__(self, battles, adapter, capture=None, clock: Callable[[], int] = time.monotonic_ns,
                 deadlines: Deadlines | None = None, simulator: bool = False, boot_id: str | None = None,
                 theme_names_for: Callable[[str, str], tuple] | None = None) -> None:
        self.battles = battles
        self.adapter = adapter
        self.capture = capture
        self.theme_names_for = theme_names_for
        self._raw_clock = clock
        self._timeline = Timeline(boot_id)
        self._offset_ns = 0  # the timeline's, read on every stamp (one addition)
        self._since_ns = 0   # capture presses stamped before it came before this boot served (timeline.py)
        self.deadlines = deadlines or Deadlines(clock)
        self.simulator = simulator
        self._lock = threading.RLock()
        self._seq = 0
        # This serving run's id: ``seq`` counts updates within one run and starts again at 0 after a restart, so
        # a view is named by (epoch, seq) wherever it must stay unique across restarts (the host page keys a
        # tap by the view it was made on: docs/socketio-events.md)
        self.epoch = secrets.token_hex(8)
        self._view: dict[str, Any] = {}
        self._battle_id: str | None = None
        self._state = None
        self._phones_enabled = False
        self._seat_codes: tuple[str, ...] = ()  # one per seat while phones are enabled (access, not battle events)
        self._button_test_on = False
        self._button_test_pressed: tuple[int, ...] = ()  # seats whose button was pressed during the test
        self._button_test_request: bool | None = None  # a button test request awaiting the capture's reply
        self._fired: set[tuple[str, int]] = set()  # deadlines already handled: never scheduled again
        self._capture_connected = False
        self._capture_status: dict = {}
        self._capture_plan = None
        self._results: collections.OrderedDict[str, dict] = collections.OrderedDict()
        self._announcement: dict | None = None  # a correction or an appeal's decision, for the hall (view key)
        self._battle_list: list[dict] = []  # this box's battles (view key "battles"), remade on setup/resume
        self._subscribers: list[Callable[[dict], None]] = []
        # Undo takes back the host's last command whole: the adapter asks which events one command stored
        # together (the live battle's, from the store)
        same_command = getattr(battles, "same_command", None)
        if same_command is not None:
            adapter.joined = lambda seq: self._battle_id is not None and same_command(self._battle_id, seq)
        self._view = self._build_view()

    # ------------------------------------------------------------------ lifecycle
    def start(self, timer_thread: bool = True) -> "Session":
        """Show the newest battle (resumed if in play, its final standings if over) and start the deadlines'
        timer (tests with a hand clock pass ``timer_thread=False`` and run the deadlines themselves:
        ``deadlines.run_due()``)."""
        with self._lock:
            stored = Timeline.from_record(self.battles.meta(STORE_KEY))
            self._adopt_timeline(choose(stored, self._timeline.boot_id, self._raw_clock(), self.battles.last_at_ns()),
                                 stored)
            self._capture_connected = bool(self.capture is not None and self.capture.connected)
            resumable = self.adapter.resumable(self.battles)
            self._battle_list = self.adapter.battle_list(self.battles, resumable)
            if resumable is not None:
                self._battle_id = resumable
                self._state = self.battles.state(resumable)
                self._restore_phones()
                self._restore_announcement()
                self._after_change(event=None)
            else:
                self._view = self._build_view()  # the list of battles, with nothing live: no update to send
        if timer_thread:
            self.deadlines.start()
        return self

    def close(self) -> None:
        self.deadlines.close()

    def is_healthy(self) -> bool:
        """For the systemd watchdog: the lock can be taken (nothing is stuck holding it), and the deadlines'
        thread and the capture link's thread both run (either dead: windows never expire, presses never come;
        systemd must restart the worker). A thread never started (a test's hand clock) counts as dead."""
        acquired = self._lock.acquire(timeout=5)
        if acquired:
            self._lock.release()
        threads = {"deadlines": self.deadlines.alive()}
        if self.capture is not None and hasattr(self.capture, "alive"):
            threads["capture link"] = self.capture.alive()
        dead = sorted(name for name, alive in threads.items() if not alive)
        if dead:
            log.error("thread(s) not running: %s", ", ".join(dead))
        return acquired and not dead

    def subscribe(self, callback: Callable[[dict], None]) -> None:
        """``callback(update)`` for every numbered update, in order, under the session's lock: it must not wait.

        The update is read-only: its ``changes`` are the session's own view values (views are built fresh
        for every change and never mutated after, so no copy is made on the press path), shared with the
        other subscribers. A subscriber that needs to edit one copies it first (``web.sync.Hub.broadcast``
        builds each audience's own record of it, ``appliance.service.audience``).
        """
        self._subscribers.append(callback)

    def clock(self) -> int:
        """Now on the battle timeline, in ns: the boot's monotonic clock plus the timeline's offset."""
        return self._raw_clock() + self._offset_ns

    @property
    def timeline(self) -> Timeline:
        return self._timeline

    def _adopt_timeline(self, timeline: Timeline, stored: Timeline | None) -> None:
        """Take ``timeline`` (the one of this boot, or one raised past a battle ahead of it) and store it unless
        ``stored`` is it already, so a restart within the same boot takes the same offset. A store that cannot
        keep it is logged: this process still stamps on it, and a restart would choose again from the stored
        times (still monotone)."""
        if timeline.offset_ns != self._offset_ns:
            log.warning("battle timeline: offset %d ns (boot %s): the battles' times go on after the last stored "
                        "event", timeline.offset_ns, timeline.boot_id)
        self._timeline, self._offset_ns, self._since_ns = timeline, timeline.offset_ns, timeline.since_ns
        if timeline != stored:
            try:
                self.battles.set_meta(STORE_KEY, timeline.record())
            except (StoreError, OSError) as error:
                log.error("battle timeline not stored: %s", error)

    # ------------------------------------------------------------------ reads
    def snapshot(self) -> dict:
        """``{seq, epoch, server_now_ns, view}``: the full view, the number of the last update it includes and
        the serving run those numbers count in (:attr:`epoch`).

        The view is the caller's own copy. It is copied outside the lock: ``self._view`` is replaced, never
        mutated, so the reference taken under the lock stays the view of ``seq``.
        """
        with self._lock:
            seq, now_ns, view = self._seq, self.clock(), self._view
        return {"seq": seq, "epoch": self.epoch, "server_now_ns": now_ns, "view": copy.deepcopy(view)}

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
        """Apply one host command once. Returns ``{seq, duplicate, battle_id}``.

        Raises :class:`CommandRejected` (session reasons, bad arguments) or the engine's ``RulesError`` (rule
        reasons); either way nothing changed. A ``command_id`` seen before, in this process or stored before a
        restart, returns its first result with ``duplicate=True`` and applies nothing. The arguments are
        checked first, command by command (``appliance/service/arguments.py``): an error further in is a bug.
        """
        if not isinstance(command_id, str) or not 1 <= len(command_id) <= 100:
            raise CommandRejected("error.bad_command", "command id must be a string of 1-100 characters",
                                  name if isinstance(name, str) else None)
        if not isinstance(name, str):
            raise CommandRejected("error.bad_command", "a command has a name", None)
        if name == "button_test":
            return self._button_test(args, command_id)  # waits for the capture: never under the lock
        with self._lock:
            # Stamped at receipt, inside the lock: host commands reach the engine in the order of their stamps.
            at_ns = self.clock()
            known = self._known_result(command_id)
            if known is not None:
                return {**known, "duplicate": True}
            args = self._checked(name, args)
            # One update per command: its number is known before anything is stored, and stored with it.
            result = {"seq": self._seq + 1, "duplicate": False}
            try:
                if name == "setup":
                    self._setup(args, at_ns, command_id, result)
                elif name == "resume":
                    self._resume(args, command_id, result)
                elif name == "phones":
                    self._phones(args["enabled"], command_id, result)
                else:
                    if self._battle_id is None:
                        raise CommandRejected("error.no_battle", command=name)
                    if name == "next" and not args.get("name"):
                        args = self._named_theme(args)
                    events = self.adapter.command_events(name, self._state, args, at_ns)
                    result["battle_id"] = self._battle_id
                    if self._button_test_on and self.adapter.starts_question(events):
                        # a test left on must not swallow the question's presses: it ends in the same update
                        self.adapter.check(self._state, events)  # (only if the engine takes the command)
                        self._end_button_test()
                    self._submit(events, command_id, result)
            except CommandError as error:  # what only the engine's data can tell: no such profile
                raise CommandRejected(error.code, str(error), name, error.params) from None
            self._remember(command_id, result)
            return result

    # (battle id, its setup's slot) -> the names typed for its themes now ("" for one still unnamed): the tournament desk's, for a
    # battle linked to a slot (given by the composition root, web.sync.build_services); None: a theme keeps its setup's name
    theme_names_for: Callable[[str, str], tuple] | None = None

    def _named_theme(self, args: dict) -> dict:
        """«next» starting a theme the setup left unnamed takes the name the director typed since, if any: it is
        stored in the theme's start (ThemeStarted.name), so a replay reads the same name."""
        number = self.adapter.unnamed_next_theme(self._state)
        if number is None or self.theme_names_for is None:
            return args
        try:
            names = tuple(self.theme_names_for(self._battle_id, getattr(self._state.setup, "slot", "")) or ())
        except Exception:  # noqa: BLE001 - a name is a nicety: the theme starts unnamed rather than not at all
            log.exception("theme names for battle %s", self._battle_id)
            return args
        name = names[number] if number < len(names) and isinstance(names[number], str) else ""
        return {**args, "name": name} if name.strip() else args

    def _checked(self, name: str, args) -> dict:
        try:
            return check_arguments(name, args)
        except ArgumentRejected as error:
            raise CommandRejected(error.code, error.detail, name, error.params) from None

    def _known_result(self, command_id: str) -> dict | None:
        """The first result of a command id: remembered in this process, or stored (before a restart too)."""
        known = self._results.get(command_id)
        if known is not None:
            return known
        stored = self.battles.command(command_id)
        if stored is None:
            return None
        if stored.result is None:  # stored by schema 1, which kept no results: the id alone says "applied"
            return {"seq": self._seq, "duplicate": False, "battle_id": stored.stream_id}
        return dict(stored.result)

    def _remember(self, command_id: str, result: dict) -> None:
        self._results[command_id] = result
        while len(self._results) > REMEMBERED_COMMANDS:
            self._results.popitem(last=False)

    def check_seat_code(self, player: int, code: str, command: str = "claim") -> None:
        """Raise :class:`CommandRejected` unless phones are on, a battle is set up and ``code`` is the current
        code of seat ``player`` (``error.seat_code``: wrong, stale or no such seat). Changes nothing."""
        _check_whole(player, "player", command)
        if not isinstance(code, str):
            raise CommandRejected("error.argument_type", "code must be text", command, {"argument": "code"})
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
            known = self._known_result(key)
            if known is not None:
                return {**known, "duplicate": True}
            press = {"player": player, "t_ns": at_ns, "source": "phone", "precision": "phone"}
            seq = self._seq + 1
            results: list[dict] = []

            def result(state) -> dict:  # stored with the press: whether it counts is known once applied
                results.append({"seq": seq, "duplicate": False,
                                "counted": self.adapter.press_counted(state, player, at_ns)})
                return results[-1]

            self._submit([self.adapter.press_event(self._state, press)], key, result)
            self._remember(key, results[-1])
            return results[-1]

    def simulate(self, player: int, action: str) -> None:
        """Press or release a simulated button through the capture service (the real path)."""
        if not self.simulator:
            raise CommandRejected("error.simulator_off", command="simulate")
        host = player == "host"  # the host's reset button (held: the PIN shows on the box's own board)
        if not host:
            _check_whole(player, "player", "simulate")
        if not host and not 0 <= player < 4:  # a box has 2 to 4 buttons (config); the capture refuses any it lacks
            raise CommandRejected("error.bad_command", f"there is no button {player!r}", "simulate")
        if self.capture is None or not self.capture.connected:
            raise CommandRejected("error.capture_down", command="simulate")
        if action not in ("press", "release"):
            raise CommandRejected("error.bad_command", f"unknown simulator action {action!r}", "simulate")
        # The capture numbers players from 1; its reply says whether the mock pin moved.
        send = self.capture.simulate_press if action == "press" else self.capture.simulate_release
        try:
            (self.capture.simulate_reset_button(action == "press") if host else send(player + 1)).result(timeout=2)
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
                    if message.get("status") == "test" and self._button_test_on:
                        self._button_test_press(int(message["player"]) - 1)
                        return
                    if self._battle_id is None or message.get("status") not in self.FORWARDED_PRESSES:
                        return
                    t_ns = int(message["t_ns"]) + self._offset_ns  # the kernel edge, on the battle timeline
                    if t_ns < self._since_ns:  # pressed while the box was booting: no round of ours was armed
                        log.info("capture press before this boot's battle timeline, not a signal: %s", message)
                        return
                    press = {"player": int(message["player"]) - 1, "t_ns": t_ns, "source": "button"}
                    self._submit([self.adapter.press_event(self._state, press)], command_id=None)
                elif kind in ("status", "fault", "reset_button", "reset_button_held"):
                    if kind == "status":
                        self._capture_status = {key: message.get(key) for key in (
                            "mode", "factory", "precision", "degraded", "simulator", "stuck")}
                    if kind == "reset_button":
                        self._capture_plan = None  # the box went local: re-arm with our own eligible set
                    event = {k: v for k, v in message.items() if k not in ("type", "event")}
                    for key in CAPTURE_INSTANTS:
                        if isinstance(event.get(key), int):
                            event[key] += self._offset_ns  # the pages see one clock: the battle timeline
                    self._after_change(event={"type": f"Capture_{kind}", **event})
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
    def _setup(self, args: dict, at_ns: int, command_id: str, result: dict) -> None:
        """A new battle becomes the live one. An unfinished live battle is never replaced silently: ``setup``
        must name it in ``set_aside`` (the host saw it, with its scores, and chose to set it aside); it stays
        in the store and in the list, to be resumed (``resume``)."""
        event = self.adapter.setup_event(args, at_ns)  # a bad setup is said first, whatever is live
        self._check_set_aside(args.get("set_aside"), "setup")
        aside = self._aside()
        battle_id = self.battles.create(event, command_id=command_id, result=result)
        result["battle_id"] = battle_id
        self._open(battle_id, self.adapter.event_dict(event), told=aside)

    def _resume(self, args: dict, command_id: str, result: dict) -> None:
        """``resume {battle}``: any battle of this box becomes the live one again, as its log left it. The one it
        replaces, if unfinished, must be named in ``set_aside`` too (the same rule as ``setup``). Not a battle
        event: only the command id and its result are stored (a resend is a duplicate)."""
        battle_id = args["battle"]
        if battle_id not in {line["battle_id"] for line in self.battles.list()}:
            raise CommandRejected("error.no_such_battle", f"no battle {battle_id!r} on this box"[:200], "resume")
        aside = None
        if battle_id != self._battle_id:
            self._check_set_aside(args.get("set_aside"), "resume")
            aside = self._aside()
        result["battle_id"] = battle_id
        self.battles.record_command(command_id, result)
        state = self.battles.state(battle_id)
        # the hall is told the battle goes on, with its scores (or that the one before it was set aside)
        told = aside if state.is_over else self.adapter.battle_told(state, "resumed", battle_id)
        self._open(battle_id, {"type": "BattleResumed", "battle": battle_id}, told=told)

    def _aside(self) -> dict | None:
        """The announcement that the live battle is set aside (unfinished), or None."""
        if self._state is None or self._state.is_over:
            return None
        return self.adapter.battle_told(self._state, "set_aside", self._battle_id)

    def _check_set_aside(self, set_aside, command: str) -> None:
        if self._state is not None and not self._state.is_over and set_aside != self._battle_id:
            raise CommandRejected("error.battle_unfinished", f"battle {self._battle_id} is not over; name it in "
                                  "set_aside to set it aside", command)

    def _open(self, battle_id: str, event: dict, told: dict | None = None) -> None:
        self._battle_id = battle_id
        self._announce(told)
        self._state = self.battles.state(battle_id)
        # a battle ahead of the timeline (imported from another box): the timeline goes on after it
        self._adopt_timeline(self._timeline.continued_after(self._raw_clock(), self._state.last_at_ns),
                             self._timeline)
        self._battle_list = self.adapter.battle_list(self.battles, battle_id)
        if self._phones_enabled:
            self._new_seat_codes()  # new seats, maybe new people in them: last battle's phones do not carry over
        self._after_change(event=event)

    def _phones(self, enabled: bool, command_id: str, result: dict) -> None:
        """Phones as fallback buzzers. Each time they are switched on every seat gets a fresh code (a phone
        from before must be told the new one); off, the codes are gone. Not battle events: only the command
        id and its result are stored (a resend after a restart is a duplicate, not a second switch), and the
        switch with its codes in the store's meta, first (a restart keeps phones on with the same codes: the
        players' phones go on pressing; a kill before the command is stored leaves a resend that changes
        nothing more)."""
        result["battle_id"] = self._battle_id
        codes = self._seat_codes
        if enabled and not self._phones_enabled:
            codes = self._made_seat_codes()
        elif not enabled:
            codes = ()
        self._store_phones(enabled, codes)
        self.battles.record_command(command_id, result)
        self._phones_enabled, self._seat_codes = enabled, codes
        self._after_change(event={"type": "PhonesEnabled" if self._phones_enabled else "PhonesDisabled"})

    def _made_seat_codes(self) -> tuple[str, ...]:
        seats = len(getattr(self._state, "players", ())) if self._state is not None else 0
        return make_seat_codes(seats, avoid=set(self._seat_codes))

    def _new_seat_codes(self) -> None:
        """New codes for a battle just opened (its setup or resume is stored already: a store that cannot keep the
        codes is logged, and a restart would find phones off)."""
        self._seat_codes = self._made_seat_codes()
        try:
            self._store_phones(True, self._seat_codes)
        except (StoreError, OSError) as error:
            log.error("phones' codes not stored: %s", error)

    def _store_phones(self, enabled: bool, codes: tuple[str, ...]) -> None:
        """Keep the phones' switch and codes for the live battle in the store (raises StoreError: not kept)."""
        self.battles.set_meta(PHONES_KEY, json.dumps({"battle": self._battle_id, "enabled": enabled,
                                                      "codes": list(codes)}))

    def _announce(self, told: dict | None) -> None:
        """What the hall is told now (a correction, an undo, a battle set aside...), kept in the store's meta when
        it changes, so a restarted server tells the hall the same (issue 19: the view after a restart equals the
        view before). The command is stored already: a store that cannot keep it is logged, the hall told anyway."""
        if told != self._announcement:
            try:
                self.battles.set_meta(ANNOUNCEMENT_KEY, json.dumps({"battle": self._battle_id, "told": told},
                                                                   ensure_ascii=False))
            except (StoreError, OSError) as error:
                log.error("the hall's announcement not stored: %s", error)
        self._announcement = told

    def _restore_announcement(self) -> None:
        """The announcement the last process left for the battle resumed; none for any other, or if unreadable."""
        try:
            record = json.loads(self.battles.meta(ANNOUNCEMENT_KEY) or "{}")
        except (StoreError, ValueError) as error:
            log.error("the hall's announcement not read back: %s", error)
            return
        if isinstance(record, dict) and record.get("battle") == self._battle_id and isinstance(record.get("told"), dict):
            self._announcement = record["told"]

    def _restore_phones(self) -> None:
        """Phones as the last process left them for the battle resumed; off for any other, or if unreadable."""
        try:
            record = json.loads(self.battles.meta(PHONES_KEY) or "{}")
        except (StoreError, ValueError) as error:
            log.error("phones' switch not read back, phones are off: %s", error)
            return
        codes = record.get("codes") if isinstance(record, dict) else None
        if (record.get("enabled") is True and record.get("battle") == self._battle_id and isinstance(codes, list)
                and all(isinstance(code, str) for code in codes)):
            self._phones_enabled, self._seat_codes = True, tuple(codes)

    def _button_test(self, args, command_id: str) -> dict:
        """The capture's button test: each press lights its own LED while held. Off: the plan is re-sent.

        The capture's reply is awaited with the session's lock released: the link's thread delivers presses
        and status under that lock, and the reply comes on the same thread (waiting under it lost the link).
        While the request is out no arm/disarm is sent (the capture would leave the test half way).
        """
        with self._lock:
            known = self._known_result(command_id)
            if known is not None:
                return {**known, "duplicate": True}
            args = self._checked("button_test", args)
            if self.capture is None or not self.capture.connected:
                raise CommandRejected("error.capture_down", command="button_test")
            if self._button_test_request is not None:
                raise CommandRejected("error.busy", "a button test request is on its way", "button_test")
            on = args.get("on")
            on = (not self._button_test_on) if on is None else on
            self._button_test_request = on
            future = self.capture.button_test(on)
        try:
            future.result(timeout=BUTTON_TEST_REPLY_S)
        except (CaptureError, TimeoutError) as error:
            with self._lock:
                self._button_test_request = None
                self._capture_plan = None
                if self._battle_id is not None:
                    self._sync_capture()  # the battle's plan again: the test may or may not have started
            raise CommandRejected("error.capture_down", str(error), "button_test") from None
        with self._lock:
            self._button_test_request = None
            self._button_test_on = on
            self._button_test_pressed = ()
            self._capture_plan = None  # the test left the capture disarmed: arm again from the battle's state
            result = {"seq": self._seq + 1, "duplicate": False, "battle_id": self._battle_id}
            try:
                self.battles.record_command(command_id, result)
            except DuplicateCommandError as error:  # the same id sent twice at once: the first one counts
                return {**(error.stored.result or result), "duplicate": True}
            self._after_change(event={"type": "ButtonTest", "on": on})
            self._remember(command_id, result)
            return result

    def _end_button_test(self) -> None:
        """The test ends by itself when a question starts, in the update of the command that starts it. Not
        waited for: the link sends commands in order, so the capture hears "test off" before the arm that
        follows (docs/capture-protocol.md)."""
        future = self.capture.button_test(False) if self.capture is not None else None
        if future is not None:
            future.add_done_callback(lambda done: done.exception() and log.warning(
                "capture link refused to end the button test: %s", done.exception()))
        self._button_test_on = False
        self._button_test_pressed = ()
        self._capture_plan = None

    def _button_test_press(self, player: int) -> None:
        """A press during the test: the page shows whose buttons work (not a battle event: nothing is logged)."""
        if player not in self._button_test_pressed:
            self._button_test_pressed = tuple(sorted((*self._button_test_pressed, player)))
            self._after_change(event={"type": "ButtonTestPress", "player": player})

    def _submit(self, events: list, command_id: str | None, result=None) -> None:
        """One command's events, stored together (all or none), then ONE update for all of them."""
        before = self._state
        self._state = self.battles.submit(self._battle_id, events, command_id=command_id, result=result)
        self._announce(self.adapter.announcement(before, self._state, events, self._announcement))
        self._after_change(event=self.adapter.event_dict(events[-1]))

    def _on_deadline(self, key: str, raw_ns: int) -> None:
        """``Deadlines``' callback: ``raw_ns`` is on the boot's clock, the deadline on the battle timeline."""
        with self._lock:
            at_ns = raw_ns + self._offset_ns
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
                    self._submit([event], command_id=f"deadline:{self._battle_id}:{key}:{at_ns}")
            except DuplicateCommandError:
                pass  # fed before a restart: the stored state already holds it
            except RulesError as error:
                log.warning("deadline %s at %d refused by the rules: %s", key, at_ns, error)

    def _after_change(self, event: dict | None) -> None:
        if self._battle_id is not None:
            self._sync_capture()
            due = {key: at_ns for key, at_ns in self.adapter.deadlines(self._state).items()
                   if (key, at_ns) not in self._fired}
            self._fired &= set(self.adapter.deadlines(self._state).items())
            self.deadlines.keep_only(due)
            pending = self.deadlines.pending()  # on the boot's clock: the timeline's offset taken off
            for key, at_ns in due.items():
                if pending.get(key) != at_ns - self._offset_ns:
                    self.deadlines.set(key, at_ns - self._offset_ns, self._on_deadline)
        # A fresh view every time, never mutated after: the update carries its values without a copy, and
        # a later update cannot change an earlier one (tests/appliance/service/test_session.py).
        new_view = self._build_view()
        changes, removed = diff(self._view, new_view)
        self._view = new_view
        self._seq += 1
        self._deliver({"seq": self._seq, "server_now_ns": self.clock(), "event": event,
                       "changes": changes, "removed": removed})

    def _sync_capture(self) -> None:
        if self.capture is None or self._button_test_on or self._button_test_request is not None:
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
        view["battles"] = self._battle_list  # host only (web/sync.py)
        view["announcement"] = self._announcement
        view["phones_enabled"] = self._phones_enabled
        view["seat_codes"] = list(self._seat_codes) if self._phones_enabled else None  # host only (web/sync.py)
        view["button_test"] = self._button_test_on
        view["button_test_pressed"] = list(self._button_test_pressed)
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
