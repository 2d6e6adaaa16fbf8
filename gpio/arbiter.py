"""The arbiter: which press wins. Pure logic: edges and commands in, LED states, beeps and events out.

No pins, threads or clocks here: every edge arrives with its timestamp (CLOCK_MONOTONIC ns, from the kernel on
lgpio) and the time it reached us, and every command with the time it was received. The caller
(:mod:`gpio.capture`) holds a lock around each call and applies the returned :class:`Outcome` to the hardware.

Rules (docs/capture-protocol.md is the contract):

- Among eligible presses of an armed round, the **earliest timestamp** wins, whatever order the edges arrive
  in. The first eligible arrival lights at once; a later arrival with an earlier timestamp takes the win
  (``lockout`` with ``corrects``). "Fair by timestamp, not by arrival" (design principle 4).
- Equal timestamps are a tie: the first to arrive keeps the win, both are flagged ``tie``.
- Later eligible presses are ``counted`` with their rank and gap from the winner: the order of the next
  answerers after a wrong answer (eurocup 2.9, youth-cup 9, northern-owl 3.9).
- A press is the first falling edge after the button was quiet for ``debounce_ns``; chatter is ignored and
  never moves a timestamp. A button held when a round is armed is ``stuck`` until released.

>>> arbiter = Arbiter(players=3, debounce_ns=20_000_000, precision="mock")
>>> _ = arbiter.arm({1, 2, 3}, "q1", now_ns=1_000, mode="linked")
>>> late = arbiter.edge(2, t_ns=5_000_002, pressed=True, arrival_ns=5_100_000)
>>> [e["status"] for e in late.events if e["event"] == "press"], late.leds
(['won'], (False, True, False))
>>> early = arbiter.edge(1, t_ns=5_000_001, pressed=True, arrival_ns=5_100_100)
>>> [(e["event"], e.get("winner"), e.get("corrects")) for e in early.events]
[('press', None, None), ('lockout', 1, 2)]
>>> early.leds
(True, False, False)
"""

from __future__ import annotations

import bisect
import dataclasses
from typing import Iterable

PRESS_STATUSES = ("won", "counted", "repeat", "ineligible", "disarmed", "stuck", "test")
MODES = ("linked", "standalone", "button-test")


class Outcome:
    """What one call decided: the LED states to show (``None``: unchanged), whether to sound the buzzer now, and
    the events to publish, in order.

    Events may be added as builders (``defer``) that run only when :attr:`events` is read, so the caller can
    light the LED before any event dict is made: the press path does the least work before the LED.
    """

    __slots__ = ("leds", "beep", "_events", "_builders")

    def __init__(self, events: list | None = None, leds: tuple | None = None, beep: bool = False):
        self.leds, self.beep = leds, beep
        self._events = events if events is not None else []
        self._builders: list = []

    def defer(self, builder, *args) -> None:
        """Add the events ``builder(*args)`` returns (a list), built when :attr:`events` is first read."""
        self._builders.append((builder, args))

    @property
    def events(self) -> list:
        if self._builders:
            for builder, args in self._builders:
                self._events.extend(builder(*args))
            self._builders = []
        return self._events


@dataclasses.dataclass(slots=True)
class _Input:
    held: bool = False
    last_edge_ns: int | None = None
    bounces: int = 0


# A ranked press is the tuple (t_ns, arrival, player): tuples sort by timestamp, then by arrival order within
# the round (a tie goes to the first to arrive), and cost far less than objects on the press path.


class Arbiter:
    """The lockout state machine for ``players`` buttons (numbered from 1).

    Not thread-safe: the caller serialises calls. Every method returns an :class:`Outcome`.
    Raises ``ValueError`` for a player number outside 1..players (a bug in the caller, never a user error:
    the protocol layer validates commands before they get here).
    """

    def __init__(self, players: int, debounce_ns: int, precision: str):
        if not 1 <= players <= 8:
            raise ValueError(f"players must be 1-8, not {players}")
        self.players = players
        self.debounce_ns = debounce_ns
        self.precision = precision
        self.inputs = [_Input() for _ in range(players)]
        self.leds = (False,) * players
        self.mode = "standalone"
        self.button_test = False
        self.round_id: str | None = None
        self.armed = False
        self.armed_at_ns: int | None = None
        self.eligible: frozenset = frozenset()
        self.stuck: set = set()
        self._ranked: list[tuple[int, int, int]] = []
        # LED states with only player p lit, made once: the press path indexes instead of building tuples.
        self._only = [tuple(q == p for q in range(1, players + 1)) for p in range(players + 1)]
        self._pressed: set = set()
        self._arrivals = 0

    # ------------------------------------------------------------------ queries
    @property
    def winner(self) -> int | None:
        return self._ranked[0][2] if self._ranked else None

    def held(self) -> list[int]:
        return [player for player in range(1, self.players + 1) if self.inputs[player - 1].held]

    def snapshot(self) -> dict:
        """The arbiter's part of a ``status`` event."""
        return {
            "mode": "button-test" if self.button_test else self.mode,
            "players": self.players,
            "armed": self.armed,
            "round_id": self.round_id,
            "eligible": sorted(self.eligible),
            "armed_at_ns": self.armed_at_ns,
            "winner": self.winner,
            "leds": list(self.leds),
            "held": self.held(),
            "stuck": sorted(self.stuck),
            "bounces": [state.bounces for state in self.inputs],
        }

    # ------------------------------------------------------------------ commands
    def arm(self, eligible: Iterable[int], round_id: str, now_ns: int, mode: str,
            held: Iterable[int] | None = None) -> Outcome:
        """Start round ``round_id`` at ``now_ns``: LEDs off; ``eligible`` players compete.

        ``held`` names the buttons the caller read as down right now (the pins are the truth: an edge may have
        been missed); ``None`` keeps what the edges said. Held eligible players are ``stuck`` (a ``fault``
        each) until released.
        """
        eligible = frozenset(eligible)
        self._check_players(eligible)
        if mode not in ("linked", "standalone"):
            raise ValueError(f"mode must be linked or standalone, not {mode!r}")
        if held is not None:
            held = set(held)
            self._check_players(held)
            for player, state in enumerate(self.inputs, start=1):
                state.held = player in held
        self.mode = mode
        self.button_test = False
        self.round_id, self.armed, self.armed_at_ns, self.eligible = round_id, True, now_ns, eligible
        self._ranked, self._pressed, self._arrivals = [], set(), 0
        self.stuck = {player for player in eligible if self.inputs[player - 1].held}
        outcome = Outcome(leds=self._set_leds(()))
        for player in sorted(self.stuck):
            outcome.events.append(self._fault("stuck", player, "button held down when the round was armed"))
        return outcome

    def set_eligible(self, eligible: Iterable[int]) -> Outcome:
        """Change who may win the current round without restarting it: LEDs, the winner and the ranked presses
        stay; later presses are judged against the new set."""
        eligible = frozenset(eligible)
        self._check_players(eligible)
        self.eligible = eligible
        return Outcome()

    def disarm(self) -> Outcome:
        """Stop judging: later presses are ``disarmed``. LEDs stay."""
        self.armed = False
        return Outcome()

    def reset(self) -> Outcome:
        """LEDs off, disarmed, button-test off."""
        self.armed = False
        self.button_test = False
        return Outcome(leds=self._set_leds(()))

    def set_led(self, player: int, on: bool) -> Outcome:
        self._check_players((player,))
        leds = list(self.leds)
        leds[player - 1] = bool(on)
        self.leds = tuple(leds)
        return Outcome(leds=self.leds)

    def set_button_test(self, on: bool) -> Outcome:
        """Button-test mode: each press lights its own LED while held. Entering or leaving it disarms."""
        self.button_test = bool(on)
        self.armed = False
        return Outcome(leds=self._set_leds(self.held() if on else ()))

    def set_mode(self, mode: str) -> None:
        """Record who is in charge (``linked`` while an appliance is connected, else ``standalone``)."""
        if mode not in ("linked", "standalone"):
            raise ValueError(f"mode must be linked or standalone, not {mode!r}")
        self.mode = mode

    # ------------------------------------------------------------------ edges
    def edge(self, player: int, t_ns: int, pressed: bool, arrival_ns: int) -> Outcome:
        """One edge of ``player``'s button: ``pressed`` True for the falling (press) edge, stamped ``t_ns``."""
        if not 0 < player <= self.players:
            raise ValueError(f"player {player!r} is outside 1-{self.players}")
        state = self.inputs[player - 1]
        last_edge_ns = state.last_edge_ns
        quiet = last_edge_ns is None or t_ns - last_edge_ns >= self.debounce_ns
        was_held = state.held
        state.held = pressed
        if not pressed:
            state.last_edge_ns = t_ns if state.last_edge_ns is None else max(state.last_edge_ns, t_ns)
            outcome = Outcome()
            if self.button_test and self.leds[player - 1]:
                outcome.leds = self._led(player, False)
            if player in self.stuck:
                self.stuck.discard(player)
                outcome.events.append(self._fault("stuck-cleared", player, "button released"))
            return outcome
        if was_held or not quiet:
            # Chatter: a press edge too soon after the last edge, or a second press edge without a release.
            # Ignored, and it does not move the timestamp of the press it belongs to.
            state.bounces += 1
            state.last_edge_ns = max(state.last_edge_ns or t_ns, t_ns)
            return Outcome()
        state.last_edge_ns = t_ns
        return self._press(player, t_ns, arrival_ns)

    def _press(self, player: int, t_ns: int, arrival_ns: int) -> Outcome:
        if self.button_test:
            return Outcome(events=[self._press_event(player, t_ns, arrival_ns, "test")],
                           leds=self._led(player, True), beep=True)
        if not self.armed or self.armed_at_ns is None or t_ns < self.armed_at_ns:
            return Outcome(events=[self._press_event(player, t_ns, arrival_ns, "disarmed")])
        if player in self.stuck:
            return Outcome(events=[self._press_event(player, t_ns, arrival_ns, "stuck")])
        if player not in self.eligible:
            return Outcome(events=[self._press_event(player, t_ns, arrival_ns, "ineligible")])
        if player in self._pressed:
            return Outcome(events=[self._press_event(player, t_ns, arrival_ns, "repeat")])
        self._pressed.add(player)
        ranked = self._ranked
        entry = (t_ns, self._arrivals, player)
        self._arrivals += 1
        outcome = Outcome()
        if not ranked:
            # The common case: the first eligible press of the round. LED, buzzer; events built later.
            ranked.append(entry)
            outcome.leds = self.leds = self._only[player]
            outcome.beep = True
            outcome.defer(self._decision_events, player, t_ns, arrival_ns, "won", 1, 0, False, True, None,
                          (self.round_id, self.armed_at_ns, self.mode, (entry,)))
            return outcome
        previous = ranked[0][2]
        index = bisect.bisect(ranked, entry)
        ranked.insert(index, entry)
        winner_t, _, winner = ranked[0]
        tie = t_ns == winner_t and (len(ranked) > index + 1 and ranked[index + 1][0] == t_ns or index > 0)
        corrected = winner != previous
        if corrected:
            # An earlier-stamped edge arrived after the decision: the timestamp wins, the LEDs follow.
            outcome.leds = self.leds = self._only[winner]
        # The lockout is sent again whenever the published order changed: a new winner, a tie, or a press that
        # slots in before an already counted one (its rank in the earlier press event is then out of date).
        reordered = corrected or tie or index < len(ranked) - 1
        outcome.defer(self._decision_events, player, t_ns, arrival_ns, "won" if index == 0 else "counted",
                      index + 1, t_ns - winner_t, tie, reordered, previous if corrected else None,
                      self._snapshot_ranked())
        return outcome

    def _decision_events(self, player, t_ns, arrival_ns, status, rank, gap_ns, tie, lockout, corrects, snapshot):
        press = self._press_event(player, t_ns, arrival_ns, status, rank, gap_ns, tie, snapshot)
        return [press, self._lockout(corrects, snapshot)] if lockout else [press]

    # ------------------------------------------------------------------ helpers
    def _check_players(self, players: Iterable[int]) -> None:
        for player in players:
            if not isinstance(player, int) or isinstance(player, bool) or not 1 <= player <= self.players:
                raise ValueError(f"player {player!r} is outside 1-{self.players}")

    def _set_leds(self, lit: Iterable[int]) -> tuple:
        lit = set(lit)
        self.leds = tuple(player in lit for player in range(1, self.players + 1))
        return self.leds

    def _led(self, player: int, on: bool) -> tuple:
        leds = list(self.leds)
        leds[player - 1] = on
        self.leds = tuple(leds)
        return self.leds

    def _press_event(self, player: int, t_ns: int, arrival_ns: int, status: str, rank: int | None = None,
                     gap_ns: int | None = None, tie: bool = False, snapshot: tuple | None = None) -> dict:
        if snapshot is not None:  # a deferred event: the round as it was at the decision
            round_id, mode = snapshot[0], snapshot[2]
        else:
            round_id, mode = self.round_id, "button-test" if self.button_test else self.mode
            if gap_ns is None and status != "test" and self._ranked and self.armed:
                gap_ns = t_ns - self._ranked[0][0]
        return {
            "event": "press", "player": player, "t_ns": t_ns, "arrival_ns": arrival_ns, "status": status,
            "round_id": round_id, "rank": rank, "gap_ns": gap_ns, "tie": tie, "precision": self.precision,
            "mode": mode,
        }

    def _snapshot_ranked(self) -> tuple:
        # Deferred events must describe the round as it was at this decision, not when they are built.
        return self.round_id, self.armed_at_ns, self.mode, tuple(self._ranked)

    @staticmethod
    def _lockout(corrects: int | None, snapshot: tuple) -> dict:
        round_id, armed_at_ns, mode, ranked = snapshot
        winner_t, _, winner = ranked[0]
        tied = [player for t_ns, _, player in ranked[1:] if t_ns == winner_t]
        return {
            "event": "lockout", "round_id": round_id, "winner": winner, "t_ns": winner_t,
            "armed_at_ns": armed_at_ns, "tie": bool(tied), "tied_with": tied, "corrects": corrects,
            "order": [{"player": player, "t_ns": t_ns, "gap_ns": t_ns - winner_t} for t_ns, _, player in ranked],
            "mode": mode,
        }

    def _fault(self, kind: str, player: int | None, detail: str) -> dict:
        return {"event": "fault", "kind": kind, "player": player, "detail": detail}
